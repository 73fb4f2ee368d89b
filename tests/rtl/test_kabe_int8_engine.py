"""kabe_int8_engine (pipelined and NAIVE): results bit-exact against llm_accel.model.int8, per docs/streams.md."""

from __future__ import annotations

import random

import cocotb
import numpy as np
import pytest
from cocotb.triggers import ReadOnly, RisingEdge

from cocotb_util import AxisSink, AxisSource, cycles, param, reset, rtl, run_cocotb, signed, start, stream_beats
from llm_accel.model import frames, int8

pytestmark = pytest.mark.e2e  # end to end: real tools, minutes (the fast tier leaves it out: -m 'not e2e')

SOURCES = ["cores/lib/kabe_axis_fifo.v", "cores/stage3/rtl/kabe_int8_engine.v"]
INPUTS = ["s_axis_tvalid", "s_axis_tlast", "s_axis_tdata", "m_axis_tready"]
FIFO_DEPTH = 32  # the module's default, which these tests rely on


def _row_bytes() -> int:
    return param("ROW_BYTES", 512)


def _rows(n_small: int, n_large: int) -> int:
    """Fewer rows at ROW_BYTES=512, to keep the per-cycle Python simulation short."""
    return n_small if _row_bytes() <= 64 else n_large


def _results(words: list[tuple[int, int]]) -> list[int]:
    return [signed(d, 32) for d, _ in words]


def _tlasts(words: list[tuple[int, int]]) -> list[int]:
    return [last for _, last in words]


def _expect_frames(got: list[tuple[int, int]], fs: list[frames.Frame]) -> None:
    """Results equal the model's, in order, with tlast exactly on each frame's last result."""
    want = [int(v) for f in fs for v in f.expected]
    want_last = [int(i == f.rows - 1) for f in fs for i in range(f.rows)]
    assert _results(got) == want
    assert _tlasts(got) == want_last


async def _watch_tready(dut) -> None:
    while True:
        await RisingEdge(dut.clk)
        await ReadOnly()
        assert int(dut.s_axis_tready.value) == 1, "s_axis_tready must be constant 1"


@cocotb.test()
async def frames_match_model_back_to_back(dut):
    rng = np.random.default_rng(1)
    await start(dut, inputs=INPUTS)
    cocotb.start_soon(_watch_tready(dut))
    src, snk = AxisSource(dut, "s_axis"), AxisSink(dut, "m_axis")
    fs = [frames.int8_frame(rng, rows, _row_bytes()) for rows in (_rows(5, 2), 1, _rows(7, 3))]
    # extreme values: -128 * -128 everywhere is the largest sum
    x = np.full(_row_bytes(), -128, dtype=np.int8)
    w = np.array([np.full(_row_bytes(), -128), np.full(_row_bytes(), 127)], dtype=np.int8)
    fs.append(frames.Frame(np.concatenate([x.view(np.uint8), w.view(np.uint8).ravel()]), int8.matvec(x, w), 2))
    for f in fs:
        await src.send(stream_beats(f.stream))
    got = await snk.wait_words(sum(f.rows for f in fs))
    _expect_frames(got, fs)
    await snk.expect_quiet(40)
    assert int(dut.status_overflow.value) == 0


@cocotb.test()
async def random_tvalid_gaps_and_ready(dut):
    rng = np.random.default_rng(2)
    prng = random.Random(2)
    await start(dut, inputs=INPUTS)
    src = AxisSource(dut, "s_axis", rng=prng, gap_prob=0.4)
    snk = AxisSink(dut, "m_axis", rng=prng, ready_prob=0.6)
    fs = [frames.int8_frame(rng, rows, _row_bytes()) for rows in (_rows(9, 2), _rows(6, 2))]
    for f in fs:
        await src.send(stream_beats(f.stream))
    got = await snk.wait_words(sum(f.rows for f in fs))
    _expect_frames(got, fs)
    await snk.expect_quiet(40)
    assert int(dut.status_overflow.value) == 0


@cocotb.test()
async def backpressure_within_fifo_capacity(dut):
    """m_axis_tready low while exactly FIFO_DEPTH results are produced: none lost, order kept."""
    rng = np.random.default_rng(3)
    await start(dut, inputs=INPUTS)
    src, snk = AxisSource(dut, "s_axis"), AxisSink(dut, "m_axis")
    snk.hold_ready_low()
    fs = [frames.int8_frame(rng, rows, _row_bytes()) for rows in (FIFO_DEPTH - 10, 10)]
    for f in fs:
        await src.send(stream_beats(f.stream))
    await cycles(dut, 10)  # let the pipeline drain into the FIFO
    assert snk.words == []
    assert int(dut.status_overflow.value) == 0
    snk.release()
    got = await snk.wait_words(FIFO_DEPTH)
    _expect_frames(got, fs)
    await snk.expect_quiet(20)
    assert int(dut.status_overflow.value) == 0


@cocotb.test()
async def backpressure_held_too_long_sets_overflow(dut):
    rng = np.random.default_rng(4)
    await start(dut, inputs=INPUTS)
    src, snk = AxisSource(dut, "s_axis"), AxisSink(dut, "m_axis")
    snk.hold_ready_low()
    f = frames.int8_frame(rng, FIFO_DEPTH + 2, _row_bytes())
    await src.send(stream_beats(f.stream))
    await cycles(dut, 10)
    assert int(dut.status_overflow.value) == 1
    snk.release()
    got = await snk.wait_words(FIFO_DEPTH)
    assert _results(got) == [int(v) for v in f.expected[:FIFO_DEPTH]], "results stored before the overflow survive"
    await snk.expect_quiet(20)
    assert int(dut.status_overflow.value) == 1, "overflow is sticky"
    await reset(dut)
    await RisingEdge(dut.clk)
    assert int(dut.status_overflow.value) == 0, "reset clears overflow"
    g = frames.int8_frame(rng, 2, _row_bytes())
    await src.send(stream_beats(g.stream))
    got = (await snk.wait_words(FIFO_DEPTH + 2))[FIFO_DEPTH:]
    _expect_frames(got, [g])


@cocotb.test()
async def early_tlast_emits_partial_row_with_tlast(dut):
    row_bytes = _row_bytes()
    row_beats = row_bytes // 8
    rng = np.random.default_rng(5)
    await start(dut, inputs=INPUTS)
    src, snk = AxisSource(dut, "s_axis"), AxisSink(dut, "m_axis")
    sent: list[frames.Frame] = []
    for k in sorted({1, row_beats // 2, row_beats - 1} - {0}):
        f = frames.int8_frame(rng, 3, row_bytes)
        cut = (1 + 2) * row_bytes + 8 * k  # x, two full rows, k beats of the third
        x = f.stream[:row_bytes].view(np.int8)
        partial = np.zeros(row_bytes, dtype=np.int8)
        partial[: 8 * k] = f.stream[3 * row_bytes : cut].view(np.int8)
        want = np.concatenate([f.expected[:2], int8.matvec(x, partial[None, :])])
        sent.append(frames.Frame(f.stream[:cut], want, 3))
    clean = frames.int8_frame(rng, 2, row_bytes)  # the engine must wait for this frame's x
    for f in sent + [clean]:
        await src.send(stream_beats(f.stream))
    got = await snk.wait_words(sum(f.rows for f in sent + [clean]))
    _expect_frames(got, sent + [clean])
    await snk.expect_quiet(40)


@cocotb.test()
async def tlast_inside_x_emits_nothing(dut):
    row_bytes = _row_bytes()
    rng = np.random.default_rng(6)
    await start(dut, inputs=INPUTS)
    src, snk = AxisSource(dut, "s_axis"), AxisSink(dut, "m_axis")
    junk = frames.int8_frame(rng, 1, row_bytes)
    # a frame that is only part of x, then one that is exactly x: neither has a row
    await src.send(stream_beats(junk.stream[: max(8, row_bytes // 2)]))
    await src.send(stream_beats(junk.stream[row_bytes:]))
    await snk.expect_quiet(20)
    f = frames.int8_frame(rng, 3, row_bytes)
    await src.send(stream_beats(f.stream))
    _expect_frames(await snk.wait_words(3), [f])
    await snk.expect_quiet(40)


@cocotb.test()
async def reset_mid_frame_then_clean_frame(dut):
    row_bytes = _row_bytes()
    rng = np.random.default_rng(7)
    prng = random.Random(7)
    await start(dut, inputs=INPUTS)
    src, snk = AxisSource(dut, "s_axis"), AxisSink(dut, "m_axis")
    for trial in range(3):
        # stop somewhere after x: rows complete, results in flight in the pipeline and in the FIFO
        snk.hold_ready_low()
        f = frames.int8_frame(rng, 4, row_bytes)
        stop_beat = row_bytes // 8 + prng.randrange(1, 3 * row_bytes // 8)
        await src.send(stream_beats(f.stream)[:stop_beat], last=False)
        if trial == 2:
            await cycles(dut, 1)  # with the last row's result still in the pipeline
        await reset(dut, cycles=1 + trial)
        snk.release()
        await cycles(dut, 10)
        assert snk.words == [], f"results from before the reset leaked out: {snk.words}"
        g = frames.int8_frame(rng, 3, row_bytes)
        await src.send(stream_beats(g.stream))
        _expect_frames(await snk.wait_words(3), [g])
        await snk.expect_quiet(20)
        snk.clear()
    assert int(dut.status_overflow.value) == 0


@pytest.mark.parametrize("row_bytes,naive", [(32, 0), (32, 1), (8, 0), (512, 0), (512, 1)])
def test_kabe_int8_engine(row_bytes: int, naive: int) -> None:
    run_cocotb(
        toplevel="kabe_int8_engine",
        sources=rtl(*SOURCES),
        test_module="test_kabe_int8_engine",
        parameters={"ROW_BYTES": row_bytes, "NAIVE": naive},
        build_args=["-Wall", "-Wno-PINCONNECTEMPTY"],
    )
