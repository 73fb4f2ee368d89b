"""The study's scripts the README names run (small arguments): they import the project's package
(llm_accel), so a move of its modules shows here, not on a reader's machine."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def _run(*argv: str) -> str:
    p = subprocess.run([sys.executable, *argv], cwd=REPO, capture_output=True, text=True, timeout=300,
                       env={**os.environ, "PYTHONPATH": str(REPO)})
    assert p.returncode == 0, p.stderr[-2000:]
    return p.stdout


def test_bench_attention_projects_a_context_without_the_simulation():
    out = _run("scripts/bench_attention.py", "--contexts", "64", "--no-sim")
    row = next(ln.split() for ln in out.splitlines() if ln.split()[:1] == ["64"])
    assert row[2] == "1.000" and "bandwidth" in out  # beats/cycle taken as 1 without the simulation


@pytest.mark.parametrize("script", ["scripts/gen_exp_table.py"])
def test_the_models_own_generators_import(script):
    assert "usage" in _run(script, "--help").lower()
