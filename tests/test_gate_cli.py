"""`kabe gate` three ways, one rules module: on a timing report, on the metrics.json a build would
archive for it, and as JUnit XML (read back with junitparser, as a CI system renders it). The
verdicts, the checks and the reasons agree."""

import json
from pathlib import Path

import pytest
from junitparser import Failure, JUnitXml

from kabe import cli
from kabe.rules import gate
from kabe.parsers.vivado_timing_summary import parse_file

FIX = Path(__file__).parent / "fixtures" / "vivado"
REPORTS = ["timing_summary_7z020_2023.2_met.rpt", "timing_summary_7z020_2019.1_hold_violated.rpt",
           "timing_summary_7z020_2020.1_pulse_width_violated.rpt", "timing_summary_7z020_2022.2_no_clocks.rpt",
           "timing_summary_xczu7ev_2022.2_recovery_wns.rpt", "timing_summary_xczu7ev_2022.2_recovery_violated.rpt"]


def metrics_for(timing: dict, path: Path) -> Path:
    """The metrics.json a build would archive for this timing record, as stage4's vivado build (its
    whole-design LUT budget holds for 1 LUT; no waivers), so only the timing rules speak."""
    verdict = gate.evaluate(timing, None)
    record = {
        "schema": "kabe.metrics/1", "commit": "b" * 40, "dirty": False, "design": "stage4",
        "flow": "vivado", "part": "xc7z020clg400-1", "clock_period_ns": 7.0, "timing": timing,
        "utilization": {"lut": 1, "ff": 1, "dsp": 0, "bram36_equiv": 0}, "gate": verdict.as_dict(),
        "tools": {}, "inputs": {}, "started": "x", "finished": "y", "seconds": 1.0,
    }
    path.write_text(json.dumps(record))
    return path


@pytest.mark.parametrize("name", REPORTS)
def test_report_metrics_and_junit_agree(name, tmp_path, capsys):
    report = FIX / name
    expected = gate.evaluate(parse_file(report), None)
    rc_report = cli.main(["gate", str(report), "--junit", str(tmp_path / "r.xml")])
    err_report = capsys.readouterr().err
    rc_metrics = cli.main(["gate", str(metrics_for(parse_file(report), tmp_path / "metrics.json")),
                           "--junit", str(tmp_path / "m.xml")])
    capsys.readouterr()
    assert rc_report == rc_metrics == (0 if expected.passed else 1)
    assert ("gate: PASS" if expected.passed else "gate: FAIL") in err_report

    # the metrics.json is stage4's: its budgets are checked too (and hold), after the same timing checks
    from kabe.project import designs

    with_budgets = gate.evaluate(parse_file(report), {"lut": 1, "ff": 1, "dsp": 0, "bram36_equiv": 0},
                                 gate.budgets_from_mapping(designs.get("stage4").budgets_for("vivado")))
    assert with_budgets.passed is expected.passed
    assert [c["name"] for c in with_budgets.checks][:len(expected.checks)] == [c["name"] for c in expected.checks]
    for xml, verdict in (("r.xml", expected), ("m.xml", with_budgets)):
        suites = JUnitXml.fromfile(str(tmp_path / xml))
        cases = [c for s in suites for c in s]
        assert [c.name for c in cases] == [c["name"] for c in verdict.checks]
        failed = {c.name: [r for r in c.result if isinstance(r, Failure)] for c in cases}
        for check in verdict.checks:
            results = failed[check["name"]]
            assert bool(results) is (not check["passed"])
            if results:  # a failure carries the sentence, what was expected and what was got
                assert results[0].message == check["message"]
                assert f"expected: {check['expected']}" in results[0].text
                assert f"got: {check['got']}" in results[0].text


def test_an_unreadable_report_fails_in_junit_too(tmp_path):
    cut = tmp_path / "cut.rpt"
    cut.write_text((FIX / "timing_summary_7z020_2023.2_met.rpt").read_text()[:9000])
    assert cli.main(["gate", str(cut), "--junit", str(tmp_path / "j.xml")]) == 1
    (case,) = [c for s in JUnitXml.fromfile(str(tmp_path / "j.xml")) for c in s]
    assert case.name == "timing.report" and "cut short" in case.result[0].message


def test_a_nul_byte_fails_the_gate_as_it_fails_parse(tmp_path, capsys):
    data = (FIX / "timing_summary_7z020_2023.2_met.rpt").read_bytes()
    f = tmp_path / "nul.rpt"
    f.write_bytes(data[:4000] + b"\x00" + data[4000:])
    assert cli.main(["parse", str(f)]) == 2
    assert "NUL" in capsys.readouterr().err
    assert cli.main(["gate", str(f)]) == 1
    assert "NUL" in capsys.readouterr().err


def test_parse_bad_input_is_one_line_and_exit_2(tmp_path, capsys):
    assert cli.main(["parse", str(tmp_path / "absent.rpt")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "absent.rpt" in err and "does not exist" in err


@pytest.mark.parametrize("name, keys, said", [
    ("manifest.json", {"commit": "x", "raw_files": {}, "artifacts": {}, "inputs": {}}, "an archive's manifest.json"),
    ("cache_key.json", {"format": 1, "files": {}, "targets": [], "tools": {}}, "an archive's cache_key.json"),
    ("result.json", {"beats": 1, "beats_per_cycle": 1.0, "first_mismatches": []}, "a simulation result.json"),
    ("other.json", {"a": 1}, 'not a metrics record (it has no "schema": "kabe.metrics/1")'),
])
def test_gate_on_a_json_that_is_not_metrics_says_what_it_is(tmp_path, capsys, name, keys, said):
    path = tmp_path / name
    path.write_text(json.dumps(keys))
    assert cli.main(["gate", str(path)]) == 2
    err = capsys.readouterr().err
    assert said in err and "metrics.json" in err and len(err.strip().splitlines()) == 1, err
