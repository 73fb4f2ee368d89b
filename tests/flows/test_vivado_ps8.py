"""The KV260's PS8 block design against the board it runs on (issue 43 item 4), without Vivado.

kabe's block design (kabe/flows/vivado/tcl/kabe_bd.tcl) builds the same shape on a Zynq UltraScale+
as on the PYNQ-Z1 (a DMA per HP port, the registers behind one interconnect, one PL clock), around a
zynq_ultra_ps_e (tcl/kabe_ps8.tcl), with the KV260 carrier's fan (tcl/kv260_ps8.tcl, kv260_carrier.xdc).
Its generated project runs on the STAND-IN Vivado's commands (tests/standin/vivado_commands.tcl, a dry
run), and what it records is held against AMD's own KV260 designs, written down here with their source:

* Xilinx/kria-vitis-platforms, kv260/platforms/vivado/kv260_bist/scripts/main.tcl (create_project
  -part of the `*:kv260_som:*` board part; board_connections), scripts/config_bd.tcl (the PS8
  `PS_0`: apply_board_preset, PSU__SAXIGP0..6__DATA_WIDTH {128}, PSU__USE__S_AXI_GP*, the fan's
  xlslice_fan on PS_0/emio_ttc0_wave_o, PS_0/pl_clk0, S_AXI_HP0_FPD, saxihp0_fpd_aclk) and
  xdc/pin.xdc ("#Fan Speed Enable");
* Xilinx/Kria-PYNQ kv260/base/base.tcl (PYNQ's KV260 base overlay: the IO PLL the PL clock divides).

The stand-in's PS8 enforces what the IP does (a port exists only when its property enables it; no DDR
configuration without the board preset), and each rule is broken here once to show it fails.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pynqmetadata.frontends import Metadata
from pynqmetadata.views.runtime import RuntimeMetadataParser

from kabe import boards
from kabe.project import designs
from kabe.deploy import pl_names
from kabe.flows.vivado.project import TCL_DIR

from test_vivado_flow import TCLSH, Projects, calls, props, run_tcl  # same folder (rootdir import)

pytestmark = pytest.mark.skipif(TCLSH is None, reason="tclsh is needed to run the Tcl dry runs")

DESIGN = "kv260_ternary"
# --- AMD's KV260 facts, as their scripts write them (see the module docstring for the files)
AMD_PART = "xck26-sfvc784-2LV-c"  # Kria-PYNQ base.tcl: create_project ... -part xck26-sfvc784-2LV-c
AMD_BOARD_PART = re.compile(r"^xilinx\.com:kv260_som:part0:1\.\d+$")  # main.tcl: get_board_parts "*:kv260_som:*"
AMD_BOARD_CONNECTIONS = "som240_1_connector xilinx.com:kv260_carrier:som240_1_connector:1.3"  # main.tcl:31
AMD_HP_WIDTH = "128"  # config_bd.tcl: CONFIG.PSU__SAXIGP0..6__DATA_WIDTH {128}
AMD_FAN_PS = {"CONFIG.PSU__TTC0__WAVEOUT__ENABLE": "1", "CONFIG.PSU__TTC0__WAVEOUT__IO": "EMIO"}  # config_bd.tcl:19-20
AMD_FAN_SLICE = {"CONFIG.DIN_FROM": "2", "CONFIG.DIN_TO": "2", "CONFIG.DIN_WIDTH": "3", "CONFIG.DOUT_WIDTH": "1"}  # :984-987
AMD_FAN_PINS = {"PACKAGE_PIN": "A12", "IOSTANDARD": "LVCMOS33", "SLEW": "SLOW", "DRIVE": "4"}  # pin.xdc:37-40
AMD_IOPLL_MHZ = 999.99  # base.tcl: PSU__CRL_APB__PL0_REF_CTRL__ACT_FREQMHZ {99.999001} at DIVISOR0 {10}


@pytest.fixture(scope="module")
def projects(tmp_path_factory) -> Projects:
    return Projects(tmp_path_factory)


@pytest.fixture(scope="module")
def created(projects, tmp_path_factory):
    """The KV260 project's creation Tcl run on the stand-in: (project, recorded calls, stdout)."""
    p = projects[DESIGN]
    rec = tmp_path_factory.mktemp("rec") / "rec.txt"
    r = run_tcl(f"source {{{p.project_tcl}}}", p.work_root, rec)
    assert r.returncode == 0, r.stdout + r.stderr
    return p, calls(rec), r.stdout


def test_the_profile_is_amds_kv260():
    b = boards.get("kv260")
    assert (b.part, b.family, b.synth_family) == (AMD_PART, "zynq-ultrascale+", "xcup")
    assert AMD_BOARD_PART.match(b.board_part) and b.board_connections == AMD_BOARD_CONNECTIONS
    assert (b.memory_ports.name, b.memory_ports.count, b.memory_ports.beat_bytes * 8) == ("HP port", 4, int(AMD_HP_WIDTH))
    assert b.pynq is not None and b.pynq.versions == ">=4" and b.pynq.machine == "aarch64"
    assert b.outputs == ("bit", "hwh", "xsa") and b.program == "pynq"


def test_the_project_takes_the_board_part_and_the_ps8_its_preset(created):
    p, recs, _ = created
    names = [c[0] for c in recs]
    pr = props(recs)
    assert pr[p.name]["BOARD_PART"] == boards.get("kv260").board_part
    assert pr[p.name]["BOARD_CONNECTIONS"] == AMD_BOARD_CONNECTIONS
    (ps,) = [c for c in recs if c[0] == "create_bd_cell" and "xilinx.com:ip:zynq_ultra_ps_e" in c]
    assert ps[-1] == "ps8"
    auto = names.index("apply_bd_automation")
    assert names.index("create_bd_cell") < auto and recs[auto][recs[auto].index("-rule") + 1] == "xilinx.com:bd_rule:zynq_ultra_ps_e"
    assert 'apply_board_preset "1"' in recs[auto]
    # the board part is on the project before the preset is applied (Vivado applies the project's board)
    assert max(i for i, c in enumerate(recs) if c[:3] == ["PROP", p.name, "BOARD_PART"]) < auto


def test_ps8_ports_clock_and_widths(created):
    p, recs, out = created
    ps8 = props(recs)["/ps8"]
    assert ps8["CONFIG.PSU__USE__M_AXI_GP0"] == "1"
    for n in range(4):  # S_AXI_HP<n>_FPD is the PS8's S_AXI_GP<n+2>
        assert ps8[f"CONFIG.PSU__USE__S_AXI_GP{n + 2}"] == "1"
        assert ps8[f"CONFIG.PSU__SAXIGP{n + 2}__DATA_WIDTH"] == AMD_HP_WIDTH
    assert ps8["CONFIG.PSU__FPGA_PL0_ENABLE"] == "1" and ps8["CONFIG.PSU__CRL_APB__PL0_REF_CTRL__SRCSEL"] == "IOPLL"
    intf = [c[-2:] for c in recs if c[0] == "connect_bd_intf_net"]
    assert ["/ps8/M_AXI_HPM0_FPD", "/ctrl_ic/S00_AXI"] in intf
    for n in range(4):
        assert [f"/hp{n}_ic/M00_AXI", f"/ps8/S_AXI_HP{n}_FPD"] in intf
    (clk,) = [c for c in recs if c[0] == "connect_bd_net" and c[1] == "/ps8/pl_clk0"]
    assert "/ps8/maxihpm0_fpd_aclk" in clk and all(f"/ps8/saxihp{n}_fpd_aclk" in clk for n in range(4))
    assert any(c[0] == "connect_bd_net" and c[1:] == ["/ps8/pl_resetn0", "/rst0/ext_reset_in"] for c in recs)
    # the PL clock is read back after validation: the IO PLL / 7, within 0.001 ns of the XDC's 7.000
    names = [" ".join(c) for c in recs]
    assert names.index("validate_bd_design") < names.index("get_property CONFIG.PSU__CRL_APB__PL0_REF_CTRL__ACT_FREQMHZ /ps8")
    assert f"achieved {AMD_IOPLL_MHZ / 7:.4f}" in out
    dma = props(recs)["/dma0"]
    assert dma["CONFIG.C_M_AXI_MM2S_DATA_WIDTH"] == dma["CONFIG.C_M_AXI_S2MM_DATA_WIDTH"] == AMD_HP_WIDTH
    assert dma["CONFIG.C_M_AXIS_MM2S_TDATA_WIDTH"] == "128" and dma["CONFIG.C_ADDR_WIDTH"] == "64"


def test_the_fan_is_driven_as_amds_kv260_designs_drive_it(created):
    p, recs, _ = created
    ps8 = props(recs)["/ps8"]
    assert {k: ps8[k] for k in AMD_FAN_PS} == AMD_FAN_PS
    assert props(recs)["/fan_slice"] == AMD_FAN_SLICE
    assert ["create_bd_port", "-dir", "O", "-from", "0", "-to", "0", "fan_en_b"] in recs
    nets = [c[1:] for c in recs if c[0] == "connect_bd_net"]
    assert ["/ps8/emio_ttc0_wave_o", "/fan_slice/Din"] in nets and ["/fan_slice/Dout", "/fan_en_b"] in nets
    # the pin: the board's XDC is read into the project, with AMD's values
    xdc = TCL_DIR / "kv260_carrier.xdc"
    assert any(c[0] == "read_xdc" and c[-1] == str(xdc) for c in recs) and xdc in p.inputs
    pins = dict(re.findall(r"^set_property (\w+) (\S+) \[get_ports \{fan_en_b\}\]", xdc.read_text(), re.M))
    assert pins == AMD_FAN_PINS


def test_pynqs_parser_sees_the_ps8_and_every_runner_cell(created):
    p, _, _ = created
    md = RuntimeMetadataParser(Metadata(input=p.hwh))
    names = pl_names.load(p.cells, designs.get(DESIGN).ports)
    assert [c for c, _ in names.roles()] == ["dma0", "dma1", "dma2", "dma3", "stat0", "stat1", "stat2", "stat3", "usr_access"]
    for cell, role in names.roles():
        assert md.ip_dict[cell]["type"].startswith(pl_names.IP_OF_ROLE[role] + ":")
        assert md.ip_dict[cell]["phys_addr"] >= 0xA000_0000  # behind M_AXI_HPM0_FPD
    assert pl_names.check_hwh(p.hwh, names) == []
    assert md.clock_dict[0]["enable"] == 1  # pynq sets pl_clk0 from the PS8's divisors
    assert abs(AMD_IOPLL_MHZ / (md.clock_dict[0]["divisor0"] * md.clock_dict[0]["divisor1"]) - 1000 / 7) < 0.01


# ------------------------------------------------------------------------------------------------
# the stand-in's PS8 fails what Vivado would refuse: each rule broken once


def _broken(projects, tmp_path, file: str, old: str, new: str) -> str:
    p = projects[DESIGN]
    text = (TCL_DIR / file).read_text()
    assert old in text, old
    (tmp_path / file).write_text(text.replace(old, new, 1))
    tcl = p.project_tcl.read_text().replace(str(TCL_DIR / file), str(tmp_path / file))
    (tmp_path / "project.tcl").write_text(tcl)
    r = run_tcl(f"source {{{tmp_path / 'project.tcl'}}}", p.work_root, tmp_path / "rec.txt")
    assert r.returncode == 1, r.stdout
    return r.stderr


def test_an_hp_port_it_never_enabled_fails(projects, tmp_path):
    err = _broken(projects, tmp_path, "kabe_ps8.tcl", "CONFIG.PSU__USE__S_AXI_GP$gp {1}", "CONFIG.PSU__USE__S_AXI_GP$gp {0}")
    assert "ps8/S_AXI_HP0_FPD is connected, but /ps8 CONFIG.PSU__USE__S_AXI_GP2 is '0'" in err


def test_a_ps8_without_the_board_preset_fails(projects, tmp_path):
    err = _broken(projects, tmp_path, "kabe_ps8.tcl", "  if {$preset} {\n    apply_bd_automation", "  if {0} {\n    apply_bd_automation")
    assert "has no DDR configuration" in err


def test_the_fan_without_ttc0_on_emio_fails(projects, tmp_path):
    err = _broken(projects, tmp_path, "kv260_ps8.tcl", "CONFIG.PSU__TTC0__WAVEOUT__IO {EMIO}", "CONFIG.PSU__TTC0__WAVEOUT__IO {MIO}")
    assert "emio_ttc0_wave_o is connected" in err and "PSU__TTC0__WAVEOUT__IO is 'MIO', not EMIO" in err


def test_reading_the_pl_clock_before_validation_fails(projects, tmp_path):
    err = _broken(projects, tmp_path, "kabe_ps8.tcl", "  ::kabe_ps::request_clock $ps\n",
                  "  ::kabe_ps::request_clock $ps\n  ::kabe_ps::check_clock $ps\n")
    assert "pl_clk0 achieves 99.999001 MHz" in err


def test_a_board_part_vivado_lacks_is_one_clear_error(projects, tmp_path):
    p = projects[DESIGN]
    settings = p.settings_tcl.read_text().replace("xilinx.com:kv260_som:part0:1.4", "xilinx.com:kv260_som:part0:9.9")
    (tmp_path / "settings.tcl").write_text(settings)
    tcl = p.project_tcl.read_text().replace(str(p.settings_tcl), str(tmp_path / "settings.tcl"))
    (tmp_path / "project.tcl").write_text(tcl)
    r = run_tcl(f"source {{{tmp_path / 'project.tcl'}}}", p.work_root, tmp_path / "rec.txt")
    assert r.returncode == 1 and "no board part xilinx.com:kv260_som:part0:9.9" in r.stderr and "Board Store" in r.stderr
