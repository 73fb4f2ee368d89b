"""How a metric and its change are written in every table (kabe diff, kabe ci, sweep diffs): slacks
signed to the picosecond, counts with thousands separators, a change with its percentage."""

from __future__ import annotations


def value(v, metric: str = "") -> str:
    if v is None:
        return "-"
    if metric.endswith("_ns"):
        return f"{v:+.3f}"
    return f"{v:,}" if isinstance(v, int) else f"{v:,g}"


def delta(a, b, metric: str = "") -> str:
    """b - a, with the change relative to a; '-' when either is missing, '0' when equal."""
    if a is None or b is None:
        return "-"
    d = b - a
    if d == 0:
        return "0"
    pct = f" ({d / abs(a):+.1%})" if a else ""
    return (f"{d:+.3f}" if metric.endswith("_ns") or isinstance(d, float) else f"{d:+,}") + pct
