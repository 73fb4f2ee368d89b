"""verilog-axis axis_async_fifo (DEPTH 16, 8 bits): a FIFO across two clocks (s_clk 10 ns, m_clk 14 ns),
each with its own reset. kabe's harness drives one clock called clk, so this testbench drives both:
in order under gaps and backpressure with the FIFO full at times (the input waited), and back to back
(the slower read clock alone fills it)."""

import cocotb

from zoo_stream import Side, passthrough

IN = Side("s_clk", "s_axis_tvalid", "s_axis_tready", "s_axis_tdata", 10.0)
OUT = Side("m_clk", "m_axis_tvalid", "m_axis_tready", "m_axis_tdata", 14.0)
RESETS = (("s_rst", False), ("m_rst", False))
HELD = {"s_axis_tlast": 0, "s_pause_req": 0, "m_pause_req": 0}


@cocotb.test()
async def under_backpressure(dut):
    c = await passthrough(dut, IN, OUT, 8, valid_duty=0.9, ready_duty=0.5, resets=RESETS, held=HELD,
                          name="under_backpressure")
    assert c["input_waited"] > 0, "the FIFO was never full: backpressure did not reach it"


@cocotb.test()
async def back_to_back(dut):
    await passthrough(dut, IN, OUT, 8, valid_duty=1.0, ready_duty=1.0, resets=RESETS, held=HELD, name="back_to_back")
