"""The local extractor's generic fact: what a message the gate passed says, when no rule read its shape.

The gate already judged the message durable; this keeps its first stated clause as one atomic fact: the
subject resolved as the rules do, the gate's category, an attribute named after the clause's topic
(stable for the same topic, reusing a stored name), the clause as the value (fenced-safe and capped) and
a plain third-person sentence. Questions, hypotheticals, orders and injections still yield nothing.

Here: the note itself (`note`, `generic_fact`), who it is about (`_subject`, and `closer` for a business's
closing days), its attribute, the short reply that keeps its question, and which units are the writer's own
statements (`writer_statement`, `describes_the_topic`). What it reads from elsewhere: the writer, the listener
or no subject (`speaker`), content words and topic families (`topics`), special categories (`sensitive`), the
third-person sentence (`third_person`) and views and values (`views`).
"""
from __future__ import annotations

import re
import unicodedata

from memory_core.backends.local_extractor.answers import (
    SHORT_ANSWER_WORDS,
    completed_answer,
    question_of,
    reads_as_reply,
)
from memory_core.backends.local_extractor.business import names_own_bank
from memory_core.backends.local_extractor.clauses import DURABLE, MAYBE, holds_from, is_order, statement, strip_lead
from memory_core.backends.local_extractor.names import (
    COMPANY_WORDS,
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
from memory_core.backends.local_extractor.personal import told_in_past
from memory_core.backends.local_extractor.sensitive import sensitive
from memory_core.backends.local_extractor.speaker import (
    FIRST_PLURAL,
    FIRST_SINGULAR,
    LISTENER,
    NO_SUBJECT,
    between_us,
    first_singular,
)
from memory_core.backends.local_extractor.subjects import contact_subject, event_sentence, trade
from memory_core.backends.local_extractor.text import (
    Sentence,
    clean_value,
    fold,
    is_english,
    normalise_name,
    split_sentences,
)
from memory_core.backends.local_extractor.third_person import event_what, third_person
from memory_core.backends.local_extractor.topics import (
    STOP,
    TOPICS,
    content_words,
    speaks_of_a_bank,
    trades_with,
    without_idioms,
)
from memory_core.backends.local_extractor.units import FEELING_WORDS, PHATIC_WORDS, without_listener_gift
from memory_core.backends.local_extractor.views import states_a_view
from memory_core.domain.change_words import CORRECTS
from memory_core.domain.dates import WEEKDAY_WORD, find_date, span_until
from memory_core.domain.families import MEMBER_OF, reuse_attribute
from memory_core.domain.ladder import BANK_ATTRIBUTES
from memory_core.domain.model_port import ExtractionContext, Fact
from memory_core.domain.policy import find_bank_account
from memory_core.domain.vocabulary import GATE_CATEGORIES

VALUE_MAX_CHARS = 200
CONFIDENCE = 0.6

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


def _safe(text: str) -> str:
    """Fence-safe and capped: no control, format or separator characters, no angle-bracket runs."""
    clean = "".join(" " if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp", "Cs") else ch for ch in text)
    clean = re.sub(r"\s+", " ", clean.replace("<", "‹").replace(">", "›")).strip()
    if len(clean) > VALUE_MAX_CHARS:
        clean = clean[: VALUE_MAX_CHARS - 1].rstrip() + "…"
    return clean


# A sentence a rule read a personal fact from that tells this many content words more than the fact's values
# ("I took my turtles to the beach in Tampa yesterday": a pet, and a day out) is also kept as a note.
MORE_WORDS = 4
# Of a customer or supplier, a word more: the verb of the fact a rule read ("nos paga a 60 días por
# transferencia y siempre pide factura en papel" tells nothing the term, the method and the format leave out).
CONTACT_MORE_WORDS = MORE_WORDS + 1


def says_more(s: Sentence, values: list[str], more: int = MORE_WORDS) -> bool:
    """The sentence tells `more` content words than the typed values a rule read from it."""
    told = {w[:5] for v in values for w in content_words(fold(v))}
    return sum(1 for w in content_words(strip_lead(s).low) if w[:5] not in told) >= more


def _says_something(s: Sentence) -> bool:
    """A statement with content (a word or a number), or a standing rule ("cuando me escribas, sé breve")."""
    if not (content_words(s.low) or re.search(r"\d", s.low)):
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
        if fold(text) in STOP or fold(text.split()[0]) in NOT_NAMES:
            continue
        out.append(text)
    return out


# "Mrs Adeyemi at Linden Nursery", "el señor Ferrer, de Muebles Ferrer": someone named by the business they are at.
_AT_BUSINESS = re.compile(r"\s*,?\s*(?:at|from|of|de|del|en)\s+(?:(?:la|el|the)\s+)?")


def _business_of(s: Sentence, names: list[str]) -> str:
    """The first name, or the business it is someone at when the second name follows as that business: a customer's
    or supplier's note is on the business, not on the person who works there."""
    first = s.text.find(names[0])
    if len(names) > 1 and first >= 0 and looks_like_company(names[1]):
        at = _AT_BUSINESS.match(s.text, first + len(names[0]))
        if at and s.text.startswith(names[1], at.end()):
            return names[1]
    return names[0]


def _business_dealt_with(s: Sentence) -> str | None:
    """The first business named in capitals right after dealing with it ("we stopped working with Apex Cleaning")."""
    return next((text for text, start, _ in names_in(s) if looks_like_company(text) and dealt_with(s, start)), None)


# What makes an order one for every time: "siempre", "never", "whenever", "no le hagas más pedidos hasta que pague".
_STANDING = re.compile(rf"{DURABLE.pattern}|\b(?:hasta que|until)\b")
# A name of two words or more that something is done to or for ("escribas a Harper Build", "quote for Kestrel Homes").
_TO_SOMEONE = re.compile(r"\b(?:a|al|para|for|to|with|con)\s+$")


def standing_instruction(s: Sentence) -> bool:
    """A standing instruction about a business the unit names ("Cuando le hagas un presupuesto a Reformas Ibarra,
    ponle siempre el IVA aparte", "Whenever you quote for Kestrel Homes, add 10%"): news of that business, however
    much it reads like an order for now."""
    return bool(_STANDING.search(s.low)) and not FIRST_SINGULAR.search(s.low) and statement(s) and any(
        looks_like_company(text) or dealt_with(s, start) or (" " in text and _TO_SOMEONE.search(s.low[:start]))
        for text, start, _ in names_in(s))


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
    r"paint\w*|pint\w*|guitar\w*|piano|violin|music|musica|sing\w*|dance|danc\w*|bail\w*|running|run(?!-)|hike|"
    r"hiking|camping|vacation|holiday|trip|viaje|vacaciones|garden\w*|jardin\w*|cook\w*|cocin\w*|"
    r"vegetarian\w*|vegan\w*|vegetarian[oa]|comida|food|diet|dieta|friends?|amig[oa]s?|birthday|cumpleanos|"
    r"school|college|university|universidad|colegio|class|clases|book|books|libros?|read\w*|lee(?:s|mos|n|r)?\b|leyendo|leido|"
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
# What only a business speaks of, beyond its premises and hours: its trade (the topic families of prices,
# payment, invoicing, delivery, staff, taxes...), its work and its paperwork.
_BUSINESS_TOPICS = ("descuento", "forma_pago", "precios", "plazo_pago", "facturacion", "entregas", "plantilla", "web",
                    "seguros", "fiscal", "fundacion", "garantia", "herramientas", "relacion")
_BUSINESS_WORDS = re.compile(
    r"\b(?:horarios?|opening hours|abris|cerrais|do you (?:open|close)|trabajamos|we work|ship\w*|envi(?:amos|ar)|regimen|modulos|autonom[oa]s?|"
    r"retencion\w*|nominas?|payroll|contrat\w*|contracts?|servicios?|services?|productos?|products?|catalog\w*|"
    r"ventas?|sales?|obras?|reformas?|proyectos?|projects?|encargos?|jobs?|direccion|address|banco|bank|"
    r"reuniones|meetings?|turnos?|shifts?|gestor\w*|contabilidad|accounting|accountant|devoluci\w+|returns|refunds?|"
    r"reembolsos?|store credit|receipts?|tickets? de compra|deliver\w*|repart(?:imos|iamos|o|os)|mercadillos?|stalls?|"
    r"puesto de|(?:do|doing|did|hacemos|haciamos|hacer)\s+(?:the|el|la)\s+(?:\w+\s+)?(?:market|mercadillo|feria)|"
    # what the business sells or stocks ("we've stopped stocking Coca-Cola", "ya no vendemos prensa"), not a
    # thing the household sold once ("we sold the car")
    r"(?:we|we're|we've|we are|we have|we don't|we no longer|we never)\s+(?:\w+\s+){0,2}?(?:sell|selling|stock|"
    r"stocking|carry|carrying)|vendemos|vendiamos|(?:dejado|dejar|dejamos) de vender|"
    # its catalogue and stock ("stock" itself is a BUSINESS_THING): "lo hemos descatalogado", "no nos queda nada
    # hasta finales de mes", "our best seller"
    r"descatalog\w*|discontinu\w*|best ?sellers?|lo mas vendido|inventario|stocktake|no nos queda(?:n)?|"
    r"se nos ha(?:n)? acabado|we(?:'ve| have)? run out|referencias?)\b")


# The business telling what it is ("Somos una carpintería de cinco personas", "We're a family-run bakery in Leeds") or
# its tax footing ("We're VAT registered", "Facturamos con IVA al 21%"), whatever else the sentence says of the family;
# and, in a sentence of nothing personal, since when it trades, its busy months, how many work in it: the business's
# own, said with "we".
_ONLY_A_BUSINESS = re.compile(
    r"^(?:somos|we'?re|we are)\s+(?:un|una|a|an)\s+(?:[\w-]+\s+){0,3}?(?:" + "|".join(sorted(COMPANY_WORDS)) + r")\b|"
    r"\b(?:vat registered|flat rate scheme|dados de alta en el iva|recargo de equivalencia|facturamos|we invoice)\b")
_SELF_DESCRIBED = re.compile(
    r"\b(?:trading|in business|abiertos|abierto|en marcha)\s+(?:since|for|desde|hace)\b|"
    r"\b(?:mes fuerte|meses fuertes|temporada (?:alta|baja)|busiest|quietest|(?:high|low|peak) season)\b|"
    r"\b(?:there are|we are|we'?re|somos)\s+(?:\d+|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|dos|"
    r"tres|cuatro|cinco|seis|siete|ocho|nueve|diez|once|doce)\b(?=.*\b(?:including|incluid\w+|apprentices?|aprendices|"
    r"empleados|employees|staff|trabajando|working|en (?:la empresa|el taller|la tienda|la oficina)|"
    r"in (?:the )?(?:company|team|shop|office|workshop))\b)")


def speaks_business(s: Sentence) -> bool:
    """The sentence speaks of what only a business has or does: "we/our" in it is the business, not the writer's
    household or the two people talking ("cobramos por transferencia", "our quotes include transport")."""
    low = without_idioms(s.low)
    return bool(BUSINESS_THING.search(low) or _OPENING.search(low) or _BUSINESS_WORDS.search(low) or
                any(pattern.search(low) for pattern, own, _ in TOPICS if own in _BUSINESS_TOPICS))


# A home said the way people say it: "our place in Cornwall", "a little place in the Algarve", "my place by the
# lake" (a place of the writer's own, then where it is).
_OWN_PLACE = re.compile(r"\b(?:our|my|a|his|her|their)\s+(?:(?:little|small|tiny|old|new|own|family|holiday|summer|"
                        r"beach|country|second)\s+){0,2}place\s+(?:in|at|by|near|on|up|down|out)\b")
# Where people rest (the beach, the village, the lake): the household's, unless the business has premises there
# ("nuestro local de la playa abre en junio").
_LEISURE_PLACE = re.compile(r"\b(?:beach|playa|pueblo|village|seaside|countryside|lake)\b")


_AT_THE_CUSTOMERS = re.compile(r"\bhome\s+(?:deliver\w*|visits?|service|installations?)\b")


def _personal_topic(low: str) -> bool:
    """A topic of the writer's own life (family, home, pets, hobbies), a home of theirs however said, a resort
    where the business has nothing, or a move of no business premise. A service brought to the customer's home
    ("home deliveries") is no home of the writer's."""
    low = _AT_THE_CUSTOMERS.sub(" ", low)
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
    if FIRST_SINGULAR.search(before):
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
                fold(text) in STOP or fold(text.split()[0]) in NOT_NAMES or not _subject_of(s, end, m.start()):
            continue
        if start == 0 and " " not in text and _COMMON_START.match(fold(text)):
            continue  # "Mañana cierra...": a sentence's first word, no name
        if best is None or end > best[0]:
            best = (end, "name", text)
    if best is not None:
        return best[1], best[2]
    if FIRST_PLURAL.search(s.low[:m.end()]) or BUSINESS_THING.search(before):
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


# The business's staff by their trade, as a sentence's subject: "El repartidor nuevo se llama Iván", "Our new
# driver is Tom", "la nueva administrativa entra en septiembre". Not another's ("el repartidor de Transportes
# Beltrán"), nor the writer's own ("my accountant").
_STAFF = re.compile(
    r"^(?:the|our|el|la|nuestr[oa])\s+(?:new\s+|nuev[oa]\s+)?(?:repartidor[a]?|administrativ[oa]|encargad[oa]|"
    r"dependient[ea]|camarer[oa]|cociner[oa]|mecanic[oa]|comercial|recepcionista|contable|conductor[a]?|chofer|"
    r"transportista|aprendiz|becari[oa]|secretari[oa]|tecnic[oa]|cajer[oa]|limpiador[a]?|jefe de taller|"
    r"delivery (?:guy|driver|man|person)|driver|receptionist|shop assistant|sales assistant|cashier|bookkeeper|"
    r"waiter|waitress|chef|cook|mechanic|sales rep|intern|apprentice|secretary|technician|foreman|cleaner|"
    r"storekeeper|warehouse (?:guy|manager)|"
    # someone the business employs, named by when they work or that they are new: "la chica nueva", "our Saturday
    # girl", "el chaval de los findes"
    r"(?:saturday|sunday|weekend|part-time|new)\s+(?:girl|boy|lad|guy|helper|assistant)|"
    r"(?:chic[oa]|chaval(?:a)?|emplead[oa]|trabajador[a]?)\s+(?:nuev[oa]|de los (?:sabados|findes|fines de semana)))"
    r"(?:\s+nuev[oa])?\b(?!\s+(?:de|del|of|from|at|en|in)\b(?!\s+(?:la tienda|el taller|la oficina|el almacen|"
    r"el bar|the shop|the office)\b))")
# Someone named alone by their working days, shifts or days off ("Marta libra los lunes", "Jake only works
# Saturdays"): the business's staff. (Where someone works, "trabaja en un banco", is no shift.)
_SHIFT = re.compile(
    r"^[a-z]+\s+(?:solo\s+|only\s+|just\s+|ahora\s+|now\s+)?(?:libra|libran|trabaja|works|is off|has|tiene|entra|"
    r"starts|sale|finishes|hace|does)\s+(?:(?:los|el|las|on|the|de|a las|at|libre\s+(?:los|el))\s+)?"
    rf"(?:{WEEKDAY_WORD}|mananas|tardes|noches|fines de semana|findes|mornings|afternoons|evenings|nights|weekends|"
    r"turnos? de \w+|(?:morning|evening|night|early|late) shifts?|\w+ off)\b")


# A question on the business's premises: when they open or close, where they are ("What time does the warehouse
# close on Fridays?", "¿Dónde tenéis el almacén?", "Is your shop open on Sundays?"); its answer is the business's.
_ASKS_PREMISES = re.compile(r"\b(?:abre|abren|abris|cierra|cierran|cerrais|open|opens|close|closes|closed|donde|where)\b")
# A question on the person's own day, even at the premises ("¿A qué hora sales de la oficina?"): theirs.
_ASKS_THE_PERSON = re.compile(r"\b(?:sales|entras|llegas|terminas|empiezas|acabas|vuelves|do you (?:leave|get|start|"
                              r"finish|arrive|come|go)|are you (?:in|at|off|back))\b")


def _asked_of(previous: Sentence | None) -> str | None:
    """Whose the answer to the assistant's question is by the question alone: "self" when it asks about the person's
    own day, "org" when it asks when the business's premises open or close or where they are; else None."""
    if previous is None or _names(previous):
        return None
    if _ASKS_THE_PERSON.search(previous.low):
        return "self"
    if BUSINESS_THING.search(previous.low) and _ASKS_PREMISES.search(previous.low):
        return "org"
    return None

# Someone the business has just taken on ("ha entrado una chica nueva, Irene", "we've taken on a new lad, Sam").
_NEW_STAFF = re.compile(
    r"\b(?:ha entrado|ha empezado|empieza|entra|hemos contratado|hemos cogido|contratamos|tenemos|"
    r"(?:we(?:'ve| have)?\s+)?(?:just\s+)?(?:hired|taken on|took on|got)|has (?:started|joined)|started|joined)\s+"
    r"(?:a trabajar\s+)?(?:un|una|a|an)\s+(?:new\s+)?(?:chic[oa]|chaval[a]?|emplead[oa]|dependient[ea]|trabajador[a]?|"
    r"repartidor[a]?|administrativ[oa]|girl|guy|lad|assistant|member of staff|starter|shop assistant)(?:\s+nuev[oa])?\b")


# Someone named alone by the work they do for the business ("Sarah does payroll", "Ellie's taking over social media",
# "Luis lleva los pedidos"), or by leaving it: the business's staff.
_DUTY = re.compile(
    r"^[a-z]+(?:'s)?\s+(?:does|handles|runs|looks after|takes care of|manages|is in charge of|(?:is |'s )?taking over|takes "
    r"over|lleva|llevara|se encarga de|se encargara de|gestiona|se ocupa de)\s+(?:all\s+)?(?:the\s+|our\s+|el\s+|la\s+|"
    r"los\s+|las\s+|nuestr[oa]s?\s+)?(?:payroll|nominas|instagram|social media|redes(?: sociales)?|website|web|quotes|"
    r"presupuestos|accounts|cuentas|books|bookkeeping|contabilidad|facturas|facturacion|invoices|invoicing|orders|pedidos|"
    r"deliveries|repartos|rota|turnos|marketing|stock|almacen|warehouse|till|caja|bookings|reservas)\b|"
    # or who left it: "Mohammed's left us", "Marta se ha ido de la empresa"
    r"^[a-z]+(?:'s|\s+has)\s+left\s+(?:us|the\s+(?:team|shop|company|business|office))\b|"
    r"^[a-z]+\s+(?:se ha ido|nos ha dejado|se ha marchado|ya no trabaja con nosotros)\b")


def _works_shifts(s: Sentence) -> bool:
    """Someone named by their first name alone, then when they work ("Marta libra los lunes") or the work they do
    for the business ("Sarah does payroll")."""
    first = s.text.split(maxsplit=1)[0] if s.text else ""
    return first[:1].isupper() and fold(first) not in STOP and fold(first) not in NOT_NAMES and bool(
        _SHIFT.match(s.low) or _DUTY.match(s.low))


# "They"/"their" opening a unit: the business the talk is on, when it is on one ("Just had Northern Packaging on the
# phone. Their minimum order is going up").
THEY_FIRST = re.compile(r"(?i)^(?:they've|they're|they'll|they|their)\b")
# "It's Tuesdays they're shut now": "they" after what the sentence puts first.
_THEY_CLEFT = re.compile(r"^it'?s\s+(?:\w+\s+){1,3}?they(?:'re|'ve|'ll)?\b")
# "We" doing something to "them" ("we've moved them up to 15%", "les hemos subido el descuento al 12%"): of the
# business the talk is on, as a "they" would be.
_TO_THEM = re.compile(r"^(?:we|we've|we're|we'll|we'd)\s+(?:\w+\s+){0,2}?(?:them|their)\b|"
                      r"^(?:ya\s+|ahora\s+)?(?:les|los)\s+(?:hemos|hacemos|cobramos|damos|pasamos|subimos|bajamos|"
                      r"ponemos|dejamos|facturamos|mandamos|enviamos)\b")


def business_in_talk(recent: list[Mention]) -> Mention | None:
    """The one customer, supplier or business by name the talk is on, else None: a contact of the address book, a
    name with a company word, or a name of two capitalised words or more ("Kestrel Print"); a first name is no
    "they"."""
    distinct = {m.contact.id: m for m in recent}
    if len(distinct) != 1:
        return None
    m = next(iter(distinct.values()))
    return m if m.contact.kind in ("customer", "supplier") or looks_like_company(m.contact.name) or \
        len(m.contact.name.split()) >= 2 else None


_CALLED = re.compile(r"^(?:y\s+|and\s+)?(?:se\s+llaman?|se\s+llamaba|(?:her|his|its|their)\s+names?(?:\s+is|'s)|"
                     r"(?:she|he|it)(?:'s|\s+is)\s+called)\s")


def _subject(s: Sentence, mentions: list[Mention], recent: list[Mention], category: str,
             scope: str | None, previous: Sentence | None = None) -> tuple[str, str, str] | None:
    """(subject key, label, memory category): I/me/my is the writer; we/our is the writer's household
    on a personal topic and the business on a business one; a contact or a name only when named."""
    if not mentions and (THEY_FIRST.match(s.text) or _TO_THEM.match(s.low) or _THEY_CLEFT.match(s.low)) and \
            (business := business_in_talk(recent)) is not None:
        subject = contact_subject(business.contact, 0.7, s.low)
        return subject.key, subject.label, subject.category
    if (_STAFF.match(s.low) or _works_shifts(s) or _NEW_STAFF.search(s.low)) and not FIRST_SINGULAR.search(s.low) and \
            all(m.contact.kind == "named" for m in mentions):
        return "org", "", "company"  # the business's staff, named or not, is the business's
    if not mentions and _CALLED.match(s.low):
        # "Se llama Alba por cierto": the name of whoever was just talked of, never a business called so.
        if recent:
            subject = contact_subject(recent[0].contact, recent[0].confidence, s.low)
            return subject.key, subject.label, subject.category
        return "self", "", "person"
    asked = None if mentions else _asked_of(previous)
    if asked == "self" or (asked == "org" and not FIRST_SINGULAR.search(s.low)):
        return (asked, "", "person") if asked == "self" else (asked, "", "company")
    if mentions and category not in ("person", "event"):
        best = min(mentions, key=lambda m: m.start)
        subject = contact_subject(best.contact, best.confidence, s.low)
        return subject.key, subject.label, subject.category
    closing = closer(s, mentions)
    if closing is not None:
        # Another business's closing days or hours are that business's, whatever category the gate gave ("Muebles
        # Soler cierra del 10 al 25 de agosto" read as an event): never the writer's own. The writer's business
        # closing on a day ("cerramos del 1 al 15 de agosto") is the business's event, shared; its hours ("el
        # taller cierra los sábados") the business's.
        kind, who = closing
        if kind == "mention":
            subject = contact_subject(who.contact, who.confidence, s.low)
            return subject.key, subject.label, subject.category
        if kind == "name":
            return f"name:{normalise_name(who)}", who, trade(s.low, category)
        return "org", "", "event" if category == "event" else "company"
    business = _business_typed_lower(s) or _business_dealt_with(s)
    # A business's own words are no topic of the writer's life ("bright paints", "viveros del pueblo").
    personal = _personal_topic(s.low.replace(fold(business), " ") if business else s.low)
    if business and (category not in ("person", "event") or s.low.startswith(fold(business)) or
                     (FIRST_PLURAL.search(s.low) and not FIRST_SINGULAR.search(s.low) and
                      dealt_with(s, s.low.find(fold(business))))) and not personal:
        # "muebles soler cierra en agosto", "ya no trabajamos con reformas galan": the business it names in full.
        kind = trade(s.low, category)
        return f"name:{normalise_name(business)}", business, kind
    singular, plural = bool(FIRST_SINGULAR.search(s.low)), bool(FIRST_PLURAL.search(s.low))
    # "We" is the business only when the sentence speaks business; else it is the writer's own life ("we love
    # being outdoors"), kept for the writer alone: what is not said to be the business's is never shared.
    business = speaks_business(s) or trades_with(s) or (previous is not None and speaks_business(previous))
    if plural and not singular and category in ("person", "preference", "company", "nothing") and (
            _ONLY_A_BUSINESS.search(s.low) or (_SELF_DESCRIBED.search(s.low) and not personal)):
        return "org", "", "company"
    if plural and not singular and not personal:
        # "We/our" with the business's premises or vehicles is the business's fact; "we" trading with someone
        # the gate took for a person ("el fisio de enfrente es cliente nuestro") is a customer's or supplier's.
        # Someone placed by a street or "de enfrente" who trades with "us" is a customer or supplier of the
        # business with no name given: "the accountant upstairs pays us in cash".
        if names_a_place(s) and trades_with(s) and category not in ("customer", "supplier"):
            return "org", "", trade(s.low)
        if (BUSINESS_THING.search(without_idioms(s.low)) or _OPENING.search(s.low)) and \
                category in ("person", "preference", "company", "nothing"):
            return "org", "", "company"
        if category in ("person", "nothing") and trades_with(s):
            return "org", "", trade(s.low)
        if business and category in ("person", "preference", "company", "nothing"):
            return "org", "", "company"  # "los presupuestos los hacemos por escrito"
    if category in ("customer", "supplier"):
        names = _names(s)
        if names and normalise_name(names[0]):
            name = _business_of(s, names)
            return f"name:{normalise_name(name)}", name, category
        if previous is not None and _names(previous) and normalise_name(_names(previous)[0]):
            name = _names(previous)[0]  # a short answer: the contact the question was about
            for m in recent:  # a contact of the address book when the question named one of its names
                if normalise_name(name) in {normalise_name(n) for n in (m.contact.name, *m.contact.aliases)}:
                    subject = contact_subject(m.contact, m.confidence, s.low)
                    return subject.key, subject.label, subject.category
            return f"name:{normalise_name(name)}", name, category
        distinct = {m.contact.id: m.contact for m in recent}
        if len(distinct) == 1:
            subject = contact_subject(next(iter(distinct.values())), 0.7, s.low)
            return subject.key, subject.label, subject.category
        if personal or (singular and not plural) or not business:
            return "self", "", "person" if personal else "preference"
        return "org", "", category
    if category == "company":
        if personal or (singular and not plural):
            return "self", "", "person"
        # "Uniting is essential for making a difference": a view, the writer's; "our shipping boxes come from
        # PackRight", which the gate gave the business to share, is the business's.
        if not business and not (scope == "shared" and _OUR_THING.search(s.low)):
            return "self", "", "person" if plural else "preference"
        return "org", "", "company"
    if category == "event" and business and not singular and not personal and not first_singular(s):
        # A date of the business, said of no one or with "we": "Stock check is on the last Friday of every month",
        # "El IVA del trimestre hay que presentarlo antes del día 20", "the van lease runs out next August".
        return "org", "", "event"
    if category in ("person", "preference", "event"):
        # "Odio el café", "I love sushi": a like or dislike is a preference, unless it is of the writer's family.
        taste = category == "person" and _TASTE.search(s.low) and not personal
        return "self", "", "preference" if taste else category
    # The gate passed it with no category: who the sentence speaks for decides ("Wrapping up the
    # business plan": a sentence with no subject of its own is the writer's).
    if singular or NO_SUBJECT.match(s.low):
        return "self", "", "preference"
    if plural:
        return ("org", "", "company") if business and not personal else ("self", "", "person")
    names = _names(s)
    # A name the gate gave no category is a customer only in words of business: "There's a new TV series coming
    # out", "Cindy wrote it" are the writer's own notes, never the org's.
    if names and normalise_name(names[0]) and business and not personal:
        return f"name:{normalise_name(names[0])}", names[0], "customer"
    return ("org", "", "company") if scope == "shared" and business and not personal else ("self", "", "preference")


# Something the business has, said with "our": "our shipping boxes", "nuestro proveedor de café".
_OUR_THING = re.compile(r"^(?:(?:and|y|also|tambien|now|ahora)\s+)?(?:our|nuestr[oa]s?)\s+[a-z]")
# Reactions and opinions that hold no fact: about "it/that/this", or what the writer feels about it.
_REACTION = re.compile(
    r"^(?:it|it's|its|that|that's|thats|this|this's|those|these|there|such|so|what a|how|all (?:those|these|the)|"
    r"eso|esto|era|fue)\b|^(?:i|we)\s+(?:really\s+|just\s+|totally\s+|absolutely\s+)?(?:love|loved|like|liked|"
    r"enjoy|enjoyed|adore|appreciate|agree|know|think|feel|felt|hope|wish|bet|guess|understand|get)\s+"
    r"(?:it|that|this|them|those|these|how|what|when|the way|you|your|seeing|hearing|to hear)\b|"
    r"^(?:you|your|you're|yours|tu|tus|usted)\b")
# The writer away or late today or tomorrow ("Mañana no estoy por la mañana, tengo que llevar el coche al taller",
# "Today I'm out, back tomorrow"): that day's arrangements, nothing that lasts.
_AWAY_TODAY = re.compile(
    r"^(?:hoy|manana|esta (?:manana|tarde|noche)|today|tomorrow|this (?:morning|afternoon|evening)|tonight)\b"
    r"(?:\s+(?:por la (?:manana|tarde)|in the (?:morning|afternoon)))?,?\s+"
    r"(?:no (?:estoy|estare|vengo|vendre|paso|puedo)|llego tarde|i'?m (?:not in|off|out)|i won'?t be (?:in|around)|"
    r"i'?ll be (?:late|out|off))\b")
# A call or visit about something, reported ("Dalton Electrics called about the quote", "Ha llamado Talleres Goñi
# preguntando por su pedido"): that day's news, nothing that lasts.
_CALL_REPORT = re.compile(r"^(?:[\w'&.-]+\s+){1,4}(?:called|rang|phoned|emailed|came by|dropped by)\s+(?:about|asking|"
                          r"to ask|earlier|this morning|today|for)\b|^(?:ha|han)\s+(?:llamado|venido|escrito)\s+"
                          r"(?:[\w'&.-]+\s+){0,4}(?:preguntando|para preguntar|por lo de|a preguntar)\b")
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
    if not _DESCRIBES.match(s.low) or LISTENER.search(s.low):
        return False
    told = [w for w in content_words(s.low) if w not in PHATIC_WORDS and w not in FEELING_WORDS]
    return len(told) >= DESCRIPTION_WORDS


# What a business's own rules speak of, as the subject of a sentence: its customers, orders, prices, returns...
TRADE_SUBJECT = re.compile(
    r"^(?:(?:the|our|los|las|el|la|nuestr[oa]s?)\s+)?(?:customers|clients|clientes|orders|pedidos|prices|precios|"
    r"rates|tarifas?|invoices|facturas|deliveries|entregas|envios|shipments|payments|pagos|quotes|presupuestos|"
    r"discounts|descuentos|refunds|reembolsos|returns|devoluciones|deposits|senales|opening hours|horarios?)\b")


def _about_someone(s: Sentence) -> bool:
    """A note states something about the writer or a named subject, or describes what the talk is about;
    not a reaction to the talk."""
    if _describes(s):
        return True
    if _REACTION.search(s.low):
        opens_on_listener = re.match(r"(?:you|your|you're|yours|tu|tus|usted)\b", s.low)
        first = FIRST_SINGULAR.search(s.low) or FIRST_PLURAL.search(s.low)
        if opens_on_listener or not first or len(content_words(s.low)) < REACTION_FIRST_PERSON_WORDS:
            return False
        return True
    return bool(_SOMEONE.search(s.low) or _TASTE.search(s.low) or first_singular(s) or
                FIRST_PLURAL.search(s.low) or _names(s) or TRADE_SUBJECT.match(s.low) or closer(s, []) is not None
                or NO_SUBJECT.match(s.low) or re.search(r"\d", s.low) or _view_of_the_writer(s))


# A statement with no subject of its own and substance enough ("Contemporary dance is so expressive and
# graceful") is the writer's view, when the gate passed it; never one that speaks to the listener.
VIEW_WORDS = 4


def _view_of_the_writer(s: Sentence) -> bool:
    return not LISTENER.search(s.low) and len(content_words(s.low)) >= VIEW_WORDS


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
                    r"detest|loathe|can'?t stand|cannot stand|don'?t like|dislike)|"
                    # "not a fan of eggs, never have been", "no soy muy fan del picante", "I'm a huge fan of jazz"
                    r"(?:(?:i'?m|i am)\s+)?(?:not\s+)?(?:a\s+)?(?:big\s+|huge\s+|massive\s+)?fan\s+of|"
                    r"(?:no\s+)?soy\s+(?:muy\s+|mucho\s+)?(?:fan|amig[oa])\s+de)\b")


# A question typed the quick way, without its mark: "q me queda por cobrar", "k hay hoy", "wat time is it".
_CHAT_QUESTION = re.compile(r"(?:q|k|ke|qe|wat|wht|como|cuanto|cuanta|cuantos|cuantas|cuando|donde|quien|what|how|"
                            r"when|where|who|which|why)\b")


def writer_statement(text: str, loose: bool = False) -> bool:
    """A unit that states something of the writer's own life in the first person, with substance; `loose`
    in a message the gate passed (see `speaker.first_singular`)."""
    s = strip_lead(Sentence.of(text))
    if not _says_something(s) or is_order(s) or sensitive(s) or "?" in s.text or _CHAT_QUESTION.match(s.low):
        return False
    if not (first_singular(s, loose) or FIRST_PLURAL.search(s.low) or NO_SUBJECT.match(s.low) or
            _TASTE.search(s.low)):
        return False
    if LISTENER.search(without_listener_gift(s.low)):
        return False  # about the listener as much as the writer ("I'm proud of you")
    words = len(content_words(s.low))
    return _about_someone(s) and (words >= WRITER_NOTE_WORDS or (words >= 2 and bool(_TASTE.search(s.low))))


def describes_the_topic(text: str) -> bool:
    """A unit that describes what the talk is about with substance ("They eat vegetables, fruits and insects",
    "Va de una mujer de treinta años tras una pérdida"): kept as a note the gate is less sure of, as the writer's
    own statements are; never a question, an order or a protected topic."""
    s = strip_lead(Sentence.of(text))
    return _says_something(s) and not is_order(s) and not sensitive(s) and "?" not in s.text and _describes(s)


def _attribute(low: str, subject: str, stored: tuple[str, ...], label: str, hint: str = "",
               correction: bool = False) -> str:
    """The attribute of a note. Notes are many-valued: `nota_<topic>_<two content words>`, so an unrelated
    note never shares a name with it; only a correction takes the stored name of its topic, to replace it."""
    # hint is the question a short answer replies to: its topic counts when the answer has none.
    body = low.replace(fold(label), " ") if label else low
    contact = subject.startswith(("contact:", "name:"))
    if contact and speaks_of_a_bank(body):
        return "cuenta_bancaria"
    topic, regex = "", None
    for text in (body, hint.replace(fold(label), " ") if label else hint):
        for pattern, own, other in TOPICS:
            if text and pattern.search(text):
                topic, regex = (other if contact else own), pattern
                break
        if topic:
            break
    words = content_words(body)
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
    # "These days I take my coffee black" is named as "I take my coffee with milk" is: when it is said is no topic.
    key = "_".join(dict.fromkeys(re.sub(r"[^a-z0-9]+", "", w)[:8] for w in words
                                 if w[:1].isalpha() and w not in _WHEN_WORDS))
    key = "_".join(key.split("_")[:2]).strip("_")
    return "_".join(p for p in ("nota", topic, key) if p) if (topic or key) else "nota"


_WHEN_WORDS = frozenset({"days", "dias", "nowadays", "lately", "ultimamente", "currently", "actualmente", "recently",
                         "recientemente", "today", "hoy", "now", "ahora", "these", "estos", "estas"})


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


def _without_span(text: str, start: int, end: int) -> str:
    """The text without the words in [start, end) (a date) and a "desde" left before it, spaces and
    punctuation tidied."""
    out = re.sub(r"\s+", " ", re.sub(r"(?i)\s+desde\s*$", "", text[:start]) + " " + text[end:])
    return re.sub(r"\s+([!?.,;:])", r"\1", out).strip()


# A customer's or supplier's term said as a maybe, a wish or an "if" ("igual cambiamos a X a 90 días", "maybe we'll
# move X to 60 days", "si X pagara a 30...") or as how it was once ("hace años X pagaba a 120", "back in 2019 X used
# to deliver on fridays"): no note of what the contact does now.
TENTATIVE = re.compile(rf"^igual\b|\b(?:{MAYBE}|ya veremos|we'll see|what if)\b|"
                        r"\bif\b[^,.;]*\b(?:paid|were|was|had|did|moved|switched|changed|went|charged|delivered)\b|"
                        r"\bsi\b[^,.;]*\b\w+(?:ara|iera|ase|iese)(?:n|mos)?\b")
NO_LONGER_SO = re.compile(r"\b(?:used to|back in \d{4}|back then|years ago|in the past|(?<!desde )hace (?:\w+\s+)?(?:anos|"
                           r"meses)|en su dia|antiguamente|solia|solian|(?:pag|cobr|entreg|llev|factur|abon|cerr|"
                           r"repart)aban?|(?:serv|sirv|abr|repart|tra)ian?)\b")

NOW_SO = re.compile(r"\b(?:ahora|now|nowadays|actualmente|hoy en dia|these days|currently|today)\b")


def not_as_it_is(low: str) -> bool:
    """The sentence tells a contact's terms as a maybe or an "if", or as they were once and not how they are now."""
    return bool(TENTATIVE.search(low) or (NO_LONGER_SO.search(low) and not NOW_SO.search(low)))


_BORROWING = re.compile(r"\b(?:overdraft|loan|mortgage|credit line|line of credit|prestamo|hipoteca|"
                        r"poliza de credito|linea de credito|descubierto)\b")


def note(s: Sentence, mentions: list[Mention], recent: list[Mention], context: ExtractionContext,
         category: str, scope: str | None) -> Fact | None:
    """The generic fact of one unit the gate passed, or None (a question, an order, a protected topic...)."""
    whole = context.message or ""
    bank = speaks_of_a_bank(fold(whole)) or find_bank_account(whole) is not None
    if category == "event" and holds_from(fold(whole)):
        category = "nothing"  # "from next month our closing day is Sunday": a standing fact, no event on that day
    s = strip_lead(s)
    view = states_a_view(s.text)
    # A short reply ("a 60 días", "Marisa") reads its subject and topic from the question it answers; after a
    # turn that asks nothing it is a reaction ("Nice job, Maria!" to "I won!"), no answer.
    previous = Sentence.of(context.previous_assistant) if context.previous_assistant and \
        "?" in context.previous_assistant and \
        (reads_as_reply(next(split_sentences(s.text), "")) or reads_as_reply(whole)) else None
    if previous is not None and is_order(Sentence.of(whole)):
        return None  # "sí, y recuérdame llamar a Talleres García mañana": a yes to an offer, then an order
    # "yes" to "Do you still ride horses?" says what its question does ("I still ride horses").
    said = completed_answer(previous.text, whole) if previous is not None else None
    if not (_says_something(s) or view or (said and _says_something(Sentence.of(said)))) or is_order(s) or \
            sensitive(s):
        return None  # a clause on a special category is refused; the message's other sentences are not
    if _HOW_IT_WENT.match(s.low.rstrip(" !.")) or _AWAY_TODAY.match(s.low) or _CALL_REPORT.match(s.low):
        return None  # "I had a great time yesterday!", "mañana no estoy": how a day went or will go, no fact
    if names_own_bank(s.low):
        return None  # "cambiamos el banco de la empresa al Sabadell": the business's bank, the rule's fact
    if between_us(s) and not speaks_business(s):
        return None  # "Let's keep going after our goals", "since we last talked": the two of them, talking
    if not mentions and not recent and previous is None and not view and not _about_someone(s):
        return None  # "It's peaceful and special", "I love it": a reaction, not a fact about anyone
    value = _safe(clean_value(s.text))
    if len(value) < 2:
        return None
    resolved = _subject(s, mentions, recent, category, scope, previous)
    if resolved is None:
        return None
    key, label, memory_category = resolved
    if key.startswith(("contact:", "name:")) and not_as_it_is(s.low):
        return None  # "igual cambiamos a X a 90 días", "hace años X pagaba a 120": nothing X does now
    stored = tuple(context.known_attributes.get(key, ()))
    event_date = event_until = None
    past = told_in_past(s.low, s.text)
    if memory_category == "event" or (past and key == "self"):
        # A dated event, coming or told in the past ("I ran a charity race last Saturday"): kept as an event
        # with its day, resolved against when the message was sent; its value without the date's words.
        found = find_date(s.low, context.today, past=past)
        if found and (past or found[0] >= context.today):
            event_date, memory_category = found[0], "event"
            event_until = span_until(s.low[found[1]:found[2]], event_date)  # a span keeps its days in the value
            if len(s.low) == len(s.text) and event_until is None:
                value = _safe(clean_value(_without_span(s.text, found[1], found[2]))) or value
    if key in ("self", "org") and bank and memory_category != "event" and not _BORROWING.search(s.low):
        # The business's own account is only ever read by the bank-account rule; what it borrows from a bank (an
        # overdraft, a loan, a credit line) holds no account and is a note.
        return None
    asked = _question_answered(previous, s)
    attribute = "evento" if memory_category == "event" else \
        _attribute(fold(whole) if bank else f"{fold(asked)} {_topic_text(s)}" if asked else _topic_text(s), key,
                   stored, label, previous.low if previous else "", correction=bool(CORRECTS.search(s.low)))
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
            not FIRST_SINGULAR.search(s.low):
        # "The person thinks: Setbacks are just opportunities for comebacks": a view in general is said as the
        # writer's, its words as written ("Pets bring us joy": the "us" of everyone, not of a business).
        body = f"{'The person thinks' if is_english(value) else 'La persona piensa'}: {value}"
    if label and fold(label) not in fold(body):
        body = f"{label}: {body}"
    sentence = _safe(body[:1].upper() + body[1:]).rstrip(".!") + "."
    return Fact(subject=key, attribute=attribute, value=value, sentence=sentence, category=memory_category,
                event_date=event_date, event_until=event_until, confidence=CONFIDENCE)


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
    words = set(content_words(fold(asked)))
    if not words or len(words & set(content_words(answer.low))) * 2 >= len(words):
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
