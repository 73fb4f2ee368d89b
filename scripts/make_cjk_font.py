"""Write kabe/page/fonts/kabe-cjk-quotes.ttf: the glyphs of every CJK character in kabe's text
(the V80 what-if and the V80 board profile quote their Japanese source), cut from Droid Sans Fallback (Apache-2.0; Debian's
fonts-droid-fallback), so the report page draws those quotes on a machine with no CJK font at all.

Run it again when kabe gains a Japanese character (tests/page/test_report_fonts.py names the missing
ones); it prints the characters and the file size:

    apt-get install fonts-droid-fallback   # the source font, only needed to run this script
    python scripts/make_cjk_font.py
"""

from __future__ import annotations

import sys
from pathlib import Path

from fontTools import subset
from fontTools.ttLib import TTFont

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kabe.page.report import _CJK_RUN, CJK_FONT  # noqa: E402

SOURCE = Path("/usr/share/fonts/truetype/droid/DroidSansFallbackFull.ttf")


def cjk_characters() -> set[str]:
    """Every character the page marks as CJK in kabe's modules and board profiles (the page's Japanese
    text, the V80 post's quotes, comes from them): a superset of what any page shows."""
    files = sorted((ROOT / "kabe").rglob("*.py")) + sorted((ROOT / "kabe").rglob("*.yaml"))
    return {c for f in files for run in _CJK_RUN.findall(f.read_text(encoding="utf-8")) for c in run}


def main() -> int:
    if not SOURCE.is_file():
        print(f"{SOURCE} is missing: apt-get install fonts-droid-fallback", file=sys.stderr)
        return 2
    chars = cjk_characters()
    font = TTFont(SOURCE)
    missing = sorted(c for c in chars if ord(c) not in font.getBestCmap())
    if missing:
        print(f"Droid Sans Fallback lacks {''.join(missing)}", file=sys.stderr)
        return 1
    options = subset.Options()
    options.name_IDs = ["*"]  # keep the copyright and licence records
    options.notdef_outline = True
    sub = subset.Subsetter(options)
    sub.populate(unicodes=[ord(c) for c in sorted(chars)])
    sub.subset(font)
    for rec in font["name"].names:  # a modified font goes by a name of its own (Apache-2.0, section 4b)
        if rec.nameID in (1, 3, 4, 6):
            rec.string = {1: "kabe CJK quotes", 3: "kabe CJK quotes (subset of Droid Sans Fallback)",
                          4: "kabe CJK quotes", 6: "kabeCJKquotes"}[rec.nameID]
    CJK_FONT.parent.mkdir(parents=True, exist_ok=True)
    font.save(CJK_FONT)
    print(f"{len(chars)} characters: {''.join(sorted(chars))}")
    print(f"{CJK_FONT.relative_to(ROOT)}: {CJK_FONT.stat().st_size:,} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
