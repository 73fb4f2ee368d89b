"""What a Versal build (a board whose family is "versal": the Alveo V80) changes in kabe's Vivado
project: AMD's AVED base design underneath, the image step, the outputs, the engine clock. Runs no
Vivado (kabe.flows.vivado.project calls it while it generates the project; docs/v80.md).

* The block design is AVED's (Xilinx/AVED hw/amd_v80_gen5x8_<version>, a checkout named by
  [tool.kabe] vivado_aved_dir), extended by tcl/v80_aved_bd.tcl. It is named `top` as AVED's is:
  AVED's implementation XDC and hooks name cells under top_i/, so any other name would leave them
  applying to nothing.
* impl_1 runs to write_device_image (tcl/versal_run.tcl replaces edalize's run Tcl, which knows only
  write_bitstream); kabe's hooks run before that step, after AVED's write_device_image.pre.tcl, so the
  commit (not AVED's time stamp) is what USR_ACCESS carries.
* Outputs: <project>.xsa (written before synthesis, as AVED does), <project>_design.pdi (the design
  image), <project>_nofpt.pdi (bootgen: the design image with AVED's management firmware, build/amc.elf:
  what `ami_tool cfgmem_program` writes to the card's flash) and <project>.pdi (AVED's fpt_pdi_gen.py:
  the flash partition table, then the _nofpt image at 32 KiB), each named as AVED names the same file.
* The engine's clock is AVED's usr_clk_wiz clk_out1 at the XDC's period; Vivado names a Versal clock
  wizard's first output `clkout1_primitive` (a real Vivado 2023.2 Versal report:
  ../shared/fixtures/vivado-versal), so that is the clock the gate requires in the routed report,
  whatever the XDC calls the engine's clk port (its name there serves the open flow).
"""

from __future__ import annotations

from pathlib import Path

from kabe.flows.base import FlowError

BD_NAME = "top"  # AVED's: its impl.xdc and hooks address top_i/...
BD_WRAPPER = f"{BD_NAME}_wrapper"
IMAGE_STEP = "WRITE_DEVICE_IMAGE"
CLOCK_NAME = "clkout1_primitive"  # usr_clk_wiz clk_out1, as Vivado names it on Versal
AVED_SETTING = "vivado_aved_dir"
# AVED's own files kabe's project uses (relative to the AVED hardware folder); all are build inputs
AVED_BD_TCL = "src/bd/create_bd_design.tcl"
FPT_PDI_GEN = "fpt/fpt_pdi_gen.py"  # AVED's own: FPT (padded to 32 KiB) + the _nofpt image = the flash image
AVED_FILES = (AVED_BD_TCL, "src/constraints/impl.xdc", "src/constraints/impl.pins.xdc",
              "src/constraints/opt.post.tcl", "src/constraints/place.pre.tcl",
              "src/constraints/write_device_image.pre.tcl", FPT_PDI_GEN)
AVED_IMAGE_HOOK = "src/constraints/write_device_image.pre.tcl"  # UUID ROM; sourced first in kabe's dispatcher
AMC_ELF = "build/amc.elf"  # where AVED's build_all.sh leaves the management firmware
# where build_all.sh leaves the flash partition table: its step FPT runs AVED's fw/AMC/scripts/gen_fpt.py
# on fw/AMC/scripts/fpt.json and copies fpt.bin here (kabe uses that file; it does not run gen_fpt.py)
FPT_BIN = "build/fpt.bin"
BUILT_FILES = (AMC_ELF, FPT_BIN)  # what AVED's build_all.sh leaves in build/, needed before kabe's build
# The images, named as AVED names the same things (build_all.sh), so each file means what AVED's does:
#   key "pdi"        <project>_design.pdi  impl_1's design image alone (AVED leaves it in its impl_1 run)
#   key "pdi_nofpt"  <project>_nofpt.pdi   + AMC firmware on the RPU (bootgen, pdi_combine.bif): AVED's
#                                          <design>_nofpt.pdi, what ami_tool cfgmem_program writes
#   key "pdi_fpt"    <project>.pdi         the FPT at 0 and the _nofpt image at 32 KiB (fpt_pdi_gen.py):
#                                          AVED's <design>.pdi, the whole-flash image
BOOT_IMAGE = "pdi_nofpt"  # artifact key of <project>_nofpt.pdi: the design image + AMC firmware (kabe.deploy.ami)
FLASH_IMAGE = "pdi_fpt"


def image_paths(folder: Path, name: str) -> dict[str, Path]:
    """The Versal build's images in a folder (the work root or an archive), by artifact key."""
    return {"pdi": folder / f"{name}_design.pdi", "xsa": folder / f"{name}.xsa",
            BOOT_IMAGE: folder / f"{name}_nofpt.pdi", FLASH_IMAGE: folder / f"{name}.pdi"}
# The engine's register window in PCIe PF0 BAR0 (0x201_0000_0000, 256 MB in AVED's CPM config),
# after AVED's 32 MB management window (axi_noc_cips M00_AXI APERTURES {{0x201_0000_0000 0x200_0000}})
CTRL_BASE = 0x0201_0200_0000
CTRL_RANGE = 0x0100_0000
HBM_NMU_MBPS = 12800  # AVED docs, "AVED V80 - NoC Configuration": 64 NMUs x 12,800 MB/s = 819.2 GB/s
HBM_PORTS = 64  # the axi_noc's HBMnn_AXI ports (NUM_HBM_BLI), one per HBM NMU: the most channels there are
DMA_BURST = 64  # beats per AXI DMA burst on the 256-bit side (2 KB: a multiple of the NoC's 256-byte chop)
# PG313 "Read and Write Bandwidth": transaction overhead is least when a burst is a multiple of the chop
# size, at most 256 bytes; the DMA's 2 KB bursts are, so the NoC is told 256 bytes on average
NOC_AVG_BURST = 256
HBM_BASE = 0x40_0000_0000  # where xbtest's V80 BD maps HBM: 1 GiB per pseudo channel from here
PC_BYTES = 1 << 30         # one pseudo channel; two HBM ports (PORT0/1, PORT2/3) share each
SMARTCONNECT_MAX = 16      # SmartConnect's NUM_MI / NUM_SI range (PG247): 1..16


def channel_qos(read_bits: int, write_bits: int, period_ns: float, row_bytes: int) -> tuple[int, int]:
    """The read and write MB/s one channel's DMA moves, as the NoC's QoS asks (PG313: never less than the
    traffic, never 0 since 0 disables the direction): the engine takes one input beat a clock (its
    simulations: 1.000 beats/clock) and, per docs/streams.md's contract, gives one result beat per row of
    row_bytes. Rounded up to whole MB/s."""
    import math

    mhz = 1000.0 / period_ns
    read = read_bits / 8 * mhz
    write = write_bits / 8 * mhz * (read_bits / 8) / row_bytes
    return max(1, math.ceil(read - 1e-9)), max(1, math.ceil(write - 1e-9))


def aved_dir(flow_settings: dict) -> Path:
    """The AVED hardware folder from [tool.kabe] vivado_aved_dir, checked: every AVED file the project
    uses must be there, and the management firmware bootgen combines the design image with."""
    raw = flow_settings.get(AVED_SETTING) or ""
    if not raw:
        raise FlowError(f"a V80 build stands on AMD's AVED base design, and [tool.kabe] {AVED_SETTING} is not set. "
                        f"Fix: clone https://github.com/Xilinx/AVED, build it once (hw/amd_v80_gen5x8_25.1/build_all.sh "
                        f"leaves build/amc.elf) and set {AVED_SETTING} = \"<clone>/hw/amd_v80_gen5x8_25.1\" "
                        f"in pyproject.toml (docs/v80.md)")
    folder = Path(raw).expanduser()
    if not folder.is_absolute():
        from kabe.base.paths import ROOT
        folder = ROOT / folder
    missing = [rel for rel in (*AVED_FILES, *BUILT_FILES) if not (folder / rel).is_file()]
    if missing:
        what = {AMC_ELF: "AVED's management firmware (build it: AVED's build_all.sh, step FW)",
                FPT_BIN: "AVED's flash partition table (build it: AVED's build_all.sh, step FPT, gen_fpt.py)"}.get(
                    missing[0], "a file of AVED's base design")
        raise FlowError(f"{folder / missing[0]}: no such file, {what}; [tool.kabe] {AVED_SETTING} must name an AVED "
                        f"checkout's hw/amd_v80_gen5x8_<version> folder (docs/v80.md)")
    return folder.resolve()


def check_base_vivado(board, have: str, flow_settings: dict | None = None) -> None:
    """The Vivado on PATH against the one the board's base design release needs (the profile's
    base_design.vivado: 2025.1 for AVED amd_v80_gen5x8_25.1), and the AVED folder named against that
    release when its name says which release it is. Another version stops the build here, before any
    simulation or Vivado run: AVED's block-design Tcl and IP are that version's, and on another one
    Vivado fails (or, worse, upgrades them) minutes in."""
    base = board.base_design
    if base is None:
        return
    if not (have == base.vivado or have.startswith(base.vivado + ".")):
        raise FlowError(f"{board.profile_file}: board {board.key} stands on {base.name} {base.release}, which needs "
                        f"Vivado {base.vivado}, but Vivado {have} is on PATH. Fix: put Vivado {base.vivado} on PATH "
                        f"(source its settings64.sh), or use the {base.name} release made for Vivado {have} and name "
                        f"it in the profile's base_design (docs/v80.md)")
    raw = (flow_settings or {}).get(AVED_SETTING) or ""
    name = Path(raw).name if raw else ""
    if name.startswith("amd_v80_") and name != base.release:
        raise FlowError(f"[tool.kabe] {AVED_SETTING} names {name}, but board {board.key}'s profile "
                        f"({board.profile_file}) builds on {base.name} {base.release} (Vivado {base.vivado}). Fix: "
                        f"point {AVED_SETTING} at <AVED clone>/hw/{base.release}, or change base_design in the profile")


def inputs(aved: Path) -> tuple[Path, ...]:
    """AVED's files this build depends on (hashed into the record and the cache key's inputs)."""
    return tuple(aved / rel for rel in (*AVED_FILES, *BUILT_FILES))


def settings_values(design, work_root: Path, name: str, aved: Path, jobs: int,
                    streams: list | tuple = (), period_ns: float = 0.0) -> dict:
    """The ::kabe(...) values only a Versal build has (kabe_settings.tcl). streams: per channel (s bus,
    its bits, m bus, its bits), as the project's ::kabe(streams)."""
    beat_bytes = design.board.memory_ports.beat_bytes
    if design.ports > HBM_PORTS:
        raise FlowError(f"{design.yaml_file}: ports: {design.ports}, but the V80's NoC has {HBM_PORTS} HBM ports "
                        f"(NUM_HBM_BLI), one per channel; build at most {HBM_PORTS} channels")
    qos = [channel_qos(s_bits, m_bits, period_ns, design.row_bytes) for _, s_bits, _, m_bits in streams]
    return {
        "aved_dir": aved, "amc_elf": aved / AMC_ELF,
        "hbm_data_width": beat_bytes * 8, "hbm_mbps": HBM_NMU_MBPS, "dma_burst": DMA_BURST,
        # per channel: read MB/s, write MB/s (the NoC QoS of its HBMnn_AXI port)
        "hbm_qos": qos, "noc_avg_burst": NOC_AVG_BURST,
        "hbm_base": f"0x{HBM_BASE:011X}", "pc_bytes": f"0x{PC_BYTES:X}", "smartconnect_max": SMARTCONNECT_MAX,
        "dma_length_width": 26,
        "ctrl_base": f"0x{CTRL_BASE:012X}", "ctrl_range": f"0x{CTRL_RANGE:X}",
        "xsa_dest": work_root / f"{name}.xsa", "pdi_dest": image_paths(work_root, name)["pdi"],
        "pdi_nofpt_dest": image_paths(work_root, name)[BOOT_IMAGE],
        "pdi_fpt_dest": image_paths(work_root, name)[FLASH_IMAGE],
        "fpt_bin": aved / FPT_BIN, "fpt_pdi_gen": aved / FPT_PDI_GEN, "jobs": jobs,
    }


def write_run_tcl(run_tcl: Path, settings_file: Path, tcl_dir: Path) -> None:
    """edalize's run Tcl launches impl_1 -to_step write_bitstream, a step Versal's runs do not have:
    replaced by kabe's (tcl/versal_run.tcl), checked by check_run_tcl."""
    if not run_tcl.is_file():
        raise FlowError(f"edalize wrote no {run_tcl}")
    run_tcl.write_text("# Written by kabe.flows.vivado.versal in place of edalize's run Tcl (Versal: "
                       "impl_1 -to_step write_device_image).\n"
                       f"source {{{settings_file}}}\nsource {{{tcl_dir / 'versal_run.tcl'}}}\n")


def check_run_tcl(run_tcl: Path, tcl_dir: Path) -> None:
    text = run_tcl.read_text() if run_tcl.is_file() else ""
    if f"source {{{tcl_dir / 'versal_run.tcl'}}}" not in text or "write_bitstream" in text:
        raise FlowError(f"{run_tcl}: not kabe's Versal run Tcl (it must source tcl/versal_run.tcl and never "
                        f"launch write_bitstream)")
