"""Row security's match functions must stay LEAKPROOF, or full-text, trigram and name-word conditions never reach
their indexes and a big org's every search reads its whole range. A pg_dump restored into a new server loses the
marking of pg_catalog's functions: `/readyz` reports it and `memoria migrate` marks them again
(adapters/leakproof.py)."""
from __future__ import annotations

import logging
from contextlib import contextmanager

from sqlalchemy import text

from memory_core.adapters import leakproof
from memory_core.adapters.db import resolve_urls
from memory_core.adapters.migrate import _mark_leakproof, migrate
from tests.support.migrations import migration
from tests.support.worker import live_worker

LOST = ("pg_catalog.arrayoverlap(anyarray, anyarray)", "pg_catalog.ts_match_vq(tsvector, tsquery)")


def _marked(owner_engine, function: str) -> bool:
    with owner_engine.connect() as conn:
        return conn.execute(text("select proleakproof from pg_proc where oid = to_regprocedure(:f)"),
                            {"f": function}).scalar_one()


@contextmanager
def restored_without_marking(owner_engine):
    """The database as a pg_dump restore leaves it: pg_catalog's functions not marked. Marked again after."""
    with owner_engine.begin() as conn:
        for function in LOST:
            conn.execute(text(f"alter function {function} not leakproof"))
    try:
        yield
    finally:
        with owner_engine.begin() as conn:
            for function in leakproof.FUNCTIONS:
                conn.execute(text(f"alter function {function} leakproof"))


def test_readyz_reports_lost_marking_still_ready_and_migrate_marks_it_again(client, owner_engine, servers, redis_conn):
    assert client.get("/readyz").get_json()["checks"]["indexes"] == "ok"
    with restored_without_marking(owner_engine), live_worker(servers):
        resp = client.get("/readyz")
        # Every answer is still right, only slower: reported, and the service stays in rotation.
        assert resp.status_code == 200 and resp.get_json()["ready"] is True
        assert resp.get_json()["checks"]["indexes"] == "degraded"
        assert not any(_marked(owner_engine, f) for f in LOST)

        migrate(servers)  # as a superuser, like the embedded server's owner

        assert all(_marked(owner_engine, f) for f in leakproof.FUNCTIONS)
        assert client.get("/readyz").get_json()["checks"]["indexes"] == "ok"


def test_without_a_superuser_migrate_says_what_a_superuser_must_run(owner_engine, servers, caplog):
    with restored_without_marking(owner_engine):
        with caplog.at_level(logging.WARNING, logger="memory_core.adapters.migrate"):
            _mark_leakproof(resolve_urls(servers).app)  # memoria_app: not a superuser
        assert not any(_marked(owner_engine, f) for f in LOST)
        warning = caplog.text
        for function in LOST:
            assert f"alter function {function} leakproof;" in warning
        assert "word_similarity_op" not in warning  # still marked: not asked for


def test_the_check_covers_every_function_the_migrations_mark():
    marked = {*migration("0003_merge_leakproof_search").FUNCTIONS, *migration("v6_name_words_index").LEAKPROOF,
              *migration("v7_name_keys_index").LEAKPROOF}
    assert marked == set(leakproof.FUNCTIONS)
