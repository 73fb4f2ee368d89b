"""The design's own top on a Versal part, on the STAND-IN for Vivado (tests/standin/vivado; not AMD Vivado):
tests/flows/versal_own_design (board v80, the xcv80 part; a pin clock through a Versal clocking wizard as IP
Tcl, VHDL-2008 with a package in a library of its own, a post-route hook and a hook after the image) through
`doit build:versal_own flow=vivado` in a throwaway copy of this checkout. The plain shape assumes no PS7 and no
.bit: impl_1 runs to write_device_image, the image archived is a .pdi, the .xsa holds it, and no AVED is
needed (kabe's V80 shell, tests/flows/test_vivado_versal.py, is the other shape)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests import repo_copy
from tests.flows.test_vivado_flow import calls

HERE = Path(__file__).resolve().parent
DESIGN = HERE / "versal_own_design"
ROOT = HERE.parent.parent
pytestmark = pytest.mark.skipif(shutil.which("tclsh") is None or shutil.which("make") is None,
                                reason="the Vivado stand-in runs in tclsh, edalize's Makefile in make")


@pytest.fixture(scope="module")
def versal(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("own_versal")
    copy = repo_copy.make(tmp / "repo")
    shutil.copytree(DESIGN, copy / "cores" / "versal_own")
    repo_copy.git(copy, "add", "-A")
    repo_copy.git(copy, "commit", "-qm", "a plain top on a Versal part")
    env = dict(os.environ, PYTHONPATH=str(copy), KABE_VIVADO_IP_CACHE=str(tmp / "ip_cache"),
               KABE_STANDIN_RECORD=str(tmp / "record.txt"))
    # the stand-in's reports in Versal's layout (a real 2023.2 V80 report), the wizard's output named as this
    # design's would be: the gate must take the clocks from the report, whatever the design calls them
    fx = shutil.copytree(ROOT / "tests" / "fixtures" / "vivado_v80", tmp / "fx")
    for f in fx.glob("flow_*"):
        f.write_text(f.read_text().replace("clkout1_primitive", "clk_out1_wiz_v250"))  # same width: columns kept
    env["KABE_STANDIN_FIXTURES"] = str(fx)
    env["PATH"] = os.pathsep.join([str(copy / "tests" / "standin"), str(Path(sys.executable).parent), env["PATH"]])
    p = subprocess.run([sys.executable, "-m", "doit", "build:versal_own", "flow=vivado"], cwd=copy, env=env,
                       capture_output=True, text=True, timeout=900)
    return copy, env, tmp, p.returncode, p.stdout + p.stderr


def test_a_plain_top_on_versal_writes_a_device_image_not_a_bitstream(versal):
    copy, env, tmp, code, out = versal
    assert code == 0, out
    recs = calls(tmp / "record.txt")
    names = [c[0] for c in recs]
    # impl_1 to Versal's image step, never to write_bitstream; kabe's hooks before it, the design's after it
    launches = [c for c in recs if c[0] == "launch_runs" and "impl_1" in c]
    assert launches and all(c[c.index("-to_step") + 1] == "write_device_image" for c in launches), launches
    assert not any("write_bitstream" in c for c in launches)
    hooks = [(c[1], c[2], Path(c[3]).name) for c in recs if c[0] == "HOOK"]
    assert ("WRITE_DEVICE_IMAGE", "PRE", "kabe_hooks_write_device_image_pre.tcl") in hooks
    assert ("ROUTE_DESIGN", "POST", "post_route.tcl") in hooks
    assert ("WRITE_DEVICE_IMAGE", "POST", "after_image.tcl") in hooks
    assert not any(h[0] == "WRITE_BITSTREAM" for h in hooks)
    # no processing system of kabe's, no AVED: the design's own files only
    assert not any(c[0] == "create_bd_cell" for c in recs) and "bootgen" not in out
    # the part and the files: the xcv80, the VHDL package in its library (VHDL-2008), the IP from the IP cache's run
    assert any(c[0] == "create_project" and any(a.startswith("xcv80") for a in c) for c in recs)
    vhdl = {Path(c[-1]).name: c for c in recs if c[0] == "read_vhdl"}
    assert vhdl["pulse_pkg.vhd"][vhdl["pulse_pkg.vhd"].index("-library") + 1] == "acme_versal"
    assert "-vhdl2008" in vhdl["pulse_pkg.vhd"] and "-library" not in vhdl["pulse.vhd"]
    assert any(c[0] == "create_ip" and "xilinx.com:ip:clk_wizard:1.0" in c and "clk_wiz_v" in c for c in recs)
    assert any(c[0] == "read_ip" and c[-1].endswith("clk_wiz_v.xci") for c in recs)
    assert "write_hw_platform" in names  # the .xsa: Versal has a processing system
    # the archive: a .pdi and an .xsa holding it, the commit in USR_ACCESS, the gate on Vivado's Versal report
    sha = repo_copy.git(copy, "rev-parse", "HEAD")
    arch = copy / "reports" / sha / "versal_own" / "vivado"
    manifest = json.loads((arch / "manifest.json").read_text())
    assert set(manifest["artifacts"]) == {"pdi", "xsa"}, manifest["artifacts"]
    pdi = (arch / "kabe_versal_own.pdi").read_bytes()
    assert b"STAND-IN device image" in pdi and b"part=xcv80" in pdi
    assert f"USR_ACCESS=0x0{sha[:7].upper()}".encode() in pdi
    with zipfile.ZipFile(arch / "kabe_versal_own.xsa") as z:
        assert z.read("versal_top.pdi") == pdi
    assert not list(arch.glob("*.bit"))
    metrics = json.loads((arch / "metrics.json").read_text())
    assert metrics["gate"]["status"] == "pass", metrics["gate"]
    assert metrics["timing"]["estimated"] is False
    assert "clk_out1_wiz_v250" in [c["name"] for c in metrics["timing"]["clocks"]]
    print(f"Versal own top: {len(recs)} Vivado commands on the stand-in; artifacts {sorted(manifest['artifacts'])}; "
          f"gate {metrics['gate']['status']}; clocks {[c['name'] for c in metrics['timing']['clocks']]}")


def test_the_versal_build_is_judged_again_from_its_archive(versal):
    """A docs-only commit: the archived build is reused, its numbers derived again from the archived reports and
    its .pdi (collect.archived_project knows the own top's image on Versal)."""
    copy, env, tmp, code, _ = versal
    assert code == 0
    (copy / "NOTES.md").write_text("docs only\n")
    repo_copy.git(copy, "add", "-A")
    repo_copy.git(copy, "commit", "-qm", "docs only")
    p = subprocess.run([sys.executable, "-m", "doit", "build:versal_own", "flow=vivado"], cwd=copy,
                       env=dict(env, KABE_STANDIN_RECORD=str(tmp / "record_hit.txt")), capture_output=True, text=True,
                       timeout=900)
    assert p.returncode == 0 and "cache hit" in p.stdout + p.stderr, p.stdout + p.stderr
    assert calls(tmp / "record_hit.txt") == []


def test_a_vhdl_library_name_that_is_not_an_identifier_is_refused(tmp_path):
    """edalize writes logical_name into the project Tcl as it is (read_vhdl -library <name>): kabe lets through a
    VHDL identifier only, and names the file otherwise."""
    from types import SimpleNamespace

    from kabe.project.designs import VivadoSettings
    from kabe.flows.base import FlowError
    from kabe.flows.vivado import own_top

    vhd = tmp_path / "pkg.vhd"
    vhd.write_text("package p is end package;\n")
    design = SimpleNamespace(constraints=tmp_path / "x.xdc", vivado=VivadoSettings())

    def edam(name):
        return SimpleNamespace(files=[SimpleNamespace(path=vhd, file_type="vhdlSource", is_include_file=False,
                                                      core="acme:x:y:1", logical_name=name)])

    assert own_top.classify(edam("acme_lib"), design, "2023.2")["edalize"][0]["logical_name"] == "acme_lib"
    assert "logical_name" not in own_top.classify(edam(""), design, "2023.2")["edalize"][0]
    for bad in ("acme lib", "x]; exec rm -rf /tmp/y; #", "9lib"):
        with pytest.raises(FlowError, match=r"pkg.vhd is not a VHDL library name"):
            own_top.classify(edam(bad), design, "2023.2")
