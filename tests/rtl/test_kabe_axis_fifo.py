"""kabe_axis_fifo: order and tlast kept, never stalls the writer, drops only when full (sticky flag), reset."""

from __future__ import annotations

import random

import cocotb
import pytest
from cocotb.triggers import ReadOnly, RisingEdge

from cocotb_util import AxisSink, AxisSource, cycles, param, reset, rtl, run_cocotb, start

pytestmark = pytest.mark.e2e  # end to end: real tools, minutes (the fast tier leaves it out: -m 'not e2e')

SOURCES = ["cores/lib/kabe_axis_fifo.v"]
INPUTS = ["s_axis_tvalid", "s_axis_tlast", "s_axis_tdata", "m_axis_tready"]


def _words(n: int, width: int, rng: random.Random) -> list[tuple[int, int]]:
    return [(rng.getrandbits(width), int(rng.random() < 0.25)) for _ in range(n)]


async def _push(src: AxisSource, words: list[tuple[int, int]]) -> None:
    for data, last in words:
        await src.send([data], last=bool(last))


@cocotb.test()
async def order_and_tlast_with_gaps_and_backpressure(dut):
    """Random writes and random reads, the writer never letting occupancy pass DEPTH: no loss."""
    width, depth = param("WIDTH", 32), param("DEPTH", 32)
    rng = random.Random(11)
    await start(dut, inputs=INPUTS)
    src = AxisSource(dut, "s_axis", rng=rng, gap_prob=0.2)
    snk = AxisSink(dut, "m_axis", rng=rng, ready_prob=0.5)
    words = _words(8 * depth, width, rng)
    peak = 0
    for sent, (data, last) in enumerate(words):
        # occupancy at the coming edge = words sent - words read so far (a read in this cycle
        # frees its slot only after the edge, so it does not count)
        while sent - len(snk.words) >= depth:
            await RisingEdge(dut.clk)
        peak = max(peak, sent - len(snk.words) + 1)
        await src.send([data], last=bool(last))
    got = await snk.wait_words(len(words))
    assert got == words
    await snk.expect_quiet(20)
    assert int(dut.status_overflow.value) == 0
    assert peak == depth, f"the test should have filled the FIFO at least once (peak {peak} of {depth})"


@cocotb.test()
async def full_flag_then_drain(dut):
    width, depth = param("WIDTH", 32), param("DEPTH", 32)
    rng = random.Random(12)
    await start(dut, inputs=INPUTS)
    snk = AxisSink(dut, "m_axis", rng=rng)
    snk.hold_ready_low()
    src = AxisSource(dut, "s_axis", rng=rng)
    words = _words(depth, width, rng)
    await ReadOnly()
    assert int(dut.status_full.value) == 0
    await RisingEdge(dut.clk)
    await _push(src, words)
    await ReadOnly()
    assert int(dut.s_axis_tready.value) == 1, "the FIFO never stalls its writer"
    assert int(dut.status_full.value) == 1, "FIFO holding DEPTH words must report full"
    assert int(dut.m_axis_tvalid.value) == 1
    assert int(dut.status_overflow.value) == 0, "exactly DEPTH words must not overflow"
    await RisingEdge(dut.clk)
    snk.release()
    assert await snk.wait_words(depth) == words
    await snk.expect_quiet(10)
    await ReadOnly()
    assert int(dut.m_axis_tvalid.value) == 0
    assert int(dut.status_full.value) == 0


@cocotb.test()
async def full_fifo_read_and_written_in_one_cycle_keeps_everything(dut):
    """Full, then one write and one read every cycle: the read frees the slot the write takes."""
    width, depth = param("WIDTH", 32), param("DEPTH", 32)
    rng = random.Random(15)
    await start(dut, inputs=INPUTS)
    words = _words(3 * depth, width, rng)
    got = []
    # one coroutine drives both sides so the first read lands exactly with a write to a full FIFO
    for i, (data, last) in enumerate(words + [(0, 0)] * depth):
        dut.s_axis_tvalid.value = int(i < len(words))
        dut.s_axis_tdata.value = data
        dut.s_axis_tlast.value = last
        dut.m_axis_tready.value = int(i >= depth)
        await ReadOnly()
        if i == depth:
            assert int(dut.status_full.value) == 1
        if i >= depth and int(dut.m_axis_tvalid.value):
            got.append((int(dut.m_axis_tdata.value), int(dut.m_axis_tlast.value)))
        await RisingEdge(dut.clk)
    assert got == words
    assert int(dut.status_overflow.value) == 0


@cocotb.test()
async def overflow_is_sticky_and_drops_only_the_extra(dut):
    width, depth = param("WIDTH", 32), param("DEPTH", 32)
    rng = random.Random(13)
    await start(dut, inputs=INPUTS)
    snk = AxisSink(dut, "m_axis", rng=rng)
    snk.hold_ready_low()
    src = AxisSource(dut, "s_axis", rng=rng)
    words = _words(depth + 3, width, rng)
    await _push(src, words[:depth])
    await ReadOnly()
    assert int(dut.status_overflow.value) == 0
    await RisingEdge(dut.clk)
    await _push(src, words[depth:])
    await ReadOnly()
    assert int(dut.status_overflow.value) == 1
    await RisingEdge(dut.clk)
    snk.release()
    assert await snk.wait_words(depth) == words[:depth], "the words stored before the overflow must survive"
    await snk.expect_quiet(10)
    assert int(dut.status_overflow.value) == 1, "overflow must stay set after draining"
    # a later clean write does not clear it either; only reset does
    await _push(src, words[:1])
    assert (await snk.wait_words(depth + 1))[-1] == words[0]
    assert int(dut.status_overflow.value) == 1
    await reset(dut)
    await RisingEdge(dut.clk)
    assert int(dut.status_overflow.value) == 0


@cocotb.test()
async def reset_empties_the_fifo(dut):
    width, depth = param("WIDTH", 32), param("DEPTH", 32)
    rng = random.Random(14)
    await start(dut, inputs=INPUTS)
    snk = AxisSink(dut, "m_axis", rng=rng)
    snk.hold_ready_low()
    src = AxisSource(dut, "s_axis", rng=rng)
    await _push(src, _words(depth // 2, width, rng))
    await reset(dut)
    await ReadOnly()
    assert int(dut.m_axis_tvalid.value) == 0, "reset must drop stored words"
    await RisingEdge(dut.clk)
    snk.release()
    await cycles(dut, 5)
    assert snk.words == []
    words = _words(depth, width, rng)
    await _push(src, words)
    assert await snk.wait_words(depth) == words


@pytest.mark.parametrize("depth,width", [(4, 8), (32, 32)])
def test_kabe_axis_fifo(depth: int, width: int) -> None:
    run_cocotb(
        toplevel="kabe_axis_fifo",
        sources=rtl(*SOURCES),
        test_module="test_kabe_axis_fifo",
        parameters={"DEPTH": depth, "WIDTH": width},
        build_args=["-Wall"],
    )
