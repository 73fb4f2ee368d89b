"""ZipCPU's skidbuffer (wb2axip rtl/skidbuffer.v, OPT_OUTREG=1, DW=16): a register slice on i_valid/o_ready
and o_valid/i_ready. Its ports are not AXI-Stream names and its clock is i_clk, so the harness cannot
drive it; this testbench does (zoo_stream.py): in order under gaps and backpressure, the skid register
used (the input waited), and one beat per clock with nothing stalled."""

import cocotb

from zoo_stream import Side, passthrough

IN = Side("i_clk", "i_valid", "o_ready", "i_data")
OUT = Side("i_clk", "o_valid", "i_ready", "o_data")
RESETS = (("i_reset", False),)


@cocotb.test()
async def under_backpressure(dut):
    c = await passthrough(dut, IN, OUT, 16, resets=RESETS, name="under_backpressure")
    assert c["input_waited"] > 0, "backpressure never reached the input: the skid path was not used"


@cocotb.test()
async def back_to_back(dut):
    c = await passthrough(dut, IN, OUT, 16, valid_duty=1.0, ready_duty=1.0, resets=RESETS, name="back_to_back")
    assert c["input_waited"] == 0, f"the input waited {c['input_waited']} cycles with nothing stalled"
