"""The block design against the board it runs on (issues 17 and 13), without Vivado.

* The PS7's DDR settings equal the PYNQ-Z1 board file's (the values are written down here, with
  their source).
* FCLK0's achieved frequency is read after validate_bd_design (the STAND-IN models derived PS7
  parameters as stale until validation, so the old order fails here).
* The cells the board runner looks up come from one place: kabe/flows/vivado/tcl/kabe_bd.tcl creates them and writes
  their names to kabe_<design>.cells.json; the STAND-IN vivado writes a .hwh from the cells the
  block design created, and pynq's own .hwh parser (pynqmetadata, what pynq.Overlay uses) must
  resolve every name the runner asks for, to the right IP.
* The commit is stamped at bitstream time only: nothing before write_bitstream reads it, and
  everything that feeds synthesis is byte-identical for two commits.

pynq itself is not installed (pynq 4.0 pins numpy < 2, kabe's venv has numpy 2): its .hwh parser
is the separate package pynqmetadata, which pynq.Overlay calls (pl_server/embedded_device.py:
`RuntimeMetadataParser(Metadata(input=<.hwh>))`); that is what runs here.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from pynqmetadata.frontends import Metadata
from pynqmetadata.views.runtime import RuntimeMetadataParser

from kabe.project import designs
from kabe.base import provenance
from kabe.deploy import pl_names
from kabe.flows.vivado import project, tool
from kabe.flows.vivado.project import BD_HDL, TCL_DIR
from kabe.base.paths import ROOT

from test_vivado_flow import DESIGNS, FIXTURES, TCLSH, Projects, calls, run_tcl  # same folder (rootdir import)

pytestmark = pytest.mark.skipif(TCLSH is None, reason="tclsh is needed to run the Tcl dry runs")

# ------------------------------------------------------------------------------------------------
# The PYNQ-Z1 board file: pynq-z1/1.0/preset.xml and board.xml (file_version 1.0, revision 1.0,
# vendor www.digilentinc.com, url http://www.pynq.io), as published in the public repository
# xupsh/pynq-supported-board-file at commit e02d6a3866b5465218f777168cdc51344ac94e07; DDR lines
# 46-93 and 393-401 of preset.xml. Every PS7 setting kabe makes is one of these, with this value.
BOARD_FILE_PRESET = {
    "PCW_UIPARAM_DDR_MEMORY_TYPE": "DDR 3",  # preset.xml:393 (kabe had "DDR 3 (Low Voltage)": wrong)
    "PCW_UIPARAM_DDR_PARTNO": "MT41J256M16 RE-125",  # preset.xml:398 (kabe had MT41K256M16: the 1.35 V part)
    "PCW_UIPARAM_DDR_BUS_WIDTH": "16 Bit",
    "PCW_UIPARAM_DDR_FREQ_MHZ": "525",
    "PCW_UIPARAM_DDR_BANK_ADDR_COUNT": "3",
    "PCW_UIPARAM_DDR_ROW_ADDR_COUNT": "15",
    "PCW_UIPARAM_DDR_COL_ADDR_COUNT": "10",
    "PCW_UIPARAM_DDR_CL": "7",
    "PCW_UIPARAM_DDR_CWL": "6",
    "PCW_UIPARAM_DDR_T_RCD": "7",
    "PCW_UIPARAM_DDR_T_RP": "7",
    "PCW_UIPARAM_DDR_T_RC": "48.91",
    "PCW_UIPARAM_DDR_T_RAS_MIN": "35.0",
    "PCW_UIPARAM_DDR_T_FAW": "40.0",
    "PCW_UIPARAM_DDR_AL": "0",
    "PCW_UIPARAM_DDR_TRAIN_WRITE_LEVEL": "1",
    "PCW_UIPARAM_DDR_TRAIN_READ_GATE": "1",
    "PCW_UIPARAM_DDR_TRAIN_DATA_EYE": "1",
    "PCW_UIPARAM_DDR_DQS_TO_CLK_DELAY_0": "0.040",
    "PCW_UIPARAM_DDR_DQS_TO_CLK_DELAY_1": "0.058",
    "PCW_UIPARAM_DDR_DQS_TO_CLK_DELAY_2": "-0.009",
    "PCW_UIPARAM_DDR_DQS_TO_CLK_DELAY_3": "-0.033",
    "PCW_UIPARAM_DDR_BOARD_DELAY0": "0.223",
    "PCW_UIPARAM_DDR_BOARD_DELAY1": "0.212",
    "PCW_UIPARAM_DDR_BOARD_DELAY2": "0.085",
    "PCW_UIPARAM_DDR_BOARD_DELAY3": "0.092",
    "PCW_UIPARAM_DDR_DQS_0_LENGTH_MM": "15.6",
    "PCW_UIPARAM_DDR_DQS_1_LENGTH_MM": "18.8",
    "PCW_UIPARAM_DDR_DQ_0_LENGTH_MM": "16.5",
    "PCW_UIPARAM_DDR_DQ_1_LENGTH_MM": "18",
    "PCW_UIPARAM_DDR_CLOCK_0_LENGTH_MM": "25.8",
    "PCW_UIPARAM_DDR_CLOCK_1_LENGTH_MM": "25.8",
    "PCW_CRYSTAL_PERIPHERAL_FREQMHZ": "50",
    "PCW_APU_PERIPHERAL_FREQMHZ": "650",
    "PCW_PRESET_BANK0_VOLTAGE": "LVCMOS 3.3V",
    "PCW_PRESET_BANK1_VOLTAGE": "LVCMOS 1.8V",
    "PCW_QSPI_PERIPHERAL_ENABLE": "1",
    "PCW_QSPI_GRP_SINGLE_SS_ENABLE": "1",
    "PCW_QSPI_GRP_FBCLK_ENABLE": "1",
    "PCW_ENET0_PERIPHERAL_ENABLE": "1",
    "PCW_ENET0_ENET0_IO": "MIO 16 .. 27",
    "PCW_ENET0_GRP_MDIO_ENABLE": "1",
    "PCW_ENET0_GRP_MDIO_IO": "MIO 52 .. 53",
    "PCW_SD0_PERIPHERAL_ENABLE": "1",
    "PCW_SD0_GRP_CD_ENABLE": "1",
    "PCW_SD0_GRP_CD_IO": "MIO 47",
    "PCW_SDIO_PERIPHERAL_FREQMHZ": "50",
    "PCW_UART0_PERIPHERAL_ENABLE": "1",
    "PCW_UART0_UART0_IO": "MIO 14 .. 15",
    "PCW_USB0_PERIPHERAL_ENABLE": "1",
    "PCW_USB0_RESET_ENABLE": "1",
    "PCW_USB0_RESET_IO": "MIO 46",
    "PCW_GPIO_MIO_GPIO_ENABLE": "1",
}
# PYNQ v3.1's boards/Pynq-Z1/base/base.tcl (Vivado 2024.1) agrees on the memory type; it names the
# part "Custom" with timings of its own, so only the type is a second source here.
PYNQ_V31_BASE_TCL_MEMORY_TYPE = "DDR 3"


def ps7_preset() -> dict[str, str]:
    """kabe/flows/vivado/tcl/pynq_z1_ps7.tcl's preset, as Tcl itself reads it."""
    out = subprocess.run([TCLSH], input=f"source {{{TCL_DIR / 'pynq_z1_ps7.tcl'}}}\n"
                         "foreach {k v} [::kabe_board::ps7_preset] { puts \"$k\\t$v\" }\n",
                         text=True, capture_output=True, check=True).stdout
    return {k.removeprefix("CONFIG."): v for k, v in (ln.split("\t", 1) for ln in out.splitlines())}


def test_ddr_type_and_part_are_the_board_files():
    preset = ps7_preset()
    assert preset["PCW_UIPARAM_DDR_MEMORY_TYPE"] == BOARD_FILE_PRESET["PCW_UIPARAM_DDR_MEMORY_TYPE"] == "DDR 3"
    assert preset["PCW_UIPARAM_DDR_MEMORY_TYPE"] == PYNQ_V31_BASE_TCL_MEMORY_TYPE
    assert preset["PCW_UIPARAM_DDR_PARTNO"] == BOARD_FILE_PRESET["PCW_UIPARAM_DDR_PARTNO"] == "MT41J256M16 RE-125"


def test_every_ps7_setting_is_the_board_files():
    preset = ps7_preset()
    assert len(preset) >= 50
    differ = {k: (v, BOARD_FILE_PRESET.get(k, "<not in the board file>")) for k, v in preset.items()
              if BOARD_FILE_PRESET.get(k) != v}
    assert not differ, f"kabe/flows/vivado/tcl/pynq_z1_ps7.tcl differs from pynq-z1/1.0/preset.xml: {differ}"


# ------------------------------------------------------------------------------------------------
# FCLK0: checked after validate_bd_design


@pytest.fixture(scope="module")
def projects(tmp_path_factory) -> Projects:
    return Projects(tmp_path_factory)


def test_fclk0_is_read_back_after_validate_bd_design(projects, tmp_path):
    p = projects["stage4"]
    rec = tmp_path / "rec.txt"
    r = run_tcl(f"source {{{p.project_tcl}}}", p.work_root, rec)
    assert r.returncode == 0, r.stdout + r.stderr
    names = [" ".join(c) for c in calls(rec)]
    validate = names.index("validate_bd_design")
    read = names.index("get_property CONFIG.PCW_ACT_FPGA0_PERIPHERAL_FREQMHZ /ps7")
    assert validate < read, "the achieved FCLK0 must be read after validate_bd_design"
    assert "achieved 142.857143 MHz" in r.stdout


def test_the_standin_would_catch_a_read_before_validation(projects, tmp_path):
    """The stand-in's PS7 keeps derived parameters stale until validation, so the old order (read
    straight after set_property) stops with the false error the issue describes."""
    p = projects["stage4"]
    ps = (TCL_DIR / "kabe_ps7.tcl").read_text()
    early = ps.replace("  ::kabe_ps::request_clock $ps\n", "  ::kabe_ps::request_clock $ps\n  ::kabe_ps::check_clock $ps\n")
    assert early != ps
    (tmp_path / "kabe_ps7_early.tcl").write_text(early)
    tcl = p.project_tcl.read_text().replace(str(TCL_DIR / "kabe_ps7.tcl"), str(tmp_path / "kabe_ps7_early.tcl"))
    (tmp_path / "project.tcl").write_text(tcl)
    r = run_tcl(f"source {{{tmp_path / 'project.tcl'}}}", p.work_root, tmp_path / "rec.txt")
    assert r.returncode == 1 and "FCLK0 achieves 50.000000 MHz" in r.stderr, r.stdout + r.stderr


# ------------------------------------------------------------------------------------------------
# one source for the names the runner looks up, resolved by pynq's .hwh parser


def _created(projects, name: str) -> project.Project:
    p = projects[name]
    if not p.cells.is_file():  # the dry run of project creation writes the .hwh and the cell list
        r = run_tcl(f"source {{{p.project_tcl}}}", p.work_root, p.work_root / "rec.txt")
        assert r.returncode == 0, r.stdout + r.stderr
    return p


@pytest.mark.parametrize("name", DESIGNS)
def test_pynqs_hwh_parser_resolves_every_cell_the_runner_asks_for(projects, name):
    p = _created(projects, name)
    names = pl_names.load(p.cells, designs.get(name).ports)
    ip_dict = RuntimeMetadataParser(Metadata(input=p.hwh)).ip_dict
    for cell, role in names.roles():
        assert cell in ip_dict, f"{cell} ({role}) is not an IP of the .hwh: {sorted(ip_dict)}"
        assert ip_dict[cell]["type"].startswith(pl_names.IP_OF_ROLE[role] + ":"), (cell, ip_dict[cell]["type"])
        assert ip_dict[cell].get("phys_addr"), f"{cell} has no address: PYNQ would bind no driver"
    assert pl_names.check_hwh(p.hwh, names) == []


def test_the_cell_names_are_the_documented_overlay_attributes(projects):
    """The overlay's attribute names are an interface (notebooks and docs/vivado_flow.md use them):
    renaming a cell in kabe/flows/vivado/tcl/kabe_bd.tcl is a visible change, here, even though the runner follows it."""
    names = pl_names.load(_created(projects, "stage4").cells, 2)
    assert names.roles() == [("dma0", "dma"), ("dma1", "dma"), ("stat0", "stat"), ("stat1", "stat"),
                             ("usr_access", "usr_access")]
    doc = (ROOT / "docs" / "vivado_flow.md").read_text()
    for cell in ("dma0", "stat0", "usr_access"):
        assert f"overlay.{cell}" in doc, f"docs/vivado_flow.md does not show overlay.{cell}"


# ------------------------------------------------------------------------------------------------
# the commit is stamped at bitstream time only


STAMP_KEYS = ("commit", "dirty", "usr_access")


def test_the_commit_reaches_only_the_bitstream(tmp_path):
    """Two commits (one dirty) give byte-identical synthesis inputs; the only difference is the stamp
    in kabe_settings.tcl, which no Tcl reads before write_bitstream (a read trace on ::kabe proves it)."""
    built = {}
    for label, commit in (("a", provenance.Commit("0123456789abcdef0123456789abcdef01234567", False)),
                          ("b", provenance.Commit("fedcba9876543210fedcba9876543210fedcba98", True))):
        built[label] = project.generate_project(designs.get("stage4"), tmp_path / label / "edalize", commit=commit,
                                                flow_settings=tool.settings({}))
    a, b = built["a"], built["b"]
    assert a.inputs == b.inputs and BD_HDL[0] in a.inputs
    assert a.settings_tcl not in a.inputs
    files_a = {f.relative_to(a.work_root): f for f in a.work_root.rglob("*") if f.is_file()}
    files_b = {f.relative_to(b.work_root): f for f in b.work_root.rglob("*") if f.is_file()}
    assert files_a.keys() == files_b.keys()
    differ = [rel for rel in files_a
              if files_a[rel].read_text().replace(str(tmp_path / "a"), "") != files_b[rel].read_text().replace(str(tmp_path / "b"), "")]
    assert differ == [Path("kabe_settings.tcl")], differ
    values = {label: _settings(p.settings_tcl, tmp_path / label) for label, p in built.items()}
    changed = {k for k in values["a"] if values["a"][k] != values["b"].get(k)}
    assert changed == set(STAMP_KEYS), changed

    trace = ("array set ::kabe {}\nset ::stamp_reads {}\n"
             "proc ::stamp_read {n1 n2 op} { if {$n2 in {" + " ".join(STAMP_KEYS) + "}} { lappend ::stamp_reads $n2 } }\n"
             "trace add variable ::kabe read ::stamp_read")
    body = (f"source {{{a.project_tcl}}}\nsource {{{a.work_root / (a.name + '_synth.tcl')}}}\n"
            "puts \"BEFORE-BITSTREAM: $::stamp_reads\"\n"
            f"source {{{a.hook_tcl}}}\nputs \"AT-BITSTREAM: $::stamp_reads\"")
    r = run_tcl(body, a.work_root, tmp_path / "rec.txt",
                setup=f"set ::standin::mode run\nset ::standin::fixtures {{{FIXTURES}}}\n{trace}")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "BEFORE-BITSTREAM: \n" in r.stdout, r.stdout
    at = re.search(r"AT-BITSTREAM: (.*)", r.stdout).group(1).split()
    assert "usr_access" in at, r.stdout


def _settings(settings: Path, root: Path) -> dict[str, str]:
    """kabe_settings.tcl as {key: value}, the project's own folder taken out of the values."""
    return {m.group(1): m.group(2).replace(str(root), "<root>")
            for m in re.finditer(r"^set ::kabe\((\w+)\) (.*)$", settings.read_text(), re.M)}
