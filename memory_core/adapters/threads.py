"""Thread pools of this process, one per name, made afresh in a forked child (which must not use threads that
stayed behind in its parent)."""
from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor

_pools: dict[str, tuple[int, ThreadPoolExecutor]] = {}  # name -> (the process that made it, the pool)
_lock = threading.Lock()


def pool(name: str, workers: int) -> ThreadPoolExecutor:
    """This process's pool called `name` (its threads are named after it), made with `workers` threads."""
    with _lock:
        made = _pools.get(name)
        if made is None or made[0] != os.getpid():
            made = _pools[name] = (os.getpid(), ThreadPoolExecutor(max_workers=workers, thread_name_prefix=name))
    return made[1]
