"""kabe_probe: beats, bytes and cycles per frame against llm_accel.model.probe, per docs/streams.md."""

from __future__ import annotations

import random

import cocotb
import pytest
from cocotb.triggers import ReadOnly, RisingEdge

from cocotb_util import AxisSink, cycles, param, reset, rtl, run_cocotb, start
from llm_accel.model import probe

pytestmark = pytest.mark.e2e  # end to end: real tools, minutes (the fast tier leaves it out: -m 'not e2e')

SOURCES = ["cores/lib/kabe_axis_fifo.v", "cores/stage2/rtl/kabe_probe.v"]
INPUTS = ["s_axis_tvalid", "s_axis_tlast", "s_axis_tdata", "m_axis_tready"]


def _pattern(beats: int, rng: random.Random | None = None, gap_prob: float = 0.0) -> list[int]:
    """Per-cycle tvalid for one frame: starts and ends with a beat, random idle cycles between."""
    out = [1]
    for _ in range(beats - 1):
        while rng is not None and rng.random() < gap_prob:
            out.append(0)
        out.append(1)
    return out


async def _drive(dut, pattern: list[int], last: bool = True, rng: random.Random | None = None) -> None:
    """Drive one frame cycle by cycle (tready is 1); tlast on the final beat when ``last``."""
    for i, valid in enumerate(pattern):
        dut.s_axis_tvalid.value = valid
        dut.s_axis_tlast.value = int(last and i == len(pattern) - 1)
        dut.s_axis_tdata.value = rng.getrandbits(64) if rng else 0xFFFF_FFFF_FFFF_FFFF
        await RisingEdge(dut.clk)
    dut.s_axis_tvalid.value = 0
    dut.s_axis_tlast.value = 0


def _report(pattern: list[int]) -> list[int]:
    return [int(v) for v in probe.expected(8 * sum(pattern), cycles=len(pattern))]


def _expect_reports(got: list[tuple[int, int]], patterns: list[list[int]]) -> None:
    want = [w for p in patterns for w in _report(p)]
    assert [d for d, _ in got] == want
    assert [last for _, last in got] == [0, 0, 1] * len(patterns), "tlast exactly on every third word"


async def _watch_tready(dut) -> None:
    while True:
        await RisingEdge(dut.clk)
        await ReadOnly()
        assert int(dut.s_axis_tready.value) == 1, "s_axis_tready must be constant 1"


@cocotb.test()
async def reports_match_model_back_to_back(dut):
    """Frames of 1, 2, 3 and many beats with no idle cycle between them (tvalid held high).

    The serializer drains one report per 3 cycles, so even FIFO_DEPTH=2 keeps up with this mix.
    """
    await start(dut, inputs=INPUTS)
    cocotb.start_soon(_watch_tready(dut))
    snk = AxisSink(dut, "m_axis")
    patterns = [_pattern(n) for n in (1, 1, 3, 2, 3, 64, 1, 200, 3)]
    for p in patterns:
        await _drive(dut, p)
    got = await snk.wait_words(3 * len(patterns))
    _expect_reports(got, patterns)
    assert [d for d, _ in got[:3]] == [int(v) for v in probe.expected(8)], "a one-beat frame: 1, 8, 1"
    await snk.expect_quiet(20)
    assert int(dut.status_overflow.value) == 0


@cocotb.test()
async def cycles_count_tvalid_gaps(dut):
    rng = random.Random(21)
    await start(dut, inputs=INPUTS)
    snk = AxisSink(dut, "m_axis", rng=rng, ready_prob=0.5)
    patterns = [_pattern(n, rng, gap_prob=0.4) for n in (5, 1, 40, 17)]
    assert any(len(p) > sum(p) for p in patterns), "the test must contain gaps"
    for p in patterns:
        await _drive(dut, p, rng=rng)
        for _ in range(rng.randrange(0, 4)):  # idle between frames is not counted
            await RisingEdge(dut.clk)
    got = await snk.wait_words(3 * len(patterns))
    _expect_reports(got, patterns)
    await snk.expect_quiet(20)


@cocotb.test()
async def backpressure_within_fifo_capacity(dut):
    depth = param("FIFO_DEPTH", 16)
    rng = random.Random(22)
    await start(dut, inputs=INPUTS)
    snk = AxisSink(dut, "m_axis")
    snk.hold_ready_low()
    patterns = [_pattern(rng.randrange(1, 6)) for _ in range(depth)]
    for p in patterns:
        await _drive(dut, p)
    await cycles(dut, 5)
    assert snk.words == [] and int(dut.status_overflow.value) == 0
    snk.release()
    _expect_reports(await snk.wait_words(3 * depth), patterns)
    await snk.expect_quiet(20)
    assert int(dut.status_overflow.value) == 0


@cocotb.test()
async def backpressure_held_too_long_sets_overflow(dut):
    depth = param("FIFO_DEPTH", 16)
    rng = random.Random(23)
    await start(dut, inputs=INPUTS)
    snk = AxisSink(dut, "m_axis")
    snk.hold_ready_low()
    patterns = [_pattern(rng.randrange(1, 6)) for _ in range(depth + 1)]
    for p in patterns:
        await _drive(dut, p)
    await cycles(dut, 5)
    assert int(dut.status_overflow.value) == 1
    snk.release()
    _expect_reports(await snk.wait_words(3 * depth), patterns[:depth])
    await snk.expect_quiet(20)
    assert int(dut.status_overflow.value) == 1, "overflow is sticky"
    await reset(dut)
    await RisingEdge(dut.clk)
    assert int(dut.status_overflow.value) == 0


@cocotb.test()
async def reset_mid_frame_then_clean_frame(dut):
    await start(dut, inputs=INPUTS)
    snk = AxisSink(dut, "m_axis")
    snk.hold_ready_low()
    await _drive(dut, _pattern(3))  # a finished report waiting in the FIFO
    await _drive(dut, _pattern(10), last=False)  # and a frame cut short
    await reset(dut, cycles=2)
    snk.release()
    await cycles(dut, 10)
    assert snk.words == [], f"reports from before the reset leaked out: {snk.words}"
    p = _pattern(7)
    await _drive(dut, p)
    _expect_reports(await snk.wait_words(3), [p])
    await snk.expect_quiet(20)


@pytest.mark.parametrize("fifo_depth", [2, 16])
def test_kabe_probe(fifo_depth: int) -> None:
    run_cocotb(
        toplevel="kabe_probe",
        sources=rtl(*SOURCES),
        test_module="test_kabe_probe",
        parameters={"FIFO_DEPTH": fifo_depth},
        build_args=["-Wall", "-Wno-PINCONNECTEMPTY"],
    )
