"""The export as a person reads it: a summary page (HTML, no scripts, no external resources) and one CSV per kind
of record with human column names and subjects by name (a contact's name, not `contact:<uuid>`). The JSON files of
the same ZIP stay the complete rows. In English or Spanish: the language of whoever prepares it (`lang`)."""
from __future__ import annotations

import csv
import datetime as dt
import html
import io
import uuid
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from memory_core.domain import labels
from memory_core.domain.models import Contact, Organization

# Each table a person may find in their export: its title and the columns worth reading, with their names.
SECTIONS: dict[str, tuple[str, list[tuple[str, str]]]] = {
    "users": ("Your account", [("name", "Name"), ("email", "Email"), ("phone", "WhatsApp number"),
                               ("locale", "Language"), ("created_at", "Created")]),
    "memberships": ("Organizations you belong to", [("org_id", "Organization"), ("role", "Role"),
                                                     ("joined_at", "Since"), ("left_at", "Left")]),
    "memories": ("What memoria remembers", [("subject", "About"), ("attribute", "What"), ("value", "Value"),
                                            ("sentence", "As a sentence"), ("level", "Who may see it"),
                                            ("status", "Status"), ("valid_from", "Since"), ("valid_to", "Until")]),
    "messages": ("Messages", [("created_at", "Sent"), ("channel", "Channel"), ("role", "Written by"),
                              ("text", "Text")]),
    "conversations": ("Conversations", [("channel", "Channel"), ("external_id", "Conversation"),
                                        ("created_at", "Started")]),
    "conversation_summaries": ("Summaries of long conversations", [("updated_at", "Updated"), ("content", "Summary")]),
    "notifications": ("Notifications about what was learnt", [("created_at", "When"), ("kind", "Kind"),
                                                              ("text", "Text")]),
    "phone_authorizations": ("WhatsApp numbers authorized", [("phone", "Number"), ("org_id", "Organization"),
                                                             ("created_at", "Since")]),
    "documents": ("Documents", [("kind", "Kind"), ("title", "Title"), ("external_ref", "Reference")]),
}
LEVELS = {"personal": "only you", "private": "only you, in one organization", "shared": "your organization"}

# The same sections and columns in Spanish, in the same order.
SECTIONS_ES: dict[str, tuple[str, list[str]]] = {
    "users": ("Tu cuenta", ["Nombre", "Email", "Número de WhatsApp", "Idioma", "Creada"]),
    "memberships": ("Organizaciones a las que perteneces", ["Organización", "Rol", "Desde", "Salida"]),
    "memories": ("Lo que memoria recuerda", ["Sobre", "Qué", "Valor", "Como frase", "Quién puede verlo", "Estado",
                                             "Desde", "Hasta"]),
    "messages": ("Mensajes", ["Enviado", "Canal", "Escrito por", "Texto"]),
    "conversations": ("Conversaciones", ["Canal", "Conversación", "Empezada"]),
    "conversation_summaries": ("Resúmenes de conversaciones largas", ["Actualizado", "Resumen"]),
    "notifications": ("Avisos sobre lo aprendido", ["Cuándo", "Tipo", "Texto"]),
    "phone_authorizations": ("Números de WhatsApp autorizados", ["Número", "Organización", "Desde"]),
    "documents": ("Documentos", ["Tipo", "Título", "Referencia"]),
}
LEVELS_ES = {"personal": "solo tú", "private": "solo tú, en una organización", "shared": "tu organización"}
WORDS = {
    "en": {"title": "What memoria holds about you", "you": "you", "org": "your organization",
           "intro": "Generated on {at} UTC. This page lists everything stored about you, in words. The "
                    "<code>csv/</code> folder has the same tables for a spreadsheet, and the <code>.json</code> "
                    "files hold every stored field.",
           "nothing": "Nothing is stored about you.", "technical": "Technical records",
           "also": "Also stored, in the JSON files: "},
    "es": {"title": "Lo que memoria guarda sobre ti", "you": "tú", "org": "tu organización",
           "intro": "Generado el {at} UTC. Esta página recoge en palabras todo lo que se guarda sobre ti. La carpeta "
                    "<code>csv/</code> tiene las mismas tablas para una hoja de cálculo, y los archivos "
                    "<code>.json</code> tienen cada campo guardado.",
           "nothing": "No se guarda nada sobre ti.", "technical": "Registros técnicos",
           "also": "También se guardan, en los archivos JSON: "},
}


def _section(name: str, lang: str) -> tuple[str, list[tuple[str, str]]]:
    """A section's title and (column, label) pairs in `lang`."""
    title, columns = SECTIONS[name]
    if lang == "es":
        title_es, names_es = SECTIONS_ES[name]
        return title_es, [(c, label) for (c, _l), label in zip(columns, names_es)]
    return title, columns


def subject_names(session: Session, rows: dict[str, list[dict[str, Any]]], lang: str = "en") -> dict[str, str]:
    """Readable names for the memories' subjects (contacts by name, the rest in words) and for organizations."""
    ids = set()
    for m in rows.get("memories", []):
        subject = str(m.get("subject") or "")
        if subject.startswith("contact:"):
            try:
                ids.add(uuid.UUID(subject.split(":", 1)[1]))
            except ValueError:
                pass
    words = WORDS.get(lang, WORDS["en"])
    names = {"self": words["you"], "org": words["org"]}
    orgs = {r.get("org_id") for table in ("memberships", "phone_authorizations") for r in rows.get(table, [])}
    orgs = [uuid.UUID(o) for o in orgs if o]
    if orgs:
        for oid, name in session.execute(select(Organization.id, Organization.name).where(Organization.id.in_(orgs))):
            names[str(oid)] = name
    if ids:
        for cid, name in session.execute(select(Contact.id, Contact.name).where(Contact.id.in_(list(ids)))):
            names[f"contact:{cid}"] = name
    return names


def _cell(column: str, value: Any, names: dict[str, str], lang: str) -> str:
    if value is None or value == "":
        return ""
    if column in ("subject", "org_id"):
        found = names.get(str(value))
        return found if found is not None else labels.named_subject(str(value))
    if column == "attribute":
        return labels.attribute(str(value), lang)
    if column == "level":
        return (LEVELS_ES if lang == "es" else LEVELS).get(str(value), str(value))
    if isinstance(value, str) and len(value) >= 19 and value[4:5] == "-" and value[10:11] == "T":
        return value[:16].replace("T", " ")
    return str(value)


def _table(name: str, rows: list[dict[str, Any]], names: dict[str, str],
           lang: str) -> tuple[list[str], list[list[str]]]:
    _title, columns = _section(name, lang)
    return [label for _c, label in columns], [[_cell(c, r.get(c), names, lang) for c, _l in columns] for r in rows]


def csv_files(rows: dict[str, list[dict[str, Any]]], names: dict[str, str], lang: str = "en") -> dict[str, str]:
    out = {}
    for name in SECTIONS:
        if rows.get(name):
            header, body = _table(name, rows[name], names, lang)
            buf = io.StringIO()
            writer = csv.writer(buf)
            writer.writerow(header)
            writer.writerows(body)
            out[f"{name}.csv"] = buf.getvalue()
    return out


def summary_html(rows: dict[str, list[dict[str, Any]]], names: dict[str, str], generated: dt.datetime,
                 lang: str = "en") -> str:
    esc = html.escape
    lang = lang if lang in WORDS else "en"
    words = WORDS[lang]
    parts = [f"<!doctype html><html lang=\"{lang}\"><head><meta charset=\"utf-8\"><title>{words['title']}"
             "</title><style>body{font:15px/1.45 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem}"
             "table{border-collapse:collapse;width:100%;margin-bottom:1.5rem}th,td{border:1px solid #ddd;padding:.35rem"
             " .5rem;text-align:left;vertical-align:top}th{background:#f4f5f7}</style></head><body>",
             f"<h1>{words['title']}</h1>",
             "<p>" + words["intro"].format(at=esc(generated.strftime('%Y-%m-%d %H:%M'))) + "</p>"]
    shown = [n for n in SECTIONS if rows.get(n)]
    if not shown:
        parts.append(f"<p>{words['nothing']}</p>")
    for name in shown:
        title, _cols = _section(name, lang)
        header, body = _table(name, rows[name], names, lang)
        parts.append(f"<h2>{esc(title)} ({len(body)})</h2><table><thead><tr>"
                     + "".join(f"<th>{esc(h)}</th>" for h in header) + "</tr></thead><tbody>")
        parts.extend("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in row) + "</tr>" for row in body)
        parts.append("</tbody></table>")
    other = sorted(n for n in rows if n not in SECTIONS and rows[n])
    if other:
        parts.append(f"<h2>{words['technical']}</h2><p>{words['also']}"
                     + ", ".join(f"{esc(n.replace('_', ' '))} ({len(rows[n])})" for n in other) + ".</p>")
    parts.append("</body></html>")
    return "\n".join(parts)
