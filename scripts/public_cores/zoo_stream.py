"""A valid/ready stream through a core, for the zoo's cocotb testbenches (scripts/try_public_cores.py copies
this file to each throwaway project's root, which kabe puts on the testbench's sys.path).

Port names are the core's own; a name written "!o_full" is the inverse of that port (a FIFO's full flag
is its input's ready, "!o_empty" its output's valid). The input side and the output side each run on
their own clock (the same one for a one-clock core): random gaps on the input, random backpressure on
the output, every beat compared in order. Besides the verdict, the run counts how often backpressure
reached the core's input (valid offered, ready low), the evidence that the core's full path ran; with
KABE_ZOO_EVIDENCE set, that count is written there as JSON for the zoo's table."""

from __future__ import annotations

import json
import os
import random
from dataclasses import dataclass

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, ReadOnly, RisingEdge, Timer


@dataclass
class Side:
    clk: str
    valid: str
    ready: str
    data: str
    period_ns: float = 10.0


def _get(dut, name):
    inv = name.startswith("!")
    v = int(getattr(dut, name.lstrip("!")).value)
    return 1 - v if inv else v


def _set(dut, name, value):
    inv = name.startswith("!")
    getattr(dut, name.lstrip("!")).value = (1 - value) if inv else value


async def _reset(dut, resets, clocks):
    for name, active_low in resets:
        getattr(dut, name).value = 0 if active_low else 1
    for _ in range(5):
        await RisingEdge(getattr(dut, clocks[0]))
    for name, active_low in resets:
        getattr(dut, name).value = 1 if active_low else 0
    for _ in range(4):
        await RisingEdge(getattr(dut, clocks[-1]))


async def _source(dut, side: Side, words, rng, valid_duty, count):
    """Offers words[i] on a cycle with probability valid_duty, held until taken."""
    clk = getattr(dut, side.clk)
    i, offer = 0, False
    while i < len(words):
        await FallingEdge(clk)
        if not offer and rng.random() < valid_duty:
            offer = True
        if offer:
            getattr(dut, side.data).value = words[i]
        _set(dut, side.valid, int(offer))
        await ReadOnly()
        if offer:
            if _get(dut, side.ready):
                i, offer = i + 1, False
            else:
                count["input_waited"] += 1
    await FallingEdge(clk)
    _set(dut, side.valid, 0)


async def _sink(dut, side: Side, n, rng, ready_duty, got, count):
    clk = getattr(dut, side.clk)
    idle = 0
    while len(got) < n:
        await FallingEdge(clk)
        ready = int(rng.random() < ready_duty)
        _set(dut, side.ready, ready)
        await ReadOnly()
        if _get(dut, side.valid):
            if ready:
                got.append(int(getattr(dut, side.data).value))
                idle = 0
            else:
                count["output_stalled"] += 1
        idle += 1
        assert idle < 10_000, f"no beat for 10,000 cycles after {len(got)} of {n}"


async def passthrough(dut, inp: Side, out: Side, width: int, *, beats: int = 3000, seed: int = 1,
                      valid_duty: float = 0.8, ready_duty: float = 0.7, resets=(("rst", False),),
                      held: dict | None = None, name: str = "backpressure"):
    """Every beat comes out once, in order, bit for bit; returns the counts."""
    rng = random.Random(seed)
    for port, value in (held or {}).items():
        getattr(dut, port).value = value
    clocks = [inp.clk] if inp.clk == out.clk else [inp.clk, out.clk]
    for c, period in ((inp.clk, inp.period_ns), (out.clk, out.period_ns))[: len(clocks)]:
        cocotb.start_soon(Clock(getattr(dut, c), period, unit="ns").start())
    _set(dut, inp.valid, 0)
    _set(dut, out.ready, 0)
    getattr(dut, inp.data).value = 0
    await _reset(dut, resets, clocks)
    words = [rng.getrandbits(width) for _ in range(beats)]
    got: list[int] = []
    count = {"input_waited": 0, "output_stalled": 0}
    src = cocotb.start_soon(_source(dut, inp, words, rng, valid_duty, count))
    await _sink(dut, out, beats, random.Random(seed + 1), ready_duty, got, count)
    await src
    for _ in range(20):  # nothing extra comes out
        await FallingEdge(getattr(dut, out.clk))
        _set(dut, out.ready, 1)
        await ReadOnly()
        assert not (_get(dut, out.valid) and _get(dut, out.ready)), "an extra beat came out"
    bad = [k for k, (a, b) in enumerate(zip(got, words)) if a != b]
    assert not bad, f"{len(bad)} of {beats} beats differ; first at beat {bad[0]}: got {got[bad[0]]:#x}, sent {words[bad[0]]:#x}"
    dut._log.info("%d beats in order; the input waited %d cycles, the output stalled %d", beats,
                  count["input_waited"], count["output_stalled"])
    where = os.environ.get("KABE_ZOO_EVIDENCE")
    if where:
        with open(where, "a") as f:
            f.write(json.dumps({"test": name, "beats": beats, **count}) + "\n")
    await Timer(1, "ns")
    return count
