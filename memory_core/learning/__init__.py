"""From a message to a memory: ingest, the background pipeline (gate, policy, extraction, ladder) and
explicit remember."""
