"""ZipCPU's sfifo (wb2axip rtl/sfifo.v, BW=16, LGFLEN=3): a synchronous FIFO on i_wr/o_full and
i_rd/o_empty (OPT_ASYNC_READ: o_data is the head while !o_empty). Not AXI-Stream ports: this testbench
reads o_full as the input's ready and !o_empty as the output's valid. In order under gaps and
backpressure with the FIFO full at times (the input waited), and back to back."""

import cocotb

from zoo_stream import Side, passthrough

IN = Side("i_clk", "i_wr", "!o_full", "i_data")
OUT = Side("i_clk", "!o_empty", "i_rd", "o_data")
RESETS = (("i_reset", False),)


@cocotb.test()
async def under_backpressure(dut):
    c = await passthrough(dut, IN, OUT, 16, valid_duty=0.9, ready_duty=0.5, resets=RESETS, name="under_backpressure")
    assert c["input_waited"] > 0, "the FIFO was never full: backpressure did not reach it"


@cocotb.test()
async def back_to_back(dut):
    await passthrough(dut, IN, OUT, 16, valid_duty=1.0, ready_duty=1.0, resets=RESETS, name="back_to_back")
