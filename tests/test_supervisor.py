"""`memoria up`'s supervisor on real child processes: a check that fails is logged and the watch goes
on (`up` once died of one, stopping everything it ran); a child that dies is restarted after its backoff."""
from __future__ import annotations

import logging
import sys

from memory_core.adapters.supervisor import BACKOFF_FIRST, Supervisor, child_process


def test_a_check_that_fails_is_logged_and_the_child_is_still_restarted_when_it_dies(caplog):
    now = [100.0]
    child = child_process("sleeper", [sys.executable, "-c", "import time; time.sleep(600)"])
    is_alive = child.alive
    failures = [RuntimeError("postmaster.pid is half written")]

    def alive(handle) -> bool:
        if failures:
            raise failures.pop()
        return is_alive(handle)

    child.alive = alive
    supervisor = Supervisor([child], clock=lambda: now[0])
    supervisor.start([child])
    first = child.handle
    try:
        with caplog.at_level(logging.WARNING, logger="memoria.up"):
            supervisor.check()  # the failing check: logged, nothing else happens
            assert "checking sleeper failed" in caplog.text and "half written" in caplog.text
            assert child.handle is first and child.restart_at is None

            first.kill()
            first.wait()
            supervisor.check()  # seen dead: restarted after the first backoff step
            assert "sleeper died" in caplog.text and child.handle is first
            now[0] += BACKOFF_FIRST
            supervisor.check()
            assert child.handle is not first and is_alive(child.handle)
            assert "sleeper restarted (restart #1)" in caplog.text
    finally:
        child.stop(10)
