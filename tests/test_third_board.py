"""A third board is a profile and its block-design Tcl, with no code anywhere else (issue 24).

A project made from scratch (`kabe new`) adds the AMD Kria KV260 as boards/kv260.yaml with its block
design beside it (boards/kv260_ps8.tcl) and names it in design.yaml. Nothing of kabe knows a KV260:
the design loads with the profile's part and lanes, the build's cache key carries the part, the board
and the profile file (so an edited synth_family is another key), the open flow's Yosys maps to the
profile's fabric (`synth_xilinx -family xcup`: the design's multiplier is a DSP48E2, UltraScale+'s DSP,
counted as a DSP)
and gives no timing number where the profile says kabe cannot time it (the gate's "not estimated",
which design.yaml expects, so `kabe build` exits 0; a cache hit re-derives it). The vivado flow refuses
this KV260 profile in one line (it names no `dma:` facts for kabe's block design; kabe's own kv260 profile
has them and builds: tests/flows/test_vivado_ps8.py), and for a Zynq-7000
board of the project's own (a ZedBoard, boards/zed.yaml and zed_ps7.tcl giving ::kabe_board::ps7_preset)
its generated project (no Vivado runs) is created for that part and sources that Tcl. One real Yosys run.

The part: `xck26-sfvc784-2LV-c`, as create_project names it for the KV260 (the K26 SOM) in AMD's and
users' public KV260 projects; the PS8 (zynq_ultra_ps_e) as Xilinx/kria-base-hardware's config_bd.tcl
creates it. The Tcl below is never run here: only generated into the project.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

GIT_ID = ["-c", "user.name=kabe test", "-c", "user.email=test@kabe.invalid", "-c", "commit.gpgsign=false"]
PART = "xck26-sfvc784-2LV-c"

PROFILE = f"""# a project's own board profile (docs/boards.md): the Kria KV260 Vision AI Starter Kit (K26 SOM)
name: Kria KV260
part: {PART}
family: zynq-ultrascale+
open_flow:
  synth_family: xcup         # the part's own fabric: Yosys's counts are UltraScale+ cells, no proxy
  timing: not_estimated      # kabe's pre-route model is fitted on 7-series paths only
constraints: kv260.xdc
vivado:
  block_design: kv260_ps8.tcl
  outputs: [bit, hwh, xsa]
deploy:
  program: pynq
memory:
  kind: DDR4, 64-bit
  ports: {{name: HP port, count: 4, beat_bytes: 16}}   # S_AXI_HP0..3_FPD at 128 bits
"""
ZED_PART = "xc7z020clg484-1"  # the ZedBoard's Zynq-7020 (Avnet/Digilent board files)
ZED_PROFILE = f"""# a project's own board profile: the ZedBoard (Zynq-7020 in the clg484 package)
name: ZedBoard
part: {ZED_PART}
family: zynq-7000
open_flow: {{synth_family: xc7, timing: estimated}}
constraints: zed.xdc
vivado: {{block_design: zed_ps7.tcl, outputs: [bit, hwh, xsa]}}
deploy: {{program: pynq}}
memory: {{kind: "DDR3, 32-bit", ports: {{name: HP port, count: 2, beat_bytes: 8}}}}
dma: {{length_width: 26, burst: 16}}   # the AXI DMA kabe's block design places per HP port
"""
# the ZedBoard's PS7 settings as kabe_bd.tcl asks the board's Tcl for them (a few, for the test)
ZED_BLOCK_DESIGN = """namespace eval ::kabe_board {}
proc ::kabe_board::ps7_preset {} {
  return [list CONFIG.PCW_CRYSTAL_PERIPHERAL_FREQMHZ {33.333333} CONFIG.PCW_UIPARAM_DDR_PARTNO {MT41K128M16 JT-125}]
}
"""
BLOCK_DESIGN = """# the KV260's processing system (a project's own block-design Tcl, beside its profile)
create_bd_cell -type ip -vlnv xilinx.com:ip:zynq_ultra_ps_e zynq_ultra_ps_e_0
set_property -dict [list CONFIG.PSU__USE__S_AXI_GP2 {1}] [get_bd_cells zynq_ultra_ps_e_0]
"""

# What the installed kabe says of the design, without running a tool (one JSON line).
FACTS = r"""
import json, os, re, sys
from pathlib import Path
from kabe.project import cores, designs
from kabe.flows import yosys_script
from kabe.flows.vivado.project import generate_project
from kabe.cache import cache

d = designs.get("kv_probe")
edam = cores.resolve(d, "synth")
key = cache.key_for(d, "open", sim_check_rows=None, synth=edam)
vivado_key = cache.key_for(d, "vivado", sim_check_rows=None, synth=edam)
profile = Path("boards/kv260.yaml")
text = profile.read_text()
profile.write_text(text.replace("synth_family: xcup", "synth_family: xcu"))
st = profile.stat()
os.utime(profile, ns=(st.st_atime_ns, st.st_mtime_ns + 2_000_000_000))  # another version of the profile
other = cache.key_for(designs.get("kv_probe"), "open", sim_check_rows=None, synth=edam)
profile.write_text(text)
from kabe.flows.base import FlowError
try:  # a Zynq UltraScale+ board: kabe's block design builds a PS7, so the vivado flow refuses it, in one line
    generate_project(d, Path("build/kv_probe/vivado_gen"), edam=edam)
    refused = None
except FlowError as e:
    refused = str(e)
zed = designs.get("zed_probe")  # a Zynq-7000 board of the project's own: the vivado project is made for it
p = generate_project(zed, Path("build/zed_probe/vivado_gen"), edam=cores.resolve(zed, "synth"))
sourced = re.findall(r"^source \{(.+?)\}", p.project_tcl.read_text(), re.M)
print(json.dumps({
    "board": d.board.key, "part": d.board.part, "family": d.board.family, "synth_family": d.board.synth_family,
    "lanes": [d.board.memory_ports.name, d.board.memory_ports.count], "constraints": str(d.constraints),
    "key": key.key, "other_key": other.key, "material_part": key.material["part"],
    "material_board": key.material["board"], "files": sorted(key.material["files"]),
    "vivado_files": sorted(vivado_key.material["files"]),
    "script": yosys_script.from_edam(edam, Path("."), d.board.synth_family),
    "refused": refused, "zed_part": zed.board.part,
    "project_part": p.edam["flow_options"]["part"], "project_part_field": p.part,
    "settings": p.settings_tcl.read_text(), "sourced": sourced,
    "tcl": str(zed.board.block_design_tcl()),
}))
"""


def _run(cmd, cwd: Path, timeout: int = 900) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("KABE_PROJECT", "COLUMNS")}
    return subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def _ok(p: subprocess.CompletedProcess) -> str:
    assert p.returncode == 0, f"{p.args}: exit {p.returncode}\n{p.stdout[-4000:]}\n{p.stderr[-4000:]}"
    return p.stdout


def _project(tmp_path: Path) -> Path:
    root = tmp_path / "kv_project"
    root.mkdir()
    _ok(_run(["git", "init", "-q", "-b", "main"], root))
    (root / "pyproject.toml").write_text('[tool.kabe]\nflow = "open"\n')
    _ok(_run([sys.executable, "-m", "kabe.cli", "new", "kv_probe"], root))
    (root / "boards").mkdir()
    (root / "boards" / "kv260.yaml").write_text(PROFILE)
    (root / "boards" / "kv260_ps8.tcl").write_text(BLOCK_DESIGN)
    (root / "boards" / "zed.yaml").write_text(ZED_PROFILE)
    (root / "boards" / "zed_ps7.tcl").write_text(ZED_BLOCK_DESIGN)
    _ok(_run([sys.executable, "-m", "kabe.cli", "new", "zed_probe"], root))
    zed_yaml = root / "cores" / "zed_probe" / "design.yaml"
    zed_yaml.write_text("board: zed\n" + zed_yaml.read_text())
    # a sum of squares instead of the skeleton's sum: a 16 x 16 multiply Yosys maps to the fabric's DSP
    top = root / "cores" / "kv_probe" / "rtl" / "kv_probe_top.v"
    rtl = top.read_text()
    assert rtl.count("sum + s_axis_tdata;") == 2
    top.write_text(rtl.replace("sum + s_axis_tdata;", "sum + s_axis_tdata[15:0] * s_axis_tdata[15:0];"))
    yaml_file = root / "cores" / "kv_probe" / "design.yaml"
    text = yaml_file.read_text()
    assert "expect_gate: pass" in text
    yaml_file.write_text("board: kv260\n" + text.replace("expect_gate: pass", "expect_gate: not_estimated"))
    (root / ".gitignore").write_text("build/\nreports/\n")
    _ok(_run(["git", *GIT_ID, "add", "-A"], root))
    _ok(_run(["git", *GIT_ID, "commit", "-qm", "a design on a board of the project's own"], root))
    return root


def test_a_third_board_is_a_profile_and_its_template(tmp_path):
    root = _project(tmp_path)
    facts = json.loads(_ok(_run([sys.executable, "-c", FACTS], root)).splitlines()[-1])
    assert (facts["board"], facts["part"], facts["family"], facts["synth_family"]) == \
        ("kv260", PART, "zynq-ultrascale+", "xcup")
    assert facts["lanes"] == ["HP port", 4]
    # the cache key: the part and the board, the profile file hashed (another synth_family: another key)
    assert facts["material_part"] == PART and facts["material_board"] == "kv260"
    assert "boards/kv260.yaml" in facts["files"] and facts["other_key"] != facts["key"]
    assert "boards/kv260_ps8.tcl" in facts["vivado_files"] and "boards/kv260_ps8.tcl" not in facts["files"]
    # the open flow's script maps to the profile's fabric; the core's own `-family xc7` is dropped
    assert "synth_xilinx -family xcup -top kv_probe_top" in facts["script"]
    assert "-family xc7" not in facts["script"]
    # the vivado flow: the project's own KV260 profile (it replaces kabe's kv260) names no DMA facts, so its
    # PS8 block design is refused in one line naming its profile and the key to add ...
    assert facts["refused"].startswith(str(root / "boards" / "kv260.yaml")) and "dma:" in facts["refused"]
    assert "docs/boards.md" in facts["refused"]
    # ... and a Zynq-7000 board of the project's own gets its project, for its part, sourcing its Tcl first
    tcl = str(root / "boards" / "zed_ps7.tcl")
    assert facts["tcl"] == tcl
    assert facts["project_part"] == ZED_PART and facts["project_part_field"] == ZED_PART == facts["zed_part"]
    assert f"set ::kabe(part) {ZED_PART}" in facts["settings"]
    assert tcl in facts["sourced"] and facts["sourced"].index(tcl) < \
        next(i for i, s in enumerate(facts["sourced"]) if s.endswith("/kabe_bd.tcl"))

    # one real Yosys run: `kabe build` on the open flow, as design.yaml expects (exit 0)
    built = _run([sys.executable, "-m", "kabe.cli", "build", "kv_probe", "--flow", "open"], root, timeout=1500)
    out = built.stdout + built.stderr
    assert built.returncode == 0, out[-6000:]
    assert "timing NOT ESTIMATED" in out and "gate PASS" not in out, out[-3000:]
    sha = _ok(_run(["git", "rev-parse", "HEAD"], root)).strip()
    archive = root / "reports" / sha / "kv_probe" / "open"
    m = json.loads((archive / "metrics.json").read_text())
    assert m["part"] == PART
    assert m["timing"]["wns_ns"] is None and "no routed Zynq-ultrascale+ data" in m["timing"]["not_estimated"]
    assert m["gate"]["status"] == "not_estimated" and m["gate"]["passed"] is False and m["gate"]["failures"] == []
    u = m["utilization"]
    stat = (archive / "yosys_stat.txt").read_text()
    assert "DSP48E2" in stat and "DSP48E1" not in stat, stat[-2000:]  # UltraScale+'s DSP, not the 7-series one
    assert u["lut"] > 0 and u["ff"] > 0 and u["dsp"] >= 1, u  # ... counted as a DSP
    assert "proxy" not in u  # the part's own fabric: the counts are no proxy
    assert "synth_xilinx -family xcup" in (archive / "synth.ys").read_text()
    assert not (archive / "timing_estimate.rpt").exists()  # the estimator did not run
    print(f"third board {PART}: LUT {u['lut']}, FF {u['ff']}, DSP {u['dsp']}; gate {m['gate']['status']}")

    # a cache hit on this archive would re-derive its numbers from its own reports (kabe.build.rederive):
    # the not-estimated timing from the XDC and the profile, the utilization from yosys_stat.txt
    rederive = ("import json, sys; from pathlib import Path; from kabe.project import designs; from kabe.build import rederive as build_rederive; "
                "from kabe.cache import cache; a = Path(sys.argv[1]); "
                "e = cache.Entry(a, json.loads((a / 'metrics.json').read_text()), {}); "
                "print(build_rederive.disagreement(e, designs.get('kv_probe'), 'open'))")
    assert _ok(_run([sys.executable, "-c", rederive, archive], root)).strip() == "None"
