"""The org settings an owner or admin may change: memory mode, retention (tighten only), and the
org's own exclusion list. No Flask here; nothing commits; every change is audited.
"""
from __future__ import annotations

import re
import uuid
from dataclasses import dataclass

from sqlalchemy import or_, select
from sqlalchemy.orm import Session

from memory_core.domain import audit
from memory_core.domain.errors import InvalidInput, NotFound
from memory_core.domain.models import Organization, PolicyExclusion
from memory_core.domain.text import LANGUAGE_SETTING as BLOCK_LANGUAGE
from memory_core.domain.text import LANGUAGES
from memory_core.domain.vocabulary import MEMORY_MODES, ExclusionKind
from memory_core.privacy import retention


@dataclass
class OrgSettings:
    org: Organization
    retention: dict[str, int]  # the org's periods, per retention.ORG_LABELS
    platform_exclusions: list[PolicyExclusion]
    org_exclusions: list[PolicyExclusion]


def org_settings(s: Session, org_id: uuid.UUID) -> OrgSettings:
    org = s.get(Organization, org_id)
    if org is None:
        raise NotFound("No such organization.")
    rows = list(s.scalars(select(PolicyExclusion).where(
        or_(PolicyExclusion.org_id.is_(None), PolicyExclusion.org_id == org_id))
        .order_by(PolicyExclusion.kind, PolicyExclusion.name)))
    return OrgSettings(org, retention.org_periods(org.settings), [r for r in rows if r.org_id is None],
                       [r for r in rows if r.org_id == org_id])


def _audit(s: Session, actor: tuple[uuid.UUID, str], org_id: uuid.UUID, action: str, **details) -> None:
    audit.record(s, actor_user_id=actor[0], actor_label=actor[1], action=action, org_id=org_id,
                 target_type="organization", target_id=org_id, details=details)


def set_memory_mode(s: Session, actor: tuple[uuid.UUID, str], org_id: uuid.UUID, mode: str) -> None:
    if mode not in MEMORY_MODES:
        raise InvalidInput("Pick automatic or confirmation.", "memory_mode")
    org = s.get(Organization, org_id, with_for_update=True)
    if org.memory_mode != mode:
        _audit(s, actor, org_id, "settings.memory_mode", old=org.memory_mode, new=mode)
        org.memory_mode = mode


def set_block_language(s: Session, actor: tuple[uuid.UUID, str], org_id: uuid.UUID, language: str) -> None:
    """The language of the memory block for everyone in the org ("" leaves it to each conversation)."""
    if language not in ("", *LANGUAGES):
        raise InvalidInput("Pick Spanish, English or automatic.", "language")
    org = s.get(Organization, org_id, with_for_update=True)
    current = (org.settings or {}).get(BLOCK_LANGUAGE, "")
    if current != language:
        _audit(s, actor, org_id, "settings.language", old=current or "auto", new=language or "auto")
        org.settings = {k: v for k, v in {**(org.settings or {}), BLOCK_LANGUAGE: language}.items() if v != ""}


def set_retention(s: Session, actor: tuple[uuid.UUID, str], org_id: uuid.UUID,
                  values: dict[str, str]) -> dict[str, int]:
    """Retention may only be tightened: between 1 day and the platform default."""
    parsed = retention.parse_org_periods(values)
    org = s.get(Organization, org_id, with_for_update=True)
    org.settings = {**(org.settings or {}), "retention": parsed}
    _audit(s, actor, org_id, "settings.retention", **parsed)
    return parsed


_NAME = re.compile(r"^[a-z0-9_]{2,80}$")


def add_exclusion(s: Session, actor: tuple[uuid.UUID, str], org_id: uuid.UUID, *, kind: str, name: str,
                  pattern: str, description: str) -> PolicyExclusion:
    """An org's own addition to the exclusion list: a regular expression never learnt from."""
    name, pattern, description = name.strip().lower(), pattern.strip(), description.strip()
    if kind not in tuple(ExclusionKind):
        raise InvalidInput("Pick secret (refused outright) or special (never learnt in the background).", "kind")
    if not _NAME.match(name):
        raise InvalidInput("Name: 2-80 lowercase letters, digits or underscores.", "name")
    if not pattern or len(pattern) > 500:
        raise InvalidInput("Give a pattern of at most 500 characters.", "pattern")
    try:
        re.compile(pattern, re.IGNORECASE)
    except re.error as exc:
        raise InvalidInput(f"The pattern is not a valid regular expression: {exc}.", "pattern") from exc
    if len(description) > 300:
        raise InvalidInput("Keep the description under 300 characters.", "description")
    if s.scalar(select(PolicyExclusion.id).where(PolicyExclusion.org_id == org_id, PolicyExclusion.name == name)):
        raise InvalidInput("Your list already has a rule with that name.", "name")
    row = PolicyExclusion(org_id=org_id, kind=kind, name=name, pattern=pattern, description=description)
    s.add(row)
    s.flush()
    _audit(s, actor, org_id, "settings.exclusion_added", exclusion=str(row.id), kind=kind, name=name)
    return row


def toggle_exclusion(s: Session, actor: tuple[uuid.UUID, str], org_id: uuid.UUID, exclusion_id: uuid.UUID,
                     *, remove: bool = False) -> None:
    """Turn one of the org's own rules on or off, or remove it; platform rules cannot be changed here."""
    row = s.scalar(select(PolicyExclusion).where(PolicyExclusion.id == exclusion_id, PolicyExclusion.org_id == org_id))
    if row is None:
        raise NotFound("No such rule in your organization's list.")
    if remove:
        s.delete(row)
        _audit(s, actor, org_id, "settings.exclusion_removed", exclusion=str(exclusion_id), name=row.name)
    else:
        row.enabled = not row.enabled
        _audit(s, actor, org_id, "settings.exclusion_toggled", exclusion=str(exclusion_id), enabled=row.enabled)
