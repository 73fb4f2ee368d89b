"""Inputs a build reads without any file naming them still move the cache key (red team, round 2):
a header in an include folder the core file does not list, and a data file a project's golden
model opens beside it. Before, editing either kept the old verdict from the cache."""

from pathlib import Path

import pytest

from kabe.project import cores, designs
from kabe.cache import cache
from kabe.sim import verilator_build

TOOLS = {"yosys": "x", "verilator": "y"}


def _edam(tmp_path: Path, include_dir: Path) -> cores.Edam:
    top = cores.SourceFile(path=tmp_path / "rtl" / "top.v", file_type="verilogSource", core="t")
    return cores.Edam(design="t", target="synth", vlnv="t:t:t:0", name="t_t_t_0", toplevel="top", tool="yosys",
                      files=(top,), include_dirs=(include_dir,), parameters={}, parameter_specs={}, tool_options={})


def _key(tmp_path: Path, edam) -> str:
    return cache.compute(designs.get("stage2"), "open", {"synth": edam}, sim_check_rows=64, tools=TOOLS,
                         root=tmp_path).key


def test_a_header_in_an_include_folder_is_in_the_key_listed_or_not(tmp_path):
    rtl = tmp_path / "rtl"
    rtl.mkdir()
    (rtl / "top.v").write_text('`include "defs.vh"\n`include "xorkey.vh"\nmodule top; endmodule\n')
    (rtl / "defs.vh").write_text("`define W 8\n")
    unlisted = rtl / "xorkey.vh"
    unlisted.write_text("`define XOR_KEY 8'h00\n")
    edam = _edam(tmp_path, rtl)
    before = _key(tmp_path, edam)
    assert before == _key(tmp_path, edam)  # the same inputs, the same key
    unlisted.write_text("`define XOR_KEY 8'h5A\n")
    assert _key(tmp_path, edam) != before
    assert unlisted in edam.reachable_headers
    (rtl / ".top.v.swp").write_text("editor state")  # hidden files are no input
    assert (rtl / ".top.v.swp") not in edam.reachable_headers


def test_the_compiled_model_key_has_every_header_the_build_key_has(tmp_path):
    """Verilator's compiled model is reused by its own key: a header with any suffix (`.inc`) in an
    include folder must be in it as it is in the build's key, or an edit simulates the old model."""
    rtl = tmp_path / "rtl"
    rtl.mkdir()
    (rtl / "top.v").write_text('`include "table.inc"\nmodule top; endmodule\n')
    (rtl / "table.inc").write_text("localparam K = 1;\n")
    edam = _edam(tmp_path, rtl)
    assert rtl / "table.inc" in verilator_build._hdl_files(edam)
    assert set(edam.reachable_headers) <= set(verilator_build._hdl_files(edam))


def test_data_beside_a_model_is_in_the_key_and_outputs_are_not(tmp_path):
    models = tmp_path / "models"
    (models / "tables").mkdir(parents=True)
    model = models / "xor_model.py"
    model.write_text("import json\nKEY = json.load(open(__file__[:-12] + 'ref.json'))['xor']\n")
    (models / "ref.json").write_text('{"xor": 17}')
    (models / "tables" / "coeffs.csv").write_text("1,2,3\n")
    (models / "__pycache__").mkdir()
    (models / "__pycache__" / "xor_model.cpython-312.pyc").write_bytes(b"\0")
    (models / "wave.vcd").write_text("$end")
    found = cache._data_in(model.parent, tmp_path)
    assert models / "ref.json" in found and models / "tables" / "coeffs.csv" in found
    assert not [p for p in found if "__pycache__" in p.parts or p.suffix == ".vcd"]
    # a model at the project's top: its folder holds everything, so only the files directly in it
    top_model = tmp_path / "model.py"
    top_model.write_text("")
    at_top = cache._data_in(top_model.parent, tmp_path)
    assert models / "ref.json" not in at_top
    assert not [p for p in found + at_top if p.suffix == ".py"]  # code is in the key by its imports, not here


# --- issue 36, item 5: every file the tools open, and kabe's code by what the build imports -------------

def test_a_header_beside_the_rtl_outside_every_include_folder_is_in_the_key(tmp_path):
    """Yosys and Verilator look for an `include beside the file that includes it: a header there that no
    core file lists and no include folder holds changed a build that stayed a cache hit (red team 5)."""
    rtl = tmp_path / "rtl"
    rtl.mkdir()
    (rtl / "top.v").write_text('`include "widths.vh"\nmodule top; endmodule\n')
    header = rtl / "widths.vh"
    header.write_text("`define COUNT_WIDTH 48\n")
    edam = _edam(tmp_path, tmp_path / "no_include_folder")
    before = _key(tmp_path, edam)
    header.write_text("`define COUNT_WIDTH 61\n")
    assert _key(tmp_path, edam) != before
    assert header in verilator_build._hdl_files(edam)  # the compiled model's key too


def test_a_readmemh_table_beside_the_rtl_is_in_the_key_by_call_or_by_parameter(tmp_path):
    rtl = tmp_path / "rtl"
    rtl.mkdir()
    (rtl / "top.v").write_text('module top #(parameter INIT = "init.mem") ();\n'
                               '  reg [7:0] m [0:3];\n  initial $readmemh("table.hex", m); // "not_a_file.hex"\n'
                               '  initial $readmemb(INIT, m);\nendmodule\n')
    table, init = rtl / "table.hex", rtl / "init.mem"
    table.write_text("00\n01\n")
    init.write_text("0\n")
    edam = _edam(tmp_path, tmp_path / "none")
    before = _key(tmp_path, edam)
    table.write_text("00\nff\n")
    after_table = _key(tmp_path, edam)
    init.write_text("1\n")
    assert len({before, after_table, _key(tmp_path, edam)}) == 3


@pytest.mark.parametrize("tool, options", [
    ("verilator_options", ["-Wall", "-I{d}"]), ("verilator_options", ["-I", "{d}"]),
    ("verilator_options", ["+incdir+elsewhere+{d}"]), ("yosys_read_options", ["-sv", "-I{d}"]),
    ("yosys_read_options", "-I{d} -sv")])  # a string of options, as edalize also takes them
def test_a_header_found_only_through_an_include_option_is_in_the_key(tmp_path, tool, options):
    """An include folder a tool option names (-I, +incdir+), relative to the work root where edalize runs
    the tools or to the core file's folder: the header found only there is an input (issue 36, item 5)."""
    rtl, opt_dir = tmp_path / "rtl", tmp_path / "work" / "hdr"
    rtl.mkdir()
    opt_dir.mkdir(parents=True)
    (rtl / "top.v").write_text('`include "opt_width.vh"\nmodule top; endmodule\n')
    header = opt_dir / "opt_width.vh"
    header.write_text("`define W 48\n")
    (opt_dir / "table.hex").write_text("00\n")  # named by the header: found in the same folder
    header.write_text('`define W 48\ninitial $readmemh("table.hex", m);\n')
    opts = options.replace("{d}", "hdr") if isinstance(options, str) else [o.replace("{d}", "hdr") for o in options]
    edam = cores.Edam(**{**_edam(tmp_path, tmp_path / "none").__dict__, "tool_options": {tool: opts},
                         "work_root": tmp_path / "work"})
    assert edam.option_include_dirs == (opt_dir.resolve(),)
    assert {header.resolve(), (opt_dir / "table.hex").resolve()} <= set(edam.reachable_headers)
    before = _key(tmp_path, edam)
    assert _key(tmp_path, edam) == before
    header.write_text('`define W 61\ninitial $readmemh("table.hex", m);\n')
    after_header = _key(tmp_path, edam)
    (opt_dir / "table.hex").write_text("ff\n")
    assert len({before, after_header, _key(tmp_path, edam)}) == 3
    assert header.resolve() in verilator_build._hdl_files(edam)  # the compiled model's key too


def test_an_include_option_naming_no_folder_adds_nothing(tmp_path):
    edam = cores.Edam(**{**_edam(tmp_path, tmp_path / "none").__dict__, "work_root": tmp_path,
                         "tool_options": {"verilator_options": ["-Inope", "-Wall", "+incdir+", "-I"],
                                          "yosys_synth_options": ["-family", "xc7"], "arch": "xilinx"}})
    assert edam.option_include_dirs == () and edam.all_include_dirs == (tmp_path / "none",)


def test_a_name_in_a_comment_or_a_format_is_no_input(tmp_path):
    from kabe.cache import tool_reads

    rtl = tmp_path / "rtl"
    rtl.mkdir()
    (rtl / "top.v").write_text('// `include "old.vh"\n/* "gone.hex" */ initial $display("x=%d", 1);\n')
    (rtl / "old.vh").write_text("")
    (rtl / "gone.hex").write_text("")
    assert tool_reads.files_read([rtl / "top.v"]) == []


def test_a_header_included_by_a_header_is_followed(tmp_path):
    from kabe.cache import tool_reads

    (tmp_path / "rtl" / "inc").mkdir(parents=True)
    (tmp_path / "rtl" / "top.v").write_text('`include "inc/a.vh"\n')
    (tmp_path / "rtl" / "inc" / "a.vh").write_text('`include "b.vh"\n')  # beside a.vh
    (tmp_path / "rtl" / "inc" / "b.vh").write_text('initial $readmemh("rom.hex", m);\n')
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "rom.hex").write_text("00\n")  # the tools' working directory (copyto)
    got = tool_reads.files_read([tmp_path / "rtl" / "top.v"], work_root=tmp_path / "work")
    assert got == sorted([tmp_path / "rtl" / "inc" / "a.vh", tmp_path / "rtl" / "inc" / "b.vh",
                          (tmp_path / "work" / "rom.hex")])


def test_kabes_own_code_in_the_key_is_what_the_build_imports():
    """FLOW_CODE, a hand list, missed kabe/base/rtl_path.py and kabe/base/json_keys.py, which the build imports."""
    from kabe.base.paths import PACKAGE
    from kabe.cache import own_code

    got = {p.relative_to(PACKAGE).as_posix() for p in cache.kabe_code("open")}
    for module in ("base/rtl_path.py", "base/json_keys.py", "build/__init__.py", "flows/open.py", "cache/cache.py",
                   "sim/harness.cpp", "timing/sta.py", "parsers/yosys_stat.py"):
        assert module in got, module
    assert "cli.py" not in got and not any(m.startswith("ci/") for m in got)  # not on the build's path
    assert {"flows/vivado/tcl/kabe_bd.tcl", "flows/vivado/hdl/kabe_usr_access.v"} <= \
        {p.relative_to(PACKAGE).as_posix() for p in own_code.closure("vivado")}


def test_editing_each_kabe_module_the_build_imports_is_a_miss(tmp_path, monkeypatch):
    """Every module of the closure moves the key (not only the folders a list named): each is edited in
    a copy of the package, in turn, and the key recomputed."""
    import shutil

    from kabe.cache import own_code

    pkg = tmp_path / "kabe"
    shutil.copytree(own_code.PACKAGE, pkg, ignore=shutil.ignore_patterns("__pycache__", "project_templates"))
    monkeypatch.setattr(own_code, "PACKAGE", pkg)
    monkeypatch.setattr(cache, "KABE_HOME", tmp_path)
    rtl = tmp_path / "rtl"
    rtl.mkdir()
    (rtl / "top.v").write_text("module top; endmodule\n")
    edam = _edam(tmp_path, rtl)
    files = own_code.closure("open")
    assert len(files) > 60
    keys = {_key(tmp_path, edam)}
    for f in files:
        f.write_bytes(f.read_bytes() + b"\n# edited\n")
        keys.add(_key(tmp_path, edam))
    assert len(keys) == len(files) + 1


def test_a_file_verilator_read_that_the_key_misses_is_found_from_its_dependency_file(tmp_path):
    """An `include through a macro names no file literally: the scan cannot find it, but Verilator's
    dependency file (Vtop__ver.d) says it was read, and kabe.sim.verilator_build stops on it."""
    from kabe.cache import tool_reads

    rtl, tool, out = tmp_path / "rtl", tmp_path / "verilator", tmp_path / "out"
    for d in (rtl, tool, out):
        d.mkdir()
    top, hidden, std = rtl / "top.v", rtl / "hidden.vh", tool / "verilated_std.sv"
    top.write_text('`define INC(name) `"name.vh`"\n`include `INC(hidden)\n')  # no literal names the file
    hidden.write_text("`define W 61\n")
    std.write_text("")
    (out / "Vtop.h").write_text("")
    dep = out / "Vtop__ver.d"
    dep.write_text(f"{out / 'Vtop.h'} {out / 'Vtop.mk'} : {tool / 'verilator_bin'} {std} \\\n  {top} {hidden}\n")
    opened = tool_reads.dependency_file(dep)
    assert {top, hidden, std} <= set(opened)
    assert tool_reads.files_read([top]) == []  # the scan alone misses it
    assert tool_reads.unkeyed(opened, [top], [tool, out]) == [hidden]
    assert tool_reads.unkeyed(opened, [top, hidden], [tool, out]) == []
