"""report_utilization (flat and -hierarchical) on kabe's own fixtures: 7-series with and without
"Prohibited", a synthesized report with shifted section numbers, UltraScale+ (CLB/CARRY8/
BLOCKRAM/ARITHMETIC), column-set variants, failure cases and truncation at many offsets."""

import re
from pathlib import Path

import pytest

from kabe.parsers import ReportError
from kabe.parsers import vivado_utilization as vu

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "vivado"
PLACED = FIX / "utilization_7z020_2023.2_placed_prohibited.rpt"
SYNTH = FIX / "utilization_7z020_2018.3_synth_classic.rpt"
ZU = FIX / "utilization_xczu3eg_2022.2_placed.rpt"
HIER = FIX / "utilization_hier_7z020_2023.2_placed.rpt"
HIER_ZU = FIX / "utilization_hier_xczu3eg_2020.2_synth.rpt"
VERSAL = FIX / "utilization_xcvc1902_2023.1_routed_versal.rpt"

KEYS = ("lut", "lut_logic", "lut_memory", "srl", "ff", "carry4", "carry_type", "muxf7", "muxf8",
        "dsp", "ramb36", "ramb18", "bram36_equiv")


def pick(r):
    return tuple(r[k] for k in KEYS)


def test_7z020_placed_with_prohibited_column():
    r = vu.parse_file(PLACED)
    assert pick(r) == (21873, 20911, 962, 258, 30412, 1406, "CARRY4", 611, 97, 148, 30, 13, 36.5)
    assert (r["lutram"], r["latch"], r["device"], r["design_state"]) == (
        704, 2, "xc7z020clg400-1", "Fully Placed")
    assert r["primitives"]["DSP48E1"] == 148


def test_7z020_synth_without_prohibited_and_fractional_bram():
    r = vu.parse_file(SYNTH)
    # "Slice LUTs*" footnote mark, sections numbered 2. Memory / 3. DSP, no CARRY4 primitive
    assert pick(r) == (12904, 12776, 128, 32, 9340, 0, "CARRY4", 256, 128, 32, 0, 1, 0.5)
    assert isinstance(r["bram36_equiv"], float)
    assert r["design_state"] == "Synthesized"


def test_ultrascale_plus_clb_carry8_blockram_arithmetic():
    r = vu.parse_file(ZU)
    assert pick(r) == (33018, 31190, 1828, 288, 41230, 977, "CARRY8", 1204, 301, 352, 112, 17, 120.5)
    assert r["muxf9"] == 0


def test_versal_netlist_logic_registers_blockram_arithmetic():
    """Versal labels: "Netlist Logic" / "Registers" / "CLB LUTs*", "BLOCKRAM", "ARITHMETIC" / "DSP
    Slices", LOOKAHEAD8 carry chains, URAM."""
    r = vu.parse_file(VERSAL)
    assert pick(r) == (31774, 29360, 2414, 624, 48211, 611, "LOOKAHEAD8", None, None, 144, 38, 7, 41.5)
    assert (r["uram"], r["lutram"], r["device"]) == (16, 1790, "xcvc1902-vsva2197-2MP-e-S")
    assert r["primitives"]["DSP58"] == 128


def test_versal_missing_dsp_row_is_refused():
    text = VERSAL.read_text().replace("| DSP Slices     |", "| DSP Blocks?    |")
    with pytest.raises(ReportError, match="ARITHMETIC' has no 'DSPs / DSP Slices"):
        vu.parse(text, "v.rpt")


def _drop_column(text, title):
    """Remove one column (by header title) from every +---+ table that has it."""
    out, idx = [], None
    for ln in text.split("\n"):
        if ln.startswith("|") and ln.rstrip().endswith("|"):
            cells = ln.rstrip()[1:-1].split("|")
            titles = [c.strip() for c in cells]
            if title in titles:
                idx = titles.index(title)
            if idx is not None and idx < len(cells) and (title in titles or len(cells) > idx):
                del cells[idx]
            out.append("|" + "|".join(cells) + "|")
        elif ln.startswith("+") and idx is not None:
            parts = ln.rstrip()[1:-1].split("+")
            if idx < len(parts):
                del parts[idx]
            out.append("+" + "+".join(parts) + "+")
        else:
            if not ln.strip():
                idx = None
            out.append(ln)
    return "\n".join(out)


@pytest.mark.parametrize("drop", [["Prohibited"], ["Prohibited", "Fixed"],
                                  ["Prohibited", "Fixed", "Util%"], ["Available", "Util%"]])
def test_column_sets_read_the_same(drop):
    base = vu.parse_file(PLACED)
    text = PLACED.read_text()
    for t in drop:
        text = _drop_column(text, t)
    for t in drop:
        assert f"| {t} |" not in text and f" {t} |" not in text.split("Primitives")[0]
    r = vu.parse(text, "variant")
    assert pick(r) == pick(base)


def test_section_numbering_is_ignored():
    base = vu.parse_file(PLACED)
    text = re.sub(r"^(\d+)\. ", lambda m: f"{int(m.group(1)) + 20}. ", PLACED.read_text(), flags=re.M)
    text = re.sub(r"^(2\d)\. (\S.*)\n(-+)$", lambda m: f"{m.group(1)}. {m.group(2)}\n" +
                  "-" * len(f"{m.group(1)}. {m.group(2)}"), text, flags=re.M)
    assert pick(vu.parse(text, "renumbered")) == pick(base)


def test_hierarchical_7z020():
    h = vu.parse_hierarchical_file(HIER)
    assert h["top"] == "kabe_stage4_top"
    assert h["total"]["lut"] == 21873 and h["total"]["bram36_equiv"] == 36.5
    bi = h["by_instance"]
    assert list(bi) == ["u_ps7", "u_kabe", "u_kabe/u_port0", "u_kabe/u_port0/u_mac",
                        "u_kabe/u_port0/u_fifo", "u_kabe/u_port1", "u_kabe/u_port1/u_mac",
                        "u_kabe/u_port1/u_fifo", "u_kabe/u_ctl"]
    assert bi["u_kabe/u_port0"] == {"lut": 10210, "lut_logic": 9850, "lutram": 320, "srl": 40,
                                    "ff": 14430, "ramb36": 15, "ramb18": 6, "dsp": 74,
                                    "bram36_equiv": 18}
    assert bi["u_kabe/u_ctl"]["bram36_equiv"] == 0.5
    assert bi["u_kabe/u_port1/u_mac"]["dsp"] == 74


def test_hierarchical_ultrascale_dsp48_blocks_and_uram():
    h = vu.parse_hierarchical_file(HIER_ZU)
    assert h["total"]["dsp"] == 352 and h["total"]["uram"] == 0
    assert h["by_instance"]["u_sweep/u_buf"]["bram36_equiv"] == 120.5


def test_hierarchical_percentages_are_stripped():
    text = HIER.read_text().replace("|      10210 |", "| 10210(19.19%) |")
    text = text.replace("+------------+------------+---------+", "+---------------+------------+---------+")
    text = text.replace("| Total LUTs |", "|   Total LUTs  |")
    text = re.sub(r"\|\s+(\d+) \| (\s*\d+ \|\s+\d+ \|\s+\d+ \|\s+\d+ \|\s+\d+ \|\s+\d+ \|\s+\d+ \|\s+\d+ \|)$",
                  lambda m: "| " + m.group(1).rjust(13) + " | " + m.group(2), text, flags=re.M)
    h = vu.parse_hierarchical(text, "pct")
    assert h["by_instance"]["u_kabe/u_port0"]["lut"] == 10210


def test_flat_and_hierarchical_are_not_confused():
    with pytest.raises(ReportError, match="hierarchical"):
        vu.parse_file(HIER)
    with pytest.raises(ReportError, match="Utilization by Hierarchy"):
        vu.parse_hierarchical_file(PLACED)


# ---------------------------------------------------------------- failure cases

@pytest.mark.parametrize("text", ["", "\n \n"])
def test_empty_raises(text):
    with pytest.raises(ReportError, match="empty"):
        vu.parse(text, "u.rpt")
    with pytest.raises(ReportError, match="empty"):
        vu.parse_hierarchical(text, "u.rpt")


def test_missing_block_ram_tile_row_raises():
    text = PLACED.read_text().replace("| Block RAM Tile ", "| Block RAM Tyle ")
    with pytest.raises(ReportError, match="Block RAM Tile"):
        vu.parse(text, "u.rpt")


def test_non_numeric_used_raises():
    text, n = re.subn(r"^(\| DSPs\s+\|\s+)148 \|", r"\g<1>1x8 |", PLACED.read_text(), flags=re.M)
    assert n == 1
    with pytest.raises(ReportError, match="DSP"):
        vu.parse(text, "u.rpt")


def test_row_with_wrong_cell_count_raises():
    text = PLACED.read_text().replace("| F7 Muxes                   |   611 |",
                                      "| F7 Muxes                   |   611 |   611 |")
    with pytest.raises(ReportError, match="cells"):
        vu.parse(text, "u.rpt")


def test_missing_dsp_section_raises():
    text = PLACED.read_text().replace("4. DSP\n------", "4. XSP\n------")
    with pytest.raises(ReportError, match="no DSP section"):
        vu.parse(text, "u.rpt")


def test_other_report_raises():
    text = (FIX / "timing_summary_7z020_2023.2_met.rpt").read_text()
    with pytest.raises(ReportError, match="report_timing_summary"):
        vu.parse(text, "t.rpt")


# ---------------------------------------------------------------- truncation

def _cuts(text, step):
    offs = set(range(0, len(text), step))
    pos = 0
    for ln in text.split("\n"):
        pos += len(ln) + 1
        offs.update((pos, pos - 1 - len(ln) // 2))
    return sorted(o for o in offs if 0 <= o < len(text))


@pytest.mark.parametrize("path", [PLACED, SYNTH, ZU], ids=lambda p: p.name)
def test_flat_truncation_raises_or_is_complete(path):
    text = path.read_text()
    full = vu.parse(text, path.name)
    prim_at = text.index("Primitives\n-")
    raised = 0
    for off in _cuts(text, 31):
        try:
            r = vu.parse(text[:off], f"{path.name}[:{off}]")
        except ReportError:
            raised += 1
            assert off < prim_at + 2000
            continue
        assert r == full, f"cut at {off} gave different numbers"
        assert off > prim_at
    assert raised > 0


@pytest.mark.parametrize("path", [HIER, HIER_ZU], ids=lambda p: p.name)
def test_hierarchical_truncation_raises_or_is_complete(path):
    text = path.read_text()
    full = vu.parse_hierarchical(text, path.name)
    for off in _cuts(text, 7):
        try:
            r = vu.parse_hierarchical(text[:off], f"{path.name}[:{off}]")
        except ReportError:
            continue
        assert r == full, f"cut at {off} gave different numbers"


def test_an_empty_table_is_its_header_alone_and_is_read_as_empty():
    """Vivado prints a table with no rows as its header alone, no closing border (a synthesized
    block-design wrapper whose logic is all in black boxes has no Primitives: 28 of 598 real
    reports). With the next section after it the table is empty; with nothing after it, cut."""
    text = PLACED.read_text()
    lines = text.split("\n")
    start = max(i for i, ln in enumerate(lines) if ln == "8. Primitives")  # the section, not the contents
    first_row = start + 6  # title, dashes, blank, border, header, border
    close = next(i for i in range(first_row, len(lines)) if lines[i].startswith("+"))
    assert lines[first_row].startswith("| ") and close > first_row
    empty = "\n".join(lines[:first_row] + lines[close + 1:])
    r = vu.parse(empty, "empty primitives")
    assert r["primitives"] == {} and r["lut"] == vu.parse(text, "whole")["lut"]
    cut = "\n".join(lines[:first_row]) + "\n\n\n"
    with pytest.raises(ReportError, match="cut short"):
        vu.parse(cut, "cut after the header")


def test_zero_lut_memory_without_its_sub_rows_reads_as_zero_lutram_and_srl():
    """Some versions print LUT as Memory 0 and leave its two sub-rows out of the first table (they
    come as 0 further down): read as 0 distributed RAM and 0 shift registers, not unknown."""
    text = SYNTH.read_text()
    text = text.replace("| Slice LUTs*                | 12904 |", "| Slice LUTs*                | 12776 |")
    text = text.replace("|   LUT as Memory            |   128 |", "|   LUT as Memory            |     0 |")
    text = re.sub(r"\|     LUT as (Distributed RAM|Shift Register) .*\n", "", text)
    r = vu.parse(text)
    assert (r["lut"], r["lut_memory"], r["lutram"], r["srl"]) == (12776, 0, 0, 0)
    assert vu.parse(SYNTH.read_text())["lutram"] == 96  # the rows that are there are read
