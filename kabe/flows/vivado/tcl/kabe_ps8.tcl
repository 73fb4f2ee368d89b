# The Zynq UltraScale+ processing system (PS8, zynq_ultra_ps_e) of kabe's block design (tcl/kabe_bd.tcl):
# the same ::kabe_ps::* procs as tcl/kabe_ps7.tcl, so kabe_bd.tcl builds one shape on either (a DMA per
# HP port, the registers behind one interconnect, one PL clock).
#
#   ps8: M_AXI_HPM0_FPD (the registers; PSU__USE__M_AXI_GP0), S_AXI_HP{p}_FPD per port (the PS8's
#        S_AXI_GP{p+2}: PSU__USE__S_AXI_GP{p+2}, PSU__SAXIGP{p+2}__DATA_WIDTH at the board's width, 128
#        on the KV260), pl_clk0 / pl_resetn0 (PSU__FPGA_PL0_ENABLE, PSU__CRL_APB__PL0_REF_CTRL__FREQMHZ)
#
# The board's facts come from its Vivado board files: with ::kabe(board_part) set (the profile's
# vivado.board_part, and vivado.board_connections for a SOM's carrier) the project takes that board part
# and the PS8 its preset, as AMD's own KV260 designs do (Xilinx/kria-vitis-platforms kv260_bist
# scripts/main.tcl and config_bd.tcl: set_property board_part / board_connections, then
# apply_bd_automation -rule xilinx.com:bd_rule:zynq_ultra_ps_e -config {apply_board_preset "1"}).
# The board's Tcl may add settings (::kabe_board::ps8_preset) and cells (::kabe_board::extras: the KV260's fan).

namespace eval ::kabe_ps {}

proc ::kabe_ps::cell {} { return ps8 }
proc ::kabe_ps::ctrl_master {} { return ps8/M_AXI_HPM0_FPD }
proc ::kabe_ps::hp_slave {p} { return ps8/S_AXI_HP${p}_FPD }
proc ::kabe_ps::pl_clk {} { return ps8/pl_clk0 }
proc ::kabe_ps::pl_resetn {} { return ps8/pl_resetn0 }
proc ::kabe_ps::clock_pins {nports} {
  set out [list ps8/maxihpm0_fpd_aclk]
  for {set p 0} {$p < $nports} {incr p} { lappend out ps8/saxihp${p}_fpd_aclk }
  return $out
}

# pl_clk0 from the XDC's period, from the IO PLL; read back after validate_bd_design (check_clock),
# when the PS8's derived ACT_FREQMHZ is current.
proc ::kabe_ps::request_clock {ps} {
  set_property -dict [list \
    CONFIG.PSU__FPGA_PL0_ENABLE {1} \
    CONFIG.PSU__CRL_APB__PL0_REF_CTRL__SRCSEL {IOPLL} \
    CONFIG.PSU__CRL_APB__PL0_REF_CTRL__FREQMHZ [format %.6f [expr {1000.0 / $::kabe(period_ns)}]] \
  ] $ps
}

proc ::kabe_ps::check_clock {ps} {
  set act [get_property CONFIG.PSU__CRL_APB__PL0_REF_CTRL__ACT_FREQMHZ $ps]
  if {![string is double -strict $act] || $act <= 0} {
    error "kabe_bd.tcl: the PS8 reports no achieved pl_clk0 frequency (PSU__CRL_APB__PL0_REF_CTRL__ACT_FREQMHZ = '$act')"
  }
  set act_period [expr {1000.0 / $act}]
  if {abs($act_period - $::kabe(period_ns)) > 0.001} {
    error [format "kabe_bd.tcl: pl_clk0 achieves %s MHz = %.4f ns, but the XDC's %s is %s ns; choose a period the PS8's IO PLL dividers can make (IO PLL / integer) or change the XDC" \
      $act $act_period $::kabe(clock_name) $::kabe(period_ns)]
  }
  puts "kabe: pl_clk0 requested [format %.6f [expr {1000.0 / $::kabe(period_ns)}]] MHz, achieved $act MHz ([format %.4f $act_period] ns, XDC $::kabe(period_ns) ns)"
  return $act
}

# The board part (and its carrier) on the project, before the block design exists: the PS8's preset
# is the board files'. A board without board files gets only ::kabe_board::ps8_preset.
proc ::kabe_ps::board_part {} {
  if {$::kabe(board_part) eq ""} { return 0 }
  set found [get_board_parts -quiet $::kabe(board_part)]
  if {![llength $found]} {
    error "kabe_bd.tcl: Vivado has no board part $::kabe(board_part) (the board profile's vivado.board_part); install the board files (Vivado's Xilinx Board Store, or set_param board.repoPaths)"
  }
  set_property board_part [lindex $found 0] [current_project]
  if {$::kabe(board_connections) ne ""} {
    set_property board_connections $::kabe(board_connections) [current_project]
  }
  return 1
}

proc ::kabe_ps::create {nports} {
  if {$nports > 4} { error "kabe_bd.tcl: the PS8 has 4 HP ports (S_AXI_HP0_FPD .. S_AXI_HP3_FPD); the design asks for $nports" }
  set preset [::kabe_ps::board_part]
  # unversioned, as AMD's KV260 scripts create it: the catalog's own version of the IP
  set ps [::kabe_bd::ip xilinx.com:ip:zynq_ultra_ps_e ps8]
  if {$preset} {
    apply_bd_automation -rule xilinx.com:bd_rule:zynq_ultra_ps_e -config {apply_board_preset "1"} [get_bd_cells ps8]
  }
  if {[llength [info procs ::kabe_board::ps8_preset]]} {
    set own [::kabe_board::ps8_preset]
    if {[llength $own]} { set_property -dict $own $ps }
  }
  set cfg [list CONFIG.PSU__USE__M_AXI_GP0 {1} CONFIG.PSU__MAXIGP0__DATA_WIDTH {32}]
  for {set p 0} {$p < $nports} {incr p} {
    set gp [expr {$p + 2}]
    lappend cfg CONFIG.PSU__USE__S_AXI_GP$gp {1} CONFIG.PSU__SAXIGP${gp}__DATA_WIDTH $::kabe(hp_data_width)
  }
  set_property -dict $cfg $ps
  ::kabe_ps::request_clock $ps
  return $ps
}

proc ::kabe_ps::extras {ps} {
  if {[llength [info procs ::kabe_board::extras]]} { ::kabe_board::extras $ps }
}
