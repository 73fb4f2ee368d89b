# The second clocking wizard, as IP Tcl: 125 MHz in, 50 MHz out
create_ip -name clk_wiz -vendor xilinx.com -library ip -version 6.0 -module_name clk_aux
set_property -dict [list \
  CONFIG.PRIM_IN_FREQ {125.000} \
  CONFIG.CLKOUT1_REQUESTED_OUT_FREQ {50.000} \
  CONFIG.USE_LOCKED {true} \
] [get_ips clk_aux]
