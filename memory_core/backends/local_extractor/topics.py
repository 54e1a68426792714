"""What a clause is about: its content words (never a function word or a filler), the topic family it falls in
(bank details, prices, hours, family...) and whether it is the business trading with someone."""
from __future__ import annotations

import re

from memory_core.backends.local_extractor.speaker import FIRST_PLURAL, FIRST_SINGULAR
from memory_core.backends.local_extractor.subjects import SUPPLIER_WORDS
from memory_core.backends.local_extractor.text import Sentence
from memory_core.domain.policy import BANKS, without_account_roles

# Function words and fillers: never a topic word.
STOP = set("""
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


def content_words(low: str) -> list[str]:
    return [w for w in re.findall(r"[a-z][a-z']+", low) if len(w) >= 3 and w not in STOP]


# Topic families, first match wins: (attribute for the person or the business, attribute for a contact).
# Bank details: a contact's go under cuenta_bancaria, which the ladder never applies but proposes.
BANK_TOPIC = re.compile(
    r"\b(?:iban|swift|bic|ccc|numero de cuenta|cuenta bancaria|cuenta corriente|datos bancarios|bank account|"
    r"bank details|sort code|account number|cuenta (?:de|del|en)\s+\w+|(?:otra|nueva) cuenta|cuenta nueva|"
    r"(?:new|another|different) account|banco(?! de (?:alimentos|sangre|tiempo))|bancari[oa]s?|entidad|(?<!food )(?<!blood )(?<!river )bank(?! holidays?)|(?<!do the )(?<!does the )(?<!doing the )banking|"
    r"transferencias?,?\s+(?:al|a la|a|en)\s+(?!\d)\w+|(?:changed|switched|moved)\s+(?:\w+\s+)?(?:banks?|accounts?)|"
    r"(?<!-)(?:" + "|".join(sorted(BANKS, key=len, reverse=True)) + r"))\b")  # (not the "-ing" of a split word)
# A bank one works at is an employer, not an account: "trabajo en el Santander", "my wife works at Barclays".
WORKS_AT = re.compile(r"\b(?:trabaj\w*|curr(?:o|a|as|an)|works?|working|worked|employed)\s+(?:(?!con\b|with\b)\w+\s+){0,3}?"
                      r"(?:en|para|at|for|in)\s+(?:el\s+|la\s+|the\s+)?\w+(?:\s+bank)?")
# Ways to pay besides a transfer.
_OTHER_WAYS = r"(?:card|cash|cheques?|checks?|tarjeta|efectivo|bizum|paypal|pagare)"
# Paying by transfer is a way to pay, not an account: "Clients in Portugal pay by bank transfer only".
PAID_BY_TRANSFER = re.compile(r"\b(?:by|via|through|por|mediante|con)\s+(?:bank\s+)?transfers?(?:\s+bancarias?)?\b|"
                              r"\b(?:por|mediante|con)\s+transferencias?(?:\s+bancarias?)?\b|"
                              # a way to pay among others: "bank transfer or card only", "tarjeta o transferencia"
                              r"\b(?:bank\s+)?(?:transfers?|transferencias?)(?:\s+bancarias?)?\s+(?:or|o|and|y)\s+(?:by\s+|con\s+)?"
                              rf"{_OTHER_WAYS}\b|\b{_OTHER_WAYS}\s+(?:or|o|and|y)\s+(?:by\s+|por\s+)?(?:bank\s+)?"
                              r"(?:transfers?|transferencias?)(?:\s+bancarias?)?\b")


def speaks_of_a_bank(low: str) -> bool:
    """Folded text names a bank, an account or a transfer to one: not paying by transfer, the bank someone works
    at, nor a role named after accounts ("account manager")."""
    return bool(BANK_TOPIC.search(without_account_roles(WORKS_AT.sub(" ", PAID_BY_TRANSFER.sub(" ", low)))))


TOPICS: tuple[tuple[re.Pattern, str, str], ...] = tuple((re.compile(p), own, other) for p, own, other in (
    (r"\b(?:como te llamas|como quieres que te llame|como te llamo|tu nombre|your name|call you|what should i call)\b",
     "nombre", "persona_contacto"),
    (r"\b(?:descuentos?|discounts?|rappel)\b|\d\s*(?:%|por ciento|percent)", "descuento", "descuento"),
    (r"\b(?:formal\w*|informal\w*|tono|trat\w*|confianza|tute\w*|usted|apellido|surname|addressed|"
     r"senora|senor)\b", "tono", "tono"),
    (r"\b(?:avis\w*|recordatorios?|reminders?|remind\w*|alert\w*|notific\w*|let me know)\b", "avisos", "avisos"),
    (r"\b(?:contado|transferencias?|tarjetas?|domicilia\w*|efectivo|bizum|pagare|cheques?|cash|card|"
     r"direct debit|paypal)\b", "forma_pago", "forma_pago"),
    (r"\b(?:cuotas?|tarifas?|precios?|fees?|prices?|rates?|presupuesto de|coste|cuesta|"
     r"cobra\w* \d+(?: euros|€)?|charg\w* (?:[£$€]\s*)?\d+"
     r"|\d+\s*(?:euros|eur|€|quid|pounds|dollars)|[€£$]\s*\d+)\b", "precios", "precios"),
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
     r"domingos?|mondays?|tuesdays?|wednesdays?|thursdays?|fridays?|saturdays?|sundays?|no trabaja\w*(?! con\b))\b",
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


# What the business does with a customer or supplier: the topics of a trade ("nos paga", "cliente",
# "orders", "invoice"), and buying and selling.
_TRADE_TOPICS = ("plazo_pago", "forma_pago", "facturacion", "relacion")
_TRADE = re.compile(r"\b(?:compra\w*|vend\w*|buys?|bought|sells?|sold)\b")


# Business words in phrases that mean something else: "enjoy each other's company", "keep me company", "it's
# paying off", "pay attention", "pagar el pato".
_IDIOMS = re.compile(r"\b(?:(?:each other's|one another's|good) company|keep(?:s|ing)? (?:me|us|you|him|her|them) "
                     r"company|pa(?:y|ys|id|ying) (?:off|attention|a visit|tribute|homage|respects)|pagar el pato)\b")


def without_idioms(low: str) -> str:
    """The folded text without the phrases whose business words mean something else."""
    return _IDIOMS.sub(" ", low)


def trades_with(s: Sentence) -> bool:
    """The sentence is the business's dealing with someone ("we", a trade word), not the writer's own
    life: "El dentista de la calle Alcalá nos debe dos facturas", not "tengo que pagar al dentista"."""
    if FIRST_SINGULAR.search(s.low) or not FIRST_PLURAL.search(s.low):
        return False
    low = without_idioms(s.low)
    return bool(_TRADE.search(low) or SUPPLIER_WORDS.search(low) or
                any(pattern.search(low) for pattern, own, _ in TOPICS if own in _TRADE_TOPICS))
