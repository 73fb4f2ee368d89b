"""A count written with a character that str.isdigit() takes but int() refuses ('²') or with
another script's digits is unreadable: ReportError naming it, never a traceback. Edits are made
in memory on kabe's own fixtures."""

from pathlib import Path

import pytest

from kabe import cli
from kabe.parsers import ReportError
from kabe.parsers import vivado_check_timing as ct
from kabe.parsers import vivado_timing_details as td
from kabe.parsers import vivado_timing_paths as tp
from kabe.parsers._vivado_common import integer, number

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "vivado"
MINMAX = FIX / "timing_paths_7z020_2023.2_min_max.rpt"
SUMMARY = FIX / "flow_timing_summary_met.rpt"  # check_timing with counts in the titles

ODD = ["²", "\u0663", "\uff13"]  # superscript two, Arabic-Indic three, full-width three


@pytest.mark.parametrize("d", ODD)
def test_check_timing_entry_needs_ascii_digits(d):
    assert ct._entry("1. checking no_clock (0)") == (1, "no_clock", 0)
    assert ct._entry(f"{d}. checking no_clock (0)") is None
    assert ct._entry(f"1. checking no_clock ({d})") is None


@pytest.mark.parametrize("old,new", [("2. checking constant_clock (0)", "2. checking constant_clock (²)"),
                                     ("2. checking constant_clock (0)", "². checking constant_clock (0)")])
@pytest.mark.parametrize("nth", [0, 1], ids=["toc", "title"])
def test_check_timing_odd_digit_fails_the_gate(old, new, nth, tmp_path, capsys):
    text = SUMMARY.read_text()
    at = [i for i in range(len(text)) if text.startswith(old, i)][nth]
    f = tmp_path / "timing_summary.rpt"
    f.write_text(text[:at] + new + text[at + len(old):])
    rc = cli.main(["gate", str(f)])
    out = "".join(capsys.readouterr())
    assert rc == 1 and "check_timing" in out and "internal error" not in out, out


@pytest.mark.parametrize("d", ODD)
def test_logic_levels_count_needs_ascii_digits(d):
    text = MINMAX.read_text()
    lines = {"count": ("Logic Levels:           8  (", f"Logic Levels:           {d}  ("),
             "cell": ("(CARRY4=4 LUT2=1", f"(CARRY4={d} LUT2=1")}
    for old, new in lines.values():
        assert old in text
        with pytest.raises(ReportError, match="Logic Levels"):
            tp.parse(text.replace(old, new, 1), "p.rpt")


@pytest.mark.parametrize("d", ODD + ["x", ""])
def test_max_delay_endpoints_needs_ascii_digits(d):
    head = ["From Clock:  clk", "", "Max Delay             18 Endpoints", "Min Delay             18 Endpoints"]
    (sec,) = td.sections(head, 100, "r.rpt")
    assert sec.promises == {"max": True, "min": True}
    with pytest.raises(ReportError, match=r"r.rpt line 102: 'Max Delay"):
        td.sections([head[0], head[1], f"Max Delay             {d} Endpoints", head[3]], 100, "r.rpt")


@pytest.mark.parametrize("d", ODD)
def test_shared_number_readers_refuse_other_digits(d):
    for read in (integer, number):
        with pytest.raises(ReportError, match="not a"):
            read(f"1{d}", what="x", source="s")
