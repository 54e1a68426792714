"""The web server `memoria web` runs (memory_core.adapters.devserver): when it stops, a request in flight finishes
and one still waiting for a thread is closed at once, so its client can retry instead of waiting out its timeout."""
from __future__ import annotations

import threading
import time
import urllib.request

from memory_core.adapters.devserver import PooledWSGIServer


def test_a_request_queued_when_the_server_stops_is_closed_and_the_one_in_flight_finishes():
    started, release = threading.Event(), threading.Event()

    def app(environ, start_response):
        started.set()
        release.wait(30)
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [b"done"]

    server = PooledWSGIServer("127.0.0.1", 0, app, threads=1)
    serving = threading.Thread(target=server.serve_forever)
    serving.start()
    answers: dict[str, object] = {}

    def get(name: str) -> None:
        try:
            answers[name] = urllib.request.urlopen(f"http://127.0.0.1:{server.server_port}/", timeout=60).read()
        except OSError as exc:
            answers[name] = exc

    in_flight = threading.Thread(target=get, args=("in flight",))
    in_flight.start()
    assert started.wait(30)
    queued = threading.Thread(target=get, args=("queued",))
    queued.start()
    time.sleep(0.5)  # accepted, waiting for the one thread
    server.shutdown()
    server.server_close()  # what `memoria web` does on SIGTERM or Ctrl-C
    queued.join(10)
    assert not queued.is_alive() and isinstance(answers["queued"], OSError)  # closed, not left to time out
    release.set()
    in_flight.join(30)
    assert answers["in flight"] == b"done"
    serving.join(10)
