"""The verification scan after an erasure: every text, uuid, json and text-array column of every table
(as the catalog lists them, so a table no model maps is scanned too) searched for the subject's
identifiers, built with SQLAlchemy Core; the identifiers are bound parameters."""
from __future__ import annotations

import re
import time
from typing import Any

from sqlalchemy import Text, bindparam, cast, func, or_, select, text
from sqlalchemy import column as sa_column
from sqlalchemy import table as sa_table
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session
from sqlalchemy.sql.elements import ColumnElement

from memory_core.adapters.array_param import ArrayParam
from memory_core.domain import clock
from memory_core.privacy.erasure_plan import Subject


def verification_scan(session: Session, subject: Subject) -> dict[str, Any]:
    """Scan every text, uuid, json and text-array column of every table for the subject's
    identifiers. Hits in the append-only audit log that are opaque ids, and hits in documents kept
    under legal hold, are reported as such; any other hit makes the scan unclean."""
    cols = session.execute(text(
        "select c.table_name, c.column_name, c.data_type, c.udt_name from information_schema.columns c "
        "join information_schema.tables t on t.table_schema = c.table_schema and t.table_name = c.table_name "
        "where c.table_schema = 'public' and t.table_type = 'BASE TABLE' and c.table_name <> 'alembic_version' "
        "and (c.data_type in ('text', 'character varying', 'uuid', 'jsonb') or c.udt_name = '_text') "
        "order by c.table_name, c.ordinal_position")).all()
    started = time.perf_counter()
    id_texts = [str(i) for i in subject.ids]
    likes = [f"%{_like_escape(s)}%" for s in [*subject.strings, *id_texts]]
    words = [r"\m" + re.escape(n) + r"\M" for n in subject.names]
    hits: list[dict[str, Any]] = []
    tables = set()
    for table_name, column_name, data_type, udt in cols:
        tables.add(table_name)
        # Named by the catalog, not by a model: a table no model maps is scanned too.
        tbl = sa_table(table_name, sa_column(column_name), sa_column("legal_hold"))
        col = tbl.c[column_name]
        if data_type == "uuid":
            if not subject.ids:
                continue
            cond = col == func.any(bindparam("ids", list(subject.ids), type_=ArrayParam("uuid")))
        else:
            expr = cast(col, Text) if data_type == "jsonb" else (
                func.array_to_string(col, " ") if udt == "_text" else col)
            cond = _matches(expr, likes, words)
            if cond is None:
                continue
        try:
            with session.begin_nested():
                n = session.execute(select(func.count()).select_from(tbl).where(cond)).scalar_one()
                held = 0
                if n and table_name == "documents":
                    held = session.execute(select(func.count()).select_from(tbl)
                                           .where(tbl.c.legal_hold, cond)).scalar_one()
        except DBAPIError:
            # A table the app role may not read cannot be vouched for: the scan says so.
            hits.append({"table": table_name, "column": column_name, "rows": None, "kind": "unreadable"})
            continue
        if not n:
            continue
        if table_name == "audit_log" and _only_ids(session, column_name, subject):
            hits.append({"table": table_name, "column": column_name, "rows": n, "kind": "opaque_id_in_audit_log"})
            continue
        if held:
            hits.append({"table": table_name, "column": column_name, "rows": held, "kind": "legal_hold"})
        if n - held:
            hits.append({"table": table_name, "column": column_name, "rows": n - held, "kind": "found"})
    return {"at": clock.now().isoformat(), "tables_scanned": len(tables), "columns_scanned": len(cols),
            "identifiers_checked": len(subject.ids) + len(subject.strings) + len(subject.names),
            "seconds": round(time.perf_counter() - started, 3), "hits": hits,
            "clean": not any(h["kind"] in ("found", "unreadable") for h in hits)}


def _matches(expr: ColumnElement, likes: list[str], words: list[str]) -> ColumnElement[bool] | None:
    """expr contains one of `likes` (ILIKE patterns) or matches one of `words` (regexes); None: nothing to look for."""
    parts = []
    if likes:
        parts.append(expr.op("ilike")(func.any(bindparam("likes", likes, type_=ArrayParam("text")))))
    if words:
        parts.append(expr.op("~*")(func.any(bindparam("words", words, type_=ArrayParam("text")))))
    return or_(*parts) if parts else None


def _only_ids(session: Session, column_name: str, subject: Subject) -> bool:
    """True when the audit rows match only by the subject's opaque ids, never by email, phone or name."""
    if column_name in ("actor_user_id", "org_id"):
        return True
    log = sa_table("audit_log", sa_column(column_name))
    cond = _matches(cast(log.c[column_name], Text), [f"%{_like_escape(s)}%" for s in subject.strings],
                    [r"\m" + re.escape(n) + r"\M" for n in subject.names])
    if cond is None:
        return True
    return session.execute(select(func.count()).select_from(log).where(cond)).scalar_one() == 0


def _like_escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("%", r"\%").replace("_", r"\_")
