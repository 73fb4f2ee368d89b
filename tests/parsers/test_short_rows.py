"""A table row with fewer cells than the table's name columns is refused with its line, never an
IndexError (issue 22: atheris found three such sites in group_rows; one real input is the lakeroad
report with two separator lines pasted under the Inter Clock Table's titles)."""

from pathlib import Path

import pytest
from shared_reports import shared_file

from kabe import cli
from kabe.parsers import ReportError
from kabe.parsers.vivado_timing_summary import parse

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "vivado"
LAKEROAD = "lakeroad_xczu3eg_timing_summary_2021.2_violated.rpt"
SEPARATOR = "-" * 96  # the rule Vivado draws around a section's title


def _insert(text: str, at: int, new: list[str]) -> str:
    lines = text.split("\n")
    lines[at:at] = new
    return "\n".join(lines)


def _after_title_row(text: str, title: str, new: list[str]) -> str:
    """`new` lines right under the column titles of the table in section `title`."""
    lines = text.split("\n")
    t = lines.index(f"| {title}")
    row = next(i for i in range(t + 3, t + 12) if lines[i].strip())
    return _insert(text, row + 1, new)


def test_lakeroad_with_two_separators_is_one_line_naming_the_row(tmp_path, capsys):
    text = shared_file("vivado-reports", LAKEROAD).read_text()
    mutant = _after_title_row(text, "Inter Clock Table", [SEPARATOR, SEPARATOR])
    f = tmp_path / LAKEROAD
    f.write_text(mutant)

    assert cli.main(["parse", str(f)]) == 2
    out = capsys.readouterr()
    assert out.out == "" and len(out.err.strip().splitlines()) == 1, out.err
    assert f"{f}: Inter Clock Table line 173: row '{SEPARATOR}' has 1 cell(s), fewer than the table's 2 name " \
           f"columns" in out.err
    assert "internal error" not in out.err and "Traceback" not in out.err

    assert cli.main(["gate", str(f)]) == 1  # a report that cannot be read fails the gate, in one line
    out = capsys.readouterr()
    text_out = out.out + out.err
    assert "internal error" not in text_out and "Traceback" not in text_out
    fail = [ln for ln in text_out.splitlines() if ln.startswith("✗")]
    assert len(fail) == 1 and "Inter Clock Table line 173" in fail[0], text_out


@pytest.mark.parametrize("at", range(160, 182))
def test_separators_anywhere_around_the_clock_tables_never_crash(at):
    text = shared_file("vivado-reports", LAKEROAD).read_text()
    for new in ([SEPARATOR, SEPARATOR], ["-----"], ["----------    ----------"]):
        try:
            parse(_insert(text, at, new), "m")
        except ReportError:
            pass


@pytest.mark.parametrize("title,names", [("Inter Clock Table", 2), ("Other Path Groups Table", 3),
                                         ("Unconstrained Path Table", 3), ("User Ignored Path Table", 3)])
def test_each_group_table_refuses_a_header_narrower_than_its_names(title, names):
    text = (FIX / "flow_timing_summary_met.rpt").read_text()
    mutant = _after_title_row(text, title, ["----------"])
    with pytest.raises(ReportError, match=rf"{title} line \d+: row .* has 1 cell\(s\), fewer than the table's "
                                          rf"{names} name columns"):
        parse(mutant, "m")
