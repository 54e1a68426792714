"""Linking a WhatsApp number to a web account, and adopting what the number said before.

A signed-in member asks for a code (6 characters, unambiguous alphabet, 10 minutes, single use,
stored only as an HMAC with the server secret). Sent from the phone as `VINCULAR <code>`, it links
the number that sent it; a number owned by another account is refused; the number gets at most the
person's own permissions in the org. What the number said before linking stays the phone's until the
person explicitly adopts it.
"""
from __future__ import annotations

import datetime as dt
import re
import secrets
import uuid
from dataclasses import dataclass

from sqlalchemy import func, select, text, update
from sqlalchemy.orm import Session

from memory_core.adapters.db import Scope
from memory_core.adapters.security import keyed_digest, secret
from memory_core.domain import audit, clock
from memory_core.domain.access import Access, Principal, member_permissions, weaker_permissions
from memory_core.domain.errors import Conflict, Forbidden, NotFound, TooManyAttempts
from memory_core.domain.models import (
    Conversation,
    LinkCode,
    Membership,
    Memory,
    MemoryTrace,
    Message,
    Notification,
    PhoneAuthorization,
    User,
)
from memory_core.domain.phones import normalise_phone
from memory_core.domain.vocabulary import Level, Status

# No 0/O, 1/I/L, 5/S or 2/Z: a code read aloud or typed on a phone keyboard cannot be misread.
ALPHABET = "ABCDEFGHJKMNPQRTUVWXY346789"
CODE_LENGTH = 6
CODE_TTL = dt.timedelta(minutes=10)
# At most this many codes per user per window: a code is cheap to ask for, not to brute-force.
MAX_CODES = 5
CODE_WINDOW = dt.timedelta(hours=1)
# Wrong codes sent from one number before it must wait: 27^6 codes, 5 guesses per 15 minutes.
MAX_FAILURES = 5
FAILURE_WINDOW = dt.timedelta(minutes=15)

COMMAND_RE = re.compile(r"^\s*vincular\b[\s:\-]*(?P<code>.*)$", re.IGNORECASE | re.DOTALL)

REPLIES = {
    "es": {
        "linked": "Listo: este número queda vinculado a tu cuenta. Lo que digas desde aquí será tuyo.",
        "already": "Este número ya estaba vinculado a tu cuenta. No hay que hacer nada más.",
        "other_account": "Este número ya está vinculado a otra cuenta, así que no se puede vincular a esta. "
                         "Si es un error, pide ayuda al administrador de tu organización.",
        "invalid": "Ese código no es válido. Revisa que lo has copiado bien o pide uno nuevo en la consola.",
        "expired": "Ese código ha caducado (dura 10 minutos). Pide uno nuevo en la consola.",
        "used": "Ese código ya se usó. Pide uno nuevo en la consola.",
        "not_member": "Tu cuenta ya no pertenece a esa organización, así que no se puede vincular el número.",
        "too_many": "Demasiados códigos incorrectos desde este número. Espera 15 minutos y vuelve a intentarlo.",
        "missing": "Escribe VINCULAR seguido del código de 6 caracteres que ves en la consola.",
    },
    "en": {
        "linked": "Done: this number is now linked to your account. What you say from here is yours.",
        "already": "This number was already linked to your account. Nothing else to do.",
        "other_account": "This number is already linked to another account, so it cannot be linked to this one. "
                         "If that is a mistake, ask your organization's administrator.",
        "invalid": "That code is not valid. Check you copied it correctly or ask for a new one in the console.",
        "expired": "That code has expired (it lasts 10 minutes). Ask for a new one in the console.",
        "used": "That code was already used. Ask for a new one in the console.",
        "not_member": "Your account no longer belongs to that organization, so the number cannot be linked.",
        "too_many": "Too many wrong codes from this number. Wait 15 minutes and try again.",
        "missing": "Send VINCULAR followed by the 6-character code shown in the console.",
    },
}


@dataclass(frozen=True)
class IssuedCode:
    """A code as shown once to the person; only its HMAC is stored."""
    code: str
    expires_at: dt.datetime


def code_digest(code: str) -> str:
    return keyed_digest(secret("link_code_key"), code)


def phone_key(phone: str) -> str:
    """The rate-limit key of a number: a keyed digest, so login_attempts never holds the number."""
    return "link:" + keyed_digest(secret("link_code_key"), "phone:" + phone)


def normalise_code(raw: str) -> str:
    """Case and spacing do not matter: ' ab3 k7x ' and 'AB3-K7X' are the same code."""
    return re.sub(r"[\s\-_.]", "", raw or "").upper()


def parse_command(text: str) -> str | None:
    """The code in a `VINCULAR <code>` message ('' when the code is missing); None if not the command."""
    m = COMMAND_RE.match(text or "")
    return normalise_code(m.group("code")) if m else None


def issue_link_code(session: Session, user_id: uuid.UUID, org_id: uuid.UUID) -> IssuedCode:
    """A new code for a member of the org; earlier unused codes stop working. Does not commit."""
    member = session.scalar(select(Membership).where(
        Membership.user_id == user_id, Membership.org_id == org_id, Membership.left_at.is_(None)))
    if member is None:
        raise Forbidden("Only a member of the organization can link a WhatsApp number to it.")
    now = clock.now()
    recent = session.scalar(select(func.count()).select_from(LinkCode).where(
        LinkCode.user_id == user_id, LinkCode.created_at > now - CODE_WINDOW))
    if recent >= MAX_CODES:
        raise TooManyAttempts("Too many link codes in the last hour. Wait a while and try again.")
    session.execute(update(LinkCode).where(
        LinkCode.user_id == user_id, LinkCode.used_at.is_(None), LinkCode.expires_at > now).values(expires_at=now))
    code = "".join(secrets.choice(ALPHABET) for _ in range(CODE_LENGTH))
    row = LinkCode(user_id=user_id, org_id=org_id, code_hmac=code_digest(code), created_at=now,
                   expires_at=now + CODE_TTL)
    session.add(row)
    audit.record(session, actor_user_id=user_id, actor_label="console user", action="identity.link_code_issued",
                 org_id=org_id, target_type="user", target_id=user_id)
    session.flush()
    return IssuedCode(code=code, expires_at=row.expires_at)


def create_link_code(session: Session, user_id: uuid.UUID, org_id: uuid.UUID) -> str:
    """The code alone (see issue_link_code for its expiry). Does not commit."""
    return issue_link_code(session, user_id, org_id).code


def _reply(locale: str | None, key: str) -> str:
    return REPLIES.get((locale or "es")[:2], REPLIES["es"])[key]


def link_scope(session: Session, phone: str | None, code: str, org_id: uuid.UUID | None) -> Scope:
    """The scope `confirm_link` runs in without system scope: the person who asked for the code (named
    by a SECURITY DEFINER function from the code's HMAC), with the number that sent it, in the org the
    message came to; just the number when the code is nobody's."""
    phone = normalise_phone(phone) or ""  # as ingest will hand it to confirm_link
    command = parse_command(code)
    code = command if command is not None else normalise_code(code)
    user_id = session.scalar(text("select memoria_link_code_user(:h, :o)"),
                             {"h": code_digest(code), "o": org_id}) if code else None
    if user_id is None and not phone:
        return Scope()
    return Access(Principal(user_id=user_id, phone=phone or None), org_id).scope()


def confirm_link(session: Session, phone: str, code: str, org_id: uuid.UUID | None = None) -> str:
    """Link the number that sent `VINCULAR <code>`; returns the sentence to reply. Does not commit
    (the caller commits once, so a wrong guess is counted even when nothing is linked). With
    `org_id`, only a code issued in that org links: an agent of one org cannot redeem another's.

    Runs in system scope or in `link_scope`: the code is checked and taken, and wrong guesses counted,
    by a SECURITY DEFINER function (migration t3_sec_links_web_scopes); the rest is the person's own."""
    phone = (phone or "").strip()
    command = parse_command(code)  # the whole message or the code alone: both are accepted
    code = command if command is not None else normalise_code(code)
    if not phone:
        return _reply(None, "invalid")
    now = clock.now()
    digest = None if not code else code_digest(code) if len(code) == CODE_LENGTH and set(code) <= set(ALPHABET) else ""
    took = session.execute(text("select * from memoria_link_code_take(:h, :o, :p, :k, :since, :max, :now)"), {
        "h": digest, "o": org_id, "p": phone, "k": phone_key(phone), "since": now - FAILURE_WINDOW,
        "max": MAX_FAILURES, "now": now}).one()
    if took.outcome != "ok":
        return _reply(took.phone_locale, took.outcome)
    user = session.get(User, took.user_id, with_for_update=True)
    if user is None:
        return _reply(took.phone_locale, "invalid")  # a scope that is not the code's person's
    locale = user.locale
    holder = session.scalar(text("select memoria_user_of_phone(:p)"), {"p": phone})
    if holder is not None and holder != user.id:
        _audit_link(session, user, took.org_id, "identity.link_refused", reason="number_linked_to_another_account")
        return _reply(locale, "other_account")
    member = session.scalar(select(Membership).where(
        Membership.user_id == user.id, Membership.org_id == took.org_id, Membership.left_at.is_(None)))
    if member is None:
        _audit_link(session, user, took.org_id, "identity.link_refused", reason="not_a_member")
        return _reply(locale, "not_member")
    auth = session.scalar(select(PhoneAuthorization).where(
        PhoneAuthorization.org_id == took.org_id, PhoneAuthorization.phone == phone).with_for_update())
    if auth is not None and auth.user_id is not None and auth.user_id != user.id:
        _audit_link(session, user, took.org_id, "identity.link_refused", reason="number_authorized_for_another_account")
        return _reply(locale, "other_account")
    already = user.phone == phone and auth is not None and auth.revoked_at is None
    if user.phone and user.phone != phone:
        # The person moved to a new number: the old one stops speaking for them.
        session.execute(update(PhoneAuthorization).where(
            PhoneAuthorization.user_id == user.id, PhoneAuthorization.phone == user.phone,
            PhoneAuthorization.revoked_at.is_(None)).values(revoked_at=now))
    own = member_permissions(member.role, member.permissions)
    if auth is None:
        auth = PhoneAuthorization(org_id=took.org_id, phone=phone, user_id=user.id, permissions=own)
        session.add(auth)
    else:
        # A number an admin had authorized keeps the lesser of its grant and the person's own.
        granted = member_permissions("member", auth.permissions) if auth.revoked_at is None else own
        auth.user_id, auth.revoked_at, auth.permissions = user.id, None, weaker_permissions(granted, own)
    user.phone = phone
    session.flush()
    _audit_link(session, user, took.org_id, "identity.linked")
    return _reply(locale, "already" if already else "linked")


def _audit_link(session: Session, user: User, org_id: uuid.UUID, action: str, **details) -> None:
    # Never the number itself: the audit log is append-only and must hold no personal data.
    audit.record(session, actor_user_id=user.id, actor_label="whatsapp", action=action, org_id=org_id,
                 target_type="user", target_id=user.id, details=details)


@dataclass(frozen=True)
class PreLinkHistory:
    memories: int
    messages: int
    conversations: int


def pre_link_history(session: Session, user_id: uuid.UUID) -> PreLinkHistory:
    """What the person's linked number said before linking and still owns (nothing when unlinked).

    Counted by a SECURITY DEFINER function (migration t1_sysscope_definer_lookups), in any scope: the
    number's rows lie in every org it wrote in, and the person's console page has no system scope."""
    row = session.execute(text("select memories, messages, conversations from memoria_pre_link_history(:u)"),
                          {"u": user_id}).one()
    return PreLinkHistory(row.memories, row.messages, row.conversations)


def adoption_scopes(session: Session, user_id: uuid.UUID, phone: str) -> list[Scope]:
    """Where adopting the number's earlier rows must run, without system scope: the person's own scope
    with the number, first with no org (org-less rows; personal memories are seen there too), then in
    each org the number wrote in (listed by a SECURITY DEFINER function, migration t3_sec_links_*)."""
    orgs = session.scalars(text("select org_id from memoria_pre_link_orgs(:u)"), {"u": user_id}).all()
    principal = Principal(user_id=user_id, phone=phone or None)
    return [Access(principal, org_id).scope() for org_id in [None, *sorted(o for o in orgs if o is not None)]]


def adopt_pre_link_history(session: Session, user_id: uuid.UUID, phone: str, actor: uuid.UUID) -> dict[str, int]:
    """Move the linked number's personal and private memories and its messages to the person.

    Only the person may do it, only for their own linked number; never automatic. Moves what the session
    sees: in system scope everything, in the person's scopes (`adoption_scopes`) one org at a time. Where the person
    already holds an active fact with the same subject and attribute, the older of the two becomes a
    version of the newer (supersede, never overwrite). Audited; does not commit.
    """
    if actor != user_id:
        raise Forbidden("Only the person themselves can adopt their number's earlier history.")
    user = session.get(User, user_id, with_for_update=True)
    if user is None:
        raise NotFound("No such user.")
    phone = (phone or "").strip()
    if not user.phone or user.phone != phone:
        raise Conflict("That number is not linked to your account.")
    now = clock.now()
    adopted = superseded = 0
    rows = session.scalars(select(Memory).where(
        Memory.owner_phone == phone, Memory.owner_user_id.is_(None),
        Memory.level.in_((Level.PERSONAL, Level.PRIVATE))).order_by(Memory.created_at).with_for_update()).all()
    for m in rows:
        if m.status == Status.ACTIVE:
            mine = session.scalar(select(Memory).where(
                Memory.status == Status.ACTIVE, Memory.level == m.level, Memory.owner_user_id == user_id,
                Memory.owner_phone.is_(None), Memory.subject == m.subject, Memory.attribute == m.attribute,
                Memory.org_id.is_(None) if m.org_id is None else Memory.org_id == m.org_id).with_for_update())
            if mine is not None:
                older, newer = (m, mine) if m.valid_from <= mine.valid_from else (mine, m)
                older.status, older.valid_to = Status.SUPERSEDED, now
                session.flush()  # one active row per fact: close the older first
                older.superseded_by = newer.id
                superseded += 1
        m.owner_user_id, m.owner_phone = user_id, None
        adopted += 1
    session.flush()
    messages = session.execute(update(Message).where(Message.phone == phone, Message.user_id.is_(None))
                               .values(user_id=user_id)).rowcount
    conversations = session.execute(update(Conversation).where(
        Conversation.phone == phone, Conversation.user_id.is_(None)).values(user_id=user_id)).rowcount
    session.execute(update(Notification).where(Notification.phone == phone, Notification.user_id.is_(None))
                    .values(user_id=user_id))
    session.execute(update(MemoryTrace).where(MemoryTrace.phone == phone, MemoryTrace.user_id.is_(None))
                    .values(user_id=user_id))
    counts = {"memories": adopted, "versions_closed": superseded, "messages": messages,
              "conversations": conversations}
    audit.record(session, actor_user_id=actor, actor_label="console user", action="identity.history_adopted",
                 target_type="user", target_id=user_id, details=counts)
    return counts

