"""Forgetting on purpose: the deletion rules and the privacy requests (erasure, access export)."""
