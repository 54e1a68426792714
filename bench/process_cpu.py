"""CPU seconds of process trees, read from /proc: what a bench's processes (and PostgreSQL's) spent."""
from __future__ import annotations

import os
from collections import defaultdict
from pathlib import Path

CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def tree_cpu_seconds(root: int) -> float:
    """User + system CPU of a process and its live descendants, with the children each has reaped."""
    parents: dict[int, list[int]] = defaultdict(list)
    times: dict[int, float] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        pid = int(entry.name)
        parents[int(fields[1])].append(pid)  # fields[0] is the state, [1] the parent
        times[pid] = sum(int(f) for f in fields[11:15]) / CLOCK_TICKS  # utime stime cutime cstime
    total, todo = 0.0, [root]
    while todo:
        pid = todo.pop()
        total += times.get(pid, 0.0)
        todo += parents.get(pid, [])
    return total


def postmaster_pid(data_dir: Path) -> int:
    """The embedded PostgreSQL's postmaster in a data dir (-1 when none): its tree holds every backend."""
    try:
        return int((data_dir / "pg" / "postmaster.pid").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return -1
