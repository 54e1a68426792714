"""Subject sheets: a subject with many loose facts gets one folded "sheet" memory whose sources are
the facts it folds (memory_sources.source_memory_id). Rebuilt when one of them changes, removed when
the subject falls below the threshold. The originals stay as they are.

A sheet is a derived cache: it is rebuilt in place rather than superseded, so it never piles up
versions. One sheet per owner, level, subject and area, so it is never wider than the facts it folds
(a member who cannot read an area never gets a sheet that folds that area).
"""
from __future__ import annotations

import logging
import uuid
from collections import defaultdict
from typing import Any

from sqlalchemy import delete, func, select, text
from sqlalchemy.orm import Session

from jobs.retention import job_run
from memory_core.adapters.db import SYSTEM, Database, get_database
from memory_core.domain import clock
from memory_core.domain.models import Contact, Memory, MemorySource
from memory_core.domain.vocabulary import Status

log = logging.getLogger(__name__)
JOB = "sheets"
MIN_FACTS = 8  # loose active facts of one subject before they are folded into a sheet
MAX_SHEET_CHARS = 2000
SHEET_PREFIX = "sheet_"

GroupKey = tuple[Any, str, Any, Any, str, str]  # org, level, owner user, owner phone, subject, area


def _key(m: Memory) -> GroupKey:
    return (m.org_id, m.level, m.owner_user_id, m.owner_phone, m.subject, m.area)


def _label(session: Session, subject: str) -> str:
    if subject.startswith("contact:"):
        try:
            name = session.scalar(select(Contact.name).where(Contact.id == uuid.UUID(subject.split(":", 1)[1])))
        except ValueError:
            name = None
        return name or subject
    if subject.startswith("name:"):
        return subject.split(":", 1)[1]
    return {"self": "Persona", "org": "Empresa"}.get(subject, subject)


def _groups(session: Session, min_facts: int, org_id: uuid.UUID | None = None) -> set[GroupKey]:
    """Every (owner, subject, area) that has a sheet now or should have one (in one org when given)."""
    cols = (Memory.org_id, Memory.level, Memory.owner_user_id, Memory.owner_phone, Memory.subject, Memory.area)
    in_org = (Memory.org_id == org_id,) if org_id is not None else ()
    loose = select(*cols).where(Memory.status == Status.ACTIVE, Memory.category != "sheet", *in_org) \
        .group_by(*cols).having(func.count() >= min_facts)
    sheets = select(*cols).where(Memory.status == Status.ACTIVE, Memory.category == "sheet", *in_org)
    return {tuple(r) for r in session.execute(loose)} | {tuple(r) for r in session.execute(sheets)}


def rebuild_group(session: Session, key: GroupKey, min_facts: int) -> str:
    """Create, rebuild, keep or remove the sheet of one group; returns what happened. Does not commit."""
    org_id, level, owner_user, owner_phone, subject, area = key
    # Two runs at once serialise per group instead of both inserting a sheet.
    session.execute(text("select pg_advisory_xact_lock(hashtext(:k))"), {"k": "memoria.sheet:" + repr(key)})

    def same(q):
        return q.where(Memory.status == Status.ACTIVE, Memory.level == level, Memory.subject == subject,
                       Memory.area == area,
                       Memory.org_id.is_(None) if org_id is None else Memory.org_id == org_id,
                       Memory.owner_user_id.is_(None) if owner_user is None else Memory.owner_user_id == owner_user,
                       Memory.owner_phone.is_(None) if owner_phone is None else Memory.owner_phone == owner_phone)

    facts = list(session.scalars(same(select(Memory)).where(Memory.category != "sheet")
                                 .order_by(Memory.attribute, Memory.id)))
    sheet = session.scalar(same(select(Memory)).where(Memory.category == "sheet").with_for_update())
    if len(facts) < min_facts:
        if sheet is None:
            return "none"
        session.delete(sheet)
        return "removed"
    value = "; ".join(f"{f.attribute.replace('_', ' ')}: {f.value}" for f in facts)[:MAX_SHEET_CHARS]
    sentence = f"{_label(session, subject)}: {value}"[:MAX_SHEET_CHARS]
    ids = {f.id for f in facts}
    if sheet is not None:
        current = set(session.scalars(select(MemorySource.source_memory_id).where(MemorySource.memory_id == sheet.id)))
        if current == ids and sheet.value == value and sheet.sentence == sentence:
            return "unchanged"
        sheet.value, sheet.sentence = value, sentence
        sheet.confidence = min(f.confidence for f in facts)
        sheet.updated_at = clock.now()
        sheet.embedding, sheet.embed_model = None, None  # the old vector describes the old sheet
        session.execute(delete(MemorySource).where(MemorySource.memory_id == sheet.id))
        outcome = "rebuilt"
    else:
        sheet = Memory(org_id=org_id, level=level, owner_user_id=owner_user, owner_phone=owner_phone, area=area,
                       category="sheet", subject=subject, attribute=SHEET_PREFIX + area, value=value,
                       sentence=sentence, confidence=min(f.confidence for f in facts), origin="sheet")
        session.add(sheet)
        outcome = "created"
    session.flush()
    session.add_all([MemorySource(memory_id=sheet.id, source_memory_id=f.id) for f in facts])
    session.flush()
    return outcome


def run_sheets(triggered_by: str = "schedule", *, database: Database | None = None,
               min_facts: int = MIN_FACTS, org_id: uuid.UUID | None = None) -> dict[str, int]:
    """Fold every subject with many loose facts into its sheet (in one org when org_id is given); one
    short transaction per subject."""
    database = database or get_database()
    with job_run(database, JOB, triggered_by, org_id) as counts:
        with database.unit_of_work(SYSTEM) as uow:
            groups = _groups(uow.session, min_facts, org_id)
        tally: dict[str, int] = defaultdict(int)
        for key in sorted(groups, key=repr):
            with database.unit_of_work(SYSTEM) as uow:
                tally[rebuild_group(uow.session, key, min_facts)] += 1
                uow.commit()
        counts.update({k: tally.get(k, 0) for k in ("created", "rebuilt", "unchanged", "removed")})
        counts["subjects_checked"] = len(groups)
    return dict(counts)
