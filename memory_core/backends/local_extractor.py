"""The local backend's extractor: deterministic rules over Spanish and English, no model, no network.

The message is data. Rules read fixed shapes of sentences; nothing in the text can change what the
extractor does, and values must look like what they claim to be (a name, a number of days, an IBAN).
"""
from __future__ import annotations

import datetime as dt
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterator

from memory_core.backends.base import ExtractionContext, Fact, KnownContact, Usage
from memory_core.domain.policy import find_bank_account

MODEL = "local-extractor-v1"


# --- text helpers ---------------------------------------------------------------------------------

def fold(text: str) -> str:
    """Lower case without accents, one character for one: offsets in the fold are offsets in the text."""
    # "İ".lower() is two characters: keeping the first keeps the offsets.
    return "".join(unicodedata.normalize("NFD", ch.lower()[0])[0] for ch in text)


_LEGAL_SUFFIXES = (
    ("s", "l", "u"), ("s", "l", "l"), ("s", "l"), ("s", "a"), ("s", "coop"), ("s", "c"), ("c", "b"),
    ("sociedad", "limitada"), ("sociedad", "anonima"), ("slu",), ("sll",), ("sl",), ("sa",), ("scoop",),
    ("sc",), ("cb",), ("ltd",), ("inc",), ("llc",), ("gmbh",), ("plc",), ("srl",), ("sas",), ("bv",),
)


@lru_cache(maxsize=8192)
def name_tokens(name: str) -> tuple[str, ...]:
    """Folded word tokens of a name without its legal suffix ("Acme, S.L." -> ("acme",)).
    Cached: the same contact names are tokenised for every message of their org."""
    tokens = re.findall(r"[a-z0-9]+", fold(name))
    stripped = True
    while stripped and tokens:
        stripped = False
        for suffix in _LEGAL_SUFFIXES:
            if len(tokens) > len(suffix) and tuple(tokens[-len(suffix):]) == suffix:
                tokens = tokens[: -len(suffix)]
                stripped = True
                break
    return tuple(tokens)


def normalise_name(name: str) -> str:
    return " ".join(name_tokens(name))


def normalise_tax_id(value: str) -> str:
    compact = re.sub(r"[^A-Z0-9]", "", value.upper())
    # An intra-EU VAT number is the Spanish NIF with "ES" in front.
    return compact[2:] if compact.startswith("ES") and len(compact) == 11 else compact


def _clean_value(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip(" \t,;:.-–—\"'«»“”")


# --- attribute names ------------------------------------------------------------------------------

# Each canonical attribute with the names that mean the same. When a subject already has a fact under
# one of these names, a new fact of the family takes that name, so the write ladder supersedes it.
FAMILIES: dict[str, tuple[str, ...]] = {
    "plazo_pago": ("plazo_pago", "plazo_de_pago", "condiciones_cobro", "condiciones_de_cobro", "condiciones_pago",
                   "condiciones_de_pago", "plazo_cobro", "dias_pago", "dias_de_pago", "terminos_pago",
                   "vencimiento", "vencimiento_facturas", "payment_terms"),
    "forma_pago": ("forma_pago", "forma_de_pago", "metodo_pago", "medio_pago", "medio_de_pago", "payment_method"),
    "persona_contacto": ("persona_contacto", "persona_de_contacto", "contacto", "contacto_principal",
                         "interlocutor", "contact_person", "responsable", "contact"),
    "canal_preferido": ("canal_preferido", "canal", "canal_envio", "canal_de_envio", "envio_facturas",
                        "medio_envio", "via_envio", "canal_contacto", "preferred_channel"),
    "formato_factura": ("formato_factura", "formato_facturas", "formato_de_factura", "invoice_format"),
    "formato_importes": ("formato_importes", "formato_totales", "totales", "importes", "mostrar_iva",
                         "totales_con_iva", "preferencia_iva", "iva_en_totales"),
    "nombre": ("nombre", "nombre_preferido", "como_llamar", "apodo", "nombre_de_pila", "name", "preferred_name"),
    "tono": ("tono", "tratamiento", "forma_trato", "forma_de_trato", "trato", "registro", "tuteo"),
    "idioma": ("idioma", "idioma_preferido", "lengua", "language"),
    "hijo": ("hijo", "nombre_hijo", "son"),
    "hija": ("hija", "nombre_hija", "daughter"),
    "hijos": ("hijos", "children", "kids"),
    "pareja": ("pareja", "esposa", "esposo", "mujer", "marido", "conyuge", "novia", "novio", "partner",
               "wife", "husband"),
    "madre": ("madre", "mother"),
    "padre": ("padre", "father"),
    "hermano": ("hermano", "brother"),
    "socio": ("socio", "socia", "business_partner"),
    "hermana": ("hermana", "sister"),
    "direccion": ("direccion", "domicilio", "direccion_fiscal", "domicilio_fiscal", "domicilio_social",
                  "sede", "address"),
    "regimen_iva": ("regimen_iva", "regimen_de_iva", "regimen_fiscal", "regimen", "regimen_tributario",
                    "vat_scheme"),
    "regimen_irpf": ("regimen_irpf", "estimacion", "metodo_estimacion"),
    "retencion_irpf": ("retencion_irpf", "retencion", "irpf", "porcentaje_retencion"),
    "nif": ("nif", "cif", "nif_cif", "vat_number", "numero_iva", "identificacion_fiscal", "tax_id"),
    "razon_social": ("razon_social", "nombre_empresa", "nombre_fiscal", "company_name"),
    "actividad": ("actividad", "sector", "a_que_se_dedica", "activity"),
    "cuenta_bancaria": ("cuenta_bancaria", "iban", "cuenta", "numero_cuenta", "numero_de_cuenta",
                        "cuenta_corriente", "bank_account"),
    "email": ("email", "correo", "correo_electronico", "email_facturacion", "mail"),
    "telefono": ("telefono", "movil", "phone", "numero_telefono"),
    "descuento": ("descuento", "descuento_habitual", "discount"),
    "evento": ("evento", "agenda", "event"),
}
# Words that give a stored name away when it is not in the table ("dias_cobro_acme").
_FAMILY_WORDS: dict[str, tuple[str, ...]] = {
    "plazo_pago": ("plazo", "cobro", "vencimiento", "terminos", "terms", "condiciones", "dias"),
    "forma_pago": ("forma", "metodo", "medio", "method"),
    "persona_contacto": ("contacto", "interlocutor", "responsable"),
    "canal_preferido": ("canal", "envio", "channel"),
    "formato_factura": ("formato", "format"),
    "direccion": ("direccion", "domicilio", "address"),
    "cuenta_bancaria": ("iban", "cuenta", "bancaria", "account"),
    "regimen_iva": ("regimen",),
}
_MEMBER_OF = {name: canonical for canonical, names in FAMILIES.items() for name in names}


def _attr_key(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", fold(name)).strip("_")


def reuse_attribute(canonical: str, stored: tuple[str, ...]) -> str:
    """The stored attribute name that means the same as canonical, or canonical itself."""
    if canonical in stored:
        return canonical
    for name in stored:
        if _MEMBER_OF.get(_attr_key(name)) == canonical:
            return name
    words = _FAMILY_WORDS.get(canonical, ())
    for name in stored:
        key = _attr_key(name)
        # A name the table files under another family is not ours even if it shares a word.
        if key not in _MEMBER_OF and any(w in key.split("_") for w in words):
            return name
    return canonical


# --- sentences and filters ------------------------------------------------------------------------

_ABBREVIATIONS = {"sr", "sra", "srta", "dr", "dra", "d", "dna", "avda", "av", "c", "pza", "pl", "n", "no", "num",
                  "tel", "telf", "st", "ave", "rd", "mr", "mrs", "ms", "inc", "ltd", "co", "etc", "vs", "ej",
                  "aprox", "ctra", "urb", "pol", "ind", "apdo", "dpto"}


def _sentences(text: str) -> Iterator[str]:
    """Sentences and lines; a dot after an abbreviation ("Avda.", "S.L.") does not end a sentence."""
    for line in re.split(r"[\r\n]+", text):
        start = 0
        for m in re.finditer(r"[.!?;]+(?=\s|$)", line):
            before = re.search(r"(\S+)$", line[: m.start()])
            token = fold(before.group(1)).strip("(\"'") if before else ""
            if m.group() == "." and (token in _ABBREVIATIONS or re.fullmatch(r"(?:[a-z]\.)+[a-z]|[a-z]", token)
                                     or re.fullmatch(r"[a-z]{1,4}\.[a-z]{1,4}", token)):
                continue
            yield line[start: m.end()].strip()
            start = m.end()
        if line[start:].strip():
            yield line[start:].strip()


# "Recuerda que ...", "para que lo sepas, ...": an explicit request to remember, not an order.
_REMEMBER_PREFIX = re.compile(
    r"^(?:(?:oye|vale|ok|bueno|pues|por cierto|hola)\s*,?\s*)*(?:(?:por favor|porfa)\s*,?\s*)?"
    r"(?:recuerda(?:lo)?|acuerdate(?: de)?|apunta(?:te)?|anota|guarda(?:te)?|ten en cuenta|toma nota(?: de)?|"
    r"para que lo sepas|que sepas|(?:para )?que conste|quiero que recuerdes|no (?:te )?olvides(?: de)?|"
    r"que no se (?:me|te) olvide|"
    r"(?:please )?remember|note(?: down)?|make a note|keep in mind|bear in mind|fyi|for the record|just so you know)"
    r"(?:\s+(?:que|that|esto|this))?\s*[:,]?\s*")
_QUESTION_START = re.compile(
    r"^(?:y\s+|and\s+)?(?:(?:a|de|con|en|para|por|desde|hasta)\s+)?(?:que|cual|cuales|cuanto|cuanta|cuantos|cuantas|"
    r"cuando|donde|adonde|quien|quienes|por que|sabes|what|which|when|where|how|who|whom|why|do|does|did|is|"
    r"are|was|were|can|could|should|would|will|have|has)\b")
# "Quien lleva las facturas en Acme es Marisa" starts like a question but names its answer.
_RELATIVE_START = re.compile(r"^(?:quien|la que|el que|who)\b")
_NAMED_ANSWER = re.compile(r"\b(?:es|is)\s+[A-ZÁÉÍÓÚÑ]")


# "Acme paga a 60 días, ¿vale?": a statement with a tag ("¿no?", "¿verdad?" ask for confirmation: still questions).
_TAG_QUESTION = re.compile(r"[,\s]*¿?\s*(?:vale|ok|okay|de acuerdo|sabes)\s*\?+\s*$")


def _is_question(s: "_Sentence") -> bool:
    if "?" in _TAG_QUESTION.sub("", s.low) or "¿" in _TAG_QUESTION.sub("", s.low):
        return True
    if _RELATIVE_START.match(s.low) and _NAMED_ANSWER.search(s.text):
        return False
    return bool(_QUESTION_START.match(s.low))


def statement(s: "_Sentence") -> bool:
    """A sentence that may state a fact: not empty, not a question, not a hypothetical, not an injection."""
    if not s.low or _is_question(s):
        return False
    # "sí" (yes) folds to "si" (if): hide it before looking for hypotheticals.
    return not (_HYPOTHETICAL.search(fold(re.sub(r"\b[sS][íÍ]\b", "~", s.text))) or _INJECTION.search(s.low))


def is_order(s: "_Sentence") -> bool:
    """An order for now ("mándale la factura"), not a standing instruction ("mándale siempre...")."""
    return bool(_ORDER_START.match(s.low)) and not _DURABLE.search(s.low)


_HYPOTHETICAL = re.compile(
    r"\b(?:si(?!\s*[,.!])|if|supongamos|suponiendo|supon|imagina|imaginemos|imagine|suppose|supposing|hipoteticamente|"
    r"hypothetically|en caso de que|en el caso de que|what if|ojala|a lo mejor|quizas?|tal vez|maybe|"
    r"perhaps|puede que|seria|podria|deberia|pagaria|tendria|would(?! rather)|might|could|creo que|me parece que|"
    r"supongo que|no estoy segur[oa]|no se si|i think|i guess|not sure)\b")
_INJECTION = re.compile(
    r"\b(?:ignor\w*|olvida\w*|forget|disregard|omite)\b.{0,40}\b(?:instruc\w*|indicaciones|reglas|rules|prompt|"
    r"anterior\w*|previous|above|todo lo)|\b(?:system prompt|prompt del sistema|you are now|ahora eres|"
    r"a partir de ahora eres|act as|actua como|jailbreak)\b")
_ORDER_START = re.compile(
    r"^(?:(?:oye|vale|ok|bueno|pues|porfa|por favor|please)\s*,?\s*)*(?:"
    r"factura|facturale|facturales|emite|envia|enviale|enviales|enviame|manda|mandale|mandales|mandame|crea|creame|"
    r"haz|hazme|prepara|preparame|genera|generame|borra|elimina|anade|busca|buscame|muestrame|ensename|"
    r"recuerdame|calcula|calculame|cambia|cambiame|pon|ponme|pasame|dame|dime|revisa|comprueba|descarga|sube|"
    r"abre|cancela|anula|llama|escribe|escribele|contesta|responde|reclama|reclamale|puedes|podrias|"
    r"quiero que (?:me |le |les )?(?:envies|mandes|hagas|prepares|factures|crees|pases|busques|digas|llames)|"
    r"invoice|send|create|make|prepare|generate|delete|remove|add|find|search|show|tell|remind|calculate|"
    r"change|put|give|list|check|download|upload|open|cancel|call|write|reply|pay|charge|email|can you|"
    r"could you)\b")
_DURABLE = re.compile(r"\b(?:siempre|a partir de ahora|de ahora en adelante|en adelante|de aqui en adelante|"
                      r"always|from now on|in future|in the future|going forward)\b")
_NEGATED_BEFORE = re.compile(r"\b(?:no|ya no|nunca|jamas|not|never|no longer|doesn'?t|don'?t|won'?t|isn'?t)\s+"
                             r"(?:\w+\s+){0,2}$")


@dataclass(frozen=True)
class _Sentence:
    text: str  # as written (curly apostrophes made straight)
    low: str  # fold(text): same offsets

    @classmethod
    def of(cls, text: str) -> "_Sentence":
        text = text.replace("’", "'").replace("‘", "'")
        return cls(text, fold(text))

    def negated(self, at: int) -> bool:
        return bool(_NEGATED_BEFORE.search(self.low[:at]))


# --- contacts -------------------------------------------------------------------------------------

_GENERIC_NAME_WORDS = {"talleres", "taller", "construcciones", "transportes", "servicios", "hermanos", "grupo",
                       "industrias", "comercial", "distribuciones", "hierros", "asesoria", "consultores",
                       "consulting", "the", "de", "del", "la", "el", "los", "las", "y", "and", "company",
                       "instalaciones", "reformas", "electricidad", "fontaneria", "academia", "clinica",
                       "restaurante", "bar", "cafeteria", "ferreteria", "supermercado", "global", "iberica",
                       "espana", "madrid", "barcelona", "sur", "norte", "centro", "tecnologia", "soluciones"}


@dataclass(frozen=True)
class _Mention:
    contact: KnownContact
    start: int
    end: int
    confidence: float


def _token_spans(low: str) -> list[tuple[str, int, int]]:
    return [(m.group(), m.start(), m.end()) for m in re.finditer(r"[a-z0-9]+", low)]


def _find_mentions(s: _Sentence, contacts: tuple[KnownContact, ...]) -> list[_Mention]:
    """Every contact named in the sentence: by tax ID, full name or alias, or one distinctive word."""
    found: list[_Mention] = []
    for m in re.finditer(r"\b[A-Z0-9][A-Z0-9.\-]{6,14}[A-Z0-9]\b", s.text.upper()):
        tax = normalise_tax_id(m.group())
        for c in contacts:
            if c.tax_id and len(tax) >= 8 and normalise_tax_id(c.tax_id) == tax:
                found.append(_Mention(c, m.start(), m.end(), 0.95))
    tokens = _token_spans(s.low)
    words = [t for t, _, _ in tokens]
    for c in contacts:
        for name in (c.name, *c.aliases):
            wanted = list(name_tokens(name))
            n = len(wanted)
            for i in range(len(words) - n + 1) if n else ():
                if words[i: i + n] == wanted:
                    found.append(_Mention(c, tokens[i][1], tokens[i + n - 1][2], 0.9))
    if found:
        return found
    # "García" for "Talleres García": a capitalised, distinctive word that only one contact has.
    owners: dict[str, set[str]] = {}
    for c in contacts:
        for name in (c.name, *c.aliases):
            for w in name_tokens(name):
                if len(w) >= 4 and w not in _GENERIC_NAME_WORDS and not w.isdigit():
                    owners.setdefault(w, set()).add(c.id)
    by_id = {c.id: c for c in contacts}
    for word, start, end in tokens:
        ids = owners.get(word, set())
        if len(ids) == 1 and s.text[start].isupper():
            found.append(_Mention(by_id[next(iter(ids))], start, end, 0.75))
    return found


_CAP_RUN = re.compile(r"[A-ZÁÉÍÓÚÑÜ][\w&'.\-]*(?:\s+(?:(?:de|del|de la|y|e|&)\s+)?[A-ZÁÉÍÓÚÑÜ][\w&'.\-]*)*")
_RUN_STOP = {"ahora", "el", "la", "los", "las", "nuestro", "nuestra", "mi", "our", "the", "no", "si", "y", "pero",
             "oye", "vale", "por", "desde", "con", "a", "en", "hoy", "ya", "bueno", "pues", "tambien", "ademas",
             "cliente", "proveedor", "i", "we", "my", "now", "also", "and", "but", "recuerda", "remember", "que",
             "para", "de", "del", "un", "una", "al", "ok", "vale", "hola", "ojo", "nota", "iban", "nif", "cif",
             "note", "fyi", "desde", "since", "from", "today", "hoy", "at", "in", "on", "for"}


def _name_runs(s: _Sentence, start: int, end: int) -> list[tuple[str, int, int]]:
    """Capitalised word runs inside [start, end), leading filler words dropped."""
    runs = []
    for m in _CAP_RUN.finditer(s.text, start, end):
        words = m.group().split()
        offset = m.start()
        while words and fold(words[0]).strip(".,") in _RUN_STOP:
            offset = s.text.index(words[0], offset) + len(words[0])
            words = words[1:]
        # "S.L." after a comma is the previous name's suffix, not a name of its own.
        if words and tuple(re.findall(r"[a-z0-9]+", fold(" ".join(words)))) not in _LEGAL_SUFFIXES:
            text = " ".join(words).rstrip(".,")
            begin = s.text.index(words[0], offset)
            runs.append((text, begin, begin + len(text)))
    return runs


_NAME_STOP = {"al", "a", "manana", "luego", "despues", "mas", "tarde", "hoy", "cuando", "si", "por", "en", "de",
              "para", "esta", "este", "ahora", "ya", "otra", "otro", "pronto", "back", "tomorrow", "later", "at",
              "on", "when", "tonight", "now", "if", "asap", "soon", "the", "an", "please", "porfa", "y", "e",
              "que", "and", "o", "or", "pero", "but", "tiene", "tengo", "es", "is", "has", "vive", "trabaja",
              "lives", "works", "con", "with", "from", "del", "la", "el", "lo", "un", "una", "su", "mi", "tu",
              "usted", "tú", "ella", "el", "he", "she", "it", "to", "in", "of", "for", "ahi", "aqui", "eso",
              "autonomo", "autonoma", "nuevo", "nueva", "cliente", "proveedor", "ignora", "ignore", "olvida",
              "sistema", "system", "admin", "administrador"}


def _name_at(s: _Sentence, start: int, strong: bool) -> str | None:
    """A person's name starting at start: capitalised words, or lower case after a strong cue ("me llamo")."""
    m = re.match(r"\s*([^\W\d_][\w'\-]*(?:[ ]+[^\W\d_][\w'\-]*){0,3})", s.text[start:])
    if not m:
        return None
    words = []
    for word in m.group(1).split():
        if fold(word) in _NAME_STOP:
            break
        capital = word[0].isupper()
        if not words and not capital and not strong:
            return None
        if words and capital != words[0][0].isupper():
            break
        words.append(word)
        if len(words) == (3 if capital else 2):
            break
    if not words:
        return None
    name = " ".join(words)
    return name if name[0].isupper() else name.title()


# --- dates ----------------------------------------------------------------------------------------

_MONTHS = {"enero": 1, "febrero": 2, "marzo": 3, "abril": 4, "mayo": 5, "junio": 6, "julio": 7, "agosto": 8,
           "septiembre": 9, "setiembre": 9, "octubre": 10, "noviembre": 11, "diciembre": 12,
           "january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6, "july": 7, "august": 8,
           "september": 9, "october": 10, "november": 11, "december": 12}
_WEEKDAYS = {"lunes": 0, "martes": 1, "miercoles": 2, "jueves": 3, "viernes": 4, "sabado": 5, "domingo": 6,
             "monday": 0, "tuesday": 1, "wednesday": 2, "thursday": 3, "friday": 4, "saturday": 5, "sunday": 6}
_MONTH = "(?P<m>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + ")"
_WEEKDAY = "(?P<w>" + "|".join(_WEEKDAYS) + ")"
_DATE_PATTERNS: list[tuple[str, str]] = [
    ("range", rf"\b(?:del?|from)\s+(?:el\s+|the\s+)?(?P<d>\d{{1,2}})\s+(?:al|a|to|until)\s+(?:el\s+)?\d{{1,2}}\s+(?:de\s+)?{_MONTH}\b"),
    ("dm", rf"\b(?:el\s+|on\s+(?:the\s+)?|the\s+)?(?:dia\s+)?(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:de\s+|of\s+)?{_MONTH}(?:,?\s+(?:de\s+|del\s+)?(?P<y>\d{{4}}))?\b"),
    ("md", rf"\b(?:on\s+)?{_MONTH}\s+(?P<d>\d{{1,2}})(?:st|nd|rd|th)?(?:,?\s+(?P<y>\d{{4}}))?\b"),
    ("numeric", r"\b(?:el\s+|on\s+)?(?P<d>\d{1,2})/(?P<mn>\d{1,2})(?:/(?P<y>\d{2,4}))?\b"),
    ("after_tomorrow", r"\b(?:pasado manana|the day after tomorrow)\b"),
    ("tomorrow", r"(?<!la )(?<!esta )(?<!por )\b(?:manana|tomorrow)\b"),
    ("today", r"\b(?:hoy|esta tarde|esta noche|today|tonight|this afternoon|this evening)\b"),
    ("next_weekend", r"\b(?:el fin de semana que viene|el proximo fin de semana|next weekend)\b"),
    ("weekend", r"\b(?:este fin de semana|el fin de semana|this weekend|at the weekend|on the weekend)\b"),
    ("next_week", r"\b(?:la semana que viene|la proxima semana|la semana proxima|next week)\b"),
    ("next_month", r"\b(?:el mes que viene|el proximo mes|el mes proximo|next month)\b"),
    ("weekday", rf"\b(?:el\s+|este\s+|el proximo\s+|next\s+|this\s+|on\s+)?{_WEEKDAY}(?:\s+que viene|\s+proximo)?\b"),
    ("in_days", r"\b(?:dentro de|en|in)\s+(?P<n>\d{1,2})\s+(?P<unit>dias|semanas|days|weeks)\b"),
    ("month", rf"\b(?:en|in|durante|during)\s+{_MONTH}\b"),
]
_DATE_RES = [(kind, re.compile(p)) for kind, p in _DATE_PATTERNS]


def _future(today: dt.date, month: int, day: int, year: int | None) -> dt.date | None:
    try:
        if year:
            return dt.date(year if year > 100 else 2000 + year, month, day)
        date = dt.date(today.year, month, day)
        return date if date >= today else dt.date(today.year + 1, month, day)
    except ValueError:
        return None


def find_date(low: str, today: dt.date) -> tuple[dt.date, int, int] | None:
    """The first date expression in a folded sentence, resolved against today, with its span."""
    for kind, regex in _DATE_RES:
        m = regex.search(low)
        if not m:
            continue
        g = m.groupdict()
        date: dt.date | None
        if kind in ("range", "dm", "md"):
            date = _future(today, _MONTHS[g["m"]], int(g["d"]), int(g["y"]) if g.get("y") else None)
        elif kind == "numeric":
            date = _future(today, int(g["mn"]), int(g["d"]), int(g["y"]) if g.get("y") else None)
        elif kind == "after_tomorrow":
            date = today + dt.timedelta(days=2)
        elif kind == "tomorrow":
            date = today + dt.timedelta(days=1)
        elif kind == "today":
            date = today
        elif kind in ("weekend", "next_weekend"):
            date = today + dt.timedelta(days=(5 - today.weekday()) % 7)
            date += dt.timedelta(days=7 if kind == "next_weekend" and date - today < dt.timedelta(days=6) else 0)
        elif kind == "next_week":
            date = today + dt.timedelta(days=7 - today.weekday())
        elif kind == "next_month":
            date = dt.date(today.year + today.month // 12, today.month % 12 + 1, 1)
        elif kind == "weekday":
            date = today + dt.timedelta(days=(_WEEKDAYS[g["w"]] - today.weekday()) % 7 or 7)
        elif kind == "in_days":
            date = today + dt.timedelta(days=int(g["n"]) * (7 if g["unit"] in ("semanas", "weeks") else 1))
        else:  # month: its first day, or today when it is this month
            month = _MONTHS[g["m"]]
            date = today if month == today.month else dt.date(today.year + (month < today.month), month, 1)
        if date is not None:
            return date, m.start(), m.end()
    return None


# --- rules ----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Found:
    """What a rule read, before its subject is resolved."""
    attribute: str
    value: str
    target: str  # contact | self | org | self_or_contact | event
    at: int  # where the cue starts: the contact nearest to it is the subject
    who: tuple[int, int] | None = None  # where the rule expects the contact's name
    confidence: float = 0.9
    imperative: bool = False  # still read when the sentence is an order ("llámame Pablo")
    event_date: dt.date | None = None


_NUM_WORDS = {"quince": 15, "veinte": 20, "treinta": 30, "cuarenta y cinco": 45, "sesenta": 60, "noventa": 90,
              "ciento veinte": 120, "fifteen": 15, "twenty": 20, "thirty": 30, "forty five": 45, "forty-five": 45,
              "sixty": 60, "ninety": 90}
_NUM = r"(?P<n>\d{1,3}|" + "|".join(sorted(_NUM_WORDS, key=len, reverse=True)) + ")"


def _days(n: str) -> str | None:
    value = _NUM_WORDS.get(n) or int(n)
    return f"{value} días" if 1 <= value <= 365 else None


_PAY_METHODS = {"transferencia bancaria": "transferencia", "transferencia": "transferencia",
                "recibo domiciliado": "domiciliación", "domiciliacion": "domiciliación", "recibo": "domiciliación",
                "tarjeta": "tarjeta", "bizum": "Bizum", "cheque": "cheque", "pagare": "pagaré",
                "efectivo": "efectivo", "paypal": "PayPal", "bank transfer": "transferencia",
                "transfer": "transferencia", "direct debit": "domiciliación", "card": "tarjeta", "cash": "efectivo",
                "check": "cheque"}
_PAY_METHOD = re.compile(r"\b(?:paga|pagan|nos paga|pays?(?: us)?)\b.{0,40}?\b(?:por|con|mediante|en|by|with|in)\s+"
                         r"(?:un\s+|una\s+)?(?P<v>" + "|".join(sorted(_PAY_METHODS, key=len, reverse=True)) + r")\b")
_PAY_BY = r"(?:por|con|mediante|en)\s+(?:un\s+|una\s+)?(?:" + "|".join(sorted(_PAY_METHODS, key=len, reverse=True)) + ")"
_PAYMENT_TERMS = [re.compile(p) for p in (
    rf"\b(?:nos\s+|me\s+)?(?:paga|pagan|pagara|abona|abonan)\s+(?:(?:siempre|ahora|ya|normalmente|las facturas|sus facturas|todo|{_PAY_BY})\s+)*(?:a|en|con)\s+(?:un plazo de\s+)?{_NUM}\s*(?:dias|d)\b",
    rf"\bplazo de (?:pago|cobro)\b.{{0,40}}?\b(?:es|son|sera|pasa a ser|de)\s+(?:de\s+)?{_NUM}\s*dias",
    rf"\bplazo\s+(?:es|son|sera|pasa a ser|esta en)\s+(?:de\s+|a\s+)?{_NUM}\s*dias",
    rf"\b(?:le|les)\s+(?:damos|dejamos|doy|dejo|cobramos|cobro|facturamos|facturo|pagamos|pago)\s+(?:siempre\s+|ahora\s+)?(?:a\s+)?{_NUM}\s*dias",
    rf"\b(?:nos|me)\s+(?:cobra|cobran|factura|facturan)\s+(?:siempre\s+|ahora\s+)?a\s+{_NUM}\s*dias",
    rf"\b(?:nos|me)\s+(?:da|dan|deja|dejan)\s+{_NUM}\s*dias\s+(?:para pagar|de plazo)",
    rf"\b(?:quedamos|quedado|acordamos|acordado|pactamos|pactado)\s+(?:en\s+)?(?:que\s+)?(?:nos\s+|les?\s+)?(?:pagar\w*|cobrar\w*|pague\w*)\s+a\s+{_NUM}\s*dias",
    rf"\b(?:cobramos|pagamos)\s+a\s+.{{1,40}}?\s+a\s+{_NUM}\s*dias",
    rf"\bpays?\s+(?:us\s+|its invoices\s+|their invoices\s+)?(?:now\s+)?(?:at|in|within|on|after)\s+{_NUM}\s*days",
    rf"\bpayment terms?\b.{{0,30}}?\b(?:are|is|of)\s+(?:now\s+)?(?:net\s+)?{_NUM}(?:\s*days)?",
    rf"\b(?:we\s+)?give\s+(?:them|him|her)\s+{_NUM}\s*days",
    rf"\b(?:cobra|cobran)\s+(?:siempre\s+|ahora\s+)?a\s+{_NUM}\s*dias",
    rf"\b(?:pays?|terms?(?:\s+are|\s+is)?)\s+net\s*{_NUM}\b",
)]
# "paga a 90" (days implied; a small number is not a term), "no paga hasta los 75 días" (a floor, not a
# negation), "tarda unos dos meses en pagar" (a delay in weeks or months, read as days).
_BARE_TERMS = re.compile(r"\b(?:nos\s+|me\s+)?(?:paga|pagan|abona|abonan)\s+(?:siempre\s+|ahora\s+)?a\s+(?:los\s+)?"
                         r"(?P<n>\d{1,3})(?:\s*,|\s*$|\s+(?:siempre|ahora|no|y|pero|desde|como)\b)")
_FLOOR_TERMS = re.compile(rf"\b(?:no|nunca|never|doesn'?t|don'?t)\s+(?:nos\s+|us\s+)?(?:paga|pagan|pay|pays)\s+"
                          rf"(?:\w+\s+){{0,3}}?(?:hasta|antes de|before|until)\s+(?:los\s+|the\s+)?"
                          rf"{_NUM}\s*(?:dias|days)")
_UNITS = {"dias": 1, "days": 1, "semana": 7, "semanas": 7, "week": 7, "weeks": 7, "mes": 30, "meses": 30,
          "month": 30, "months": 30}
_COUNT_WORDS = {"un": 1, "una": 1, "a": 1, "one": 1, "dos": 2, "two": 2, "tres": 3, "three": 3, "cuatro": 4,
                "four": 4, "seis": 6, "six": 6}
_DELAY_TERMS = re.compile(r"\b(?:tarda|tardan|suele tardar|suelen tardar|takes?)\s+(?:como\s+|unos\s+|unas\s+|about\s+|"
                          r"around\s+)?(?P<n>\d{1,3}|un|una|dos|tres|cuatro|seis|one|two|three|four|six|a)\s+"
                          r"(?P<u>dias|semanas|semana|meses|mes|days|weeks|week|months|month)\s+"
                          r"(?:en pagar|(?:to|in) pay)")
_MONTH_END = re.compile(r"\b(?:paga|pagan|nos paga|pays?)\s+(?:siempre\s+)?(?:a|al|at the|at)\s+"
                        r"(?:fin de mes|final de mes|end of (?:the )?month)\b")
_CASH = re.compile(r"\b(?:paga|pagan|nos paga|pays?)\s+(?:siempre\s+)?(?P<v>al contado|por adelantado|por anticipado|a la entrega|upfront|in advance|cash on delivery|on delivery)")
_CASH_VALUES = {"upfront": "por adelantado", "in advance": "por adelantado", "por anticipado": "por adelantado",
                "cash on delivery": "a la entrega", "on delivery": "a la entrega"}


def _rule_payment_terms(s: _Sentence) -> Iterator[_Found]:
    for regex in _PAYMENT_TERMS:
        for m in regex.finditer(s.low):
            value = _days(m.group("n"))
            if value and not s.negated(m.start()):
                yield _Found("plazo_pago", value, "contact", m.start())
                return
    m = _BARE_TERMS.search(s.low)
    if m and not s.negated(m.start()) and 7 <= int(m.group("n")) <= 180:
        yield _Found("plazo_pago", f"{int(m.group('n'))} días", "contact", m.start())
        return
    m = _FLOOR_TERMS.search(s.low)
    if m and _days(m.group("n")):
        yield _Found("plazo_pago", _days(m.group("n")), "contact", m.start())
        return
    m = _DELAY_TERMS.search(s.low)
    if m and not s.negated(m.start()):
        n = _COUNT_WORDS.get(m.group("n")) or int(m.group("n"))
        if 1 <= n * _UNITS[m.group("u")] <= 365:
            yield _Found("plazo_pago", f"{n * _UNITS[m.group('u')]} días", "contact", m.start())
            return
    m = _MONTH_END.search(s.low)
    if m and not s.negated(m.start()):
        yield _Found("plazo_pago", "fin de mes", "contact", m.start())
        return
    m = _CASH.search(s.low)
    if m and not s.negated(m.start()):
        yield _Found("plazo_pago", _CASH_VALUES.get(m.group("v"), m.group("v")), "contact", m.start())


def _rule_payment_method(s: _Sentence) -> Iterator[_Found]:
    m = _PAY_METHOD.search(s.low)
    if m and not s.negated(m.start()):
        yield _Found("forma_pago", _PAY_METHODS[m.group("v")], "contact", m.start())


_ROLES = (r"comercial|gerente|administrador|administradora|encargado|encargada|jefe|jefa|director|directora|"
          r"responsable|rep|sales rep|manager|account manager|contable|accountant")
_CONTACT_PERSON = [re.compile(p) for p in (
    r"\b(?:persona de\s+)?contacto\s+(?:principal\s+)?(?:en|de|con|para)\s+(?P<who>.+?)\s+(?:es|sera|ahora es|pasa a ser|es ahora)\s+(?P<val>)",
    r"\b(?:persona de\s+)?contacto(?:\s+principal)?(?:\s+(?:alli|ahi|there))?\s+(?:es|sera|ahora es|pasa a ser|is)\s+(?P<val>)",
    r"\bcontacto\s*:?\s+(?P<val>)",  # "Acme: contacto Laura"
    r"\b(?:persona|el|la)\s+con\s+(?:la que|el que|quien)\s+(?:hablo|hablamos|trato|tratamos)\s+(?:en|de)\s+(?P<who>.+?)\s+es\s+(?P<val>)",
    r"\ben\s+(?P<who>.+?)\s+(?:hay que hablar con|tenemos que hablar con|hablamos con|hablo con|nos atiende|me atiende|preguntar por|pregunta por|lo lleva|la que manda es|el que manda es)\s+(?P<val>)",
    r"\b(?:quien|la que|el que)\s+(?:lleva|gestiona|se encarga de)\s+(?:las facturas|la facturacion|la contabilidad|los pagos|los cobros|las compras|pagar|cobrar|facturar)(?:\s+(?:en|de)\s+(?P<who>.+?))?\s+es\s+(?P<val>)",
    r"\bcontact(?: person)?\s+(?:at|in|for|with)\s+(?P<who>.+?)\s+is\s+(?:now\s+)?(?P<val>)",
    r"(?P<who>\S+(?:\s+\S+){0,3}?)'s\s+contact(?: person)?\s+is\s+(?:now\s+)?(?P<val>)",
    r"\b(?:at|in)\s+(?P<who>.+?),?\s+(?:we|i)\s+(?:deal|talk|speak)\s+(?:with|to)\s+(?P<val>)",
    # "nuestro comercial en Acme es Javi", "the account manager at Acme is Tom"
    rf"\b(?:el|la|nuestro|nuestra|our|the)\s+(?:nuevo\s+|nueva\s+|new\s+)?(?:{_ROLES})\s+(?:de|del|en|at|of|from)\s+"
    r"(?P<who>.+?)\s+(?:es|is)\s+(?:ahora\s+|now\s+)?(?P<val>)",
    # "Acme tiene nueva gerente, Pilar Ruiz"
    rf"^(?P<who>.+?)\s+(?:tiene|has)\s+(?:un\s+|una\s+|a\s+)?(?:nuevo|nueva|new)\s+"
    rf"(?:{_ROLES}|contacto|contact)\s*,?\s*"
    r"(?:que se llama\s+|llamad[oa]\s+|called\s+|named\s+)?(?P<val>)",
)]
_CONTACT_PERSON_BEFORE = [re.compile(p) for p in (
    r"\s+es\s+(?:el|la|nuestro|nuestra|mi)\s+(?:persona de\s+)?contacto\s+(?:en|de|con)\s+(?P<who>.+)$",
    r"\s+is\s+(?:our|my|the)\s+contact(?: person)?\s+(?:at|in|for)\s+(?P<who>.+)$",
)]


def _rule_contact_person(s: _Sentence) -> Iterator[_Found]:
    for regex in _CONTACT_PERSON:
        m = regex.search(s.low)
        if m and not s.negated(m.start()):
            name = _name_at(s, m.start("val"), strong=False)
            if name:
                who = (m.start("who"), m.end("who")) if m.groupdict().get("who") else None
                yield _Found("persona_contacto", name, "contact", m.start(), who)
                return
    for regex in _CONTACT_PERSON_BEFORE:
        m = regex.search(s.low)
        if m:
            run = re.search(r"([A-ZÁÉÍÓÚÑ][\w'\-]*(?:\s+[A-ZÁÉÍÓÚÑ][\w'\-]*){0,2})$", s.text[: m.start()])
            if run and fold(run.group(1)) not in _NAME_STOP:
                yield _Found("persona_contacto", run.group(1), "contact", m.start(), (m.start("who"), m.end("who")))
                return


_CHANNELS = [(r"correo postal|correo ordinario|carta certificada|burofax|post(?!-)", "correo postal"),
             (r"correo electronico|e-?mail|correo|mail", "email"),
             (r"whats ?app|wasap|wasa|wsp", "WhatsApp"),
             (r"telefono|llamada|phone|telephone", "teléfono"),
             (r"sms|text message", "SMS"),
             (r"portal(?: de proveedores)?|supplier portal", "portal")]
_FORMATS = [(r"pdf", "PDF"), (r"factura electronica|facturae|e-?factura|electronic invoices?|e-?invoices?",
                              "factura electrónica"),
            (r"papel|paper", "papel"), (r"excel|xlsx", "Excel"), (r"xml", "XML")]
_MEDIUM = re.compile(r"\b(?:por|en|via|mediante|a traves de|by|through|as|in|on|over)\s+"
                     r"(?:el\s+|la\s+|su\s+|sus\s+|formato\s+|the\s+|a\s+|an\s+|their\s+|its\s+)?(?P<x>"
                     + "|".join(p for table in (_CHANNELS, _FORMATS) for p, _ in table) + r")\b")
_PREFER_THIRD = re.compile(
    r"\b(?:prefiere|prefieren|quiere|quieren|pide|piden|exige|exigen|necesita|necesitan|solo acepta|solo aceptan|"
    r"acepta|aceptan|le gusta|les gusta|recibe|reciben|van siempre|van|se (?:le |les )?(?:mandan|envian)|"
    r"hay que (?:mandar|enviar)(?:le|les|selas|selo)?|(?:mandale|enviale|mandales|enviales|manda|envia)\s+siempre|"
    r"(?<!i )(?<!we )(?:prefers?|wants?|likes?|needs?|requires?|only accepts?|accepts?|asks? for|goes|go)|"
    r"always (?:send|email))\b")
_PREFER_FIRST = re.compile(r"\b(?:prefiero|preferimos|quiero|queremos|me gusta|nos gusta|me va mejor|"
                           r"i prefer|we prefer|i want|we want|i like|i'd rather|i would rather)\b")


def _medium(word: str) -> tuple[str, str]:
    for table, attribute in ((_CHANNELS, "canal_preferido"), (_FORMATS, "formato_factura")):
        for pattern, value in table:
            if re.fullmatch(pattern, word):
                return attribute, value
    raise ValueError(word)


_DURABLE_SEND = re.compile(r"\b(?:mandale|enviale|mandales|enviales|manda|envia|send|email|facturas|invoices)\b")
_DIRECT_MEDIUM = re.compile(r"\s+(?:el\s+|la\s+|the\s+)?(?P<x>"
                            + "|".join(p for table in (_CHANNELS, _FORMATS) for p, _ in table) + r")\b")
# "quiero la factura en PDF" asks for one document; "quiero las facturas en PDF" is a preference.
_ONE_DOCUMENT = re.compile(r"\s+(?:la|esta|esa|el|este|ese|the|this|that)\s+(?:factura|presupuesto|resumen|informe|"
                           r"invoice|quote|summary|report)\b(?!\s+electronica)")
_FORMAT_ADJECTIVE = re.compile(r"\b(?P<x>paper|pdf|xml|excel|electronic)\s+(?:invoices?|bills?|copies|copy)\b")


def _rule_channel_format(s: _Sentence) -> Iterator[_Found]:
    durable = bool(_DURABLE.search(s.low))
    cues = [(_PREFER_THIRD, "contact"), (_PREFER_FIRST, "self_or_contact")]
    if durable:  # "a Acme mándale las facturas en PDF siempre"
        cues.append((_DURABLE_SEND, "contact"))
    for regex, target in cues:
        for cue in regex.finditer(s.low):
            if s.negated(cue.start()) or (not durable and _ONE_DOCUMENT.match(s.low, cue.end())):
                continue
            seen = set()
            window = (cue.end(), min(len(s.low), cue.end() + 90))
            direct = _DIRECT_MEDIUM.match(s.low, cue.end())  # "I prefer WhatsApp", "prefiere papel"
            for m in [*([direct] if direct else []), *_FORMAT_ADJECTIVE.finditer(s.low, *window),
                      *_MEDIUM.finditer(s.low, *window)]:
                word = m.group("x")
                attribute, value = _medium("factura electronica" if word == "electronic" else word)
                if attribute not in seen:
                    seen.add(attribute)
                    yield _Found(attribute, value, target, cue.start())
            if seen:
                return


_AMOUNTS = re.compile(
    r"\b(?:quiero|prefiero|dame|muestrame|ensename|pon|ponme|pasame|mandame|enviame|dime|send me|give me|show me|"
    r"tell me|i want|i prefer|i'd like)?\s*(?:siempre\s+|always\s+)?(?:los\s+|las\s+|the\s+)?(?:totales|importes|"
    r"precios|cantidades|cifras|totals|amounts|prices|figures)\s+(?:siempre\s+|always\s+)?(?P<v>con|sin|with|without|"
    r"including|excluding|incl|excl)\.?\s+(?:el\s+)?(?:iva|vat|tax|impuestos)\b")


def _rule_amounts(s: _Sentence) -> Iterator[_Found]:
    m = _AMOUNTS.search(s.low)
    if m and not s.negated(m.start()):
        value = "con IVA" if m.group("v") in ("con", "with", "including", "incl") else "sin IVA"
        yield _Found("formato_importes", value, "self", m.start(), imperative=True)


_NAME_CUES = [
    (re.compile(r"\b(?:me llamo|mi nombre es|my name is|my name's|mi nombre completo es)\s+"), True),
    (re.compile(r"\b(?:llamame|llameme|puedes llamarme|me puedes llamar|prefiero que me llames|llamadme|"
                r"call me|you can call me|please call me)\s+"), True),
    (re.compile(r"(?:^|[,.]\s*)(?:hola,?\s+)?(?:soy)\s+"), False),
]


def _rule_name(s: _Sentence) -> Iterator[_Found]:
    for regex, strong in _NAME_CUES:
        m = regex.search(s.low)
        if m and not s.negated(m.start()):
            name = _name_at(s, m.end(), strong)
            if name:
                yield _Found("nombre", name, "self", m.start(), imperative=True)
                return


_TONE = re.compile(r"\b(?:tratame|trateme|tratadme|hablame|hableme|llamame|dirigete a mi|dirijase a mi|"
                   r"puedes tratarme|prefiero que me trates|prefiero que me hables|me puedes tratar|trates|"
                   r"hables)\s+(?:siempre\s+)?de\s+(?P<v>tu|usted)\b")
_TUTEO = re.compile(r"\btute(?:ame|arme|arnos|a|es)\b")
_TONE_EN = re.compile(r"\b(?:be|talk to me|speak to me|write to me|address me|talk|speak|write)\s+(?:more\s+)?"
                      r"(?P<v>informal|informally|casual|casually|formal|formally)\b")


def _rule_tone(s: _Sentence) -> Iterator[_Found]:
    m = _TONE.search(s.low)
    if m:
        value = "tú" if m.group("v") == "tu" else "usted"
        if s.negated(m.start()):  # "no me hables de usted" asks for the other one
            value = "usted" if value == "tú" else "tú"
        yield _Found("tono", value, "self", m.start(), imperative=True)
        return
    m = _TUTEO.search(s.low)
    if m:
        yield _Found("tono", "usted" if s.negated(m.start()) else "tú", "self", m.start(), imperative=True)
        return
    m = _TONE_EN.search(s.low)
    if m and not s.negated(m.start()):
        yield _Found("tono", "usted" if m.group("v").startswith("formal") else "tú", "self", m.start(), imperative=True)


_LANGUAGES = {"ingles": "inglés", "espanol": "español", "castellano": "español", "catalan": "catalán",
              "gallego": "gallego", "euskera": "euskera", "frances": "francés", "aleman": "alemán",
              "portugues": "portugués", "italiano": "italiano", "english": "inglés", "spanish": "español",
              "french": "francés", "german": "alemán", "portuguese": "portugués",
              "italian": "italiano"}
_LANGUAGE = re.compile(r"\b(?:hablame|escribeme|respondeme|contestame|habla|escribe|responde|prefiero hablar|"
                       r"reply|answer|write|talk|speak|respond)(?: to me| me)?\s+(?:siempre\s+|always\s+)?"
                       r"(?:en|in)\s+(?P<v>" + "|".join(_LANGUAGES) + r")\b")


def _rule_language(s: _Sentence) -> Iterator[_Found]:
    m = _LANGUAGE.search(s.low)
    if m and not s.negated(m.start()):
        yield _Found("idioma", _LANGUAGES[m.group("v")], "self", m.start(), imperative=True)


_RELATIVES = {"hijo": "hijo", "hija": "hija", "hijos": "hijos", "hijas": "hijos", "mujer": "pareja",
              "esposa": "pareja", "marido": "pareja", "esposo": "pareja", "pareja": "pareja", "novia": "pareja",
              "novio": "pareja", "madre": "madre", "padre": "padre", "hermano": "hermano", "hermana": "hermana",
              "son": "hijo", "daughter": "hija", "sons": "hijos", "daughters": "hijos", "children": "hijos",
              "kids": "hijos", "wife": "pareja", "husband": "pareja", "partner": "pareja", "girlfriend": "pareja",
              "boyfriend": "pareja", "mother": "madre", "mum": "madre", "mom": "madre", "father": "padre",
              "dad": "padre", "brother": "hermano", "sister": "hermana", "socio": "socio", "socia": "socio",
              "business partner": "socio"}
_REL = "(?P<rel>" + "|".join(sorted(_RELATIVES, key=len, reverse=True)) + ")"
_FAMILY = [
    (re.compile(rf"\b(?:mi|mis|my)\s+{_REL}(?:\s+(?:mayor|menor|pequeno|pequena|pequenos|little|older|younger|eldest|youngest))?(?:'s names? (?:is|are)|\s+se llaman?|\s+is called|\s+is named|\s+are called)\s+"), True),
    (re.compile(rf"\btengo\s+(?:un|una|dos|tres)\s+{_REL}\s*(?:que se llaman?|llamad[oa]s?|,)\s*"), True),
    (re.compile(rf"\b(?:mi|mis|my)\s+{_REL}(?:\s+(?:mayor|menor|pequeno|pequena|little|older|younger))?(?:\s+(?:es|son|is|are)\s+|\s*,\s*|\s+)"), False),
]


def _rule_family(s: _Sentence) -> Iterator[_Found]:
    for regex, strong in _FAMILY:
        m = regex.search(s.low)
        if not m or s.negated(m.start()):
            continue
        attribute = _RELATIVES[m.group("rel")]
        if attribute == "hijos":
            names = re.match(r"\s*([A-ZÁÉÍÓÚÑ]\w+(?:\s*,\s*[A-ZÁÉÍÓÚÑ]\w+)*\s+(?:y|and|e)\s+[A-ZÁÉÍÓÚÑ]\w+)", s.text[m.end():])
            if names:
                yield _Found(attribute, names.group(1), "self", m.start())
                return
            continue
        name = _name_at(s, m.end(), strong)
        if name:
            # A business partner belongs to the company, not to the person's family.
            yield _Found(attribute, name, "org" if attribute == "socio" else "self", m.start())
            return


_OPT_REGIME = r"(?:regimen\s+(?:especial\s+)?(?:de(?:l)?\s+)?)?"
_VAT_REGIMES = [(_OPT_REGIME + r"(?:recargo de equivalencia|equivalence surcharge)", "recargo de equivalencia"),
                (_OPT_REGIME + r"(?:criterio de caja|cash accounting)", "criterio de caja"),
                (r"regimen general|general (?:vat )?(?:regime|scheme)", "general"),
                (r"regimen simplificado|simplified (?:vat )?(?:regime|scheme)", "simplificado"),
                (_OPT_REGIME + r"(?:rebu|bienes usados)", "REBU"),
                (_OPT_REGIME + r"(?:agricultura(?:, ganaderia y pesca)?|reagyp)", "agricultura, ganadería y pesca")]
_IRPF_REGIMES = [(_OPT_REGIME + r"(?:modulos|estimacion objetiva)", "estimación objetiva"),
                 (_OPT_REGIME + r"estimacion directa simplificada", "estimación directa simplificada"),
                 (_OPT_REGIME + r"estimacion directa normal", "estimación directa normal")]
_REGIME_CUE = re.compile(r"\b(?:estamos|estoy|tributamos|tributo|vamos|voy|trabajamos|trabajo|facturamos|"
                         r"facturo|nuestro regimen(?: de iva)? es|mi regimen(?: de iva)? es|we are|we're|i am|"
                         r"i'm|our (?:vat )?(?:scheme|regime) is|(?:tenemos|tengo|llevamos|llevo) el iva)\s+"
                         r"(?:acogid[oa]s?\s+(?:al|a)|en|por|in|under|on)?\s*(?:el\s+|the\s+)?")


def _rule_regime(s: _Sentence) -> Iterator[_Found]:
    for cue in _REGIME_CUE.finditer(s.low):
        rest = s.low[cue.end(): cue.end() + 60]
        for table, attribute in ((_VAT_REGIMES, "regimen_iva"), (_IRPF_REGIMES, "regimen_irpf")):
            for pattern, value in table:
                if re.match(pattern, rest) and not s.negated(cue.start()):
                    yield _Found(attribute, value, "org", cue.start())
                    return


_ADDRESS = [re.compile(p) for p in (
    r"\b(?P<who>nuestra|mi|la|our|my|the)\s+(?:nueva\s+|new\s+)?(?:direccion|domicilio|sede|oficina|address|office address)(?:\s+fiscal|\s+social)?(?:\s+(?:de|of)\s+(?P<of>.+?))?\s+(?:es|esta en|sera|ahora es|es ahora|is|is now)\s*:?\s+(?P<val>)",
    r"\b(?P<who>nos hemos mudado|nos mudamos|nos trasladamos|we(?:'ve| have)? moved)\s+(?:a|to)\s+(?P<val>)",
    r"(?P<of>\S+(?:\s+\S+){0,3}?)'s\s+(?:new\s+)?address\s+is\s+(?P<val>)",
)]
_OWN_COMPANY = re.compile(r"(?:la|mi|nuestra|the|my|our)\s+(?:empresa|sociedad|negocio|company|business)")


def _rule_address(s: _Sentence) -> Iterator[_Found]:
    for regex in _ADDRESS:
        m = regex.search(s.low)
        if not m or s.negated(m.start()):
            continue
        value = _clean_value(s.text[m.start("val"):])
        # An address has a number or a street word; "nuestra oficina es pequeña" is not one.
        if not (5 <= len(value) <= 160 and re.search(r"\d|\b(?:calle|c/|avda|avenida|plaza|paseo|camino|"
                                                     r"carretera|street|road|avenue)\b", fold(value))):
            continue
        of = m.groupdict().get("of")
        # "nuestra dirección", "nos hemos mudado", "la dirección de la empresa": ours; "la dirección de Acme": theirs.
        own = bool(_OWN_COMPANY.fullmatch(of)) if of else m.groupdict().get("who") not in ("la", "the")
        who = (m.start("of"), m.end("of")) if of else None
        yield _Found("direccion", value, "org" if own else "contact", m.start(), None if own else who)
        return


_NIF = re.compile(r"\b(?P<who>nuestro|mi|el|our|my|the)\s+(?:nuevo\s+)?(?:nif|cif|nif-iva|numero de iva|vat(?: number)?|"
                  r"vat id|tax id|tax number)(?:\s+(?:de|of)\s+(?P<of>.+?))?\s+(?:es|is)\s*:?\s+")


def _rule_tax_id(s: _Sentence) -> Iterator[_Found]:
    m = _NIF.search(s.low)
    if not m:
        return
    val = re.match(r"[A-Z0-9][A-Z0-9.\-]{6,14}[A-Z0-9]\b", s.text[m.end():].upper())
    if not val:
        return
    value = re.sub(r"[^A-Z0-9]", "", val.group())
    if not (8 <= len(value) <= 12 and sum(ch.isdigit() for ch in value) >= 7):
        return
    own = m.group("who") in ("nuestro", "mi", "our", "my") or bool(m.group("of") and _OWN_COMPANY.fullmatch(m.group("of")))
    who = (m.start("of"), m.end("of")) if m.group("of") else None
    yield _Found("nif", value, "org" if own else "contact", m.start(), None if own else who)


_COMPANY_NAME = re.compile(r"\b(?:nuestra empresa|mi empresa|la empresa|our company|my company)\s+(?:se llama|is called|is named)\s+")
_ACTIVITY = re.compile(r"\b(?:nos dedicamos a|me dedico a|we specialise in|we specialize in)\s+(?P<val>)")


def _rule_company(s: _Sentence) -> Iterator[_Found]:
    m = _COMPANY_NAME.search(s.low)
    if m and not s.negated(m.start()):
        run = re.match(r"([A-ZÁÉÍÓÚÑ0-9][\w&'.\-]*(?:\s+(?:de\s+|del\s+|y\s+|&\s+)?[A-ZÁÉÍÓÚÑ0-9][\w&'.\-]*)*(?:,?\s+S\.?\s?[LA]\.?(?:U\.?)?)?)", s.text[m.end():])
        if run:
            yield _Found("razon_social", run.group(1).strip(" ,"), "org", m.start())
    m = _ACTIVITY.search(s.low)
    if m and not s.negated(m.start()):
        value = _clean_value(s.text[m.start("val"):])
        if 3 <= len(value) <= 120:
            yield _Found("actividad", value, "org", m.start())


_RETENTION = re.compile(r"\b(?:aplico|aplicamos|facturo con|facturamos con|llevo|llevamos|tengo|tenemos|"
                        r"mi|nuestra|i apply|we apply|my|our)\s+(?:una\s+|un\s+|la\s+|the\s+|a\s+)?(?:retencion|irpf|"
                        r"withholding)(?:\s+(?:de\s+)?irpf)?\s+(?:es\s+|is\s+)?(?:de(?:l)?\s+|of\s+)?(?P<n>\d{1,2})\s*(?:%|por ciento|percent)")


def _rule_retention(s: _Sentence) -> Iterator[_Found]:
    m = _RETENTION.search(s.low)
    if m and not s.negated(m.start()) and 1 <= int(m.group("n")) <= 35:
        yield _Found("retencion_irpf", f"{int(m.group('n'))}%", "org", m.start())


_DISCOUNT = [re.compile(p) for p in (
    r"\b(?:le|les)\s+(?:hacemos|aplicamos|damos)\s+(?:siempre\s+)?(?:un|el)\s+(?P<n>\d{1,2})\s*(?:%|por ciento)\s+de\s+descuento",
    r"\btiene(?:n)?\s+(?:siempre\s+)?(?:un|el)\s+(?P<n>\d{1,2})\s*(?:%|por ciento)\s+de\s+descuento",
    r"\b(?:gets?|has)\s+(?:a\s+)?(?P<n>\d{1,2})\s*(?:%|percent)\s+discount",
    r"\bdescuento\s+(?:de|para|a)\s+.{1,40}?\s+es\s+(?:de\s+|del\s+)?(?:un\s+)?(?P<n>\d{1,2})\s*(?:%|por ciento)",
)]


def _rule_discount(s: _Sentence) -> Iterator[_Found]:
    for regex in _DISCOUNT:
        m = regex.search(s.low)
        if m and not s.negated(m.start()):
            yield _Found("descuento", f"{int(m.group('n'))}%", "contact", m.start())
            return


_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_PHONE = re.compile(r"(?<![\w+])(?:\+|00)?\d[\d .-]{7,15}\d(?!\w)")
_EMAIL_CUE = re.compile(r"\b(?:email|e-mail|correo|mail|direccion de correo|email address)\b")
_PHONE_CUE = re.compile(r"\b(?:telefono|movil|tlf|tel|phone|mobile)\b")
_OF_SLOT = re.compile(r"\s+(?:de facturacion\s+|de contacto\s+)?(?:de|del|of)\s+(?P<who>.+?)\s+(?:es|is)\b")
_OWN_BEFORE = re.compile(r"\b(?:nuestro|mi|our|my)\s+$")


def _rule_email_phone(s: _Sentence) -> Iterator[_Found]:
    for cue_re, value_re, attribute in ((_EMAIL_CUE, _EMAIL, "email"), (_PHONE_CUE, _PHONE, "telefono")):
        cue = cue_re.search(s.low)
        found = value_re.search(s.text, cue.end()) if cue else None
        if not found or (attribute == "telefono" and find_bank_account(s.text)):
            continue
        value = found.group().lower().rstrip(".") if attribute == "email" else re.sub(r"[^\d+]", "", found.group())
        if attribute == "telefono" and not 9 <= len(value.lstrip("+")) <= 13:
            continue
        slot = _OF_SLOT.match(s.low, cue.end())
        if _OWN_BEFORE.search(s.low[: cue.start()]):
            yield _Found(attribute, value, "org", cue.start())
        else:
            yield _Found(attribute, value, "contact", cue.start(), (slot.start("who"), slot.end("who")) if slot else None)


_ACCOUNT_CUE = re.compile(r"\b(?:iban|cuenta|numero de cuenta|account|bank details|datos bancarios|ccc)\b")
_OWN = re.compile(r"\b(?:nuestro|nuestra|nuestros|mi|mis|our|my)\s+(?:nuevo\s+|nueva\s+|new\s+)?(?:iban|cuenta|numero de cuenta|"
                  r"bank account|account|datos bancarios|bank details)\b")


def _rule_bank_account(s: _Sentence) -> Iterator[_Found]:
    account = find_bank_account(s.text)
    if not account:
        return
    cue = _ACCOUNT_CUE.search(s.low)
    at = cue.start() if cue else 0
    yield _Found("cuenta_bancaria", account, "org" if _OWN.search(s.low) else "contact", at)


_EVENT_NOUNS = (r"reunion|reuniones|cita|viaje|vacaciones|feria|congreso|evento|comida|cena|visita|llamada|"
                r"videollamada|formacion|curso|entrega|boda|cumpleanos|inspeccion|auditoria|juicio|"
                r"meeting|appointment|trip|call|dinner|lunch|visit|conference|fair|holiday|holidays|vacation|"
                r"training|course|delivery|wedding|birthday|audit|trade show")
_EVENT_SHAPES = [
    # "estoy en Madrid" -> "en Madrid"
    (re.compile(r"^(?:yo\s+|nosotros\s+)?(?:estoy|estare|estaremos|estamos|voy a estar|vamos a estar|i'm|i am|"
                r"i'll be|i will be|we're|we are|we'll be|we will be)\s+(?=(?:en|fuera|de viaje|de vacaciones|"
                r"in|at|away|out|on holiday|on vacation|travelling|traveling)\b)"), "after"),
    # "tengo reunión con Acme" -> "reunión con Acme"
    (re.compile(rf"^(?:tengo|tenemos|hay|habra|i have|i've got|we have|we've got|i'm having|we're having)\s+"
                rf"(?:una\s+|un\s+|la\s+|el\s+|a\s+|an\s+|the\s+)?(?=(?:{_EVENT_NOUNS})\b)"), "after"),
    # "reunión con Acme"
    (re.compile(rf"^(?:la\s+|el\s+|una\s+|un\s+|a\s+|an\s+|the\s+|my\s+|our\s+|mi\s+|nuestra\s+)?(?={_EVENT_NOUNS}\b)"), "after"),
    # "me voy a Lisboa", "cerramos por vacaciones": the whole remainder
    (re.compile(r"^(?:me voy|nos vamos|voy|vamos|viajo|viajamos|i'm going|we're going|i'm flying|i fly|i travel|"
                r"we travel)\s+(?:a|de|to|on)\s+(?=[A-Za-zÁÉÍÓÚÑáéíóúñ])"), "whole"),
    (re.compile(r"^(?:cerramos|cierro|cerrado|cerrados|estamos cerrados|we're closed|we are closed|closed)\b"), "whole"),
]
_PAST = re.compile(r"\b(?:ayer|anoche|estuve|estuvimos|tuve|tuvimos|fui|fuimos|fue|was|were|had|went|yesterday|"
                   r"last week|la semana pasada|el mes pasado|last month)\b")
_TIME = re.compile(r"\b(?:a las|sobre las|at|a eso de las)\s+\d{1,2}(?:[:.h]\d{2})?(?:\s*(?:h|am|pm|horas))?\b")


def _rule_event(s: _Sentence, today: dt.date) -> Iterator[_Found]:
    if _PAST.search(s.low):
        return
    found = find_date(s.low, today)
    if not found:
        return
    date, start, end = found
    if date < today:
        return
    rest = s.text[:start] + " " + s.text[end:]
    for m in reversed(list(_TIME.finditer(fold(rest)))):
        rest = rest[: m.start()] + " " + rest[m.end():]
    rest = re.sub(r"\s+", " ", rest).strip(" ,.;:")
    rest = re.sub(r"^(?:y|que|and|pues|also|también|tambien)\s+", "", rest, flags=re.IGNORECASE)
    low = fold(rest)
    for regex, mode in _EVENT_SHAPES:
        m = regex.match(low)
        if not m:
            continue
        value = _clean_value(rest if mode == "whole" else rest[m.end():])
        if mode == "whole" and re.match(r"^(?:me voy|nos vamos|voy|vamos|i'm going|we're going)\s+(?:a|to)\s+\w+(?:ar|er|ir)\b", low):
            continue  # "voy a facturar": an intention, not a trip
        if 3 <= len(value) <= 120:
            yield _Found("evento", value, "event", 0, event_date=date)
        return


# Every rule reads every sentence; the event rule only reads a sentence none of these found anything in.
_RULES = (_rule_bank_account, _rule_payment_terms, _rule_payment_method, _rule_contact_person,
          _rule_channel_format, _rule_amounts, _rule_name, _rule_tone, _rule_language, _rule_family,
          _rule_regime, _rule_address, _rule_tax_id, _rule_company, _rule_retention, _rule_discount,
          _rule_email_phone)


# --- subjects -------------------------------------------------------------------------------------

_SUPPLIER_WORDS = re.compile(r"\b(?:proveedor|proveedora|proveedores|supplier|vendor|nos vende|nos suministra|"
                             r"le compramos|les compramos|le pagamos|les pagamos|pagamos a|we pay|we buy)\b")
_SENTENCE_TEMPLATES = {
    "plazo_pago": "{who} paga a {value}.",
    "forma_pago": "Forma de pago {of}: {value}.",
    "persona_contacto": "La persona de contacto {of} es {value}.",
    "canal_preferido": "{who} prefiere recibir las facturas por {value}.",
    "formato_factura": "{who} quiere las facturas en formato {value}.",
    "formato_importes": "Quiere ver los totales {value}.",
    "nombre": "Se llama {value}.",
    "tono": "Prefiere que le traten de {value}.",
    "idioma": "Prefiere que le hablen en {value}.",
    "hijo": "Tiene un hijo que se llama {value}.",
    "hija": "Tiene una hija que se llama {value}.",
    "hijos": "Sus hijos se llaman {value}.",
    "pareja": "Su pareja se llama {value}.",
    "madre": "Su madre se llama {value}.",
    "padre": "Su padre se llama {value}.",
    "hermano": "Su hermano se llama {value}.",
    "hermana": "Su hermana se llama {value}.",
    "socio": "El socio {of} es {value}.",
    "direccion": "La dirección {of} es {value}.",
    "regimen_iva": "{who} está en el régimen de IVA: {value}.",
    "regimen_irpf": "{who} tributa en {value}.",
    "retencion_irpf": "{who} aplica una retención de IRPF del {value}.",
    "nif": "El NIF {of} es {value}.",
    "razon_social": "La razón social {of} es {value}.",
    "actividad": "{who} se dedica a {value}.",
    "cuenta_bancaria": "La cuenta bancaria {of} es {value}.",
    "email": "El email {of} es {value}.",
    "telefono": "El teléfono {of} es {value}.",
    "descuento": "{who} tiene un descuento del {value}.",
}


@dataclass(frozen=True)
class _Subject:
    key: str  # self | org | contact:<id> | name:<normalised>
    label: str
    category: str
    confidence: float = 0.9


def _contact_subject(c: KnownContact, confidence: float) -> _Subject:
    return _Subject(f"contact:{c.id}", c.name, "supplier" if c.kind == "supplier" else "customer", confidence)


def _resolve_contact(s: _Sentence, found: _Found, mentions: list[_Mention], fallback: list[_Mention],
                     values: set[str]) -> _Subject | None:
    """The contact a contact-fact is about: named in its slot, nearest to its cue, or the one just talked about."""
    if found.who:
        inside = [m for m in mentions if m.start >= found.who[0] and m.end <= found.who[1]]
        if inside:
            return _contact_subject(inside[0].contact, inside[0].confidence)
    if mentions:
        best = min(mentions, key=lambda m: (m.start > found.at, abs(m.start - found.at)))
        return _contact_subject(best.contact, best.confidence)
    start, end = found.who if found.who else (0, found.at)
    # A capitalised name that is another fact's value ("el contacto es Marisa") is not the subject.
    runs = [r for r in _name_runs(s, start, end) if r[0] not in values]
    if runs:
        text = runs[-1][0]
        key = normalise_name(text)
        if key:
            supplier = _SUPPLIER_WORDS.search(s.low)
            return _Subject(f"name:{key}", text, "supplier" if supplier else "customer", 0.7)
    distinct = {m.contact.id: m.contact for m in fallback}
    if len(distinct) == 1:
        return _contact_subject(next(iter(distinct.values())), 0.7)
    return None


def _sentence_for(attribute: str, subject: _Subject, value: str) -> str:
    who = {"self": "La persona", "org": "La empresa"}.get(subject.key, subject.label)
    of = {"self": "de la persona", "org": "de la empresa"}.get(subject.key, f"de {subject.label}")
    template = _SENTENCE_TEMPLATES.get(attribute, "{who}: {attribute} {value}.")
    if attribute == "plazo_pago" and not value[0].isdigit():
        template = "{who} paga {value}."
    return template.format(who=who, of=of, value=value, attribute=attribute.replace("_", " "))


# --- the extractor --------------------------------------------------------------------------------

class LocalExtractor:
    """Rule-based extraction of atomic facts from one message."""

    model = MODEL

    def extract(self, context: ExtractionContext) -> tuple[list[Fact], Usage]:
        facts: dict[tuple[str, str], Fact] = {}
        # "Le pagamos a 10 días", "el contacto allí es Marisa": the contact named just before, in this
        # message or else in the assistant's previous turn.
        recent = _find_mentions(_Sentence.of(context.previous_assistant or ""), context.contacts)
        read: list[tuple[_Sentence, list[_Mention], list[_Mention]]] = []
        for raw in _sentences(context.message or ""):
            s = _Sentence.of(raw)
            mentions = _find_mentions(s, context.contacts)
            read.append((s, mentions, recent))
            for fact in self._sentence_facts(s, context, mentions, recent):
                facts.pop((fact.subject, fact.attribute), None)  # the later statement in a message wins
                facts[(fact.subject, fact.attribute)] = fact
            recent = mentions or recent
        if not facts and context.gate_category is not None:
            # The gate judged the message worth remembering and no shape matched: keep it as one generic fact.
            from memory_core.backends.local_extractor_fallback import generic_fact

            fact = generic_fact(read, context)
            if fact is not None:
                facts[(fact.subject, fact.attribute)] = fact
        return list(facts.values()), Usage(purpose="extract", model=MODEL)

    def _sentence_facts(self, s: _Sentence, context: ExtractionContext, mentions: list[_Mention],
                        recent: list[_Mention]) -> Iterator[Fact]:
        prefix = _REMEMBER_PREFIX.match(s.low)
        if prefix and prefix.end():
            s = _Sentence.of(s.text[prefix.end():])
            mentions = _find_mentions(s, context.contacts)
        if not statement(s):
            return
        order = is_order(s)
        found: list[_Found] = [f for rule in _RULES for f in rule(s)]
        if not found:
            found = list(_rule_event(s, context.today))
        values = {f.value for f in found}
        for f in found:
            if order and not f.imperative:
                continue
            subject = self._subject(s, f, mentions, recent, values)
            if subject is None:
                continue
            stored = tuple(context.known_attributes.get(subject.key, ()))
            attribute = reuse_attribute(f.attribute, stored)
            if f.target == "event":
                sentence = f"El {f.event_date:%d/%m/%Y}: {f.value}."
            else:
                sentence = _sentence_for(f.attribute, subject, f.value)
            yield Fact(subject=subject.key, attribute=attribute, value=f.value, sentence=sentence,
                       category=self._category(f, subject), event_date=f.event_date,
                       confidence=round(min(f.confidence, subject.confidence), 2))

    @staticmethod
    def _subject(s: _Sentence, f: _Found, mentions: list[_Mention], recent: list[_Mention],
                 values: set[str]) -> _Subject | None:
        if f.target in ("self", "event"):
            return _Subject("self", "", "person")
        if f.target == "org":
            return _Subject("org", "", "company")
        if f.target == "self_or_contact" and not mentions:
            return _Subject("self", "", "person")
        return _resolve_contact(s, f, mentions, recent if f.target == "contact" else [], values)

    @staticmethod
    def _category(f: _Found, subject: _Subject) -> str:
        if f.target == "event":
            return "event"
        if subject.key == "self":
            family = {"nombre", "hijo", "hija", "hijos", "pareja", "madre", "padre", "hermano", "hermana"}
            return "person" if f.attribute in family else "preference"
        return subject.category


def extract(context: ExtractionContext) -> tuple[list[Fact], Usage]:
    """Module-level shortcut for LocalExtractor().extract."""
    return LocalExtractor().extract(context)


