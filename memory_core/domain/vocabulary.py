"""The words of the domain: levels, statuses, areas, categories... as `StrEnum`s.

A member is its own value (`Status.ACTIVE == "active"`), so it goes to the database, JSON and templates
as the plain word. The check constraints in `models.py` are generated from these enums (`one_of`),
and the tuples below (`LEVELS`, `STATUSES`...) are their members in order, for membership tests.
"""
from __future__ import annotations

from enum import StrEnum

# Dimension of every stored vector. The local embedder (multilingual USE) gives 512; the OpenAI
# backend asks text-embedding-3-* for 512 dimensions, so both fit one column.
EMBED_DIM = 512
# The text search configuration of every search_tsv column: Spanish stemming over unaccented words.
TEXT_SEARCH_CONFIG = "public.spanish_unaccent"


class Level(StrEnum):
    """Who a memory belongs to: one person everywhere, one person in one org, or the org."""
    PERSONAL = "personal"
    PRIVATE = "private"
    SHARED = "shared"


class Status(StrEnum):
    """A memory version's state; exactly one active version per fact."""
    ACTIVE = "active"
    SUPERSEDED = "superseded"
    PROPOSED = "proposed"
    REJECTED = "rejected"


class ProposalKind(StrEnum):
    """Why a fact waits in the review queue instead of becoming active."""
    BANK_ACCOUNT = "bank_account"
    CONFIRMATION = "confirmation"
    LOW_PERMISSION = "low_permission"


class MemoryMode(StrEnum):
    """An org's choice: learn shared facts at once, or propose them for confirmation."""
    AUTOMATIC = "automatic"
    CONFIRMATION = "confirmation"


class Role(StrEnum):
    """A member's role in an org."""
    OWNER = "owner"
    ADMIN = "admin"
    MEMBER = "member"


class PlatformRole(StrEnum):
    """A platform-wide role (not tied to an org)."""
    PLATFORM_ADMIN = "platform_admin"
    STAFF = "staff"
    PRIVACY_OFFICER = "privacy_officer"


class Area(StrEnum):
    """Areas split an org's shared knowledge; a member reads or edits an area per their membership."""
    GENERAL = "general"
    COMPANY = "company"
    CONTACTS = "contacts"
    INVOICES = "invoices"
    QUOTES = "quotes"
    EXPENSES = "expenses"
    DOCUMENTS = "documents"


class Permission(StrEnum):
    READ = "read"
    EDIT = "edit"


class GateCategory(StrEnum):
    """What the gate can say a durable fact is about."""
    PERSON = "person"
    COMPANY = "company"
    CUSTOMER = "customer"
    SUPPLIER = "supplier"
    PREFERENCE = "preference"
    EVENT = "event"
    NOTHING = "nothing"


# Memory categories: the gate's, less "nothing", plus folded subject sheets.
Category = StrEnum("Category", {**{c.name: c.value for c in GateCategory if c is not GateCategory.NOTHING},
                                "SHEET": "sheet"}, module=__name__)


class GateScope(StrEnum):
    PERSONAL = "personal"
    SHARED = "shared"


class ContactKind(StrEnum):
    CUSTOMER = "customer"
    SUPPLIER = "supplier"


class MessageRole(StrEnum):
    USER = "user"
    ASSISTANT = "assistant"
    SYSTEM = "system"
    TOOL = "tool"


class Visibility(StrEnum):
    """Who in the org may read a message or document besides its author."""
    PRIVATE_IN_ORG = "private_in_org"
    SHARED_IN_ORG = "shared_in_org"


class DocumentKind(StrEnum):
    INVOICE = "invoice"
    QUOTE = "quote"
    EXPENSE = "expense"
    DOCUMENT = "document"


# What search finds: messages, memories, contacts and every kind of host record.
SearchKind = StrEnum("SearchKind", {"MESSAGE": "message", "MEMORY": "memory", "CONTACT": "contact",
                                    **{k.name: k.value for k in DocumentKind}}, module=__name__)


class PrivacyKind(StrEnum):
    ERASURE = "erasure"
    ACCESS = "access"
    PORTABILITY = "portability"


class PrivacySubjectType(StrEnum):
    USER = "user"
    PHONE = "phone"
    CONTACT = "contact"
    CONVERSATION = "conversation"


class PrivacyStatus(StrEnum):
    """A privacy request's steps, in order: an erasure ends executed, an export delivered; rejected ends it early."""
    RECEIVED = "received"
    VERIFIED = "verified"
    PREVIEWED = "previewed"
    EXECUTED = "executed"
    DELIVERED = "delivered"
    REJECTED = "rejected"


class ExclusionKind(StrEnum):
    """An exclusion-list rule: a secret is refused outright, a special category never learnt in the background."""
    SECRET = "secret"
    SPECIAL = "special"


LEVELS = tuple(Level)
STATUSES = tuple(Status)
PROPOSAL_KINDS = tuple(ProposalKind)
MEMORY_MODES = tuple(MemoryMode)
ROLES = tuple(Role)
PLATFORM_ROLES = tuple(PlatformRole)
AREAS = tuple(Area)
# Every member may read "general" even with no explicit permission.
DEFAULT_READ_AREAS = (Area.GENERAL,)
PERMISSIONS = tuple(Permission)
GATE_CATEGORIES = tuple(GateCategory)
MEMORY_CATEGORIES = tuple(Category)
GATE_SCOPES = tuple(GateScope)

# Where a category's shared facts sit.
CATEGORY_AREA = {
    Category.PERSON: Area.GENERAL,
    Category.PREFERENCE: Area.GENERAL,
    Category.EVENT: Area.GENERAL,
    Category.COMPANY: Area.COMPANY,
    Category.CUSTOMER: Area.CONTACTS,
    Category.SUPPLIER: Area.CONTACTS,
    Category.SHEET: Area.CONTACTS,
}

CHANNELS_BUILTIN = ("web", "whatsapp")
MESSAGE_ROLES = tuple(MessageRole)
DOCUMENT_KINDS = tuple(DocumentKind)
SEARCH_KINDS = tuple(SearchKind)


def one_of(column: str, words: type[StrEnum], *, nullable: bool = False) -> str:
    """The SQL of a check constraint that `column` holds one of the enum's words, e.g.
    "status in ('active','superseded','proposed','rejected')"."""
    listed = ",".join(f"'{w.value}'" for w in words)
    return f"{column} is null or {column} in ({listed})" if nullable else f"{column} in ({listed})"
