"""Subjects named in part: "Olano" after "Hierros Olano", "Talleres Garcia" for "Talleres García".

The extractor names a subject it cannot link to a contact `name:<name>`. Before the ladder writes, such
a subject is resolved to the one registered contact, else the one subject already remembered by name,
whose name holds every significant word of it (accents and case aside). Two businesses that share a
word stay apart: "Hierros" alone matches both "Hierros Olano" and "Hierros Martín", so it is left as is.
"""
from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Sequence

from sqlalchemy import select
from sqlalchemy.orm import Session

from memory_core.backends.base import Fact
from memory_core.domain.access import Access, memory_visible
from memory_core.domain.models import Memory
from memory_core.domain.text import fold

# Words of a company or person name that do not tell one from another.
NAME_NOISE = frozenset({"sl", "sa", "slu", "sll", "de", "del", "la", "el", "los", "las", "y", "e", "cb", "sc", "coop",
                        "ltd", "inc", "llc", "the", "and", "hijos", "cia", "co"})
KNOWN_NAMES_LIMIT = 500


def significant_words(name: str) -> frozenset[str]:
    return frozenset(w for w in re.findall(r"\w+", fold(name)) if w not in NAME_NOISE and len(w) > 1)


def _unique(candidates: list[str]) -> str | None:
    found = list(dict.fromkeys(candidates))
    return found[0] if len(found) == 1 else None


def resolve_subject(subject: str, contacts: Iterable, known_names: Iterable[str]) -> str:
    """`name:<x>` -> `contact:<id>` or `name:<y>` when exactly one contact (else one remembered name) holds
    every significant word of x; any other subject is returned as is. `contacts` have id, name, aliases."""
    if not subject.startswith("name:"):
        return subject
    wanted = significant_words(subject[5:])
    if not wanted:
        return subject
    by_contact = [f"contact:{c.id}" for c in contacts
                  for n in (c.name, *(getattr(c, "aliases", None) or ())) if wanted <= significant_words(n)]
    contact = _unique(by_contact)
    if contact:
        return contact
    if by_contact:
        return subject  # several contacts share the words: not ours to pick
    by_name = [f"name:{n}" for n in known_names if wanted <= significant_words(n)]
    return _unique(by_name) or subject


def known_names(session: Session, access: Access) -> list[str]:
    """The names of subjects remembered by name that this writer may see (active facts)."""
    rows = session.scalars(select(Memory.subject).where(
        Memory.subject.like("name:%"), Memory.status == "active", memory_visible(access))
        .distinct().limit(KNOWN_NAMES_LIMIT))
    return [s[5:] for s in rows]


def resolve_subjects(session: Session, access: Access, facts: Sequence[Fact], contacts: Iterable) -> list[Fact]:
    """The facts with every partly named subject resolved (see the module's docstring)."""
    if not any(f.subject.startswith("name:") for f in facts):
        return list(facts)
    names, contacts = known_names(session, access), list(contacts)
    out = []
    for f in facts:
        subject = resolve_subject(f.subject, contacts, names)
        out.append(f if subject == f.subject else dataclasses.replace(f, subject=subject))
    return out
