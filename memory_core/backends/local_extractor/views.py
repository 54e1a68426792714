"""Whether a unit states a view, a value, a lasting taste or a way of being of the writer's ("Setbacks are just
opportunities for comebacks", "Valoro mucho la sinceridad", "I'm a really competitive person"): learnt as theirs
on its shape alone, whatever the gate scored; and whether a unit's "it" opens a view rather than pointing back."""
from __future__ import annotations

import re

from memory_core.backends.local_extractor.clauses import is_order, statement, strip_lead
from memory_core.backends.local_extractor.sensitive import sensitive
from memory_core.backends.local_extractor.speaker import LISTENER
from memory_core.backends.local_extractor.text import Sentence
from memory_core.backends.local_extractor.topics import content_words
from memory_core.backends.local_extractor.units import FEELING_WORDS, PHATIC_WORDS, without_listener_gift

# What the writer holds in general: a view ("Setbacks are just opportunities for comebacks", "I think family is
# what matters most", "Es importante mantenerse positivo"), a value ("I believe in second chances", "Valoro mucho
# la sinceridad"), a lasting taste or a way of being ("I've always loved painting", "I'm a really competitive
# person", "Music helps me relax", "Soy muy competitiva", "La música me ayuda a relajarme"). Durable facts of the
# speaker though no event, and the gate, trained on the day's messages, scores them low; they are learnt on their
# shape alone, as the writer's own (`VIEW_CATEGORY`), when they carry this many words of substance (not praise,
# feelings, greetings) and say nothing of the listener: encouragement and compliments ("You've got this, keep
# going", "I'm so proud of you") stay out, as do questions, orders and "let's".
VIEW_WORDS_NEEDED = 3
# A value said in a few words ("Balance is key", "La familia es lo primero") takes one word fewer.
VIEW_VALUE_WORDS = 2
VIEW_CATEGORY = "preference"
# What opens a view's frame without being part of it ("Honestly,", "Y la verdad,").
_VIEW_LEAD = re.compile(r"^(?:(?:and|but|so|plus|honestly|personally|really|trust me|it's true|y|pero|pues|la verdad|"
                        r"sinceramente|personalmente|de verdad|es verdad)\s*,?\s+)*")
# "I think / I believe / I've learned (that)", "Creo que / Para mí / He aprendido que": what follows is the view.
_OPINION = re.compile(
    r"(?:i(?:'ve| have)?\s+(?:always\s+|really\s+|truly\s+|honestly\s+|strongly\s+|still\s+|now\s+|do\s+)*"
    r"(?:think|believe|feel|reckon|learned|learnt|realized|realised|found|figured)\s+(?!in\b)(?:that\s+)?|"
    r"(?:(?:yo\s+)?(?:creo|pienso|opino|siento|considero)|me parece|(?:he|hemos)\s+aprendido|aprendi|"
    r"me he dado cuenta de)\s+que\s+|para mi,?\s+)")
# A value of the writer's in the first person ("I believe in second chances", "I value honesty", "Creo mucho en la
# familia", "Valoro la sinceridad"), a lasting taste ("I've always loved painting", "Siempre me ha encantado
# pintar", "I'm really into jazz", "Love experimenting with spices") or a way of being ("I'm a really competitive
# person", "Soy muy competitiva", "Me considero una persona tranquila").
_OWN_VIEW = re.compile(
    r"^(?:i\s+(?:really\s+|truly\s+|strongly\s+|deeply\s+|still\s+)*(?:believe in|value|care (?:a lot |deeply )?about|"
    r"live for|can't live without|cannot live without)\b|"
    r"i(?:'ve| have)\s+always\s+(?:loved|liked|enjoyed|adored|hated|been)\b|i\s+always\s+(?:love|loved|enjoy|enjoyed)\b|"
    r"(?:i'm|i am)\s+(?:such\s+|really\s+|very\s+|so\s+|pretty\s+|a bit\s+|kind of\s+|super\s+|quite\s+|definitely\s+)*"
    r"(?:into|passionate about|obsessed with|a (?:big |huge |real |true )?(?:fan|lover|believer) (?:of|in)|"
    r"an? (?:\w+\s+){0,3}?(?:person|guy|girl|type|kind of person|introvert|extrovert|homebody|perfectionist|"
    r"optimist|pessimist|morning person|night owl)\b)|"
    r"(?:really\s+|just\s+|always\s+)?(?:love|enjoy|adore)\s+(?!(?:hearing|seeing|reading|knowing|chatting|talking|"
    r"to (?:hear|see|read|know|chat|talk|catch|meet|watch))\b)(?:\w+ing|to\s+\w+)\b|always up for\b|"
    r"(?:yo\s+)?(?:creo|confio)\s+(?:mucho\s+|muchisimo\s+|bastante\s+)?en\b|(?:yo\s+)?valoro\b|"
    r"(?:yo\s+)?(?:siempre\s+)?me\s+(?:ha|han)\s+(?:encantado|gustado|apasionado|chiflado)\b|"
    r"(?:yo\s+)?soy\s+(?:una persona|un tio|una tia|alguien|de los que|de las que|(?:muy|bastante|super|re|"
    r"demasiado|tan|algo|un poco)\s+\w+)|(?:yo\s+)?me considero\b)")
# A statement in general: a subject that is no pronoun, no one addressed and no thing pointed at ("Setbacks",
# "Talking about inclusivity", "Little acts of kindness", "La familia", "Tener amigos"), then a verb of what
# holds in general, in the present ("are", "can", "makes", "helps", "es", "pueden", "ayuda").
_NOT_GENERAL_SUBJECT = (
    r"(?!(?:i|you|he|she|it|we|they|this|that|these|those|there|here|my|your|his|her|our|their|its|the|a|an|"
    r"what|who|which|how|why|when|where|let's|lets|let|please|just|thanks|thank|glad|yeah|yes|no|not|and|but|or|"
    r"if|maybe|hope|wish|everyone|everybody|someone|somebody|nobody|anyone|one|both|all|been|gonna|going|need|"
    r"needs|appreciate|trust|to|for|with|in|on|at|as|like|para|de|en|con|por|a|al|del|"
    r"yo|tu|el|ella|ellos|ellas|usted|ustedes|nosotros|nosotras|vosotros|esto|eso|esta|este|estos|estas|esa|ese|"
    r"esos|esas|aqui|alli|que|quien|como|cuando|donde|si|no|y|pero|o|ojala|gracias|mi|mis|tus|su|sus|nuestro|"
    r"nuestra|todos|todas|nadie|alguien|uno|una|lo|le|les|me|te|se|nos|os)\b)")
_GENERAL = re.compile(
    r"^(?:(?:a little|a bit of|a good|a great|a strong|the little|the small|the best|the right|the key|"
    r"el|la|los|las|un poco de|cada)\s+)?" + _NOT_GENERAL_SUBJECT +
    r"(?P<subject>[a-z][a-z'/&-]*(?:\s+[a-z][a-z'/&-]*){0,6}?)\s+(?:(?:sure|really|truly|always|just|often|definitely|also|"
    r"do|does|will|siempre|tambien|realmente|de verdad)\s+)*"
    r"(?:is|are|isn't|aren't|can|can't|matters?|counts?|makes?|helps?|brings?|gives?|pays?|keeps?|leads?|goes|"
    r"means?|deserves?|heals?|teaches|forces?|builds?|beats?|shapes?|has a way|have a way|should|comes?|takes?|"
    r"es|son|puede|pueden|importa|importan|hace|hacen|ayuda|ayudan|da|dan|trae|traen|vale|valen|merece|merecen|"
    r"cuenta|cuentan|une|unen|cura|curan|ensena|ensenan|marca|marcan|llena|llenan|debe|deben)\b")
# "It's important to stay positive", "It's incredible how a game can bring people together", "Es importante
# mantenerse positivo", "Es increíble cómo un juego une a la gente": an appraisal with what it is of after it.
_IT_IS = re.compile(
    r"^(?:it's|it is|its|es|lo (?:mas )?\w+ es)\s+(?:(?:so|really|always|just|truly|super|very|definitely|incredibly|"
    r"pretty|muy|tan|super|realmente|siempre|bastante)\s+)*"
    r"(?:important|crucial|vital|essential|key|amazing|incredible|sad|great|nice|fun|rewarding|empowering|inspiring|"
    r"cool|hard|tough|normal|worth it|priceless|wonderful|awesome|beautiful|crazy|funny|interesting|good|healthy|"
    r"refreshing|satisfying|fulfilling|necessary|easy|difficult|special|powerful|true|"
    r"importante|fundamental|clave|esencial|vital|increible|genial|triste|bonito|precioso|necesario|bueno|dificil|"
    r"duro|normal|gratificante|divertido|curioso|impresionante|facil|sano|verdad)\s+"
    r"(?:to|how|that|when|being|having|\w+ing|que|como|cuando|\w+(?:ar|er|ir)(?:se|te|me|nos|lo|la|los|las)?)\b")
# "There's nothing like the energy in a stadium", "No hay nada como una tarde de lluvia", "Lo más importante es la
# familia", "Lo que más importa es...", "It's moments like these that make life worth living", "Son momentos como
# estos los que te dan fuerzas": a view in a fixed frame.
_VIEW_FRAME = re.compile(
    r"^(?:there's nothing like|there is nothing like|nothing beats|nothing compares to|no hay nada como|nada como|"
    r"nada mejor que|lo (?:mas |que mas )?(?:importante|importa|importa de verdad) es|"
    r"(?:it's|it is) (?:the )?(?:moments|times|things|people|days|little things) like (?:these|this|that|those) that|"
    r"son (?:momentos|cosas|dias|detalles|personas) como (?:estos|estas|este|esta|esos|esas) (?:los|las) que)\b")
# The writer's own life a thing keeps ("Music helps me relax", "Family's super important to me", "Painting makes me
# happy", "La música me ayuda a relajarme", "La familia es muy importante para mí").
_DOES_ME = re.compile(r"\b(?:helps? me|makes? me|keeps? me|gives? me|calms? me|relaxes? me|means? (?:a lot|so much|"
                      r"everything|the world) to me|(?:is|are|'s|'re)\s+(?:\w+\s+){0,2}?(?:important|everything|key) "
                      r"(?:to|for) me|me ayuda|me ayudan|me relaja|me relajan|me calma|me da paz|me hace feliz|"
                      r"me hacen feliz|me llena|me llenan|(?:es|son)\s+(?:\w+\s+){0,2}?(?:importante|importantes|"
                      r"todo|lo primero|clave) para mi)\b")
# Perceiving what the listener shows or tells is a reaction to it, not a view ("It's great to see you so happy",
# "Es genial verte así").
_SEEING = re.compile(r"^(?:it's|it is|its|es)\s+(?:\w+\s+){0,3}?(?:to (?:see|hear|read|watch|meet|chat|talk|catch)|"
                     r"seeing|hearing|(?:ver|oir|leer|saber|escuchar|hablar|charlar)(?:te|os|lo|la)?)\b")
_VALUE_WORDS = re.compile(r"\b(?:key|important|crucial|essential|vital|everything|priceless|matters?|counts?|"
                          r"necessary|clave|importante|fundamental|esencial|necesario|lo primero|todo|importa|"
                          r"importan)\b")
_DATE_WORDS = re.compile(r"\b(?:today|tomorrow|tonight|yesterday|(?:this|next|last) (?:week|month|year)|monday|"
                         r"tuesday|wednesday|thursday|friday|saturday|sunday|hoy|manana|ayer|(?:esta|la) semana|"
                         r"(?:este|el) mes|lunes|martes|miercoles|jueves|viernes|sabado|domingo)\b|\d")


def opens_on_dummy_it(text: str) -> bool:
    """The unit's "it" points at nothing said before ("It's amazing how books take us places", "It's moments like
    these that..."): it opens a view, it does not go on about the unit before it."""
    low = _VIEW_LEAD.sub("", Sentence.of(text).low.strip(" .!-"))
    return bool(_IT_IS.match(low) or _VIEW_FRAME.match(low))


def states_a_view(text: str) -> bool:
    """A unit stating a view, a value, a lasting taste or a way of being of the writer's (see `_GENERAL`...): a
    durable fact of the speaker that is no event. Never a question, an order, a wish for the listener, a
    protected topic, nor anything said of the listener."""
    s = strip_lead(Sentence.of(text))
    if not s.low or "?" in s.text or "¿" in s.text or is_order(s) or sensitive(s):
        return False
    low = _VIEW_LEAD.sub("", s.low.strip(" .!-"))
    low = _GENERIC_YOU.sub(lambda m: re.sub(r"\byou\b", "one", m.group()), low)
    if LISTENER.search(without_listener_gift(low)) or re.match(r"(?:let's|lets|let us|vamos a|hay que)\b", low):
        return False
    # "I think" / "creo que" hedge a fact ("creo que paga a 60 días"), not a view: what follows it must state.
    opinion = _OPINION.match(low)
    rest = low[opinion.end():] if opinion else low
    if not statement(Sentence.of(rest)):
        return False
    told = [w for w in content_words(rest) if w not in PHATIC_WORDS and w not in FEELING_WORDS]
    if _OWN_VIEW.match(rest) or _VIEW_FRAME.match(rest):
        return len(told) >= 1  # the frame says what it is: "Soy muy competitiva", not "soy muy feliz"
    needed = VIEW_VALUE_WORDS if _VALUE_WORDS.search(rest) else VIEW_WORDS_NEEDED
    if len(told) < needed:
        return False
    if _DOES_ME.search(rest):
        return True
    it_is = _IT_IS.match(rest)
    if it_is:
        # What the appraisal is of tells the view, with substance of its own: "It's tough to pick just one",
        # "It's hard to describe how beautiful they were" say nothing the writer holds.
        of = [w for w in content_words(rest[it_is.end() - len(it_is.group().split()[-1]):])
              if w not in PHATIC_WORDS and w not in FEELING_WORDS]
        needed = VIEW_VALUE_WORDS if _VALUE_WORDS.search(it_is.group()) else VIEW_WORDS_NEEDED
        return not _SEEING.match(rest) and len(of) >= needed
    # A general statement: never of a day ("La reunión es el martes" is a plan) nor told in the past, and its
    # subject a thing in general, not someone pointed at ("Ping me when Initech pays", "el de Hotel Sol"), nor life
    # itself ("Life can be such a rollercoaster", "La vida es una montaña rusa": small talk).
    general = _GENERAL.match(rest)
    if not general or _DATE_WORDS.search(rest):
        return False
    subject = general.group("subject")
    return not _POINTED.search(subject) and not _PLATITUDE.fullmatch(subject) and not _OPEN_END.search(subject)


# "You" of anyone, inside what a view is of ("Having friends you can rely on makes a huge difference").
_GENERIC_YOU = re.compile(r"\b(?:friends|people|someone|somebody|something|things|ones|those|family)\s+(?:who\s+|that\s+)?"
                          r"you\s+(?:can|could|love|trust|care about|need|want|rely on)\b")
# Words that make a subject someone or something pointed at, not a thing in general.
_POINTED = re.compile(r"\b(?:i|me|you|it|he|him|she|her|we|us|they|them|we'll|i'll|that|when|if|whose|"
                      r"te|le|les|nos|el de|la de|los de|las de|que|cuando|si)\b")
# A subject that ends where a phrase goes on is no subject: the verb is an infinitive or a noun ("Been tweaking a
# recipe to make it yummier", "Appreciate all the help").
_OPEN_END = re.compile(r"\b(?:to|for|and|or|of|the|a|an|all|some|my|your|para|de|y|o|que|en|el|la|los|las|un|una|"
                       r"mi|mis|tu|tus|su|sus)$")
_PLATITUDE = re.compile(r"(?:life|(?:la )?vida|time|times|el tiempo|things|las cosas|todo|everything)")
