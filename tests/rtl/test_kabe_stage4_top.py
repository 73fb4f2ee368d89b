"""kabe_stage4_top: the two-port contract (docs/streams.md), both ports streaming at once.

The engine itself is tested in test_kabe_ternary_engine.py; this runs the checks every top must
pass (top_checks.py) and checks that the two ports count invalid bytes independently.
"""

from __future__ import annotations

import pytest
import random

from cocotb_util import AxisSink, AxisSource, run_cocotb, signed, start, stream_beats

pytestmark = pytest.mark.e2e  # end to end: real tools, minutes (the fast tier leaves it out: -m 'not e2e')

KIND, NPORTS, FIFO_DEPTH = "ternary", 2, 32
ROW_BYTES = 32  # small rows keep the per-cycle simulation short; the engine default is 512

try:
    import cocotb
except ImportError:
    cocotb = None

if cocotb is not None:
    import numpy as np

    import top_checks
    from llm_accel.model import frames

    @cocotb.test()
    async def all_ports_match_model(dut):
        await top_checks.all_ports_match_model(dut, KIND, NPORTS, ROW_BYTES)

    @cocotb.test()
    async def overflow_is_per_port(dut):
        await top_checks.overflow_is_per_port(dut, KIND, NPORTS, ROW_BYTES, FIFO_DEPTH)

    @cocotb.test()
    async def reset_mid_frame_then_clean_frames(dut):
        await top_checks.reset_mid_frame_then_clean_frames(dut, KIND, NPORTS, ROW_BYTES)

    @cocotb.test()
    async def invalid_bytes_counted_per_port(dut):
        inputs = [f"s{p}_axis_{s}" for p in (0, 1) for s in ("tdata", "tvalid", "tlast")]
        inputs += ["m0_axis_tready", "m1_axis_tready"]
        await start(dut, inputs=inputs)
        rng = np.random.default_rng(11)
        fs = [frames.ternary_frame(rng, rows, ROW_BYTES, invalid_fraction=frac) for rows, frac in ((5, 0.05), (3, 0.2))]
        srcs = [AxisSource(dut, f"s{p}_axis", rng=random.Random(p), gap_prob=0.2) for p in (0, 1)]
        snks = [AxisSink(dut, f"m{p}_axis", rng=random.Random(10 + p), ready_prob=0.6) for p in (0, 1)]
        tasks = [cocotb.start_soon(src.send(stream_beats(f.stream), last=True)) for src, f in zip(srcs, fs)]
        for task in tasks:
            await task
        for p, (snk, f) in enumerate(zip(snks, fs)):
            words = await snk.wait_words(f.rows)
            await snk.expect_quiet(30)
            got = [signed(d, 32) for d, _ in words]
            assert got == [int(v) for v in f.expected], (p, got, list(f.expected))
            assert [last for _, last in words] == [0] * (f.rows - 1) + [1], p
            assert int(getattr(dut, f"stat{p}_invalid").value) == f.invalid, p
            assert int(getattr(dut, f"stat{p}_overflow").value) == 0, p
            assert int(getattr(dut, f"s{p}_axis_tready").value) == 1, p
        assert fs[0].invalid != fs[1].invalid, "pick frames whose counts differ"


def test_kabe_stage4_top():
    from kabe.project import cores

    edam = cores.resolve("stage4", "sim")  # the core's files, with the generated adder tree
    run_cocotb(
        toplevel=edam.toplevel,
        sources=edam.sources,
        test_module="test_kabe_stage4_top",
        parameters={"ROW_BYTES": ROW_BYTES},
        build_args=["-Wall", "-Wno-PINCONNECTEMPTY"],
    )
