"""kabe.project.cores: FuseSoC resolves a design into an EDAM; errors name the core file; resolving is cached."""

from __future__ import annotations

import pytest

from kabe.project import cores, designs
from kabe.project.cores import CoreError
from kabe.base.paths import CORES

pytestmark = pytest.mark.e2e  # end to end: real tools, minutes (the fast tier leaves it out: -m 'not e2e')

DESIGN_YAML = "core: kabe:design:tiny:0.1.0\nverify: {model: 'llm_accel.model.frames:probe_stimulus'}\nports: 1\n"
GEN = """\
import sys, yaml
cfg = yaml.safe_load(open(sys.argv[1]))
value = cfg["parameters"]["value"]
if value < 0:
    sys.exit("gen_const: value must be >= 0")
open("gen_const.vh", "w").write("`define GEN_CONST %d\\n" % value)
core = {"name": cfg["vlnv"], "filesets": {"rtl": {"files": [{"gen_const.vh": {"is_include_file": True}}],
        "file_type": "verilogSource"}}, "targets": {"default": {"filesets": ["rtl"]}}}
open("gen.core", "w").write("CAPI=2:\\n" + yaml.safe_dump(core))
"""
CORE = """\
CAPI=2:
name: kabe:design:tiny:0.1.0
filesets:
  rtl:
    files: [tiny.v]
    file_type: verilogSource
generate:
  consts:
    generator: tiny_gen
    parameters: {value: 3}
generators:
  tiny_gen:
    interpreter: python3
    command: gen.py
parameters:
  ROW_BYTES: {datatype: int, default: 512, paramtype: vlogparam}
targets:
  sim:
    filesets: [rtl]
    generate: [consts]
    parameters: [ROW_BYTES]
    toplevel: tiny
    flow: sim
    flow_options: {tool: verilator}
  synth:
    filesets: [rtl]
    generate: [consts]
    toplevel: tiny
    flow: generic
    flow_options: {tool: yosys, arch: xilinx, yosys_synth_options: [-family, xc7]}
"""


@pytest.fixture
def tiny(tmp_path):
    root = tmp_path / "cores"
    d = root / "tiny"
    d.mkdir(parents=True)
    (d / "design.yaml").write_text(DESIGN_YAML)
    (d / "tiny.core").write_text(CORE)
    (d / "gen.py").write_text(GEN)
    (d / "tiny.v").write_text("`include \"gen_const.vh\"\nmodule tiny(input wire clk);\nendmodule\n")
    return root, tmp_path / "build"


def resolve(tiny, target="sim", **kw):
    root, build = tiny
    return cores.resolve("tiny", target, cores_root=root, build_root=build, **kw)


def test_resolve_sim(tiny):
    root, build = tiny
    e = resolve(tiny)
    assert e.vlnv == "kabe:design:tiny:0.1.0" and e.toplevel == "tiny" and e.tool == "verilator"
    assert e.sources == (root / "tiny" / "tiny.v",)
    assert all(p.is_absolute() and p.exists() for p in e.input_files)
    (gen,) = e.generated_files
    assert gen.name == "gen_const.vh" and "generator_cache" in gen.parts
    assert gen.read_text() == "`define GEN_CONST 3\n"
    assert e.include_dirs == (gen.parent,)
    assert e.parameters == {"ROW_BYTES": 512}
    assert e.work_root == (build / "fusesoc" / "tiny" / "sim").resolve()
    assert str(e.files[0]) == str(e.sources[0])  # a SourceFile reads as its path


def test_resolve_synth_tool_options(tiny):
    e = resolve(tiny, "synth")
    assert e.tool == "yosys"
    assert e.tool_options["yosys_synth_options"] == ["-family", "xc7"]
    assert e.tool_options["arch"] == "xilinx"


def test_second_resolve_is_cached_until_a_core_changes(tiny):
    root, _ = tiny
    first = resolve(tiny)
    stamp = first.work_root / "kabe_resolve.json"
    mtime = stamp.stat().st_mtime_ns
    again = resolve(tiny)  # cached: FuseSoC did not run, so its stamp was not rewritten
    assert stamp.stat().st_mtime_ns == mtime and again.files == first.files
    # RTL edits do not re-run FuseSoC (the file list cannot change); generator edits do.
    (root / "tiny" / "tiny.v").write_text("module tiny(input wire clk, input wire rst);\nendmodule\n")
    resolve(tiny)
    assert stamp.stat().st_mtime_ns == mtime
    (root / "tiny" / "tiny.core").write_text(CORE.replace("value: 3", "value: 5"))
    changed = resolve(tiny)
    assert changed.generated_files[0].read_text() == "`define GEN_CONST 5\n"


def test_parameter_override_has_its_own_work_root(tiny):
    base = resolve(tiny)
    over = resolve(tiny, params={"ROW_BYTES": 256})
    assert over.parameters["ROW_BYTES"] == 256 and base.parameters["ROW_BYTES"] == 512
    assert over.work_root != base.work_root


def test_broken_core_file_names_the_file(tiny):
    root, _ = tiny
    core = root / "tiny" / "tiny.core"
    core.write_text(CORE.replace("files: [tiny.v]", "files: [tiny.v"))
    with pytest.raises(CoreError) as e:
        resolve(tiny)
    msg = str(e.value)
    assert str(core) in msg and "parse error" in msg and "Fix:" in msg


def test_schema_error_names_the_file(tiny):
    root, _ = tiny
    core = root / "tiny" / "tiny.core"
    core.write_text(CORE.replace("    toplevel: tiny\n    flow: sim", "    toplevel: tiny\n    bogus: 1\n    flow: sim"))
    with pytest.raises(CoreError, match=r"bogus") as e:
        resolve(tiny)
    assert str(core) in str(e.value)


def test_unknown_vlnv(tiny):
    root, _ = tiny
    (root / "tiny" / "design.yaml").write_text(DESIGN_YAML)
    (root / "tiny" / "tiny.core").write_text(CORE.replace("filesets:\n  rtl:\n", "filesets:\n  rtl:\n    depend: [kabe:lib:nope:0.1.0]\n", 1))
    with pytest.raises(CoreError, match=r"kabe_lib_nope.*missing packages.*Fix: dependency kabe_lib_nope .* no core library FuseSoC reads \(cores/ included\)"):
        resolve(tiny)


def test_unknown_design_vlnv(tiny):
    import dataclasses

    root, build = tiny
    ghost = dataclasses.replace(designs.get("tiny", root), core="kabe:design:ghost:0.1.0")
    with pytest.raises(CoreError, match=r"ghost', but this core was not found.*Fix:") as e:
        cores.resolve(ghost, "sim", build_root=build)
    assert str(root / "tiny" / "tiny.core") in str(e.value)


def test_failing_generator(tiny):
    root, _ = tiny
    (root / "tiny" / "tiny.core").write_text(CORE.replace("value: 3", "value: -1"))
    with pytest.raises(CoreError, match=r"Failed to run generator.*value must be >= 0.*Fix: the core's generator failed"):
        resolve(tiny)


def test_unknown_target(tiny):
    with pytest.raises(CoreError, match=r"no target 'vivado'.*Fix: add a `vivado:` target"):
        resolve(tiny, "vivado")


def test_missing_source_file(tiny):
    root, _ = tiny
    (root / "tiny" / "tiny.core").write_text(CORE.replace("[tiny.v]", "[missing.v]"))
    with pytest.raises(CoreError, match=r"missing\.v"):
        resolve(tiny)


@pytest.mark.parametrize("target", ["sim", "synth"])
def test_stage4_includes_generated_adder_tree(target):
    e = cores.resolve("stage4", target)
    assert e.generated_files, "stage4's generator output is missing from the EDAM"
    assert any(p.suffix == ".v" for p in e.generated_files)
    assert set(e.generated_files) <= set(e.sources) | set(e.include_files)
    assert e.toplevel and all(p.exists() for p in e.sources)


@pytest.mark.parametrize("name", sorted({"stage2", "stage2_2hp", "stage3", "stage3_naive", "stage4"}
                                         | {p.parent.name for p in CORES.glob("*/design.yaml")}))
def test_repository_designs_resolve(name):
    designs.get(name)  # a planned design that is missing or does not load fails, never skips
    for target in ("sim", "synth"):
        e = cores.resolve(name, target)
        if designs.get(name).hls is not None:  # C++ (file_type cppSource): the kernel's sources, its top function
            assert any(f.file_type == "cppSource" for f in e.files) and e.toplevel
            continue
        assert e.sources and e.toplevel


def test_a_missing_dependency_and_another_core_that_does_not_parse_are_named_as_the_fix():
    """FuseSoC's solver names the missing core ('a' <- 'missing'), and a parse error in an unrelated core
    of the library is logged beside it: the fix names both, not "fix the core file's syntax"."""
    from kabe.project.cores import _fix_hint
    msg = ("parse error in /p/cores/b/b.core: did not find expected ',' | Failed to resolve dependencies. "
           "Requirements: 'user_design_a == 0.1.0-0' <- 'zipcpu_wb_nothere == 1.0-0' / "
           "+user_design_a-0.1.0-0 was ignored because it depends on missing packages")
    fix = _fix_hint(msg, "synth", "user:design:a:0.1.0", "/p/cores/a/a.core")
    assert fix.startswith("dependency zipcpu_wb_nothere ") and "library add" in fix
    assert "/p/cores/b/b.core does not parse" in fix
    own = _fix_hint("parse error in /p/cores/a/a.core: bad", "synth", "user:design:a:0.1.0", "/p/cores/a/a.core")
    assert own.startswith("fix the core file's syntax")


def test_a_file_missing_from_a_dependency_is_blamed_on_that_core_not_the_design(tmp_path):
    from types import SimpleNamespace
    from kabe.project.cores import _parse_eda
    (tmp_path / "top.v").write_text("module top; endmodule\n")
    eda = tmp_path / "x.eda.yml"
    eda.write_text("files:\n"
                   "- {name: top.v, file_type: verilogSource, core: 'user:design:ccf:0.1.0'}\n"
                   "- {name: lib/src/cc_sync.sv, file_type: systemVerilogSource, core: 'vendor::cells:1.0'}\n")
    design = SimpleNamespace(core="user:design:ccf:0.1.0", core_file=tmp_path / "ccf.core")
    with pytest.raises(CoreError, match=r"^core vendor::cells:1.0 \(a dependency of user:design:ccf:0.1.0, from its "
                                        r"library\) lists file\(s\) that do not exist: .*cc_sync.sv\. Fix: .*library"):
        _parse_eda(eda, tmp_path, design, "synth", design.core)
    eda.write_text("files:\n- {name: gone.v, file_type: verilogSource, core: 'user:design:ccf:0.1.0'}\n")
    with pytest.raises(CoreError, match=r"ccf.core: target 'synth' lists file\(s\) that do not exist: .*gone.v"):
        _parse_eda(eda, tmp_path, design, "synth", design.core)
