"""A small typed client for memoria's HTTP API (stdlib only; no server code)."""
from client.memoria_client import ApiError, MemoriaClient, TransportError

__all__ = ["ApiError", "MemoriaClient", "TransportError"]
