"""The latest table's timing cell is short, its explanation one click away (issue 44 item 3): a marginal
band's advice and the high-fanout fill's note in <details>, once per row, not ten lines each; a WNS the fill
set shows the WNS without the fill beside it and a "fill" marker."""

from __future__ import annotations

import re

from kabe.records import band_advice
from kabe.page import report

from records_fixtures import make_cores, record, two_commit_repo, write_archive

BAND = {"quantiles": [0.1, 0.9], "wns_ns": [-2.3, 1.7], "marginal": True, "note": "marginal: run Vivado"}


def _page(tmp_path, **timing):
    repo, shas = two_commit_repo(tmp_path)
    rec = record(shas[1], wns=timing.pop("wns", 0.768))
    rec["timing"].update(timing)
    reports = tmp_path / "reports"
    write_archive(reports, rec)
    page = report.build_report(reports, repo, make_cores(tmp_path), sections=()).read_text()
    row = re.search(r'<tr data-design="stage4" data-flow="open">(.*?)</tr>', page, re.S).group(1)
    return rec, row


def _visible(row: str) -> str:
    """The row's text as shown before any click: <details> bodies hidden, tags dropped."""
    shut = re.sub(r"<details[^>]*><summary>(.*?)</summary>.*?</details>", r"[\1]", row, flags=re.S)
    return re.sub(r"<[^>]+>", " ", shut)


def test_a_marginal_estimate_shows_a_word_and_its_advice_one_click_away(tmp_path):
    rec, row = _page(tmp_path, band=BAND)
    advice = band_advice.marginal_advice(rec["timing"], "stage4")
    assert re.search(r"<details class=\"marginal\"><summary>marginal PASS</summary>.*</details>", row)
    assert row.count(advice.split(",")[0]) == 1  # the sentence, once, behind the click
    shown = _visible(row)
    assert "[marginal PASS]" in shown and "run Vivado" not in shown and len(shown) < 400


def test_a_wns_the_fill_set_shows_the_uncapped_wns_and_the_fill_note(tmp_path):
    rec, row = _page(tmp_path, wns=0.0, wns_uncapped_ns=5.912, high_fanout_fill=True)
    cells = re.findall(r"<td>(.*?)</td>", row, re.S)
    wns = next(c for c in cells if c.startswith("+0.000"))
    assert "(uncapped +5.912)" in wns and '<span class="fill">fill</span>' in wns
    note = band_advice.fill_note(rec["timing"])
    assert note and report.html.escape(note) in row and "fill set the WNS" in _visible(row)
    assert note.split(":")[0] not in _visible(row)  # the sentence itself is behind the click


def test_no_fill_no_marker(tmp_path):
    _, row = _page(tmp_path, wns=0.0, wns_uncapped_ns=5.912, high_fanout_fill=False)
    assert "uncapped" not in row and 'class="fill"' not in row and "<details" not in row
