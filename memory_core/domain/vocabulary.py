"""The words of the domain: levels, areas, categories, statuses. Plain constants, no imports."""

# Dimension of every stored vector. The local embedder (multilingual USE) gives 512; the OpenAI
# backend asks text-embedding-3-* for 512 dimensions, so both fit one column.
EMBED_DIM = 512

LEVELS = ("personal", "private", "shared")
STATUSES = ("active", "superseded", "proposed", "rejected")
PROPOSAL_KINDS = ("bank_account", "confirmation", "low_permission")
MEMORY_MODES = ("automatic", "confirmation")
ROLES = ("owner", "admin", "member")
PLATFORM_ROLES = ("platform_admin", "staff", "privacy_officer")

# Areas split an org's shared knowledge; a member reads or edits an area per their membership.
AREAS = ("general", "company", "contacts", "invoices", "quotes", "expenses", "documents")
# Every member may read "general" even with no explicit permission.
DEFAULT_READ_AREAS = ("general",)
PERMISSIONS = ("read", "edit")

# What the gate can say a durable fact is about.
GATE_CATEGORIES = ("person", "company", "customer", "supplier", "preference", "event", "nothing")
# Memory categories: the gate's, less "nothing", plus folded subject sheets.
MEMORY_CATEGORIES = ("person", "company", "customer", "supplier", "preference", "event", "sheet")
GATE_SCOPES = ("personal", "shared")

# Where a category's shared facts sit.
CATEGORY_AREA = {
    "person": "general",
    "preference": "general",
    "event": "general",
    "company": "company",
    "customer": "contacts",
    "supplier": "contacts",
    "sheet": "contacts",
}

CHANNELS_BUILTIN = ("web", "whatsapp")
MESSAGE_ROLES = ("user", "assistant", "system", "tool")
DOCUMENT_KINDS = ("invoice", "quote", "expense", "document")
SEARCH_KINDS = ("message", "memory", "contact", "invoice", "quote", "expense", "document")
