"""A protected topic named as a cause, a field of work or an event, not as anyone's own data.

"I ran a charity race for mental health", "I'm looking into counseling and mental health as a career",
"next month I'm having an LGBTQ art show", "we sold paintings at the church fair", "me apunté a una carrera
solidaria por la salud mental": the sentence names a special category (GDPR art. 9) but reveals nobody's
health, beliefs, orientation or politics. `without_topic_mentions` removes the protected words of those
phrases only, so the special-category checks (the exclusion list, the extractor's word list, the gate)
judge what is left: "I was diagnosed with diabetes", "I'm gay", "I went to an LGBTQ support group",
"hiking with my church friends" keep every word and stay refused.

The text itself is never changed for storage: the masked copy is only what the checks read.
"""
from __future__ import annotations

import re

# Protected words that can name a cause, a field or an event ("mental health", "LGBTQ+", "church").
_TOPIC_EN = (r"mental[\s-]+health|health|lgbtq?(?:ia)?\+?|lgbt\+?|queer|trans(?:gender)?|pride|church|religious|"
             r"interfaith|politics|political|(?:breast\s+)?cancer|autism|alzheimer'?s|diabetes|hiv|aids|"
             r"disabilit(?:y|ies)|dementia")
_TOPIC_ES = (r"salud\s+mental|salud|lgtb\w*|lgbt\w*|trans|orgullo|iglesia|parroquia|pol[ií]tica|c[aá]ncer|autismo|"
             r"alzh?eimer|diabetes|vih|sida|discapacidad|demencia")
_TOPIC = rf"(?:{_TOPIC_EN}|{_TOPIC_ES})"

# What such a word may qualify without saying anything of a person: an event, a cause, a place, a field.
_THING_EN = (r"art\s+shows?|shows?|exhibitions?|exhibits?|events?|parades?|march(?:es)?|festivals?|fairs?|"
             r"bake\s+sales?|markets?|fundraisers?|charit(?:y|ies)|awareness|research|campaigns?|walks?|runs?|"
             r"races?|marathons?|conferences?|conventions?|workshops?|seminars?|panels?|poetry\s+readings?|"
             r"readings?|(?:youth\s+)?cent(?:er|re)s?|shelters?|non-?profits?|organi[sz]ations?|foundations?|"
             r"mentorship|programs?|programmes?|projects?|month|week|jobs?|careers?|field|sector|"
             r"professionals?|workers?|counsel(?:l)?ing|counsel(?:l)?ors?|blogs?|podcasts?|classes|courses?|"
             r"degree|studies|policy|policies|reform|debates?|news")
_THING_ES = (r"carreras?|marchas?|caminatas?|maratones?|eventos?|conciertos?|mercadillos?|rastrillos?|ferias?|"
             r"fiestas?|exposici[oó]n(?:es)?|muestras?|campa[nñ]as?|charlas?|talleres?|jornadas?|congresos?|"
             r"centros?|asociaci[oó]n(?:es)?|fundaci[oó]n(?:es)?|ong|programas?|proyectos?|blogs?|voluntariado|"
             r"donaci[oó]n(?:es)?|recaudaci[oó]n|investigaci[oó]n|concienciaci[oó]n|sensibilizaci[oó]n|"
             r"desfiles?|trabajos?|trabajar|estudiar|dedicarme|dedicarse|empleos?|puestos?|m[aá]ster|grado|cursos?|estudios|sector|[aá]mbito|"
             r"debates?|noticias")

_PATTERNS = [
    # "an LGBTQ art show", "a mental health charity race", "the church fair", "pride parade".
    re.compile(rf"\b(?P<t>{_TOPIC_EN})\s+(?=(?:{_THING_EN})\b)", re.I),
    # "a charity race for mental health", "a mentorship program for LGBTQ youth", "blogging about politics".
    re.compile(rf"\b(?:{_THING_EN}|blogging|volunteer(?:ed|ing)?|donat(?:e|ed|ing)|rais(?:e|ed|ing)\s+money|"
               rf"rais(?:e|ed|ing)\s+awareness|spread(?:ing)?\s+awareness|notes|reading\s+up|articles?|books?|"
               rf"posts?|a\s+difference|advocacy)\s+(?:\w+\s+){{0,3}}?(?:for|to\s+support|supporting|on|about|"
               rf"of|in|into|at|with)\s+(?:the\s+|a\s+|an\s+|local\s+|our\s+local\s+)?(?P<t>{_TOPIC_EN})\b", re.I),
    # A field of work or study: "counseling and mental health as a career", "getting into local politics".
    re.compile(r"\b(?P<t>(?:counsel(?:l)?ing|psychology|social\s+work|therapy)(?:\s+(?:and|or|&)\s+mental[\s-]+health)?|"
               r"mental[\s-]+health)\s+(?=(?:as\s+a\s+career|jobs?|careers?|degree|course|field|studies|work|"
               r"is\s+the\s+way\s+to\s+go)\b)", re.I),
    re.compile(r"\b(?:career|careers|job|jobs|degree|studies|study|course|major|internship)\s+(?:\w+\s+){0,2}?"
               r"(?:in|into|as\s+an?)\s+(?P<t>counsel(?:l)?(?:ing|or)|psychology|therapy|therapist)\b", re.I),
    # Helping at a support group tells nothing of the helper: "I volunteer at a support group".
    re.compile(r"\b(?:volunteer\w*|voluntari[oa]s?|run|running|organi[sz]e|organi[sz]ing|lead|leading|facilitat\w*|"
               r"coordin\w*|ayudo|colaboro)\s+(?:\w+\s+){0,2}?(?:at|with|for|in|en|con)\s+(?:a|an|the|un|una|el|la)?\s*"
               r"(?P<t>(?:[\w+]+\s+)?support\s+groups?|grupos?\s+de\s+apoyo(?:\s+[\w+]+)?)", re.I),
    re.compile(r"\b(?:counsel(?:l)?ing|social\s+work|psychology|nursing|education|youth\s+work)\s+(?:and|or|&)\s+"
               r"(?P<t>mental[\s-]+health)\b", re.I),
    re.compile(r"\b(?:career|careers|job|jobs|work|working|degree|studies|study|course|major|internship|"
               r"interested|interest)\s+(?:\w+\s+){0,2}?(?:in|into)\s+(?P<t>mental[\s-]+health|politics)\b", re.I),
    # Politics as a field to go into ("getting into local politics"); "blogging about politics" is above. Politics
    # with an opinion ("I support conservative politics", "my politics") keeps its word and stays refused.
    re.compile(r"\b(?:get|gets|getting|got|go|goes|going|went)\s+into\s+(?:local\s+|national\s+|city\s+)?"
               r"(?P<t>politics)\b", re.I),
    # Something made for a church (a commission, a sale): "a stained glass window made for a local church".
    re.compile(r"\b(?:made|painted|built|designed|created|sold|commissioned|decorated|restored|played|performed)\s+"
               r"(?:\w+\s+){0,4}?(?:for|at|in)\s+(?:a|the)\s+(?:local\s+|nearby\s+|small\s+)?(?P<t>church)\b", re.I),
    # Spanish: "una carrera solidaria por la salud mental", "el mercadillo de la iglesia", "meterme en política".
    re.compile(rf"\b(?:{_THING_ES})\s+(?:\w+\s+){{0,2}}?(?:de|del|por|sobre|contra|para|en)\s+"
               rf"(?:la\s+|el\s+|los\s+|las\s+)?(?P<t>{_TOPIC_ES})\b", re.I),
    re.compile(r"\b(?:exposici[oó]n|desfile|centro|evento|fiesta|asociaci[oó]n|programa|charla|taller|colectivo|"
               r"festival|semana|mes|d[ií]a)\s+(?P<t>lgtb\w*|lgbt\w*|trans)\b", re.I),
    re.compile(r"\b(?P<t>pol[ií]tica)\s+(?=(?:local|municipal|nacional|auton[oó]mica)\b)", re.I),
    re.compile(r"\b(?:meterme|meterse|entrar|dedicarme|dedicarse|interesa|interesan|escribo|escribir|hablar)\s+"
               r"(?:\w+\s+)?(?:en|de|sobre)\s+(?P<t>pol[ií]tica)\b", re.I),
    # A job in health care: "trabajo de enfermera", "soy médico", "I work at the hospital".
    re.compile(r"\b(?:trabajo|trabaja|trabajaba|curro|soy|es|estudio|estudia)\s+(?:de\s+|como\s+)?(?:un\s+|una\s+)?"
               r"(?P<t>enfermer[oa]s?|m[eé]dic[oa]s?|medicina|enfermer[ií]a|psic[oó]log[oa]s?|psicolog[ií]a|"
               r"psiquiatra|terapeuta)\b", re.I),
    # Studying it: "applying to study medicine at Edinburgh", "is doing a nursing degree", "estudia Medicina".
    re.compile(r"\b(?:study|studies|studying|studied|read|reads|reading|estudiar|estudiando|estudia|estudio|hacer|hace|"
               r"haciendo|empezado|empieza|doing|do|does|start|starts|starting|started)\s+(?:a\s+)?"
               r"(?P<t>medicine|medical|nursing|enfermer[ií]a|medicina)\b(?:\s+(?:degree|school|course))?", re.I),
    re.compile(r"\b(?:work|works|working|worked|job|trabajo|trabaja|trabajar|trabajando)\s+(?:\w+\s+){0,3}?(?:at|in|en)\s+"
               r"(?:the\s+|a\s+|el\s+|un\s+)?(?:\w+\s+)?(?P<t>hospital)\b", re.I),
]
# Possessives put the protected word on a person ("my mental health", "mi iglesia"): never masked.
_OWNED = re.compile(r"\b(?:my|our|his|her|their|your|mi|mis|su|sus|tu|tus|nuestr[oa]s?)\s*$", re.I)


# An animal's health is no one's personal data: what the vet said of the dog ("el veterinario dice que es alérgico
# al pollo", "the vet says she needs a grain-free diet"), told with no person in it.
_THE_VET = re.compile(r"\b(?:el|la|our|the|my|mi|nuestr[oa])\s+(?:veterinari[oa]|vet)\b", re.I)
_A_PERSON = re.compile(r"\b(?:soy|estoy|i'm|i am|im|my\s+(?:son|daughter|wife|husband|partner|kid|mum|mom|dad|brother|"
                       r"sister)|mi\s+(?:hij[oa]|mujer|marido|pareja|madre|padre|herman[oa]))\b", re.I)


def without_topic_mentions(text: str) -> str:
    """The text without the protected words that only name a cause, a field or an event (see the module); nothing
    of a sentence on what the vet said of an animal."""
    if _THE_VET.search(text or "") and not _A_PERSON.search(text or ""):
        return ""
    out = text or ""
    for _ in range(3):  # a phrase may hide another ("an LGBTQ+ youth center for trans youth")
        before = out
        for pattern in _PATTERNS:
            out = _masked(pattern, out)
        if out == before:
            break
    return out


def _masked(pattern: re.Pattern[str], text: str) -> str:
    parts, pos = [], 0
    for m in pattern.finditer(text):
        start, end = m.span("t") if m.groupdict().get("t") is not None else (None, None)
        if start is None or _OWNED.search(text[:start]):
            continue
        parts += [text[pos:start]]
        pos = end
    if not parts:
        return text
    parts.append(text[pos:])
    return re.sub(r"\s{2,}", " ", "".join(parts)).strip()


# A passing feeling ("estuve súper nerviosa cuando compartí mi libro", "I was so stressed before the fair") tells of
# nobody's health; a condition does ("tengo ansiedad", "I suffer from anxiety", "nerviosa por la operación": the
# operation stays).
_PASSING_FEELING = re.compile(r"(?i)\b(?:nervios[oa]s?|nerviosísim[oa]s?|nervous|stressed|estresad[oa]s?|"
                              r"agobiad[oa]s?|overwhelmed|worried|preocupad[oa]s?)\b")


def without_passing_mentions(text: str) -> str:
    """The text as the gate judges it for special categories: without the protected words that only name a cause,
    a field or an event, and without passing feelings."""
    return _PASSING_FEELING.sub(" ", without_topic_mentions(text))


def names_topic_only(text: str) -> bool:
    """The text mentions a protected topic only as a cause, field or event: masking changes it."""
    return without_topic_mentions(text) != (text or "")
