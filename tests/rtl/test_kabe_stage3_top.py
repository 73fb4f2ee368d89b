"""kabe_stage3_top: stage 3, two HP ports: two pipelined INT8 engines (docs/streams.md top-level contract)."""

from __future__ import annotations

import cocotb

import top_checks
from cocotb_util import rtl, run_cocotb

SOURCES = ["cores/lib/kabe_axis_fifo.v", "cores/stage3/rtl/kabe_int8_engine.v", "cores/stage3/kabe_stage3_top.v"]
KIND, NPORTS, FIFO_DEPTH = "int8", 2, 32
ROW_BYTES = 32  # small rows keep the per-cycle simulation short; kabe_int8_engine is also tested at 512


@cocotb.test()
async def all_ports_match_model(dut):
    await top_checks.all_ports_match_model(dut, KIND, NPORTS, ROW_BYTES)


@cocotb.test()
async def overflow_is_per_port(dut):
    await top_checks.overflow_is_per_port(dut, KIND, NPORTS, ROW_BYTES, FIFO_DEPTH)


@cocotb.test()
async def reset_mid_frame_then_clean_frames(dut):
    await top_checks.reset_mid_frame_then_clean_frames(dut, KIND, NPORTS, ROW_BYTES)


def test_kabe_stage3_top() -> None:
    run_cocotb(
        toplevel="kabe_stage3_top",
        sources=rtl(*SOURCES),
        test_module="test_kabe_stage3_top",
        parameters={"ROW_BYTES": ROW_BYTES},
        build_args=["-Wall", "-Wno-PINCONNECTEMPTY"],
    )
