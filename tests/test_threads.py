"""A process's named thread pools: one per name, and a forked child gets its own (its parent's threads did not
come with it, so a task sent to the parent's pool would never run)."""
from __future__ import annotations

import os
import time

from memory_core.adapters import threads


def test_one_pool_per_name_whose_threads_bear_its_name():
    a = threads.pool("test-a", 2)
    assert threads.pool("test-a", 2) is a and threads.pool("test-b", 1) is not a
    assert a.submit(lambda: __import__("threading").current_thread().name).result(timeout=5).startswith("test-a")


def test_a_forked_child_runs_its_tasks_on_a_pool_of_its_own():
    parent = threads.pool("test-fork", 1)
    assert parent.submit(lambda: 1).result(timeout=5) == 1  # the parent's thread exists now
    pid = os.fork()
    if pid == 0:  # the child: exit 0 only if its own pool runs a task
        try:
            child = threads.pool("test-fork", 1)
            os._exit(0 if child is not parent and child.submit(lambda: 2).result(timeout=5) == 2 else 1)
        except BaseException:  # noqa: BLE001 - any failure is the child's exit code
            os._exit(2)
    deadline = time.monotonic() + 10
    while (done := os.waitpid(pid, os.WNOHANG)) == (0, 0) and time.monotonic() < deadline:
        time.sleep(0.05)
    if done == (0, 0):
        os.kill(pid, 9)
        os.waitpid(pid, 0)
    assert done[0] == pid and os.waitstatus_to_exitcode(done[1]) == 0
