"""metrics.load remembers the records it validated, by content (issue 40: the up-to-date line of every
no-op loaded the schema library): the same bytes skip the schema check, any other bytes are checked,
and a record that fails is never remembered. And the timing report's parser loads no estimator (a
cache hit re-reads an archived report; numpy was half its time)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kabe.records import metrics

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def memo(tmp_path, monkeypatch):
    path = tmp_path / "validated.json"
    monkeypatch.setattr(metrics, "_memo_path", lambda: path)
    return path


def _a_record(tmp_path: Path) -> Path:
    from kabe.project import designs

    record = {"schema": metrics.SCHEMA_ID, "commit": "0" * 40, "dirty": False, "design": designs.get("stage2").name,
              "flow": "open", "part": "xc7z020clg400-1", "clock_period_ns": 7.0,
              "timing": {"estimated": True, "wns_ns": 1.0, "tns_ns": 0.0, "whs_ns": None, "critical_path": None,
                         "clocks": []},
              "utilization": {"lut": 1, "ff": 1, "dsp": 0, "bram36_equiv": 0},
              "gate": {"passed": True, "checks": [], "failures": []}, "tools": {}, "inputs": {},
              "started": "2026-01-01T00:00:00+00:00", "finished": "2026-01-01T00:00:01+00:00", "seconds": 1.0}
    metrics.validate(record)
    path = tmp_path / "metrics.json"
    path.write_text(json.dumps(record))
    return path


def test_the_same_bytes_are_validated_once_other_bytes_again(tmp_path, memo, monkeypatch):
    path = _a_record(tmp_path)
    calls = []
    real = metrics.validate
    monkeypatch.setattr(metrics, "validate", lambda r: (calls.append(1), real(r)))
    metrics.load(path)
    metrics.load(path)
    assert len(calls) == 1 and memo.is_file()
    record = json.loads(path.read_text())
    record["utilization"]["lut"] = -5  # the schema refuses a negative count
    path.write_text(json.dumps(record))
    with pytest.raises(metrics.MetricsError, match="utilization"):
        metrics.load(path)
    with pytest.raises(metrics.MetricsError, match="utilization"):  # a failure is never remembered
        metrics.load(path)
    assert len(calls) == 3


def test_the_timing_report_parser_loads_no_estimator():
    code = ("import sys, kabe.parsers.kabe_timing, kabe.flows.open, kabe.build.rederive; "
            "print('numpy' in sys.modules, 'kabe.timing.sta' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert out.stdout.split() == ["False", "False"], out.stderr[-2000:]
