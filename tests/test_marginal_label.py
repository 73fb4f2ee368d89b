"""An estimate whose uncertainty band straddles zero is labelled "marginal: run Vivado" wherever its
verdict is shown: the summary (tests/timing), the report page, and the JUnit output of `kabe gate`
and `kabe ci`. The verdict itself stays the point estimate's."""

from __future__ import annotations

import json
import subprocess

import xml.etree.ElementTree as ET
from records_fixtures import make_cores, record, write_archive

from kabe import cli, gate
from kabe.records import junit, report

BAND = {"quantiles": [0.1, 0.9], "wns_ns": [-2.318, 1.691], "marginal": True, "note": "marginal: run Vivado"}
SURE = {"quantiles": [0.1, 0.9], "wns_ns": [0.2, 1.1], "marginal": False}


def _suite_out(path) -> str:
    """The <system-out> of the file's one testsuite, as a CI system shows it beside the cases."""
    (suite,) = ET.parse(path).getroot().iter("testsuite")
    out = suite.find("system-out")
    return "" if out is None else out.text or ""


def _timing(band):
    return {"estimated": True, "wns_ns": 0.768, "tns_ns": 0.0, "whs_ns": None, "critical_path": None,
            "clocks": [{"name": "clk", "period_ns": 7.0}], "band": band}


def test_junit_of_a_marginal_estimate_says_so_and_still_passes(tmp_path):
    timing = _timing(BAND)
    verdict = gate.evaluate(timing, None)
    assert verdict.passed  # the point estimate decides
    path = junit.write(tmp_path / "j.xml", [junit.gate_suite(verdict, "stage4", timing=timing)])
    assert "marginal: run Vivado (WNS band -2.318 .. +1.691 ns)" in _suite_out(path)
    sure = gate.evaluate(_timing(SURE), None)
    path = junit.write(tmp_path / "k.xml", [junit.gate_suite(sure, "stage4", timing=_timing(SURE))])
    assert "marginal" not in _suite_out(path)


def test_kabe_gate_junit_on_a_metrics_record(tmp_path):
    rec = record("ab" * 20, lut=3000, wns=0.768)
    rec["timing"]["band"] = BAND
    f = tmp_path / "metrics.json"
    f.write_text(json.dumps(rec))
    assert cli.main(["gate", str(f), "--junit", str(tmp_path / "g.xml")]) == 0
    assert "marginal: run Vivado" in _suite_out(tmp_path / "g.xml")


def test_the_report_page_labels_the_marginal_estimate(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t.invalid"]
    subprocess.run(git + ["init", "-q"], cwd=repo, check=True)
    (repo / "f").write_text("x")
    subprocess.run(git + ["add", "f"], cwd=repo, check=True)
    subprocess.run(git + ["commit", "-qm", "c"], cwd=repo, check=True)
    sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True).stdout.strip()
    rec = record(sha, lut=3000, wns=0.768)
    rec["timing"]["band"] = BAND
    reports = tmp_path / "reports"
    write_archive(reports, rec)
    page = report.build_report(reports, repo, make_cores(tmp_path)).read_text()
    assert "pre-route estimate (band -2.318 .. +1.691 ns)" in page
    assert '<span class="marginal">marginal: run Vivado</span>' in page
