"""Issue 11's acceptance on real reports kabe was not written against: ../shared/fixtures/
vivado-reports-more (values read by eye from each file into expected.json; SOURCES.md names each
file's origin), plus the routed-paths corpus (27 more timing summaries).

  * every file parses, with the values equal to expected.json;
  * every timing summary that meets timing (met verdict, no unclocked registers) passes the gate;
  * every other one fails, naming each reason it has (setup, hold, pulse width, no constraints,
    unclocked registers), and never for a verdict that "disagrees" with its own numbers.
"""

import json

import pytest
from shared_reports import SHARED, names, or_skip, shared_dir

from kabe.rules.gate import evaluate
from kabe.parsers.detect import parse_file

MORE = "vivado-reports-more"


def _expected() -> dict:
    f = SHARED / "fixtures" / MORE / "expected.json"
    return json.loads(f.read_text()) if f.is_file() else {}


EXPECTED = _expected()


def _version(tool: str | None) -> str | None:
    words = (tool or "").replace("v.", " ").split()
    return next((w for w in words if w[:4].isdigit() and "." in w), None)


def test_the_corpus_is_there():
    d = shared_dir(MORE)
    assert EXPECTED and all((d / n).is_file() for n in EXPECTED)


@pytest.mark.parametrize("name", or_skip(sorted(EXPECTED), MORE))
def test_parses_with_the_values_read_by_eye(name):
    exp = EXPECTED[name]
    got = parse_file(shared_dir(MORE) / name)
    rec = got["record"]
    if exp["kind"] == "timing_summary":
        assert got["kind"] == "vivado_timing_summary"
        keys = {"wns": "wns_ns", "tns": "tns_ns", "whs": "whs_ns", "ths": "ths_ns", "wpws": "wpws_ns",
                "tpws": "tpws_ns", "tns_failing_endpoints": "failing_endpoints",
                "ths_failing_endpoints": "hold_failing_endpoints", "device": "device"}
        assert {k: rec[v] for k, v in keys.items()} == {k: exp[k] for k in keys}
        assert {True: "met", False: "not_met", None: "unconstrained"}[exp["met_line"]] == rec["verdict"]
        assert _version(rec["tool_version"]) == exp["version"]
    elif exp["kind"] == "utilization":
        assert got["kind"] == "vivado_utilization"
        assert (rec["lut"], rec["ff"], rec["dsp"], rec["bram36_equiv"], rec["uram"], rec["device"]) == (
            exp["lut"], exp["registers"], exp["dsp"], exp["bram_tiles"], exp["uram"], exp["device"])
        assert _version(rec["tool_version"]) == exp["version"]
    else:
        assert got["kind"] == "vivado_clock_interaction"
        assert len(rec) == exp["rows"] and any(p["unsafe"] for p in rec) is exp["unsafe"]


def _reasons(rec: dict) -> list[str]:
    """What a report's own numbers say is wrong with it, in the gate's words."""
    out = []
    if rec["wns_ns"] is not None and rec["wns_ns"] < 0:
        out.append("setup slack WNS")
    if rec["whs_ns"] is not None and rec["whs_ns"] < 0:
        out.append("hold violation")
    if rec["wpws_ns"] is not None and rec["wpws_ns"] < 0:
        out.append("pulse width violation")
    if rec["verdict"] == "unconstrained":
        out.append("no user specified timing constraints")
    if (rec["no_clock"] or 0) > 0:
        out.append(f"{rec['no_clock']} register/latch pins have no clock")
    return out


def _judge(path):
    rec = parse_file(path)["record"]
    v = evaluate(rec, None)
    reasons = _reasons(rec)
    assert v.passed is (rec["verdict"] == "met" and not reasons), (path.name, v.failures)
    for r in reasons:
        assert any(r in f for f in v.failures), (path.name, r, v.failures)
    assert not any("disagree" in f for f in v.failures), (path.name, v.failures)
    return v


@pytest.mark.parametrize("name", or_skip(sorted(n for n, e in EXPECTED.items() if e["kind"] == "timing_summary"), MORE))
def test_the_gate_passes_what_meets_timing_and_fails_the_rest_with_the_right_reason(name):
    exp = EXPECTED[name]
    v = _judge(shared_dir(MORE) / name)
    if exp["met_line"] and not any("no clock" in f for f in v.failures):
        assert v.passed


@pytest.mark.parametrize("name", or_skip(names("vivado-routed-paths", "*.rpt") + [
    f"estimated/{n}" for n in names("vivado-routed-paths/estimated", "*.rpt")], "vivado-routed-paths"))
def test_the_routed_paths_corpus_is_judged_by_its_own_numbers(name):
    _judge(shared_dir("vivado-routed-paths") / name)
