"""A message as units of meaning: sentences and clauses, without the talk around the facts.

Phatic units (greetings, thanks, agreement, compliments, "lol", "wow", "yep") are dropped; discourse
markers ("bueno", "anyway", "por cierto"), requests to remember ("apúntame que") and vocatives (the
other person's name: "Thanks, Melanie!", "Hey Jon,") are cut from the units that remain. Each remaining
unit is judged and read on its own, so one message may teach several facts.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import lru_cache

from memory_core.backends.local_extractor.clauses import REFUSED, is_order, strip_lead
from memory_core.backends.local_extractor.text import Sentence, fold, split_sentences, untexted
from memory_core.domain.dates import DAY_WORDS

# Words that carry no fact on their own, folded. A unit made only of these (and names, emoji and
# punctuation) is phatic.
PHATIC_WORDS = frozenset("""
hola hey hi hello hiya buenas buenos morning afternoon evening good night
majo maja guapo guapa tio tia crack bro dude mate buddy man girl chica chico hun dear
gracias muchas mil thanks thank thx ty cheers merci
ok okay okey vale venga val genial perfecto perfect great awesome amazing cool nice lovely wonderful fantastic
fantastico fantastica estupendo estupenda brutal guay chulo chula super superb incredible increible
wow woah whoa omg lol lmao haha hahaha jaja jajaja jeje xd oh ah aw aww ay uy eh uh um hmm mmm oops
yep yeah yes yup si no nope nah sure claro vale exacto exactly totally absolutely definitely indeed right
true cierto verdad agreed agree de acuerdo bien fine well so very really muy tan mucho much too so
congrats congratulations enhorabuena felicidades felicitaciones bravo
bye adios chao ciao luego pronto later soon see you take care cuidate abrazo abrazos besos hugs xoxo
glad happy me alegro alegra encanta love it that's thats that it's its sounds looks seems
you your you're youre tu te ti usted and y also too tambien the a an of for to it this esto eso
what how are is was were have has been doing going how's hows que tal como estas va todo
""".split())
# How the writer feels, and words that only carry that ("I'm so grateful", "I'm doing my best", "I'm not giving
# up", "me siento muy afortunada"): a unit made only of these and the words above tells no fact.
FEELING_WORDS = frozenset("""
i i'm im i've ive i'll ill i'd id me my myself we we're we've our us they them their those these
am be been being feel feels felt feeling make makes made keep keeps kept get gets got
grateful thankful proud lucky blessed excited stoked thrilled determined motivated inspired touched moved honored
honoured humbled relieved overwhelmed nervous pumped psyched hyped content
best try trying doing giving give up hanging in there loving haven't havent have not don't dont do still always
pretty truly super extra mega each other both together
agradecido agradecida agradecidos orgulloso orgullosa orgullosos afortunado afortunada afortunados contento contenta
contentos feliz felices emocionado emocionada ilusionado ilusionada motivado motivada nervioso nerviosa siento
sentimos me estoy estamos soy somos lo mejor que puedo intento intentando rindo rendirme sigo aqui
""".split())
# Words that point back at what the other person said ("Yeah, I have one", "yo también tengo uno"): no content.
ANAPHORA = frozenset("one ones it that this those uno una unos unas eso esto ese esa".split())
# Function words of both languages, besides those above: they leave an appraisal or an echo with no fact.
FUNCTION_WORDS = frozenset("""the a an of to in on at with for by is was been has had be al el la los las lo le les mi mis
de del en por para con un una es era ha sido fue esta esto tengo tienes tiene yo""".split())
# An appraisal ("photography has been great for me", "el yoga ha sido genial") or an echo of the other person
# ("I love pizza too", "a mí también") about at most this many words of its own is a reaction, not a fact.
ECHO_WORDS = 1
_APPRAISAL = frozenset("""great awesome amazing cool nice lovely wonderful fantastic incredible good fun genial estupendo
estupenda guay chulo chula brutal increible fantastico fantastica maravilla""".split())
_ECHO = frozenset("too tambien".split())
_SKILL = frozenset("at en with con jugando".split())  # "I'm good at chess" tells a skill
FEELINGS = frozenset("""grateful thankful proud lucky blessed excited stoked thrilled determined motivated inspired touched
moved honored honoured humbled relieved overwhelmed nervous pumped psyched happy glad best giving hanging loving
haven't havent agradecido agradecida agradecidos orgulloso orgullosa orgullosos afortunado afortunada afortunados
contento contenta contentos feliz felices emocionado emocionada ilusionado ilusionada motivado motivada nervioso
nerviosa mejor rendirme""".split())
# A wish ("que tengas buen fin de semana", "que te vaya bien"): talk, never what is told.
_WISH = r"(?:tengas|tengais|tenga|pases|paseis|pase|vaya|te vaya|os vaya|le vaya|lo pases|lo paseis|disfrutes|disfruteis|" \
        r"descanses|descanseis|aproveches|te mejores|se mejore)\b"
# Phrases that are phatic whatever follows them in the unit ("thanks for the tips", "me alegro de que...").
_PHATIC_START = re.compile(
    r"^(?:(?:muchas\s+|mil\s+|un millon de\s+)?gracias(?:\s+mil)?(?:\s+por\b.*)?|"
    r"(?:thanks|thank you|thank u)(?:\s+(?:so much|a lot|again|a million|a bunch|loads|a ton))?"
    r"(?:\s+for\b.*)?|me alegro\b.*|que bien\b.*|que guay\b.*|(?:i'?m|im|i am)\s+(?:so\s+|really\s+)?"
    r"(?:glad|happy|excited|proud)\s+(?:for you|to hear|you|that you)\b.*|good to (?:hear|see|know)\b.*|"
    r"nice to (?:hear|see|meet|know)\b.*|(?:that|it|this)(?:'s| is| was| sounds| looks| seems)\s+(?:so\s+|really\s+"
    r"|super\s+|pretty\s+)?(?:great|awesome|amazing|cool|nice|lovely|wonderful|fantastic|fun|beautiful|"
    r"incredible|impressive|exciting|inspiring|sweet|adorable|interesting|tough|hard|sad|awful|terrible|funny|"
    r"hilarious|crazy|wild|cute|true|special|huge|brave|smart|rough)\b.*|"
    r"(?:sounds|looks)\s+(?:so\s+|really\s+)?(?:great|good|fun|amazing|awesome|cool|lovely|like)\b.*|"
    r"how (?:are|have) you\b.*|how'?s it going\b.*|what'?s up\b.*|que tal\b.*|como estas\b.*|"
    r"(?:good luck|best of luck|suerte|mucha suerte)\b.*|(?:see you|hasta luego|hasta pronto|nos vemos)\b.*|"
    r"(?:take care|cuidate)\b.*|(?:keep (?:it )?up|sigue asi)\b.*|(?:no problem|de nada|no hay de que)\b.*|"
    # How one is, with nothing after it ("I'm good", "estoy bien, gracias"): "I'm good at chess" is not.
    r"(?:i'?m|i am|we'?re|we are|estoy|estamos|todo|all)\s+(?:doing\s+|feeling\s+|muy\s+|really\s+|so\s+)?"
    r"(?:good|great|fine|well|ok|okay|alright|all right|bien|genial|fenomenal|perfectamente)"
    r"(?:\s*,?\s*(?:thanks|thank you|gracias|y tu|and you|how about you))?|"
    # Liking with no object ("I love to", "I'd love that", "me encantaría"): a reaction, not a hobby.
    r"(?:i|we|i'?d|we'?d)\s+(?:would\s+|really\s+|totally\s+|so\s+)?(?:love|like|loved|liked|enjoy|enjoyed)\s+"
    r"(?:to|it|that|this|them)(?:\s+(?:too|so much|a lot|as well))?|me encantar(?:a|ia)(?:\s+la idea)?|"
    r"me gustar(?:a|ia)(?:\s+mucho)?|"
    # Catching up: "been a while since we chatted", "long time no see", "cuánto tiempo sin hablar".
    r"(?:it'?s\s+|it has\s+)?been (?:a while|a long time|ages|forever)(?:\s+since\s+(?:we|i|you|our)\s+(?:last\s+)?"
    r"(?:chatted|talked|spoke|caught up|saw each other|last chat|last talk)(?:\s+last)?)?|long time no (?:see|chat|talk)\b.*|"
    r"(?:cuanto|mucho) tiempo(?: sin (?:hablar|vernos|saber de ti))?\b.*|que " + _WISH + r".*|"
    r"hace (?:mucho|tiempo|siglos) que no\b.*|"
    # Sorry for the delay, and how busy the week was ("Sorry for the radio silence, it's been a mad week with the end
    # of the quarter", "perdona el retraso, menuda semana llevo"): no fact, however long.
    r"(?:so\s+)?(?:sorry|apologies)\s+(?:for|about)\s+(?:the|my)\s+(?:radio silence|silence|late (?:reply|response)|"
    r"slow (?:reply|response)|delay(?:ed reply)?)(?:\s*,?\s*(?:it'?s|it has|its)\s+been\s+(?:a|such a)\s+(?:mad|crazy|"
    r"busy|hectic|long|manic|mental|rough|nightmare)\s+(?:week|day|month|few days|few weeks)(?:\s+with\b.*)?)?|"
    r"(?:sorry|perdona|perdon)\s*,?\s*(?:i'?ve\s+|i have\s+)?been\s+(?:so\s+|really\s+)?(?:rushed off my feet|run off my "
    r"feet|busy|swamped|flat out|snowed under|mad busy)|(?:perdona|perdon)\s*,?\s*(?:es que\s+)?(?:he estado|estoy|voy)\s+"
    r"(?:liad[ií]sim[oa]|muy liad[oa]|a tope|hasta arriba)|"
    r"(?:perdon|perdona|disculpa)\s+(?:por\s+)?(?:el retraso|la tardanza|no contestar(?:te)?(?: antes)?|tardar(?: tanto)?"
    r"(?: en contestar)?)(?:\s*,?\s*(?:ha sido|vaya|menuda|llevo)\b.*\bsemana\b.*)?)$")
# A hesitation of speech: "um", "uh", "erm", "eh", "em".
_HESITATION_WORD = r"(?:um+|uh+m?|erm|eh+m?|em+)"
# Discourse markers and requests to remember in front of a statement.
_LEAD = re.compile(
    r"^(?:(?:bueno|pues|vale|ok|okay|oye|mira|anyway|anyways|so|well|oh|ah|wow|hey|hi|hello|hola|yeah|yep|yes|"
    rf"{_HESITATION_WORD}|"
    r"(?:si|no)(?=\s*[,!.])|lol|haha|jaja|btw|pues nada|nada(?=\s+(?:que|o sea)\b)|o sea|en plan|so like|"
    r"(?<=so )like|like(?=\s*,)|you know|i mean|by the way|por cierto|ademas|also|actually|de hecho|en fin|total|"
    r"guess what|you know what|sabes que|(?:muchas\s+)?gracias|thanks|thank you|genial|great|cool|nice|"
    r"awesome|claro|sure|totally|exactly|exacto|honestly|la verdad|basically|so yeah|omg|"
    # Spanish chat openers in front of what is told: "y he organizado una ruta...", "muy bien, ayer entrevisté
    # a...", "y encima el proveedor...", "por aquí buenas noticias: el gimnasio nos pagó".
    r"y(?=\s+\w)|and(?=\s+\w)|muy bien|"
    # the writer handing over what follows: "te cuento:", "te paso los datos del cliente nuevo:"
    r"te (?:cuento|comento|digo|aviso)(?: que)?|te paso (?:los|sus) datos(?: del? [a-z]+(?: [a-z]+)?)?(?=\s*:)|"
    r"bien(?=\s*[,!.])|encima|por aqui|(?:buenas|malas) noticias|madre mia|uf|buf|ostras|"
    # a warning in front ("ojo q pardo ahora paga a 45", "heads up, ...")
    r"ojo|heads up|"
    # a list of who does what, introduced: "so you know who's who: Sarah does payroll, ..."
    r"(?:who'?s who|quien es quien)(?=\s*:)|"
    # an answer to what the other asked, its topic kept: "respondiendo a lo que me preguntabas ayer| del aceite: ...",
    # "about what you asked me yesterday| about the van: ..."
    r"(?:(?:respondiendo|contestando)\s+a\s+lo\s+que\s+me\s+(?:preguntabas|preguntaste|has preguntado)|"
    r"(?:re|about|regarding|to answer)\s+what\s+you\s+asked(?:\s+me)?)(?:\s+(?:ayer|antes|el otro dia|esta manana|"
    r"yesterday|earlier|the other day|this morning))?|"
    r"(?:anda|vaya|ya|jo)(?=\s*[,!.]))\b[\s,!.:;-]*)+")
# Fillers of speech and voice notes after what is told ("... now, you know", "... bueno eso", "... o sea").
# "bueno" and "sabes" alone only after a comma: "el vino es muy bueno" keeps its word.
_TRAIL = re.compile(r"(?:[\s,]+(?:you know(?: what i mean)?|i mean|ya sabes|o sea|bueno eso|y eso|en plan|or whatever|"
                    r"o lo que sea|por si acaso|por si las moscas|just in case|btw|by the way|fyi)\b|\s*,\s*(?:bueno|sabes)\b)+"
                    r"[\s,.!]*$")
# "I'll let you know", "as you know", "do you know": the verb's object, no filler.
_KNOW_VERB = re.compile(r"\b(?:let|as|do|did|does|if|what|tell|told|show)\s*$")
# "Oye, que Talleres García paga a 60 días": after a marker, an unaccented "que" introduces what is told ("qué" asks);
# "que conste", "que sepas" are requests to remember (_REMEMBER), read whole.
_TOLD_THAT = re.compile(r"^que\s+(?!(?:sepas|lo sepas|conste|no se (?:me|te) olvide)\b|" + _WISH + r")(?=\S)",
                        re.IGNORECASE)
_REMEMBER = re.compile(
    r"^(?:(?:por favor|porfa|please)\s*,?\s*)?(?:apuntame|apunta(?:te)?|anota(?:me)?|recuerda(?:lo)?|acuerdate(?: de)?|"
    r"ten en cuenta|toma nota(?: de)?|guarda(?:te)?|que conste|para que lo sepas|que sepas|remember|note(?: down)?|"
    r"make a note|keep in mind|bear in mind|fyi|(?:just\s+)?for (?:the|your) records?|for your information|"
    r"just so you know)\b(?:\s+(?:que|that|esto|this))?"
    r"\s*[:,]?\s*")
_EMOJI = re.compile("[\U0001F000-\U0001FAFF\u2600-\u27BF\uFE0F\u200d]+|[:;]-?[()DPp]\\b|<3")
# A capitalised word alone, as a vocative at the start ("Jon, ...") or the end ("..., Mel!").
_VOCATIVE_START = re.compile(r"^(?:(?:hey|hi|hello|hola|oye|thanks|thank you|gracias|wow|oh|yo)\s+)?"
                             r"[A-ZÁÉÍÓÚÑ][a-záéíóúñü]+\s*[,!:]+\s+")
# At the end only before "!" or "?", or "." in a unit with no number (", London." ends an address).
_VOCATIVE_END = re.compile(r",\s*[A-ZÁÉÍÓÚÑ][a-záéíóúñü]+\s*(?:[!?]+|\.+)\s*$")
# ... but not a name in apposition to the person it names ("ahora lleva las compras su sobrino, Álex.").
_APPOSED_TO = re.compile(r"\b(?:sobrin[oa]|hij[oa]|herman[oa]|mujer|marido|novi[oa]|pareja|prim[oa]|soci[oa]|jef[ea]|"
                         r"encargad[oa]|companer[oa]|amig[oa]|nephew|niece|son|daughter|brother|sister|wife|husband|"
                         r"partner|boss|manager|colleague|cousin|friend)$")
# "Tutéame, ...", "Llámame, ...": a verb with its pronoun, not someone's name.
_CLITIC = re.compile(r"[a-z]{3,}(?:me|nos|te|lo|la|le|les|selo|sela)\b")
# Second person without the first: about the listener ("you're so talented"), not a fact of the writer.
# ("usted" is left out: "mejor de usted" is how the writer wants to be addressed.)
_SECOND = re.compile(r"\b(?:you|your|you're|youre|yours|tu|tus|te|ti|contigo|vosotros|os)\b")
_FIRST = re.compile(r"\b(?:i|i'm|im|i've|i'd|i'll|me|my|mine|myself|we|we're|we've|our|ours|us|yo|mi|mis|me|"
                    r"conmigo|nosotros|nosotras|nos|nuestr[oa]s?)\b|\b\w{2,}(?:amos|emos|imos)\b|^(?:tengo|soy|estoy|"
                    r"vivo|trabajo|hago|voy|quiero|prefiero|llevo)\b|\b(?:habla|hable|llama|llame|trata|trate|escribe|"
                    r"manda|envia|avisa|dime|dame|pasa|tutea|responde|contesta|recuerda|apunta|tutea)(?:me|nos)\b")
# Where a sentence splits into clauses that may each state a fact.
# A dash typed against the word before it ("what's been happening lately- I took a class") breaks too.
# A guess tacked on after a comma ("I'll look into shelters soon, it would be great to have a pup", "fui a una cata,
# a lo mejor repito en verano") is a clause of its own: what was told before it stays a statement, without it.
_GUESS = (r"(?i:(?:so|and|y|asi que|así que)\s+)?(?i:maybe|perhaps|hopefully|probably|(?:it|that|which|this)(?:'d|\s+would)|"
          r"you'?d|you would|a lo mejor|quiz[aá]s?|tal vez|ojal[aá]|ser[ií]a|estar[ií]a)(?:\s+\S+){3}")
# A slip taken back in the same sentence ("paga a 30 días, no, espera, me equivoco, es a 45") is a clause of its own.
_TAKEN_BACK = (r"(?i:no\s*,\s*(?:espera|perdona|perdon|wait|sorry)|(?:espera|perdona|wait|sorry)\s*,\s*(?:me equivoco|"
               r"me he equivocado|my mistake|i mean)|(?:perdona|perdon|sorry|digo|i mean)\s*,\s*(?:a|at|en|es|it's)\s+\d+)\b")
_CLAUSE_BREAK = re.compile(r",\s+(?=" + _TAKEN_BACK + r")|"
                           # a second statement about "them" ("..., and they've also stopped delivering on Saturdays")
                           r",\s+(?=and\s+they(?:'ve|'re|'ll)?\s+(?:also\s+|now\s+)?(?:stopped|started|changed|moved|"
                           r"want|need|asked|closed|put|raised|dropped|won't|don't|only|no longer|pay|charge)\b)|"
                           # what follows for whoever acts on it ("..., so you can write to him in Spanish", "..., he's
                           # the one to call if anything goes wrong"): the statement before it stays one of its own
                           r",\s+(?=(?i:so\s+you\s+(?:can|could|need|have|should|must|'ll|will)\b|"
                           r"(?:he|she|they)(?:'s|'re|\s+is|\s+are)\s+the\s+one\s+to\b))|"
                           r"\s*;\s+|\s+[-–—]\s+|(?<=[a-z])[-–—]\s+(?=\w)|,?\s+(?:but|pero|aunque|although)\s+(?=\w)|"
                           r",\s+(?=" + _GUESS + ")|"
                           # a warning or an aside after an order ("hazme la factura de rivas, y ojo q ahora pagan con
                           # bizum"): a statement of its own
                           r",\s+(?=(?i:(?:y\s+|and\s+)?(?:ojo|heads up|fyi|btw|por cierto|by the way)\b))")


@dataclass(frozen=True)
class Unit:
    """One sentence or clause: as written, and cleaned of phatic lead-ins and vocatives."""
    raw: str
    text: str  # what remains to judge and read ("" when the unit was phatic)
    index: int  # its order in the message
    # The reason told after an order ("..., que desde este mes pagan a 60"): a rule may read a fact in it, but it is
    # no note of its own ("..., que por la mañana no hay nadie" is about the order, for now).
    reason: bool = False

    @property
    def phatic(self) -> bool:
        return not self.text

    @property
    def sentence(self) -> Sentence:
        return Sentence.of(self.text)


# Hesitations of speech, which a voice note's transcript keeps anywhere ("a Floristería Remedios eh el pedido...").
_HESITATION = re.compile(rf"(?i)(?<=\w)[\s,]+{_HESITATION_WORD}\b,?(?=\s+\w)")


# News passed on by someone ("Me comenta Iñaki que Frutas Medina ya no reparte los sábados", "Tom says Bellview Hotel
# want their invoices monthly", "Me han dicho en Cafés Urquiza que..."): who told it is not what it is about.
_RELAYED = re.compile(r"^(?:(?:me|nos)\s+(?:lo\s+)?(?:ha|han|acaba de|acaban de)\s+(?:dicho|contado|comentado|confirmado)|"
                      r"(?:me|nos)\s+(?:dice|dicen|comenta|comentan|cuenta|cuentan|confirma|confirman)|dice|comenta)\s+"
                      r"(?P<who>(?:(?P<at>en|desde)\s+)?(?:[^\W\d_][\w'.&-]*\s+){1,4}?)que\s+(?=\S)")
# A call that brought the news: "Ha llamado la de Papelería Goya para decir que...", "Kestrel rang to say...".
_CALLED_TO_SAY = re.compile(r"^(?:ha|han)\s+llamado\s+(?:(?:el|la|los|las)\s+de\s+)?(?P<who>.+?)\s+para\s+(?:decir|avisar|"
                            r"contar|comentar)(?:nos|me)?(?:\s+de)?\s+que\s+(?=\S)|"
                            r"^(?P<who_en>.+?)\s+(?:called|rang|phoned)\s+(?:up\s+)?to\s+(?:say|tell (?:us|me)|"
                            r"let (?:us|me) know)\s+(?:that\s+)?(?=\S)")
_RELAYED_EN = re.compile(r"^(?P<who>[A-Z][a-z]+)\s+(?:says|said|told me|tells me|mentioned)\s+(?:that\s+)?(?=\S)")
_CAPITALISED = re.compile(r"(?<!^)\b[A-ZÁÉÍÓÚÑ][a-záéíóúñü]+")


def _without_relayer(text: str) -> str:
    """What was passed on: with its caller in front when a call brought it ("Ha llamado la de Papelería Goya para decir
    que ahora abren a las 9" -> "Papelería Goya: ahora abren a las 9"); alone when it names whom it is about ("Me
    comenta Iñaki que Frutas Medina ya no reparte los sábados" -> "Frutas Medina ya no reparte los sábados"); with the
    business in front when it was told there ("Me han dicho en Cafés Urquiza que desde marzo..." -> "En Cafés
    Urquiza, desde marzo..."). "Luis dice que le llames" names no one else and stays as it is."""
    m = _CALLED_TO_SAY.match(fold(text))
    if m:
        who = text[m.start("who"): m.end("who")] if m.group("who") else text[m.start("who_en"): m.end("who_en")]
        return f"{who}: {text[m.end():]}"
    m = _RELAYED.match(fold(text)) or _RELAYED_EN.match(text)
    if not m:
        return text
    rest = text[m.end():]
    if m.re is _RELAYED and m.group("at"):
        who = text[m.start("who"): m.end("who")].strip()
        return f"{who[:1].upper()}{who[1:]}, {rest}"
    return rest if _CAPITALISED.search(rest) else text


def strip_talk(text: str, keep: frozenset[str] = frozenset()) -> str:
    """The unit without emoji, hesitations, discourse markers, requests to remember and vocatives at either end;
    a capitalised word in `keep` (a known subject's name word, folded) is never taken for a vocative."""
    # "que los de talleres ugarte ya no nos compran": what is told, with no marker in front of its "que"
    text = _TOLD_THAT.sub("", _HESITATION.sub("", _EMOJI.sub(" ", text)).strip())
    for _ in range(3):
        before = text
        m = _LEAD.match(fold(text))
        if m and m.end():
            text = _TOLD_THAT.sub("", text[m.end():].lstrip(" ,!.:;-"))
        m = _REMEMBER.match(fold(text))
        if m and m.end() and m.end() < len(text):
            text = text[m.end():]
        text = _without_relayer(text)
        text = text[_vocative_at_start(text, keep):]
        m = _TRAIL.search(fold(text))
        if m and m.start() and not _KNOW_VERB.search(fold(text)[: m.start()]):
            text = text[: m.start()]
        m = _VOCATIVE_END.search(text)
        if m and not _kept(m.group(), keep) and ("." not in m.group() or not re.search(r"\d", text)) \
                and not _APPOSED_TO.search(fold(text[: m.start()]).rstrip()):
            text = text[: m.start()].strip()
        if text == before:
            break
    if text[:1].islower() and len(text) > 1:
        text = text[0].upper() + text[1:]
    return text.strip()


def _kept(span: str, keep: frozenset[str]) -> bool:
    return any(w in keep for w in re.findall(r"[a-z]+", fold(span)))


# Asking to note what was just said ("apúntalo xfa q lo uso cada semana", "save that please, I use it every week"):
# the fact is in what came before; this unit and its reason teach nothing of their own.
_NOTE_IT = re.compile(r"^(?:(?:vale|ok|pues|bueno|y)\s*,?\s*)*(?:apunta|anota|guarda|apuntate|anotate|guardate|memoriza)"
                      r"(?:lo|la|los|las|melo|mela|telo|tela)\b(?:\s*,?\s*(?:por favor|porfa|please))?"
                      r"(?:\s*,?\s*(?:que|porque|ya que|pues)\b.*)?$|"
                      r"^(?:(?:ok|and)\s*,?\s*)*(?:please\s+)?(?:note|save|write|jot|store)\s+(?:it|that|this)(?:\s+down)?"
                      r"(?:\s*,?\s*(?:please|pls))?(?:\s*,?\s*(?:as|because|since|cos|cause|(?:i|we) (?:use|need) (?:it|that|this))\b.*)?$")


def is_phatic(text: str) -> bool:
    """Nothing but greetings, thanks, agreement, compliments or reactions (in es and en)."""
    low = fold(_EMOJI.sub(" ", text)).strip(" .!?¡¿,;:-")
    if not low:
        return True
    if _PHATIC_START.match(low) or _NOTE_IT.match(low):
        return True
    words = re.findall(r"[a-z']+", low)
    if not words:
        return not re.search(r"\d", low)
    # Names (a vocative: "Thanks, Mel") count as talk; a sentence's capitalised first word does not.
    capitalised = {fold(m.group()) for m in re.finditer(r"\b[A-ZÁÉÍÓÚÑ][a-záéíóúñü]+\b", text)
                   if text[: m.start()].strip(" ¡¿\"'(")}
    if all(w in PHATIC_WORDS or w in capitalised for w in words) and len(words) <= 8 and not re.search(r"\d", low):
        return True  # (a number is no talk: "- Catering Olmo: a 30")
    left = [w for w in words if w not in PHATIC_WORDS and w not in FEELING_WORDS and w not in FUNCTION_WORDS]
    if _PLACE_NAMED.search(text):
        return False  # "I was in Chicago, it was awesome!": where the writer was is no echo
    if len(words) <= 10 and (all(w in ANAPHORA for w in left) or (
            len(left) <= ECHO_WORDS and any(w in _ECHO or (w in _APPRAISAL and nxt not in _SKILL)
                                            for w, nxt in zip(words, [*words[1:], ""])))):
        return True  # "Yeah, I have one", "Cool, I love pizza too!", "Photography has been great for me!"
    # Only how the writer feels ("I'm so grateful", "They make me so happy", "estoy muy agradecida").
    return any(w in FEELINGS for w in words) and all(w in PHATIC_WORDS or w in FEELING_WORDS for w in words) and \
        len(words) <= 10


# A capitalised name after a preposition of place: somewhere the writer was or went, never a vocative.
_PLACE_NAMED = re.compile(r"\b(?:in|at|to|from|en|a|desde)\s+[A-ZÁÉÍÓÚÑ][a-záéíóúñü]+")


# An appraisal followed by what it is of ("It's so sad how a lack of resources can crush kids' dreams", "It's great to
# experience other cultures"): a view of the writer's, not a reaction, though it opens like one. Never what the
# listener showed or told ("It's great to hear that"), which stays phatic.
_IT_IS_VIEW = re.compile(r"^(?:and\s+|but\s+)?(?:it's|it is|its)\s+(?:(?:so|really|always|just|truly|super|very|"
                         r"incredibly|pretty)\s+)*[a-z]+\s+(?:how|to|when)\s+(?!(?:see|hear|know|meet|chat|talk|read|"
                         r"watch|catch|you|your)\b)(?:[a-z']+\s+){2,}[a-z']+")


def _without_greeting(text: str, keep: frozenset[str]) -> str:
    """The unit without a greeting and vocative in front ("Hey Gina, thanks for being there" -> "thanks for
    being there"), so a phatic phrase behind them is still seen as one."""
    text = re.sub(r"(?i)^(?:hey|hi|hello|hola|oye|yo|yeah|yes|yep|oh|wow|ok|okay|thanks|si|sí|vale|bueno|pues|"
                  r"gracias)\s+(?=[A-ZÁÉÍÓÚÑ])", "", text.strip())
    return text[_vocative_at_start(text, keep):]


def _vocative_at_start(text: str, keep: frozenset[str]) -> int:
    """Where the text goes on after a vocative in front ("Jon, ...", "Hey Mel! ..."), 0 without one: never a
    known subject's name, a verb with its pronoun ("Llámame, ...") or a day ("Yesterday, I went to a fair")."""
    m = _VOCATIVE_START.match(text)
    if not m or len(text) <= m.end() or _kept(m.group(), keep) or _CLITIC.search(fold(m.group())):
        return 0
    return 0 if fold(m.group()).split()[-1].strip(" ,!:") in DAY_WORDS else m.end()


# Something the listener gave or told of, named as the object of the unit ("been reading that book you
# recommended", "made the cake you sent me"): the unit is about the writer's doing, not about the listener.
_YOUR_GIFT = re.compile(r"\b(?:the|that|this|those|these)\s+(?:[a-z\-]+\s+){1,3}?(?:that\s+|which\s+)?you\s+"
                        r"(?:recommended|suggested|mentioned|sent|gave|showed|lent|shared|told me about|told me|made|"
                        r"bought|got|wrote|taught)\b")


def without_listener_gift(low: str) -> str:
    """The folded text without "the book you recommended"-like objects, which name the listener only in passing."""
    return _YOUR_GIFT.sub(" ", low)


# "you" as anyone who does the job ("ask for Tom when you deliver", "if you call them after five nobody answers",
# "cuando vayas a entregar, pregunta por Luis"): an instruction about a customer, not about the listener.
_ANYONE_YOU = re.compile(r"\b(?:when|whenever|if|once|before|after|cuando|si|antes de que|despues de que)\s+"
                         r"(?:you|you're|tu)\s+(?:\w+\s+)?(?:deliver\w*|call\w*|ring\w*|phone\w*|go|get there|"
                         r"arrive\w*|visit\w*|order\w*|invoice\w*|send\w*|drop\w*|pick\w*|book\w*|e-?mail\w*|write\w*|"
                         r"quote\w*|"
                         r"vayas|llames|llegues|entregues|pidas|factures|mandes|envies|pases|escribas|contactes)\b")


# How the listener answers is the writer's wish, not talk about the listener: "keep your answers short please".
_YOUR_ANSWERS = re.compile(r"\b(?:your|tus|sus)\s+(?:answers|replies|responses|messages|explanations|respuestas|"
                           r"mensajes|explicaciones)\b")


def about_listener(text: str) -> bool:
    """A unit about the person spoken to ("you're so talented", "tu perro es precioso"), not the writer."""
    low = _YOUR_ANSWERS.sub(" ", _ANYONE_YOU.sub(" ", without_listener_gift(fold(text))))
    return bool(_SECOND.search(low)) and not _FIRST.search(low)


# A clause typed without any punctuation that runs on into a new statement: "y"/"and" before a new subject.
_RUN_ON = re.compile(r"\s+(?:y|and)\s+(?=(?:el|la|los|las|mi|mis|su|sus|nuestr[oa]s?|the|my|our|their|his|her)\s)",
                     re.IGNORECASE)
RUN_ON_WORDS = 5  # each side of the "y" at least this many words, so "Talleres García y la Ferretería Ortiz" stays one


def _run_on(clause: str) -> list[str]:
    """A clause of a message typed with no punctuation, split where it runs on into another statement with a subject
    of its own (a punctuated message has its breaks where its writer wanted them)."""
    out, start = [], 0
    for m in _RUN_ON.finditer(clause):
        if len(clause[start: m.start()].split()) >= RUN_ON_WORDS and len(clause[m.end():].split()) >= RUN_ON_WORDS:
            out.append(clause[start: m.start()])
            start = m.end()
    return [*out, clause[start:]]


# A hedge of its own after a statement ("..., pero no estoy seguro", "..., not sure though", "..., creo"): it makes the
# statement before it a guess (clauses.statement), so it stays in that statement's unit.
_HEDGE = re.compile(r"^(?:pero\s+|but\s+|aunque\s+|y\s+)?(?:no\s+(?:estoy|estamos)\s+segur[oa]s?|no\s+es\s+seguro|"
                    r"no\s+(?:lo\s+)?se\s+seguro|no\s+esta\s+confirmad[oa]|sin\s+confirmar|creo|i\s+think|"
                    r"(?:i'?m\s+|i\s+am\s+)?not\s+(?:100%\s+)?sure|unconfirmed|not\s+confirmed)"
                    r"(?:\s+(?:though|eh|del todo|todavia|aun|yet))?\W*$|^" + REFUSED + r"\W*$")


# An order with its reason after it ("hazme la factura de Talleres Ruiz, que desde este mes pagan a 60", "invoice
# Harbor Foods, since they pay at 45 now"): the reason is told as a fact, a clause of its own without its "que".
_REASON = re.compile(r",\s+(?:que|porque|ya que|pues|since|because|as|cos|cause)\s+(?=\S)", re.IGNORECASE)
REASON_WORDS = 3  # each side at least this many words


def _order_and_reason(clause: str) -> list[tuple[str, bool]]:
    """The clause, or the order and its reason (each with whether it is the reason)."""
    m = _REASON.search(clause)
    if m and len(clause[: m.start()].split()) >= REASON_WORDS and len(clause[m.end():].split()) >= REASON_WORDS \
            and any(is_order(Sentence.of(part)) for part in clause[: m.start()].split(", ")):
        return [(clause[: m.start()], False), (clause[m.end():], True)]
    return [(clause, False)]


@lru_cache(maxsize=4096)
def units(message: str, keep: frozenset[str] = frozenset()) -> tuple[Unit, ...]:
    """The message's sentences and clauses, each cleaned; phatic ones kept with an empty text. Remembered
    for the last 4,096 messages: the gate, the extractor and the policy each split the same message."""
    out: list[Unit] = []
    message = untexted(message or "")
    unpunctuated = not re.search(r"[,.!?;:]", message)
    for sentence in split_sentences(message):
        for clause, reason in (told for piece in _CLAUSE_BREAK.split(sentence)
                               for part in (_run_on(piece) if unpunctuated else [piece])
                               for told in _order_and_reason(part)):
            clause = clause.strip()
            if not clause:
                continue
            if out and out[-1].text and _HEDGE.match(fold(clause)):
                out[-1] = replace(out[-1], raw=f"{out[-1].raw}, {clause}", text=f"{out[-1].text}, {clause}")
                continue
            # A known name said first is still the listener addressed when what follows is small talk ("John, I'm
            # doing ok", "Yeah Mel, I get it"): the name keeps its clause only when the clause says something.
            view = bool(_IT_IS_VIEW.match(fold(clause)))
            text = "" if not view and (is_phatic(clause) or is_phatic(_without_greeting(clause, keep)) or (
                keep and is_phatic(_without_greeting(clause, frozenset())))) else strip_talk(clause, keep)
            # (what the listener is told to keep in mind is no talk about them: "para que lo tengas en cuenta: ...")
            if text and ((not view and is_phatic(text)) or about_listener(strip_lead(Sentence.of(text)).text)):
                text = ""
            out.append(Unit(raw=clause, text=text, index=len(out), reason=reason))
    return tuple(out)


def asks(text: str) -> bool:
    """A unit written as a question (with its question mark): never a fact."""
    return "?" in text or "¿" in text
