"""Rules for facts about the person, in Spanish and English: name, tone, language, family, pets, job and
employer, home and moves, hobbies and instruments, diet and food, plans and dated events."""
from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterator

from memory_core.backends.local_extractor.found import Found
from memory_core.backends.local_extractor.names import name_at
from memory_core.backends.local_extractor.text import Sentence, clean_value, fold, is_english
from memory_core.domain.dates import DAY_WORDS, MONTH_WORD, day_of_year, find_date, span_until

_NAME_CUES = [
    (re.compile(r"\b(?:me llamo|mi nombre es|my name is|my name's|mi nombre completo es)\s+"), True),
    (re.compile(r"\b(?:llamame|llameme|puedes llamarme|me puedes llamar|prefiero que me llames|llamadme|"
                r"call me|you can call me|please call me)\s+"), True),
    (re.compile(r"(?:^|[,.]\s*)(?:hola,?\s+)?(?:soy)\s+"), False),
]


def _rule_name(s: Sentence) -> Iterator[Found]:
    for regex, strong in _NAME_CUES:
        m = regex.search(s.low)
        if m and not s.negated(m.start()):
            name = name_at(s, m.end(), strong)
            if name:
                yield Found("nombre", name, "self", m.start(), imperative=True)
                return


_TONE = re.compile(r"\b(?:tratame|trateme|tratadme|hablame|hableme|llamame|dirigete a mi|dirijase a mi|"
                   r"puedes tratarme|prefiero que me trates|prefiero que me hables|me puedes tratar|trates|"
                   r"hables)\s+(?:siempre\s+)?de\s+(?P<v>tu|usted)\b")
_TUTEO = re.compile(r"\btute(?:ame|arme|arnos|a|es)\b")
_TONE_EN = re.compile(r"\b(?:be|talk to me|speak to me|write to me|address me|talk|speak|write)\s+(?:more\s+)?"
                      r"(?P<v>informal|informally|casual|casually|formal|formally)\b")


def _rule_tone(s: Sentence) -> Iterator[Found]:
    m = _TONE.search(s.low)
    if m:
        value = "tú" if m.group("v") == "tu" else "usted"
        if s.negated(m.start()):  # "no me hables de usted" asks for the other one
            value = "usted" if value == "tú" else "tú"
        yield Found("tono", value, "self", m.start(), imperative=True)
        return
    m = _TUTEO.search(s.low)
    if m:
        yield Found("tono", "usted" if s.negated(m.start()) else "tú", "self", m.start(), imperative=True)
        return
    m = _TONE_EN.search(s.low)
    if m and not s.negated(m.start()):
        yield Found("tono", "usted" if m.group("v").startswith("formal") else "tú", "self", m.start(), imperative=True)


# How the writer wants answers ("keep it short please, no emojis", "sé breve y sin emojis"): one value, both wishes in it.
_SHORT = re.compile(r"\b(?:keep (?:it|them|things|your (?:answers|replies|messages))\s+(?:short|brief)|be (?:brief|concise)|"
                    r"short (?:answers|replies|messages)|se (?:breve|concis[oa])|(?:respuestas|mensajes) (?:cortas|cortos|"
                    r"breves)|(?:contestame|respondeme|escribeme) (?:corto|breve))\b")
_NO_EMOJIS = re.compile(r"(?:^|,\s*|\b(?:and|y|please|porfa|por favor)\s+)(?:no|sin|without|ni|nada de)\s+"
                        r"(?:(?:usar|poner|use|using)\s+)?emojis?\b|\b(?:don'?t|never|no)\s+(?:use|uses|usar|pongas)\s+"
                        r"emojis?\b")


# Answers wanted long: "I'd prefer fuller explanations, with worked examples", "explícamelo todo con más detalle".
_FULLER = re.compile(r"\b(?:fuller|longer|more detailed|in-depth|detailed)\s+(?:explanations|answers|replies|responses)|"
                     r"\b(?:more|in)\s+detail\b|\brespuestas\s+(?:mas\s+)?(?:largas|detalladas|completas)|"
                     r"\bcon\s+mas\s+detalle|\bexplicaciones\s+(?:mas\s+)?(?:largas|detalladas|completas)")


def _rule_answer_style(s: Sentence) -> Iterator[Found]:
    short, bare = _SHORT.search(s.low), _NO_EMOJIS.search(s.low)
    fuller = None if short else _FULLER.search(s.low)
    if not short and not bare and not fuller:
        return
    english = is_english(s.text)
    wishes = ([("short" if english else "breve")] if short else []) + \
        ([("detailed" if english else "detalladas")] if fuller else []) + \
        ([("no emojis" if english else "sin emojis")] if bare else [])
    yield Found("estilo_respuesta", ", ".join(wishes), "self", min(m.start() for m in (short, bare, fuller) if m),
                imperative=True)


LANGUAGES = {"ingles": "inglés", "espanol": "español", "castellano": "español", "catalan": "catalán",
              "gallego": "gallego", "euskera": "euskera", "frances": "francés", "aleman": "alemán",
              "portugues": "portugués", "italiano": "italiano", "english": "inglés", "spanish": "español",
              "french": "francés", "german": "alemán", "portuguese": "portugués",
              "italian": "italiano"}
_LANGUAGE = re.compile(r"\b(?:hablame|escribeme|respondeme|contestame|habla|escribe|responde|prefiero hablar|"
                       r"reply|answer|write|talk|speak|respond)(?: to me| me)?\s+(?:siempre\s+|always\s+)?"
                       r"(?:en|in)\s+(?P<v>" + "|".join(LANGUAGES) + r")\b")


def _rule_language(s: Sentence) -> Iterator[Found]:
    m = _LANGUAGE.search(s.low)
    if m and not s.negated(m.start()):
        yield Found("idioma", LANGUAGES[m.group("v")], "self", m.start(), imperative=True)


_RELATIVES = {"hijo": "hijo", "hija": "hija", "hijos": "hijos", "hijas": "hijos", "mujer": "pareja",
              "esposa": "pareja", "marido": "pareja", "esposo": "pareja", "pareja": "pareja", "novia": "pareja",
              "novio": "pareja", "madre": "madre", "padre": "padre", "hermano": "hermano", "hermana": "hermana",
              "son": "hijo", "daughter": "hija", "sons": "hijos", "daughters": "hijos", "children": "hijos",
              "kids": "hijos", "wife": "pareja", "husband": "pareja", "partner": "pareja", "girlfriend": "pareja",
              "boyfriend": "pareja", "mother": "madre", "mum": "madre", "mom": "madre", "father": "padre",
              "dad": "padre", "brother": "hermano", "sister": "hermana", "socio": "socio", "socia": "socio",
              "business partner": "socio", "crios": "hijos", "crias": "hijos", "ninos": "hijos",
              "ninas": "hijos", "peques": "hijos", "nenes": "hijos", "chavales": "hijos",
              "hermanos": "hermanos", "hermanas": "hermanos", "brothers": "hermanos", "sisters": "hermanos",
              "siblings": "hermanos"}
# Several relatives named at once ("tengo dos críos, Pau y Marina"): one fact per member, under the
# singular relation when the word says it (hijas -> hija_<name>), else the plural's (hijos_<name>).
_MEMBER_OF = {"hijas": "hija", "daughters": "hija", "sons": "hijo", "hermanas": "hermana", "sisters": "hermana",
              "brothers": "hermano"}
_PLURAL = {"hijos", "hermanos"}
# An enumeration of capitalised names: "Pau y Marina", "Leo, Alba and Max".
_NAMES_LIST = re.compile(r"\s*([A-ZÁÉÍÓÚÑ][\w'\-]+(?:\s*,\s*[A-ZÁÉÍÓÚÑ][\w'\-]+)*,?\s+(?:y|and|e|&)\s+[A-ZÁÉÍÓÚÑ][\w'\-]+)")


def enumerated(text: str) -> list[str]:
    """The names of an enumeration at the start of `text` ("Pau y Marina" -> ["Pau", "Marina"]), or []."""
    m = _NAMES_LIST.match(text)
    if not m:
        return []
    return [n for n in re.split(r"\s*,\s*|\s+(?:y|and|e|&)\s+", m.group(1).strip()) if n]


def member_attribute(relation: str, name: str) -> str:
    """The attribute of one named member of a plural relation: hija_lucia, hijos_pau, hermano_luis."""
    base = _MEMBER_OF.get(relation, _RELATIVES[relation])
    return f"{base}_{re.sub(r'[^a-z0-9]+', '_', fold(name)).strip('_')}"


_RELATIVE = "|".join(sorted(_RELATIVES, key=len, reverse=True))
_REL = f"(?P<rel>{_RELATIVE})"
_FAMILY = [
    (re.compile(rf"\b(?:mi|mis|my)\s+{_REL}(?:\s+(?:mayor|menor|pequeno|pequena|pequenos|little|older|younger|eldest|youngest))?(?:(?:'s|s'|')\s+names?\s+(?:is|are)|\s+se llaman?|\s+is called|\s+is named|\s+are called)\s+"), True),
    (re.compile(rf"\b(?:tengo|tenemos|i have|we have|i've got|we've got)\s+(?:un|una|dos|tres|cuatro|cinco|a|an|two|three|four|five|\d)\s+"
                rf"(?:little\s+|young\s+|pequen[oa]s\s+)?{_REL}\s*(?:que se llaman?|llamad[oa]s?|called|named|,|:)\s*"), True),
    (re.compile(rf"\b(?:mi|mis|my)\s+{_REL}(?:\s+(?:mayor|menor|pequeno|pequena|little|older|younger))?(?:\s+(?:es|son|is|are)\s+|\s*,\s*|\s+)"), False),
]


# A new partner ("I'm seeing someone new, Alex", "estoy saliendo con Iker") and a break-up ("Tom and I broke up",
# "lo he dejado con Sergio"): the partner's new value, or none.
_NEW_PARTNER = re.compile(r"\b(?:i'm|i am|im)\s+(?:now\s+)?(?:seeing|dating|going out with)\s+(?:someone(?:\s+new)?|"
                          r"a\s+(?:new\s+)?(?:guy|girl|man|woman|lad|bloke))?\s*,?\s*(?:called\s+|named\s+)?|"
                          r"\b(?:estoy|ahora estoy)\s+saliendo\s+con\s+(?:(?:un|una)\s+(?:chico|chica)\s+(?:que se llama\s+|,\s*)?)?|"
                          r"\b(?:mi|my)\s+(?:new|nuev[oa])\s+(?:novi[oa]|pareja|partner|boyfriend|girlfriend)\s+"
                          r"(?:se llama|es|is called|is)\s+")
_BROKE_UP = re.compile(r"\b(?:broke up|split up|lo\s+he\s+dejado\s+con|nos\s+hemos\s+separado|nos\s+separamos|"
                       r"(?:hemos\s+roto|rompimos|lo\s+hemos\s+dejado)(?=\s*(?:$|[,.;!]|y\b|hace\b|el\s+mes|la\s+semana))|"
                       r"he\s+roto\s+con|"
                       # "irene y yo lo dejamos en verano": the writer and someone, said so
                       r"(?<=\by yo )(?:lo\s+)?(?:dejamos|rompimos|nos\s+separamos|lo\s+hemos\s+dejado|hemos\s+roto)"
                       r"(?=\s*(?:$|[,.;!]|y\b|hace\b|(?:el|la|en|este|esta)\s+(?:pasad[oa]\s+)?(?:mes|semana|ano|verano|"
                       r"invierno|primavera|otono|navidad))))\b")


def _rule_partner(s: Sentence) -> Iterator[Found]:
    m = _NEW_PARTNER.search(s.low)
    name = name_at(s, m.end(), strong=False) if m and not s.negated(m.start()) else None
    if name:
        yield Found("pareja", name, "self", m.start())
        return
    m = _BROKE_UP.search(s.low)
    if m and not s.negated(m.start()) and not re.search(r"\b(?:they|ellos|ellas|he|she|my (?:sister|brother|friend)|"
                                                        r"mi (?:hermana|hermano|amig[oa]))\b", s.low[: m.start()]):
        yield Found("pareja", "none now (broke up)" if is_english(s.text) else "ninguna ahora (lo han dejado)", "self",
                    m.start())


def _rule_family(s: Sentence) -> Iterator[Found]:
    for regex, strong in _FAMILY:
        m = regex.search(s.low)
        if not m or s.negated(m.start()):
            continue
        attribute = _RELATIVES[m.group("rel")]
        if attribute in _PLURAL:
            names = enumerated(s.text[m.end():])
            for name in names:
                yield Found(member_attribute(m.group("rel"), name), name, "self", m.start())
            if names:
                return
            continue
        name = name_at(s, m.end(), strong)
        if name:
            # A business partner belongs to the company, not to the person's family.
            yield Found(attribute, name, "org" if attribute == "socio" else "self", m.start())
            return



_PETS = {"perro": "perro", "perra": "perro", "perrito": "perro", "perrita": "perro", "cachorro": "perro",
         "gato": "gato", "gata": "gato", "gatito": "gato", "gatita": "gato", "conejo": "conejo", "loro": "loro",
         "tortuga": "tortuga", "caballo": "caballo", "hamster": "hámster", "pez": "pez", "peces": "pez",
         "dog": "dog", "puppy": "dog", "pup": "dog", "doggo": "dog", "cat": "cat", "kitty": "cat", "kitten": "cat",
         "rabbit": "rabbit", "bunny": "rabbit", "parrot": "parrot", "turtle": "turtle", "horse": "horse",
         "fish": "fish", "guinea pig": "guinea pig", "snake": "snake", "bird": "bird"}
_PET = "(?P<pet>" + "|".join(sorted(_PETS, key=len, reverse=True)) + ")"
# The attribute families of a relative or a pet a rule reads by name alone (hijo, hija_lucia, mascota_coco...).
KIN_FAMILIES = frozenset({"hijo", "hija", "hijos", "hermano", "hermana", "pareja", "esposa", "esposo", "marido",
                          "mujer", "madre", "padre", "novio", "novia", "mascota"})
# The words that only say whom a relative or a pet is to the writer ("I have two kids, Pau and Marina", "tengo un
# perro"): they tell nothing more of them.
KIN_WORDS = " ".join([*_RELATIVES, *_PETS, "two", "three", "four", "dos", "tres", "cuatro", "have", "got", "tengo",
                      "tenemos", "called", "named", "llama", "llaman"])
_PET_OWN = re.compile(
    rf"\b(?:(?:tengo|tenemos|he adoptado|hemos adoptado|adopte|adoptamos|nos hemos traido|me he comprado)\s+"
    rf"(?:un|una|dos|tres)?\s*|(?:mi|mis|nuestro|nuestra|nuestros|my|our)\s+(?:new\s+|nuevo\s+|nueva\s+)?|"
    rf"(?:i|we)\s+(?:just\s+|finally\s+)?(?:have|got|adopted|rescued|bought|have got|'ve got)\s+(?:a\s+|an\s+|two\s+|"
    rf"a new\s+|another\s+)?(?:little\s+|new\s+)?|(?:i'?ve|we'?ve)\s+(?:got|adopted)\s+(?:a\s+|an\s+)?)"
    rf"{_PET}s?\b")
_PET_NAME = re.compile(r"\s*(?:'s name is|se llama|que se llama|llamad[oa]|called|named|,)?\s*")


def _rule_pets(s: Sentence) -> Iterator[Found]:
    """Pets, with their names when said: "tengo un perro que se llama Max", "I have a pup and a kitty"."""
    for m in _PET_OWN.finditer(s.low):
        if s.negated(m.start()):
            continue
        kind = _PETS[m.group("pet")]
        cue = _PET_NAME.match(s.text, m.end())
        names = enumerated(s.text[cue.end():]) if cue and cue.group().strip() else []
        if names:  # "tengo dos perros, Luna y Max": one pet each
            for name in names:
                yield Found(f"mascota_{fold(name).replace(' ', '_')}", f"{kind} {name}", "self", m.start())
            continue
        name = name_at(s, cue.end(), strong=False) if cue and cue.group().strip() else None
        value = f"{kind} {name}" if name else kind
        yield Found(f"mascota_{fold(name or kind).replace(' ', '_')}", value, "self", m.start())
    for m in re.finditer(rf"\b(?:and|y) (?:a|an|un|una)\s+(?:little\s+)?{_PET}\b", s.low):
        if _PET_OWN.search(s.low[: m.start()]):  # "a pup and a kitty", "a dog named Luna and a cat named Oliver"
            kind = _PETS[m.group("pet")]
            cue = _PET_NAME.match(s.text, m.end())
            name = name_at(s, cue.end(), strong=False) if cue and cue.group().strip() else None
            value = f"{kind} {name}" if name else kind
            yield Found(f"mascota_{fold(name or kind).replace(' ', '_')}", value, "self", m.start())


_ROLE = r"(?P<role>[a-z][a-z -]{2,40}?)"
# When a job changed is not part of the job ("lost my job as a banker yesterday").
_WHEN = re.compile(r"\s+(?:yesterday|today|last|this|recently|ayer|hoy|el mes|la semana|hace|recientemente)\b.*$")
_JOB = [
    # A job left first: "perdí mi trabajo de banquero" says what the person no longer is.
    (re.compile(rf"\b(?:lost|quit|left)\s+my\s+job\s+as\s+(?:a|an)\s+{_ROLE}(?=[,.;!]|\.\.\.|\s+(?:at|in|and|but)\b|$)"), "trabajo_anterior"),
    (re.compile(rf"\b(?:he perdido|perdi|deje|he dejado)\s+(?:mi\s+)?(?:trabajo|empleo|curro)\s+(?:de|como)\s+{_ROLE}(?=[,.;!]|\s+(?:en|y|pero)\b|$)"), "trabajo_anterior"),
    (re.compile(rf"\b(?:trabajo|curro|estoy trabajando)\s+(?:de|como)\s+{_ROLE}(?=\s+(?:en|para|desde)\b|[,.;!]|$)"), "trabajo"),
    (re.compile(rf"\bi(?:'m| am)?\s+(?:now\s+)?(?:work|working)\s+as\s+(?:a|an)\s+{_ROLE}(?=\s+(?:at|for|in|since)\b|[,.;!]|$)"), "trabajo"),
    (re.compile(rf"\b(?:i got|i've got|i have|i landed|i started)\s+(?:a\s+)?(?:new\s+)?job\s+as\s+(?:a|an)\s+{_ROLE}(?=\s+(?:at|for|in)\b|[,.;!]|$)"), "trabajo"),
    (re.compile(rf"\bmy job is\s+(?:a|an)?\s*{_ROLE}(?=[,.;!]|$)"), "trabajo"),
    # A new job from a day: "starting on the 2nd of June as practice nurse at a GP surgery", "empiezo el lunes de
    # administrativa en una gestoría"
    (re.compile(rf"\b(?:i'm starting|starting|i start|i started|empiezo|empece|he empezado|entro)\s+(?:on\s+|el\s+)?"
                rf"(?:[\w ]{{1,25}}?\s+)?(?:as|como|de)\s+(?:(?:a|an|un|una)\s+)?{_ROLE}(?=\s+(?:at|in|for|en|para)\b)"),
     "trabajo"),
]
_EMPLOYER = re.compile(r"\b(?:trabajo|curro|estoy trabajando|work|i work|i'm working|i am working|got a job|"
                       r"got a new job|started working|empece a trabajar|me han contratado|i got hired|"
                       r"(?:he|hemos) empezado a trabajar|(?:i\s+)?started (?:a\s+)?(?:new\s+)?job|"
                       r"(?:i\s+)?(?:just\s+)?started at|(?:i've|i have) started (?:a\s+)?(?:new\s+)?job)\s+"
                       r"(?:\w+\s+){0,4}?(?:en|para|at|for)\s+(?:el\s+|la\s+|the\s+)?")
# A job and where it is done: "I'm a paralegal at Whitcombe Law", "soy administrativa en Seguros Ocaso"; not what
# someone is somewhere else ("a regular at The Crown", "socia en el club").
_AT_WORK = re.compile(r"(?:^|[,;]\s*|\b(?:and|y|now|ahora)\s+)(?:i'm|i am|soy)\s+(?:now\s+|ahora\s+)?(?:(?:a|an|un|una)\s+)?"
                      r"(?!(?:a|an|un|una|regular|member|customer|client|cliente|clienta|soci[oa]|guest|fan|patient|paciente|student|"
                      r"estudiante|alumn[oa]|volunteer|voluntari[oa]|new|nuev[oa])\b)"
                      r"(?P<role>[a-z][a-z -]{2,40}?)\s+(?:at|for|en|para)\s+(?:el\s+|la\s+|the\s+)?")
_OWN_BUSINESS = re.compile(r"\b(?:starting|started|start|opening|opened|launching|launched|run|running)\s+"
                           r"(?:my|our)\s+own\s+(?:business|company|shop|store|bakery|restaurant|studio)|"
                           r"\b(?:montando|monte|he montado|abriendo|abri|he abierto)\s+(?:mi|nuestro|nuestra)\s+"
                           r"(?:propi[oa]\s+)?(?:negocio|empresa|tienda)(?:\s+propi[oa])?")


def _rule_job(s: Sentence) -> Iterator[Found]:
    """Job and employer: "trabajo de enfermera en el Clínico", "lost my job as a banker"."""
    for regex, attribute in _JOB:
        m = regex.search(s.low)
        if m and not s.negated(m.start()):
            role = clean_value(_WHEN.sub("", s.text[m.start("role"): m.end("role")]))
            if role and role.split()[0].lower() not in ("un", "una", "the"):
                yield Found(attribute, role, "self", m.start())
                break
    m = _EMPLOYER.search(s.low)
    at_work = None if m else _AT_WORK.search(s.low)
    m = m or at_work
    if m and not s.negated(m.start()):
        name = name_at(s, m.end(), strong=False)
        if name:
            if at_work is not None:
                yield Found("trabajo", clean_value(s.text[m.start("role"): m.end("role")]), "self", m.start())
            yield Found("empleador", name, "self", m.start())
    m = _OWN_BUSINESS.search(s.low)
    if m and not s.negated(m.start()):
        english = re.match(r"[a-z]+ (?:my|our) own", m.group())
        yield Found("trabajo", "own business" if english else "negocio propio", "self", m.start())


_HOME = [
    re.compile(r"\b(?:vivo|vivimos|i live|we live|i'm living|we're living|i am living|we are living)\s+(?:now\s+|ahora\s+)?"
               r"(?:en|in)\s+"),
    re.compile(r"\b(?:me he mudado|nos hemos mudado|me mude|nos mudamos|me mudo|nos mudamos|i moved|we moved|"
               r"i've moved|we've moved|i'm moving|we're moving|just moved|moving|^(?:finally\s+)?moved)\s+"
               # Only a manner or where from between the move and the place: "we moved the warehouse to Paterna"
               # moved the business's warehouse, not the person.
               r"(?:(?:back|over|out|away|recently|finally|again|here|there|house|ya|finalmente|otra vez|de nuevo|"
               r"de casa|de piso|(?:de|desde|from)\s+[a-z]+(?:\s+[a-z]+)?)\s+){0,2}?(?:a|to)\s+"),
    # In the new home: "ya estoy en el piso nuevo de Getafe", "we're in the new house in Leeds now".
    re.compile(r"(?:\b(?:ya\s+)?(?:estoy|estamos|vivo|vivimos|i'm|we're|i am|we are)\s+(?:ya\s+|now\s+|finally\s+)?|"
               r"^(?:finally|por fin|ya)\s+)(?:en|in)\s+"
               r"(?:el|la|mi|nuestr[oa]|the|my|our)\s+(?:(?:piso|casa|apartamento|flat|house|place|home)\s+nuev[oa]|"
               r"new\s+(?:flat|house|place|home))\s+(?:de|en|in)\s+"),
]
_MOVE_DONE = re.compile(r"\b(?:finished|finally finished|done|completed)\s+(?:moving|the move)|\b(?:hemos|he)\s+"
                        r"(?:terminado|acabado)\s+(?:la|con la)\s+mudanza|\bmoved (?:house|in)\b|\bnos hemos mudado\b$")


def _rule_home(s: Sentence) -> Iterator[Found]:
    """Where the person lives and their moves: "vivo en Logroño", "we finally finished moving"."""
    for regex in _HOME:
        m = regex.search(s.low)
        if m and not s.negated(m.start()):
            place = re.match(r"([A-ZÁÉÍÓÚÑ][\w'\-]*(?:\s+(?:de\s+|del\s+)?[A-ZÁÉÍÓÚÑ][\w'\-]*){0,3})", s.text[m.end():])
            # A street and number is an address (the address rule's): a place is a town or a region.
            after = fold(s.text[m.end():])
            if place and not re.match(r"[^,;.]{0,25}?\b(?:calle|c/|avda|avenida|plaza|paseo|street|road|avenue)\b|"
                                      r"[^\s,]+\s*,?\s*\d", after):
                yield Found("residencia", place.group(1), "self", m.start())
                return
    m = _MOVE_DONE.search(s.low)
    if m and not s.negated(m.start()):
        yield Found("mudanza", clean_value(s.text), "self", m.start())


_INSTRUMENTS = {"guitarra": "guitarra", "piano": "piano", "violin": "violín", "bateria": "batería", "bajo": "bajo",
                "saxofon": "saxofón", "saxo": "saxofón", "flauta": "flauta", "trompeta": "trompeta", "ukelele": "ukelele",
                "violonchelo": "violonchelo", "guitar": "guitar", "drums": "drums", "bass": "bass",
                "saxophone": "saxophone", "sax": "saxophone", "flute": "flute", "trumpet": "trumpet",
                "ukulele": "ukulele", "cello": "cello", "clarinet": "clarinet", "clarinete": "clarinete",
                "keyboard": "keyboard", "teclado": "teclado", "harp": "harp", "arpa": "arpa"}
_INSTRUMENT = re.compile(r"\b(?:toco|tocamos|estoy aprendiendo a tocar|aprendo a tocar|i play|i'm learning|i am learning|"
                         r"i've been playing|i started playing|i'm playing|learning to play)\s+(?:el\s+|la\s+|the\s+)?"
                         r"(?P<x>" + "|".join(sorted(_INSTRUMENTS, key=len, reverse=True)) + r")\b")
_HOBBY = [
    re.compile(r"\b(?:mi (?:hobby|aficion|pasion) (?:es|son)|my (?:hobby|hobbies|passion) (?:is|are)|"
               r"i'm (?:really )?into|i am (?:really )?into|i've been (?:really )?into|i got into|"
               r"i (?:really )?(?:love|enjoy|like) to|me encanta|me gusta mucho|me flipa|i (?:really )?(?:love|enjoy))\s+"
               r"(?!(?:it|this|that|them|these|those|lo|la|eso|esto|after|over|under|other|ever)\b)"
               r"(?P<v>[a-z][a-z ]{2,30}?(?:ing|ar|er|ir))(?=\s+(?:and|y|with|con|in|en|on|at|every|los|the|a|my|mi)\b|[,.;!]|$)"),
]


def _rule_hobbies(s: Sentence) -> Iterator[Found]:
    """Instruments and hobbies: "toco la guitarra", "I'm into pottery", "I love painting"."""
    m = _INSTRUMENT.search(s.low)
    if m and not s.negated(m.start()):
        value = _INSTRUMENTS[m.group("x")]
        yield Found(f"instrumento_{fold(value)}", value, "self", m.start())
        return
    for regex in _HOBBY:
        m = regex.search(s.low)
        if m and not s.negated(m.start()):
            found = False
            for value in _activities(s.text[m.start("v"):]) or [clean_value(s.text[m.start("v"): m.end("v")])]:
                key = re.sub(r"[^a-z0-9]+", "_", fold(value)).strip("_")
                if value and key not in _NOT_HOBBIES:
                    found = True
                    yield Found(f"aficion_{key}", value, "self", m.start())
            if found:
                return


# Sports and classes done week after week, and giving them up: "juego al pádel los martes", "voy a clases de cerámica",
# "I do yoga on Mondays"; "ya no voy a yoga", "he dejado las clases de cerámica", "I quit the choir". One fact a
# pastime (pasatiempo_<pastime>): giving it up is its new value, which replaces the one that said they did it.
_PASTIMES = {"futbol": "fútbol", "padel": "pádel", "tenis": "tenis", "baloncesto": "baloncesto", "golf": "golf",
             "yoga": "yoga", "pilates": "pilates", "natacion": "natación", "crossfit": "crossfit", "boxeo": "boxeo",
             "running": "running", "ciclismo": "ciclismo", "escalada": "escalada", "ajedrez": "ajedrez",
             "ceramica": "cerámica", "baile": "baile", "salsa": "salsa", "flamenco": "flamenco", "teatro": "teatro",
             "coro": "coro", "surf": "surf", "esqui": "esquí", "senderismo": "senderismo", "hipica": "hípica",
             "judo": "judo", "karate": "kárate", "zumba": "zumba", "spinning": "spinning", "gimnasio": "gimnasio",
             "gym": "gym", "piscina": "piscina", "voleibol": "voleibol", "rugby": "rugby",
             "football": "football", "soccer": "soccer", "tennis": "tennis", "basketball": "basketball",
             "swimming": "swimming", "boxing": "boxing", "cycling": "cycling", "climbing": "climbing", "chess": "chess",
             "pottery": "pottery", "dance": "dance", "dancing": "dancing", "theatre": "theatre", "theater": "theater",
             "choir": "choir", "surfing": "surfing", "skiing": "skiing", "hiking": "hiking",
             "volleyball": "volleyball", "cricket": "cricket", "badminton": "badminton",
             "squash": "squash", "ping pong": "ping pong"}
_PASTIME = r"(?P<x>" + "|".join(sorted(_PASTIMES, key=len, reverse=True)) + r")\b"
_CLASSES = r"(?:(?:a\s+)?(?:las\s+|la\s+)?clases?\s+de\s+|(?:el|la|al|a la|the|my)\s+)?"
_DOES = re.compile(r"\b(?:juego|jugamos|practico|hago|voy|vamos|estoy apuntad[oa]|me he apuntado|me apunte|i play|we play|"
                   r"i do|i go|i've been going|i started|i take|i joined|i signed up for)\s+(?:a\s+|al\s+|to\s+)?"
                   + _CLASSES + _PASTIME + r"(?!\s+(?:match|partido|final|game|tournament|torneo)\b)")
_GAVE_UP = re.compile(r"\b(?:ya no\s+(?:juego|jugamos|practico|hago|voy|vamos)|(?:lo\s+)?(?:he|hemos)\s+dejado|deje|dejamos|"
                      r"i(?:'ve| have)?\s+(?:quit|gave up|given up|stopped|dropped)|i\s+no longer\s+(?:play|do|go)|"
                      r"i\s+don'?t\s+(?:play|do|go))\s+(?:a\s+|al\s+|to\s+|going\s+to\s+|doing\s+|playing\s+)?"
                      + _CLASSES + _PASTIME)


# Running, said with its verb ("salgo a correr 3 días por semana", "I go running before work") and given up ("ya no
# salgo a correr", "he dejado de correr", "I stopped running"): the pastime "correr" / "running".
_STOPPED_RUNNING = re.compile(r"\b(?:ya no\s+(?:salgo|salimos|voy|vamos)\s+a\s+correr|ya no\s+corro|(?:he|hemos)\s+dejado de "
                              r"(?:salir a )?correr|deje de (?:salir a )?correr|i(?:'ve| have)?\s+(?:stopped|quit|gave up|"
                              r"given up)\s+(?:going\s+)?(?:running|jogging)|i\s+no longer\s+(?:run|jog|go running)|"
                              r"i\s+don'?t\s+(?:run|jog|go running)\s+(?:anymore|any more))\b")
_RUNS = re.compile(r"\b(?:salgo|salimos|voy|vamos)\s+a\s+correr|\bcorro\s+(?:los|todos|cada|\d|tres|dos)|"
                   r"\bi\s+(?:go\s+(?:running|jogging|for\s+a\s+run)|run|jog)\s+(?:every|on|\d|three|twice|before|after|"
                   r"most|in the)\b")


def _rule_running(s: Sentence) -> Iterator[Found]:
    m = _STOPPED_RUNNING.search(s.low)
    english = is_english(s.text) or bool(m and m.group().startswith("i"))  # "I stopped running last month"
    if m:
        yield Found(_pastime_attribute("running" if english else "correr"),
                    "running (gave it up)" if english else "correr (lo ha dejado)", "self", m.start())
        return
    m = _RUNS.search(s.low)
    if m and not s.negated(m.start()) and not _once(s.low):
        yield Found(_pastime_attribute("running" if english else "correr"), clean_value(s.text[m.start():]), "self",
                    m.start())


def _rule_pastime(s: Sentence) -> Iterator[Found]:
    m = _GAVE_UP.search(s.low)
    start = 0
    if m and (not m.group().startswith("i don") or re.search(r"\b(?:anymore|any more)\b", s.low[m.end():])):
        x = _PASTIMES[m.group("x")]
        yield Found(_pastime_attribute(x), f"{x} (gave it up)" if is_english(s.text) else f"{x} (lo ha dejado)",
                    "self", m.start())
        start = m.end()  # and what was taken up instead: "he dejado la cerámica, ahora voy a natación"
    m = _DOES.search(s.low, start)
    if m and not s.negated(m.start()) and not _once(s.low):
        x = _PASTIMES[m.group("x")]
        rest = clean_value(s.text[m.end("x"):])
        when = rest if _WEEKLY.match(fold(rest)) else ""
        yield Found(_pastime_attribute(x), f"{x} {when}".strip(), "self", m.start())


def _pastime_attribute(pastime: str) -> str:
    return f"pasatiempo_{fold(pastime).replace(' ', '_')}"


# Once, not week after week: "mañana voy a yoga", "ayer jugué al pádel", "I went climbing last Sunday".
_ONCE = re.compile(r"\b(?:ya|ayer|anoche|manana|hoy|esta tarde|esta noche|el otro dia|yesterday|last|tomorrow|today|"
                   r"tonight|this (?:afternoon|evening|weekend))\b")


def _once(low: str) -> bool:
    """Said of one time; "ya no" (no longer) and "de la mañana" (in the morning) say no such thing."""
    return bool(_ONCE.search(re.sub(r"\b(?:ya no|(?:de|por) la manana)\b", " ", low)))


# When a pastime is done: "los martes", "on Mondays", "every weekend", "dos veces por semana".
_WEEKLY = re.compile(r"^(?:los|todos los|cada|on|every|twice|three times|dos veces|tres veces|una vez)\b[\w\s]{0,30}$")


_NOT_HOBBIES = ("being", "having", "doing", "getting", "seeing", "hear", "hearing", "ser", "estar", "tener", "hacer")
_ACTIVITY = re.compile(r"[a-záéíóúñ]{2,}(?:ing|ar|er|ir)(?:\s+[a-záéíóúñ]{2,}){0,2}$")


def _activities(text: str) -> list[str]:
    """An enumeration of activities ("painting, hiking and reading", "pintar, correr y leer"): each one,
    when there are at least two; [] otherwise."""
    head = re.split(r"[.;!?()\[\]]|\s[-–—]\s|,\s*(?:but|pero|because|porque|since|as|which|que)\b", text, maxsplit=1)[0]
    parts = [clean_value(p) for p in re.split(r"\s*,\s*(?:and\s+|y\s+)?|\s+(?:and|y|e|or|o)\s+", head)]
    out = []
    for part in parts:
        part = re.sub(r"^(?:to|a|also|tambien|también)\s+", "", part)
        if not _ACTIVITY.match(fold(part)) and not _ACTIVITY.match(part.lower()):
            break
        out.append(part)
    return out if len(out) >= 2 else []


_DIETS = {"vegetariano": "vegetariana", "vegetariana": "vegetariana", "vegano": "vegana", "vegana": "vegana",
          "vegetarian": "vegetarian", "vegan": "vegan", "pescetarian": "pescatarian", "pescatarian": "pescatarian",
          "pescetariano": "pescetariana", "pescetariana": "pescetariana", "flexitariano": "flexitariana",
          "flexitariana": "flexitariana", "flexitarian": "flexitarian"}
_DIET_WORD = "|".join(_DIETS)
_DIET = re.compile(r"\b(?:soy|somos|i'm|i am|we're|we are|i've been|i went|i'm going|i've gone|me he hecho|me hice|"
                   r"nos hemos hecho|me he vuelto|i've become|i became|i've turned|i turned)\s+(?:\w+\s+){0,2}?"
                   rf"(?P<d>{_DIET_WORD})\b")
_FOODS = r"(?P<v>carne|pescado|cerdo|gluten|lacteos|marisco|meat|fish|pork|dairy|seafood|red meat|carne roja)"
_NO_EAT = re.compile(r"\b(?:no como|no comemos|i don'?t eat|i do not eat|we don'?t eat|i never eat|nunca como)\s+"
                     + _FOODS + r"\b")
# Eating it again: the same fact (no_come_<food>) with its new value, which replaces "no come carne".
_EAT_AGAIN = re.compile(r"\b(?:(?:he|hemos) vuelto a comer|vuelvo a comer|volvemos a comer|volvi a comer|ya como|"
                        r"i(?:'ve| have)? started eating|i(?:'m| am) eating|i eat|we eat|back to eating|"
                        r"(?:i(?:'ve| have)\s+)?been eating)\s+" + _FOODS +
                        r"\b(?P<again>\s+(?:again|otra vez|de nuevo))?")
# "ya no soy vegetariana", "I'm not vegan anymore", "I'm no longer vegetarian".
_DIET_GIVEN_UP = re.compile(rf"\b(?:ya no soy|ya no somos|i'm no longer|i am no longer|we're no longer)\s+(?P<d>"
                            rf"{_DIET_WORD})\b|\b(?:i'm not|i am not|we're not)\s+(?P<d2>{_DIET_WORD})\s+"
                            r"(?:anymore|any more)\b")
_FAVOURITE_FOOD = re.compile(r"\b(?:mi comida favorita (?:es|son)|mi plato favorito es|my favou?rite (?:food|dish|meal) is|"
                             r"my favou?rite foods are)\s+(?P<v>[^,.;!?]{2,40})")


def _rule_diet(s: Sentence) -> Iterator[Found]:
    """Diet and food: "soy vegetariana", "I don't eat pork", "my favourite food is sushi"."""
    m = _DIET.search(s.low)
    given_up = _DIET_GIVEN_UP.search(s.low)
    if given_up:
        diet = _DIETS[given_up.group("d") or given_up.group("d2")]
        yield Found("dieta", f"ya no {diet}" if s.low.startswith("ya") else f"no longer {diet}", "self",
                    given_up.start())
    elif m and not s.negated(m.start()):
        yield Found("dieta", _DIETS[m.group("d")], "self", m.start())
    m = _NO_EAT.search(s.low)
    again = _EAT_AGAIN.search(s.low)
    if m:
        yield Found(f"no_come_{fold(m.group('v')).replace(' ', '_')}", f"no come {m.group('v')}"
                    if s.low.startswith(("no", "nunca")) else f"doesn't eat {m.group('v')}", "self", m.start())
    elif again and (again.group("again") or not again.group().startswith(("i eat", "we eat", "i'm eating",
                                                                          "i am eating"))):
        # "I eat meat" alone says no change; "again", "he vuelto a", "ya como" do.
        food = again.group("v")
        english = again.group().startswith(("i", "we", "back", "been"))
        yield Found(f"no_come_{fold(food).replace(' ', '_')}", f"eats {food} again" if english
                    else f"vuelve a comer {food}", "self", again.start())
        if fold(food) in ("carne", "meat"):
            # Meat again ends a diet without it (vegetarian, pescatarian...): the diet's new value.
            yield Found("dieta", "omnivore" if english else "omnívora", "self", again.start())
        elif fold(food) in ("pescado", "fish") and not re.match(r"\s*(?:,|y|and|&)\s*(?:carne|meat)\b",
                                                                s.low[again.end():]):
            # Fish again, still no meat ("he vuelto a comer pescado, carne sigo sin comer"): pescatarian.
            yield Found("dieta", "pescatarian" if english else "pescetariana", "self", again.start())
    m = _FAVOURITE_FOOD.search(s.low)
    if m and not s.negated(m.start()):
        yield Found("comida_favorita", clean_value(s.text[m.start("v"): m.end("v")]), "self", m.start())


_EVENT_NOUNS = (r"reunion|reuniones|cita|viaje|vacaciones|feria|congreso|evento|comida|cena|visita|llamada|"
                r"videollamada|formacion|curso|entrega|boda|cumpleanos|inspeccion|auditoria|juicio|"
                r"concierto|clase|taller|partido|fiesta|exposicion|festival|carrera|excursion|"
                r"meeting|appointment|trip|call|dinner|lunch|visit|conference|fair|holiday|holidays|vacation|"
                r"training|course|delivery|wedding|birthday|audit|inspection|trade show|"
                r"concert|class|workshop|game|match|party|exhibition|festival|race|hike|picnic")
_EVENT_SHAPES = [
    # "estoy en Madrid" -> "en Madrid"
    (re.compile(r"^(?:yo\s+|nosotros\s+)?(?:estoy|estare|estaremos|estamos|voy a estar|vamos a estar|i'm|i am|"
                r"i'll be|i will be|we're|we are|we'll be|we will be)\s+(?=(?:en|fuera|de viaje|de vacaciones|"
                r"in|at|away|out|on holiday|on vacation|travelling|traveling)\b)"), "after"),
    # "tengo reunión con Acme" -> "reunión con Acme"
    (re.compile(rf"^(?:tengo|tenemos|hay|habra|i have|i've got|we have|we've got|i'm having|we're having)\s+"
                rf"(?:una\s+|un\s+|la\s+|el\s+|a\s+|an\s+|the\s+)?(?=(?:{_EVENT_NOUNS})\b)"), "after"),
    # "reunión con Acme"
    (re.compile(rf"^(?:la\s+|el\s+|una\s+|un\s+|a\s+|an\s+|the\s+|my\s+|our\s+|mi\s+|nuestra\s+)?(?=(?:{_EVENT_NOUNS})\b)"), "after"),
    # "me voy a Lisboa", "cerramos por vacaciones": the whole remainder
    (re.compile(r"^(?:me voy|nos vamos|voy|vamos|viajo|viajamos|i'm going|we're going|i'm flying|i fly|i travel|"
                r"we travel)\s+(?:a|de|to|on)\s+(?=[A-Za-zÁÉÍÓÚÑáéíóúñ])"), "whole"),
    (re.compile(r"^(?:cerramos|cierro|cerrado|cerrados|estamos cerrados|we're closed|we are closed|closed)\b"), "whole"),
    # "I'm planning to go camping next month", "vamos a hacer el Camino en junio", "estoy ahorrando para un viaje a
    # Japón en octubre": a plan, the whole sentence
    (re.compile(r"^(?:i'm|i am|we're|we are)\s+(?:planning|going|hoping|about)\s+to\s+|^(?:i|we)\s+(?:plan|want|hope)\s+"
                r"to\s+|^(?:voy|vamos|pienso|pensamos|queremos|quiero)\s+a\s+\w+|^(?:tengo|tenemos) pensado\s+|"
                r"^(?:estoy|estamos)\s+ahorrando\s+para\s+|^(?:i'm|i am|we're|we are)\s+saving\s+(?:up\s+)?for\s+"),
     "whole"),
]
# Told in the past: "fui al concierto el 3 de mayo", "I went to a pottery class last Saturday"; a day a state
# began ("soy jefa de recepción desde el 1 de febrero") is one gone by.
_PAST = re.compile(r"\b(?:ayer|anoche|anteayer|estuve|estuvimos|tuve|tuvimos|fui|fuimos|fue|fueron|hice|hicimos|"
                   r"asisti|asistimos|visite|visitamos|corri|corrimos|was|were|had|went|did|yesterday|ago|"
                   r"last (?:week|weekend|night|month|year|monday|tuesday|wednesday|thursday|friday|saturday|sunday)|"
                   r"this past|la semana pasada|el mes pasado|pasad[oa](?! manana)|hace (?:\d+|un|una|dos|tres) "
                   r"(?:dias?|semanas?|meses?)|desde\s+(?:el\s+)?\d{1,2}\s+de)\b"
                   r"|\b(?:i|we)\s+(?:just\s+|finally\s+|recently\s+|also\s+|even\s+|actually\s+)?"
                   r"(?:[a-z]{2,}ed|ran|saw|took|met|got|made|won|began|bought|found|gave|came|brought|spent|left|"
                   r"caught|heard|read|wrote|sold|built|taught|drove|flew|swam|ate|drank|sang)\b")


# Spanish preterites, which folding would make present tenses ("pagó" -> "pago"): read on the sentence as
# written, accents and all ("nos pagó todo el lunes", "se fue el sábado", "compré", "salí"); the third
# person plural needs no accent ("me pagaron la mitad", "vinieron"). A first person future ("pagaré",
# "iré") and words that only end like a preterite ("aquí", "café", "esquí") are none.
PRETERITE = re.compile(r"\b(?!(?:aqu|all|ah|as|esqu|rub|jabal|maniqu|colibr|bistur|hait|haw|dal|caf|beb|jos|pur|"
                        r"canap|chal|carn|clich|parqu|bid|fianc|r[eé]sum|ros|saut|touch|pass|prot[eé]g|expos)[íé]\b)"
                        r"\w{2,}(?:ó|(?<![aeiáéí]r)é|í)(?!\w)")
_PRETERITE_PLURAL = re.compile(r"\b\w{2,}(?:aron|ieron)\b")


def told_in_past(low: str, text: str = "") -> bool:
    """A (folded) sentence that tells of something done or happened, not of something coming; with the
    sentence as written (`text`), a Spanish one whose verb is a preterite only its accent shows."""
    return bool(_PAST.search(low)) or bool(text) and not is_english(text) and bool(
        PRETERITE.search(text.lower()) or _PRETERITE_PLURAL.search(low))


# Past shapes of an event, naming the kind of event ("fui a una clase de cerámica", "I had a meeting with
# Acme"): the whole remainder, once the date is out. Any other past statement is the gate's to judge.
_DET = r"(?:una\s+|un\s+|la\s+|el\s+|los\s+|las\s+|a\s+|an\s+|the\s+|my\s+|our\s+|mi\s+|nuestra\s+|nuestro\s+|this\s+|that\s+)?"
_PAST_EVENT_SHAPES = [
    re.compile(rf"^(?:(?:i|we)\s+(?:just\s+|finally\s+|also\s+)?(?:went|had|attended|was at|were at)\s+(?:to\s+|on\s+)?"
               rf"|(?:fui|fuimos|estuve|estuvimos|asisti|asistimos|tuve|tuvimos)\s+(?:a\s+|al\s+|en\s+)?)"
               rf"{_DET}(?:\w+\s+){{0,2}}?(?:{_EVENT_NOUNS})\b"),
]
_TIME = re.compile(r"\b(?:a las|sobre las|at|a eso de las)\s+\d{1,2}(?:[:.h]\d{2})?(?:\s*(?:h|am|pm|horas))?\b")


def rule_event(s: Sentence, today: dt.date) -> Iterator[Found]:
    """A dated event: coming ("reunión con Acme el jueves") or told in the past ("fui al concierto el 3 de
    mayo"), its date resolved against the day the message was sent."""
    past = told_in_past(s.low, s.text)
    found = find_date(s.low, today, past=past)
    if not found:
        return
    date, start, end = found
    if date < today and not past:
        return
    # A span of days stays in the value ("cerramos por vacaciones del 1 al 15 de agosto"): the event's date is its
    # first day, and it lasts until its last.
    until = span_until(s.low[start:end], date)
    span = s.text[start:end].strip() if until else ""
    span = span[:1].lower() + span[1:]  # "Del 1 al 15 de agosto cerramos...": it follows the value
    rest = s.text[:start] + " " + s.text[end:]
    for m in reversed(list(_TIME.finditer(fold(rest)))):
        rest = rest[: m.start()] + " " + rest[m.end():]
    rest = re.sub(r"\s+", " ", rest).strip(" ,.;:")
    rest = re.sub(r"^(?:y|que|and|pues|also|también|tambien)\s+", "", rest, flags=re.IGNORECASE)
    # "La inspección es el 15 de abril": with the date out, the verb is left over.
    rest = re.sub(r"\s+(?:es|son|será|sera|serán|seran|is|are|will be)(?:\s+(?:on|el|the))?$", "", rest, flags=re.IGNORECASE)
    low = fold(rest)
    if past:
        value = clean_value(rest)
        value = f"{value} {span}" if span and value else value
        if any(regex.match(low) for regex in _PAST_EVENT_SHAPES) and 3 <= len(value) <= 120:
            yield Found("evento", value[:1].upper() + value[1:], "event", 0, event_date=date, event_until=until)
        return
    for regex, mode in _EVENT_SHAPES:
        m = regex.match(low)
        if not m:
            continue
        value = clean_value(rest if mode == "whole" else rest[m.end():])
        if mode == "whole" and re.match(r"^(?:me voy|nos vamos|voy|vamos|i'm going|we're going)\s+(?:a|to)\s+\w+(?:ar|er|ir)\b", low):
            continue  # "voy a facturar": an intention, not a trip
        value = f"{value} {span}" if span and value else value
        if 3 <= len(value) <= 120:
            yield Found("evento", value, "event", 0, event_date=date, event_until=until)
        return


# A birthday or an anniversary comes back every year: a fact of the person (no event that is past once its day is),
# the day as said. "Mi cumpleaños es el 3 de mayo", "my daughter's birthday is on March 14th", "cumplo años el 9 de
# julio", "nuestro aniversario es el 2 de junio".
_DAY_OF_YEAR = (rf"(?:el\s+(?:dia\s+)?|on\s+(?:the\s+)?|the\s+)?(?P<day>\d{{1,2}}(?:st|nd|rd|th)?\s+(?:de\s+|of\s+)?"
                rf"{MONTH_WORD}|{MONTH_WORD}\s+\d{{1,2}}(?:st|nd|rd|th)?)\b")
_KIN_WORD = f"(?P<kin>{_RELATIVE})"
_YEARLY = re.compile(
    rf"\b(?:(?:mi|my)\s+(?:{_KIN_WORD}(?:'s)?\s+)?(?:cumpleanos|cumple|birthday)|el\s+(?:cumpleanos|cumple)\s+de\s+"
    rf"mi\s+{_KIN_WORD.replace('kin', 'kin2')}|cumplo anos|(?:nuestro|our)\s+(?:wedding\s+)?"
    rf"(?P<a>aniversario|anniversary)(?:\s+de\s+boda)?)\s+(?:es\s+|is\s+|sera\s+|will be\s+)?{_DAY_OF_YEAR}")


# A relative's birthday said after the person's, its noun left out: "..., y el de mi mujer el 3 de febrero", "...,
# and my wife's is on the 3rd of February".
_YEARLY_TOO = re.compile(rf",?\s+(?:y|and)\s+(?:el\s+de\s+mi\s+{_KIN_WORD}|my\s+{_KIN_WORD.replace('kin', 'kin2')}'s)\s+"
                         rf"(?:es\s+|is\s+)?{_DAY_OF_YEAR}")


def _rule_yearly(s: Sentence) -> Iterator[Found]:
    m = _YEARLY.search(s.low)
    if m is None or s.negated(m.start()):
        return
    yield Found(_yearly_attribute(m), clean_value(s.text[m.start("day"):m.end("day")]), "self", m.start())
    too = _YEARLY_TOO.match(s.low, m.end())
    if too and not m.group("a"):
        kin = too.group("kin") or too.group("kin2")
        yield Found(f"cumpleanos_{_RELATIVES[kin]}", clean_value(s.text[too.start("day"):too.end("day")]), "self",
                    too.start())


def _yearly_attribute(m: re.Match) -> str:
    """The fact a match of `_YEARLY` or `_YEARLY_WHOSE` is: an anniversary, a relative's birthday, the person's."""
    kin = m.group("kin") or m.group("kin2")
    return "aniversario" if m.group("a") else f"cumpleanos_{_RELATIVES[kin]}" if kin else "cumpleanos"


# The same day told by when it falls ("hoy es mi cumpleaños", "mañana es el cumple de mi hermana", "it's my birthday
# next Tuesday", "hoy cumplo 41"): the day of the year it resolves to, against the day the message was sent. Not the
# day of a party for it ("la fiesta de mi cumpleaños es el sábado") nor of a gift.
_YEARLY_WHOSE = re.compile(
    rf"\b(?:(?:mi|my)\s+(?:{_KIN_WORD}(?:'s)?\s+)?(?:cumpleanos|cumple|birthday)|(?:el\s+)?(?:cumpleanos|cumple)\s+de\s+"
    rf"mi\s+{_KIN_WORD.replace('kin', 'kin2')}|cumplo\s+\d{{1,3}}\b|i\s+turn\s+\d{{1,3}}\b|(?:nuestro|our)\s+(?:wedding\s+)?"
    rf"(?P<a>aniversario|anniversary))(?!\s+(?:party|dinner|cake|present|gift))")
_FOR_THE_DAY = re.compile(r"\b(?:fiesta|cena|comida|regalo|tarta|celebracion|party|dinner|present|gift)\s+"
                          r"(?:de|del|para|por|for)\s+(?:el\s+)?$")


# What those rules read besides the day ("pasado mañana es el cumple de mi hermana" tells nothing more than its fact).
YEARLY_WORDS = " ".join(["cumpleanos cumple birthday aniversario anniversary wedding boda cumplo turn next proximo "
                         "viene pasado", *_RELATIVES, *DAY_WORDS])


def yearly(attribute: str) -> bool:
    """Whether a fact of `attribute` is a day that comes back every year (a birthday, an anniversary)."""
    return attribute.startswith(("cumpleanos", "aniversario"))


def rule_yearly_on(s: Sentence, today: dt.date) -> Iterator[Found]:
    m = _YEARLY_WHOSE.search(s.low)
    if m is None or s.negated(m.start()) or _FOR_THE_DAY.search(s.low[:m.start()]) or _YEARLY.search(s.low):
        return
    found = find_date(s.low, today, past=told_in_past(s.low, s.text))
    if found is None:
        return
    yield Found(_yearly_attribute(m), day_of_year(found[0], is_english(s.text)), "self", m.start())


PERSONAL_RULES = (_rule_yearly, _rule_pets, _rule_job, _rule_home, _rule_pastime, _rule_running, _rule_hobbies, _rule_diet,
                  _rule_name, _rule_tone, _rule_answer_style, _rule_language, _rule_family, _rule_partner)
