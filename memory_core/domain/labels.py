"""The words people read for the domain's internal names, in Spanish and English: attributes, areas, levels,
statuses, kinds, roles, tables. One home for the console, the review queue, the readable export and the memory
block. Stored names never reach a page as they are: an unknown attribute gets a humanised label
("nota_quiere" -> "Nota: quiere" / "Note: wants")."""
from __future__ import annotations

import re
from functools import lru_cache

LANGUAGES = ("es", "en")

# Attribute names are stored in Spanish; the known ones, named in each language.
ENGLISH_LABELS = {
    "nombre": "name", "apodo": "nickname", "tono": "tone", "tratamiento": "form of address", "idioma": "language",
    "pareja": "partner", "esposa": "wife", "esposo": "husband", "marido": "husband", "mujer": "wife",
    "hijo": "son", "hija": "daughter", "hijos": "children", "madre": "mother", "padre": "father",
    "hermano": "brother", "hermana": "sister", "ciudad": "city", "profesion": "profession", "cargo": "role",
    "empresa": "company", "empleo": "job", "trabajo": "job", "familia": "family", "mascota": "pet",
    "aficiones": "hobbies", "dieta": "diet", "vivienda": "home", "ubicacion": "location", "perfil": "profile",
    "relacion": "relationship", "evento": "event", "plan": "plan", "planes": "plans",
    "plazo_pago": "payment term", "forma_pago": "payment method", "persona_contacto": "contact person",
    "canal_preferido": "preferred channel", "formato_factura": "invoice format", "formato_importes": "amounts format",
    "direccion": "address", "nif": "tax ID", "razon_social": "legal name", "actividad": "activity",
    "cuenta_bancaria": "bank account", "email": "email", "telefono": "phone", "descuento": "discount",
    "horario": "opening hours", "entregas": "deliveries", "precios": "prices", "facturacion": "invoicing",
    "avisos": "reminders", "estilo_respuesta": "answer style", "plantilla": "staff", "web": "website",
    "seguros": "insurance", "fiscal": "tax", "fundacion": "founded", "moneda": "currency", "garantia": "warranty",
    "herramientas": "tools", "socio": "partner", "regimen_iva": "VAT scheme", "pasatiempo": "pastime",
    "retencion_irpf": "income tax withholding", "aficion": "hobby", "instrumento": "instrument",
    "no_come": "does not eat", "nota": "note", "trabajo_anterior": "previous job",
    "hora_apertura": "opening time", "hora_cierre": "closing time", "vencimiento": "falls due",
    "situacion": "trading status", "dia_facturacion": "billing day", "aniversario": "anniversary",
    "cumpleanos": "birthday", "residencia": "lives in", "empleador": "employer", "mudanza": "move",
    "comida_favorita": "favourite food", "dia_entrega": "delivery day", "aseguradora": "insurer",
    "cambio_precios": "price change", "contable": "accountant", "gestoria": "accounting firm", "abogado": "lawyer",
    "banco": "bank", "novio": "boyfriend", "novia": "girlfriend", "regimen_irpf": "income tax scheme",
}
# Where the stored name, with its underscores as spaces, is not how Spanish writes it.
SPANISH_LABELS = {
    "profesion": "profesión", "ubicacion": "ubicación", "relacion": "relación", "direccion": "dirección",
    "nif": "NIF", "razon_social": "razón social", "telefono": "teléfono", "facturacion": "facturación",
    "fundacion": "fundación", "garantia": "garantía", "regimen_iva": "régimen de IVA",
    "retencion_irpf": "retención de IRPF", "plazo_pago": "plazo de pago", "forma_pago": "forma de pago",
    "persona_contacto": "persona de contacto", "formato_factura": "formato de factura",
    "formato_importes": "formato de importes", "estilo_respuesta": "estilo de respuesta", "aficion": "afición",
    "no_come": "no come", "email": "email", "hora_apertura": "hora de apertura", "hora_cierre": "hora de cierre",
    "situacion": "situación", "dia_facturacion": "día de facturación", "cumpleanos": "cumpleaños",
    "dia_entrega": "día de entrega", "gestoria": "gestoría", "regimen_irpf": "régimen de IRPF",
    "comida_favorita": "comida favorita", "cambio_precios": "cambio de precios",
}
# The first word of a generic note (`nota_<topic>_...`), in English.
NOTE_TOPICS_EN = {
    "quiere": "wants", "prefiere": "prefers", "necesita": "needs", "odia": "hates", "le_gusta": "likes",
    "gusta": "likes", "tiene": "has", "usa": "uses", "trabaja": "works", "vive": "lives", "va": "goes",
    "piensa": "thinks", "suele": "usually", "evita": "avoids", "busca": "looks for", "espera": "expects",
}
# A generic note's attribute names only its first word: the value says it all.
NOTE_PREFIXES = ("nota_", "note_")

# Each family of internal words, value -> (Spanish, English).
TERMS: dict[str, dict[str, tuple[str, str]]] = {
    "level": {"personal": ("personal", "personal"), "private": ("privada", "private"),
              "shared": ("compartida", "shared")},
    "status": {"active": ("vigente", "current"), "superseded": ("sustituida", "superseded"),
               "proposed": ("propuesta", "proposed"), "rejected": ("rechazada", "rejected"),
               "current": ("vigente", "current")},
    "area": {"general": ("general", "general"), "company": ("empresa", "company"),
             "contacts": ("contactos", "contacts"),
             "invoices": ("facturas", "invoices"), "quotes": ("presupuestos", "quotes"),
             "expenses": ("gastos", "expenses"), "documents": ("documentos", "documents")},
    "category": {"person": ("persona", "person"), "company": ("empresa", "company"),
                 "customer": ("cliente", "customer"),
                 "supplier": ("proveedor", "supplier"), "preference": ("preferencia", "preference"),
                 "event": ("evento", "event"), "sheet": ("ficha", "subject sheet"), "nothing": ("nada", "nothing")},
    "proposal_kind": {"bank_account": ("Cuenta bancaria sin verificar", "Unverified bank account"),
                      "confirmation": ("Confirmación", "Confirmation"),
                      "low_permission": ("Permiso insuficiente", "Low permission")},
    "role": {"owner": ("propietario", "owner"), "admin": ("administrador", "admin"), "member": ("miembro", "member"),
             "platform_admin": ("administrador de la plataforma", "platform admin"),
             "staff": ("soporte", "staff"), "privacy_officer": ("delegado de privacidad", "privacy officer"),
             "user": ("usuario", "user")},
    "contact_kind": {"customer": ("cliente", "customer"), "supplier": ("proveedor", "supplier")},
    "memory_mode": {"automatic": ("automático", "automatic"), "confirmation": ("con confirmación", "confirmation")},
    "permission": {"read": ("lectura", "read"), "edit": ("edición", "edit"), "none": ("sin acceso", "no access"),
                   "": ("sin acceso", "no access")},
    "origin": {"chat": ("conversación", "conversation"), "console": ("consola", "console"), "api": ("API", "API"),
               "review": ("revisión", "review"), "import": ("importación", "import"),
               "restore": ("restaurada", "restored"),
               "sheet": ("ficha", "subject sheet"), "whatsapp": ("WhatsApp", "WhatsApp"), "web": ("web", "web"),
               "background": ("aprendida de una conversación", "learnt from a conversation"),
               "explicit": ("pedida en una conversación", "asked for in a conversation"),
               "conversation": ("conversación", "conversation")},
    "channel": {"web": ("web", "web"), "whatsapp": ("WhatsApp", "WhatsApp"), "api": ("API", "API"),
                "email": ("email", "email")},
    "message_role": {"user": ("persona", "person"), "assistant": ("asistente", "assistant"),
                     "system": ("sistema", "system"), "tool": ("herramienta", "tool")},
    "job_status": {"running": ("en curso", "running"), "succeeded": ("terminado", "succeeded"),
                   "done": ("terminado", "done"), "failed": ("fallido", "failed"), "queued": ("en cola", "queued"),
                   "ok": ("correcto", "ok")},
    "job": {"retention": ("Retención", "Retention"), "expiry": ("Caducidad", "Expiry"),
            "sheets": ("Fichas", "Subject sheets"), "subject_sheets": ("Fichas", "Subject sheets"),
            "nightly": ("Nocturno", "Nightly"), "privacy": ("Privacidad", "Privacy"),
            "compaction": ("Compactación", "Compaction"), "outbox": ("Cola de aprendizaje", "Learning queue")},
    "privacy_kind": {"erasure": ("Supresión", "Erasure"), "access": ("Acceso", "Access"),
                     "portability": ("Portabilidad", "Portability"),
                     "rectification": ("Rectificación", "Rectification")},
    "privacy_status": {"received": ("recibida", "received"), "verified": ("verificada", "verified"),
                       "previewed": ("revisada", "previewed"), "executed": ("ejecutada", "executed"),
                       "delivered": ("entregada", "delivered"), "rejected": ("rechazada", "rejected"),
                       "running": ("en curso", "running"), "failed": ("fallida", "failed")},
    "exclusion": {"secret": ("secreto", "secret"), "special": ("categoría especial", "special")},
    # What a platform staff member looked at (audit actions staff.view.<what>).
    "staff_view": {"traces": ("las trazas", "the traces"), "trace": ("una traza", "a trace"),
                   "usage": ("el consumo", "the usage"), "jobs": ("las tareas", "the jobs"),
                   "audit": ("el registro de auditoría", "the audit log")},
    "target": {"memory": ("memoria", "memory"), "contact": ("contacto", "contact"),
               "api_key": ("clave de API", "API key"),
               "privacy_request": ("solicitud de privacidad", "privacy request"), "user": ("usuario", "user"),
               "job": ("tarea", "job"), "org": ("organización", "organization"),
               "organization": ("organización", "organization"), "conversation": ("conversación", "conversation"),
               "membership": ("pertenencia", "membership"), "phone": ("teléfono", "phone"),
               "exclusion": ("regla de exclusión", "exclusion rule"), "proposal": ("propuesta", "proposal")},
    # What a model call was for (the usage ledger); the English names are the stored ones.
    "purpose": {"gate": ("filtro", "gate"), "extract": ("extracción", "extract"), "embed": ("vectores", "embed"),
                "compact": ("resumen", "compact")},
    "block": {"core": ("sobre la persona", "about the person"), "profile": ("perfil", "profile"),
              "related": ("relacionada", "related")},
    "subject_type": {"user": ("usuario", "user"), "phone": ("número de WhatsApp", "WhatsApp number"),
                     "contact": ("contacto", "contact")},
    # The tables an erasure plan, its preview and an export name, as a person reads them.
    "table": {
        "users": ("La cuenta de la persona", "The person's account"), "memberships": ("Pertenencias", "Memberships"),
        "messages": ("Mensajes", "Messages"), "conversations": ("Conversaciones", "Conversations"),
        "conversation_summaries": ("Resúmenes de conversaciones", "Conversation summaries"),
        "memories": ("Memorias (todas sus versiones)", "Memories (every version)"),
        "memory_sources": ("Enlaces de las memorias a sus mensajes", "Links from memories to their messages"),
        "memory_traces": ("Bloques de memoria enviados al asistente", "Memory blocks sent to the assistant"),
        "trace_items": ("Memorias incluidas en esos bloques", "Memories shown in those blocks"),
        "notifications": ("Avisos", "Notifications"), "link_codes": ("Códigos de vinculación de WhatsApp",
                                                                      "WhatsApp link codes"),
        "phone_authorizations": ("Teléfonos autorizados", "Authorized phones"),
        "documents": ("Documentos", "Documents"), "outbox": ("Mensajes pendientes de aprender",
                                                             "Messages waiting to be learnt"),
        "login_attempts": ("Intentos de inicio de sesión", "Sign-in attempts"),
        "privacy_requests": ("Solicitudes de privacidad", "Privacy requests"),
        "usage_ledger": ("Registros de consumo", "Usage records"), "contacts": ("Contactos", "Contacts"),
        "api_keys": ("Claves de API", "API keys"), "platform_api_keys": ("Claves de API de la plataforma",
                                                                         "Platform API keys"),
        "account_tokens": ("Enlaces de invitación y de cambio de contraseña", "Invitation and password-reset links"),
        "audit_log": ("Registro de auditoría", "Audit log"), "job_runs": ("Ejecuciones de tareas", "Job runs"),
    },
}

# Readable stand-ins the pages need for things that have no name of their own.
PHRASES: dict[str, tuple[str, str]] = {
    "self": ("el autor (sobre sí mismo)", "the author (about themselves)"),
    "org": ("la empresa", "the company"),
    "hidden_contact": ("un contacto que no puedes ver", "a contact you may not see"),
    "former_user": ("un antiguo usuario", "a former user"),
    "former_member": ("antiguo miembro", "former member"),
    "erased_user": ("usuario suprimido", "erased user"),
    "note": ("Nota", "Note"),
    "fact": ("Dato", "Fact"),
    "you": ("Tú", "You"),
    "your_org": ("Tu organización", "Your organization"),
}


# Values are stored in one canonical (Spanish) form, so a term said in either language supersedes the other;
# an English sentence or block says them in English.
_ENGLISH_VALUES = {"fin de mes": "at the end of the month", "por adelantado": "in advance",
                   "a la entrega": "on delivery", "contra reembolso": "cash on delivery", "al contado": "cash",
                   "inglés": "English", "español": "Spanish", "catalán": "Catalan", "gallego": "Galician",
                   "euskera": "Basque", "francés": "French", "alemán": "German", "portugués": "Portuguese",
                   "italiano": "Italian", "transferencia": "bank transfer", "domiciliación": "direct debit",
                   "tarjeta": "card", "efectivo": "cash", "pagaré": "promissory note", "correo postal": "post",
                   "teléfono": "phone", "papel": "paper", "factura electrónica": "e-invoice"}
_DAYS_VALUE = re.compile(r"^(\d+) días?$")


def english_value(value: str) -> str:
    """A canonical value as an English sentence says it: "45 días" is "45 days", "fin de mes" "at the end of the
    month"; any other value as it is."""
    days = _DAYS_VALUE.match(value)
    if days:
        return f"{days.group(1)} day{'s' if days.group(1) != '1' else ''}"
    return _ENGLISH_VALUES.get(value, value)


def _lang(lang: str | None) -> int:
    return 1 if (lang or "")[:2] == "en" else 0


def humanise(name: str) -> str:
    """An internal name as words: underscores to spaces, the first letter capital."""
    words = " ".join(name.replace("_", " ").split())
    return words[:1].upper() + words[1:]


def term(family: str, value: str | None, lang: str = "en") -> str:
    """The label of an internal word of one family (a level, a status, an area...); humanised when unknown."""
    if value is None:
        return "—"
    found = TERMS.get(family, {}).get(str(value))
    return found[_lang(lang)] if found else humanise(str(value))


def phrase(key: str, lang: str = "en") -> str:
    return PHRASES[key][_lang(lang)]


def attribute_name(name: str, lang: str = "en") -> str:
    """A known attribute's name in the language (lower case), else the stored name with spaces; a note's
    topic as its words. Used by the memory block (where a note goes without a label) and by the pages."""
    from memory_core.domain.ladder import attribute_family

    if lang[:2] == "en":
        return ENGLISH_LABELS.get(name) or ENGLISH_LABELS.get(attribute_family(name)) or name.replace("_", " ")
    return SPANISH_LABELS.get(name) or SPANISH_LABELS.get(attribute_family(name)) or name.replace("_", " ")


_LONGEST_FIRST = sorted(ENGLISH_LABELS, key=len, reverse=True)  # "no_come" before "nota"...


def value_named_family(name: str, value: str | None = None) -> str | None:
    """The family of an attribute named after its value so that several live side by side (hijo_juan, mascota_coco,
    aficion_pintura), when the family has a label; else None. Given the value, only when the rest of the name is in
    it ("mascota_coco" of "perro Coco"; "direccion_envio" of "Calle Mayor 3" is named on its own)."""
    from memory_core.domain.text import fold

    family = _labelled_family(name)
    if family is None:
        return None
    return family if value is None or name[len(family) + 1:].replace("_", " ") in fold(value) else None


@lru_cache(maxsize=4096)
def _labelled_family(name: str) -> str | None:
    """The labelled family an attribute's name starts with, other than the name itself (a block labels hundreds of
    memories a turn: worked out once per name)."""
    from memory_core.domain.ladder import attribute_family

    if name in ENGLISH_LABELS:
        return None
    family = attribute_family(name)
    if family == name:
        family = next((known for known in _LONGEST_FIRST if name.startswith(known + "_")), name)
    if family == name or not name.startswith(family + "_") or family not in ENGLISH_LABELS:
        return None
    return family


def attribute(key: str | None, lang: str = "en") -> str:
    """An attribute as a page shows it: "cuenta_bancaria" -> "Cuenta bancaria" / "Bank account";
    "nota_quiere" -> "Nota: quiere" / "Note: wants"."""
    from memory_core.domain.ladder import NOTE_SEPARATOR

    if not key:
        return phrase("fact", lang)
    name = key.split(NOTE_SEPARATOR, 1)[0]
    for prefix in NOTE_PREFIXES:
        if name.startswith(prefix):
            topic = name[len(prefix):]
            if lang[:2] == "en":
                words = topic.split("_")
                head = NOTE_TOPICS_EN.get("_".join(words[:2])) and 2 or (1 if words[0] in NOTE_TOPICS_EN else 0)
                first = NOTE_TOPICS_EN.get("_".join(words[:head])) if head else None
                topic = " ".join(([first] if first else []) + words[head:])
            return f"{phrase('note', lang)}: {topic.replace('_', ' ')}".rstrip(": ")
    family = value_named_family(name)
    if family:  # "Hijo: juan" / "Son: juan"
        return f"{humanise(attribute_name(family, lang))}: {name[len(family) + 1:].replace('_', ' ')}"
    return humanise(attribute_name(name, lang))


def named_subject(subject: str, *texts: str | None) -> str:
    """A subject remembered by name ("name:optica sol") as people write it: its spelling in the fact's own
    sentence or value when found there ("Óptica Sol"), else its words capitalised ("Optica Sol")."""
    from memory_core.domain.text import fold

    key = subject.split(":", 1)[-1].strip()
    for text in texts:
        if text:
            at = fold(text).find(key)
            if at >= 0:
                return text[at:at + len(key)]
    return " ".join(w[:1].upper() + w[1:] for w in key.split())


def money(value, lang: str = "en", digits: int = 2) -> str:
    """An amount in US dollars (what the model providers bill in), with `digits` decimals, as the language writes it."""
    from babel import Locale
    from babel.numbers import format_currency

    locale = Locale.parse(lang[:2] if lang[:2] in LANGUAGES else "en")
    pattern = locale.currency_formats["standard"].pattern.split(";")[0].replace(".00", "." + "0" * digits)
    return format_currency(value, "USD", pattern, locale=locale, currency_digits=False)


def short_day(day, lang: str = "en") -> str:
    """A day as a chart's axis names it: "1 Dec" / "1 dic"."""
    from babel.dates import format_skeleton

    return format_skeleton("MMMd", day, locale=lang[:2] if lang[:2] in LANGUAGES else "en")
