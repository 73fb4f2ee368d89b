"""Checks every design top must pass (docs/streams.md, "Top-level ports"), for the cocotb side.

A top has ports p = 0..NPORTS-1, each an input stream s{p}_axis, a result stream m{p}_axis and
stat{p}_invalid / stat{p}_overflow. These coroutines drive all ports at once with different
frames and compare every port's results with llm_accel.model (through llm_accel.model.frames.build), so a
swapped or shared port shows up. They are plain async functions: wrap them in @cocotb.test() in
tests/rtl/test_<top>.py.
"""

from __future__ import annotations

import random

import cocotb
import numpy as np
from cocotb.triggers import ReadOnly, RisingEdge

from cocotb_util import AxisSink, AxisSource, cycles, reset, signed, start, stream_beats
from llm_accel.model import frames


def _inputs(nports: int) -> list[str]:
    return [f"s{p}_axis_{s}" for p in range(nports) for s in ("tvalid", "tlast", "tdata")] + [
        f"m{p}_axis_tready" for p in range(nports)
    ]


def _word_bits(kind: str) -> int:
    return 64 if kind == "probe" else 32


def expected_words(kind: str, fs: list[frames.Frame]) -> list[tuple[int, int]]:
    """(value, tlast) per result word, values as the port reads them (int32 signed, probe unsigned)."""
    out = []
    for f in fs:
        n = len(f.expected)
        out += [(int(v), int(i == n - 1)) for i, v in enumerate(f.expected)]
    return out


def _as_values(kind: str, words: list[tuple[int, int]]) -> list[tuple[int, int]]:
    if kind == "probe":
        return words
    return [(signed(d, 32), last) for d, last in words]


async def _watch_ports(dut, nports: int) -> None:
    """tready constant 1 and stat{p}_invalid 0 on every port, every cycle."""
    while True:
        await RisingEdge(dut.clk)
        await ReadOnly()
        for p in range(nports):
            assert int(getattr(dut, f"s{p}_axis_tready").value) == 1, f"s{p}_axis_tready must be constant 1"
            assert int(getattr(dut, f"stat{p}_invalid").value) == 0, f"stat{p}_invalid must be 0 in this design"


async def all_ports_match_model(dut, kind: str, nports: int, row_bytes: int, seed: int = 1) -> None:
    """Different frames on every port at once, random gaps and backpressure: each port is exact."""
    rng = np.random.default_rng(seed)
    prng = random.Random(seed)
    await start(dut, inputs=_inputs(nports))
    cocotb.start_soon(_watch_ports(dut, nports))
    jobs, sinks, want = [], [], []
    for p in range(nports):
        fs = [frames.build(kind, rng, rows, row_bytes) for rows in (3 + p, 2)]
        src = AxisSource(dut, f"s{p}_axis", rng=prng, gap_prob=0.3 * p)
        sinks.append(AxisSink(dut, f"m{p}_axis", rng=prng, ready_prob=1.0 - 0.3 * p))
        want.append(expected_words(kind, fs))

        async def feed(src=src, fs=fs):
            for f in fs:
                await src.send(stream_beats(f.stream))

        jobs.append(cocotb.start_soon(feed()))
    for job in jobs:
        await job
    for p in range(nports):
        got = await sinks[p].wait_words(len(want[p]))
        if kind == "probe" and p > 0:  # cycles == beats only without gaps: check beats, bytes and tlast
            got = [(d, last) if i % 3 != 2 else (None, last) for i, (d, last) in enumerate(got)]
            w = [(d, last) if i % 3 != 2 else (None, last) for i, (d, last) in enumerate(want[p])]
        else:
            got, w = _as_values(kind, got), want[p]
        assert got == w, f"port {p}: results differ from the model"
        await sinks[p].expect_quiet(10)
        assert int(getattr(dut, f"stat{p}_overflow").value) == 0


async def overflow_is_per_port(dut, kind: str, nports: int, row_bytes: int, fifo_depth: int) -> None:
    """Port nports-1 held back past its FIFO sets only its own stat_overflow; reset clears it."""
    rng = np.random.default_rng(7)
    await start(dut, inputs=_inputs(nports))
    last = nports - 1
    sinks = [AxisSink(dut, f"m{p}_axis") for p in range(nports)]
    sinks[last].hold_ready_low()
    rows = fifo_depth + 2 if kind != "probe" else 1
    n_frames = 1 if kind != "probe" else fifo_depth + 1
    jobs = []
    for p in range(nports):
        fs = [frames.build(kind, rng, rows, row_bytes) for _ in range(n_frames)]
        src = AxisSource(dut, f"s{p}_axis")

        async def feed(src=src, fs=fs):
            for f in fs:
                await src.send(stream_beats(f.stream))

        jobs.append(cocotb.start_soon(feed()))
    for job in jobs:
        await job
    await cycles(dut, 20)
    assert int(getattr(dut, f"stat{last}_overflow").value) == 1
    for p in range(last):
        assert int(getattr(dut, f"stat{p}_overflow").value) == 0, f"port {p} must not see port {last}'s overflow"
    await reset(dut)
    await RisingEdge(dut.clk)
    for p in range(nports):
        assert int(getattr(dut, f"stat{p}_overflow").value) == 0


async def reset_mid_frame_then_clean_frames(dut, kind: str, nports: int, row_bytes: int) -> None:
    rng = np.random.default_rng(9)
    await start(dut, inputs=_inputs(nports))
    sinks = [AxisSink(dut, f"m{p}_axis") for p in range(nports)]
    srcs = [AxisSource(dut, f"s{p}_axis") for p in range(nports)]
    for s in sinks:
        s.hold_ready_low()
    cut = [frames.build(kind, rng, 4, row_bytes) for _ in range(nports)]
    jobs = [
        cocotb.start_soon(srcs[p].send(stream_beats(cut[p].stream)[: 2 * row_bytes // 8 + 1 + p], last=False))
        for p in range(nports)
    ]
    for job in jobs:
        await job
    await reset(dut, cycles=2)
    for s in sinks:
        s.release()
    await cycles(dut, 10)
    for p, s in enumerate(sinks):
        assert s.words == [], f"port {p}: results from before the reset leaked out"
    clean = [frames.build(kind, rng, 2, row_bytes) for _ in range(nports)]
    jobs = [cocotb.start_soon(srcs[p].send(stream_beats(clean[p].stream))) for p in range(nports)]
    for job in jobs:
        await job
    for p in range(nports):
        want = expected_words(kind, [clean[p]])
        assert _as_values(kind, await sinks[p].wait_words(len(want))) == want, f"port {p} after reset"
