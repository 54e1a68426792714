"""`memoria up`'s supervisor: it watches its children (web, worker, cron) and the embedded servers it
started, restarts whichever dies, with backoff and a log line each time, and stops them all in order.

A child runs in its own process group (its own session), so Ctrl-C at the terminal reaches only `up`,
which then stops each child's whole group: the web and cron at once, the worker with a warm shutdown
(SIGTERM: the job at hand finishes) for up to STOP_TIMEOUT seconds, longer than a job may run, and
then SIGKILL for whatever of the group is left (the job's work horse, RQ's scheduler).
"""
from __future__ import annotations

import logging
import os
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field

log = logging.getLogger("memoria.up")

# RQ's job timeout (Queue.DEFAULT_TIMEOUT, 180 s) plus a margin: a job at hand may finish.
STOP_TIMEOUT = 195
# Restart backoff: 1 s, doubling up to 30 s; a child that ran a minute starts from 1 s again.
BACKOFF_FIRST = 1.0
BACKOFF_MAX = 30.0
STABLE_SECONDS = 60.0
POLL_SECONDS = 0.5


@dataclass
class Watched:
    """Something `up` keeps running: `start` starts it and returns a handle, `alive(handle)` checks it,
    `ask_stop(handle)` asks it to stop and `finish_stop(handle, timeout)` waits, then forces it."""
    name: str
    start: Callable[[], object]
    alive: Callable[[object], bool]
    finish_stop: Callable[[object, float], None]
    ask_stop: Callable[[object], None] = lambda handle: None
    handle: object = None
    started_at: float = 0.0
    failures: int = 0
    restart_at: float | None = None
    restarts: int = 0
    # Children to restart after this one restarted at a new address (`moved(old, new)`): the web
    # resolved PostgreSQL's URL when it started.
    dependents: list[str] = field(default_factory=list)
    moved: Callable[[object, object], bool] = lambda old, new: True
    # First backoff step: PostgreSQL gets longer, an operator's `pg_ctl restart` may be under way.
    first_delay: float = BACKOFF_FIRST

    def stop(self, timeout: float) -> None:
        if self.handle is not None:
            self.ask_stop(self.handle)
            self.finish_stop(self.handle, timeout)


def child_process(name: str, argv: list[str], *, warm: bool = False) -> Watched:
    """A child command in its own process group. warm: SIGTERM only the child itself (RQ's warm
    shutdown lets the job at hand finish); otherwise its whole group. Once the child has exited, or
    the timeout passed, whatever is left of its group is killed."""
    def start():
        return subprocess.Popen(argv, start_new_session=True)

    def alive(proc) -> bool:
        return proc is not None and proc.poll() is None

    def ask_stop(proc) -> None:
        if proc.poll() is not None:
            return
        try:
            proc.send_signal(signal.SIGTERM) if warm else os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass

    return Watched(name=name, start=start, alive=alive, ask_stop=ask_stop, finish_stop=wait_then_kill_group)


def wait_then_kill_group(proc: subprocess.Popen, timeout: float) -> None:
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        log.warning("child %s did not stop within %.0f s; killing its process group", proc.pid, timeout)
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # whatever of the group is left: a work horse, a scheduler
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()


class Supervisor:
    def __init__(self, watched: list[Watched], *, clock=time.monotonic, sleep=time.sleep):
        self.watched = watched
        self.by_name = {w.name: w for w in watched}
        self.clock, self.sleep = clock, sleep

    def start(self, watched: list[Watched]) -> None:
        for w in watched:
            self._start(w)

    def _start(self, w: Watched) -> None:
        w.handle = w.start()
        w.started_at = self.clock()
        w.restart_at = None

    def check(self) -> None:
        """One round: note what died, restart what is due. A check that fails is logged and made again
        next round: `up` itself must not die of it, taking down everything it runs."""
        now = self.clock()
        for w in self.watched:
            try:
                self._check(w, now)
            except Exception:  # noqa: BLE001
                log.exception("checking %s failed; checking again in %.1f s", w.name, POLL_SECONDS)

    def _check(self, w: Watched, now: float) -> None:
        if w.restart_at is None and not w.alive(w.handle):
            w.failures = 1 if now - w.started_at >= STABLE_SECONDS else w.failures + 1
            delay = min(BACKOFF_MAX, w.first_delay * 2 ** (w.failures - 1))
            code = getattr(w.handle, "returncode", None)
            log.warning("%s died%s; restart #%d in %.0f s", w.name,
                        f" (exit code {code})" if code is not None else "", w.restarts + 1, delay)
            w.restart_at = now + delay
        if w.restart_at is not None and now >= w.restart_at:
            if w.alive(w.handle):  # a server restarted by someone else (pg_ctl restart) is back
                log.warning("%s is back without a restart", w.name)
                w.restart_at = None
                return
            w.restarts += 1
            old = w.handle
            try:
                self._start(w)
            except Exception:  # noqa: BLE001 - tried again after the next backoff
                log.exception("restarting %s failed", w.name)
                w.started_at, w.restart_at = now, None  # counted as a death: the next try backs off more
                return
            log.warning("%s restarted (restart #%d)", w.name, w.restarts)
            if not w.moved(old, w.handle):
                return
            for name in w.dependents:
                dep = self.by_name[name]
                if dep.restart_at is None and dep.alive(dep.handle):
                    log.warning("restarting %s, which depends on %s", name, w.name)
                    dep.stop(15)

    def run(self) -> None:
        """Watch until interrupted (KeyboardInterrupt: Ctrl-C, or SIGTERM through `up`)."""
        while True:
            self.sleep(POLL_SECONDS)
            self.check()

    def stop_all(self, children: list[str], servers: list[str]) -> None:
        """Ask every child to stop at once, wait for each (STOP_TIMEOUT at most), then stop the servers."""
        for name in children:
            w = self.by_name[name]
            w.restart_at = None
            if w.handle is not None:
                w.ask_stop(w.handle)
        for name in children:
            w = self.by_name[name]
            if w.handle is not None:
                w.finish_stop(w.handle, STOP_TIMEOUT)
        for name in servers:
            try:
                self.by_name[name].stop(30)
            except Exception:  # noqa: BLE001 - stop the others anyway
                log.exception("stopping %s failed", name)
