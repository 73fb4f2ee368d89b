"""The V80 what-if fed by the engine kabe built: tokens/s that the post's arithmetic gives once the
bandwidth is what the V80 ternary design can take in, not only what HBM can deliver.

The post (llm_accel.perf.whatif_v80) divides an HBM bandwidth by bytes per token. A spatial engine only
reads what its channels accept: channels x beat bytes x beats/clk x clock. Those three come from the
V80 design's archived build (metrics.json: its simulation's ports and measured beats/clk, the build's
clock), never from constants here, so the table moves when the engine does. The bandwidth the
decode actually gets is the smaller of the two; which one binds is named in every row.

Assumptions, each named in the rendered table:
- the beat width is the board's memory lane (the V80 profile: 32 B per HBM NMU), which the design's
  streams are built to (cores/v80_ternary: 256-bit tdata);
- the clock is the build's constraint; on the open flow Versal timing is not estimated, so the clock
  is a target, not a measurement, until a routed Vivado build meets it;
- every channel streams weights all the time (batch-1 decode, no stalls besides the measured beats/clk).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping

from kabe import boards
from kabe.boards import Board
from llm_accel.figures import V80_BANDWIDTHS
from llm_accel.perf.whatif_v80 import FETCH_FRACTION, MODEL_BYTES, SPECULATION, Assumption, Row


ALVEO_V80 = boards.get("v80")


class EngineRecordError(ValueError):
    """The archived record cannot feed the model (named: which field is missing or wrong)."""


@dataclass(frozen=True)
class EngineFacts:
    """What the V80 engine takes in, from one archived build."""

    design: str
    commit: str
    flow: str
    channels: int
    beat_bytes: int
    beats_per_cycle: float
    clock_period_ns: float
    timing_measured: bool  # a routed (Vivado) timing met at this clock, or only a target

    @property
    def clock_mhz(self) -> float:
        return 1e3 / self.clock_period_ns

    @property
    def channel_gbps(self) -> float:
        return self.beat_bytes * self.beats_per_cycle / self.clock_period_ns  # bytes per ns is GB/s

    @property
    def engine_gbps(self) -> float:
        return self.channels * self.channel_gbps

    def channels_for(self, gbps: float) -> int:
        """Channels of this engine that would take in `gbps` (the V80 has at most 64 NMUs)."""
        return math.ceil(gbps / self.channel_gbps - 1e-9)


def _number(record: Mapping[str, Any], where: str, v: Any, integer: bool = False) -> float:
    ok = not isinstance(v, bool) and (isinstance(v, int) if integer else isinstance(v, (int, float)))
    if not ok or not math.isfinite(v) or v <= 0:
        raise EngineRecordError(f"{record.get('design', 'the record')}: {where} must be a positive "
                                f"{'integer' if integer else 'number'}, got {str(v)[:40]!r}")
    return v


def facts_from_record(record: Mapping[str, Any], board: Board = ALVEO_V80) -> EngineFacts:
    """EngineFacts of one archived metrics.json of a V80 design (its simulation must be in it: the
    beats/clk are measured, not assumed)."""
    sim = record.get("sim")
    if not isinstance(sim, Mapping):
        raise EngineRecordError(f"{record.get('design', 'the record')}: no simulation result in the record; "
                                f"the what-if needs the engine's measured beats/clk (build with verification on)")
    channels = int(_number(record, "sim.ports", sim.get("ports"), integer=True))
    if channels > board.memory_ports.count:
        raise EngineRecordError(f"{record.get('design')}: {channels} channels, but the {board.name} has "
                                f"{board.memory_ports.count} {board.memory_ports.name}s")
    timing = record.get("timing") if isinstance(record.get("timing"), Mapping) else {}
    wns = timing.get("wns_ns")
    measured = (timing.get("estimated") is False and isinstance(wns, (int, float)) and not isinstance(wns, bool)
                and math.isfinite(wns) and wns >= 0)
    return EngineFacts(
        design=str(record.get("design", "?")), commit=str(record.get("commit", "?")), flow=str(record.get("flow", "?")),
        channels=channels, beat_bytes=board.memory_ports.beat_bytes,
        beats_per_cycle=float(_number(record, "sim.beats_per_cycle", sim.get("beats_per_cycle"))),
        clock_period_ns=float(_number(record, "clock_period_ns", record.get("clock_period_ns"))),
        timing_measured=measured)


@dataclass(frozen=True)
class FedRow(Row):
    """A row of the post's table (bandwidth_gbps: the HBM figure) fed through the engine: step A divides
    what the engine takes in, when that is less than HBM delivers; steps B and C follow as in the post."""

    engine_gbps: float
    channels_to_saturate: int

    @property
    def hbm_gbps(self) -> float:
        return self.bandwidth_gbps

    @property
    def fed_gbps(self) -> float:
        return min(self.bandwidth_gbps, self.engine_gbps)

    @property
    def bound(self) -> str:
        return "engine" if self.engine_gbps < self.bandwidth_gbps else "HBM"

    @property
    def baseline_tok_s(self) -> float:
        return self.fed_gbps / self.bytes_per_token_gb


def table(facts: EngineFacts, fetch_fraction: float = FETCH_FRACTION.value, speculation: float = SPECULATION.value,
          models: dict[str, Assumption] | None = None) -> list[FedRow]:
    """Every model at every V80 bandwidth figure, fed through the engine of `facts`."""
    models = MODEL_BYTES if models is None else models
    return [FedRow(name, a.value, label, float(f), fetch_fraction, speculation, facts.engine_gbps,
                   facts.channels_for(float(f)))
            for label, f in V80_BANDWIDTHS.items() for name, a in models.items()]


def _tok(model: float, ref: float | None) -> str:
    return f"{model:,.0f}" if ref is None else f"{model:,.0f} (post {ref:,.0f})"


def render_markdown(facts: EngineFacts, rows: list[FedRow] | None = None) -> str:
    rows = table(facts) if rows is None else rows
    clock = (f"{facts.clock_mhz:,.0f} MHz ({facts.clock_period_ns:g} ns), met by a routed build" if facts.timing_measured
             else f"{facts.clock_mhz:,.0f} MHz ({facts.clock_period_ns:g} ns), the constraint: a target, not met by "
                  f"any routed build yet ({facts.flow} flow)")
    out = [f"The engine: {facts.design} at {facts.commit[:12]} ({facts.flow} flow): {facts.channels} channel(s) x "
           f"{facts.beat_bytes} B x {facts.beats_per_cycle:g} beats/clk (measured in simulation) x {clock} = "
           f"{facts.engine_gbps:,.1f} GB/s taken in ({facts.channel_gbps:,.1f} GB/s a channel).", "",
           "| model | bandwidth | HBM GB/s | engine GB/s | bound | channels to saturate | A: tok/s | B: / fetch | C: x spec |",
           "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        d = r.doc() or (None, None, None)
        over = (f" (the card has {ALVEO_V80.memory_ports.count})"
                if r.channels_to_saturate > ALVEO_V80.memory_ports.count else "")
        out.append(f"| {r.model} | {r.bandwidth_label} | {r.hbm_gbps:g} | {r.engine_gbps:,.1f} | {r.bound} | "
                   f"{r.channels_to_saturate}{over} | {_tok(r.baseline_tok_s, d[0])} | {_tok(r.sparse_tok_s, d[1])} | "
                   f"{_tok(r.speculative_tok_s, d[2])} |")
    out += ["", "Assumptions: the beat is the board's memory lane (V80 profile: "
                f"{facts.beat_bytes} B per {ALVEO_V80.memory_ports.name}); every channel streams weights all the "
                "time (batch 1); the clock as stated above; bytes per token, the fetch fraction and the speculation "
                "multiplier as in the post's table (llm_accel.perf.whatif_v80), with the conditions listed there."]
    return "\n".join(out)
