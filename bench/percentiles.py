"""The percentile the benches print: the nearest-rank value, to 0.1 ms."""
from __future__ import annotations


def pct(values, q: float) -> float:
    """The value at rank `q` (0 to 1) of `values` sorted, nearest rank, rounded to 0.1; 0.0 when there are none."""
    values = sorted(values)
    return round(values[min(len(values) - 1, int(q * len(values)))], 1) if values else 0.0
