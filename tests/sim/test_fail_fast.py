"""Fail fast, then long (issue 38): Yosys reads only the files the top's hierarchy can use (a library file
the top never uses, unreadable to Yosys, stops nothing), elaborates the top before any simulation (a file
it cannot read is said in seconds, and the simulation never starts), and a run past its documented time
limit stops with what to do. Real Yosys."""

from __future__ import annotations

import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from kabe.core_targets import sources_of_top
from kabe.flows import open as open_flow
from kabe.flows.base import ToolError

TOP = "module top(input clk, input [7:0] a, output [7:0] y); leaf u (.clk(clk), .a(a), .y(y)); endmodule\n"
LEAF = "module leaf(input clk, input [7:0] a, output reg [7:0] y); always @(posedge clk) y <= a + 1; endmodule\n"
# SystemVerilog Yosys does not read (a class); Verilator would
UNUSED = "module unused; class c; int x; endclass endmodule\n"
DEFINES = "`define WIDTH 8\n"


def _edam(tmp_path: Path, files: dict[str, str]):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    return SimpleNamespace(toplevel="top", sources=tuple(tmp_path / n for n in files), include_dirs=(),
                           parameters={}, parameter_specs={}, tool_options={})


def test_only_the_files_the_top_can_use_are_read(tmp_path):
    e = _edam(tmp_path, {"defs.vh": DEFINES, "unused.sv": UNUSED, "top.v": TOP, "leaf.v": LEAF})
    kept = [Path(p).name for p in sources_of_top(e.sources, "top")]
    assert kept == ["defs.vh", "top.v", "leaf.v"]  # in their order; a `define file is always kept
    assert [Path(p).name for p in sources_of_top(e.sources, "nowhere")] == ["defs.vh", "unused.sv", "top.v", "leaf.v"]
    synth = open_flow.synthesize(e, tmp_path / "out")  # Yosys never reads unused.sv
    assert "unused.sv" not in synth.script.read_text()


def test_yosys_elaborates_in_seconds_and_names_the_file_it_cannot_read(tmp_path):
    e = _edam(tmp_path, {"top.v": TOP, "leaf.v": LEAF.replace("y <= a + 1;", "y <= a + ;")})
    t0 = time.monotonic()
    with pytest.raises(ToolError, match=r"leaf\.v:1: ERROR: syntax error"):
        open_flow.elaborate(e, tmp_path / "elab")
    assert time.monotonic() - t0 < 120
    (tmp_path / "m").mkdir()
    missing = _edam(tmp_path / "m", {"top.v": TOP})  # leaf is in no file
    with pytest.raises(ToolError, match="leaf"):
        open_flow.elaborate(missing, tmp_path / "elab2")


def test_a_yosys_run_past_its_limit_says_the_setting(tmp_path, monkeypatch):
    e = _edam(tmp_path, {"top.v": TOP, "leaf.v": LEAF})
    monkeypatch.setenv(open_flow.TIMEOUT_ENV, "0.5")
    with pytest.raises(ToolError, match=r"did not finish within 0 s .*KABE_YOSYS_TIMEOUT_S=7200"):
        open_flow.synthesize(e, tmp_path / "out")
    monkeypatch.setenv(open_flow.TIMEOUT_ENV, "soon")
    with pytest.raises(ToolError, match="KABE_YOSYS_TIMEOUT_S='soon' is not a number"):
        open_flow.synthesize(e, tmp_path / "out")


def test_a_long_yosys_run_says_where_it_is(tmp_path, monkeypatch):
    monkeypatch.setattr(open_flow, "PROGRESS_EVERY_S", 1.0)
    said: list[str] = []
    e = _edam(tmp_path, {"top.v": TOP, "leaf.v": LEAF})
    open_flow.synthesize(e, tmp_path / "out", progress=said.append)
    assert said and said[0].startswith("Yosys running for ") and "limit" in said[0], said
