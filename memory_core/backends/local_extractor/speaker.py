"""Who a unit speaks of: the writer in the first person (singular or plural; in Spanish the verb alone says it),
the listener ("you", "tú", "usted"), or no one said ("Lost my job", "Been baking bread": the writer's)."""
from __future__ import annotations

import re

from memory_core.backends.local_extractor.personal import PRETERITE
from memory_core.backends.local_extractor.text import Sentence, is_english

FIRST_SINGULAR = re.compile(r"\b(?:yo|me|mi|mis|conmigo|i|i'm|i've|i'd|my|myself|mine)\b")
# Spanish drops the pronoun: the verb alone says the writer did it. A preterite ("estuve con Canela", "fui",
# "ayer entrevisté a una directora": a regular one by its accent, on the sentence as written, see
# `personal.PRETERITE`, whose "-ó" is the third person's and is left out here) tells of the writer's life; a
# perfect with "he" or a present of the commonest verbs ("he cerrado tres reportajes", "tengo", "voy") does
# too, but also of the day's errands ("he llegado tarde", "necesito las facturas"), so those only count in a
# message the gate already passed (`loose`).
_FIRST_SINGULAR_PRETERITE = re.compile(r"\b(?:fui|estuve|tuve|hice|puse|pude|supe|quise|anduve|conduje|traduje)\b")
_FIRST_SINGULAR_VERB = re.compile(r"\b(?:he\s+(?:\w+(?:ado|ido)|hecho|puesto|visto|escrito|dicho|vuelto|abierto|roto)|"
                                  r"tengo|estoy|voy|salgo|hago|vengo|sigo|llevo|empiezo|acabo|necesito|quiero|puedo|"
                                  r"juego|practico|entreno|corro|nado|bailo|canto|toco|pinto|estudio|"
                                  r"(?<!el )(?<!mi )(?<!tu )(?<!su )(?<!un )trabajo)\b")


# "Le ayudo los fines de semana", "les pago en mano": "le"/"les" (never an article) and a verb in "-o" as typed.
_TO_HIM_I = re.compile(r"(?:le|les)\s+\w{2,}o\b")


def first_singular(s: Sentence, loose: bool = True) -> bool:
    """The writer speaks of themself: a pronoun ("yo", "me", "I", "my") or, in Spanish, the verb alone."""
    if FIRST_SINGULAR.search(s.low):
        return True
    if is_english(s.text):
        return False
    if _FIRST_SINGULAR_PRETERITE.search(s.low) or (loose and (_FIRST_SINGULAR_VERB.search(s.low) or
                                                              _TO_HIM_I.match(s.text.lower()))):
        return True
    return any(m.group().endswith(("é", "í")) for m in PRETERITE.finditer(s.text.lower()))


FIRST_PLURAL = re.compile(r"\b(?:nosotros|nosotras|nos|nuestr[oa]s?|hemos|somos|vamos|we|we're|we've|our|ours|us)\b"
                          r"|\b\w{3,}(?:amos|emos|imos)\b")
# A clause that opens on its verb, with no subject of its own ("Lost my job", "Been baking bread").
NO_SUBJECT = re.compile(r"^(?:just\s+|finally\s+|still\s+|been\s+|really\s+|also\s+)?(?:[a-z]{2,}ing|[a-z]{3,}ed|got|went|"
                       r"made|took|had|started|lost|bought|found|saw|met|gonna|gotta|wanna|been|planning|hoping|gone|quit|sold|"
                       r"thinking of|trying|working on)\b")
# The listener, spoken to.
LISTENER = re.compile(r"\b(?:you|your|you're|yours|yourself|tu|tus|contigo|usted|ustedes|os|vosotros)\b")
# The two people talking, not a fact of either: an exhortation ("let's keep going", "sigamos así"), their talk
# itself ("since we last talked", "hace mucho que no hablamos", "hablamos mañana"), the two of them ("we both") and
# the "we" of everyone ("we're all in it together", "we can make a difference", "no estamos solos").
_BETWEEN_US = re.compile(
    r"^(?:(?:yeah|yes|so|and|ok|okay|definitely|sure|totally|agreed|absolutely|si|vale|venga|bueno|pues|y)\b[,!.]?\s*)*"
    r"(?:[a-z]+,\s+)?(?:let'?s|let us|sigamos|hagamos|luchemos|continuemos|mantengamos|vamos a (?:seguir|por)|"
    r"a por (?:ello|todas))\b"
    r"|\b(?:since we (?:last )?(?:talked|spoke|chatted|caught up)|we (?:haven't|have not|hadn't) (?:talked|spoken|"
    r"chatted|caught up)|(?:talk|chat|speak) (?:soon|later|tomorrow)|catch up soon|hace (?:mucho|tiempo|siglos) que no "
    r"(?:hablamos|nos vemos)|hablamos (?:manana|luego|pronto|otro dia|con (?:mas )?calma)|nos vemos (?:pronto|manana|"
    r"luego)|tenemos que vernos|we both|both of us|all in (?:it|this) together|estamos juntos|juntos podemos|"
    r"no estamos solos|(?:we're|we are) not alone|make a difference|something bigger|podemos con (?:todo|esto))\b"
    # ... and what "it" does to everyone: "it helps us grow", "it reminds us", "that makes us realize".
    r"|^(?:it|that|this|they)\s+(?:really\s+|always\s+|just\s+)?(?:helps?|reminds?|makes?|brings?|gives?|shows?|"
    r"teach(?:es)?|keeps?|lets?)\s+us\b")


def between_us(s: Sentence) -> bool:
    return bool(_BETWEEN_US.search(s.low))
