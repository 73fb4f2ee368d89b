"""An estimate whose uncertainty band straddles zero is labelled marginal wherever its verdict is
shown (the summary, the report page, the JUnit output of `kabe gate` and `kabe ci`), in one line that
says what the band means and the next step: run Vivado, or the slack needed to leave the band. The
verdict itself stays the point estimate's."""

from __future__ import annotations

import io
import json
import subprocess

from rich.console import Console

import xml.etree.ElementTree as ET
from records_fixtures import make_cores, record, write_archive

from kabe import cli
from kabe.rules import gate
from kabe.build import summary
from kabe.records import band_advice, junit
from kabe.page import report

BAND = {"quantiles": [0.1, 0.9], "wns_ns": [-2.318, 1.691], "marginal": True, "note": "marginal: run Vivado"}
SURE = {"quantiles": [0.1, 0.9], "wns_ns": [0.2, 1.1], "marginal": False}


ADVICE = ("marginal PASS: the estimate +0.768 ns passes, but its 80 % band (-2.318 .. +1.691 ns) crosses 0 ns, "
          "so the routed design may fail timing; next: run Vivado (kabe build stage4 --flow vivado) for sign-off, "
          "or gain 2.318 ns of slack to leave the band")


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
    assert ADVICE.replace("stage4", "<design>") in _suite_out(path)
    sure = gate.evaluate(_timing(SURE), None)
    path = junit.write(tmp_path / "k.xml", [junit.gate_suite(sure, "stage4", timing=_timing(SURE))])
    assert "marginal" not in _suite_out(path)


def test_kabe_gate_junit_on_a_metrics_record(tmp_path, capsys):
    rec = record("ab" * 20, lut=3000, wns=0.768)
    rec["timing"]["band"] = BAND
    f = tmp_path / "metrics.json"
    f.write_text(json.dumps(rec))
    assert cli.main(["gate", str(f), "--junit", str(tmp_path / "g.xml")]) == 0
    assert ADVICE in capsys.readouterr().err  # the verdict printed (kabe gate writes its lines to stderr) says it too
    assert "marginal PASS: the estimate +0.768 ns passes" in _suite_out(tmp_path / "g.xml")
    assert "gain 2.318 ns of slack to leave the band" in _suite_out(tmp_path / "g.xml")


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
    assert f'<span class="marginal">{ADVICE}</span>' in page


def test_the_advice_names_the_band_the_verdict_and_both_ways_out():
    assert band_advice.marginal_advice(_timing(BAND), "stage4") == ADVICE
    fail = {**_timing({**BAND, "wns_ns": [-0.8, 0.1]}), "wns_ns": -0.45}  # a marginal FAIL may pass once routed
    assert band_advice.marginal_advice(fail, "stage3") == (
        "marginal FAIL: the estimate -0.450 ns fails, but its 80 % band (-0.800 .. +0.100 ns) crosses 0 ns, so the "
        "routed design may pass timing; next: run Vivado (kabe build stage3 --flow vivado) for sign-off, or gain "
        "0.800 ns of slack to leave the band")
    assert band_advice.marginal_advice(_timing(SURE)) is None  # a band wholly past zero needs no advice
    assert band_advice.marginal_advice({"wns_ns": 0.3, "estimated": False}) is None  # sign-off: no band
    no_numbers = _timing({"marginal": True, "note": "marginal: run Vivado"})
    assert band_advice.marginal_advice(no_numbers) == "marginal: run Vivado"  # an old record's note, as written


def test_the_summary_prints_the_advice_in_one_line():
    rec = record("ab" * 20, lut=3000, wns=0.768)
    rec["timing"]["band"] = BAND
    out = io.StringIO()
    summary.render(rec, Console(file=out, width=80, color_system=None))
    lines = [ln.strip() for ln in out.getvalue().splitlines()]
    assert ADVICE in lines  # one line, never wrapped at 80 columns
    rec["timing"]["band"] = SURE
    out = io.StringIO()
    summary.render(rec, Console(file=out, width=80, color_system=None))
    assert "marginal" not in out.getvalue()
