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
#   hbm_sc{p} SmartConnect: both DMA masters -> axi_noc_cips/HBM{nn}_AXI, one of the NoC's 64 dedicated
#             HBM ports (NUM_HBM_BLI, category pl_hbm, as AMD's xbtest V80 BD and SLASH connect them),
#             to HBM{p/4}_PORT{p%4} at the channel's real read and write MB/s (::kabe(hbm_qos)), and
#             mapped at 1 GiB per pseudo channel from ::kabe(hbm_base) (HBM{p/4}_PC{(p%4)/2}, as xbtest)
#   stat{p}   AXI GPIO on the port's status outputs (as on the Zynq)
#   ctrl_sc   SmartConnect from a new axi_noc_cips master M{m}_AXI (reached from the host through
#             CPM_PCIE_NOC_0, PF0 BAR0, at ::kabe(ctrl_base) after AVED's 32 MB management window);
#             more than 16 register slaves (SmartConnect's NUM_MI limit) go through ctrl_sc{k} leaves
#             of at most 16 each (two levels: 16 x 16 = 256 >= 2 x 64)
#   kabe_rst  proc_sys_reset on the engine clock; engine rst = peripheral_reset (active high)
# AVED's PCIe NoC slaves' DEST_IDS (the NoC destination IDs of the masters AVED built) are dropped: a
# new master makes them stale and Vivado's NoC compiler assigns them again (xbtest rewrites them instead).
# The engine clock is AVED's own user clock, clock_reset/clk_usr_0 (usr_clk_wiz clk_out1), asked for
# at 1000 / ::kabe(period_ns) MHz; AVED's second user clock (clk_out2) is left as AVED sets it.
#
# Ends as AVED's build_design.tcl begins: generate_target, then the fixed, minimal hardware platform
# (write_hw_platform -fixed -minimal: the handoff AVED's management firmware is built from), before
# synthesis. docs/v80.md lists every property set here beside the AVED file it follows.

foreach _k {aved_dir bd_name engine_module period_ns clock_name ports streams status dma_length_width
            hbm_data_width dma_burst hbm_qos noc_avg_burst hbm_base pc_bytes smartconnect_max ctrl_base
            ctrl_range xsa_dest} {
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
  if {$nports < 1 || $nports > 64} { error "v80_aved_bd.tcl: ::kabe(ports) $nports: the NoC has 64 HBM ports (1..64)" }
  ::kabe_v80::aved_base
  ::kabe_v80::engine_clock

  set noc [get_bd_cells axi_noc_cips]
  set mi0 [get_property CONFIG.NUM_MI $noc]
  set clk0 [get_property CONFIG.NUM_CLKS $noc]
  set bli0 [get_property CONFIG.NUM_HBM_BLI $noc]
  if {$bli0 eq ""} { set bli0 0 }
  # one HBM port per channel (its DMA's reads and writes), one master for the registers, one clock
  set_property -dict [list CONFIG.NUM_HBM_BLI [expr {$bli0 + $nports}] CONFIG.NUM_MI [expr {$mi0 + 1}] \
                           CONFIG.NUM_CLKS [expr {$clk0 + 1}]] $noc
  set ctrl_mi [format M%02d_AXI $mi0]
  set_property -dict [list CONFIG.DATA_WIDTH {32} CONFIG.CATEGORY {pl} \
                           CONFIG.APERTURES [list [list $::kabe(ctrl_base) $::kabe(ctrl_range)]]] \
    [get_bd_intf_pins axi_noc_cips/$ctrl_mi]
  # the host reaches it through PCIe PF0 (CPM_PCIE_NOC_0 -> S00_AXI), as AVED's M00_AXI is reached
  ::kabe_v80::add_connection [get_bd_intf_pins axi_noc_cips/S00_AXI] $ctrl_mi \
    {read_bw {5} write_bw {5} read_avg_burst {64} write_avg_burst {64}}
  ::kabe_v80::drop_dest_ids $noc

  set engine [create_bd_cell -type module -reference $::kabe(engine_module) engine]
  ::kabe_v80::ip xilinx.com:ip:proc_sys_reset kabe_rst
  set reg_slaves {}
  set clk_pins [list engine/clk kabe_rst/slowest_sync_clk axi_noc_cips/aclk$clk0]
  set aresetn_pins {}
  set busif [list $ctrl_mi]
  set burst $::kabe(noc_avg_burst)
  for {set p 0} {$p < $nports} {incr p} {
    lassign [lindex $::kabe(streams) $p] s_bus s_width m_bus m_width
    lassign [lindex $::kabe(hbm_qos) $p] rd_bw wr_bw
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

    # the channel's way to HBM: its own dedicated HBM port of the NoC (one HBM NMU)
    set sc hbm_sc$p
    ::kabe_v80::ip xilinx.com:ip:smartconnect $sc [list CONFIG.NUM_SI {2} CONFIG.NUM_MI {1}]
    connect_bd_intf_net [get_bd_intf_pins $dma/M_AXI_MM2S] [get_bd_intf_pins $sc/S00_AXI]
    connect_bd_intf_net [get_bd_intf_pins $dma/M_AXI_S2MM] [get_bd_intf_pins $sc/S01_AXI]
    set hbm_axi [format HBM%02d_AXI [expr {$bli0 + $p}]]
    set hbm [format HBM%d_PORT%d [expr {$p / 4}] [expr {$p % 4}]]
    set_property -dict [list CONFIG.CATEGORY {pl_hbm} \
      CONFIG.CONNECTIONS [list $hbm [list read_bw $rd_bw write_bw $wr_bw read_avg_burst $burst write_avg_burst $burst]]] \
      [get_bd_intf_pins axi_noc_cips/$hbm_axi]
    connect_bd_intf_net [get_bd_intf_pins $sc/M00_AXI] [get_bd_intf_pins axi_noc_cips/$hbm_axi]
    lappend busif $hbm_axi
    puts "kabe: channel $p: $dma -> $sc -> axi_noc_cips/$hbm_axi -> $hbm (read $rd_bw MB/s, write $wr_bw MB/s)"

    lappend reg_slaves $dma/S_AXI_LITE
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
      lappend reg_slaves $gpio/S_AXI
      connect_bd_net [get_bd_pins engine/[lindex $status 0]] [get_bd_pins $gpio/gpio_io_i]
      if {[llength $status] >= 4} {
        connect_bd_net [get_bd_pins engine/[lindex $status 2]] [get_bd_pins $gpio/gpio2_io_i]
      }
      lappend clk_pins $gpio/s_axi_aclk
      lappend aresetn_pins $gpio/s_axi_aresetn
    }
  }
  lassign [::kabe_v80::register_tree $ctrl_mi $reg_slaves] sc_clks sc_resets
  lappend clk_pins {*}$sc_clks
  lappend aresetn_pins {*}$sc_resets
  # the new NoC clock times the new HBM ports and the register master
  set_property CONFIG.ASSOCIATED_BUSIF [join $busif :] [get_bd_pins axi_noc_cips/aclk$clk0]

  connect_bd_net [get_bd_pins clock_reset/clk_usr_0] {*}[::kabe_v80::pins {*}$clk_pins]
  connect_bd_net [get_bd_pins clock_reset/resetn_usr_0_periph] [get_bd_pins kabe_rst/ext_reset_in]
  connect_bd_net [get_bd_pins kabe_rst/peripheral_aresetn] {*}[::kabe_v80::pins {*}$aresetn_pins]
  connect_bd_net [get_bd_pins kabe_rst/peripheral_reset] [get_bd_pins engine/rst]

  # registers at fixed addresses in the host's window (the host-side driver reads them from here:
  # docs/v80.md), 64 KB each in creation order
  set offset $::kabe(ctrl_base)
  foreach seg [::kabe_v80::register_segments] {
    assign_bd_address -offset [format 0x%012X $offset] -range 0x00010000 \
      -target_address_space [get_bd_addr_spaces cips/CPM_PCIE_NOC_0] [get_bd_addr_segs $seg] -force
    set offset [expr {$offset + 0x10000}]
  }
  # each DMA sees its HBM port's pseudo channel, 1 GiB at a fixed address (xbtest's map: from
  # ::kabe(hbm_base), pseudo channel p/2 of the card's 32; ports 2k and 2k+1 share one)
  for {set p 0} {$p < $nports} {incr p} {
    set hbm_axi [format HBM%02d_AXI [expr {$bli0 + $p}]]
    set seg [format axi_noc_cips/%s/HBM%d_PC%d $hbm_axi [expr {$p / 4}] [expr {($p % 4) / 2}]]
    set off [format 0x%011X [expr {$::kabe(hbm_base) + ($p / 2) * $::kabe(pc_bytes)}]]
    foreach space {Data_MM2S Data_S2MM} {
      assign_bd_address -offset $off -range 1G -target_address_space [get_bd_addr_spaces dma$p/$space] \
        [get_bd_addr_segs $seg] -force
    }
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

# AVED's PCIe NoC slaves carry DEST_IDS for the masters AVED built (S00_AXI: {M00_AXI:0x40}); with a new
# master they would be stale, so they are dropped for Vivado's NoC compiler to assign again
proc ::kabe_v80::drop_dest_ids {noc} {
  set nsi [get_property CONFIG.NUM_SI $noc]
  for {set i 0} {$i < $nsi} {incr i} {
    set si [get_bd_intf_pins [format %s/S%02d_AXI $noc $i]]
    if {[get_property CONFIG.DEST_IDS $si] ne ""} {
      set_property CONFIG.DEST_IDS {} $si
      puts "kabe: [format S%02d_AXI $i]: AVED's DEST_IDS dropped (the NoC compiler assigns them for the new master)"
    }
  }
}

# The register slaves behind the NoC master: one SmartConnect when they are at most
# ::kabe(smartconnect_max) (its NUM_MI range), else ctrl_sc feeding leaves ctrl_sc{k} of at most that
# many each. Returns {clock pins} {reset pins} of the SmartConnects made.
proc ::kabe_v80::register_tree {ctrl_mi slaves} {
  set max $::kabe(smartconnect_max)
  set n [llength $slaves]
  set nleaf [expr {$n <= $max ? 0 : ($n + $max - 1) / $max}]
  if {$nleaf > $max} { error "v80_aved_bd.tcl: $n register slaves need more than $max x $max SmartConnect ports" }
  ::kabe_v80::ip xilinx.com:ip:smartconnect ctrl_sc [list CONFIG.NUM_SI {1} CONFIG.NUM_MI [expr {$nleaf ? $nleaf : $n}]]
  connect_bd_intf_net [get_bd_intf_pins axi_noc_cips/$ctrl_mi] [get_bd_intf_pins ctrl_sc/S00_AXI]
  set clks [list ctrl_sc/aclk]
  set rsts [list ctrl_sc/aresetn]
  if {!$nleaf} {
    for {set i 0} {$i < $n} {incr i} {
      connect_bd_intf_net [get_bd_intf_pins [format ctrl_sc/M%02d_AXI $i]] [get_bd_intf_pins [lindex $slaves $i]]
    }
    return [list $clks $rsts]
  }
  for {set k 0} {$k < $nleaf} {incr k} {
    set part [lrange $slaves [expr {$k * $max}] [expr {$k * $max + $max - 1}]]
    set leaf ctrl_sc$k
    ::kabe_v80::ip xilinx.com:ip:smartconnect $leaf [list CONFIG.NUM_SI {1} CONFIG.NUM_MI [llength $part]]
    connect_bd_intf_net [get_bd_intf_pins [format ctrl_sc/M%02d_AXI $k]] [get_bd_intf_pins $leaf/S00_AXI]
    for {set i 0} {$i < [llength $part]} {incr i} {
      connect_bd_intf_net [get_bd_intf_pins [format %s/M%02d_AXI $leaf $i]] [get_bd_intf_pins [lindex $part $i]]
    }
    lappend clks $leaf/aclk
    lappend rsts $leaf/aresetn
  }
  return [list $clks $rsts]
}

::kabe_v80::build
