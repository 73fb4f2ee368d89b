# A Versal clocking wizard (clk_wizard, PG321), as a team keeps IP: create_ip + its properties
create_ip -name clk_wizard -vendor xilinx.com -library ip -version 1.0 -module_name clk_wiz_v
set_property -dict [list \
  CONFIG.PRIM_IN_FREQ {100.000} \
  CONFIG.CLKOUT_REQUESTED_OUT_FREQUENCY {250.000} \
  CONFIG.USE_LOCKED {true} \
] [get_ips clk_wiz_v]
