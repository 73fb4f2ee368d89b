"""The rows an HLS build adds to `kabe diff`: its estimated latency, interval and clock, and each
pipelined loop's II and latency, before and after (metrics.json's `hls` object). Every label says
"estimate": they are C synthesis's numbers, not a routed result. An unknown value ("undef") is
shown as such, and its change as "-"."""

from __future__ import annotations

from typing import Any, Mapping

from kabe.records.numbers import delta, value


def _fmt(v: Any, metric: str) -> str:
    return v if isinstance(v, str) else value(v, metric)


def _delta(a: Any, b: Any, metric: str) -> str:
    if isinstance(a, str) or isinstance(b, str):
        return "-" if a != b else "0"
    return delta(a, b, metric)


def _loops(hls: Mapping[str, Any] | None) -> dict[str, Mapping[str, Any]]:
    return {lp["name"]: lp for lp in (hls or {}).get("loops") or [] if isinstance(lp, Mapping) and "name" in lp}


def rows(new: Mapping[str, Any], old: Mapping[str, Any] | None) -> list[tuple[str, str, str, str]]:
    """(label, before, after, delta) for each HLS number of `new` (a metrics record) against `old`."""
    hn = new.get("hls")
    if not isinstance(hn, Mapping):
        return []
    ho = (old or {}).get("hls") if isinstance((old or {}).get("hls"), Mapping) else None
    out = []
    for key, label in (("latency_max", "HLS latency, cycles (estimate)"), ("interval_max", "HLS interval, cycles (estimate)"),
                       ("estimated_clock_ns", "HLS clock ns (estimate)")):
        a, b = (ho or {}).get(key), hn.get(key)
        out.append((label, _fmt(a, key), _fmt(b, key), _delta(a, b, key)))
    new_loops, old_loops = _loops(hn), _loops(ho)
    for name in sorted(new_loops):
        n, o = new_loops[name], old_loops.get(name, {})
        if n.get("pipelined") not in (None, "no"):
            out.append((f"II {name} (estimate)", _fmt(o.get("ii"), "ii"), _fmt(n.get("ii"), "ii"),
                        _delta(o.get("ii"), n.get("ii"), "ii")))
        out.append((f"latency {name} (estimate)", _fmt(o.get("latency_max"), "l"), _fmt(n.get("latency_max"), "l"),
                    _delta(o.get("latency_max"), n.get("latency_max"), "l")))
    return out
