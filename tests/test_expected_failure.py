"""A negative example (design.yaml `expect_gate: fail`, as cores/stage3_naive) whose gate fails is
"FAIL (expected)" wherever its verdict is shown: the build summary, the verdict line, the report page
(its table, its commits list, its plot) and JUnit (tests/ci/test_ci_run.py: pytest's xfail form, CI
exit 0). Its gate passing is the surprise, and says so."""

from __future__ import annotations

import io
import subprocess

from rich.console import Console

from kabe.rules import outcome
from kabe.build import summary
from kabe.page import report
from records_fixtures import record, write_archive

NAIVE_YAML = """\
core: kabe:design:naive:0.1.0
verify: {none: "a negative example: built for its timing only"}
ports: 2
row_bytes: 512
constraints: pynq_z1.xdc
expect_gate: fail
budgets: {lut: {lt: 12000}}
"""


def _summary(rec: dict, expected: str) -> str:
    out = io.StringIO()
    summary.render(rec, Console(file=out, width=120, color_system=None), expected)
    return out.getvalue()


def test_the_summary_and_the_verdict_line_say_fail_expected():
    failing = record("ab" * 20, wns=-0.449, passed=False, design="naive")
    failing["gate"]["failures"] = ["timing gate: WNS -0.449 ns"]
    text = _summary(failing, "fail")
    assert "FAIL (expected) (design.yaml: expect_gate: fail)" in text
    assert "FAIL (expected)" not in _summary(failing, "pass")  # a design expected to pass: a plain FAIL
    passing = record("ab" * 20, wns=0.3, design="naive")
    assert "PASS (expected FAIL: the gate no longer catches this design's problem)" in _summary(passing, "fail")
    line = outcome.from_record(failing, "fail").line
    assert line == (f"naive (open flow, {'ab' * 6}): gate FAIL (expected, design.yaml: expect_gate: fail): "
                    "timing gate: WNS -0.449 ns")


def test_the_page_marks_the_expected_failure_in_its_table_commits_and_plot(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t.invalid"]
    subprocess.run(git + ["init", "-q"], cwd=repo, check=True)
    (repo / "f").write_text("x")
    subprocess.run(git + ["add", "f"], cwd=repo, check=True)
    subprocess.run(git + ["commit", "-qm", "c"], cwd=repo, check=True)
    sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True).stdout.strip()
    cores = tmp_path / "cores"
    (cores / "naive").mkdir(parents=True)
    (cores / "naive" / "design.yaml").write_text(NAIVE_YAML)
    (cores / "naive" / "naive.core").write_text("CAPI=2:\nname: kabe:design:naive:0.1.0\ntargets:\n  default: {}\n")
    (cores / "naive" / "pynq_z1.xdc").write_text("create_clock -period 7.000 [get_ports clk]\n")
    reports = tmp_path / "reports"
    write_archive(reports, record(sha, wns=-0.449, design="naive"))
    page = report.build_report(reports, repo, cores).read_text()
    row = page[page.index('<tr data-design="naive" data-flow="open">'):]
    row = row[:row.index("</tr>")]
    assert '<td class="xfail">FAIL (expected)</td>' in row and "a negative example (design.yaml expect_gate: fail)" in row
    assert '<td class="fail">' not in row
    assert "naive (open: FAIL (expected))" in page  # the commits table
    # the plot: the cross has its own id, and its legend says it (matplotlib's SVG keeps each text as a comment)
    assert 'id="naive-expected-fail-wns_ns-open"' in page and "<!-- gate failed, as expected (expect_gate: fail) -->" in page
    # the same archive under a design expected to pass is a plain red FAIL
    (cores / "naive" / "design.yaml").write_text(NAIVE_YAML.replace("expect_gate: fail", "expect_gate: pass"))
    page = report.build_report(reports, repo, cores).read_text()
    assert "FAIL (expected)" not in page and '<td class="fail">FAIL</td>' in page
    assert 'id="naive-fail-wns_ns-open"' in page


def test_kabe_diff_names_an_expected_failure_as_expected():
    from types import SimpleNamespace

    from kabe.records import diff

    failing = SimpleNamespace(passed=False, verdict=SimpleNamespace(status="fail", passed=False, unverified=None))
    assert diff._pass_word(failing, "fail") == "FAIL (expected)"
    assert diff._pass_word(failing, "pass") == "FAIL"
    # a negative example whose gate passes: the gate no longer catches its problem, a FAIL as on the page
    passing = SimpleNamespace(passed=True, verdict=SimpleNamespace(status="pass", passed=True, unverified=None))
    assert diff._pass_word(passing, "fail") == "FAIL"
    assert diff._pass_word(passing, "pass") == "pass"
