"""kabe.project.cores never hands out stale generated RTL (red team 2, reproducer 15): a project's own FuseSoC
generator may read any file (here a data file a `generate:` parameter names), so a core tree that runs
one is set up again by FuseSoC once in every kabe process; a tree without one keeps the cheap stamp;
force=True (cache=off) always sets up again; a file a core stops listing under `copyto` leaves the work
root; and the generated files enter the build's content key (a changed output is a miss, the same
output regenerated is a hit). Real FuseSoC, a few runs of well under a second each."""

from __future__ import annotations

import json

import pytest

from kabe.project import cores, designs
from kabe.cache import cache

pytestmark = pytest.mark.e2e  # end to end: real tools, minutes (the fast tier leaves it out: -m 'not e2e')

DESIGN_YAML = "core: user:design:gn:0.1.0\nverify: {model: 'llm_accel.model.frames:probe_stimulus'}\nports: 1\nconstraints: gn.xdc\n"
# the reproducer's generator, shortened: the top's constant is read from the file `keyfile` names,
# relative to the calling core's folder (files_root)
GEN = """\
import sys, yaml, pathlib
cfg = yaml.safe_load(open(sys.argv[1]))
key = int(pathlib.Path(cfg["files_root"], cfg["parameters"]["keyfile"]).read_text())
pathlib.Path("gn_top.v").write_text("module gn_top(input wire clk, output wire [7:0] k);\\n"
                                    "  assign k = 8'd%d;\\nendmodule\\n" % key)
name = cfg["vlnv"].split(":")[2]
pathlib.Path(name + ".core").write_text("CAPI=2:\\n" + yaml.safe_dump({"name": cfg["vlnv"],
    "filesets": {"rtl": {"files": ["gn_top.v"], "file_type": "verilogSource"}},
    "targets": {"default": {"filesets": ["rtl"]}}}))
"""
GEN_CORE = """\
CAPI=2:
name: user:gen:xor:1.0
generators:
  gen_xor:
    interpreter: python3
    command: gen_xor.py
"""
CORE = """\
CAPI=2:
name: user:design:gn:0.1.0
filesets:
  rtl: {depend: [user:gen:xor:1.0]}
generate:
  top:
    generator: gen_xor
    parameters: {keyfile: ../../data/key.txt}
targets:
  sim:
    filesets: [rtl]
    generate: [top]
    toplevel: gn_top
    flow: sim
    flow_options: {tool: verilator}
"""
PLAIN_CORE = """\
CAPI=2:
name: user:design:gn:0.1.0
filesets:
  rtl:
    files: [gn_top.v]
    file_type: verilogSource
  tables:
    files: [{table.hex: {copyto: table.hex}}]
    file_type: user
targets:
  sim:
    filesets: [rtl%s]
    toplevel: gn_top
    flow: sim
    flow_options: {tool: verilator}
"""


@pytest.fixture
def project(tmp_path):
    """tmp/cores/gn (the design), tmp/gen (the generator, a library folder outside cores/), tmp/data."""
    cores_root = tmp_path / "cores"
    d = cores_root / "gn"
    d.mkdir(parents=True)
    (d / "design.yaml").write_text(DESIGN_YAML)
    (d / "gn.xdc").write_text("create_clock -period 7.000 -name clk [get_ports clk]\n")
    (d / "gn.core").write_text(CORE)
    gen = cores_root / "lib_gen"  # FuseSoC finds it through --cores-root; kabe hashes no .py under it below
    gen.mkdir()
    (gen / "gen.core").write_text(GEN_CORE)
    (gen / "gen_xor.py").write_text(GEN)
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "key.txt").write_text("17\n")
    return cores_root, tmp_path / "build"


def resolve(project, target="sim", **kw):
    cores_root, build = project
    return cores.resolve("gn", target, cores_root=cores_root, build_root=build, **kw)


def new_process():
    """What a new kabe process (the next build) starts from: no target set up yet in this one."""
    cores._FRESH.clear()


def stamp_of(edam) -> dict:
    return json.loads((edam.work_root / "kabe_resolve.json").read_text())


def top_of(edam) -> str:
    (top,) = edam.generated_files
    return top.read_text()


def test_a_data_file_a_generator_reads_is_read_again_by_the_next_build(project):
    cores_root, _ = project
    first = resolve(project)
    assert "8'd17" in top_of(first) and stamp_of(first)["rerun"] is True
    (cores_root.parent / "data" / "key.txt").write_text("18\n")  # in no core file, in no hashed folder
    assert "8'd17" in top_of(resolve(project))  # the same process (one build): its first answer
    new_process()
    again = resolve(project)
    assert "8'd18" in top_of(again)
    assert again.generated_files == first.generated_files  # same parameters, same script: the same path


def test_an_input_cached_generator_is_run_again_too(project, monkeypatch, tmp_path):
    """`cache_type: input`: FuseSoC reuses the output while parameters and script are unchanged, even
    when the data file the generator reads changed. kabe keeps FuseSoC's cache per set-up (inside the
    work root, not ~/.cache/fusesoc), so the next build reads the new data as for any generator."""
    cores_root, _ = project
    home = tmp_path / "home-cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(home))  # where FuseSoC would keep it without kabe
    gen_core = cores_root / "lib_gen" / "gen.core"
    gen_core.write_text(GEN_CORE + "    cache_type: input\n")
    first = resolve(project)
    assert "8'd17" in top_of(first) and first.generated_files[0].is_relative_to(first.work_root)
    assert not home.exists() or not list(home.rglob("*.v"))
    (cores_root.parent / "data" / "key.txt").write_text("18\n")
    new_process()
    assert "8'd18" in top_of(resolve(project))
    (cores_root.parent / "data" / "key.txt").write_text("19\n")
    assert "8'd19" in top_of(resolve(project, force=True))  # cache=off, in the same process


def test_an_edited_generator_script_is_run_again(project):
    cores_root, _ = project
    first = resolve(project)
    script = cores_root / "lib_gen" / "gen_xor.py"
    script.write_text(script.read_text().replace("% key)", "% (key + 5))"))
    new_process()
    again = resolve(project)
    assert "8'd22" in top_of(again)
    # FuseSoC names the generator's folder after its script's hash: the old folder is gone from the work root
    assert not first.generated_files[0].exists()
    assert len(list((again.work_root / "generator_cache").iterdir())) == 1


def test_force_sets_up_again_and_an_unchanged_output_is_left_in_place(project):
    first = resolve(project)
    top = first.generated_files[0]
    inode, mtime = top.stat().st_ino, top.stat().st_mtime_ns
    stamp = first.work_root / "kabe_resolve.json"
    before = stamp.stat().st_mtime_ns
    again = resolve(project, force=True)
    assert stamp.stat().st_mtime_ns != before  # FuseSoC ran
    assert (top.stat().st_ino, top.stat().st_mtime_ns) == (inode, mtime)  # same bytes: the file was not touched
    assert again.files == first.files
    assert not list(first.work_root.parent.glob(".sim.new-*"))  # FuseSoC's scratch folder is gone


def test_without_a_generator_the_stamp_still_holds_and_force_still_works(project):
    cores_root, _ = project
    (cores_root / "gn" / "gn.core").write_text(PLAIN_CORE % "")
    (cores_root / "gn" / "gn_top.v").write_text("module gn_top(input wire clk);\nendmodule\n")
    first = resolve(project)
    assert stamp_of(first)["rerun"] is False
    stamp = first.work_root / "kabe_resolve.json"
    before = stamp.stat().st_mtime_ns
    new_process()
    resolve(project)
    assert stamp.stat().st_mtime_ns == before  # FuseSoC did not run
    resolve(project, force=True)
    assert stamp.stat().st_mtime_ns != before


def test_a_copyto_file_is_refreshed_and_leaves_when_no_longer_listed(project):
    cores_root, _ = project
    d = cores_root / "gn"
    (d / "gn.core").write_text(PLAIN_CORE % ", tables")
    (d / "gn_top.v").write_text("module gn_top(input wire clk);\nendmodule\n")
    (d / "table.hex").write_text("01\n")
    first = resolve(project)
    copy = first.work_root / "table.hex"
    assert copy.read_text() == "01\n" and copy in [f.path for f in first.files]
    assert stamp_of(first)["rerun"] is True  # a .hex is not hashed for the stamp: its copy is re-made
    (d / "table.hex").write_text("02\n")
    new_process()
    assert resolve(project).files == first.files and copy.read_text() == "02\n"
    (d / "gn.core").write_text(PLAIN_CORE % "")  # the core stops listing it
    new_process()
    last = resolve(project)
    assert not copy.exists() and copy not in [f.path for f in last.files]
    assert stamp_of(last)["rerun"] is False


def test_kabes_own_generator_keeps_the_stamp(tmp_path):
    # stage2's top comes from kabe:gen:top only (kabe/generators: reads nothing but its parameters, hashed)
    e = cores.resolve("stage2", "sim", build_root=tmp_path / "build")
    assert e.generated_files and stamp_of(e)["rerun"] is False


def test_generated_files_are_in_the_build_key(project, monkeypatch):
    cores_root, _ = project
    monkeypatch.setattr(cache, "kabe_code", lambda root=cache.KABE_HOME: [])  # kabe's code: the same in all three

    def key():
        edam = resolve(project)
        design = designs.get("gn", cores_root=cores_root)
        return cache.compute(design, "open", {"sim": edam}, sim_check_rows=0, tools={}, root=cores_root.parent)

    first = key()
    assert any("generator_cache/" in f and f.endswith("gn_top.v") for f in first.material["files"])
    new_process()
    assert key().key == first.key  # regenerated, the same output: a hit
    (cores_root.parent / "data" / "key.txt").write_text("18\n")
    new_process()
    changed = key()
    assert changed.key != first.key  # a miss, because the generated top changed
    assert cache.difference(first.material, changed.material).endswith("gn_top.v changed")
