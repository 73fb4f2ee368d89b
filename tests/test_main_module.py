"""`python -m kabe` runs the `kabe` console script's entry point, with its exit codes."""

import subprocess
import sys
from pathlib import Path

FIX = Path(__file__).parent / "fixtures" / "vivado"


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kabe", *args], capture_output=True, text=True, timeout=120)


def test_python_m_kabe_gates_like_the_console_script():
    met = _run("gate", str(FIX / "timing_summary_7z020_2023.2_met.rpt"))
    assert met.returncode == 0 and "gate: PASS" in met.stderr, met.stderr
    failed = _run("gate", str(FIX / "timing_summary_7z020_2019.1_hold_violated.rpt"))
    assert failed.returncode == 1 and "gate: FAIL" in failed.stderr, failed.stderr


def test_python_m_kabe_help_names_kabe():
    r = _run("--help")
    assert r.returncode == 0 and r.stdout.startswith("usage: kabe"), r.stdout[:200]
