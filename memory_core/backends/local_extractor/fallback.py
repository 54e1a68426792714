"""The local extractor's generic fact: what a message the gate passed says, when no rule read its shape.

The gate already judged the message durable; this keeps its first stated clause as one atomic fact: the
subject resolved as the rules do, the gate's category, an attribute named after the clause's topic
(stable for the same topic, reusing a stored name), the clause as the value (fenced-safe and capped) and
a plain third-person sentence. Questions, hypotheticals, orders and injections still yield nothing.

Long on purpose (~460 lines): the generic fact is one decision (subject, attribute, value, sentence) whose
steps read the same clause; most of the length is the two languages' word lists and pronoun tables.
"""
from __future__ import annotations

import re
import unicodedata

from memory_core.backends.local_extractor.answers import completed_answer, question_of
from memory_core.backends.local_extractor.clauses import REMEMBER_PREFIX, is_order, statement
from memory_core.backends.local_extractor.names import (
    NOT_NAMES,
    Mention,
    dealt_with,
    in_place,
    looks_like_company,
    lower_name_runs,
    name_runs,
    names_a_place,
    names_in,
)
from memory_core.backends.local_extractor.personal import PRETERITE, told_in_past
from memory_core.backends.local_extractor.subjects import SUPPLIER_WORDS, contact_subject, event_sentence
from memory_core.backends.local_extractor.text import (
    Sentence,
    clean_value,
    fold,
    is_english,
    normalise_name,
    split_sentences,
)
from memory_core.backends.local_extractor.units import FEELING_WORDS, PHATIC_WORDS, without_listener_gift
from memory_core.domain.dates import find_date
from memory_core.domain.families import MEMBER_OF, reuse_attribute
from memory_core.domain.ladder import BANK_ATTRIBUTES
from memory_core.domain.model_port import ExtractionContext, Fact
from memory_core.domain.policy import find_bank_account
from memory_core.domain.protected_topics import without_topic_mentions
from memory_core.domain.vocabulary import GATE_CATEGORIES

VALUE_MAX_CHARS = 200
SHORT_ANSWER_WORDS = 6
CONFIDENCE = 0.6

# Lead-ins that frame a statement without being part of it: requests to remember and corrections. The
# bare words ("ojo", "update") only count before a colon or comma: "update my address" is an order.
_LEAD_IN = re.compile(
    r"^(?:(?:oye|vale|ok|bueno|pues|hola|ah|eh|mira|perdona|perdon|sorry|actually|oh)\s*,?\s+)*(?:(?:"
    r"que no se (?:me|te) olvide|no (?:te )?olvides(?: que| de que)?|guardate(?: esto)?|acuerdate(?: de)?|"
    r"apuntate|recuerda(?:lo)?|apunta|anota|ten(?:lo|edlo)? en cuenta|toma nota(?: de)?|para la proxima(?: vez)?|"
    r"(?:para )?que conste|me equivoque|me he equivocado|lo de antes (?:estaba mal|no era asi)|no es asi|"
    r"rectifico|corrijo|(?:please )?(?:remember|note(?: down)?(?: for next time)?|make a note|keep in mind|"
    r"bear in mind)|fyi|for the record|just so you know)(?:\s+(?:que|that|esto|this|de que))?\s*[:,.!-]*\s*"
    r"|(?:importante|ojo|dato|nota|error(?: mio)?|correccion|no,? no|cambio de planes|correction|scratch that|"
    r"my mistake|change of plans?|update|heads up)\s*[:,.!-]+\s*(?:que\s+|that\s+)?)")

# Function words and fillers: never a topic word.
_STOP = set("""
a al algo alli ahi ahora aqui asi aun aunque bien cada casi como con contra cual cuando de del desde donde
dos el ella ellas ellos en entre era es esa ese eso esta estan estar este esto estos estas fue ha hace hacen
han hasta hay la las le les lo los mas me mejor mi mis mucho muy nada ni no nos nuestra nuestro nuestras
nuestros o otra otro para pero poco por porque que quien se sea ser si sin sobre solo son su sus tal tambien
tan tanto te tiene tienen tengo tenemos todo todos toda todas tu un una unas uno unos usted vez ya yo siempre
nunca jamas cosa cosas veces suele suelen sea estoy estamos soy somos he hemos va van voy vamos da dan
the and or but of to in on at for with from by is are was were be been being it its this that these those
i me my we our us you your he she they them their his her has have had do does did not no never always
also just only very really about into than then there here when what which who will would can an as so
recuerda recuerdalo recordar acuerdate apunta apuntalo anota anotalo guarda guardalo remember note keep
""".split())  # the last line: asking to remember is not itself something to remember
_FIRST_SINGULAR = re.compile(r"\b(?:yo|me|mi|mis|conmigo|i|i'm|i've|i'd|my|myself|mine)\b")
# Spanish drops the pronoun: the verb alone says the writer did it. A preterite ("estuve con Canela", "fui",
# "ayer entrevisté a una directora": a regular one by its accent, on the sentence as written, see
# `personal.PRETERITE`, whose "-ó" is the third person's and is left out here) tells of the writer's life; a
# perfect with "he" or a present of the commonest verbs ("he cerrado tres reportajes", "tengo", "voy") does
# too, but also of the day's errands ("he llegado tarde", "necesito las facturas"), so those only count in a
# message the gate already passed (`loose`).
_FIRST_SINGULAR_PRETERITE = re.compile(r"\b(?:fui|estuve|tuve|hice|puse|pude|supe|quise|anduve|conduje|traduje)\b")
_FIRST_SINGULAR_VERB = re.compile(r"\b(?:he\s+(?:\w+(?:ado|ido)|hecho|puesto|visto|escrito|dicho|vuelto|abierto|roto)|"
                                  r"tengo|estoy|voy|salgo|hago|vengo|sigo|llevo|empiezo|acabo|necesito|quiero|puedo)\b")


# "Le ayudo los fines de semana", "les pago en mano": "le"/"les" (never an article) and a verb in "-o" as typed.
_TO_HIM_I = re.compile(r"(?:le|les)\s+\w{2,}o\b")


def _first_singular(s: Sentence, loose: bool = True) -> bool:
    """The writer speaks of themself: a pronoun ("yo", "me", "I", "my") or, in Spanish, the verb alone."""
    if _FIRST_SINGULAR.search(s.low):
        return True
    if is_english(s.text):
        return False
    if _FIRST_SINGULAR_PRETERITE.search(s.low) or (loose and (_FIRST_SINGULAR_VERB.search(s.low) or
                                                              _TO_HIM_I.match(s.text.lower()))):
        return True
    return any(m.group().endswith(("é", "í")) for m in PRETERITE.finditer(s.text.lower()))


_FIRST_PLURAL = re.compile(r"\b(?:nosotros|nosotras|nos|nuestr[oa]s?|hemos|somos|vamos|we|we're|we've|our|ours|us)\b"
                           r"|\b\w{3,}(?:amos|emos|imos)\b")
# A capitalised first word that starts a sentence without naming anyone ("Cerramos", "Hemos", "Mañana").
_COMMON_START = re.compile(r"^(?:\w+(?:amos|emos|imos|ando|iendo|ado|ido)|hemos|he|ha|han|hay|tengo|"
                           r"tenemos|manana|hoy|ayer|siempre|nunca|cuando|todos?|todas?|cada|solo|mejor|antes|"
                           r"despues|este|esta|"
                           r"estos|estas|ese|esa|mis?|tus?|sus?|my|his|her|their|its|this|that|these|those|"
                           r"every|each|next|last|please|never|always|only|dont|don't|text|email|call|fridays?|"
                           r"mondays?|tuesdays?|wednesdays?|thursdays?|saturdays?|sundays?|lunes|martes|"
                           r"miercoles|jueves|viernes|sabados?|domingos?|los|las|el|la|un|una|unos|unas|"
                           r"lo|le|les|se|no|si|sí|en|de|con|por|para|a|al|del|it's|its|it|there|the|an?|quien|"
                           r"que|como|cual|cuando|donde|cuantos?|cuantas?|how|what|who|which|would|do|does|"
                           r"anoto|apuntado|vale|ok|perfecto|entendido|got|noted)$")

# Topic families, first match wins: (attribute for the person or the business, attribute for a contact).
# Bank details: a contact's go under cuenta_bancaria, which the ladder never applies but proposes.
_BANK_TOPIC = re.compile(
    r"\b(?:iban|swift|bic|ccc|numero de cuenta|cuenta bancaria|cuenta corriente|datos bancarios|bank account|"
    r"bank details|sort code|account number|cuenta (?:de|del|en)\s+\w+|(?:otra|nueva) cuenta|cuenta nueva|"
    r"(?:new|another|different) account|banco(?! de (?:alimentos|sangre|tiempo))|bancari[oa]s?|entidad|(?<!food )(?<!blood )(?<!river )bank(?! holidays?)|banking|"
    r"transferencias?,?\s+(?:al|a la|a|en)\s+\w+|(?:changed|switched|moved)\s+(?:\w+\s+)?(?:banks?|accounts?)|"
    r"santander|bbva|sabadell|caixabank|la caixa|bankinter|unicaja|(?<!-)ing|abanca|kutxabank|cajamar|ibercaja|"
    r"openbank|lloyds|barclays|hsbc|natwest|starling|monzo|revolut)\b")
_TOPICS: tuple[tuple[re.Pattern, str, str], ...] = tuple((re.compile(p), own, other) for p, own, other in (
    (r"\b(?:como te llamas|como quieres que te llame|como te llamo|tu nombre|your name|call you|what should i call)\b",
     "nombre", "persona_contacto"),
    (r"\b(?:descuentos?|discounts?|rappel)\b|\d\s*(?:%|por ciento|percent)", "descuento", "descuento"),
    (r"\b(?:formal\w*|informal\w*|tono|trat\w*|confianza|tute\w*|usted|apellido|surname|addressed|"
     r"senora|senor)\b", "tono", "tono"),
    (r"\b(?:avis\w*|recordatorios?|reminders?|remind\w*|alert\w*|notific\w*|let me know)\b", "avisos", "avisos"),
    (r"\b(?:contado|transferencias?|tarjetas?|domicilia\w*|efectivo|bizum|pagare|cheques?|cash|card|"
     r"direct debit|paypal)\b", "forma_pago", "forma_pago"),
    (r"\b(?:cuotas?|tarifas?|precios?|fees?|prices?|rates?|presupuesto de|coste|cuesta|"
     r"cobra\w* \d+(?: euros|€)?"
     r"|\d+\s*(?:euros|eur|€)|€\s*\d+)\b", "precios", "precios"),
    (r"\b(?:venc\w*|paga\w*|pague\w*|pagos?|abona\w*|pays?|paid|paying|settles?|payments?|dinero|money|"
     r"cobr\w*|deb\w+|owes?|moros\w*|pagador\w*)\b", "plazo_pago", "plazo_pago"),
    (r"\b(?:whats ?app|wasap|e-?mails?|correos?|mails?|llamad\w*|llamar\w*|llamen|llames|calls?|"
     r"text(?:s|ing)?|sms|audios?|telefono|"
     r"phone|mensajes?|messages?|escrib\w*|write)\b", "canal_preferido", "canal_preferido"),
    (r"\b(?:emojis?|respuestas?|answers?|cort[oa]s?|short|tablas?|tables?|resumen|resumenes|claras?|clear|"
     r"repit\w*|repeat\w*|listas?|bullets?|detalle|detail|brief|largo|long|totales?|redonde\w*|round\w*|"
     r"formato de fecha|date format)\b", "estilo_respuesta", "estilo_respuesta"),
    (r"\b(?:factur\w*|invoic\w*|albaran\w*|proformas?|presupuestos?|quotes?|concepto|pedidos?|orders?|"
     r"expediente|parte de horas)\b", "facturacion", "facturacion"),
    (r"\b(?:horarios?|hours|abre\w*|abrimos|cierr\w*|cerr\w*|closes?|closed|vacaciones|holidays?|agosto|august|"
     r"navidad\w*|christmas|verano|summer|puente|festivos?|lunes|martes|miercoles|jueves|viernes|sabados?|"
     r"domingos?|mondays?|tuesdays?|wednesdays?|thursdays?|fridays?|saturdays?|sundays?|no trabaja\w*)\b",
     "horario", "horario"),
    (r"\b(?:entreg\w*|reparto|repart\w*|deliver\w*|sirve|envios?|shipping|almacen\w*|warehouse|portes)\b",
     "entregas", "entregas"),
    (r"\b(?:hij[oa]s?|mujer|marido|espos[oa]|pareja|casad[oa]|novi[oa]|wife|husband|married|kids|children|"
     r"son|daughter|nin[oa]s?|padre|madre|father|mother|hermanos?|hermanas?)\b", "familia", "familia"),
    (r"\b(?:perros?|gatos?|dogs?|cats?|mascotas?|pets?)\b", "mascota", "mascota"),
    (r"\b(?:aficion\w*|hobbies|hobby|deportes?|futbol|ciclismo|running|golf|tenis|padel|football|cycling)\b",
     "aficiones", "aficiones"),
    (r"\b(?:empleados|trabajadores|plantilla|employees|staff|socios|personas en la empresa)\b|^(?:somos|we are)\s+"
     r"(?:\d+|dos|tres|cuatro|cinco|seis|siete|ocho|nueve|diez|two|three|four|five|six|seven|eight|nine|ten)\b",
     "plantilla", "plantilla"),
    (r"www\.|\b(?:web|website|pagina|instagram|redes)\b", "web", "web"),
    (r"\b(?:seguros?|insurance|mutua|poliza)\b", "seguros", "seguros"),
    (r"\b(?:iva|vat|irpf|recargo|exent\w*|exempt|epigrafe|iae|hacienda|tax|modelo \d+)\b", "fiscal", "fiscal"),
    (r"\b(?:fund\w*|founded|set up|constitu\w*|established)\b", "fundacion", "fundacion"),
    (r"\b(?:euros|dolares|dollars|pounds|libras|moneda|currency|divisas?)\b", "moneda", "moneda"),
    (r"\b(?:garantias?|warranty|guarantee)\b", "garantia", "garantia"),
    (r"\b(?:software|programa|erp|tpv|sage|holded|contasol|a3|app|aplicacion|excel)\b", "herramientas",
     "herramientas"),
    (r"\b(?:gerente|administrador\w*|dueno|duena|propietari\w*|responsable|encargad[oa]|"
     r"asesor\w*|comercial|manager|owner|assistant|asistente|director\w*|jefe|jefa|contact\w*|secretari\w*)\b",
     "cargo", "persona_contacto"),
    (r"\b(?:vivo|vive|viven|vivimos|live|lives|soy de|es de|from|sede|oficina|office|based|ubicad\w*|provincia|"
     r"zona|trabajamos en|we work in)\b", "ubicacion", "ubicacion"),
    (r"\b(?:clientes?|customers?|clients?|proveedor\w*|suppliers?)\b", "relacion", "relacion"),
    (r"^(?:soy|i'?m|i am)\b", "perfil", "perfil"),
))

# First person to third: verbs of the person (singular) and of the business (plural), and pronouns.
_ES_SINGULAR = {"soy": "es", "estoy": "está", "tengo": "tiene", "vivo": "vive", "prefiero": "prefiere",
                "quiero": "quiere", "trabajo": "trabaja", "llevo": "lleva", "hago": "hace", "voy": "va",
                "puedo": "puede", "suelo": "suele", "uso": "usa", "necesito": "necesita", "odio": "odia",
                "facturo": "factura", "cobro": "cobra", "pago": "paga", "juego": "juega", "firmo": "firma",
                "miro": "mira", "leo": "lee", "conduzco": "conduce", "he": "ha", "salgo": "sale",
                "empiezo": "empieza", "entro": "entra", "cierro": "cierra", "abro": "abre", "me llamo": "se llama",
                # told in the past: "fui al concierto" -> "fue al concierto"
                "fui": "fue", "estuve": "estuvo", "tuve": "tuvo", "hice": "hizo", "asisti": "asistió",
                "visite": "visitó", "me he": "se ha", "me voy": "se va", "corri": "corrió", "conoci": "conoció", "empece": "empezó", "compre": "compró",
                "termine": "terminó", "acabe": "acabó", "vi": "vio", "gane": "ganó", "aprendi": "aprendió"}
_ES_PLURAL = {"somos": "es", "estamos": "está", "tenemos": "tiene", "hemos": "ha", "vamos": "va",
              "podemos": "puede", "solemos": "suele", "queremos": "quiere", "preferimos": "prefiere",
              "cerramos": "cierra", "hacemos": "hace", "damos": "da", "vendemos": "vende", "ofrecemos": "ofrece",
              "enviamos": "envía", "pedimos": "pide", "servimos": "sirve", "seguimos": "sigue"}
_ES_PRONOUNS = {"mi": "su", "mis": "sus", "me": "le", "conmigo": "con la persona", "nuestro": "su",
                "nuestra": "su", "nuestros": "sus", "nuestras": "sus", "nos": "le", "yo": "", "nosotros": "",
                "nosotras": ""}
_EN_START = {"i'm": "is", "i am": "is", "i've": "has", "i have": "has", "we're": "is", "we are": "is",
             "we've": "has", "we have": "has", "i'd rather": "would rather", "we'd rather": "would rather"}
_EN_PAST = frozenset("""had went got made took was were did saw met ran bought found lost gave came began brought
felt left kept thought told sold spent won wrote read built taught caught heard drew wore grew threw flew knew swam
sang rang drove rode spoke broke chose froze woke fell held stood understood sat hung fed led paid said sent slept
ate forgot hid shook became""".split())
_EN_PRONOUNS = {"my": "their", "me": "them", "myself": "themselves", "our": "its", "us": "it", "i": "they",
                "we": "they"}


# GDPR art. 9 categories (origin, religion, beliefs, politics, unions, health, sex life, genetics, biometrics):
# a generic note has no shape to check, so a clause on any of them is never kept, whatever the gate scored.
_SENSITIVE = re.compile(
    r"\b(?:origen|etni\w*|raza|racial|racis\w*|gitan[oa]s?|religi\w*|musulman\w*|islam\w*|judi[oa]s?|catolic\w*|"
    r"cristian\w*|evangelic\w*|ateo|atea|creyente|mezquita|sinagoga|iglesia|partido|afiliad\w*|sindica\w*|"
    r"ideolog\w*|vota\w*|izquierdas?|derechas?|comunista|enferm\w*|salud|medic\w*|diagnost\w*|cancer|diabet\w*|"
    r"depresi\w*|ansiedad|embaraz\w*|hospital\w*|terapia|psic\w*|psiqui\w*|vih|sida|discapacidad|minusval\w*|"
    r"homosexual\w*|gay|lesbiana|bisexual|transexual|orientacion sexual|genetic\w*|biometric\w*|huella dactilar|"
    r"origin|ethnic\w*|(?:my|your|his|her|their|our|of|by|and)\s+race|religio\w*|muslim|jewish|catholic|christian|church|mosque|union member\w*|"
    r"political|politics|votes?|voted|illness|sick|disease|health|medical|medication|diagnos\w*|pregnan\w*|"
    r"therapy|disabilit\w*|sexual\w*|genetic\w*|biometric\w*|"
    r"urgencias|alergi\w*|alergic[oa]s?|allerg\w*|esguince\w*|lesion\w*|fractur\w*|sprain\w*|injur\w*)\b")
# An injury or a pain, the writer's or anyone's: a body part hurt, broken, cut or operated on, within two words
# ("me he roto el brazo", "tengo la muñeca escayolada", "I sprained my ankle", "my knee hurts"). A back is a body
# part in English only as someone's ("my back", "a bad back"): "the back door is broken" is no injury.
_BODY = (r"(?:brazos?|piernas?|tobillos?|munecas?|rodillas?|espalda|manos?|dedos?|hombros?|caderas?|cuello|"
         r"costillas?|codos?|nariz|dientes?|muelas?|cabeza|arms?|legs?|ankles?|wrists?|knees?|"
         r"(?:el|los|un|mi|mis|del) pies?|"  # Spanish feet, not an English pie
         r"(?:my|his|her|their|your|bad|sore|lower) back|hands?|fingers?|thumbs?|toes?|feet|foot|shoulders?|hips?|"
         r"neck|ribs?|elbows?|nose|teeth|tooth)")
_HURT = (r"(?:rot[oa]s?|partid[oa]s?|torcid[oa]s?|cortad[oa]s?|dislocad[oa]s?|lesionad[oa]s?|quemad[oa]s?|"
         r"escayolad[oa]s?|vendad[oa]s?|hinchad[oa]s?|duele|duelen|dolor|operan|operad[oa]|operar(?:me|le)?|broke|"
         r"broken|sprained|twisted|cut|hurt|hurts|injured|fractured|dislocated|pulled|bruised|burnt|burned|sore|"
         r"aching|aches|swollen|operation|surgery)")
INJURY = re.compile(rf"\b(?:{_HURT}(?:\s+\w+){{0,2}}\s+{_BODY}|{_BODY}(?:\s+\w+){{0,2}}\s+{_HURT})\b")
# Sayings that name a body part and a hurt but tell of none: "I cut my teeth in retail", "you're pulling my leg".
_NO_INJURY = re.compile(r"\bcut (?:\w+ )?teeth\b|\bpull(?:s|ed|ing)? (?:\w+ )?legs?\b")
# Seeing a doctor tells of one's health too ("mañana tengo dentista", "a dentist appointment"); trading with
# one does not ("el fisio de enfrente es cliente nuestro", "la doctora Ruiz nos paga a 30 días").
_CARE = re.compile(r"\b(?:dentist\w*|odontolog\w*|doctor(?:a|as|es|'s)?|fisio\w*|physio\w*|ginecolog\w*|pediatra|"
                   r"oftalmolog\w*)\b")


def sensitive(s: Sentence) -> bool:
    """The unit is on a special category (GDPR art. 9): never learnt in the background. A protected word
    that only names a cause, a field or an event ("a charity race for mental health") does not count, nor
    does a doctor or physio the business trades with (see `_trades_with`)."""
    low = fold(without_topic_mentions(s.text))
    if _SENSITIVE.search(s.low) and _SENSITIVE.search(low):
        return True
    if injury(s):
        return True
    return bool(_CARE.search(s.low) and _CARE.search(low)) and not _trades_with(s)


def injury(s: Sentence) -> bool:
    """The unit tells of an injury or a pain ("me he roto el brazo"): health, whoever's it is."""
    return bool(INJURY.search(s.low)) and not _NO_INJURY.search(s.low)


def care_trade(s: Sentence) -> bool:
    """A doctor, dentist or physio the business trades with, and no special category besides: a customer's
    or supplier's note, whatever the gate's special-category flag says of the care word."""
    return bool(_CARE.search(s.low)) and _trades_with(s) and not sensitive(s)


# What the business does with a customer or supplier: the topics of a trade ("nos paga", "cliente",
# "orders", "invoice"), and buying and selling.
_TRADE_TOPICS = ("plazo_pago", "forma_pago", "facturacion", "relacion")
_TRADE = re.compile(r"\b(?:compra\w*|vend\w*|buys?|bought|sells?|sold)\b")


def _trades_with(s: Sentence) -> bool:
    """The sentence is the business's dealing with someone ("we", a trade word), not the writer's own
    life: "El dentista de la calle Alcalá nos debe dos facturas", not "tengo que pagar al dentista"."""
    if _FIRST_SINGULAR.search(s.low) or not _FIRST_PLURAL.search(s.low):
        return False
    return bool(_TRADE.search(s.low) or SUPPLIER_WORDS.search(s.low) or
                any(pattern.search(s.low) for pattern, own, _ in _TOPICS if own in _TRADE_TOPICS))


def _safe(text: str) -> str:
    """Fence-safe and capped: no control, format or separator characters, no angle-bracket runs."""
    clean = "".join(" " if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp", "Cs") else ch for ch in text)
    clean = re.sub(r"\s+", " ", clean.replace("<", "‹").replace(">", "›")).strip()
    if len(clean) > VALUE_MAX_CHARS:
        clean = clean[: VALUE_MAX_CHARS - 1].rstrip() + "…"
    return clean


def _strip_lead(s: Sentence) -> Sentence:
    """The sentence without "recuerda que", "corrección:" and the like in front."""
    for regex in (REMEMBER_PREFIX, _LEAD_IN):
        m = regex.match(s.low)
        if m and m.end() and m.end() < len(s.low):
            s = Sentence.of(s.text[m.end():])
    return s


def _content_words(low: str) -> list[str]:
    return [w for w in re.findall(r"[a-z][a-z']+", low) if len(w) >= 3 and w not in _STOP]


# A sentence a rule read a personal fact from that tells this many content words more than the fact's values
# ("I took my turtles to the beach in Tampa yesterday": a pet, and a day out) is also kept as a note.
MORE_WORDS = 4
# Of a customer or supplier, a word more: the verb of the fact a rule read ("nos paga a 60 días por
# transferencia y siempre pide factura en papel" tells nothing the term, the method and the format leave out).
CONTACT_MORE_WORDS = MORE_WORDS + 1


def says_more(s: Sentence, values: list[str], more: int = MORE_WORDS) -> bool:
    """The sentence tells `more` content words than the typed values a rule read from it."""
    told = {w[:5] for v in values for w in _content_words(fold(v))}
    return sum(1 for w in _content_words(_strip_lead(s).low) if w[:5] not in told) >= more


def _says_something(s: Sentence) -> bool:
    """A statement with content (a word or a number), or a standing rule ("cuando me escribas, sé breve")."""
    if not (_content_words(s.low) or re.search(r"\d", s.low)):
        return False
    if statement(s):
        return True
    # The rules read a leading "cuando"/"when" as a question; with no question mark and a main clause after
    # the comma it is a standing instruction. Hypotheticals and injections are still out.
    lead = _STANDING.match(s.low)
    if not lead or "?" in s.text or "¿" in s.text:
        return False
    main = Sentence.of(s.text[lead.end():])
    # "cuando llegue el pedido, mándame la factura" is an order for later, not a standing rule.
    return statement(main) and not is_order(main)


_STANDING = re.compile(r"^(?:cuando|siempre que|when|whenever)\b[^,]{3,80},\s*")


def _names(s: Sentence) -> list[str]:
    """Capitalised runs that look like a name: a lone capitalised first word must not be a common starter."""
    out = []
    for text, start, end in names_in(s):
        if in_place(s, start, end):
            continue  # "la calle Alcalá", "Elm Street": where someone is, not who
        text = re.sub(r"'s$", "", text)
        # A lone capitalised word opening the sentence (after its "¿" or "¡") is its first word, unless it names a
        # business.
        first = not s.text[:start].strip("¿¡\"'«“ ")
        if first and " " not in text and (_COMMON_START.match(fold(text)) or not looks_like_company(text)):
            continue
        if fold(text) in _STOP or fold(text.split()[0]) in NOT_NAMES:
            continue
        out.append(text)
    return out


def _business_typed_lower(s: Sentence) -> str | None:
    """The first business a sentence typed in lower case names in full (see `names.lower_name_runs`)."""
    return next((text for text, _, _ in lower_name_runs(s) if normalise_name(text)), None)


# Topics of a person's own life: "we" there is the writer's household, never the business.
PERSONAL_TOPIC = re.compile(
    r"\b(?:house|home|casa|casitas?|casona|piso|pisito|apartment|flat|apartamento|apartamentito|cottage|cabin|"
    r"villa|chalet|bungalow|kids?|children|"
    r"hij[oa]s?|crios|familia|family|wife|husband|marido|mujer|pareja|partner|boyfriend|girlfriend|novi[oa]|"
    r"mom|mum|dad|mother|father|madre|padre|brother|sister|herman[oa]s?|baby|bebe|wedding|boda|married|casad[oa]s?|"
    r"dogs?|cats?|pup(?:py)?|kitty|kitten|perr[oa]s?|gat[oa]s?|mascotas?|pets?|hobby|hobbies|aficion\w*|"
    r"paint\w*|pint\w*|guitar\w*|piano|violin|music|musica|sing\w*|dance|danc\w*|bail\w*|running|run|hike|"
    r"hiking|camping|vacation|holiday|trip|viaje|vacaciones|garden\w*|jardin\w*|cook\w*|cocin\w*|"
    r"vegetarian\w*|vegan\w*|vegetarian[oa]|comida|food|diet|dieta|friends?|amig[oa]s?|birthday|cumpleanos|"
    r"school|college|university|universidad|colegio|class|clases|book|books|libros?|read\w*|lee\w*|"
    r"movie|movies|pelicula\w*|game|games|juego\w*|sport\w*|deporte\w*|gym|gimnasio|yoga)\b")
# Moving is the household's ("nos hemos mudado a Toledo"), unless what moved is the business's ("we moved the
# warehouse to Getafe").
_MOVING = re.compile(r"\b(?:mov(?:e|ed|ing)|mudanza|mudad[oa]s?|mudamos|mudarnos|relocat\w*)\b")
# What a business owns and runs: its premises, vehicles and machines. Said with "we/our" ("ya tenemos la
# furgoneta nueva", "our new office is in Bilbao"), the sentence is the business's, not the household's.
BUSINESS_THING = re.compile(
    r"\b(?:negocio|empresa|tiendas?|(?:el|un|nuestro|del|al)\s+local|nave|naves|almacen\w*|oficinas?|sede|taller(?!\s+de)|talleres|"
    r"obrador|fabrica|sucursal\w*|delegacion\w*|furgonetas?|camion\w*|flota|maquinaria|carretillas?|stock|"
    r"existencias|escaparate|business|company|shops?|stores?|offices?|warehouses?|workshops?|factory|branch\w*|"
    r"premises|showroom|(?:a|the|our|new|delivery|second)\s+vans?|trucks?|lorr(?:y|ies)|fleet|machinery|forklifts?|"
    r"inventory|shopfront)\b")

# When "we" open or close: the business's hours ("a partir de enero cerramos los sábados", "we open at 9 now").
_OPENING = re.compile(r"\b(?:abrimos|cerramos|we(?:'re| are)? (?:open|close|closed)(?:\b|\s))")


# A home said the way people say it: "our place in Cornwall", "a little place in the Algarve", "my place by the
# lake" (a place of the writer's own, then where it is).
_OWN_PLACE = re.compile(r"\b(?:our|my|a|his|her|their)\s+(?:(?:little|small|tiny|old|new|own|family|holiday|summer|"
                        r"beach|country|second)\s+){0,2}place\s+(?:in|at|by|near|on|up|down|out)\b")
# Where people rest (the beach, the village, the lake): the household's, unless the business has premises there
# ("nuestro local de la playa abre en junio").
_LEISURE_PLACE = re.compile(r"\b(?:beach|playa|pueblo|village|seaside|countryside|lake)\b")


def _personal_topic(low: str) -> bool:
    """A topic of the writer's own life (family, home, pets, hobbies), a home of theirs however said, a resort
    where the business has nothing, or a move of no business premise."""
    if PERSONAL_TOPIC.search(low) or _OWN_PLACE.search(low):
        return True
    return bool((_LEISURE_PLACE.search(low) or _MOVING.search(low)) and not BUSINESS_THING.search(low))


# A business closing or opening, or away on holiday: the verbs of its hours ("cierra del 10 al 25", "no abre el
# lunes", "estará cerrado", "is closed from the 24th", "shuts for two weeks", "won't open", "está de vacaciones").
_CLOSES = re.compile(
    r"\b(?:cierra|cierran|cerrara|cerraran|cerrad[oa]s?|cerramos|cerraremos|abre|abren|abrira|abriran|abrimos|"
    r"abriremos|reabre|reabren|reabrimos|(?:esta|estan|estara|estaran|se va|se van|se ira|se iran)\s+de "
    r"vacaciones|closes|closed|closing|shuts?|shutting|opens|opening|reopens?|reopening|"
    r"(?:will|won't|wont|to|don't|dont|doesn't|doesnt|does|do|may|might|usually|always|never|also|we)\s+"
    r"(?:close|open)|(?:is|will be|'s)\s+(?:off|away|on holiday|on vacation)|(?:is|are|will be|'s|'re)\s+open)\b")
# What may follow such a verb in a sentence on hours: a time, or the premises closed ("cierra la tienda del 10
# al 25"); any other thing is what is closed or opened ("cerramos la cuenta", "we're opening a new line").
_TIME_WORD = re.compile(
    r"(?:\d+\w*|lunes|martes|miercoles|jueves|viernes|sabados?|domingos?|mondays?|tuesdays?|wednesdays?|thursdays?|"
    r"fridays?|saturdays?|sundays?|semanas?|mes|meses|fin|finde|dias?|puente|verano|navidad\w*|quincena|primera|"
    r"segunda|ultima|tarde|noche|week|weeks|month|months|weekend|summer|christmas|holidays?|days?|first|second|"
    r"last|next|this|whole|entire|todo|toda|morning|afternoon|evening|january|february|march|april|may|june|july|"
    r"august|september|october|november|december|enero|febrero|marzo|abril|mayo|junio|julio|agosto|septiembre|"
    r"octubre|noviembre|diciembre)\b")
_OBJECT = re.compile(r"\s+(?:(?:ya|tambien|solo|early|pronto|only|also|again|temporalmente|temporarily|down|up)\s+)*"
                     r"(?:el|la|los|las|un|una|our|the|a|an|my|mi|su|sus|nuestr[oa]s?|their|its)\s+(\S+)")
_DWELLING = re.compile(r"(?:house|home|casa|casitas?|casona|piso|pisito|apartment|flat|apartamento|cottage|cabin|"
                       r"villa|chalet|bungalow|place)\b")
# Words a name and the verb of its hours may have between them: "Printwise is shut", "X no abre", "X will be closed".
_AUX = frozenset("is are was will be won't wont isn't doesn't does not no ya ahora tambien solo only also still "
                 "esta estara estan estaran sera permanecera sigue seguira va se has been have had".split())
# How many words at most in an aside between the name that closes and the verb ("Harbor Foods, our biggest
# customer, is closed").
CLOSER_GAP = 5


def _closing(s: Sentence) -> re.Match | None:
    """The verb of a business's hours in the sentence, closing or opening with no other object than a time or
    its premises."""
    for m in _CLOSES.finditer(s.low):
        obj = _OBJECT.match(s.low, m.end())
        if obj and not _TIME_WORD.match(obj.group(1)) and not BUSINESS_THING.match(s.low, obj.start(1)):
            continue
        return m
    return None


def closer(s: Sentence, mentions: list[Mention]) -> tuple[str, object] | None:
    """Who closes or opens when the sentence is on a business's hours: ("mention", a contact named before the
    verb), ("name", the business named before it: "Muebles Soler cierra del 10 al 25", "printwise is shut until
    the 10th"), ("org", the writer's business: "cerramos en agosto", "el taller cierra el 15", "we're closed on
    the 26th"); None when the writer speaks of themself ("cierro por vacaciones", "I'm off from the 10th") or
    closes a home ("cerramos la casa de la playa")."""
    m = _closing(s)
    if m is None:
        return None
    before = s.low[:m.start()]
    if _FIRST_SINGULAR.search(before):
        return None
    obj = _OBJECT.match(s.low, m.end())
    if obj and _DWELLING.match(obj.group(1)):
        return None
    # The name just before the verb is the one that closes ("Our supplier Nordic Paper closes over Christmas",
    # "Printwise is shut", "Harbor Foods, our biggest customer, is closed"); not one with another subject between
    # ("El día de Reyes la tienda no abre").
    best: tuple[int, str, object] | None = None
    for mention in mentions:
        if mention.end <= m.start() and _subject_of(s, mention.end, m.start()) and \
                (best is None or mention.end > best[0]):
            best = (mention.end, "mention", mention)
    for text, start, end in names_in(s):
        if end > m.start() or in_place(s, start, end) or not normalise_name(text) or \
                fold(text) in _STOP or fold(text.split()[0]) in NOT_NAMES or not _subject_of(s, end, m.start()):
            continue
        if start == 0 and " " not in text and _COMMON_START.match(fold(text)):
            continue  # "Mañana cierra...": a sentence's first word, no name
        if best is None or end > best[0]:
            best = (end, "name", text)
    if best is not None:
        return best[1], best[2]
    if _FIRST_PLURAL.search(s.low[:m.end()]) or BUSINESS_THING.search(before):
        return "org", None
    return None


def _subject_of(s: Sentence, end: int, verb: int) -> bool:
    """What ends at `end` is the subject of the verb at `verb`: only auxiliaries, a negation or adverbs between
    them, or an aside between commas."""
    gap = s.low[end:verb].strip()
    aside = ""
    if gap.startswith(","):
        aside, _, gap = gap[1:].rpartition(",")
    return len(aside.split()) <= CLOSER_GAP and all(w in _AUX for w in gap.split())


_NO_SUBJECT = re.compile(r"^(?:just\s+|finally\s+|still\s+|been\s+|really\s+|also\s+)?(?:[a-z]{2,}ing|[a-z]{3,}ed|got|went|"
                        r"made|took|had|started|lost|bought|found|saw|met|gonna|gotta|wanna|been|planning|hoping|"
                        r"thinking of|trying|working on)\b")
# A message that corrects what was said before: only then may a note take a stored name and replace it.
CORRECTION = re.compile(
    r"\b(?:ahora|ya no|now|no longer|anymore|any more|actually|en realidad|me equivoque|me he equivocado|"
    r"rectifico|corrijo|correction|instead|en vez de|en lugar de|a partir de ahora|from now on|ha cambiado|"
    r"han cambiado|has changed|have changed|changed|cambiado|cambio|not anymore)\b")


def _subject(s: Sentence, mentions: list[Mention], recent: list[Mention], category: str,
             scope: str | None, previous: Sentence | None = None) -> tuple[str, str, str] | None:
    """(subject key, label, memory category): I/me/my is the writer; we/our is the writer's household
    on a personal topic and the business on a business one; a contact or a name only when named."""
    if mentions and category not in ("person", "event"):
        best = min(mentions, key=lambda m: m.start)
        subject = contact_subject(best.contact, best.confidence)
        return subject.key, subject.label, subject.category
    closing = closer(s, mentions)
    if closing is not None and (closing[0] != "org" or category != "event"):
        # Another business's closing days or hours are that business's, whatever category the gate gave ("Muebles
        # Soler cierra del 10 al 25 de agosto" read as an event): never the writer's own. The writer's business
        # closing on a day ("cerramos del 1 al 15 de agosto") is the writer's event, as before; its hours
        # ("el taller cierra los sábados") the business's.
        kind, who = closing
        if kind == "mention":
            subject = contact_subject(who.contact, who.confidence)
            return subject.key, subject.label, subject.category
        if kind == "name":
            trade = category if category in ("customer", "supplier") else \
                "supplier" if SUPPLIER_WORDS.search(s.low) else "customer"
            return f"name:{normalise_name(who)}", who, trade
        return "org", "", "company"
    business = _business_typed_lower(s)
    # A business's own words are no topic of the writer's life ("bright paints", "viveros del pueblo").
    personal = _personal_topic(s.low.replace(fold(business), " ") if business else s.low)
    if business and (category not in ("person", "event") or s.low.startswith(fold(business)) or
                     (_FIRST_PLURAL.search(s.low) and not _FIRST_SINGULAR.search(s.low) and
                      dealt_with(s, s.low.find(fold(business))))) and not personal:
        # "muebles soler cierra en agosto", "ya no trabajamos con reformas galan": the business it names in full.
        kind = category if category in ("customer", "supplier") else \
            "supplier" if SUPPLIER_WORDS.search(s.low) else "customer"
        return f"name:{normalise_name(business)}", business, kind
    singular, plural = bool(_FIRST_SINGULAR.search(s.low)), bool(_FIRST_PLURAL.search(s.low))
    if plural and not singular and not personal:
        # "We/our" with the business's premises or vehicles is the business's fact; "we" trading with someone
        # the gate took for a person ("el fisio de enfrente es cliente nuestro") is a customer's or supplier's.
        # Someone placed by a street or "de enfrente" who trades with "us" is a customer or supplier of the
        # business with no name given: "the accountant upstairs pays us in cash".
        if names_a_place(s) and _trades_with(s) and category not in ("customer", "supplier"):
            return "org", "", "supplier" if SUPPLIER_WORDS.search(s.low) else "customer"
        if (BUSINESS_THING.search(s.low) or _OPENING.search(s.low)) and \
                category in ("person", "preference", "company", "nothing"):
            return "org", "", "company"
        if category in ("person", "nothing") and _trades_with(s):
            return "org", "", "supplier" if SUPPLIER_WORDS.search(s.low) else "customer"
    if category in ("customer", "supplier"):
        names = _names(s)
        if names and normalise_name(names[0]):
            return f"name:{normalise_name(names[0])}", names[0], category
        if previous is not None and _names(previous) and normalise_name(_names(previous)[0]):
            name = _names(previous)[0]  # a short answer: the contact the question was about
            for m in recent:  # a contact of the address book when the question named one of its names
                if normalise_name(name) in {normalise_name(n) for n in (m.contact.name, *m.contact.aliases)}:
                    subject = contact_subject(m.contact, m.confidence)
                    return subject.key, subject.label, subject.category
            return f"name:{normalise_name(name)}", name, category
        distinct = {m.contact.id: m.contact for m in recent}
        if len(distinct) == 1:
            subject = contact_subject(next(iter(distinct.values())), 0.7)
            return subject.key, subject.label, subject.category
        if personal or (singular and not plural):
            return "self", "", "person" if personal else "preference"
        return "org", "", category
    if category == "company":
        if personal or (singular and not plural):
            return "self", "", "person"
        return "org", "", "company"
    if category in ("person", "preference", "event"):
        # "Odio el café", "I love sushi": a like or dislike is a preference, unless it is of the writer's family.
        taste = category == "person" and _TASTE.search(s.low) and not personal
        return "self", "", "preference" if taste else category
    # The gate passed it with no category: who the sentence speaks for decides ("Wrapping up the
    # business plan": a sentence with no subject of its own is the writer's).
    if singular or _NO_SUBJECT.match(s.low):
        return "self", "", "preference"
    if plural:
        return ("self", "", "person") if personal else ("org", "", "company")
    names = _names(s)
    if names and normalise_name(names[0]) and not personal:
        return f"name:{normalise_name(names[0])}", names[0], "customer"
    return ("org", "", "company") if scope == "shared" and not personal else ("self", "", "preference")


# Reactions and opinions that hold no fact: about "it/that/this", or what the writer feels about it.
_REACTION = re.compile(
    r"^(?:it|it's|its|that|that's|thats|this|this's|those|these|there|such|so|what a|how|all (?:those|these|the)|"
    r"eso|esto|era|fue)\b|^(?:i|we)\s+(?:really\s+|just\s+|totally\s+|absolutely\s+)?(?:love|loved|like|liked|"
    r"enjoy|enjoyed|adore|appreciate|agree|know|think|feel|felt|hope|wish|bet|guess|understand|get)\s+"
    r"(?:it|that|this|them|those|these|how|what|when|the way|you|your|seeing|hearing|to hear)\b|"
    r"^(?:you|your|you're|yours|tu|tus|usted)\b")
# How a day went, and nothing else ("I had a great time yesterday!", "lo pasamos genial el sábado"): small talk.
_HOW_IT_WENT = re.compile(
    r"^(?:i|we)\s+(?:had|have had|'ve had)\s+(?:such\s+)?(?:a|an|the|the best|so much)\s+(?:\w+\s+){0,2}?"
    r"(?:time|day|blast|weekend|evening|night|fun)\b[^,;]{0,25}$|^(?:lo|nos lo)\s+(?:pase|pasamos|he pasado|hemos pasado)"
    r"\s+(?:genial|bien|muy bien|de maravilla|fenomenal|en grande|bomba)\b[^,;]{0,25}$")
# Who a note is about: the writer ("I", "my", "we", "tengo"...) or someone named.
_SOMEONE = re.compile(r"^(?:i|i'm|i've|i'd|i'll|my|we|we're|we've|our|yo|mi|mis|nosotros|nuestr[oa]s?|me|nos|he|hemos)\b|"
                      r"\b(?:tengo|tenemos|soy|somos|estoy|estamos|vivo|vivimos|trabajo|trabajamos|llevo|llevamos|"
                      r"prefiero|preferimos|quiero|queremos|necesito|necesitamos|uso|usamos|hago|hacemos|voy|vamos|"
                      r"recojo|salgo|salimos|cierro|cerramos|abro|abrimos|cobro|cobramos|pago|pagamos|facturo|"
                      r"facturamos|odio|suelo|solemos)\b")


# A sentence that opens like a reaction ("It made me...", "This week has been...") but speaks of the writer
# with this many content words is about the writer: "It made me reflect on how far I've come since I started".
REACTION_FIRST_PERSON_WORDS = 3


# What the thing just talked about is, has or holds ("It has adventures, magic, and great characters", "They eat
# vegetables, fruits and insects", "There were 7 people", "Era una temporada intensa con derrotas y victorias"):
# a description, not a reaction, when it tells this many words besides appraisals and feelings.
DESCRIPTION_WORDS = 3
_DESCRIBES = re.compile(
    r"^(?:(?:it|they)\s+(?:really\s+|also\s+|always\s+)?(?:has|have|had|eats?|ate|stands? for|stood for|tells?|told|"
    r"shows?|showed|features?|featured|includes?|included|follows?|followed|covers?|covered)|"
    r"(?:it's|it is|it was|they're|they are|they were)\s+(?:all\s+)?(?:about|an?|made|set|based|called|full of)|"
    r"there(?:'s| is| are| was| were)\s+(?:an?|\d+|some|lots|many|this|these)|"
    r"(?:tiene|tienen|tenia|tenian|come|comen|comia|comian|incluye|incluia|representa|representaba|significa|"
    r"(?:trata|trataba|va|iba)\s+(?:de|sobre))|(?:es|era|fue|son|eran|fueron)\s+(?:un|una|unos|unas|sobre)|"
    r"(?:hay|habia|hubo)\s+(?:un|una|unos|unas|\d+|varios|varias|muchos|muchas))\b")


def _describes(s: Sentence) -> bool:
    """The unit describes the thing just talked about (a book, a dish, a pet, a season) with substance, and
    says nothing of the listener."""
    if not _DESCRIBES.match(s.low) or _LISTENER.search(s.low):
        return False
    told = [w for w in _content_words(s.low) if w not in PHATIC_WORDS and w not in FEELING_WORDS]
    return len(told) >= DESCRIPTION_WORDS


def _about_someone(s: Sentence) -> bool:
    """A note states something about the writer or a named subject, or describes what the talk is about;
    not a reaction to the talk."""
    if _describes(s):
        return True
    if _REACTION.search(s.low):
        opens_on_listener = re.match(r"(?:you|your|you're|yours|tu|tus|usted)\b", s.low)
        first = _FIRST_SINGULAR.search(s.low) or _FIRST_PLURAL.search(s.low)
        if opens_on_listener or not first or len(_content_words(s.low)) < REACTION_FIRST_PERSON_WORDS:
            return False
        return True
    return bool(_SOMEONE.search(s.low) or _TASTE.search(s.low) or _first_singular(s) or
                _FIRST_PLURAL.search(s.low) or _names(s)
                or _NO_SUBJECT.match(s.low) or re.search(r"\d", s.low) or _view_of_the_writer(s))


# A statement with no subject of its own and substance enough ("Contemporary dance is so expressive and
# graceful") is the writer's view, when the gate passed it; never one that speaks to the listener.
VIEW_WORDS = 4
_LISTENER = re.compile(r"\b(?:you|your|you're|yours|yourself|tu|tus|contigo|usted|ustedes|os|vosotros)\b")


def _view_of_the_writer(s: Sentence) -> bool:
    return not _LISTENER.search(s.low) and len(_content_words(s.low)) >= VIEW_WORDS


# A statement of the writer's own life ("I ran a charity race last Saturday") is kept as a note when the
# gate gives it at least this, below its usual threshold: first person, this many content words, no
# reaction, question, order or protected topic.
WRITER_NOTE_REMEMBER = 0.3
WRITER_NOTE_WORDS = 3
# A taste, liked or disliked, said by the writer ("odio el café", "me encanta el té verde", "I hate coffee"): a
# preference of theirs. In Spanish it takes two content words ("no me gusta el café"), where English spends a
# third on the negation ("I don't like coffee").
_TASTE = re.compile(r"\b(?:(?:no\s+)?me\s+(?:gusta|gustan|encanta|encantan|chifla|chiflan|apasiona|apasionan)|odio|detesto|"
                    r"adoro|no soporto|no aguanto|(?:i|we)\s+(?:really\s+|just\s+|absolutely\s+)?(?:love|hate|adore|"
                    r"detest|loathe|can'?t stand|cannot stand|don'?t like|dislike))\b")


# A question typed the quick way, without its mark: "q me queda por cobrar", "k hay hoy", "wat time is it".
_CHAT_QUESTION = re.compile(r"(?:q|k|ke|qe|wat|wht|como|cuanto|cuanta|cuantos|cuantas|cuando|donde|quien|what|how|"
                            r"when|where|who|which|why)\b")


def writer_statement(text: str, loose: bool = False) -> bool:
    """A unit that states something of the writer's own life in the first person, with substance; `loose`
    in a message the gate passed (see `_first_singular`)."""
    s = _strip_lead(Sentence.of(text))
    if not _says_something(s) or is_order(s) or sensitive(s) or "?" in s.text or _CHAT_QUESTION.match(s.low):
        return False
    if not (_first_singular(s, loose) or _FIRST_PLURAL.search(s.low) or _NO_SUBJECT.match(s.low) or
            _TASTE.search(s.low)):
        return False
    if _LISTENER.search(without_listener_gift(s.low)):
        return False  # about the listener as much as the writer ("I'm proud of you")
    words = len(_content_words(s.low))
    return _about_someone(s) and (words >= WRITER_NOTE_WORDS or (words >= 2 and bool(_TASTE.search(s.low))))


def describes_the_topic(text: str) -> bool:
    """A unit that describes what the talk is about with substance ("They eat vegetables, fruits and insects",
    "Va de una mujer de treinta años tras una pérdida"): kept as a note the gate is less sure of, as the writer's
    own statements are; never a question, an order or a protected topic."""
    s = _strip_lead(Sentence.of(text))
    return _says_something(s) and not is_order(s) and not sensitive(s) and "?" not in s.text and _describes(s)


def _attribute(low: str, subject: str, stored: tuple[str, ...], label: str, hint: str = "",
               correction: bool = False) -> str:
    """The attribute of a note. Notes are many-valued: `nota_<topic>_<two content words>`, so an unrelated
    note never shares a name with it; only a correction takes the stored name of its topic, to replace it."""
    # hint is the question a short answer replies to: its topic counts when the answer has none.
    body = low.replace(fold(label), " ") if label else low
    contact = subject.startswith(("contact:", "name:"))
    if contact and _BANK_TOPIC.search(body):
        return "cuenta_bancaria"
    topic, regex = "", None
    for text in (body, hint.replace(fold(label), " ") if label else hint):
        for pattern, own, other in _TOPICS:
            if text and pattern.search(text):
                topic, regex = (other if contact else own), pattern
                break
        if topic:
            break
    words = _content_words(body)
    if correction:
        if regex is not None:
            name = _reuse(regex, topic, stored)
            if name in stored:
                return name
        for name in stored:
            # Only another note may be superseded by a note: a rule's fact (cuenta_bancaria, plazo_pago...)
            # sharing a word with the clause is a different fact.
            if generic_name(name) and any(w in name.split("_") for w in words):
                return name
    key = "_".join(dict.fromkeys(re.sub(r"[^a-z0-9]+", "", w)[:8] for w in words if w[:1].isalpha()))
    key = "_".join(key.split("_")[:2]).strip("_")
    return "_".join(p for p in ("nota", topic, key) if p) if (topic or key) else "nota"


def generic_name(name: str) -> bool:
    """A stored name no rule family owns (a note or a topic name), so a generic fact may take it."""
    key = re.sub(r"[^a-z0-9]+", "_", fold(name)).strip("_")
    return key not in MEMBER_OF and key not in BANK_ATTRIBUTES


def _topic_text(s: Sentence) -> str:
    """The folded sentence without its multi-word names ("Helen Price" is not about prices)."""
    low = s.low
    for text, start, end in name_runs(s, 0, len(s.text)):
        if " " in text:
            low = low[:start] + " " * (end - start) + low[end:]
    return low


def _reuse(topic: re.Pattern, canonical: str, stored: tuple[str, ...]) -> str:
    """The stored name of the same family or topic ("horario_reparto" for a clause on deliveries), else canonical."""
    name = reuse_attribute(canonical, stored)
    if name != canonical or canonical in stored:
        return name
    for name in stored:
        key = re.sub(r"[^a-z0-9]+", "_", fold(name)).strip("_")
        # A name the rules file under a family is that family's, even if it shares a word with this topic.
        if generic_name(name) and topic.search(key.replace("_", " ")):
            return name
    return canonical


def third_person(clause: str, subject: str) -> str:
    """A plain third-person sentence from a first-person clause (best effort, word for word)."""
    low = fold(clause)
    english = is_english(clause)
    if subject not in ("self", "org"):
        return clause
    who = ("The person" if subject == "self" else "The business") if english else \
        ("La persona" if subject == "self" else "La empresa")
    words = clause.split()
    if english:
        for start, verb in _EN_START.items():
            if low.startswith(start + " "):
                rest = clause[len(start) + 1:]
                return f"{who} {verb} {_swap(rest, _EN_PRONOUNS)}"
        m = re.match(r"(?:i|we)\s+(?:(even|just|also|really|finally|still|never|always|already|recently|"
                     r"actually|totally)\s+)?(\w+)\s+(.*)$", low)
        if m and m.group(2) not in ("don't", "do", "can't", "won't"):
            verb = m.group(2)
            if not (verb.endswith("ed") or verb in _EN_PAST):
                verb = verb + ("es" if verb.endswith(("s", "sh", "ch", "x", "o")) else "s")
            adverb = f"{m.group(1)} " if m.group(1) else ""
            return f"{who} {adverb}{verb} {_swap(clause[m.start(3):], _EN_PRONOUNS)}"
        if subject == "self" and _NO_SUBJECT.match(low) and not low.startswith(("been ", "gonna", "gotta", "wanna")):
            return f"{who} {clause[:1].lower()}{_swap(clause[1:], _EN_PRONOUNS)}"  # "Lost my job" -> "The person lost their job"
        return f"{who}: {_swap(clause, _EN_PRONOUNS)}"
    table = _ES_SINGULAR if subject == "self" else {**_ES_SINGULAR, **_ES_PLURAL}
    skip = 1 if words and fold(words[0]) in ("yo", "nosotros", "nosotras") else 0
    rest_words = words[skip:]
    negation = ""
    if rest_words and fold(rest_words[0]) in ("no", "ya", "nunca", "tambien", "siempre"):
        negation, rest_words = rest_words[0].lower() + " ", rest_words[1:]
    if rest_words:
        first = fold(rest_words[0])
        two = fold(" ".join(rest_words[:2]))
        if two in table:
            return f"{who} {negation}{table[two]} {_swap(' '.join(rest_words[2:]), _ES_PRONOUNS)}".rstrip()
        verb = table.get(first)
        if verb is None and subject == "org" and re.fullmatch(r"\w{2,}(?:amos|emos|imos)", first):
            verb = re.sub(r"(?:amos)$", "a", re.sub(r"(?:emos|imos)$", "e", rest_words[0].lower()))
        if verb is not None:
            return f"{who} {negation}{verb} {_swap(' '.join(rest_words[1:]), _ES_PRONOUNS)}".rstrip()
    return f"{who}: {_swap(clause, _ES_PRONOUNS)}"


def event_what(value: str, subject: str) -> str:
    """What happened at an event, in the third person when it is told in the first ("I went to a pottery
    class" -> "The person went to a pottery class"), else as said ("reunión con Acme")."""
    value = value[:1].upper() + value[1:]
    said = third_person(value, subject)
    return value if re.match(r"(?:The person|The business|La persona|La empresa):", said) else said


def _without_span(text: str, start: int, end: int) -> str:
    """The text without the words in [start, end) (a date) and a "desde" left before it, spaces and
    punctuation tidied."""
    out = re.sub(r"\s+", " ", re.sub(r"(?i)\s+desde\s*$", "", text[:start]) + " " + text[end:])
    return re.sub(r"\s+([!?.,;:])", r"\1", out).strip()


# English first-person contractions and "I am/was" read in the third person ("I'm gonna" -> "they're gonna").
_EN_CONTRACTIONS = ((re.compile(r"\bI'm\b|\bI am\b", re.I), "they're"), (re.compile(r"\bI was\b", re.I), "they were"),
                    (re.compile(r"\bI'll\b", re.I), "they'll"), (re.compile(r"\bI'd\b", re.I), "they'd"))


def _swap(text: str, table: dict[str, str]) -> str:
    if table is _EN_PRONOUNS:
        for regex, said in _EN_CONTRACTIONS:
            text = regex.sub(said, text)
    out = re.sub(r"\b(\w+)\b", lambda m: table.get(m.group(1).lower(), m.group(1)), text)
    return re.sub(r"\s+", " ", out).strip()


def note(s: Sentence, mentions: list[Mention], recent: list[Mention], context: ExtractionContext,
         category: str, scope: str | None) -> Fact | None:
    """The generic fact of one unit the gate passed, or None (a question, an order, a protected topic...)."""
    whole = context.message or ""
    bank = bool(_BANK_TOPIC.search(fold(whole)))
    s = _strip_lead(s)
    view = states_a_view(s.text)
    # A short reply ("a 60 días", "Marisa") reads its subject and topic from the question it answers; after a
    # turn that asks nothing it is a reaction ("Nice job, Maria!" to "I won!"), no answer.
    previous = Sentence.of(context.previous_assistant) if context.previous_assistant and \
        "?" in context.previous_assistant and \
        len(next(split_sentences(s.low), "").split()) <= SHORT_ANSWER_WORDS else None
    # "yes" to "Do you still ride horses?" says what its question does ("I still ride horses").
    said = completed_answer(previous.text, whole) if previous is not None else None
    if not (_says_something(s) or view or (said and _says_something(Sentence.of(said)))) or is_order(s) or \
            sensitive(s):
        return None  # a clause on a special category is refused; the message's other sentences are not
    if _HOW_IT_WENT.match(s.low.rstrip(" !.")):
        return None  # "I had a great time yesterday!": how it went, no fact
    if not mentions and not recent and previous is None and not view and not _about_someone(s):
        return None  # "It's peaceful and special", "I love it": a reaction, not a fact about anyone
    value = _safe(clean_value(s.text))
    if len(value) < 2:
        return None
    resolved = _subject(s, mentions, recent, category, scope, previous)
    if resolved is None:
        return None
    key, label, memory_category = resolved
    stored = tuple(context.known_attributes.get(key, ()))
    event_date = None
    past = told_in_past(s.low, s.text)
    if memory_category == "event" or (past and key == "self"):
        # A dated event, coming or told in the past ("I ran a charity race last Saturday"): kept as an event
        # with its day, resolved against when the message was sent; its value without the date's words.
        found = find_date(s.low, context.today, past=past)
        if found and (past or found[0] >= context.today):
            event_date, memory_category = found[0], "event"
            if len(s.low) == len(s.text):
                value = _safe(clean_value(_without_span(s.text, found[1], found[2]))) or value
    if key in ("self", "org") and bank and memory_category != "event":
        return None  # the business's own account is only ever read by the bank-account rule
    asked = _question_answered(previous, s)
    attribute = "evento" if memory_category == "event" else \
        _attribute(fold(whole) if bank else f"{fold(asked)} {_topic_text(s)}" if asked else _topic_text(s), key,
                   stored, label, previous.low if previous else "", correction=bool(CORRECTION.search(s.low)))
    answer = value
    if asked:
        # The reply as said, its "sí" or "no" and what it adds included ("Three times a week. It keeps us on
        # track"), when it is short enough to keep whole.
        if len(whole.split()) <= ANSWER_WORDS and not bank:
            answer = _safe(clean_value(whole)) or value
        value = _safe(f"{asked} — {answer}")
    if memory_category == "event":
        body = event_sentence(event_date, event_what(value, key), is_english(value))
    elif asked:
        body = _answer_sentence(asked, answer, key, label)
    else:
        body = third_person(value, key)
    if view and key == "self" and re.match(r"(?:The person|La persona): ", body) and \
            not _FIRST_SINGULAR.search(s.low):
        # "The person thinks: Setbacks are just opportunities for comebacks": a view in general is said as the
        # writer's, its words as written ("Pets bring us joy": the "us" of everyone, not of a business).
        body = f"{'The person thinks' if is_english(value) else 'La persona piensa'}: {value}"
    if label and fold(label) not in fold(body):
        body = f"{label}: {body}"
    sentence = _safe(body[:1].upper() + body[1:]).rstrip(".!") + "."
    return Fact(subject=key, attribute=attribute, value=value, sentence=sentence, category=memory_category,
                event_date=event_date, confidence=CONFIDENCE)


# A short reply means little alone ("los sábados" to "¿Sigues con la hípica?", "three times a week" to "How often
# do you work out?"): its note keeps the question it answers, first, up to this many characters of it.
QUESTION_CHARS = 120
ANSWER_WORDS = 3 * SHORT_ANSWER_WORDS


def _question_answered(previous: Sentence | None, answer: Sentence) -> str:
    """The question a short reply answers: the last sentence of the turn before it that asks one (from its
    "¿" when it has one), unless the reply already says most of what the question names; else ""."""
    if previous is None:
        return ""
    asked = question_of(previous.text)
    words = set(_content_words(fold(asked)))
    if not words or len(words & set(_content_words(answer.low))) * 2 >= len(words):
        return ""
    return _safe(asked if len(asked) <= QUESTION_CHARS else "…" + asked[-(QUESTION_CHARS - 1):])


def _answer_sentence(asked: str, answer: str, subject: str, label: str) -> str:
    """Who answered what, the question quoted as asked: "La persona, a la pregunta «¿Sigues con la hípica?»:
    sí, los sábados"; 'The person, asked "How often do you work out?": three times a week'."""
    english = is_english(f"{asked} {answer}")
    who = label or {"self": ("the person", "la persona"), "org": ("the business", "la empresa")}.get(
        subject, ("", ""))[0 if english else 1]
    said = f'asked "{asked}": {answer}' if english else f"a la pregunta «{asked}»: {answer}"
    return f"{who}, {said}" if who else said


def generic_fact(read: list[tuple[Sentence, list[Mention], list[Mention]]],
                 context: ExtractionContext) -> Fact | None:
    """One generic fact from the first unit that states something, under the message's gate category."""
    if find_bank_account(context.message or "") or (context.gate_category or "nothing") not in GATE_CATEGORIES:
        return None  # a bank account is the bank rule's and the policy's business, never a generic note
    for s, mentions, recent in read:
        fact = note(s, mentions, recent, context, context.gate_category or "nothing", context.gate_scope)
        if fact is not None:
            return fact
    return None


# ------------------------------------------------------------------------------------ views and values
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
    s = _strip_lead(Sentence.of(text))
    if not s.low or "?" in s.text or "¿" in s.text or is_order(s) or sensitive(s):
        return False
    low = _VIEW_LEAD.sub("", s.low.strip(" .!-"))
    low = _GENERIC_YOU.sub(lambda m: re.sub(r"\byou\b", "one", m.group()), low)
    if _LISTENER.search(without_listener_gift(low)) or re.match(r"(?:let's|lets|let us|vamos a|hay que)\b", low):
        return False
    # "I think" / "creo que" hedge a fact ("creo que paga a 60 días"), not a view: what follows it must state.
    opinion = _OPINION.match(low)
    rest = low[opinion.end():] if opinion else low
    if not statement(Sentence.of(rest)):
        return False
    told = [w for w in _content_words(rest) if w not in PHATIC_WORDS and w not in FEELING_WORDS]
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
        of = [w for w in _content_words(rest[it_is.end() - len(it_is.group().split()[-1]):])
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
