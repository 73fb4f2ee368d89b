"""Every outside figure the study uses, once, each with where it comes from and what it is.

The figures are of very different quality: the PYNQ-Z1's wall was measured on the board by the lab
report, the V80's peak is AMD's arithmetic over its NoC ports, the forum post's 820 GB/s is a claim in
a quoted chatbot answer, and "approaching 460 GB/s" is AMD's board-overview figure, the same number as
the older HBM2 Alveo cards' (UG1393), not the V80's HBM2e peak. The board facts (parts, lanes, beat
widths, clocks) stay in kabe's board profiles; these are the study's.
"""

from __future__ import annotations

from dataclasses import dataclass

LAB_REPORT = "lab report 'kabe wa ugokanai' (PYNQ-Z1, stages 2-4), seeds/000_c32de93e5c27beb7.txt"
POST = ("forum post 'Alveo V80 as a poor man's Taalas HC1', seeds/004_1898852da6f46ad3.txt "
        "(Gemini Pro's answer quoted in the post)")
AVED_NOC = "AMD AVED documentation (Xilinx/AVED, branch aved-docs), 'AVED V80 - NoC Configuration'"
AVED_BD = ("Xilinx/AVED hw/amd_v80_gen5x8_25.1/src/bd/create_bd_design.tcl: assign_bd_address of HBM0_PC0 .. "
           "HBM15_PC1, -range 0x40000000 each")
AMR_V80 = "https://xilinx.github.io/amr-docs/docs/3.0.0/V80/index.html (AMD AMR docs 3.0.0, 'V80 Board Overview')"
KINDS = ("measured", "theoretical", "vendor", "claimed")


@dataclass(frozen=True)
class Figure:
    value: float
    unit: str
    kind: str  # measured | theoretical | vendor | claimed
    label: str
    source: str
    quote: str
    what: str = ""  # what the number is of, when that is not what it looks like

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"{self.label}: kind {self.kind!r} is not one of {', '.join(KINDS)}")

    def __float__(self) -> float:
        return float(self.value)

    def cited(self) -> str:
        what = f"; {self.what}" if self.what else ""
        value = f"{int(self.value):,}" if float(self.value).is_integer() else f"{self.value:,g}"
        return f"{value} {self.unit} ({self.kind}{what}) from {self.source}: \"{self.quote}\""


PYNQ_Z1_DDR = Figure(2.10, "GB/s", "theoretical", "ddr", LAB_REPORT, "DDR そのものの速さ（2.1 GB/s・買った時点で決まる）")
PYNQ_Z1_WALL = Figure(1.97, "GB/s", "measured", "wall", LAB_REPORT + " (stage 2, two HP ports, receive-and-discard probe)",
                      "このボードの本当の上限は 1.97 GB/s。理論値 2.1 の 93.6%")

V80_PEAK = Figure(819.2, "GB/s", "vendor", "peak", AVED_NOC, "64 NMUs x 12,800 MB/s = 819.2 GB/s",
                  "the HBM2e peak: every HBM port at 400 MHz")
V80_POST = Figure(820.0, "GB/s", "claimed", "post", POST, "V80は巨大なHBM帯域820 GB/sを持っています",
                  "the post's rounding of the peak")
AMR_460 = Figure(460.0, "GB/s", "vendor", "amd", AMR_V80, "HBM memory bandwidth approaching 460 GB/s",
                 "the board overview's figure, the same as the older HBM2 Alveo cards' (UG1393: 32 pseudo "
                 "channels x 14.375 GB/s), not the V80's HBM2e peak")
V80_HBM_BYTES = Figure(32 * 2**30, "bytes", "vendor", "capacity", AVED_BD, "32 pseudo channels x 1 GiB",
                       "the HBM address map: 32 x 2^30 bytes")

# the V80 bandwidths the what-if evaluates, by label
V80_BANDWIDTHS = {f.label: f for f in (V80_PEAK, V80_POST, AMR_460)}
