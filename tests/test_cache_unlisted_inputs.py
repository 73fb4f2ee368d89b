"""Inputs a build reads without any file naming them still move the cache key (red team, round 2):
a header in an include folder the core file does not list, and a data file a project's golden
model opens beside it. Before, editing either kept the old verdict from the cache."""

from pathlib import Path

from kabe import cores, designs
from kabe.records import cache
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
