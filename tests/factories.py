"""Factories for the main rows, committed through a system-scope session so every process sees them."""
from __future__ import annotations

import itertools
import uuid

from memory_core.adapters.security import hash_password
from memory_core.domain.models import (
    Contact,
    Conversation,
    Membership,
    Memory,
    Message,
    Organization,
    PhoneAuthorization,
    User,
)
from memory_core.domain.vocabulary import AREAS

_seq = itertools.count(1)
PASSWORD = "correct horse battery"
_PASSWORD_HASH = hash_password(PASSWORD)  # scrypt is slow on purpose: hash once for the whole run


class Factory:
    def __init__(self, session):
        self.s = session

    def _save(self, row):
        self.s.add(row)
        self.s.commit()
        return row

    def org(self, name: str | None = None, memory_mode: str = "automatic") -> Organization:
        return self._save(Organization(name=name or f"Org {next(_seq)}", memory_mode=memory_mode))

    def user(self, email: str | None = None, name: str | None = None, platform_role: str | None = None,
             phone: str | None = None) -> User:
        n = next(_seq)
        return self._save(User(email=email or f"user{n}@example.test", name=name or f"User {n}",
                               password_hash=_PASSWORD_HASH, platform_role=platform_role, phone=phone))

    def member(self, org: Organization, role: str = "member", permissions: dict | None = None,
               user: User | None = None, **user_kw) -> User:
        user = user or self.user(**user_kw)
        self._save(Membership(org_id=org.id, user_id=user.id, role=role, permissions=permissions or {}))
        return user

    def phone(self, org: Organization, phone: str, user: User | None = None,
              permissions: dict | None = None) -> PhoneAuthorization:
        return self._save(PhoneAuthorization(org_id=org.id, phone=phone, user_id=user.id if user else None,
                                             permissions=permissions or {a: "edit" for a in AREAS}))

    def contact(self, org: Organization, name: str = "Talleres García S.L.", tax_id: str | None = "B12345678",
                kind: str = "customer", aliases: list[str] | None = None) -> Contact:
        return self._save(Contact(org_id=org.id, name=name, tax_id=tax_id, kind=kind, aliases=aliases or []))

    def conversation(self, org: Organization | None, user: User | None = None, channel: str = "web",
                     phone: str | None = None, temporary: bool = False) -> Conversation:
        return self._save(Conversation(channel=channel, external_id=f"conv-{uuid.uuid4()}",
                                       org_id=org.id if org else None, user_id=user.id if user else None,
                                       phone=phone, temporary=temporary))

    def message(self, conversation: Conversation, text: str, role: str = "user", **kw) -> Message:
        if "created_at" in kw:
            kw.setdefault("sent_at", kw["created_at"])  # a message dated in the past was sent then
        return self._save(Message(conversation_id=conversation.id, channel=conversation.channel,
                                  external_id=kw.pop("external_id", f"msg-{uuid.uuid4()}"),
                                  org_id=conversation.org_id, user_id=kw.pop("user_id", conversation.user_id),
                                  phone=kw.pop("phone", conversation.phone), role=role, text=text, **kw))

    def memory(self, org: Organization | None, *, level: str = "shared", subject: str = "org",
               attribute: str = "fact", value: str = "value", sentence: str | None = None,
               category: str = "company", area: str = "general", owner: User | None = None,
               owner_phone: str | None = None, status: str = "active", **kw) -> Memory:
        return self._save(Memory(org_id=None if level == "personal" else (org.id if org else None), level=level,
                                 subject=subject, attribute=attribute, value=value,
                                 sentence=sentence or f"{attribute}: {value}", category=category, area=area,
                                 owner_user_id=owner.id if owner else None, owner_phone=owner_phone,
                                 status=status, **kw))
