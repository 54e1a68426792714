"""CPU seconds and disk reads of process trees, read from /proc: what a bench's processes (and PostgreSQL's)
spent."""
from __future__ import annotations

import os
from collections import defaultdict
from pathlib import Path

CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _tree(root: int, *readers) -> tuple[float, ...]:
    """The sums of each `reader(pid directory, stat fields)` over a process and its live descendants, in one walk
    of /proc."""
    parents: dict[int, list[int]] = defaultdict(list)
    values: dict[int, list[float]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # gone
        pid = int(entry.name)
        parents[int(fields[1])].append(pid)  # fields[0] is the state, [1] the parent
        values[pid] = []
        for read in readers:
            try:
                values[pid].append(read(entry, fields))
            except OSError:
                values[pid].append(0.0)  # gone since, or not ours to read
    totals, todo = [0.0] * len(readers), [root]
    while todo:
        pid = todo.pop()
        for i, value in enumerate(values.get(pid, ())):
            totals[i] += value
        todo += parents.get(pid, [])
    return tuple(totals)


def _cpu_seconds(_entry: Path, fields) -> float:
    return sum(int(f) for f in fields[11:15]) / CLOCK_TICKS  # utime stime cutime cstime


def _read_bytes(entry: Path, _fields) -> float:
    for line in (entry / "io").read_text().splitlines():
        if line.startswith("read_bytes:"):
            return float(line.split()[1])
    return 0.0


def tree_cpu_seconds(root: int) -> float:
    """User + system CPU of a process and its live descendants, with the children each has reaped."""
    return _tree(root, _cpu_seconds)[0]


def tree_cpu_and_disk(root: int) -> tuple[float, float]:
    """`tree_cpu_seconds` and the bytes the same processes made the kernel read from storage (`read_bytes` of
    /proc/PID/io: a read served by the page cache counts nothing; 0 where that file is not readable), in one walk.
    For PostgreSQL's tree: what its backends found in neither its shared buffers nor the OS's cache."""
    return _tree(root, _cpu_seconds, _read_bytes)


def postmaster_pid(data_dir: Path) -> int:
    """The embedded PostgreSQL's postmaster in a data dir (-1 when none): its tree holds every backend."""
    try:
        return int((data_dir / "pg" / "postmaster.pid").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return -1
