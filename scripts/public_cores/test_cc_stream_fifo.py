"""pulp-platform common_cells stream_fifo (v1.39.0; DEPTH 8, DATA_WIDTH 16), from the FuseSoC library core
pulp-platform.org::common_cells: valid_i/ready_o in, valid_o/ready_i out, clk_i and an active-low
rst_ni. In order under gaps and backpressure with the FIFO full at times (the input waited), and back
to back."""

import cocotb

from zoo_stream import Side, passthrough

IN = Side("clk_i", "valid_i", "ready_o", "data_i")
OUT = Side("clk_i", "valid_o", "ready_i", "data_o")
RESETS = (("rst_ni", True),)
HELD = {"flush_i": 0, "testmode_i": 0}


@cocotb.test()
async def under_backpressure(dut):
    c = await passthrough(dut, IN, OUT, 16, valid_duty=0.9, ready_duty=0.5, resets=RESETS, held=HELD,
                          name="under_backpressure")
    assert c["input_waited"] > 0, "the FIFO was never full: backpressure did not reach it"


@cocotb.test()
async def back_to_back(dut):
    await passthrough(dut, IN, OUT, 16, valid_duty=1.0, ready_duty=1.0, resets=RESETS, held=HELD, name="back_to_back")
