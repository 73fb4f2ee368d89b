"""doit command-line variables are checked before any task runs: a word kabe does not know is one
line and exit 2, never read as a default (cache=false used to mean "use the cache": red team 3b)."""

import subprocess
import sys

import pytest

from kabe.base.paths import ROOT


def _doit(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "doit", *args], cwd=ROOT, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("value", ["maybe", "disabled", ""])
def test_an_unknown_cache_word_is_refused(value):
    r = _doit("build:stage2", f"cache={value}")
    assert r.returncode == 2, r.stdout + r.stderr
    assert f"cache={value!r} is neither on nor off; write cache=off to run every tool" in r.stdout + r.stderr


def test_rows_must_be_a_number():
    r = _doit("sim:stage2", "rows=abc")
    assert r.returncode == 2 and "rows='abc' is not a whole number" in r.stdout + r.stderr


def test_a_misspelt_variable_is_refused_naming_the_known_ones():
    """issue 44: `flwo=open` was ignored (exit 0, the default flow). Now one line, exit 2."""
    r = _doit("build:stage2", "flwo=open")
    assert r.returncode == 2, r.stdout + r.stderr
    lines = (r.stdout + r.stderr).strip().splitlines()
    assert lines == ["kabe: unknown doit variable 'flwo'='open'; kabe's are board, cache, ctx, flow, rows, scheduler, "
                     "seed, workers, and for a sweep its settings (clock_period_ns, synth_options, param.<name>, "
                     "generator.<name>, vivado.<name>)"], lines


def test_known_variables_and_sweep_settings_are_not_refused():
    r = _doit("list", "flow=open", "clock_period_ns=7,8", "param.WIDTH=8", "rows=10")
    assert r.returncode == 0, r.stdout + r.stderr
