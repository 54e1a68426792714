"""Who a fact is about: the person, the business, a known contact or a named one; and its plain sentence."""
from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

from memory_core.backends.local_extractor.business import SUPPLIER_OF
from memory_core.backends.local_extractor.found import Found
from memory_core.backends.local_extractor.names import (
    NAME_STOP,
    NOT_NAMES,
    Mention,
    in_place,
    looks_like_company,
    name_runs,
    typed_lower,
    typed_lower_name,
)
from memory_core.backends.local_extractor.text import Sentence, fold, normalise_name
from memory_core.domain.dates import day_of_year
from memory_core.domain.labels import ENGLISH_LABELS, english_value
from memory_core.domain.model_port import KnownContact

# Words that make the business the buyer: the one named is a supplier ("la madera se la compramos a Maderas Ruiz",
# "we buy our timber from Kingsley", "ahora nos lo trae todo Seur").
SUPPLIER_WORDS = re.compile(r"\b(?:proveedor|proveedora|proveedores|supplier|vendor|nos vende|nos suministra|"
                             r"le compramos|les compramos|(?:se )?(?:lo|la|los|las) compramos|compramos (?:\w+ ){1,3}a|"
                             r"le pagamos|les pagamos|pagamos a|we pay|we buy|buy (?:our|the|all our) (?:\w+ ){1,2}from|"
                             r"(?:we )?get (?:our|all our) (?:\w+ ){1,2}from|order (?:our|all our) (?:\w+ ){1,2}from|"
                             r"nos factura|nos facturan|nos cobra|nos cobran|nos pasa el recibo|nos pasan el recibo|"
                             r"nos (?:lo |la |los |las )?(?:traen?|llevan? (?:todo|el|la|los|las))|"
                             r"invoices us|bills us|charges us|sells us|supplies us|delivers? (?:to )?us)\b")
SENTENCE_TEMPLATES = {
    "plazo_pago": "{who} paga a {value}.",
    "forma_pago": "Forma de pago {of}: {value}.",
    "persona_contacto": "La persona de contacto {of} es {value}.",
    "canal_preferido": "{who} prefiere recibir las facturas por {value}.",
    "formato_factura": "{who} quiere las facturas en formato {value}.",
    "formato_importes": "Quiere ver los totales {value}.",
    "nombre": "Se llama {value}.",
    "tono": "Prefiere que le traten de {value}.",
    "estilo_respuesta": "Quiere las respuestas: {value}.",
    "idioma": "{who} prefiere que le hablen en {value}.",
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
    "numero_hijos": "{who} tiene {value} hijos.",
    "trabajo": "{who} trabaja como {value}.",
    "trabajo_anterior": "{who} trabajaba como {value}.",
    "empleador": "{who} trabaja en {value}.",
    "residencia": "{who} vive en {value}.",
    "mudanza": "{who} se ha mudado: {value}.",
    "dieta": "{who} sigue una dieta {value}.",
    "comida_favorita": "La comida favorita {of} es {value}.",
    "dia_entrega": "{who} entrega cada {value}.",
    "hora_apertura": "{who} abre a las {value}.",
    "hora_cierre": "{who} cierra a las {value}.",
    "deuda": "{who} debe {value}.",
    "pedido_minimo": "El pedido mínimo {of} es de {value}.",
    "situacion": "Situación {of}: {value}.",
    "dia_facturacion": "{who} factura {value}.",
    "cambio_precios": "Los precios {of}: {value}.",
    "cumpleanos": "{who} cumple años el {value}.",
    "aniversario": "El aniversario {of} es el {value}.",
    "contable": "El contable {of} es {value}.",
    "gestoria": "La gestoría {of} es {value}.",
    "abogado": "El abogado {of} es {value}.",
    "aseguradora": "La aseguradora {of} es {value}.",
    "banco": "El banco {of} es {value}.",
}
# The same sentences in English, for facts read from English text.
SENTENCE_TEMPLATES_EN = {
    "plazo_pago": "{who} pays at {value}.", "forma_pago": "{who} pays by {value}.",
    "persona_contacto": "The contact person {of} is {value}.", "canal_preferido": "{who} prefers {value}.",
    "formato_factura": "{who} wants invoices as {value}.", "formato_importes": "Wants totals shown {value}.",
    "nombre": "Their name is {value}.", "tono": "Prefers to be addressed as {value}.",
    "estilo_respuesta": "Wants answers: {value}.",
    "idioma": "{who} prefers to be spoken to in {value}.", "hijo": "Has a son called {value}.",
    "hija": "Has a daughter called {value}.", "hijos": "Their children are called {value}.",
    "numero_hijos": "{who} has {value} children.", "pareja": "Their partner is called {value}.",
    "madre": "Their mother is called {value}.", "padre": "Their father is called {value}.",
    "hermano": "Their brother is called {value}.", "hermana": "Their sister is called {value}.",
    "direccion": "The address {of} is {value}.", "email": "The email {of} is {value}.",
    "telefono": "The phone number {of} is {value}.", "descuento": "{who} gets a discount of {value}.",
    "trabajo": "{who} works as {value}.", "trabajo_anterior": "{who} used to work as {value}.",
    "empleador": "{who} works at {value}.", "residencia": "{who} lives in {value}.",
    "mudanza": "{who} moved house: {value}.", "dieta": "{who} is {value}.",
    "comida_favorita": "The favourite food {of} is {value}.",
    "dia_entrega": "{who} delivers every {value}.",
    "hora_apertura": "{who} opens at {value}.", "hora_cierre": "{who} closes at {value}.",
    "deuda": "{who} owes {value}.",
    "cambio_precios": "The prices {of}: {value}.",
    "pedido_minimo": "The minimum order {of} is {value}.", "situacion": "Trading status {of}: {value}.",
    "dia_facturacion": "{who} invoices {value}.",
    "cumpleanos": "The birthday {of} is on {value}.", "aniversario": "The anniversary {of} is on {value}.",
    "contable": "The accountant {of} is {value}.", "gestoria": "The tax adviser {of} is {value}.",
    "abogado": "The lawyer {of} is {value}.", "aseguradora": "The insurer {of} is {value}.",
    "banco": "The bank {of} is {value}.", "razon_social": "The legal name {of} is {value}.",
    "nif": "The tax ID {of} is {value}.", "cuenta_bancaria": "The bank account {of} is {value}.",
    "socio": "The partner {of} is {value}.",
}
# Many-valued attributes named after their value ("mascota_max"): the sentence by prefix.
PREFIX_TEMPLATES = {
    "mascota_": ("{who} tiene una mascota: {value}.", "{who} has a pet: {value}."),
    "aficion_": ("A {whom} le gusta {value}.", "{who} enjoys {value}."),
    "pasatiempo_": ("Pasatiempo {of}: {value}.", "Pastime {of}: {value}."),
    "hora_apertura_": ("{who} abre a las {value}.", "{who} opens at {value}."),
    "hora_cierre_": ("{who} cierra a las {value}.", "{who} closes at {value}."),
    "vencimiento_": ("{who}: {value}.", "{who}: {value}."),
    "instrumento_": ("{who} toca {value}.", "{who} plays the {value}."),
    "no_come_": ("{who} {value}.", "{who} {value}."),
    "cumpleanos_": ("El cumpleaños de {kin} {of} es el {value}.", "The birthday of the {kin} {of} is on {value}."),
    # One named member of a plural relation ("tengo dos críos, Pau y Marina"): a fact each.
    "hijos_": ("Uno de los hijos {of} se llama {value}.", "One of the children {of} is called {value}."),
    "hijo_": ("{who} tiene un hijo que se llama {value}.", "{who} has a son called {value}."),
    "hija_": ("{who} tiene una hija que se llama {value}.", "{who} has a daughter called {value}."),
    "hermanos_": ("Uno de los hermanos {of} se llama {value}.", "One of the siblings {of} is called {value}."),
    "hermano_": ("{who} tiene un hermano que se llama {value}.", "{who} has a brother called {value}."),
    "hermana_": ("{who} tiene una hermana que se llama {value}.", "{who} has a sister called {value}."),
}


@dataclass(frozen=True)
class Subject:
    key: str  # self | org | contact:<id> | name:<normalised>
    label: str
    category: str
    confidence: float = 0.9


def trade(low: str, category: str = "") -> str:
    """A named business's trade with the writer's: a supplier when the sentence says the business buys from it,
    else the category the gate gave it if that is a trade, else a customer."""
    if SUPPLIER_WORDS.search(low):
        return "supplier"
    return category if category in ("customer", "supplier") else "customer"


def contact_subject(c: KnownContact, confidence: float, low: str) -> Subject:
    """The subject of a registered contact, or of a named one (kind "named", id its normalised name), in the folded
    sentence `low`: a named one is a supplier when the sentence says the business buys from it."""
    if c.kind == "named":
        return Subject(f"name:{c.id}", c.name, trade(low), min(confidence, 0.8))
    kind = "supplier" if c.kind == "supplier" else "customer"
    return Subject(f"contact:{c.id}", c.name, kind, confidence)


def resolve_contact(s: Sentence, found: Found, mentions: list[Mention], fallback: list[Mention],
                     values: set[str]) -> Subject | None:
    """The contact a contact-fact is about: named in its slot, nearest to its cue, or the one just talked about."""
    if found.who:
        inside = [m for m in mentions if m.start >= found.who[0] and m.end <= found.who[1]]
        if inside:
            return contact_subject(inside[0].contact, inside[0].confidence, s.low)
    # A name that is the fact's value ("invoices for Riverside Deli are made out to Riverside Foods Ltd") is not
    # its subject.
    said = [(at, at + len(v)) for v in values if v and (at := s.text.find(v)) >= 0]
    mentions = [m for m in mentions if not any(m.start < end and start < m.end for start, end in said)]
    if mentions:
        best = min(mentions, key=lambda m: (m.start > found.at, abs(m.start - found.at)))
        if best.contact.kind == "named" and best.start == 0 and typed_lower(s) and \
                (longer := typed_lower_name(s.text[:found.at])) and normalise_name(longer) != best.contact.id:
            # "construcciones pereda nos paga...": the business introduced by its first word is named up to the cue.
            return Subject(f"name:{normalise_name(longer)}", longer,
                           trade(s.low), 0.7)
        return contact_subject(best.contact, best.confidence, s.low)
    start, end = found.who if found.who else (0, found.at)
    # A capitalised name that is another fact's value ("el contacto es Marisa") is not the subject.
    # Nor is a street ("the physio on Elm Street pays at 30 days": no one is named; the note keeps it all).
    runs = [r for r in name_runs(s, start, end) if r[0] not in values and not in_place(s, r[1], r[2])]
    if runs:
        text = runs[-1][0]
        if len(runs) == 1 and runs[0][1] == 0 and typed_lower(s):
            text = typed_lower_name(s.text[start:end]) or text
        key = normalise_name(text)
        if key:
            return Subject(f"name:{key}", text, trade(s.low), 0.7)
    typed = s.text[start:end].strip(" ,") if found.who else ""
    if (looks_like_company(typed) or _slot_name(typed)) and len(typed.split()) <= 4 and (key := normalise_name(typed)):
        # "el contacto en gráficas ibarra es Marta", "accounts contact at brindley & shaw is Gemma": a business
        # typed in lower case in the fact's slot.
        return Subject(f"name:{key}", typed, trade(s.low), 0.7)
    distinct = {m.contact.id: m.contact for m in fallback}
    if len(distinct) == 1:
        return contact_subject(next(iter(distinct.values())), 0.7, s.low)
    return None


def event_sentence(date: dt.date | None, what: str, english: bool = False) -> str:
    """A dated event as a sentence in the language it was told in: "El 3 de mayo de 2023: Fui al concierto.",
    "On 6 May 2023: The person went to a pottery class."."""
    what = what.rstrip(".!")
    if date is None:
        return f"{'Event' if english else 'Evento'}: {what}."
    if english:
        return f"On {date.day} {date:%B} {date.year}: {what}."
    return f"El {day_of_year(date)} de {date.year}: {what}."


def _slot_name(typed: str) -> bool:
    """Words typed in a rule's slot for a business ("contact at ___ is") that can only be its name: a few words
    and no article, pronoun or other word that names no one ("the shop", "their office", "alli")."""
    words = re.findall(r"[\w'&]+", fold(typed))
    return 2 <= len(words) <= 4 and all(w.isalpha() or w == "&" for w in words) and \
        not any(w in NOT_NAMES or w in NAME_STOP for w in words if w not in ("&", "y", "and"))


def sentence_for(attribute: str, subject: Subject, value: str, english: bool = False) -> str:
    """The fact as a plain third-person sentence, in the language it was said in."""
    if english:
        who = {"self": "The person", "org": "The business"}.get(subject.key, subject.label)
        of = {"self": "of the person", "org": "of the business"}.get(subject.key, f"of {subject.label}")
        whom = who
        table = SENTENCE_TEMPLATES_EN
    else:
        who = {"self": "La persona", "org": "La empresa"}.get(subject.key, subject.label)
        of = {"self": "de la persona", "org": "de la empresa"}.get(subject.key, f"de {subject.label}")
        whom = {"self": "la persona", "org": "la empresa"}.get(subject.key, subject.label)
        table = SENTENCE_TEMPLATES
    template = table.get(attribute) or SENTENCE_TEMPLATES.get(attribute)
    if template is None:
        prefix = next((p for p in PREFIX_TEMPLATES if attribute.startswith(p)), None)
        template = PREFIX_TEMPLATES[prefix][english] if prefix else "{who}: {attribute} {value}."
    if attribute == "plazo_pago" and not value[0].isdigit():
        template = "{who} pays {value}." if english else "{who} paga {value}."
        value = f"a {value}" if value == "fin de mes" and not english else value
    if attribute == "plazo_pago" and subject.category == "supplier":
        # The business pays its supplier: "Pagamos a Hierros Olano a 30 días", not "Hierros Olano paga a...".
        at = ("at " if english else "a ") if value[0].isdigit() else ""
        template = ("We pay {who} " if english else "Pagamos a {who} ") + at + "{value}."
    if attribute.startswith(SUPPLIER_OF):
        thing = attribute.removeprefix(SUPPLIER_OF).replace("_", " ")
        template = f"{{who}} buys its {thing} from {{value}}." if english else f"{{who}} compra {thing} a {{value}}."
    if attribute == "pareja" and value.startswith(("none", "ninguna")):
        template = "{who} has no partner now (broke up)." if english else "{who} ya no tiene pareja (lo han dejado)."
    if english:
        value = english_value(value)
    kin = _relative_said(attribute.rsplit("_", 1)[-1], english) if "{kin}" in template else ""
    return template.format(who=who, of=of, whom=whom, value=value, kin=kin, attribute=attribute.replace("_", " "))


_ARTICLE = {"hija": "la", "pareja": "la", "madre": "la", "hermana": "la", "hijos": "los"}


def _relative_said(relative: str, english: bool) -> str:
    """A relative named in an attribute ("cumpleanos_hija", see personal.RELATIVES) as a sentence says them."""
    return ENGLISH_LABELS.get(relative, relative) if english else f"{_ARTICLE.get(relative, 'el')} {relative}"


