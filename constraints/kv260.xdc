# Kria KV260 (xck26-sfvc784-2LV-c): the programmable-logic clock of kabe's KV260 engines (cores/kv260_ternary).
#
# 7.000 ns = 142.856 MHz: the PS8 makes pl_clk0 from its IO PLL (999.99 MHz on the KV260's board preset:
# Xilinx/Kria-PYNQ kv260/base/base.tcl, PSU__CRL_APB__PL0_REF_CTRL__ACT_FREQMHZ 99.999001 at divisor 10)
# with integer divisors; 999.99 / 7 is 7.00007 ns, within the 0.001 ns kabe's block design accepts.
# The same period as the PYNQ-Z1's: a 128-bit HP port at this clock moves 2.29 GB/s, per port.
# In the block design the PS8 IP constrains pl_clk0 itself and Vivado names the clock clk_pl_0; the
# engines receive it on their `clk` port (docs/streams.md), so the name below is Vivado's, and the
# target is the port the engine sees when synthesized alone (kabe's open flow).
#
# This file is the one place the KV260 designs' clock period lives: kabe.constraints reads it.
create_clock -period 7.000 -name clk_pl_0 -waveform {0.000 3.500} [get_ports clk]
