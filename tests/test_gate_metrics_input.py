"""`kabe gate metrics.json` on a hand-edited record: a field of the wrong type, a negative count or an
empty error is an input error (exit 2, one line naming the file and the field),
never a traceback and never a pass. The records are made in memory from kabe's own fixture."""

import json
from pathlib import Path

import pytest

from kabe import cli
from kabe.parsers.vivado_timing_summary import parse_file

MET = Path(__file__).parent / "fixtures" / "vivado" / "timing_summary_7z020_2023.2_met.rpt"
SECOND = {"schema": "kabe.vivado_timing_verdict/1", "vivado": "2023.2", "wns_ns": 0.452, "whs_ns": 0.493,
          "setup_ns": 0.452, "hold_ns": 0.493, "recovery_ns": 4.017, "removal_ns": 0.873,
          "pulse_width_violated": False, "unsafe_clock_interactions": 0, "clocks": 1}


def _record() -> dict:
    """The metrics.json stage4's vivado build would archive for the met fixture (it passes)."""
    timing = parse_file(MET)
    timing["second_source"] = dict(SECOND)
    return {"schema": "kabe.metrics/1", "commit": "b" * 40, "dirty": False, "design": "stage4", "flow": "vivado",
            "part": "xc7z020clg400-1", "clock_period_ns": 7.0, "timing": timing,
            "utilization": {"lut": 1, "ff": 1, "dsp": 0, "bram36_equiv": 0},
            "gate": {"passed": True, "failures": [], "checks": []},
            "tools": {}, "inputs": {}, "started": "x", "finished": "y", "seconds": 1.0}


def _gate(text: str, tmp_path, capsys) -> tuple[int, list[str]]:
    f = tmp_path / "metrics.json"
    f.write_text(text)
    rc = cli.main(["gate", str(f)])
    out = capsys.readouterr()
    return rc, [ln for ln in (out.out + out.err).splitlines() if ln.strip()]


def test_the_record_passes_as_written(tmp_path, capsys):
    rc, lines = _gate(json.dumps(_record()), tmp_path, capsys)
    assert rc == 0, lines


def _set(rec: dict, where: str, value) -> None:
    *path, last = where.split("/")
    for p in path:
        rec = rec[int(p)] if isinstance(rec, list) else rec[p]
    rec[last] = value


BAD = [  # (field, value, what the message says)
    ("timing/no_clock", "5", "expected integer or null"),
    ("timing/no_clock", [5], "expected integer or null"),
    ("timing/worst_slack_by_check", "x", "expected object or null"),
    ("timing/worst_slack_by_check", [-1.0], "expected object or null"),
    ("timing/worst_slack_by_check/recovery", "-1", "expected number or null"),
    ("timing/hold_failing_endpoints", "3", "expected integer or null"),
    ("timing/second_source", "x", "expected object"),
    ("timing/second_source", [SECOND], "expected object"),
    ("timing/second_source/wns_ns", "0.452", "expected number or null"),
    ("timing/second_source/pulse_width_violated", "no", "expected boolean"),
    ("timing/check_timing", "none", "expected object or null"),
    ("timing/check_timing/no_clock", "0", "expected integer"),
    ("timing/clocks/0/wns_ns", "1.0", "expected number or null"),
    ("timing/other_path_groups/0/wns_ns", "1.0", "expected number or null"),
    ("timing/critical_path/logic_levels", -1, "fails minimum 0"),
    ("timing/error", "", "fails minLength 1"),
    ("timing/second_source/error", "", "fails minLength 1"),
]
NEGATIVE = ["failing_endpoints", "total_endpoints", "hold_failing_endpoints", "hold_total_endpoints",
            "pw_failing_endpoints", "pw_total_endpoints", "no_clock", "unconstrained_endpoints",
            "check_timing/no_clock", "clocks/0/hold_failing_endpoints"]
BAD += [(f"timing/{k}", -2, "fails minimum 0") for k in NEGATIVE]


@pytest.mark.parametrize("where,value,says", BAD, ids=[f"{w}={v!r}" for w, v, _ in BAD])
def test_a_wrong_field_is_an_input_error(where, value, says, tmp_path, capsys):
    rec = _record()
    _set(rec, where, value)
    rc, lines = _gate(json.dumps(rec), tmp_path, capsys)
    assert rc == 2 and len(lines) == 1, lines
    assert "metrics.json" in lines[0] and where in lines[0] and says in lines[0], lines[0]
    assert "internal error" not in lines[0]


def test_a_second_source_without_its_slacks_is_refused(tmp_path, capsys):
    rec = _record()
    rec["timing"]["second_source"] = {"wns_ns": 0.452, "whs_ns": 0.493}
    rc, lines = _gate(json.dumps(rec), tmp_path, capsys)
    assert rc == 2 and "timing/second_source" in lines[0] and "required" in lines[0], lines


@pytest.mark.parametrize("item", ["no_clock", "unconstrained_internal_endpoints"])
def test_a_check_timing_without_an_item_the_gate_reads_is_refused(item, tmp_path, capsys):
    rec = _record()
    del rec["timing"]["check_timing"][item]
    rc, lines = _gate(json.dumps(rec), tmp_path, capsys)
    assert rc == 2 and "timing/check_timing" in lines[0] and f"'{item}' is a required property" in lines[0], lines


def test_an_unreadable_second_source_fails(tmp_path, capsys):
    rec = _record()
    rec["timing"]["second_source"] = {"error": "timing_verdict.json: no 'wns_ns'"}
    rc, lines = _gate(json.dumps(rec), tmp_path, capsys)
    assert rc == 1 and "gate: FAIL" in lines[-1], lines
