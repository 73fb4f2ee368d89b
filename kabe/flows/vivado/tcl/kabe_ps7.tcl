# The Zynq-7000 processing system (PS7) of kabe's block design (tcl/kabe_bd.tcl): the procs kabe_bd.tcl
# calls, ::kabe_ps::*, one file per processing system (tcl/kabe_ps8.tcl is the Zynq UltraScale+ one).
# The board's own settings come from its block-design Tcl: ::kabe_board::ps7_preset (tcl/pynq_z1_ps7.tcl).
#
#   ps7: M_AXI_GP0 (the registers), S_AXI_HP{p} (64-bit, AXI3) per port, FCLK_CLK0 / FCLK_RESET0_N,
#        DDR and FIXED_IO as the block design's external interfaces

namespace eval ::kabe_ps {}

proc ::kabe_ps::cell {} { return ps7 }
proc ::kabe_ps::ctrl_master {} { return ps7/M_AXI_GP0 }
proc ::kabe_ps::hp_slave {p} { return ps7/S_AXI_HP$p }
proc ::kabe_ps::pl_clk {} { return ps7/FCLK_CLK0 }
proc ::kabe_ps::pl_resetn {} { return ps7/FCLK_RESET0_N }
# every PS clock input on the engine's clock: the register master's, and each HP port's used
proc ::kabe_ps::clock_pins {nports} {
  set out [list ps7/M_AXI_GP0_ACLK]
  for {set p 0} {$p < $nports} {incr p} { lappend out ps7/S_AXI_HP${p}_ACLK }
  return $out
}

# FCLK0 from the XDC's period. 7.000 ns = 1000/7 MHz: the IO PLL (1000 MHz) divided by 7, exact.
# Requested here; the achieved frequency is read back by check_clock after validate_bd_design,
# when the PS7's derived (ACT_*) parameters are known to be up to date.
proc ::kabe_ps::request_clock {ps} {
  set want_mhz [expr {1000.0 / $::kabe(period_ns)}]
  set_property -dict [list \
    CONFIG.PCW_EN_CLK0_PORT {1} \
    CONFIG.PCW_EN_RST0_PORT {1} \
    CONFIG.PCW_FCLK0_PERIPHERAL_CLKSRC {IO PLL} \
    CONFIG.PCW_FPGA0_PERIPHERAL_FREQMHZ [format %.6f $want_mhz] \
  ] $ps
}

proc ::kabe_ps::check_clock {ps} {
  set want_mhz [expr {1000.0 / $::kabe(period_ns)}]
  set act [get_property CONFIG.PCW_ACT_FPGA0_PERIPHERAL_FREQMHZ $ps]
  if {![string is double -strict $act] || $act <= 0} {
    error "kabe_bd.tcl: the PS7 reports no achieved FCLK0 frequency (PCW_ACT_FPGA0_PERIPHERAL_FREQMHZ = '$act')"
  }
  set act_period [expr {1000.0 / $act}]
  if {abs($act_period - $::kabe(period_ns)) > 0.001} {
    error [format "kabe_bd.tcl: FCLK0 achieves %s MHz = %.4f ns, but the XDC's %s is %s ns; choose a period the PS7 dividers can make (1000 MHz / integer) or change the XDC" \
      $act $act_period $::kabe(clock_name) $::kabe(period_ns)]
  }
  puts "kabe: FCLK0 requested [format %.6f $want_mhz] MHz, achieved $act MHz ([format %.4f $act_period] ns, XDC $::kabe(period_ns) ns)"
  return $act
}

# The PS7 with the board's preset, the register master, one HP port per memory port, FCLK0 requested.
proc ::kabe_ps::create {nports} {
  set ps [::kabe_bd::ip xilinx.com:ip:processing_system7:5.5 ps7 [::kabe_board::ps7_preset]]
  set cfg [list CONFIG.PCW_USE_M_AXI_GP0 {1}]
  for {set p 0} {$p < $nports} {incr p} {
    lappend cfg CONFIG.PCW_USE_S_AXI_HP$p {1} CONFIG.PCW_S_AXI_HP${p}_DATA_WIDTH $::kabe(hp_data_width)
  }
  set_property -dict $cfg $ps
  ::kabe_ps::request_clock $ps
  create_bd_intf_port -mode Master -vlnv xilinx.com:interface:ddrx_rtl:1.0 DDR
  create_bd_intf_port -mode Master -vlnv xilinx.com:display_processing_system7:fixedio_rtl:1.0 FIXED_IO
  connect_bd_intf_net [get_bd_intf_ports DDR] [get_bd_intf_pins ps7/DDR]
  connect_bd_intf_net [get_bd_intf_ports FIXED_IO] [get_bd_intf_pins ps7/FIXED_IO]
  return $ps
}

# nothing of the board's own beyond the preset on the PYNQ-Z1; a board's Tcl may add ::kabe_board::extras
proc ::kabe_ps::extras {ps} {
  if {[llength [info procs ::kabe_board::extras]]} { ::kabe_board::extras $ps }
}
