"""The page's simulation table says what each kind of run checked (issue 44 item 3): a cocotb run its
tests, passed and failed, never `rows 1 · beats/clk 0.000`; an HLS C-simulation its rows, no beats/clk."""

from __future__ import annotations

import json
import re

from kabe.page import report

from records_fixtures import make_cores, two_commit_repo


def _result(reports, sha, design, **fields):
    d = reports / sha / design / "sim"
    d.mkdir(parents=True)
    base = {"design": design, "rows": 1, "seed": 1, "mismatches": 0, "passed": True, "problems": [],
            "beats_per_cycle": 0.0}
    (d / "result.json").write_text(json.dumps({**base, **fields}))


def _row(page, design):
    m = re.search(rf'<tr data-sim="{design}">(.*?)</tr>', page, re.S)
    assert m, page
    return m.group(1)


def test_cocotb_shows_tests_and_csim_rows_without_beats_per_clock(tmp_path):
    repo, shas = two_commit_repo(tmp_path)
    reports = tmp_path / "reports"
    _result(reports, shas[1], "tb_cocotb", simulator="cocotb", module="test_x", tests=3, failed=1, skipped=0,
            rows=3, passed=False, problems=["cocotb test t2 failed: boom"])
    _result(reports, shas[1], "hls_top", simulator="csim", rows=4096, beats_per_cycle=None, seed=7)
    _result(reports, shas[1], "rtl", simulator="verilator", rows=131_070, beats_per_cycle=0.998, seed=3)
    page = report.build_report(reports, repo, make_cores(tmp_path), sections=()).read_text()
    cocotb = _row(page, "tb_cocotb")
    assert "2 of 3 cocotb test(s) passed, 1 failed" in cocotb and "0.000" not in cocotb
    assert '<td class="fail">FAIL</td>' in cocotb and "t2 failed: boom" in cocotb
    csim = _row(page, "hls_top")
    assert "<td>4,096</td>" in csim and "C-simulation: untimed" in csim and "0.000" not in csim
    assert "<td>131,070</td><td>3</td><td>0</td><td>0.998</td>" in _row(page, "rtl")


def test_the_latest_simulation_is_a_clean_one_after_a_dirty_failure(tmp_path):
    repo, shas = two_commit_repo(tmp_path)
    reports = tmp_path / "reports"
    _result(reports, f"{shas[1]}-dirty", "rtl", simulator="verilator", passed=False, problems=["bad beat"])
    _result(reports, shas[1], "rtl", simulator="verilator", rows=10)
    row = _row(report.build_report(reports, repo, make_cores(tmp_path), sections=()).read_text(), "rtl")
    assert '<td class="pass">pass</td>' in row and "-dirty" not in row
