"""The V80 block design on the NoC's dedicated HBM ports, at 4 and at 64 channels (issue 43), dry run on
the Vivado STAND-IN (tests/standin/vivado_commands.tcl) over the STAND-IN AVED folder.

The property sets are checked against the rules AMD's own V80 scripts follow:
  * Xilinx/xbtest's V80 BD customisation (customize_bd_xbtest.tcl): NUM_HBM_BLI grown by the channels,
    channel c on HBM{nn}_AXI to HBM{c/4}_PORT{c%4}, assign_bd_address -range 1G from 0x40_0000_0000,
    one pseudo channel per two ports; DEST_IDS on the PCIe slaves rewritten (kabe drops it instead);
  * AVED's axi_noc_cips (HBM ports category pl_hbm, the PCIe slave ps_pcie); SLASH's shell, which also
    enters HBM through NUM_HBM_BLI ports;
  * PG313 (NoC QoS): bandwidth never below the traffic and never 0; PG247: SmartConnect 1..16 ports.
The stand-in enforces the category, NUM_HBM_BLI, QoS and SmartConnect rules in validate_bd_design, so
the older form (generic S<nn>_AXI slaves of category pl to HBM) fails here as it would in Vivado.
"""

from __future__ import annotations

import re

import pytest

from kabe.flows.vivado import project, tool

from test_vivado_flow import STANDIN, TCLSH, calls, props, run_tcl  # same folder (rootdir import)
from test_vivado_versal import AVED, COMMIT, v80_probe

pytestmark = pytest.mark.skipif(TCLSH is None, reason="tclsh is needed to run the Tcl dry runs")


def _dry_run(tmp_path, ports: int, edit=None):
    design = v80_probe.make(tmp_path / "cores", ports=ports)
    p = project.generate_project(design, tmp_path / "edalize", commit=COMMIT,
                                 flow_settings=tool.settings({"vivado_aved_dir": str(AVED)}))
    bd = project.TCL_DIR / "v80_aved_bd.tcl"
    if edit is not None:  # a copy of the block-design Tcl broken by hand, sourced in its place
        broken = tmp_path / "v80_aved_bd.tcl"
        broken.write_text(edit(bd.read_text()))
        text = p.project_tcl.read_text().replace(f"source {{{bd}}}", f"source {{{broken}}}")
        assert text != p.project_tcl.read_text()
        p.project_tcl.write_text(text)
    rec = tmp_path / "rec.txt"
    r = run_tcl(f"source {{{p.project_tcl}}}", p.work_root, rec)
    return r, calls(rec)


def _property_set(c) -> dict:
    """What the block design asks of the NoC: the cell's counts, each HBM port's category, connection
    and QoS, each DMA's address window, the register SmartConnects' port counts."""
    pr = props(c)
    noc = pr["/axi_noc_cips"]
    ports = {k.rsplit("/", 1)[1]: v for k, v in pr.items() if k.startswith("/axi_noc_cips/HBM")}
    addr = {}
    for x in c:
        if x[0] == "assign_bd_address" and "-target_address_space" in x:
            space = x[x.index("-target_address_space") + 1]
            if "/Data_" in space:
                addr[space] = (x[x.index("-offset") + 1], x[x.index("-range") + 1], x[-2])
    scs = {k: (v.get("CONFIG.NUM_SI"), v.get("CONFIG.NUM_MI")) for k, v in pr.items() if k.startswith("/ctrl_sc")}
    return {"noc": {k: noc[k] for k in ("CONFIG.NUM_HBM_BLI", "CONFIG.NUM_MI", "CONFIG.NUM_CLKS")},
            "ports": ports, "addr": addr, "ctrl": scs, "s00": pr["/axi_noc_cips/S00_AXI"]}


@pytest.mark.parametrize("n", [4, 64])
def test_every_channel_is_on_its_own_hbm_port(tmp_path, n):
    r, c = _dry_run(tmp_path, n)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    ps = _property_set(c)
    assert ps["noc"] == {"CONFIG.NUM_HBM_BLI": str(n), "CONFIG.NUM_MI": "2", "CONFIG.NUM_CLKS": "6"}
    assert sorted(ps["ports"]) == [f"HBM{ch:02d}_AXI" for ch in range(n)]
    hbm_ports = set()
    for ch in range(n):
        port = ps["ports"][f"HBM{ch:02d}_AXI"]
        assert port["CONFIG.CATEGORY"] == "pl_hbm"
        dest = f"HBM{ch // 4}_PORT{ch % 4}"
        # 256-bit reads at 400 MHz; 32-bit results, one per 512-byte row (16 beats): 100 MB/s
        assert port["CONFIG.CONNECTIONS"] == f"{dest} {{read_bw 12800 write_bw 100 read_avg_burst 256 write_avg_burst 256}}"
        hbm_ports.add(dest)
        # both DMA directions see the port's pseudo channel, 1 GiB, at xbtest's address
        want = (f"0x{0x40_0000_0000 + (ch // 2) * (1 << 30):011X}", "1G",
                f"/axi_noc_cips/HBM{ch:02d}_AXI/HBM{ch // 4}_PC{(ch % 4) // 2}")
        assert ps["addr"][f"/dma{ch}/Data_MM2S"] == want and ps["addr"][f"/dma{ch}/Data_S2MM"] == want
    assert len(hbm_ports) == n  # no two channels on one HBM port
    # all 64 channels: 32 pseudo channels of 1 GiB each, 32 GiB = 34,359,738,368 bytes
    windows = {a[0] for a in ps["addr"].values()}
    assert len(windows) == (n + 1) // 2
    # register access: every SmartConnect within 1..16 ports; 2 register slaves a channel
    assert all(1 <= int(si) <= 16 and 1 <= int(mi) <= 16 for si, mi in ps["ctrl"].values()), ps["ctrl"]
    leaves = sum(int(mi) for k, (si, mi) in ps["ctrl"].items() if k != "/ctrl_sc" or len(ps["ctrl"]) == 1)
    assert leaves == 2 * n
    assert ("/ctrl_sc0" in ps["ctrl"]) == (2 * n > 16)
    # AVED's stale DEST_IDS dropped; its own connections kept and the register master added
    assert ps["s00"]["CONFIG.DEST_IDS"] == "" and "M01_AXI" in ps["s00"]["CONFIG.CONNECTIONS"]


def _old_form(text: str) -> str:
    """The block design as it was: channels on generic NoC slaves of category pl."""
    return (text.replace("CONFIG.CATEGORY {pl_hbm}", "CONFIG.CATEGORY {pl}")
                .replace("set hbm_axi [format HBM%02d_AXI [expr {$bli0 + $p}]]\n    set hbm [",
                         "set hbm_axi [format S%02d_AXI [expr {4 + $p}]]\n    set hbm ["))


def test_the_stand_in_refuses_hbm_from_a_generic_pl_slave(tmp_path):
    r, _ = _dry_run(tmp_path, 4, _old_form)
    assert r.returncode != 0
    assert re.search(r"/axi_noc_cips/S0[4-7]_AXI \(category 'pl'\) connects to HBM", r.stderr), r.stderr[-2000:]


def test_the_stand_in_refuses_an_hbm_port_of_another_category(tmp_path):
    r, _ = _dry_run(tmp_path, 4, lambda t: t.replace("CONFIG.CATEGORY {pl_hbm}", "CONFIG.CATEGORY {pl}"))
    assert r.returncode != 0 and "its CATEGORY must be pl_hbm, not 'pl'" in r.stderr, r.stderr[-2000:]


def test_one_register_smartconnect_for_64_channels_is_refused(tmp_path):
    """Without the leaves, 128 register slaves on one SmartConnect: out of its range, as in Vivado."""
    r, _ = _dry_run(tmp_path, 64, lambda t: t.replace("set max $::kabe(smartconnect_max)", "set max 1000"))
    assert r.returncode != 0 and "CONFIG.NUM_MI 128 is out of range" in r.stderr, r.stderr[-2000:]


def test_a_write_qos_of_zero_is_refused(tmp_path):
    r, _ = _dry_run(tmp_path, 4, lambda t: t.replace("lassign [lindex $::kabe(hbm_qos) $p] rd_bw wr_bw",
                                                      "lassign [lindex $::kabe(hbm_qos) $p] rd_bw wr_bw; set wr_bw 0"))
    assert r.returncode != 0 and "write_bw 0: 0 disables that direction" in r.stderr, r.stderr[-2000:]
