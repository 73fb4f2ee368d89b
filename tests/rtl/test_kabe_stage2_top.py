"""kabe_stage2_top: stage 2, one HP port: the probe behind the contract's port names (docs/streams.md top-level contract)."""

from __future__ import annotations

import cocotb

import top_checks
from cocotb_util import rtl, run_cocotb

SOURCES = ["cores/lib/kabe_axis_fifo.v", "cores/stage2/rtl/kabe_probe.v", "cores/stage2/kabe_stage2_top.v"]
KIND, NPORTS, FIFO_DEPTH = "probe", 1, 16
ROW_BYTES = 32  # the probe counts any whole beats; rows only size the frames


@cocotb.test()
async def all_ports_match_model(dut):
    await top_checks.all_ports_match_model(dut, KIND, NPORTS, ROW_BYTES)


@cocotb.test()
async def overflow_is_per_port(dut):
    await top_checks.overflow_is_per_port(dut, KIND, NPORTS, ROW_BYTES, FIFO_DEPTH)


@cocotb.test()
async def reset_mid_frame_then_clean_frames(dut):
    await top_checks.reset_mid_frame_then_clean_frames(dut, KIND, NPORTS, ROW_BYTES)


def test_kabe_stage2_top() -> None:
    run_cocotb(
        toplevel="kabe_stage2_top",
        sources=rtl(*SOURCES),
        test_module="test_kabe_stage2_top",
        parameters={"FIFO_DEPTH": 16},
        build_args=["-Wall", "-Wno-PINCONNECTEMPTY"],
    )
