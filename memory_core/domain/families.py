"""Attribute families: the names that mean the same attribute, so a correction reuses the stored name and the
write ladder (domain.ladder.attribute_family) supersedes within a family. Extractors use them too."""
from __future__ import annotations

import re

from memory_core.domain.text import fold

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
    "dia_entrega": ("dia_entrega", "dias_entrega", "dia_de_entrega", "dia_reparto", "delivery_day"),
    "residencia": ("residencia", "ciudad", "ciudad_residencia", "lugar_residencia", "vive_en", "residence"),
    "empleador": ("empleador", "lugar_trabajo", "lugar_de_trabajo", "employer", "workplace"),
    "deuda": ("deuda", "saldo_pendiente", "pendiente_cobro", "importe_pendiente", "debt"),
    "pedido_minimo": ("pedido_minimo", "importe_minimo", "minimum_order"),
    "situacion": ("situacion", "estado_empresa", "trading_status"),
    "dia_facturacion": ("dia_facturacion", "dia_factura", "fecha_facturacion", "billing_day", "invoice_day"),
    "cambio_precios": ("cambio_precios", "subida_precios", "bajada_precios", "price_change", "price_increase"),
    "evento": ("evento", "agenda", "event"),
}
# Words that give a stored name away when it is not in the table ("dias_cobro_acme").
FAMILY_WORDS: dict[str, tuple[str, ...]] = {
    "plazo_pago": ("plazo", "cobro", "vencimiento", "terminos", "terms", "condiciones", "dias"),
    "forma_pago": ("forma", "metodo", "medio", "method"),
    "persona_contacto": ("contacto", "interlocutor", "responsable"),
    "canal_preferido": ("canal", "envio", "channel"),
    "formato_factura": ("formato", "format"),
    "direccion": ("direccion", "domicilio", "address"),
    "cuenta_bancaria": ("iban", "cuenta", "bancaria", "account"),
    "regimen_iva": ("regimen",),
}
MEMBER_OF = {name: canonical for canonical, names in FAMILIES.items() for name in names}


def attribute_key(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", fold(name)).strip("_")


def reuse_attribute(canonical: str, stored: tuple[str, ...]) -> str:
    """The stored attribute name that means the same as canonical, or canonical itself."""
    if canonical in stored:
        return canonical
    for name in stored:
        if MEMBER_OF.get(attribute_key(name)) == canonical:
            return name
    words = FAMILY_WORDS.get(canonical, ())
    for name in stored:
        key = attribute_key(name)
        # A name the table files under another family is not ours even if it shares a word.
        if key not in MEMBER_OF and any(w in key.split("_") for w in words):
            return name
    return canonical
