"""What an estimate's WNS band means for its verdict, and what to do about it, in one line.

The open flow's WNS is a pre-route estimate with a band (lo .. hi: where the routed WNS is expected
to land). The gate's verdict is the point estimate's; the band says how far to trust it. A band that
straddles zero ("marginal") means routing could land on either side of timing closure, so the line
names the two ways out: run the sign-off flow, or change the design until the whole band is past
zero (the slack it needs is the band's low end). The summary, the report page and JUnit all print
this one line, so a reader sees the same advice wherever the verdict is shown.

A WNS the high-fanout fill set (`high_fanout_fill`, kabe.timing.report.fill_fields) is 0 by the model's
cap: the term lengthens the worst path's nets of many sinks up to its budget and no further, so gaining
slack elsewhere on that path does not move it. fill_note says so with the WNS without the fill, and the
marginal line then names the way out that does move it (fewer sinks on those nets).
"""

from __future__ import annotations

def _number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def band_of(timing: dict | None) -> tuple[float, float] | None:
    """(lo, hi) of the record's WNS band, or None (sign-off timing has none; an old record may lack it)."""
    band = (timing or {}).get("band") if isinstance(timing, dict) else None
    lo_hi = band.get("wns_ns") if isinstance(band, dict) else None
    if isinstance(lo_hi, (list, tuple)) and len(lo_hi) == 2 and all(_number(x) for x in lo_hi):
        return float(lo_hi[0]), float(lo_hi[1])
    return None


def _coverage(band: dict) -> str:
    q = band.get("quantiles")
    if isinstance(q, (list, tuple)) and len(q) == 2 and all(_number(x) for x in q):
        return f"{round((q[1] - q[0]) * 100)} % band"
    return "band"


def filled(timing: dict | None) -> float | None:
    """The WNS without the fill when the fill set the record's WNS, else None."""
    if not isinstance(timing, dict) or timing.get("high_fanout_fill") is not True:
        return None
    u = timing.get("wns_uncapped_ns")
    return float(u) if _number(u) else None


def fill_note(timing: dict | None) -> str | None:
    """One line when the high-fanout fill set the WNS, else None, e.g.

    WNS +0.000 ns is the high-fanout fill's cap, not the path's: its nets of many sinks are taken as long
    as its budget allows and no longer; without the fill the WNS is +5.912 ns (what regressions compare)
    """
    u = filled(timing)
    if u is None:
        return None
    return (f"WNS {timing.get('wns_ns', 0.0):+.3f} ns is the high-fanout fill's cap, not the path's: its nets of "
            f"many sinks are taken as long as its budget allows and no longer; without the fill the WNS is "
            f"{u:+.3f} ns (what regressions compare)")


def marginal_advice(timing: dict | None, design: str | None = None) -> str | None:
    """One line when the estimate's band straddles zero, else None, e.g.

    marginal PASS: the estimate +0.768 ns passes, but its 80 % band (-2.318 .. +1.691 ns) crosses 0 ns,
    so the routed design may fail timing; next: run Vivado (kabe build <design> --flow vivado) for
    sign-off, or gain 2.318 ns of slack to leave the band
    """
    if not isinstance(timing, dict):
        return None
    band = timing.get("band")
    if not isinstance(band, dict) or not band.get("marginal"):
        return None
    wns, lo_hi = timing.get("wns_ns"), band_of(timing)
    if lo_hi is None or not _number(wns):  # marginal said without numbers: the record's own note, as it is
        return str(band.get("note") or "marginal: run Vivado")
    lo, hi = lo_hi
    passed = wns >= 0
    verdict, may = ("PASS", "fail") if passed else ("FAIL", "pass")
    head = (f"marginal {verdict}: the estimate {wns:+.3f} ns {'passes' if passed else 'fails'}, but its "
            f"{_coverage(band)} ({lo:+.3f} .. {hi:+.3f} ns) crosses 0 ns, so the routed design may {may} timing; "
            f"next: run Vivado (kabe build {design or '<design>'} --flow vivado) for sign-off, ")
    if filled(timing) is not None:  # more slack elsewhere on the path is filled too: only fewer sinks move it
        return head + ("or give the worst path's nets of many sinks fewer sinks (replicate or register their "
                       "driver): the high-fanout fill holds its slack at 0 whatever else changes")
    return head + f"or gain {-lo:.3f} ns of slack to leave the band"
