"""`kabe parse` and `kabe gate` as a CI user runs them: exit status and the reason."""

import json
from pathlib import Path

import pytest

from kabe import cli

FIX = Path(__file__).parent / "fixtures" / "vivado"


def test_parse_prints_the_record(capsys):
    assert cli.main(["parse", str(FIX / "timing_summary_7z020_2019.1_hold_violated.rpt")]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["kind"] == "vivado_timing_summary" and out["record"]["whs_ns"] < 0


def test_gate_exit_status_follows_the_report(capsys):
    assert cli.main(["gate", str(FIX / "timing_summary_7z020_2023.2_met.rpt")]) == 0
    assert cli.main(["gate", str(FIX / "timing_summary_7z020_2019.1_hold_violated.rpt")]) == 1
    assert "hold violation" in capsys.readouterr().err


def test_gate_refuses_a_report_that_is_not_timing(capsys):
    # another kind of report is bad input (exit 2), not a gate verdict
    assert cli.main(["gate", str(FIX / "utilization_7z020_2023.2_placed_prohibited.rpt")]) == 2
    assert "needs a timing summary" in capsys.readouterr().err


def test_gate_on_metrics_keeps_failures_recorded_at_build_time(tmp_path, capsys):
    """A build that failed verification has clean timing; re-gating its metrics.json must still fail."""
    record = {
        "schema": "kabe.metrics/1", "commit": "a" * 40, "dirty": False, "design": "stage4",
        "flow": "open", "part": "xc7z020clg400-1", "clock_period_ns": 7.0,
        "timing": {"estimated": True, "wns_ns": 1.0, "tns_ns": 0.0, "whs_ns": None, "critical_path": None,
                   "clocks": [{"name": "clk", "period_ns": 7.0}]},
        "utilization": {"lut": 1, "ff": 1, "dsp": 0, "bram36_equiv": 0},
        "gate": {"passed": False, "failures": ["verification: 3 of 64 rows differ from the numpy model"],
                 "checks": [{"name": "sim.verification", "expected": "0 mismatches, no problems", "got": "3 mismatches, 0 problems", "passed": False}]},
        "tools": {}, "inputs": {}, "started": "x", "finished": "y", "seconds": 1.0,
    }
    path = tmp_path / "metrics.json"
    path.write_text(json.dumps(record))
    assert cli.main(["gate", str(path)]) == 1
    assert "recorded at build time: verification: 3 of 64 rows differ" in capsys.readouterr().err


def test_gate_exit_codes_tell_could_not_run_from_failed(tmp_path, capsys):
    """2: nothing kabe can judge (a missing file, not a report); 1: a timing report that cannot be
    trusted (truncated) fails the gate, as it does in a build."""
    assert cli.main(["gate", str(tmp_path / "nope.rpt")]) == 2
    assert "nope.rpt: report file does not exist" in capsys.readouterr().err
    (tmp_path / "notes.txt").write_text("hello\n")
    assert cli.main(["gate", str(tmp_path / "notes.txt")]) == 2
    assert "notes.txt: cannot tell what report" in capsys.readouterr().err
    assert cli.main(["gate", str(FIX / "flow_timing_summary_truncated.rpt")]) == 1
    err = capsys.readouterr().err
    assert "gate: FAIL" in err and "truncated" in err


def test_sweep_axes_may_follow_the_options(monkeypatch):
    """`kabe sweep stage4 --workers 2 clock_period_ns=6,7` takes the axis, as it does before the options;
    a stray word is still refused with argparse's exit 2."""
    from kabe.sweep import run

    calls = []
    monkeypatch.setattr(run, "main", lambda *a: calls.append(a) or 0)
    assert cli.main(["sweep", "stage4", "--workers", "2", "clock_period_ns=6,7", "stages=2,3"]) == 0
    assert cli.main(["sweep", "stage4", "clock_period_ns=6,7", "--workers", "2"]) == 0
    assert [c[2] for c in calls] == [["clock_period_ns=6,7", "stages=2,3"], ["clock_period_ns=6,7"]]
    assert all(c[4] == 2 for c in calls)
    with pytest.raises(SystemExit) as e:
        cli.main(["sweep", "stage4", "--workers", "2", "bogus"])
    assert e.value.code == 2


def test_a_reader_that_goes_away_ends_kabe_parse_quietly():
    """`kabe parse r | head`: the pipe's read end is closed before kabe writes (as head does once it has
    its lines), so the write fails with EPIPE. kabe exits as a SIGPIPE'd tool does, with nothing on stderr."""
    import os
    import subprocess
    import sys

    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = subprocess.run([sys.executable, "-m", "kabe.cli", "parse", str(FIX / "timing_summary_7z020_2023.2_met.rpt")],
                              stdout=write_end, stderr=subprocess.PIPE, text=True)
    finally:
        os.close(write_end)
    assert proc.returncode == 141, proc.stderr
    assert proc.stderr == ""
