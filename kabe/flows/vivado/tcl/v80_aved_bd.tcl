# The Alveo V80's block design: AMD's AVED base design, extended by the engine, the way AVED's
# docs say an application is built ("AVED base design BD reused as the starting point for the
# application design BD"; user RTL attached to the NoC). Sourced at project creation in place of the
# Zynq's pynq_z1_ps7.tcl + kabe_bd.tcl (the V80 profile names it: kabe/boards/profiles/v80.yaml).
#
# AVED is AMD's, not kabe's: ::kabe(aved_dir) is a checkout's hardware folder
# (Xilinx/AVED hw/amd_v80_gen5x8_25.1, [tool.kabe] vivado_aved_dir). From it, unchanged:
#   src/bd/create_bd_design.tcl     CIPS (PCIe Gen5x8 + QDMA, RPU, PMC), axi_noc_cips (HBM, 16 ch),
#                                   the DDR4 NoCs, base_logic (hw_discovery, UUID ROM, GCQ, SMBus),
#                                   clock_reset (usr_clk_wiz from the CIPS' pl1_ref_clk, resets)
#   src/iprepo                      AVED's own IP (ip_repo_paths, as create_design.tcl sets it)
#   src/constraints/impl*.xdc       pblocks, NoC locations (used_in_synthesis false, as AVED)
#   src/constraints/opt.post.tcl    impl_1 hooks, as create_design.tcl attaches them; the third,
#   src/constraints/place.pre.tcl   write_device_image.pre.tcl (UUID ROM), runs first inside kabe's
#                                   dispatcher (kabe/flows/vivado/project.py), before the commit
#
# kabe adds, per engine channel p (design.yaml `ports`; 1..64, one HBM NMU each):
#   dma{p}    AXI DMA (simple mode, 26-bit length, 64-bit addresses, 256-bit memory side)
#             M_AXIS_MM2S -> engine/s{p}_axis, S_AXIS_S2MM <- engine/m{p}_axis
#   hbm_sc{p} SmartConnect: both DMA masters -> one new axi_noc_cips slave S{n}_AXI, connected to
#             HBM{p/4}_PORT{p%4} at 12,800 MB/s each way (AVED docs: 64 NMUs x 12,800 MB/s)
#   stat{p}   AXI GPIO on the port's status outputs (as on the Zynq)
#   ctrl_sc   SmartConnect from a new axi_noc_cips master M{m}_AXI (reached from the host through
#             CPM_PCIE_NOC_0, PF0 BAR0, at ::kabe(ctrl_base) after AVED's 32 MB management window)
#   kabe_rst  proc_sys_reset on the engine clock; engine rst = peripheral_reset (active high)
# The engine clock is AVED's own user clock, clock_reset/clk_usr_0 (usr_clk_wiz clk_out1), asked for
# at 1000 / ::kabe(period_ns) MHz; AVED's second user clock (clk_out2) is left as AVED sets it.
#
# Ends as AVED's build_design.tcl begins: generate_target, then the fixed, minimal hardware platform
# (write_hw_platform -fixed -minimal: the handoff AVED's management firmware is built from), before
# synthesis. docs/v80.md lists every property set here beside the AVED file it follows.

foreach _k {aved_dir bd_name engine_module period_ns clock_name ports streams status dma_length_width
            hbm_data_width dma_burst hbm_mbps ctrl_base ctrl_range xsa_dest} {
  if {![info exists ::kabe($_k)]} { error "v80_aved_bd.tcl: ::kabe($_k) is not set; source kabe_settings.tcl first" }
}

namespace eval ::kabe_v80 {}

proc ::kabe_v80::aved_file {args} {
  set f [file join $::kabe(aved_dir) {*}$args]
  if {![file exists $f]} {
    error "v80_aved_bd.tcl: $f does not exist; \[tool.kabe\] vivado_aved_dir must be an AVED checkout's hw/amd_v80_gen5x8_<version> folder (docs/v80.md)"
  }
  return $f
}

proc ::kabe_v80::ip {vlnv name {config {}}} {
  set cell [create_bd_cell -type ip -vlnv $vlnv $name]
  if {[llength $config]} { set_property -dict $config $cell }
  return $cell
}

proc ::kabe_v80::pins {args} {
  set out {}
  foreach p $args { lappend out [get_bd_pins $p] }
  return $out
}

# --- 1. AVED's base, exactly as create_design.tcl makes it (project settings, the block design "top")
proc ::kabe_v80::aved_base {} {
  set_property ip_repo_paths [::kabe_v80::aved_file src iprepo] [current_project]
  update_ip_catalog
  create_bd_design $::kabe(bd_name)
  current_bd_design $::kabe(bd_name)
  source [::kabe_v80::aved_file src bd create_bd_design.tcl]
  create_root_design ""
}

# --- 2. the engine clock: AVED's usr_clk_wiz clk_out1 at the XDC's frequency (clk_out2 unchanged)
proc ::kabe_v80::engine_clock {} {
  set wiz [get_bd_cells clock_reset/usr_clk_wiz]
  set freqs [split [get_property CONFIG.CLKOUT_REQUESTED_OUT_FREQUENCY $wiz] ,]
  set want [format %.3f [expr {1000.0 / $::kabe(period_ns)}]]
  set_property CONFIG.CLKOUT_REQUESTED_OUT_FREQUENCY [join [lreplace $freqs 0 0 $want] ,] $wiz
  puts "kabe: engine clock clock_reset/clk_usr_0 = usr_clk_wiz clk_out1 requested at $want MHz (XDC $::kabe(period_ns) ns)"
}

# A NoC interface's CONNECTIONS with one more entry (a Tcl dict: destination -> QoS list)
proc ::kabe_v80::add_connection {intf dest qos} {
  set conns [get_property CONFIG.CONNECTIONS $intf]
  dict set conns $dest $qos
  set_property CONFIG.CONNECTIONS $conns $intf
}

# --- 3. the engine, its DMAs and their way into HBM and from the host
proc ::kabe_v80::build {} {
  set nports $::kabe(ports)
  ::kabe_v80::aved_base
  ::kabe_v80::engine_clock

  set noc [get_bd_cells axi_noc_cips]
  set si0 [get_property CONFIG.NUM_SI $noc]
  set mi0 [get_property CONFIG.NUM_MI $noc]
  set clk0 [get_property CONFIG.NUM_CLKS $noc]
  # one slave per channel (its DMA's reads and writes), one master for the registers, one clock
  set_property -dict [list CONFIG.NUM_SI [expr {$si0 + $nports}] CONFIG.NUM_MI [expr {$mi0 + 1}] \
                           CONFIG.NUM_CLKS [expr {$clk0 + 1}]] $noc
  set ctrl_mi [format M%02d_AXI $mi0]
  set_property -dict [list CONFIG.DATA_WIDTH {32} CONFIG.CATEGORY {pl} \
                           CONFIG.APERTURES [list [list $::kabe(ctrl_base) $::kabe(ctrl_range)]]] \
    [get_bd_intf_pins axi_noc_cips/$ctrl_mi]
  # the host reaches it through PCIe PF0 (CPM_PCIE_NOC_0 -> S00_AXI), as AVED's M00_AXI is reached
  ::kabe_v80::add_connection [get_bd_intf_pins axi_noc_cips/S00_AXI] $ctrl_mi \
    {read_bw {5} write_bw {5} read_avg_burst {64} write_avg_burst {64}}

  set engine [create_bd_cell -type module -reference $::kabe(engine_module) engine]
  ::kabe_v80::ip xilinx.com:ip:proc_sys_reset kabe_rst
  set n_ctrl $nports
  foreach st $::kabe(status) { if {[llength $st]} { incr n_ctrl } }
  ::kabe_v80::ip xilinx.com:ip:smartconnect ctrl_sc [list CONFIG.NUM_SI {1} CONFIG.NUM_MI $n_ctrl]
  connect_bd_intf_net [get_bd_intf_pins axi_noc_cips/$ctrl_mi] [get_bd_intf_pins ctrl_sc/S00_AXI]

  set clk_pins [list engine/clk kabe_rst/slowest_sync_clk ctrl_sc/aclk axi_noc_cips/aclk$clk0]
  set aresetn_pins [list ctrl_sc/aresetn]
  set busif [list $ctrl_mi]
  set mi_next 0
  for {set p 0} {$p < $nports} {incr p} {
    lassign [lindex $::kabe(streams) $p] s_bus s_width m_bus m_width
    set dma dma$p
    ::kabe_v80::ip xilinx.com:ip:axi_dma $dma [list \
      CONFIG.c_include_sg {0} \
      CONFIG.c_sg_length_width $::kabe(dma_length_width) \
      CONFIG.c_sg_include_stscntrl_strm {0} \
      CONFIG.c_include_mm2s {1} \
      CONFIG.c_include_s2mm {1} \
      CONFIG.c_m_axi_mm2s_data_width $::kabe(hbm_data_width) \
      CONFIG.c_m_axis_mm2s_tdata_width $s_width \
      CONFIG.c_m_axi_s2mm_data_width $::kabe(hbm_data_width) \
      CONFIG.c_s_axis_s2mm_tdata_width $m_width \
      CONFIG.c_mm2s_burst_size $::kabe(dma_burst) \
      CONFIG.c_s2mm_burst_size $::kabe(dma_burst) \
      CONFIG.c_addr_width {64} \
    ]
    connect_bd_intf_net [get_bd_intf_pins $dma/M_AXIS_MM2S] [get_bd_intf_pins engine/$s_bus]
    connect_bd_intf_net [get_bd_intf_pins engine/$m_bus] [get_bd_intf_pins $dma/S_AXIS_S2MM]

    # the channel's way to HBM: its own NoC slave, connected to its own HBM port (one NMU)
    set sc hbm_sc$p
    ::kabe_v80::ip xilinx.com:ip:smartconnect $sc [list CONFIG.NUM_SI {2} CONFIG.NUM_MI {1}]
    connect_bd_intf_net [get_bd_intf_pins $dma/M_AXI_MM2S] [get_bd_intf_pins $sc/S00_AXI]
    connect_bd_intf_net [get_bd_intf_pins $dma/M_AXI_S2MM] [get_bd_intf_pins $sc/S01_AXI]
    set si [format S%02d_AXI [expr {$si0 + $p}]]
    set hbm [format HBM%d_PORT%d [expr {$p / 4}] [expr {$p % 4}]]
    set bw $::kabe(hbm_mbps)
    set_property -dict [list CONFIG.CATEGORY {pl} \
      CONFIG.CONNECTIONS [list $hbm [list read_bw $bw write_bw $bw read_avg_burst 4 write_avg_burst 4]]] \
      [get_bd_intf_pins axi_noc_cips/$si]
    connect_bd_intf_net [get_bd_intf_pins $sc/M00_AXI] [get_bd_intf_pins axi_noc_cips/$si]
    lappend busif $si
    puts "kabe: channel $p: $dma -> $sc -> axi_noc_cips/$si -> $hbm"

    set mi [format M%02d_AXI $mi_next]
    incr mi_next
    connect_bd_intf_net [get_bd_intf_pins ctrl_sc/$mi] [get_bd_intf_pins $dma/S_AXI_LITE]
    lappend clk_pins $dma/s_axi_lite_aclk $dma/m_axi_mm2s_aclk $dma/m_axi_s2mm_aclk $sc/aclk
    lappend aresetn_pins $dma/axi_resetn $sc/aresetn

    set status [lindex $::kabe(status) $p]
    if {[llength $status]} {
      set gpio stat$p
      set gcfg [list CONFIG.C_ALL_INPUTS {1} CONFIG.C_GPIO_WIDTH [lindex $status 1]]
      if {[llength $status] >= 4} {
        lappend gcfg CONFIG.C_IS_DUAL {1} CONFIG.C_ALL_INPUTS_2 {1} CONFIG.C_GPIO2_WIDTH [lindex $status 3]
      }
      ::kabe_v80::ip xilinx.com:ip:axi_gpio $gpio $gcfg
      set mi [format M%02d_AXI $mi_next]
      incr mi_next
      connect_bd_intf_net [get_bd_intf_pins ctrl_sc/$mi] [get_bd_intf_pins $gpio/S_AXI]
      connect_bd_net [get_bd_pins engine/[lindex $status 0]] [get_bd_pins $gpio/gpio_io_i]
      if {[llength $status] >= 4} {
        connect_bd_net [get_bd_pins engine/[lindex $status 2]] [get_bd_pins $gpio/gpio2_io_i]
      }
      lappend clk_pins $gpio/s_axi_aclk
      lappend aresetn_pins $gpio/s_axi_aresetn
    }
  }
  # the new NoC clock times the new slaves and the register master
  set_property CONFIG.ASSOCIATED_BUSIF [join $busif :] [get_bd_pins axi_noc_cips/aclk$clk0]

  connect_bd_net [get_bd_pins clock_reset/clk_usr_0] {*}[::kabe_v80::pins {*}$clk_pins]
  connect_bd_net [get_bd_pins clock_reset/resetn_usr_0_periph] [get_bd_pins kabe_rst/ext_reset_in]
  connect_bd_net [get_bd_pins kabe_rst/peripheral_aresetn] {*}[::kabe_v80::pins {*}$aresetn_pins]
  connect_bd_net [get_bd_pins kabe_rst/peripheral_reset] [get_bd_pins engine/rst]

  # registers at fixed addresses in the host's window (the host-side driver reads them from here:
  # docs/v80.md), 64 KB each in creation order; the DMAs' HBM segments are assigned by Vivado
  set offset $::kabe(ctrl_base)
  foreach seg [::kabe_v80::register_segments] {
    assign_bd_address -offset [format 0x%012X $offset] -range 0x00010000 \
      -target_address_space [get_bd_addr_spaces cips/CPM_PCIE_NOC_0] [get_bd_addr_segs $seg] -force
    set offset [expr {$offset + 0x10000}]
  }
  assign_bd_address
  validate_bd_design
  save_bd_design

  set bd [get_files $::kabe(bd_name).bd]
  set_property synth_checkpoint_mode None $bd
  generate_target all $bd
  set wrapper [make_wrapper -files $bd -top]
  add_files -norecurse $wrapper
  update_compile_order -fileset sources_1
  # AVED's build_design.tcl: the fixed, minimal platform right after generate_target, before synthesis
  write_hw_platform -force -fixed -minimal $::kabe(xsa_dest)
  puts "kabe: hardware platform (fixed, minimal) -> $::kabe(xsa_dest)"

  # AVED's implementation constraints and two of its three impl_1 hooks, as create_design.tcl adds them
  foreach xdc {impl.xdc impl.pins.xdc} {
    add_files -fileset constrs_1 -norecurse [::kabe_v80::aved_file src constraints $xdc]
    set_property -dict {used_in_synthesis false processing_order NORMAL} [get_files $xdc]
  }
  set_property STEPS.OPT_DESIGN.TCL.POST [::kabe_v80::aved_file src constraints opt.post.tcl] [get_runs impl_1]
  set_property STEPS.PLACE_DESIGN.TCL.PRE [::kabe_v80::aved_file src constraints place.pre.tcl] [get_runs impl_1]
}

# dma{p}/S_AXI_LITE and stat{p}/S_AXI register segments, in channel order
proc ::kabe_v80::register_segments {} {
  set out {}
  for {set p 0} {$p < $::kabe(ports)} {incr p} {
    lappend out dma$p/S_AXI_LITE/Reg
    if {[llength [lindex $::kabe(status) $p]]} { lappend out stat$p/S_AXI/Reg }
  }
  return $out
}

::kabe_v80::build
