"""The bandwidth wall: how many bytes a streaming design can read, and how many weights they carry.

Per design (stage):

    lane   = ports x beat_bytes x beats_per_cycle / clock_period     (PL side, a design choice)
    bound  = min(lane, board wall)                                   (read bytes/s, the model)
    weights/s = bound x weights_per_byte(kind)    INT8: 1, ternary: 5 (3^5 = 243 <= 256), probe: 0

The inputs come from a build's record: the clock period from metrics.json (the constraint's
clock, never a board default), ports and kind from design.yaml, beats_per_cycle from a
simulation result (1.0 when the engine keeps tready high, which the documents' designs do).

This is a *bound*. The document's measured read rates (stage 3: 1.91 GB/s, stage 4: 1.83 GB/s)
sit below the 1.97 GB/s wall; they are kept here as reference data (`DOC_MEASURED`) and shown
beside the bound, never substituted for it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from kabe import boards
from kabe.boards import Board
from llm_accel import figures

PYNQ_Z1 = boards.get("pynq-z1")
# each board's measured wall (the study's figure, llm_accel.figures) and its memory's theoretical rate
WALLS = {PYNQ_Z1.key: figures.PYNQ_Z1_WALL}
THEORETICAL = {PYNQ_Z1.key: figures.PYNQ_Z1_DDR}


def wall_of(board: Board) -> float:
    """The measured wall of `board`; a board nobody measured is one clear error."""
    if board.key not in WALLS:
        raise ValueError(f"board {board.name!r} has no measured wall; pass a bandwidth explicitly")
    return float(WALLS[board.key])

WEIGHTS_PER_BYTE: dict[str, float] = {"probe": 0.0, "int8": 1.0, "ternary": 5.0}
BEAT_BYTES = PYNQ_Z1.memory_ports.beat_bytes  # one HP port beat (the board profile's)


@dataclass(frozen=True)
class StreamConfig:
    """What the wall model needs to know about one design build."""

    name: str
    kind: str  # probe | int8 | ternary
    ports: int
    clock_period_ns: float
    beats_per_cycle: float = 1.0  # per port, accepted beats / clock (1.0 = tready always high)
    beat_bytes: int = BEAT_BYTES

    def __post_init__(self) -> None:
        if self.kind not in WEIGHTS_PER_BYTE:
            raise ValueError(f"{self.name}: kind {self.kind!r} is not one of {', '.join(WEIGHTS_PER_BYTE)}")
        if self.ports < 1:
            raise ValueError(f"{self.name}: ports must be >= 1, got {self.ports}")
        if not self.clock_period_ns > 0:
            raise ValueError(f"{self.name}: clock_period_ns must be > 0, got {self.clock_period_ns}")
        if not 0 <= self.beats_per_cycle <= 1:
            raise ValueError(f"{self.name}: beats_per_cycle must be in [0, 1], got {self.beats_per_cycle}")


def _get(obj: Any, key: str) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(key)
    return getattr(obj, key, None)


def config_from_metrics(metrics: Mapping[str, Any], design: Any, sim: Mapping[str, Any] | None = None) -> StreamConfig:
    """Build a StreamConfig from a metrics.json record, a Design (or its design.yaml mapping) and,
    optionally, a simulation result.

    - clock: metrics["clock_period_ns"] (the build's constraint; required).
    - kind, ports: the design (kabe.project.designs.Design or a mapping with those keys).
    - beats_per_cycle: sim["beats_per_cycle"], or sim["beats"] / (sim["cycles"] x ports); 1.0 when no
      sim result is given (tready held high: the documents' designs never stall upstream).
    """
    clock = metrics.get("clock_period_ns")
    if clock is None:
        raise ValueError("metrics record has no clock_period_ns; the wall model needs the build's clock")
    name = str(metrics.get("design") or _get(design, "name") or "design")
    kind, ports = _get(design, "kind"), _get(design, "ports")
    if kind is None or ports is None:
        raise ValueError(f"{name}: design must give kind and ports (from design.yaml), got kind={kind!r} ports={ports!r}")
    bpc = 1.0
    if sim is not None:
        if sim.get("beats_per_cycle") is not None:
            bpc = float(sim["beats_per_cycle"])
        elif sim.get("beats") is not None and sim.get("cycles"):
            bpc = float(sim["beats"]) / (float(sim["cycles"]) * int(ports))
    return StreamConfig(name=name, kind=str(kind), ports=int(ports), clock_period_ns=float(clock), beats_per_cycle=bpc)


def lane_gbps(cfg: StreamConfig) -> float:
    """PL-side ceiling in GB/s: bytes per ns is GB/s."""
    return cfg.ports * cfg.beat_bytes * cfg.beats_per_cycle / cfg.clock_period_ns


@dataclass(frozen=True)
class WallRow:
    stage: str
    kind: str
    ports: int
    clock_period_ns: float
    beats_per_cycle: float
    lane_gbps: float
    wall_gbps: float
    bound_gbps: float
    limiter: str  # "lane" (PL side) or "memory" (the board's wall)
    weights_per_byte: float
    bound_weights_gps: float  # G weights/s at the bound
    measured_gbps: float | None = None  # the document's measurement, reference only
    measured_weights_gps: float | None = None

    @property
    def measured_over_bound(self) -> float | None:
        return None if self.measured_gbps is None else self.measured_gbps / self.bound_gbps

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["measured_over_bound"] = self.measured_over_bound
        return d


def bound(cfg: StreamConfig, board: Board = PYNQ_Z1, wall_gbps: float | None = None,
          measured_gbps: float | None = None, measured_weights_gps: float | None = None) -> WallRow:
    """The read-bandwidth bound and weights/s for one design on one board."""
    wall = wall_of(board) if wall_gbps is None else float(wall_gbps)
    lane = lane_gbps(cfg)
    b = min(lane, wall)
    wpb = WEIGHTS_PER_BYTE[cfg.kind]
    return WallRow(
        stage=cfg.name, kind=cfg.kind, ports=cfg.ports, clock_period_ns=cfg.clock_period_ns,
        beats_per_cycle=cfg.beats_per_cycle, lane_gbps=lane, wall_gbps=wall, bound_gbps=b,
        limiter="lane" if lane < wall else "memory", weights_per_byte=wpb, bound_weights_gps=b * wpb,
        measured_gbps=measured_gbps, measured_weights_gps=measured_weights_gps,
    )


# --- The document's Figure 1 / stage table, as reference data --------------------------------
# Measured on the board (seeds/000, figure 1 and the table in section 6). These are inputs to
# nothing: they are what the model's bound is compared against.
#   9.16 G weights/s vs 1.83 GB/s x 5 = 9.15: both figures are rounded; 9.16 implies 1.832 GB/s.
#   96.7% (stage 3 / probe) and 93.6% (wall / 2.1) likewise come from unrounded measurements; the
#   rounded figures give 97.0% and 93.8%.

@dataclass(frozen=True)
class DocStage:
    stage: str
    kind: str
    ports: int
    operators: int | None
    measured_gbps: float
    measured_weights_gps: float | None
    dsp: int | None
    lut: int | None
    rows_checked: int | None


DOC_MEASURED: tuple[DocStage, ...] = (
    DocStage("stage2 (probe, 2 HP)", "probe", 2, None, 1.97, None, None, None, None),
    DocStage("stage3 (INT8)", "int8", 2, 16, 1.91, 1.91, 20, 8_175, 131_070),
    DocStage("stage4 (ternary)", "ternary", 2, 80, 1.83, 9.16, 0, 9_557, 524_278),
)
DOC_RATIOS = {"stage3_over_probe": 0.967, "wall_over_theoretical": 0.936, "ternary_over_int8_weights": 4.8}
DOC_CLOCK_PERIOD_NS = 7.00  # the documents' builds (constraint pynq_z1.xdc); inputs to figure1()


def figure1(clock_period_ns: float = DOC_CLOCK_PERIOD_NS, board: Board = PYNQ_Z1,
            beats_per_cycle: float = 1.0, include_one_port_probe: bool = False) -> list[WallRow]:
    """Reproduce the document's Figure 1 data: per stage, the model bound next to the measurement.

    The stage shapes (kind, ports) are the document's; the clock is an input (the documents used
    7.00 ns; the measured values are attached only at that clock, on the PYNQ-Z1). With include_one_port_probe, stage 2's variant A (one HP port, lane-limited, no
    measured number in the document) is added first.
    """
    rows = []
    if include_one_port_probe:
        cfg = StreamConfig("stage2 (probe, 1 HP)", "probe", 1, clock_period_ns, beats_per_cycle)
        rows.append(bound(cfg, board))
    # The measurements belong to the documents' 7.00 ns builds on the PYNQ-Z1; they are shown only
    # beside a bound computed for that same clock and board.
    same = abs(clock_period_ns - DOC_CLOCK_PERIOD_NS) < 1e-9 and board.name == PYNQ_Z1.name
    for s in DOC_MEASURED:
        cfg = StreamConfig(s.stage, s.kind, s.ports, clock_period_ns, beats_per_cycle)
        rows.append(bound(cfg, board, measured_gbps=s.measured_gbps if same else None,
                          measured_weights_gps=s.measured_weights_gps if same else None))
    return rows


def _f(x: float | None, fmt: str = "{:.2f}") -> str:
    return "-" if x is None else fmt.format(x)


def render_markdown(rows: list[WallRow]) -> str:
    head = ("| stage | kind | ports | clock ns | lane GB/s | wall GB/s | bound GB/s | limited by | "
            "measured GB/s (doc) | measured/bound | w/B | bound G w/s | measured G w/s (doc) |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in rows:
        lines.append(
            f"| {r.stage} | {r.kind} | {r.ports} | {r.clock_period_ns:.2f} | {r.lane_gbps:.3f} | {r.wall_gbps:.2f} | "
            f"{r.bound_gbps:.3f} | {r.limiter} | {_f(r.measured_gbps)} | {_f(r.measured_over_bound, '{:.1%}')} | "
            f"{r.weights_per_byte:g} | {r.bound_weights_gps:.2f} | {_f(r.measured_weights_gps)} |"
        )
    return "\n".join(lines)
