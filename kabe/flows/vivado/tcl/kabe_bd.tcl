# kabe's block design, one script for every design and every Zynq (the per-design facts arrive as
# ::kabe(...) from the generated kabe_settings.tcl: port count and stream widths from design.yaml and the
# RTL, the clock period from the XDC; the processing system's procs, ::kabe_ps::*, from tcl/kabe_ps7.tcl
# (Zynq-7000) or tcl/kabe_ps8.tcl (Zynq UltraScale+), sourced before this file as the board's family says).
#
#   PS (PS7 or PS8, with the board's preset; its PL clock = 1000 / period MHz, checked after validate_bd_design)
#    |- register master (PS7 M_AXI_GP0, PS8 M_AXI_HPM0_FPD) -> ctrl interconnect -> dma{p}/S_AXI_LITE,
#    |     stat{p}/S_AXI (AXI GPIO, inputs), usr_access/S_AXI (AXI GPIO, input: the commit word)
#    |- HP port p (PS7 S_AXI_HP{p}, 64-bit; PS8 S_AXI_HP{p}_FPD, 128-bit) <- hp{p} interconnect <- dma{p}/M_AXI_MM2S + M_AXI_S2MM
#   dma{p} (AXI DMA, simple mode, 26-bit length) M_AXIS_MM2S -> engine/s{p}_axis
#                                                S_AXIS_S2MM <- engine/m{p}_axis
#   engine: module reference to the generated wrapper (kabe_engine_bd) around the design's top
#   usr_access_src: module reference to hdl/kabe_usr_access.v (USR_ACCESSE2) -> usr_access GPIO
#   rst: proc_sys_reset from the PS's PL reset; engine rst = peripheral_reset (active high)
#   the board's own cells (::kabe_board::extras, e.g. the KV260 carrier's fan)
#
# Ends with the wrapper as a project source, generate_target, the .hwh copied to ::kabe(hwh_dest)
# (beside the .bit edalize writes, same basename: pynq.Overlay's convention), and the names of the cells
# the board runner looks up written to ::kabe(cells_dest) (kabe_<design>.cells.json, beside them).

foreach _k {bd_name engine_module period_ns clock_name ports streams status dma_length_width
            hp_data_width dma_burst dma_addr_width hwh_dest cells_dest} {
  if {![info exists ::kabe($_k)]} { error "kabe_bd.tcl: ::kabe($_k) is not set; source kabe_settings.tcl first" }
}
if {![llength [info procs ::kabe_ps::create]]} {
  error "kabe_bd.tcl: no processing system's procs (::kabe_ps::create); source tcl/kabe_ps7.tcl or tcl/kabe_ps8.tcl first"
}

namespace eval ::kabe_bd {
  # name -> {role, port, ...} of every cell the board runner looks up, in creation order
  variable runner_cells {}
}

# --- the names the board runner needs. pynq.Overlay names its attributes after the cells
# (`overlay.dma0`), so these names are an interface: they are spelt here only, the cells are
# created under them, and write_cells_json hands the same names to the runner.
proc ::kabe_bd::dma_cell {p} { return dma$p }
proc ::kabe_bd::stat_cell {p} { return stat$p }
proc ::kabe_bd::usr_access_cell {} { return usr_access }

# Remember a cell the runner will look up: role (dma | stat | usr_access), its port, its channels.
proc ::kabe_bd::for_runner {cell role args} {
  lappend ::kabe_bd::runner_cells [list $cell $role {*}$args]
}

proc ::kabe_bd::ip {vlnv name {config {}}} {
  set cell [create_bd_cell -type ip -vlnv $vlnv $name]
  if {[llength $config]} { set_property -dict $config $cell }
  return $cell
}

proc ::kabe_bd::pins {args} {
  set out {}
  foreach p $args { lappend out [get_bd_pins $p] }
  return $out
}

proc ::kabe_bd::build {} {
  set nports $::kabe(ports)
  set bd_file [create_bd_design $::kabe(bd_name)]
  current_bd_design $::kabe(bd_name)

  # --- processing system: the board's preset, the register master, one HP port per memory port, its PL clock
  set ps [::kabe_ps::create $nports]
  ::kabe_ps::extras $ps

  # --- reset, engine
  ::kabe_bd::ip xilinx.com:ip:proc_sys_reset:5.0 rst0
  set engine [create_bd_cell -type module -reference $::kabe(engine_module) engine]

  # --- control path: GP0 -> one interconnect -> per port a DMA's registers (+ a status GPIO when
  # the port has status outputs), and the USR_ACCESS GPIO
  set n_ctrl [expr {$nports + 1}]
  foreach st $::kabe(status) { if {[llength $st]} { incr n_ctrl } }
  ::kabe_bd::ip xilinx.com:ip:axi_interconnect:2.1 ctrl_ic [list CONFIG.NUM_SI {1} CONFIG.NUM_MI $n_ctrl]
  connect_bd_intf_net [get_bd_intf_pins [::kabe_ps::ctrl_master]] [get_bd_intf_pins ctrl_ic/S00_AXI]

  set clk_pins [list {*}[::kabe_ps::clock_pins $nports] rst0/slowest_sync_clk engine/clk ctrl_ic/ACLK ctrl_ic/S00_ACLK]
  set aresetn_pins [list ctrl_ic/S00_ARESETN]
  set ic_resetn_pins [list ctrl_ic/ARESETN]
  set mi_next 0

  for {set p 0} {$p < $nports} {incr p} {
    lassign [lindex $::kabe(streams) $p] s_bus s_width m_bus m_width
    set dma [::kabe_bd::dma_cell $p]
    ::kabe_bd::for_runner $dma dma $p
    ::kabe_bd::ip xilinx.com:ip:axi_dma:7.1 $dma [list \
      CONFIG.c_include_sg {0} \
      CONFIG.c_sg_length_width $::kabe(dma_length_width) \
      CONFIG.c_sg_include_stscntrl_strm {0} \
      CONFIG.c_include_mm2s {1} \
      CONFIG.c_include_s2mm {1} \
      CONFIG.c_m_axi_mm2s_data_width $::kabe(hp_data_width) \
      CONFIG.c_m_axis_mm2s_tdata_width $s_width \
      CONFIG.c_m_axi_s2mm_data_width $::kabe(hp_data_width) \
      CONFIG.c_s_axis_s2mm_tdata_width $m_width \
      CONFIG.c_mm2s_burst_size $::kabe(dma_burst) \
      CONFIG.c_s2mm_burst_size $::kabe(dma_burst) \
      CONFIG.c_addr_width $::kabe(dma_addr_width) \
    ]
    # the streams: MM2S feeds the engine's input, S2MM drains its results (needs tlast)
    connect_bd_intf_net [get_bd_intf_pins $dma/M_AXIS_MM2S] [get_bd_intf_pins engine/$s_bus]
    connect_bd_intf_net [get_bd_intf_pins engine/$m_bus] [get_bd_intf_pins $dma/S_AXIS_S2MM]

    # the data path to DDR: both DMA masters share this port's HP port
    set hp hp${p}_ic
    ::kabe_bd::ip xilinx.com:ip:axi_interconnect:2.1 $hp [list CONFIG.NUM_SI {2} CONFIG.NUM_MI {1}]
    connect_bd_intf_net [get_bd_intf_pins $dma/M_AXI_MM2S] [get_bd_intf_pins $hp/S00_AXI]
    connect_bd_intf_net [get_bd_intf_pins $dma/M_AXI_S2MM] [get_bd_intf_pins $hp/S01_AXI]
    connect_bd_intf_net [get_bd_intf_pins $hp/M00_AXI] [get_bd_intf_pins [::kabe_ps::hp_slave $p]]

    # registers: DMA control, and the status outputs read over an AXI GPIO (all inputs, one
    # channel per output: the first (stat{p}_invalid) on channel 1, the second (stat{p}_overflow) on 2)
    set mi [format M%02d $mi_next]
    incr mi_next
    connect_bd_intf_net [get_bd_intf_pins ctrl_ic/${mi}_AXI] [get_bd_intf_pins $dma/S_AXI_LITE]
    lappend clk_pins ctrl_ic/${mi}_ACLK $dma/s_axi_lite_aclk $dma/m_axi_mm2s_aclk $dma/m_axi_s2mm_aclk
    lappend aresetn_pins ctrl_ic/${mi}_ARESETN $dma/axi_resetn

    set status [lindex $::kabe(status) $p]
    if {[llength $status]} {
      set gpio [::kabe_bd::stat_cell $p]
      set channels [list 1 [lindex $status 0]]
      if {[llength $status] >= 4} { lappend channels 2 [lindex $status 2] }
      ::kabe_bd::for_runner $gpio stat $p $channels
      set gcfg [list CONFIG.C_ALL_INPUTS {1} CONFIG.C_GPIO_WIDTH [lindex $status 1]]
      if {[llength $status] >= 4} {
        lappend gcfg CONFIG.C_IS_DUAL {1} CONFIG.C_ALL_INPUTS_2 {1} CONFIG.C_GPIO2_WIDTH [lindex $status 3]
      }
      ::kabe_bd::ip xilinx.com:ip:axi_gpio:2.0 $gpio $gcfg
      set mi [format M%02d $mi_next]
      incr mi_next
      connect_bd_intf_net [get_bd_intf_pins ctrl_ic/${mi}_AXI] [get_bd_intf_pins $gpio/S_AXI]
      connect_bd_net [get_bd_pins engine/[lindex $status 0]] [get_bd_pins $gpio/gpio_io_i]
      if {[llength $status] >= 4} {
        connect_bd_net [get_bd_pins engine/[lindex $status 2]] [get_bd_pins $gpio/gpio2_io_i]
      }
      lappend clk_pins ctrl_ic/${mi}_ACLK $gpio/s_axi_aclk
      lappend aresetn_pins ctrl_ic/${mi}_ARESETN $gpio/s_axi_aresetn
    }

    lappend clk_pins $hp/ACLK $hp/S00_ACLK $hp/S01_ACLK $hp/M00_ACLK
    lappend aresetn_pins $hp/S00_ARESETN $hp/S01_ARESETN $hp/M00_ARESETN
    lappend ic_resetn_pins $hp/ARESETN
  }

  # --- the commit of the running bitstream: USR_ACCESSE2 (hdl/kabe_usr_access.v) on a GPIO's
  # channel 1, so the board runner can read back what is configured, not only what it pushed
  set ua [::kabe_bd::usr_access_cell]
  create_bd_cell -type module -reference kabe_usr_access usr_access_src
  ::kabe_bd::ip xilinx.com:ip:axi_gpio:2.0 $ua [list CONFIG.C_ALL_INPUTS {1} CONFIG.C_GPIO_WIDTH {32}]
  ::kabe_bd::for_runner $ua usr_access {} [list 1 usr_access]
  connect_bd_net [get_bd_pins usr_access_src/usr_access] [get_bd_pins $ua/gpio_io_i]
  set mi [format M%02d $mi_next]
  incr mi_next
  connect_bd_intf_net [get_bd_intf_pins ctrl_ic/${mi}_AXI] [get_bd_intf_pins $ua/S_AXI]
  lappend clk_pins ctrl_ic/${mi}_ACLK $ua/s_axi_aclk
  lappend aresetn_pins ctrl_ic/${mi}_ARESETN $ua/s_axi_aresetn

  # --- one clock (the PS's PL clock: PS7 FCLK0, PS8 pl_clk0) and its resets for everything
  connect_bd_net [get_bd_pins [::kabe_ps::pl_clk]] {*}[::kabe_bd::pins {*}$clk_pins]
  connect_bd_net [get_bd_pins [::kabe_ps::pl_resetn]] [get_bd_pins rst0/ext_reset_in]
  connect_bd_net [get_bd_pins rst0/peripheral_aresetn] {*}[::kabe_bd::pins {*}$aresetn_pins]
  connect_bd_net [get_bd_pins rst0/interconnect_aresetn] {*}[::kabe_bd::pins {*}$ic_resetn_pins]
  connect_bd_net [get_bd_pins rst0/peripheral_reset] [get_bd_pins engine/rst]

  assign_bd_address
  validate_bd_design
  # after validation: the PS's derived parameters (the achieved PL clock) are current only now
  ::kabe_ps::check_clock $ps
  save_bd_design

  # --- the wrapper becomes the project top; outputs (and the .hwh) are generated now
  set bd [get_files $::kabe(bd_name).bd]
  set_property synth_checkpoint_mode None $bd
  generate_target all $bd
  set wrapper [make_wrapper -files $bd -top]
  add_files -norecurse $wrapper
  update_compile_order -fileset sources_1
  ::kabe_bd::copy_hwh $bd
  ::kabe_bd::write_cells_json $::kabe(cells_dest)
}

proc ::kabe_bd::json_str {s} {
  return "\"[string map {\\ \\\\ \" \\\"} $s]\""
}

# kabe_<design>.cells.json: the cells the board runner looks up, exactly as created above (the
# runner reads this file and spells no cell name itself; kabe/deploy/pl_names.py reads it).
proc ::kabe_bd::write_cells_json {path} {
  set entries {}
  foreach c $::kabe_bd::runner_cells {
    lassign $c cell role port channels
    set ch {}
    foreach {n sig} $channels { lappend ch "\"$n\": [::kabe_bd::json_str $sig]" }
    lappend entries [format {    {"cell": %s, "role": %s, "port": %s, "channels": {%s}}} \
      [::kabe_bd::json_str $cell] [::kabe_bd::json_str $role] [expr {$port eq "" ? "null" : $port}] [join $ch ", "]]
  }
  set tmp $path.tmp
  set f [open $tmp w]
  puts $f "{"
  puts $f "  \"generated_by\": \"kabe/flows/vivado/tcl/kabe_bd.tcl: the block design's cells the board runner looks up; do not edit\","
  puts $f "  \"bd_name\": [::kabe_bd::json_str $::kabe(bd_name)],"
  puts $f "  \"ports\": $::kabe(ports),"
  puts $f "  \"cells\": \["
  puts $f [join $entries ",\n"]
  puts $f "  \]"
  puts $f "}"
  close $f
  file rename -force $tmp $path
  puts "kabe: runner cell names -> $path"
}

# The .hwh: <proj>.gen/sources_1/bd/<bd>/hw_handoff/ since 2020.2, <proj>.srcs/... before.
proc ::kabe_bd::copy_hwh {bd} {
  set found [get_files -quiet -all -of_objects $bd *.hwh]
  if {![llength $found]} {
    set dir [get_property DIRECTORY [current_project]]
    set proj [get_property NAME [current_project]]
    foreach base [list $proj.gen $proj.srcs] {
      set found [glob -nocomplain [file join $dir $base sources_1 bd $::kabe(bd_name) hw_handoff $::kabe(bd_name).hwh]]
      if {[llength $found]} { break }
    }
  }
  if {![llength $found]} {
    error "kabe_bd.tcl: generate_target wrote no $::kabe(bd_name).hwh; pynq.Overlay cannot load the bitstream without it"
  }
  file copy -force [lindex $found 0] $::kabe(hwh_dest)
  puts "kabe: hardware handoff [lindex $found 0] -> $::kabe(hwh_dest)"
}

::kabe_bd::build
