# Alveo V80 (xcv80-lsva4737-2MHP-e-S): the clock of kabe's V80 engines (cores/v80_ternary).
#
# 2.500 ns = 400 MHz: the clock at which one 256-bit HBM NMU moves 12,800 MB/s, so all 64 reach
# the HBM2e peak of 819.2 GB/s (AVED docs, "AVED V80 - NoC Configuration": 64 NMUs x 12,800 MB/s).
# An engine takes one 256-bit beat per clock on each channel, so at this clock it keeps pace with
# its NMU. In a block design the clock would come from a clock wizard fed by CIPS (Vivado then
# names it after the wizard's output); the engines receive it on their `clk` port
# (docs/streams.md), which is the port this constrains when the engine is synthesized alone
# (kabe's open flow, where Versal timing is not estimated: no routed Versal data).
#
# This file is the one place the V80 designs' clock period lives: kabe.constraints reads it.
create_clock -period 2.500 -name clk_engine -waveform {0.000 1.250} [get_ports clk]
