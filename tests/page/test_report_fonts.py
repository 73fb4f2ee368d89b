"""The report page carries a font for its Japanese quotes (kabe/page/fonts/kabe-cjk-quotes.ttf), so
they are HTML text that reads on a machine with no CJK font: every CJK character a page can show has a
glyph in it, and no placeholder stands in for the text. (Drawn in Chromium: tests/page/test_report.py.)"""

from __future__ import annotations

import re

from fontTools.ttLib import TTFont

from kabe.project import config
from kabe.page import report
from records_fixtures import make_cores, record, two_commit_repo, write_archive

# this project's study on the page, through the page-section hook (pyproject.toml's page_sections)
STUDY_SECTIONS = ("llm_accel.page:wall", "llm_accel.page:token_budget", "llm_accel.page:v80")


def test_every_cjk_character_of_the_page_has_a_glyph_in_its_font(tmp_path):
    repo, shas = two_commit_repo(tmp_path)
    write_archive(tmp_path / "reports", record(shas[1]))
    page = report.build_report(tmp_path / "reports", repo, make_cores(tmp_path), sections=STUDY_SECTIONS).read_text()
    shown = set("".join(report._CJK_RUN.findall(page)))  # every CJK character anywhere on the page
    quoted = "".join(re.findall(r'<span class="cjk" lang="ja">([^<]*)</span>', page))
    assert len(shown) > 20 and shown <= set(quoted)  # the V80 what-if's quotes, as text, each marked for the font
    cmap = TTFont(report.CJK_FONT).getBestCmap()
    missing = sorted(c for c in shown if ord(c) not in cmap)
    assert not missing, f"run scripts/make_cjk_font.py: the page's font lacks {''.join(missing)}"
    assert f'@font-face{{font-family:"{report.CJK_FONT_FAMILY}";src:url(data:font/ttf;base64,' in page
    assert "no CJK font" not in page and "[Japanese text" not in page  # no placeholder, not even in the script


def test_a_page_without_cjk_text_carries_no_font(tmp_path):
    repo, shas = two_commit_repo(tmp_path)
    write_archive(tmp_path / "reports", record(shas[1]))
    page = report.build_report(tmp_path / "reports", repo, make_cores(tmp_path), sections=()).read_text()
    assert 'class="cjk"' not in page and "@font-face" not in page
