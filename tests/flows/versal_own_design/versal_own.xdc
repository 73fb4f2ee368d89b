# A 100 MHz reference on a pin, and one LED (a Versal board of the team's own; pin names are examples)
set_property -dict {PACKAGE_PIN AW27 IOSTANDARD LVDS15} [get_ports ref_clk_p]
create_clock -period 10.000 -name ref_clk [get_ports ref_clk_p]
set_property -dict {PACKAGE_PIN BA35 IOSTANDARD LVCMOS15} [get_ports led]
