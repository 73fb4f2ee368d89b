"""Board profiles as data: the memory wall, the PL-side lane, and the fabric budget of each board.

Every number carries where it came from (`Figure.source`), because the two boards' bandwidth
figures are of very different quality: the PYNQ-Z1 wall was measured on the board, the V80's
figures are a forum post's claim and a vendor's "approaching" figure.

The clock period here is only the default for the documents' builds (7.00 ns). The clock of a
real build comes from its constraint / metrics.json (`clock_period_ns`), never from this file:
kabe.perf.wall takes the clock from the metrics record.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# The lab report (seeds/000_c32de93e5c27beb7.txt) and the V80 forum post (seeds/004_...).
DOC_LAB = "lab report 'kabe wa ugokanai' (PYNQ-Z1, stages 2-4), seeds/000_c32de93e5c27beb7.txt"
DOC_V80_POST = "forum post 'Alveo V80 as a poor man's Taalas HC1', seeds/004_1898852da6f46ad3.txt"
AMD_V80_DOC_URL = "https://xilinx.github.io/amr-docs/docs/3.0.0/V80/index.html"


@dataclass(frozen=True)
class Figure:
    """One number with its provenance. kind: theoretical | measured | claimed | vendor."""

    value: float
    unit: str
    kind: str
    source: str
    quote: str = ""  # the source's own words, where the exact wording matters

    def __float__(self) -> float:
        return float(self.value)


@dataclass(frozen=True)
class Board:
    name: str
    part: str | None
    memory: str  # e.g. "DDR3, 16-bit"
    memory_capacity_bytes: int | None
    # Bandwidth figures in GB/s (1e9 B/s). `wall` is what a streaming design can actually get
    # (measured), `theoretical` what the memory interface could deliver; either may be unknown.
    theoretical: Figure | None
    wall: Figure | None
    other_bandwidths: tuple[Figure, ...] = ()
    # PL-side lane: bytes per beat per HP/AXI port and how many such ports the designs use.
    port_beat_bytes: int | None = None
    ports_max: int | None = None
    default_clock_period_ns: float | None = None  # documents' builds only; a build's own clock wins
    dsp: int | None = None
    lut: int | None = None
    notes: tuple[str, ...] = field(default=())

    @property
    def wall_gbps(self) -> float:
        if self.wall is None:
            raise ValueError(f"board {self.name!r} has no measured wall; pass a bandwidth explicitly")
        return float(self.wall)

    @property
    def wall_fraction_of_theoretical(self) -> float | None:
        if self.wall is None or self.theoretical is None:
            return None
        return float(self.wall) / float(self.theoretical)


PYNQ_Z1 = Board(
    name="PYNQ-Z1",
    part="xc7z020clg400-1",
    memory="DDR3, 16-bit",
    memory_capacity_bytes=None,  # not stated in the documents; not used by any model
    theoretical=Figure(2.10, "GB/s", "theoretical", DOC_LAB,
                       "DDR そのものの速さ（2.1 GB/s・買った時点で決まる）"),
    wall=Figure(1.97, "GB/s", "measured", DOC_LAB + " (stage 2, two HP ports, receive-and-discard probe)",
                "このボードの本当の上限は 1.97 GB/s。理論値 2.1 の 93.6%"),
    port_beat_bytes=8,  # "PL 側の道幅（8 バイト × クロック）" per HP port
    ports_max=2,
    default_clock_period_ns=7.00,
    dsp=220,
    lut=53_200,
    notes=(
        "Documented ratio wall/theoretical: 93.6% (the rounded 1.97/2.10 gives 93.8%; the document's "
        "percentage was evidently taken from unrounded values).",
        "One HP port: lane 8 B x 142.9 MHz = 1.14 GB/s, about half of DDR; two HP ports saturate DDR.",
    ),
)

ALVEO_V80 = Board(
    name="Alveo V80",
    part=None,  # Versal HBM-series device; the part number is not used by any model here
    memory="HBM2e",
    memory_capacity_bytes=32 * 10**9,
    theoretical=None,
    wall=None,  # nobody in these documents measured it
    other_bandwidths=(
        Figure(820.0, "GB/s", "claimed", DOC_V80_POST + " (Gemini Pro's answer quoted in the post)",
               "V80は巨大なHBM帯域820 GB/sを持っています"),
        Figure(460.0, "GB/s", "vendor", AMD_V80_DOC_URL + " (AMD AMR docs 3.0.0, 'V80 Board Overview')",
               "HBM memory bandwidth approaching 460 GB/s"),
    ),
    notes=(
        "The two bandwidth figures disagree by 1.8x; kabe.perf.whatif_v80 evaluates both.",
        "460 GB/s is also AMD's figure for the older HBM2 Alveo cards (UG1393: 32 pseudo channels x "
        "14.375 GB/s); the AMR V80 page gives 'approaching 460 GB/s' for the V80 board design.",
        "The post also claims about 673 MB of on-chip UltraRAM + Block RAM (used for the draft model).",
    ),
)

BOARDS: dict[str, Board] = {"pynq-z1": PYNQ_Z1, "v80": ALVEO_V80}


def get(name: str) -> Board:
    key = name.lower().replace("_", "-")
    if key in ("alveo-v80", "alveo v80"):
        key = "v80"
    if key not in BOARDS:
        raise KeyError(f"unknown board {name!r}; known boards: {', '.join(BOARDS)}")
    return BOARDS[key]


def v80_bandwidths() -> dict[str, Figure]:
    """The V80 bandwidth figures by label: 'post' (820 GB/s) and 'amd' (460 GB/s)."""
    post, amd = ALVEO_V80.other_bandwidths
    return {"post": post, "amd": amd}
