"""A long-running web process freezes what it keeps for its lifetime out of the garbage collector's walk: a full
collection over the code and libraries (~85 ms) would otherwise stall every request of the process."""
from __future__ import annotations

import gc


def test_a_served_apps_long_lived_objects_are_left_out_of_every_collection(servers, database, redis_conn):
    from app import served_app
    from memory_core.adapters.config import get_settings

    try:
        app = served_app(get_settings())
        walked = gc.get_objects()  # what a full collection walks: the frozen objects are not among them
        assert not any(o is app or o is app.jinja_env or o is app.url_map for o in walked)
        assert gc.get_freeze_count() > len(walked)
        # ...and the app still serves, its objects alive
        assert app.test_client().get("/login").status_code == 200
    finally:
        gc.unfreeze()  # the test process's other apps are not long-lived
