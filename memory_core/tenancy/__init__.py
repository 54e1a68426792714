"""Organizations, people, memberships, API keys and channel identities (WhatsApp linking)."""
