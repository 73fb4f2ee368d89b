"""kabe.project.cores checks a design's core file beyond what FuseSoC says (red team 3b, repros 02, 08, 23, 24):
the sim and synth targets are one design, a VLNV is declared by one core file, an unknown file_type is
refused, and FuseSoC's tracebacks and "core not found" for a core-file mistake become one sentence naming
the file and the fix. Every test resolves throwaway cores through FuseSoC; no Verilator, no Yosys."""

from __future__ import annotations

import functools
import re

import pytest
from rich.console import Console

from kabe.project import core_files, core_targets, cores, designs
from kabe.project.cores import CoreError

pytestmark = pytest.mark.e2e  # end to end: real tools, minutes (the fast tier leaves it out: -m 'not e2e')

MODULE = """module tv #(parameter [7:0] XOR = 8'h00) (input wire clk, input wire [7:0] a, output reg [7:0] y);
  always @(posedge clk) y <= a ^ XOR;
endmodule
"""
CORE = """CAPI=2:
name: user:design:tv:0.1.0
filesets:
  rtl: {files: [rtl/tv.v], file_type: verilogSource}
  model: {files: [rtl/glbl.v], file_type: verilogSource}
parameters:
  XOR: {datatype: int, paramtype: vlogparam, default: 90}
targets:
  default: &default
    filesets: [rtl]
    toplevel: tv
    parameters: [XOR]
  sim:
    <<: *default
    flow: sim
    flow_options: {tool: verilator, mode: cc}
  synth:
    <<: *default
    flow: generic
    flow_options: {tool: yosys, arch: xilinx, output_format: json, yosys_synth_options: [-family, xc7]}
"""
DESIGN_YAML = 'core: {vlnv}\nverify: {{model: "models.tv:stimulus"}}\nstreams: {{in: {{s_axis: 8}}, out: {{m_axis: 8}}}}\n'


def _design(root, name="tv", core=CORE, vlnv="user:design:tv:0.1.0"):
    d = root / name
    (d / "rtl").mkdir(parents=True, exist_ok=True)
    (d / "rtl" / "tv.v").write_text(MODULE)
    (d / "rtl" / "glbl.v").write_text("module glbl; endmodule\n")
    (d / f"{name}.core").write_text(core)
    (d / "design.yaml").write_text(DESIGN_YAML.format(vlnv=vlnv))
    return d


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "cores"
    _design(root)
    return root, tmp_path / "build"


def _resolve(project, target, name="tv"):
    root, build = project
    return cores.resolve(designs.get(name, root), target, build_root=build)


def _targets(project, name="tv"):
    return designs.get(name, project[0]), _resolve(project, "sim", name), _resolve(project, "synth", name)


def _edit(project, old, new, name="tv"):
    core = project[0] / name / f"{name}.core"
    text = core.read_text()
    assert old in text, old
    core.write_text(text.replace(old, new, 1))
    return core


# 1. the sim and synth targets must be one design (repro 02)

def test_the_same_targets_compare_equal(project):
    assert core_targets.compare_targets(*_targets(project)) == ((), ())


def test_a_parameter_set_differently_per_target_is_refused(project):
    _edit(project, "    flow: generic\n", "    flow: generic\n    parameters: [XOR=0]\n")
    with pytest.raises(CoreError, match=r"tv\.core: the sim and synth targets build different designs \(parameter "
                                        r"XOR: target sim sets XOR=90, target synth XOR=0\).*Fix: .*`default:`"):
        core_targets.compare_targets(*_targets(project))


def test_a_parameter_only_one_target_sets_is_refused(project):
    _edit(project, "    parameters: [XOR]\n", "")
    _edit(project, "    flow: sim\n", "    flow: sim\n    parameters: [XOR]\n")
    with pytest.raises(CoreError, match=r"target sim sets XOR=90, target synth does not set it"):
        core_targets.compare_targets(*_targets(project))


def test_another_sim_toplevel_is_refused(project):
    _edit(project, "    flow: sim\n", "    flow: sim\n    toplevel: glbl\n")
    with pytest.raises(CoreError, match=r"toplevel: target sim has glbl, target synth tv"):
        core_targets.compare_targets(*_targets(project))


def test_a_define_in_the_verilator_options_only_is_refused(project):
    _edit(project, "{tool: verilator, mode: cc}", "{tool: verilator, mode: cc, verilator_options: [-Wall, -DFAST=1]}")
    with pytest.raises(CoreError, match=r"define FAST: target sim sets FAST='1', target synth does not set it"):
        core_targets.compare_targets(*_targets(project))


def test_a_sim_only_file_is_allowed_and_returned(project):
    _edit(project, "    flow: sim\n", "    flow: sim\n    filesets: [rtl, model]\n")
    sim_only, synth_only = core_targets.compare_targets(*_targets(project))
    assert [p.name for p in sim_only] == ["glbl.v"] and synth_only == ()


def test_a_verilator_G_option_is_read_as_a_parameter(project):  # red team 4c, repro 01
    _edit(project, "{tool: verilator, mode: cc}", "{tool: verilator, mode: cc, verilator_options: [-GXOR=0]}")
    with pytest.raises(CoreError, match=r"parameter XOR: target sim sets XOR=0, target synth XOR=90"):
        core_targets.compare_targets(*_targets(project))
    _edit(project, "-GXOR=0", "-GXOR=90")  # the value both targets set: one design
    assert core_targets.compare_targets(*_targets(project)) == ((), ())
    _edit(project, "-GXOR=90", "-pvalue+XOR=1")
    with pytest.raises(CoreError, match=r"parameter XOR: target sim sets XOR=1, target synth XOR=90"):
        core_targets.compare_targets(*_targets(project))


@pytest.mark.parametrize("option", ["-f", "-F", "-y", "-v", "+libext+.v", "-Irtl/other", "+incdir+x", "-UFAST",
                                    "--top-module", "--x-assign", "extra.sv"])
def test_a_verilator_option_kabe_cannot_compare_is_refused(project, option):
    _edit(project, "{tool: verilator, mode: cc}", f"{{tool: verilator, mode: cc, verilator_options: [-Wall, '{option}']}}")
    with pytest.raises(CoreError, match=rf"tv\.core: the sim target's verilator_options has '{re.escape(option)}', "
                                        r"which .* for the simulation only.*Fix: .*drop"):
        core_targets.compare_targets(*_targets(project))


def test_a_sim_only_file_redefining_a_synth_module_is_refused(project):  # repro 02
    root = project[0]
    (root / "tv" / "rtl" / "xf_sim.v").write_text("module tv (input wire clk, input wire [7:0] a, output reg [7:0] y);\n"
                                                  "/* module glbl; */ always @(posedge clk) y <= a;\nendmodule\n")
    (root / "tv" / "rtl" / "xf_impl.v").write_text(MODULE)
    _edit(project, "  rtl: {files: [rtl/tv.v], file_type: verilogSource}",
          "  rtl: {files: [rtl/glbl.v], file_type: verilogSource}\n"
          "  simm: {files: [rtl/xf_sim.v], file_type: verilogSource}\n"
          "  impl: {files: [rtl/xf_impl.v], file_type: verilogSource}")
    _edit(project, "    filesets: [rtl]\n", '    filesets: [rtl, "target_sim ? (simm)", "!target_sim ? (impl)"]\n')
    with pytest.raises(CoreError, match=r"tv\.core: module tv is defined by .*xf_sim\.v in the sim target and by "
                                        r".*xf_impl\.v in the synth target.*Fix: "):
        core_targets.compare_targets(*_targets(project))


@pytest.mark.parametrize("sim_rom", ["01\n", "02\n"])
def test_a_copyto_file_with_other_content_per_target_is_refused(project, sim_rom):  # repro 06
    root = project[0]
    (root / "tv" / "rtl" / "rom_sim.mem").write_text(sim_rom)
    (root / "tv" / "rtl" / "rom.mem").write_text("02\n")
    _edit(project, "  model: {files: [rtl/glbl.v], file_type: verilogSource}",
          "  rs: {files: [rtl/rom_sim.mem: {file_type: user, copyto: rom.mem}]}\n"
          "  ri: {files: [rtl/rom.mem: {file_type: user, copyto: rom.mem}]}")
    _edit(project, "    filesets: [rtl]\n", '    filesets: [rtl, "target_sim ? (rs)", "!target_sim ? (ri)"]\n')
    if sim_rom == "02\n":  # the same content from two files: one design
        assert core_targets.compare_targets(*_targets(project)) == ((), ())
        return
    with pytest.raises(CoreError, match=r"tv\.core: rom\.mem \(a file FuseSoC copies into each target's work root.*"
                                        r"different content in the sim target than in the synth target"):
        core_targets.compare_targets(*_targets(project))


def test_the_build_says_and_records_files_only_in_one_target(project, monkeypatch):
    from kabe import build

    root, build_root = project
    monkeypatch.setattr(build.cores, "resolve", functools.partial(cores.resolve, build_root=build_root))
    _edit(project, "    flow: sim\n", "    flow: sim\n    filesets: [rtl, model]\n")
    d = designs.get("tv", root)
    console = Console(record=True, width=300)
    files = build._check_sim_target(d, cores.resolve(d, "synth", build_root=build_root),
                                   cores.resolve(d, "sim", build_root=build_root), console)
    assert files["sim_only"][0].endswith("tv/rtl/glbl.v") and files["synth_only"] == []
    said = console.export_text()
    assert "tv: files only in the sim target: " in said and "glbl.v (otherwise the two targets agree" in said
    _edit(project, "  model: {files: [rtl/glbl.v], file_type: verilogSource}",
          "  model: {files: [rtl/glbl.v], file_type: verilogSource}\n  vh: {files: [rtl/x.vhd], file_type: vhdlSource}")
    (root / "tv" / "rtl" / "x.vhd").write_text("entity x is end;\n")
    _edit(project, "filesets: [rtl, model]", "filesets: [rtl, vh]")
    from kabe.flows import ghdl

    monkeypatch.setattr(ghdl, "command", lambda: None)  # with GHDL the harness reads VHDL (tests/sim/test_vhdl.py)
    with pytest.raises(build.BuildError, match=r"x\.vhd: VHDL \(vhdlSource.*in target sim; kabe's simulation check "
                                               r"\(Verilator\) reads Verilog and SystemVerilog only.*apt-get install ghdl"):
        build._check_sim_target(d, cores.resolve(d, "synth", build_root=build_root),
                                   cores.resolve(d, "sim", build_root=build_root), console)


# 2. one VLNV, one core file (repro 23)

def test_a_copied_design_that_kept_the_vlnv_is_refused(project):
    root, _ = project
    copy = _design(root, "tv2", vlnv="user:design:tv:0.1.0")
    for name in ("tv", "tv2"):
        with pytest.raises(CoreError, match=r"VLNV user:design:tv:0\.1\.0 is declared by 2 core files .*tv/tv\.core.*"
                                            r"FuseSoC silently keeps one of them") as e:
            _resolve(project, "synth", name)
    assert f"change `name:` in {copy / 'tv2.core'} and `core:` in {copy / 'design.yaml'} to user:design:tv2:0.1.0" \
           in str(e.value)


def test_a_dependency_declared_twice_is_refused(project):
    root, _ = project
    lib = "CAPI=2:\nname: user:lib:h:1.0.0\nfilesets:\n  rtl: {files: [h.v], file_type: verilogSource}\n" \
          "targets:\n  default: {filesets: [rtl]}\n"
    for folder in ("lib", "lib_copy"):
        (root / folder).mkdir()
        (root / folder / "h.v").write_text("module h; endmodule\n")
        (root / folder / "h.core").write_text(lib)
    _edit(project, "file_type: verilogSource}\n  model", "file_type: verilogSource, depend: [user:lib:h]}\n  model")
    with pytest.raises(CoreError, match=r"dependency user:lib:h:1\.0\.0 is declared by 2 core files .*lib/h\.core.*"
                                        r"lib_copy/h\.core.*this time it used .*Fix: keep one"):
        _resolve(project, "synth")
    (root / "lib_copy" / "FUSESOC_IGNORE").write_text("")  # what FuseSoC does not read is no duplicate
    assert _resolve(project, "synth").toplevel == "tv"


def test_the_design_core_must_be_the_one_fusesoc_used(project, tmp_path):
    d, sim, _ = _targets(project)
    other = tmp_path / "elsewhere.core"
    import dataclasses
    moved = dataclasses.replace(sim, core_of={d.core: other})
    with pytest.raises(CoreError, match=r"FuseSoC resolved user:design:tv:0\.1\.0 from .*elsewhere\.core, not from "
                                        r"the design's own core file"):
        core_files.check_used_cores(d, moved, [])


# 4. core-file mistakes said in the core file's terms (repros 08, 24)

@pytest.mark.parametrize("first, hint", [("CAPI=1:", "convert the file to CAPI2"), ("CAPI=3:", "exactly `CAPI=2:`"),
                                         ("", "exactly `CAPI=2:`"), ("CAPI=2", "add the colon")])
def test_a_first_line_that_is_not_capi2(project, first, hint):
    core = _edit(project, "CAPI=2:\n", f"{first}\n" if first else "")
    with pytest.raises(CoreError, match=r"tv\.core: the first line must be `CAPI=2:`") as e:
        _resolve(project, "synth")
    assert hint in str(e.value) and "Traceback" not in str(e.value) and str(core) in str(e.value)


@pytest.mark.parametrize("edit, said", [
    (("default: 90}", "default: abc}"), r"parameter XOR \(datatype int\) has default: 'abc', which FuseSoC cannot read "
                                        r"as an int\. Fix: write a decimal or a 0x/0o/0b number"),
    (("    parameters: [XOR]\n", "    parameters: [XOR=90.0]\n"),
     r"target 'default' \(which 'synth' inherits\) sets parameter XOR \(datatype int\) to 90\.0, which FuseSoC cannot "
     r"read as an int"),
    (("    flow: generic\n", "    flow: generic\n    parameters: [XOR=1.5]\n"),
     r"target 'synth' sets parameter XOR \(datatype int\) to 1\.5, which FuseSoC cannot read as an int"),
    (("    parameters: [XOR]\n", "    parameters: [XOR=\"8'h5A\"]\n"), r"sets parameter XOR \(datatype int\) to "
                                                                       r"\"8'h5A\", which .* 8'h5A"),
    (("datatype: int", "datatype: integer"), r"parameter XOR has datatype 'integer'\. Fix: `datatype:` is one of"),
])
def test_a_parameter_fusesoc_cannot_read(project, edit, said):
    _edit(project, *edit)
    with pytest.raises(CoreError, match=said) as e:
        _resolve(project, "synth")
    assert "Traceback" not in str(e.value) and "File \"" not in str(e.value)


def test_a_hex_override_still_resolves(project):
    _edit(project, "    parameters: [XOR]\n", "    parameters: [XOR=0x5A]\n")
    assert _resolve(project, "synth").parameters["XOR"] == 90


def test_a_dependency_cycle_names_the_core_files(project):
    root, _ = project
    (root / "lib").mkdir()
    (root / "lib" / "h.v").write_text("module h; endmodule\n")
    (root / "lib" / "h.core").write_text("CAPI=2:\nname: user:lib:h:1.0.0\nfilesets:\n  rtl: {files: [h.v], "
                                         "file_type: verilogSource, depend: [user:design:tv]}\n"
                                         "targets:\n  default: {filesets: [rtl]}\n")
    _edit(project, "file_type: verilogSource}\n  model", "file_type: verilogSource, depend: [user:lib:h]}\n  model")
    with pytest.raises(CoreError, match=r"tv\.core: the cores depend on each other in a cycle \(.*(tv/tv\.core -> .*"
                                        r"lib/h\.core|lib/h\.core -> .*tv/tv\.core).*\).*Fix: remove the `depend:`") as e:
        _resolve(project, "synth")
    assert "Traceback" not in str(e.value) and "simplesat" not in str(e.value)


def _library_core(project, first_line: str = "CAPI=2:", depend: str = "user:lib:h") -> None:
    """lib/h.core (user:lib:h:1.0.0, one module) beside the design, which depends on it by `depend`."""
    root, _ = project
    (root / "lib").mkdir()
    (root / "lib" / "h.v").write_text("module h; endmodule\n")
    (root / "lib" / "h.core").write_text(f"{first_line}\nname: user:lib:h:1.0.0\nfilesets:\n  rtl: {{files: [h.v], "
                                         "file_type: verilogSource}\ntargets:\n  default: {filesets: [rtl]}\n")
    _edit(project, "file_type: verilogSource}\n  model", f"file_type: verilogSource, depend: [{depend}]}}\n  model")


def test_a_dependency_skipped_for_its_first_line_is_named(project):
    _library_core(project, first_line="CAPI=3:")
    with pytest.raises(CoreError, match=r"lib/h\.core: the first line must be `CAPI=2:` \(it is 'CAPI=3:'\); FuseSoC "
                                        r"skips it, so user:lib:h:1\.0\.0, a dependency of .*tv\.core, is not found"):
        _resolve(project, "synth")


def test_a_version_range_no_core_meets_names_the_versions_there_are(project):
    _library_core(project, depend="'>=user:lib:h:2.0'")
    with pytest.raises(CoreError, match=r"tv\.core: no core meets the dependency >=user:lib:h:2\.0; the libraries hold "
                                        r"1\.0\.0 in .*lib/h\.core\. Fix: change the range under `depend:`"):
        _resolve(project, "synth")


def test_an_unknown_file_type_is_refused(project):
    _edit(project, "rtl: {files: [rtl/tv.v], file_type: verilogSource}", "rtl: {files: [rtl/tv.v], file_type: verilogSourc}")
    with pytest.raises(CoreError, match=r"tv\.core: .*rtl/tv\.v \(target 'synth'\) has file_type 'verilogSourc', "
                                        r"which no tool knows \(did you mean verilogSource\?\).*Fix: .*xdc"):
        _resolve(project, "synth")


def test_known_and_tool_specific_file_types_pass(project):
    root, _ = project
    (root / "tv" / "w.vlt").write_text("`verilator_config\n")
    (root / "tv" / "notes.txt").write_text("x\n")
    _edit(project, "  model: {", "  extra: {files: [rtl/glbl.v: {file_type: verilogSource-2005}, w.vlt: {file_type: vlt}, "
                                 "notes.txt: {file_type: myToolNotes}]}\n  model: {")
    _edit(project, "    filesets: [rtl]\n", "    filesets: [rtl, extra]\n")
    assert {f.file_type for f in _resolve(project, "synth").files} == {"verilogSource", "verilogSource-2005", "vlt",
                                                                        "myToolNotes"}
