"""A design's own top through the Vivado flow, on the STAND-IN for Vivado (tests/standin/vivado; not AMD
Vivado): a design written from scratch (tests/flows/scratch_design: board pins, a clocking wizard as .xci
and one as IP Tcl, a block design script, a VHDL and a SystemVerilog file, a post-route hook) through `doit build:<design>
flow=vivado` (its VHDL package in a library of its own, FuseSoC's logical_name) in a throwaway copy of this checkout; then a second design and commit with the same IPs
(nothing regenerated: the IP cache), and an IP property changed (exactly that IP regenerated)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kabe.base import provenance
from kabe.flows.vivado import project
from tests import repo_copy
from tests.flows.test_vivado_flow import calls

HERE = Path(__file__).resolve().parent
SCRATCH = HERE / "scratch_design"
ROOT = HERE.parent.parent
pytestmark = [pytest.mark.e2e, pytest.mark.skipif(shutil.which("tclsh") is None or shutil.which("make") is None,
                                reason="the Vivado stand-in runs in tclsh, edalize's Makefile in make")]


def standin_fixtures(dest: Path) -> Path:
    """The stand-in's reports with the design's own clock name (the PYNQ fixtures name the PS7's FCLK0):
    the gate must take the clock from the report, whatever the design calls it."""
    shutil.copytree(ROOT / "tests" / "fixtures" / "vivado", dest)
    for f in dest.glob("flow_*"):
        f.write_text(f.read_text().replace("clk_fpga_0", "sysclk_125"))
    return dest


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("own_top")
    copy = repo_copy.make(tmp / "repo")
    shutil.copytree(SCRATCH, copy / "cores" / "scratch_clk")
    repo_copy.git(copy, "add", "-A")
    repo_copy.git(copy, "commit", "-qm", "a design from scratch")
    env = dict(os.environ, PYTHONPATH=str(copy), KABE_VIVADO_IP_CACHE=str(tmp / "ip_cache"),
               KABE_STANDIN_RECORD=str(tmp / "record1.txt"), KABE_STANDIN_FIXTURES=str(standin_fixtures(tmp / "fx")))
    env["PATH"] = os.pathsep.join([str(copy / "tests" / "standin"), str(Path(sys.executable).parent), env["PATH"]])
    return copy, env, tmp


def doit(copy: Path, env: dict, *args: str) -> tuple[int, str]:
    p = subprocess.run([sys.executable, "-m", "doit", *args], cwd=copy, env=env, capture_output=True, text=True,
                       timeout=900)
    return p.returncode, p.stdout + p.stderr


def archive_of(copy: Path, design: str) -> Path:
    sha = repo_copy.git(copy, "rev-parse", "HEAD")
    return copy / "reports" / sha / design / "vivado"


def ip_generated(record: Path) -> list[str]:
    return [c[1] for c in calls(record) if c[0] == "IP_GENERATED"]


def test_a_design_from_scratch_builds_signs_off_and_archives(scratch):
    copy, env, tmp = scratch
    code, out = doit(copy, env, "build:scratch_clk", "flow=vivado")
    assert code == 0, out
    recs = calls(tmp / "record1.txt")
    names = [c[0] for c in recs]
    # every file of the core reached Vivado with its type
    read = {Path(c[-1]).name: c[0] for c in recs if c[0] in ("read_verilog", "read_vhdl", "read_xdc", "read_ip")}
    assert read["scratch_top.v"] == "read_verilog" and read["blink.vhd"] == "read_vhdl"
    assert read["scratch_clk.xdc"] == "read_xdc"
    assert any(c[:2] == ["read_verilog", "-sv"] and c[-1].endswith("both_locked.sv") for c in recs)
    assert read["clk_main.xci"] == "read_ip" and read["clk_aux.xci"] == "read_ip"
    # a VHDL file with the core's logical_name goes into that library (edalize: read_vhdl -library), the rest
    # into Vivado's default one
    libs = {Path(c[-1]).name: c[c.index("-library") + 1] if "-library" in c else None for c in recs if c[0] == "read_vhdl"}
    assert libs == {"blink_pkg.vhd": "acme_lib", "blink.vhd": None}, libs
    # both IPs generated once (first build), in the IP cache's run: the .xci read, the IP Tcl created
    assert sorted(ip_generated(tmp / "record1.txt")) == ["clk_aux", "clk_main"]
    assert any(c[0] == "create_ip" and "clk_aux" in c for c in recs)
    assert "upgrade_ip" not in names
    # the block design: created by its script, validated, generated, wrapped as the top's instance
    assert any(c[0] == "create_bd_design" and c[1] == "scratch_bd" for c in recs)
    assert "validate_bd_design" in names and "save_bd_design" in names
    assert any(c[0] == "generate_target" and c[-1].endswith("scratch_bd.bd") for c in recs)
    # hooks: the design's post-route hook and kabe's dispatcher before the bitstream, in impl_1
    hooks = [(c[1], c[2], Path(c[3]).name) for c in recs if c[0] == "HOOK"]
    assert ("ROUTE_DESIGN", "POST", "post_route.tcl") in hooks
    assert ("WRITE_BITSTREAM", "PRE", "kabe_hooks_write_bitstream_pre.tcl") in hooks
    assert any(c[:2] == ["PROP", "impl_1"] and c[2] == "STEPS.PLACE_DESIGN.ARGS.DIRECTIVE" and c[3] == "Explore"
               for c in recs)
    # the generated Tcl: edalize's project sources kabe's Tcl and the design's, and reads no IP itself
    work = copy / "build" / "scratch_clk" / "vivado" / "edalize"
    tcl = (work / "kabe_scratch_clk.tcl").read_text()
    assert "set_property top scratch_top [current_fileset]" in tcl
    assert "own_read_ips.tcl" in tcl and "own_block_designs.tcl" in tcl
    assert "scratch_bd.tcl" in (work / "kabe_settings.tcl").read_text()  # sourced by kabe's block-design step
    assert not [ln for ln in tcl.splitlines() if ln.startswith(("read_ip", "upgrade_ip"))]
    assert "clk_aux.tcl" not in tcl  # an IP Tcl is the IP cache's input, not sourced into the project
    # the verdict from the stand-in's reports, with the design's own clock; the archive
    arch = archive_of(copy, "scratch_clk")
    metrics = json.loads((arch / "metrics.json").read_text())
    assert metrics["gate"]["status"] == "pass", metrics["gate"]
    assert [c["name"] for c in metrics["timing"]["clocks"]] [0] == "sysclk_125"
    manifest = json.loads((arch / "manifest.json").read_text())
    assert {"bit", "xsa", "hwh"} <= set(manifest["artifacts"]), manifest["artifacts"]
    keys = json.loads((arch / "ip_cache.json").read_text())
    assert {k["name"]: k["hit"] for k in keys} == {"clk_main": False, "clk_aux": False}
    print("IP cache keys:", {k["name"]: k["key"] for k in keys})
    print(f"stand-in record: {len(recs)} Vivado commands; gate {metrics['gate']['status']}; "
          f"clocks {[c['name'] for c in metrics['timing']['clocks']]}; wns {metrics['timing'].get('wns_ns')}")
    print(out[-1500:])
    # the commit inside the bitstream (USR_ACCESS), the block design's .hwh kept
    sha = repo_copy.git(copy, "rev-parse", "HEAD")
    bit = next(arch.glob("*.bit"))
    assert project.read_usr_access(bit) == project.usr_access_word(provenance.Commit(sha=sha, dirty=False))
    assert (arch / "scratch_bd.hwh").is_file() or any(arch.glob("*.hwh"))


def test_a_changed_hook_is_a_cache_miss_and_a_docs_commit_a_hit(scratch):
    copy, env, tmp = scratch
    (copy / "NOTES.md").write_text("docs only\n")
    repo_copy.git(copy, "add", "-A")
    repo_copy.git(copy, "commit", "-qm", "docs only")
    code, out = doit(copy, dict(env, KABE_STANDIN_RECORD=str(tmp / "record_hit.txt")), "build:scratch_clk",
                     "flow=vivado")
    assert code == 0 and "cache hit" in out, out
    assert calls(tmp / "record_hit.txt") == []  # no Vivado ran
    hook = copy / "cores" / "scratch_clk" / "hooks" / "post_route.tcl"
    hook.write_text(hook.read_text() + "puts \"acme: one more line\"\n")
    repo_copy.git(copy, "commit", "-qam", "the post-route hook changes")
    code, out = doit(copy, dict(env, KABE_STANDIN_RECORD=str(tmp / "record_miss.txt")), "build:scratch_clk",
                     "flow=vivado")
    assert code == 0 and "cache miss" in out and "post_route.tcl" in out, out
    assert ip_generated(tmp / "record_miss.txt") == []  # the IPs did not change: from the IP cache


def test_the_same_ips_in_another_design_and_commit_are_not_regenerated(scratch):
    copy, env, tmp = scratch
    other = copy / "cores" / "scratch_two"
    shutil.copytree(copy / "cores" / "scratch_clk", other)
    (other / "scratch_clk.core").rename(other / "scratch_two.core")
    for f in (other / "scratch_two.core", other / "design.yaml"):
        f.write_text(f.read_text().replace("scratch_clk:0.1.0", "scratch_two:0.1.0"))
    repo_copy.git(copy, "add", "-A")
    repo_copy.git(copy, "commit", "-qm", "a second design with the same IPs")
    env2 = dict(env, KABE_STANDIN_RECORD=str(tmp / "record2.txt"))
    code, out = doit(copy, env2, "build:scratch_two", "flow=vivado")
    assert code == 0, out
    assert ip_generated(tmp / "record2.txt") == []
    assert not any(c[0] in ("create_ip", "synth_ip") for c in calls(tmp / "record2.txt"))
    first = {k["name"]: k["key"] for k in json.loads((archive_of(copy, "scratch_two") / "ip_cache.json").read_text())}
    hits = {k["name"]: k["hit"] for k in json.loads((archive_of(copy, "scratch_two") / "ip_cache.json").read_text())}
    assert hits == {"clk_main": True, "clk_aux": True}

    # one property of the IP Tcl's clocking wizard changes: exactly that IP is generated again
    tcl = other / "ip" / "clk_aux.tcl"
    tcl.write_text(tcl.read_text().replace("{50.000}", "{40.000}"))
    repo_copy.git(copy, "commit", "-qam", "clk_aux at 40 MHz")
    env3 = dict(env, KABE_STANDIN_RECORD=str(tmp / "record3.txt"))
    code, out = doit(copy, env3, "build:scratch_two", "flow=vivado")
    assert code == 0, out
    assert ip_generated(tmp / "record3.txt") == ["clk_aux"]
    after = {k["name"]: k["key"] for k in json.loads((archive_of(copy, "scratch_two") / "ip_cache.json").read_text())}
    assert after["clk_main"] == first["clk_main"] and after["clk_aux"] != first["clk_aux"]
    print("IP cache keys, clk_aux at 40 MHz (only its key changed):", after)


def test_an_xci_from_another_vivado_is_named_not_upgraded(scratch):
    copy, env, tmp = scratch
    env4 = dict(env, KABE_STANDIN_RECORD=str(tmp / "record4.txt"), KABE_STANDIN_VERSION="2024.1")
    code, out = doit(copy, env4, "build:scratch_clk", "flow=vivado", "cache=off")
    assert code == 2, out
    assert "was made with Vivado 2023.2" in out and "upgrade" in out and "pin Vivado 2023.2" in out
    assert "Traceback" not in out
    assert "upgrade_ip" not in [c[0] for c in calls(tmp / "record4.txt")]


def test_another_clone_takes_the_ips_from_units_it_pulled(scratch):
    """The archive's side (signing, push, pull) is another module's; what it moves is the IP cache's unit:
    exported here, imported into another clone's empty IP cache, and used there without generating."""
    from kabe.flows.vivado import ip_cache

    copy, env, tmp = scratch
    keys = json.loads((archive_of(copy, "scratch_two") / "ip_cache.json").read_text())  # HEAD's build
    pulled = tmp / "pulled"
    for k in keys:
        ip_cache.export_unit(k["key"], pulled, tmp / "ip_cache")
    clone = tmp / "clone"
    subprocess.run(["git", "clone", "-q", str(copy), str(clone)], check=True)
    fresh = tmp / "ip_cache_clone"
    assert sorted(ip_cache.import_unit(u, fresh) for u in pulled.iterdir()) == sorted(k["key"] for k in keys)
    env5 = dict(env, PYTHONPATH=str(clone), KABE_VIVADO_IP_CACHE=str(fresh),
                KABE_STANDIN_RECORD=str(tmp / "record5.txt"))
    env5["PATH"] = env["PATH"].replace(str(copy / "tests" / "standin"), str(clone / "tests" / "standin"))
    code, out = doit(clone, env5, "build:scratch_two", "flow=vivado")
    assert code == 0, out
    assert ip_generated(tmp / "record5.txt") == [] and "from the IP cache" in out


@pytest.mark.parametrize("scenario", ["violated", "missing"])
def test_the_gate_fails_an_own_top_whose_report_fails_or_is_missing(scratch, scenario):
    copy, env, tmp = scratch
    env6 = dict(env, KABE_STANDIN_SCENARIO=scenario, KABE_STANDIN_RECORD=str(tmp / f"record_{scenario}.txt"))
    code, out = doit(copy, env6, "build:scratch_two", "flow=vivado", "cache=off")
    assert code == 1, out
    assert "gate FAIL" in out
