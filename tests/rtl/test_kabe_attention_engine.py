"""kabe_attention_engine (stage 5): bit-exact against llm_accel.model.attention, plus the contract's corners.

Every result word is compared with llm_accel.model.attention (attention_hw via frames.build("attention")).
The exp ROM and the adder trees are generated into the build directory by scripts/gen_exp_table.py
and scripts/gen_adder_tree.py with the parameters stage5.core asks for.
"""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from cocotb_util import (
    BUILD_ROOT,
    REPO_ROOT,
    AxisSink,
    AxisSource,
    cycles,
    reset,
    rtl,
    run_cocotb,
    signed,
    start,
    stream_beats,
)

pytestmark = pytest.mark.e2e  # end to end: real tools, minutes (the fast tier leaves it out: -m 'not e2e')

RESULT_WORDS = 192
DRAIN_CYCLES = 400  # V end -> last result word is ~230 cycles

# --------------------------------------------------------------------------------------------
# cocotb side
# --------------------------------------------------------------------------------------------

try:
    import cocotb
except ImportError:
    cocotb = None

INPUTS = ("s_axis_tdata", "s_axis_tvalid", "s_axis_tlast", "m_axis_tready")

if cocotb is not None:
    import numpy as np

    from llm_accel.model import attention, frames

    def _frames(seed: int, contexts) -> list:
        rng = np.random.default_rng(seed)
        return [frames.build("attention", rng, rows=n, row_bytes=64) for n in contexts]

    def _check(words, expected_frames, label: str) -> None:
        want = np.concatenate([f.expected for f in expected_frames]).astype(np.int64)
        got = np.array([signed(w, 32) for w, _ in words], dtype=np.int64)
        assert got.size == want.size, f"{label}: {got.size} words, expected {want.size}"
        bad = np.flatnonzero(got != want)
        assert bad.size == 0, f"{label}: {bad.size} mismatches, first at word {bad[0]}: got {got[bad[0]]} want {want[bad[0]]}"
        lasts = [i for i, (_, last) in enumerate(words) if last]
        assert lasts == [RESULT_WORDS * (k + 1) - 1 for k in range(len(expected_frames))], f"{label}: tlast at {lasts}"

    async def _run_frames(dut, contexts, seed, gap_prob=0.0, ready_prob=1.0, concatenate=False, idle=0, first=True):
        """Send frames (one transfer each, `idle` cycles apart, or all in one) and compare."""
        if first:
            await start(dut, inputs=INPUTS)
        else:
            await reset(dut)
        rng = random.Random(seed)
        src = AxisSource(dut, "s_axis", rng=rng, gap_prob=gap_prob)
        snk = AxisSink(dut, "m_axis", rng=rng, ready_prob=ready_prob)
        fr = _frames(seed, contexts)
        if concatenate:
            await src.send(stream_beats(np.concatenate([f.stream for f in fr])), last=True)
        else:
            for f in fr:
                await src.send(stream_beats(f.stream), last=True)
                await cycles(dut, idle)
        try:
            words = await snk.wait_words(RESULT_WORDS * len(fr), timeout_cycles=20_000)
        except AssertionError:
            ws = snk.words
            got = [np.array([signed(w, 32) for w, _ in ws[i:i + RESULT_WORDS]]) for i in range(0, len(ws), RESULT_WORDS)]
            match = [[j for j, f in enumerate(fr) if np.array_equal(g, f.expected)] for g in got]
            raise AssertionError(f"{len(ws)} words, tlast at {[i for i, w in enumerate(ws) if w[1]]}, "
                                 f"stat_invalid {int(dut.stat_invalid.value)}, result blocks match frames {match}")
        await snk.expect_quiet(DRAIN_CYCLES)
        snk.stop()
        _check(words, fr, f"contexts {contexts}")
        assert int(dut.stat_invalid.value) == 0
        assert int(dut.stat_overflow.value) == 0
        assert int(dut.s_axis_tready.value) == 1

    @cocotb.test()
    async def frames_match_model(dut):
        """Separate transfers (tlast on each), tvalid and tready held high; short frames need a pause
        between them (the DMA re-arm gap), from n = 25 on they run back to back (docs/streams.md)."""
        await _run_frames(dut, [1, 2, 3, 8], seed=1, idle=220)
        await _run_frames(dut, [25, 40, 25, 31], seed=11, first=False)

    @cocotb.test()
    async def gaps_and_backpressure(dut):
        """Random tvalid gaps on the input and random tready on the output."""
        await _run_frames(dut, [1, 5, 33, 30], seed=2, gap_prob=0.3, ready_prob=0.4, idle=150)

    @cocotb.test()
    async def concatenated_frames(dut):
        """Several frames in one transfer: tlast only at its end; the engine finds the headers."""
        await _run_frames(dut, [25, 30, 64, 26], seed=3, concatenate=True)

    @cocotb.test()
    async def extremes(dut):
        """All -128 (largest scores, |a| = 128 L) and a near one-hot softmax; exact at every width."""
        await start(dut, inputs=INPUTS)
        src = AxisSource(dut, "s_axis")
        snk = AxisSink(dut, "m_axis")
        n = 40
        q = np.full((3, 64), -128, np.int8)
        k = np.full((n, 64), -128, np.int8)
        v = np.full((n, 64), -128, np.int8)
        v[:, 7] = 127
        k[5] = 127  # token 5 scores far below the rest
        cases = [(q, k, v, attention.Header(n, 65535, 0)), (q, k, v, attention.Header(n, 1, 63)),
                 (q, k, v, attention.Header(n, 40000, 17))]
        expected = []
        for qq, kk, vv, hd in cases:
            await src.send(stream_beats(attention.frame_stream(qq, kk, vv, hd)), last=True)
            expected.append(attention.attention_hw(qq, kk, vv, hd.c, hd.shift).ravel())
        words = await snk.wait_words(RESULT_WORDS * len(cases), timeout_cycles=20_000)
        got = np.array([signed(w, 32) for w, _ in words])
        np.testing.assert_array_equal(got, np.concatenate(expected))

    @cocotb.test()
    async def reset_mid_frame(dut):
        """rst in the middle of the K rows and again in the V rows: the next frame is exact."""
        await start(dut, inputs=INPUTS)
        src = AxisSource(dut, "s_axis")
        snk = AxisSink(dut, "m_axis")
        fr = _frames(4, [20, 20, 9])
        beats = stream_beats(fr[0].stream)
        await src.send(beats[: 25 + 8 * 7], last=False)  # into the K rows
        await reset(dut)
        await src.send(stream_beats(fr[1].stream)[: 25 + 8 * 20 + 8 * 11 + 3], last=False)  # into V
        await cycles(dut, 5)
        await reset(dut)
        assert int(dut.stat_invalid.value) == 0
        await src.send(stream_beats(fr[2].stream), last=True)
        words = await snk.wait_words(RESULT_WORDS, timeout_cycles=5_000)
        await snk.expect_quiet(DRAIN_CYCLES)
        _check(words, [fr[2]], "after reset")

    @cocotb.test()
    async def malformed_frames_are_counted(dut):
        """Early tlast (in q, K and V), n = 0, n > NMAX: no results, stat_invalid counts each."""
        await start(dut, inputs=INPUTS)
        src = AxisSource(dut, "s_axis")
        snk = AxisSink(dut, "m_axis")
        nmax = int(os.environ.get("KABE_PARAM_NMAX", 2048))
        fr = _frames(5, [12, 12])
        beats = stream_beats(fr[0].stream)
        await src.send(beats[:10], last=True)  # ends in q
        await src.send(beats[: 25 + 8 * 5], last=True)  # ends in K
        await src.send(beats[: 25 + 8 * 12 + 8 * 11 + 7], last=True)  # one beat short of the end
        for n in (0, nmax + 1):
            bad = stream_beats(np.concatenate([attention.Header(n, 40000, 17).to_bytes(), fr[0].stream[8:]]))
            await src.send(bad, last=True)
        await cycles(dut, 3)
        assert int(dut.stat_invalid.value) == 5
        await src.send(stream_beats(fr[1].stream), last=True)
        words = await snk.wait_words(RESULT_WORDS, timeout_cycles=5_000)
        await snk.expect_quiet(DRAIN_CYCLES)
        _check(words, [fr[1]], "after malformed frames")
        assert int(dut.stat_invalid.value) == 5

    @cocotb.test()
    async def drain_conflict_drops_the_next_frame(dut):
        """Back to back, n = 1: the second frame's V row arrives while the first still drains."""
        await start(dut, inputs=INPUTS)
        src = AxisSource(dut, "s_axis")
        snk = AxisSink(dut, "m_axis")
        fr = _frames(6, [1, 1])
        await src.send(stream_beats(np.concatenate([fr[0].stream, fr[1].stream])), last=True)
        words = await snk.wait_words(RESULT_WORDS, timeout_cycles=5_000)
        await snk.expect_quiet(DRAIN_CYCLES)
        _check(words, [fr[0]], "first frame")
        assert int(dut.stat_invalid.value) == 1

    @cocotb.test()
    async def overflow_is_flagged(dut):
        """tready held low over two frames of results: words are dropped and stat_overflow sticks."""
        await start(dut, inputs=INPUTS)
        src = AxisSource(dut, "s_axis")
        snk = AxisSink(dut, "m_axis")
        snk.hold_ready_low()
        for f in _frames(7, [30, 30]):
            await src.send(stream_beats(f.stream), last=True)
        await cycles(dut, DRAIN_CYCLES)
        assert int(dut.stat_overflow.value) == 1
        snk.release()
        await cycles(dut, 300)
        assert len(snk.words) == 256  # FIFO_DEPTH


# --------------------------------------------------------------------------------------------
# pytest side
# --------------------------------------------------------------------------------------------


def generated_sources() -> list[Path]:
    """The exp ROM and the adder tree, generated with stage5.core's parameters (rewritten on change)."""
    import yaml

    import gen_adder_tree
    import gen_exp_table

    core = yaml.safe_load((REPO_ROOT / "cores/stage5/stage5.core").read_text())
    tree = core["generate"]["adder_tree"]["parameters"]
    texts = {
        "kabe_attn_exp_rom.v": gen_exp_table.generate_verilog(),
        f"{tree['name']}.v": gen_adder_tree.generate_verilog(gen_adder_tree.spec_from_parameters(tree)),
    }
    out = []
    for name, text in texts.items():
        path = BUILD_ROOT / "gen" / "stage5" / name
        if not path.is_file() or path.read_text() != text:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        out.append(path)
    return out


def stage5_sources() -> list[Path]:
    return rtl(
        "cores/lib/kabe_axis_fifo.v",
        "cores/stage5/rtl/kabe_attn_mul.v",
        "cores/stage5/rtl/kabe_attn_delay.v",
        "cores/stage5/rtl/kabe_attn_score_ram.v",
        "cores/stage5/rtl/kabe_attn_divider.v",
        "cores/stage5/rtl/kabe_attention_engine.v",
    ) + generated_sources()


def _scripts_on_path() -> None:
    import sys

    scripts = str(REPO_ROOT / "scripts")
    if scripts not in sys.path:
        sys.path.insert(0, scripts)


@pytest.mark.parametrize(
    "testcase",
    [
        "frames_match_model",
        "gaps_and_backpressure",
        "concatenated_frames",
        "extremes",
        "reset_mid_frame",
        "malformed_frames_are_counted",
        "drain_conflict_drops_the_next_frame",
        "overflow_is_flagged",
    ],
)
def test_kabe_attention_engine(testcase):
    _scripts_on_path()
    run_cocotb(
        toplevel="kabe_attention_engine",
        sources=stage5_sources(),
        test_module="test_kabe_attention_engine",
        parameters={"NMAX": 2048},
        testcase=testcase,
    )
