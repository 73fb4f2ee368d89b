# STAND-IN for AMD Vivado's Tcl commands, for kabe's tests only. NOT VIVADO.
#
# Defines the Vivado commands kabe's Tcl (and edalize's generated Tcl) call, as procs that record
# every call and keep just enough state (properties, files, runs) for the scripts to run to the
# end in plain tclsh. Any other Vivado command is an error, so a typo in a script fails the test
# instead of being recorded.
#
# Two uses:
#   * dry run (tests/flows/test_vivado_flow.py): source this, then a script; inspect the record.
#   * tests/standin/vivado (the stand-in executable edalize's Makefile calls): ::standin::mode is
#     "run", launch_runs executes impl_1's hooks and writes fixture reports, a STAND-IN .bit, etc.
#
# The record file (::standin::record_file) has one call per line: a Tcl list {command arg ...}.

namespace eval ::standin {
  variable mode dry
  variable version 2023.2
  variable calls {}
  variable record_file ""
  variable props
  array set props {}
  variable files {}
  variable project ""
  variable project_dir ""
  variable cells {}
  variable fixtures ""
  variable fixtures_default 0
  variable scenario met
  variable fclk_act ""
  variable known_runs {synth_1 impl_1}
  variable intf_nets {}
  variable nets {}
}

proc ::standin::rec {args} {
  lappend ::standin::calls $args
  if {$::standin::record_file ne ""} {
    set f [open $::standin::record_file a]
    puts $f [list {*}$args]
    close $f
  }
}

proc ::standin::prop {obj name {default ""}} {
  set key "$obj,[string toupper $name]"
  if {[info exists ::standin::props($key)]} { return $::standin::props($key) }
  return $default
}

proc ::standin::setprop {obj name value} {
  set ::standin::props($obj,[string toupper $name]) $value
}

# Options that take no value, per command family, so positional arguments can be found.
proc ::standin::positional {argv {flags {-quiet -force -norecurse -all -verbose -hier -hierarchical -top -sv
    -report_unconstrained -check_timing_verbose -logic_level_distribution -no_script -import -regexp -nocase}}} {
  set out {}
  for {set i 0} {$i < [llength $argv]} {incr i} {
    set a [lindex $argv $i]
    if {[string match -* $a] && ![string is double -strict $a]} {
      if {$a ni $flags} { incr i }
      continue
    }
    lappend out $a
  }
  return $out
}

proc ::standin::opt {argv name {default ""}} {
  set i [lsearch -exact $argv $name]
  if {$i < 0 || $i + 1 >= [llength $argv]} { return $default }
  return [lindex $argv [expr {$i + 1}]]
}

# --- the stand-in's own identity
proc version {args} {
  ::standin::rec version {*}$args
  if {"-short" in $args} { return $::standin::version }
  return "STAND-IN for Vivado v$::standin::version (kabe tests; not AMD Vivado)"
}

# --- project
proc create_project {args} {
  ::standin::rec create_project {*}$args
  set pos [::standin::positional [lsearch -all -inline -not -exact [lsearch -all -inline -not -exact $args -in_memory] -ip]]
  if {"-in_memory" in $args} { set pos [list in_memory [pwd]] }
  set ::standin::project [lindex $pos 0]
  set part [::standin::opt $args -part]
  if {$part ne ""} { ::standin::setprop $::standin::project PART $part }
  set ::standin::project_dir [expr {[llength $pos] > 1 ? [file normalize [lindex $pos 1]] : [pwd]}]
  ::standin::setprop $::standin::project NAME $::standin::project
  ::standin::setprop $::standin::project DIRECTORY $::standin::project_dir
  set ::standin::files {}
  return $::standin::project
}
proc current_project {args} {
  ::standin::rec current_project {*}$args
  if {$::standin::project eq ""} { error "STAND-IN current_project: no open project" }
  return $::standin::project
}
proc current_fileset {args} { ::standin::rec current_fileset {*}$args; return sources_1 }
proc get_filesets {args} { ::standin::rec get_filesets {*}$args; return [::standin::positional $args] }
proc set_param {args} { ::standin::rec set_param {*}$args }
proc set_msg_config {args} { ::standin::rec set_msg_config {*}$args }
proc update_compile_order {args} { ::standin::rec update_compile_order {*}$args }
proc report_ip_status {args} { ::standin::rec report_ip_status {*}$args }

proc ::standin::add_file {path} {
  set p [file normalize $path]
  if {$p ni $::standin::files} { lappend ::standin::files $p }
  return $p
}
proc read_verilog {args} {
  ::standin::rec read_verilog {*}$args
  foreach f [::standin::positional $args] {
    if {![file exists $f]} { error "STAND-IN read_verilog: $f does not exist" }
    ::standin::add_file $f
  }
}
# read_vhdl (UG835): -library <name> puts the files in that VHDL library (Vivado's default: xil_defaultlib),
# kept as the file's LIBRARY property as Vivado keeps it
proc read_vhdl {args} {
  ::standin::check_opts read_vhdl $args
  ::standin::rec read_vhdl {*}$args
  foreach f [::standin::positional $args {-vhdl2008 -vhdl2019 -netlist -quiet -verbose}] {
    if {![file exists $f]} { error "STAND-IN read_vhdl: $f does not exist" }
    ::standin::setprop [::standin::add_file $f] LIBRARY [::standin::opt $args -library xil_defaultlib]
  }
}
proc read_xdc {args} { ::standin::rec read_xdc {*}$args; foreach f [::standin::positional $args] { ::standin::add_file $f } }
proc read_mem {args} { ::standin::rec read_mem {*}$args; foreach f [::standin::positional $args] { ::standin::add_file $f } }
proc add_files {args} { ::standin::rec add_files {*}$args; foreach f [::standin::positional $args] { ::standin::add_file $f } }

proc get_files {args} {
  ::standin::rec get_files {*}$args
  set pats [::standin::positional $args]
  set of [::standin::opt $args -of_objects]
  if {$of ne ""} {
    set out {}
    foreach f [::standin::prop $of GENERATED {}] {
      foreach pat $pats { if {[string match $pat [file tail $f]]} { lappend out $f } }
    }
    return $out
  }
  set out {}
  foreach f $::standin::files {
    foreach pat $pats {
      if {[string match $pat [file tail $f]] || $pat eq $f} { lappend out $f }
    }
  }
  if {![llength $out] && "-quiet" ni $args} { error "STAND-IN get_files: no file matches $pats" }
  return $out
}

# --- properties
proc set_property {args} {
  if {[lindex $args 0] eq "-dict"} {
    set pairs [lindex $args 1]
    set objs [lrange $args 2 end]
    if {[llength $pairs] % 2} { error "STAND-IN set_property -dict: odd list $pairs" }
  } else {
    set pairs [lrange $args 0 1]
    set objs [lrange $args 2 end]
  }
  if {![llength $objs]} { error "STAND-IN set_property: no object in {$args}" }
  foreach obj [concat {*}$objs] {
    foreach {k v} $pairs {
      ::standin::setprop $obj $k $v
      ::standin::rec PROP $obj [string toupper $k] $v
    }
  }
}

proc get_property {args} {
  ::standin::rec get_property {*}$args
  set pos [::standin::positional $args]
  lassign $pos name obj
  set uname [string toupper $name]
  switch -- $uname {
    CONFIG.PCW_ACT_FPGA0_PERIPHERAL_FREQMHZ { return [::standin::ps7_act_fclk $obj 0 0] }
    CONFIG.PSU__CRL_APB__PL0_REF_CTRL__ACT_FREQMHZ { return [::standin::ps8_act_pl_clk $obj 0 0] }
    PROGRESS { return [::standin::prop $obj PROGRESS "0%"] }
    NEEDS_REFRESH { return [::standin::prop $obj NEEDS_REFRESH 0] }
    PERIOD {
      # a PS7 FCLK clock's period follows from the PS7's divider (as the IP's own XDC writes it)
      if {[regexp {^clk_fpga_(\d)$} $obj -> n]} {
        set want [::standin::prop /ps7 CONFIG.PCW_FPGA${n}_PERIPHERAL_FREQMHZ 50]
        return [format %.3f [expr {max(1, round(1000.0 / $want))}]]
      }
      # a PS8 pl_clk clock (Vivado names it clk_pl_<n>): its period from the PS8's divider
      if {[regexp {^clk_pl_(\d)$} $obj -> n]} {
        return [format %.3f [expr {1000.0 / [::standin::ps8_act_pl_clk /ps8 $n]}]]
      }
      # a Versal clock wizard's output (AVED's usr_clk_wiz): the period of its requested frequency
      if {[regexp {^clkout(\d)_primitive$} $obj -> n]} {
        set freqs [split [::standin::prop /clock_reset/usr_clk_wiz CONFIG.CLKOUT_REQUESTED_OUT_FREQUENCY 300,500] ,]
        return [format %.3f [expr {1000.0 / [lindex $freqs [expr {$n - 1}]]}]]
      }
      return [::standin::prop $obj PERIOD]
    }
    DIRECTORY {
      if {$obj in $::standin::known_runs} {
        return [file join $::standin::project_dir $::standin::project.runs $obj]
      }
    }
    TYPE {
      if {$obj eq "/"} { return hier }
    }
    TOP {
      return [::standin::prop $obj TOP [::standin::prop sources_1 TOP ""]]
    }
    SLACK {
      if {[string match "standin_path:*" $obj]} { return [string range $obj 13 end] }
    }
  }
  return [::standin::prop $obj $uname]
}

proc list_property {args} {
  ::standin::rec list_property {*}$args
  set pos [::standin::positional $args]
  if {[llength $pos] > 1} { return [lrange $pos 1 end] }
  return {}
}

# --- block design
proc create_bd_design {args} {
  ::standin::rec create_bd_design {*}$args
  set name [lindex [::standin::positional $args] 0]
  set dir [file join $::standin::project_dir $::standin::project.srcs sources_1 bd $name]
  file mkdir $dir
  set bd [file join $dir $name.bd]
  set f [open $bd w]; puts $f "STAND-IN block design $name (not a Vivado .bd)"; close $f
  ::standin::add_file $bd
  return $bd
}
proc current_bd_design {args} { ::standin::rec current_bd_design {*}$args; return [lindex [::standin::positional $args] 0] }
proc current_bd_instance {args} { ::standin::rec current_bd_instance {*}$args; return / }
proc create_bd_cell {args} {
  ::standin::rec create_bd_cell {*}$args
  set type [::standin::opt $args -type]
  set name [lindex [::standin::positional $args] end]
  switch -- $type {
    ip {
      set what [::standin::opt $args -vlnv]
      if {![::standin::ipdef_exists $what]} { error "STAND-IN create_bd_cell: IP $what is not in the catalog (ip_repo_paths?)" }
      # a VLNV without its version takes the catalog's (as AMD's KV260 scripts create zynq_ultra_ps_e and
      # xlslice); the cell, and the .hwh, carry the full VLNV
      if {[llength [split $what :]] == 3 && [::standin::catalog_version $what] ne ""} { append what ":[::standin::catalog_version $what]" }
    }
    module {
      set what [::standin::opt $args -reference]
      set found 0
      foreach f $::standin::files {
        if {[string match *.v $f] || [string match *.sv $f]} {
          set fh [open $f]; set text [read $fh]; close $fh
          if {[regexp "module\\s+$what\\M" $text]} { set found 1 }
        }
      }
      if {!$found} { error "STAND-IN create_bd_cell -reference $what: no source file defines module $what" }
    }
    default { set what "" }
  }
  lappend ::standin::cells [list /$name $type $what]
  return /$name
}
# The versions Vivado 2023.2's catalog holds of the IPs kabe's Zynq scripts create without one (the .hwh
# PYNQ reads carries the full VLNV); any other keeps the VLNV it was given (AVED's Versal cells: no .hwh).
proc ::standin::catalog_version {vlnv} {
  set known {xilinx.com:ip:zynq_ultra_ps_e 3.5 xilinx.com:ip:xlslice 1.0}
  if {[dict exists $known $vlnv]} { return [dict get $known $vlnv] }
  return ""
}
proc ::standin::bd_obj {args} {
  set out {}
  foreach p [::standin::positional $args] { lappend out /[string trimleft $p /] }
  return $out
}
proc get_bd_cells {args} {
  ::standin::rec get_bd_cells {*}$args
  # no pattern: the cells made so far (what write_bd_tcl's scripts ask to see whether a design is empty)
  if {![llength [::standin::positional $args]]} { return [lmap c $::standin::cells {lindex $c 0}] }
  return [::standin::bd_obj {*}$args]
}
proc get_bd_pins {args} { ::standin::rec get_bd_pins {*}$args; return [::standin::bd_obj {*}$args] }
proc get_bd_intf_pins {args} { ::standin::rec get_bd_intf_pins {*}$args; return [::standin::bd_obj {*}$args] }
proc get_bd_intf_ports {args} { ::standin::rec get_bd_intf_ports {*}$args; return [::standin::bd_obj {*}$args] }
proc get_bd_ports {args} { ::standin::rec get_bd_ports {*}$args; return [::standin::bd_obj {*}$args] }
proc create_bd_intf_port {args} { ::standin::rec create_bd_intf_port {*}$args; return /[lindex $args end] }
proc create_bd_port {args} { ::standin::rec create_bd_port {*}$args; return /[lindex $args end] }
proc connect_bd_net {args} {
  ::standin::rec connect_bd_net {*}$args
  lappend ::standin::nets [::standin::positional $args]
  if {[llength [::standin::positional $args]] < 2} { error "STAND-IN connect_bd_net: fewer than two pins in {$args}" }
}
proc connect_bd_intf_net {args} {
  ::standin::rec connect_bd_intf_net {*}$args
  lappend ::standin::intf_nets [::standin::positional $args]
  if {[llength [::standin::positional $args]] != 2} { error "STAND-IN connect_bd_intf_net: needs two interfaces, got {$args}" }
}
proc assign_bd_address {args} { ::standin::rec assign_bd_address {*}$args }
# The board store: the stand-in knows the board parts named in ::standin::board_parts (Vivado's Xilinx
# Board Store holds the Kria SOMs' files: xilinx.com:kv260_som:part0:<version>)
namespace eval ::standin { variable board_parts {xilinx.com:kv260_som:part0:1.4 xilinx.com:kv260_som:part0:1.3} }
proc get_board_parts {args} {
  ::standin::rec get_board_parts {*}$args
  set out {}
  foreach pat [::standin::positional $args] {
    foreach b $::standin::board_parts { if {[string match $pat $b] && $b ni $out} { lappend out $b } }
  }
  return $out
}
proc apply_bd_automation {args} {
  ::standin::rec apply_bd_automation {*}$args
  set rule [::standin::opt $args -rule]
  set cfg [::standin::opt $args -config]
  set cell [lindex [::standin::positional $args] end]
  if {$rule eq "xilinx.com:bd_rule:zynq_ultra_ps_e" && [dict exists $cfg apply_board_preset] && [dict get $cfg apply_board_preset]} {
    set board [::standin::prop $::standin::project BOARD_PART]
    if {$board eq ""} { error "STAND-IN apply_bd_automation: apply_board_preset with no board_part on the project" }
    ::standin::setprop $cell BOARD_PRESET 1
    ::standin::rec BOARD_PRESET $cell $board [::standin::prop $::standin::project BOARD_CONNECTIONS]
  }
}
proc get_bd_addr_spaces {args} { ::standin::rec get_bd_addr_spaces {*}$args; return [::standin::bd_obj {*}$args] }
proc get_bd_addr_segs {args} { ::standin::rec get_bd_addr_segs {*}$args; return [::standin::bd_obj {*}$args] }
proc update_ip_catalog {args} { ::standin::rec update_ip_catalog {*}$args }

# write_hw_platform: a STAND-IN .xsa, a zip like Vivado's (an .xsa is a zip archive) holding a
# STAND-IN note, the block design's .hwh, and with -include_bit the bitstream impl_1 wrote
proc write_hw_platform {args} {
  ::standin::rec write_hw_platform {*}$args
  if {$::standin::mode ne "run"} { return }
  set dest [file normalize [lindex [::standin::positional $args] end]]
  set members {}
  foreach f $::standin::files {
    if {[string match *.bd $f]} { foreach h [::standin::prop $f GENERATED {}] { lappend members $h } }
  }
  if {"-include_bit" in $args} {
    # the image impl_1 wrote: a .bit, or on a Versal part (xcv..., not a Virtex xcvu) the device image (.pdi), as Vivado includes it
    set ext [expr {[regexp {^xcv[^u]} [::standin::prop $::standin::project PART]] ? "pdi" : "bit"}]
    set bit [file join $::standin::project_dir $::standin::project.runs impl_1 [::standin::prop sources_1 TOP].$ext]
    if {![file exists $bit]} { error "STAND-IN write_hw_platform -include_bit: impl_1 wrote no $ext image ($bit)" }
    lappend members $bit
  }
  set kind [expr {"-minimal" in $args ? "fixed, minimal" : "fixed"}]
  exec python3 -c {
import sys, zipfile
dest, kind, members = sys.argv[1], sys.argv[2], sys.argv[3:]
with zipfile.ZipFile(dest, "w") as z:
    z.writestr("STAND-IN.txt", f"STAND-IN hardware platform ({kind}) written by tests/standin (kabe tests); not a Vivado .xsa\n")
    for m in members:
        z.write(m, m.rsplit("/", 1)[-1])
} $dest $kind {*}$members
}
proc validate_bd_design {args} {
  ::standin::rec validate_bd_design {*}$args; ::standin::check_noc; ::standin::check_ps8; ::standin::validate_derived
}

# The Zynq UltraScale+ PS8 (zynq_ultra_ps_e) rules validate_bd_design enforces here, as the IP has them
# (its ports exist only when the property that enables them is set; PG201), so a block design that
# uses a port it never enabled fails in the tests as it would in Vivado:
#   * S_AXI_HP<n>_FPD (and saxihp<n>_fpd_aclk) is the PS8's S_AXI_GP<n+2>: PSU__USE__S_AXI_GP<n+2> = 1
#   * M_AXI_HPM0_FPD / M_AXI_HPM1_FPD / M_AXI_HPM0_LPD (and their aclk) need PSU__USE__M_AXI_GP0 / 1 / 2
#   * pl_clk<n> needs PSU__FPGA_PL<n>_ENABLE = 1; emio_ttc0_wave_o needs TTC0's wave output on EMIO
#   * a PS8 has a DDR configuration only from a board preset (apply_bd_automation ... apply_board_preset)
#     or PSU__DDRC__* settings: without either the board's memory is not what the PS8 would program
proc ::standin::ps8_need {cell pin} {
  if {[regexp {^S_AXI_HP(\d)_FPD$} $pin -> n] || [regexp {^saxihp(\d)_fpd_aclk$} $pin -> n]} {
    return [list CONFIG.PSU__USE__S_AXI_GP[expr {$n + 2}] 1]
  }
  foreach {m gp} {M_AXI_HPM0_FPD 0 M_AXI_HPM1_FPD 1 M_AXI_HPM0_LPD 2 maxihpm0_fpd_aclk 0 maxihpm1_fpd_aclk 1 maxihpm0_lpd_aclk 2} {
    if {$pin eq $m} { return [list CONFIG.PSU__USE__M_AXI_GP$gp 1] }
  }
  if {[regexp {^pl_clk(\d)$} $pin -> n]} { return [list CONFIG.PSU__FPGA_PL${n}_ENABLE 1] }
  if {$pin eq "emio_ttc0_wave_o"} { return [list CONFIG.PSU__TTC0__WAVEOUT__ENABLE 1 CONFIG.PSU__TTC0__WAVEOUT__IO EMIO] }
  return {}
}
proc ::standin::check_ps8 {} {
  foreach c $::standin::cells {
    lassign $c cell type vlnv
    if {![string match *:zynq_ultra_ps_e* $vlnv]} { continue }
    if {![::standin::prop $cell BOARD_PRESET 0] && ![llength [array names ::standin::props "$cell,CONFIG.PSU__DDRC__*"]]} {
      error "STAND-IN validate_bd_design: $cell (zynq_ultra_ps_e) has no DDR configuration: no board preset applied (set the project's board_part, then apply_bd_automation -rule xilinx.com:bd_rule:zynq_ultra_ps_e -config {apply_board_preset \"1\"}) and no PSU__DDRC__* settings"
    }
    foreach ends [concat $::standin::intf_nets $::standin::nets] {
      foreach e $ends {
        if {![string match "$cell/*" $e]} { continue }
        set pin [lindex [split $e /] end]
        foreach {k want} [::standin::ps8_need $cell $pin] {
          set got [::standin::prop $cell $k 0]
          if {$got ne $want} { error "STAND-IN validate_bd_design: $e is connected, but $cell $k is '$got', not $want: the PS8 has no such port" }
        }
      }
    }
  }
}

# The NoC and SmartConnect rules validate_bd_design enforces here, as AMD's IP states them, so a block
# design that breaks them fails in the tests as it would in Vivado:
#   * an axi_noc connection to HBMn_PORTm from a PL slave must use one of the dedicated HBM ports
#     HBMnn_AXI (NUM_HBM_BLI of them, at most 64) of category pl_hbm; a generic S<nn>_AXI of category
#     pl may not reach HBM (AVED's docs, xbtest's and SLASH's V80 block designs: HBM from the PL only
#     through HBMnn_AXI); PS slaves (ps_*) may, as AVED's PCIe slave does
#   * an HBMnn_AXI port beyond NUM_HBM_BLI does not exist; it connects to HBM ports only
#   * a QoS bandwidth of 0 disables that direction (PG313): refused
#   * a SmartConnect has 1..16 slave and master interfaces (PG247)
proc ::standin::check_noc {} {
  foreach c $::standin::cells {
    lassign $c cell type vlnv
    if {[string match *:smartconnect* $vlnv]} {
      foreach k {NUM_SI NUM_MI} {
        set v [::standin::prop $cell CONFIG.$k 1]
        if {$v < 1 || $v > 16} { error "STAND-IN validate_bd_design: $cell CONFIG.$k $v is out of range (SmartConnect: 1..16)" }
      }
    }
    if {![string match *:axi_noc* $vlnv]} { continue }
    set nbli [::standin::prop $cell CONFIG.NUM_HBM_BLI 0]
    if {$nbli > 64} { error "STAND-IN validate_bd_design: $cell CONFIG.NUM_HBM_BLI $nbli is out of range (0..64)" }
    foreach key [array names ::standin::props "$cell/*,CONFIG.CONNECTIONS"] {
      set intf [lindex [split $key ,] 0]
      set pin [lindex [split $intf /] end]
      set cat [::standin::prop $intf CONFIG.CATEGORY ""]
      set conns $::standin::props($key)
      set to_hbm 0
      dict for {dest qos} $conns {
        if {[regexp {^HBM\d+_PORT\d$} $dest]} { set to_hbm 1 }
        foreach dir {read_bw write_bw} {
          if {[dict exists $qos $dir] && [dict get $qos $dir] <= 0} {
            error "STAND-IN validate_bd_design: $intf -> $dest $dir [dict get $qos $dir]: 0 disables that direction (PG313)"
          }
        }
      }
      if {[regexp {^HBM(\d+)_AXI$} $pin -> n]} {
        if {[scan $n %d] >= $nbli} { error "STAND-IN validate_bd_design: $intf does not exist ($cell CONFIG.NUM_HBM_BLI $nbli)" }
        if {$cat ne "pl_hbm"} { error "STAND-IN validate_bd_design: $intf is an HBM port; its CATEGORY must be pl_hbm, not '$cat'" }
        dict for {dest qos} $conns {
          if {![regexp {^HBM\d+_PORT\d$} $dest]} { error "STAND-IN validate_bd_design: $intf connects to $dest; an HBM port reaches HBM only" }
        }
      } elseif {$to_hbm && ![string match ps_* $cat]} {
        error "STAND-IN validate_bd_design: $intf (category '$cat') connects to HBM; from the PL, HBM is reached only through the NoC's HBMnn_AXI ports (NUM_HBM_BLI, category pl_hbm)"
      }
    }
  }
}
proc save_bd_design {args} { ::standin::rec save_bd_design {*}$args }
proc upgrade_bd_cells {args} { ::standin::rec upgrade_bd_cells {*}$args }
proc generate_target {args} {
  ::standin::rec generate_target {*}$args
  foreach ip [concat {*}[lindex [::standin::positional $args] end]] {
    if {$ip in $::standin::ips} {
      set dir [::standin::ip_products $ip generate_target]
      ::standin::rec IP_GENERATED $ip
      if {$::standin::mode eq "run"} {
        set f [open [file join $dir ${ip}_stub.v] w]; puts $f "// STAND-IN products of IP $ip (not Vivado's)"; close $f
      }
    }
  }
  set bd [lindex [::standin::positional $args] end]
  if {[string match *.bd $bd]} {
    set name [file rootname [file tail $bd]]
    set dir [file join $::standin::project_dir $::standin::project.gen sources_1 bd $name hw_handoff]
    file mkdir $dir
    set hwh [file join $dir $name.hwh]
    ::standin::write_hwh $hwh $name
    ::standin::setprop $bd GENERATED [list $hwh]
  }
}
proc make_wrapper {args} {
  ::standin::rec make_wrapper {*}$args
  set bd [::standin::opt $args -files]
  set name [file rootname [file tail $bd]]
  set dir [file join $::standin::project_dir $::standin::project.gen sources_1 bd $name hdl]
  file mkdir $dir
  set w [file join $dir ${name}_wrapper.v]
  set f [open $w w]; puts $f "// STAND-IN wrapper (not Vivado's)\nmodule ${name}_wrapper (); endmodule"; close $f
  return $w
}

# --- runs
proc get_runs {args} {
  ::standin::rec get_runs {*}$args
  set out {}
  foreach r [::standin::positional $args] {
    if {$r ni $::standin::known_runs} { error "STAND-IN get_runs: no run $r" }
    lappend out $r
  }
  return $out
}
proc current_run {args} { ::standin::rec current_run {*}$args; return impl_1 }
proc reset_runs {args} { ::standin::rec reset_runs {*}$args }
proc wait_on_run {args} { ::standin::rec wait_on_run {*}$args }
proc open_run {args} { ::standin::rec open_run {*}$args }
proc launch_runs {args} {
  ::standin::rec launch_runs {*}$args
  foreach run [::standin::positional $args] {
    if {$::standin::mode eq "run" && [::standin::opt $args -to_step] eq "write_device_image"} {
      ::standin::execute_versal_run $run
    } elseif {$::standin::mode eq "run"} { ::standin::execute_run $run }
    ::standin::setprop $run PROGRESS 100%
  }
}
proc current_design {args} { ::standin::rec current_design {*}$args; return design }
proc get_clocks {args} {
  ::standin::rec get_clocks {*}$args
  set pos [::standin::positional $args]
  if {![llength $pos]} { return {clk_fpga_0} }
  return $pos
}

# --- reports and outputs: in run mode they copy the scenario's fixture reports
proc ::standin::fixture {kind dest} {
  ::standin::rec FIXTURE $kind $dest
  if {$::standin::mode ne "run"} { return }
  ::standin::pick_fixtures
  # most specific first: the scenario's report, then the project's own (flow_utilization_kabe_stage3.rpt), then the default
  set src [file join $::standin::fixtures flow_${kind}_$::standin::scenario.rpt]
  if {![file exists $src]} { set src [file join $::standin::fixtures flow_${kind}_$::standin::project.rpt] }
  if {![file exists $src]} { set src [file join $::standin::fixtures flow_$kind.rpt] }
  if {$::standin::scenario eq "missing" && $kind eq "timing_summary"} { return }
  if {![file exists $src]} { error "STAND-IN: no fixture report for $kind (looked for $src)" }
  file mkdir [file dirname $dest]
  file copy -force $src $dest
}
proc report_timing_summary {args} { ::standin::rec report_timing_summary {*}$args; ::standin::fixture timing_summary [::standin::opt $args -file] }
proc report_utilization {args} {
  ::standin::rec report_utilization {*}$args
  ::standin::fixture [expr {"-hierarchical" in $args ? "utilization_hier" : "utilization"}] [::standin::opt $args -file]
}
proc report_clock_interaction {args} {
  ::standin::rec report_clock_interaction {*}$args
  if {"-return_string" in $args} { return [::standin::fixture_text clock_interaction rpt] }
  ::standin::fixture clock_interaction [::standin::opt $args -file]
}

# --- the timing queries the second-source hook (scripts/vivado/timing_verdict.tcl) makes. The
# answers come from flow_slacks[_<scenario>].txt beside the fixture reports: what real Vivado's
# get_timing_paths would say about the design those reports describe ("key value" lines: setup,
# hold, recovery, removal in ns or "none"; pulse_width_violators as a count).
# Versal parts (xcv...) report in Versal's layout: their default fixtures are tests/fixtures/vivado_v80
proc ::standin::pick_fixtures {} {
  if {$::standin::fixtures_default && [regexp {^xcv[^u]} [::standin::prop $::standin::project PART]]} {
    set ::standin::fixtures [file join [file dirname $::standin::fixtures] vivado_v80]
    set ::standin::fixtures_default 0
  }
  # the KV260's K26 (and any Zynq UltraScale+ part): its reports name the PS8's clock clk_pl_0
  if {$::standin::fixtures_default && [regexp {^xc(k26|zu)} [::standin::prop $::standin::project PART]]} {
    set ::standin::fixtures [file join [file dirname $::standin::fixtures] vivado_kv260]
    set ::standin::fixtures_default 0
  }
}
proc ::standin::fixture_path {kind ext} {
  ::standin::pick_fixtures
  foreach name [list flow_${kind}_$::standin::scenario.$ext flow_${kind}_$::standin::project.$ext flow_$kind.$ext] {
    set src [file join $::standin::fixtures $name]
    if {[file exists $src]} { return $src }
  }
  return ""
}
proc ::standin::fixture_text {kind ext} {
  if {$::standin::mode ne "run"} { return "" }
  set src [::standin::fixture_path $kind $ext]
  if {$src eq ""} { error "STAND-IN: no fixture for $kind.$ext" }
  set f [open $src]; set text [read $f]; close $f
  return $text
}
proc ::standin::slacks {} {
  set out [dict create setup none hold none recovery none removal none pulse_width_violators 0]
  foreach line [split [::standin::fixture_text slacks txt] "\n"] {
    set line [string trim $line]
    if {$line eq "" || [string match "#*" $line]} { continue }
    dict set out [lindex $line 0] [lindex $line 1]
  }
  return $out
}
proc get_path_groups {args} {
  ::standin::rec get_path_groups {*}$args
  set all {**async_default** design_clocks}
  set filter [::standin::opt $args -filter]
  if {$filter ne ""} { return [expr {[string match "*!=*async_default*" $filter] ? {design_clocks} : $all}] }
  set pat [lindex [::standin::positional $args] 0]
  if {$pat eq ""} { return $all }
  set out {}
  foreach g $all { if {[string match $pat $g]} { lappend out $g } }
  return $out
}
proc get_timing_paths {args} {
  ::standin::rec get_timing_paths {*}$args
  set s [::standin::slacks]
  set type [::standin::opt $args -delay_type max]
  set groups [::standin::opt $args -group {**async_default** design_clocks}]
  set kinds {}
  foreach g $groups {
    if {$g eq "**async_default**"} { lappend kinds [expr {$type eq "max" ? "recovery" : "removal"}] }
    if {$g eq "design_clocks"} { lappend kinds [expr {$type eq "max" ? "setup" : "hold"}] }
  }
  set worst ""
  foreach k $kinds {
    set v [dict get $s $k]
    if {$v ne "none" && ($worst eq "" || $v < $worst)} { set worst $v }
  }
  if {$worst eq ""} { return {} }
  return [list "standin_path:$worst"]
}
proc report_pulse_width {args} {
  ::standin::rec report_pulse_width {*}$args
  set n [dict get [::standin::slacks] pulse_width_violators]
  set out ""
  for {set i 0} {$i < $n} {incr i} { append out "Low Pulse Width  Slow  FDRE/C  n/a  0.500  0.350  -0.150  SLICE_X0Y$i  standin_reg\[$i\]/C\n" }
  return $out
}
proc report_design_analysis {args} { ::standin::rec report_design_analysis {*}$args; ::standin::fixture logic_levels [::standin::opt $args -file] }
proc write_edif {args} { ::standin::rec write_edif {*}$args }
proc write_verilog {args} { ::standin::rec write_verilog {*}$args }

# impl_1 in run mode: the hooks attached to its steps, then a STAND-IN bitstream named after the top
proc ::standin::execute_run {run} {
  if {$run eq "synth_1"} {
    foreach when {PRE POST} {
      set hook [::standin::prop $run STEPS.SYNTH_DESIGN.TCL.$when]
      if {$hook ne ""} { ::standin::rec HOOK SYNTH_DESIGN $when $hook; uplevel #0 [list source $hook] }
    }
    return
  }
  if {$run ne "impl_1"} { return }
  set dir [file join $::standin::project_dir $::standin::project.runs $run]
  file mkdir $dir
  set here [pwd]
  cd $dir
  foreach step {OPT_DESIGN PLACE_DESIGN PHYS_OPT_DESIGN ROUTE_DESIGN WRITE_BITSTREAM} {
    foreach when {PRE POST} {
      set hook [::standin::prop $run STEPS.$step.TCL.$when]
      if {$hook ne "" && !($step eq "WRITE_BITSTREAM" && $when eq "POST")} {
        ::standin::rec HOOK $step $when $hook
        uplevel #0 [list source $hook]
      }
    }
  }
  set top [::standin::prop sources_1 TOP]
  # Laid out like Vivado's: the header (design;UserID;Version, part, date, time), then 'e' + length and
  # the configuration data: dummy words, the sync word, the USR_ACCESS (AXSS) write. The data says STAND-IN.
  set word [expr {[::standin::prop design BITSTREAM.CONFIG.USR_ACCESS 0x00000000]}]
  set userid [expr {[::standin::prop design BITSTREAM.CONFIG.USERID 0xFFFFFFFF]}]
  set body "STAND-IN bitstream written by tests/standin (kabe tests); not a Xilinx bitstream\n"
  append body [binary format H* ffffffffaa995566] [binary format H*I 3001a001 $word]
  set part [string map {xc {}} [::standin::prop $::standin::project PART xc7z020clg400-1]]
  regsub {\-[0-9]+$} $part {} part
  set f [open [file join $dir $top.bit] wb]
  puts -nonewline $f [binary format SH*S 9 0ff00ff00ff00ff000 1]
  foreach {key text} [list a "$top;UserID=0X[format %08X $userid];Version=$::standin::version" b $part \
                          c 2026/11/29 d 12:00:00] {
    puts -nonewline $f "$key[binary format S [expr {[string length $text] + 1}]]$text\0"
  }
  puts -nonewline $f "e[binary format I [string length $body]]$body"
  close $f
  set hook [::standin::prop $run STEPS.WRITE_BITSTREAM.TCL.POST]
  if {$hook ne ""} { ::standin::rec HOOK WRITE_BITSTREAM POST $hook; uplevel #0 [list source $hook] }
  cd $here
}

# impl_1 -to_step write_device_image (Versal): the hooks attached to its steps (AVED's and kabe's),
# then a STAND-IN device image named after the top, saying STAND-IN and carrying the USR_ACCESS
# value set when it was written (so a test sees which hook's value won)
proc ::standin::execute_versal_run {run} {
  if {$run ne "impl_1"} { return }
  set dir [file join $::standin::project_dir $::standin::project.runs $run]
  file mkdir $dir
  set here [pwd]
  cd $dir
  foreach step {OPT_DESIGN PLACE_DESIGN PHYS_OPT_DESIGN ROUTE_DESIGN WRITE_DEVICE_IMAGE} {
    foreach when {PRE POST} {
      set hook [::standin::prop $run STEPS.$step.TCL.$when]
      if {$hook ne "" && !($step eq "WRITE_DEVICE_IMAGE" && $when eq "POST")} {
        ::standin::rec HOOK $step $when $hook
        uplevel #0 [list source $hook]
      }
    }
  }
  set top [::standin::prop sources_1 TOP]
  set f [open [file join $dir $top.pdi] wb]
  puts -nonewline $f "STAND-IN device image written by tests/standin (kabe tests); not a Xilinx PDI\n"
  puts -nonewline $f "part=[::standin::prop $::standin::project PART]\nUSR_ACCESS=[::standin::prop design BITSTREAM.CONFIG.USR_ACCESS none]\n"
  close $f
  # the step's post hook runs once its image is written, as write_bitstream's does
  set hook [::standin::prop $run STEPS.WRITE_DEVICE_IMAGE.TCL.POST]
  if {$hook ne ""} { ::standin::rec HOOK WRITE_DEVICE_IMAGE POST $hook; uplevel #0 [list source $hook] }
  cd $here
}

# --- project state between the stand-in's processes (real Vivado keeps it in the .xpr)
proc ::standin::save_project {} {
  if {$::standin::project eq ""} { return }
  set xpr [file join $::standin::project_dir $::standin::project.xpr]
  set f [open $xpr w]
  puts $f "# STAND-IN project file written by tests/standin (kabe tests); not a Vivado project"
  puts $f [list array set ::standin::props [array get ::standin::props]]
  puts $f [list set ::standin::files $::standin::files]
  puts $f [list set ::standin::project $::standin::project]
  puts $f [list set ::standin::project_dir $::standin::project_dir]
  close $f
}
proc ::standin::open_project {xpr} {
  uplevel #0 [list source $xpr]
}

# --- the PS7's derived parameters and the hardware handoff (.hwh)

# Derived PS7 parameters (PCW_ACT_*) are modelled as Vivado's IP integrator is least kind about them:
# they follow a set_property only once validate_bd_design has run. Before that the achieved FCLK
# is the one of the last validated request (the PS7 default, 50 MHz, before any). A script that
# reads it too early gets a stale value and stops with a false error, as it could on real Vivado.
proc ::standin::validate_derived {} {
  foreach c $::standin::cells {
    set cell [lindex $c 0]
    foreach key [array names ::standin::props "$cell,CONFIG.*"] {
      set ::standin::props($cell,VALIDATED.[string range $key [string length "$cell,"] end]) $::standin::props($key)
    }
  }
}

# The achieved FCLKn MHz: the IO PLL (1000 MHz) over the nearest integer divider of the validated
# request; live=1 reads the current request (for the .hwh, written after validation anyway).
proc ::standin::ps7_act_fclk {obj n {live 1}} {
  if {$n == 0 && $::standin::fclk_act ne ""} { return $::standin::fclk_act }
  set key [expr {$live ? "CONFIG" : "VALIDATED.CONFIG"}].PCW_FPGA${n}_PERIPHERAL_FREQMHZ
  set want [::standin::prop $obj $key 50]
  set div [expr {max(1, round(1000.0 / $want))}]
  return [format %.6f [expr {1000.0 / $div}]]
}

# The PS8's achieved pl_clk<n>: the KV260 board preset's IO PLL (999.99 MHz: Kria-PYNQ's kv260 base.tcl,
# PSU__CRL_APB__PL0_REF_CTRL__ACT_FREQMHZ 99.999001 at divisor 10) over the nearest integer divider of
# the validated request (stale until validate_bd_design, as the PS7's), 100 MHz before any request.
namespace eval ::standin { variable ps8_iopll 999.990010 }
proc ::standin::ps8_act_pl_clk {obj n {live 1}} {
  set key [expr {$live ? "CONFIG" : "VALIDATED.CONFIG"}].PSU__CRL_APB__PL${n}_REF_CTRL__FREQMHZ
  set want [::standin::prop $obj $key 100]
  set div [expr {max(1, round($::standin::ps8_iopll / $want))}]
  return [format %.6f [expr {$::standin::ps8_iopll / $div}]]
}

proc ::standin::xml {s} { return [string map {& &amp; < &lt; > &gt; \" &quot;} $s] }

# Cells whose AXI slave is reachable from the PS7's M_AXI_GP0 through interconnects, in order:
# {cell slave_interface} pairs (what assign_bd_address would map).
proc ::standin::ps_master {} {
  foreach c $::standin::cells {
    lassign $c obj type vlnv
    if {[string match *:processing_system7:* $vlnv]} { return [list $obj/M_AXI_GP0 M_AXI_GP0 0x40000000] }
    if {[string match *:zynq_ultra_ps_e* $vlnv]} { return [list $obj/M_AXI_HPM0_FPD M_AXI_HPM0_FPD 0xA0000000] }
  }
  return [list /ps7/M_AXI_GP0 M_AXI_GP0 0x40000000]
}
proc ::standin::gp0_slaves {} {
  set frontier [list [lindex [::standin::ps_master] 0]]
  set seen {}
  set out {}
  while {[llength $frontier]} {
    set end [lindex $frontier 0]
    set frontier [lrange $frontier 1 end]
    foreach net $::standin::intf_nets {
      lassign $net a b
      if {$a eq $end} { set other $b } elseif {$b eq $end} { set other $a } else { continue }
      if {$other in $seen} { continue }
      lappend seen $other
      lassign [split [string trimleft $other /] /] cell pin
      set vlnv [lindex [lsearch -inline -index 0 $::standin::cells /$cell] 2]
      if {[string match *:axi_interconnect:* $vlnv]} {
        foreach net2 $::standin::intf_nets {
          foreach e $net2 { if {[string match "/$cell/M*_AXI" $e]} { lappend frontier $e } }
        }
      } else {
        lappend out [list $cell $pin]
      }
    }
  }
  return $out
}

# A .hwh laid out like Vivado's (EDKSYSTEM / MODULES / MODULE with PARAMETERS, BUSINTERFACES, and
# the PS7's MEMORYMAP), written from the block design the scripts built: every cell under the name
# and type it was created with, its CONFIG properties, and an address for each GP0 slave. PYNQ's
# parser (pynqmetadata) reads it. It says STAND-IN in its first line.
proc ::standin::write_hwh {path bd_name} {
  set slaves [::standin::gp0_slaves]
  lassign [::standin::ps_master] -> master_pin base0
  # the SYSTEMINFO the part says: a Zynq UltraScale+ (xck26-sfvc784-2LV-c) or the Zynq-7020
  set part [::standin::prop $::standin::project PART xc7z020clg400-1]
  if {[regexp {^xc(k26|zu\w+)-(\w+)-(\w+)} $part -> dev pkg sg]} {
    set sysinfo "ARCH=\"zynquplus\" DEVICE=\"xc$dev\" NAME=\"[::standin::xml $bd_name]\" PACKAGE=\"$pkg\" SPEEDGRADE=\"-$sg\""
  } else {
    set sysinfo "ARCH=\"zynq\" DEVICE=\"7z020\" NAME=\"[::standin::xml $bd_name]\" PACKAGE=\"clg400\" SPEEDGRADE=\"-1\""
  }
  set f [open $path w]
  puts $f {<?xml version="1.0" encoding="UTF-8" standalone="no" ?>}
  puts $f "<!-- STAND-IN hardware handoff written by tests/standin (kabe tests); not a Vivado .hwh. Cells, types,"
  puts $f "     parameters and the address map come from the block design the Tcl built. -->"
  puts $f "<EDKSYSTEM EDWVERSION=\"1.2\" TIMESTAMP=\"STAND-IN\" VIVADOVERSION=\"[::standin::xml $::standin::version]\">"
  puts $f "  <SYSTEMINFO $sysinfo/>"
  puts $f "  <EXTERNALPORTS/>\n  <EXTERNALINTERFACES/>\n  <MODULES>"
  foreach c $::standin::cells {
    lassign $c obj type what
    set cell [string trimleft $obj /]
    set vlnv [expr {$type eq "module" ? "xilinx.com:module_ref:$what:1.0" : $what}]
    set modtype [lindex [split $vlnv :] 2]
    set ps [expr {$modtype in {processing_system7 zynq_ultra_ps_e}}]
    puts $f "    <MODULE FULLNAME=\"/[::standin::xml $cell]\" INSTANCE=\"[::standin::xml $cell]\" IPTYPE=\"PERIPHERAL\"[expr {$ps ? { IS_PL="FALSE"} : {}}] MODTYPE=\"[::standin::xml $modtype]\" VLNV=\"[::standin::xml $vlnv]\">"
    puts $f "      <PARAMETERS>"
    set params {}
    foreach key [lsort [array names ::standin::props "$obj,CONFIG.*"]] {
      dict set params [string range $key [string length "$obj,CONFIG."] end] $::standin::props($key)
    }
    if {$modtype eq "zynq_ultra_ps_e"} {
      for {set n 0} {$n < 4} {incr n} {
        set act [::standin::ps8_act_pl_clk $obj $n]
        set div [expr {round($::standin::ps8_iopll / $act)}]
        dict set params PSU__CRL_APB__PL${n}_REF_CTRL__ACT_FREQMHZ $act
        dict set params PSU__CRL_APB__PL${n}_REF_CTRL__DIVISOR0 [expr {$div <= 63 ? $div : 63}]
        dict set params PSU__CRL_APB__PL${n}_REF_CTRL__DIVISOR1 [expr {$div <= 63 ? 1 : ($div + 62) / 63}]
        if {![dict exists $params PSU__CRL_APB__PL${n}_REF_CTRL__SRCSEL]} { dict set params PSU__CRL_APB__PL${n}_REF_CTRL__SRCSEL IOPLL }
        if {![dict exists $params PSU__FPGA_PL${n}_ENABLE]} { dict set params PSU__FPGA_PL${n}_ENABLE 0 }
      }
    } elseif {$ps} {
      for {set n 0} {$n < 4} {incr n} {
        set act [::standin::ps7_act_fclk $obj $n]
        set div [expr {round(1000.0 / $act)}]
        dict set params PCW_ACT_FPGA${n}_PERIPHERAL_FREQMHZ $act
        dict set params PCW_FCLK${n}_PERIPHERAL_DIVISOR0 [expr {$div <= 63 ? $div : 63}]
        dict set params PCW_FCLK${n}_PERIPHERAL_DIVISOR1 [expr {$div <= 63 ? 1 : ($div + 62) / 63}]
        if {![dict exists $params PCW_FCLK${n}_PERIPHERAL_CLKSRC]} { dict set params PCW_FCLK${n}_PERIPHERAL_CLKSRC {IO PLL} }
        dict set params PCW_FPGA_FCLK${n}_ENABLE [expr {[dict exists $params PCW_EN_CLK${n}_PORT] ? [dict get $params PCW_EN_CLK${n}_PORT] : 0}]
      }
    }
    dict for {k v} $params { puts $f "        <PARAMETER NAME=\"[::standin::xml $k]\" VALUE=\"[::standin::xml $v]\"/>" }
    puts $f "      </PARAMETERS>\n      <PORTS/>\n      <BUSINTERFACES>"
    if {$ps} {
      puts $f "        <BUSINTERFACE BUSNAME=\"${cell}_$master_pin\" NAME=\"$master_pin\" TYPE=\"MASTER\" VLNV=\"xilinx.com:interface:aximm:1.0\"/>"
    }
    foreach s $slaves {
      lassign $s scell spin
      if {$scell eq $cell} {
        puts $f "        <BUSINTERFACE BUSNAME=\"[::standin::xml ${cell}_$spin]\" NAME=\"[::standin::xml $spin]\" TYPE=\"SLAVE\" VLNV=\"xilinx.com:interface:aximm:1.0\"/>"
      }
    }
    puts $f "      </BUSINTERFACES>"
    if {$ps} {
      puts $f "      <MEMORYMAP>"
      set i 0
      foreach s $slaves {
        lassign $s scell spin
        set base [expr {$base0 + $i * 0x10000}]
        puts $f [format {        <MEMRANGE ADDRESSBLOCK="Reg" BASENAME="C_BASEADDR" BASEVALUE="0x%08X" HIGHNAME="C_HIGHADDR" HIGHVALUE="0x%08X" INSTANCE="%s" IS_DATA="TRUE" IS_INSTRUCTION="TRUE" MASTERBUSINTERFACE="%s" MEMTYPE="REGISTER" SLAVEBUSINTERFACE="%s"/>} \
          $base [expr {$base + 0xFFFF}] [::standin::xml $scell] $master_pin [::standin::xml $spin]]
        incr i
      }
      puts $f "      </MEMORYMAP>"
    }
    puts $f "    </MODULE>"
  }
  puts $f "  </MODULES>\n</EDKSYSTEM>"
  close $f
}

# --- IP (the IP cache's generation run and the own-top project's read_ip). An IP is an object named
# after its module; its .xci says which Vivado wrote it (SWVERSION), and an IP from another version is
# locked until upgrade_ip, as in Vivado.
namespace eval ::standin { variable ips {} }
# The options each of these commands takes in Vivado (UG835), those taking a value marked with =; any
# other option is an error, as in Vivado, so a script kabe writes with a wrong option fails here too.
array set ::standin::options {
  create_ip {-vlnv= -module_name= -dir= -force -allow_hidden -provider= -vendor= -library= -name= -version= -quiet -verbose}
  read_ip {-quiet -verbose}
  read_vhdl {-library= -vhdl2008 -vhdl2019 -netlist -quiet -verbose}
  get_ips {-regexp -nocase -filter= -all -of_objects= -exclude_bd_ips -quiet -verbose}
  upgrade_ip {-srcset= -vlnv= -log= -quiet -verbose}
  synth_ip {-force -quiet -verbose}
  set_part {-quiet -verbose}
  get_projects {-regexp -nocase -filter= -of_objects= -quiet -verbose}
  get_ipdefs {-name -regexp -nocase -filter= -all -of_objects= -quiet -verbose}
  read_bd {-quiet -verbose}
  open_bd_design {-quiet -verbose}
  close_bd_design {-quiet -verbose}
  get_bd_designs {-regexp -nocase -filter= -of_objects= -quiet -verbose}
  create_bd_pin {-from= -to= -dir= -type= -intf_type= -quiet -verbose}
  create_bd_intf_pin {-vlnv= -mode= -quiet -verbose}
  create_bd_addr_seg {-range= -offset= -quiet -verbose}
  exclude_bd_addr_seg {-target_address_space= -quiet -verbose}
  get_bd_intf_nets {-regexp -hierarchical -filter= -boundary_type= -of_objects= -quiet -verbose}
  get_bd_nets {-regexp -hierarchical -filter= -boundary_type= -of_objects= -top -quiet -verbose}
  config_ip_cache {-use_project_cache -use_cache_location= -disable_cache -clear_output_repo -clear_local_cache
                   -import_from_project -report -purge -vlnv= -swver= -quiet -verbose}
}
proc ::standin::check_opts {cmd argv} {
  set known $::standin::options($cmd)
  for {set i 0} {$i < [llength $argv]} {incr i} {
    set a [lindex $argv $i]
    if {![string match -* $a] || [string is double -strict $a]} { continue }
    if {"$a=" in $known} { incr i; continue }
    if {$a ni $known} { error "STAND-IN $cmd: unknown option '$a' (Vivado's $cmd takes [join [string map {= {}} $known] {, }])" }
  }
}
proc set_part {args} { ::standin::check_opts set_part $args; ::standin::rec set_part {*}$args; ::standin::setprop $::standin::project PART [lindex [::standin::positional $args] 0] }
proc get_projects {args} { ::standin::check_opts get_projects $args; ::standin::rec get_projects {*}$args; return $::standin::project }
proc ::standin::xci_version {xci} {
  set f [open $xci]; set text [read $f]; close $f
  if {[regexp {"SWVERSION":\s*\[\s*\{\s*"value":\s*"([^"]+)"} $text -> v]} { return $v }
  if {[regexp {RUNTIME_PARAM.SWVERSION">([^<]+)<} $text -> v]} { return $v }
  return ""
}
proc create_ip {args} {
  ::standin::rec create_ip {*}$args
  ::standin::check_opts create_ip $args
  set name [::standin::opt $args -module_name]
  set vlnv [::standin::opt $args -vlnv]
  if {$vlnv eq ""} { set vlnv [join [list [::standin::opt $args -vendor] [::standin::opt $args -library] [::standin::opt $args -name] [::standin::opt $args -version]] :] }
  if {$name eq "" || [llength [split $vlnv :]] != 4} { error "STAND-IN create_ip: needs -module_name and a vlnv, got {$args}" }
  if {![::standin::ipdef_exists $vlnv]} { error "STAND-IN create_ip: IP $vlnv is not in the catalog" }
  set dir [file join [file normalize [::standin::opt $args -dir [pwd]]] $name]
  file mkdir $dir
  set xci [file join $dir $name.xci]
  set f [open $xci w]
  puts $f "{\"schema\": \"STAND-IN xci (not Vivado's)\", \"ip_inst\": {\"xci_name\": \"$name\", \"component_reference\": \"$vlnv\", \"parameters\": {\"runtime_parameters\": {\"SWVERSION\": \[ { \"value\": \"$::standin::version\" } \]}}}}"
  close $f
  ::standin::add_ip $name $xci
  return $name
}
proc ::standin::add_ip {name xci} {
  lappend ::standin::ips $name
  ::standin::setprop $name IP_FILE $xci
  set v [::standin::xci_version $xci]
  ::standin::setprop $name SW_VERSION $v
  ::standin::setprop $name IS_LOCKED [expr {$v ne "" && $v ne $::standin::version}]
  ::standin::add_file $xci
}
proc read_ip {args} {
  ::standin::rec read_ip {*}$args
  ::standin::check_opts read_ip $args
  foreach x [::standin::positional $args] {
    if {![file exists $x]} { error "STAND-IN read_ip: $x does not exist" }
    ::standin::add_ip [file rootname [file tail $x]] [file normalize $x]
  }
}
proc get_ips {args} {
  ::standin::rec get_ips {*}$args
  ::standin::check_opts get_ips $args
  set pats [::standin::positional $args]
  if {![llength $pats]} { set pats * }
  set out {}
  foreach ip $::standin::ips { foreach p $pats { if {[string match $p $ip] && $ip ni $out} { lappend out $ip } } }
  if {![llength $out] && "-quiet" ni $args && [llength [::standin::positional $args]]} { error "STAND-IN get_ips: no IP matches $pats" }
  return $out
}
proc upgrade_ip {args} {
  ::standin::rec upgrade_ip {*}$args
  ::standin::check_opts upgrade_ip $args
  foreach ip [concat {*}[::standin::positional $args]] {
    ::standin::setprop $ip IS_LOCKED 0
    ::standin::setprop $ip SW_VERSION $::standin::version
    # Vivado writes the upgraded IP back to its .xci (the version it was made with is now this one's)
    set xci [::standin::prop $ip IP_FILE]
    if {$::standin::mode eq "run" && $xci ne "" && [file exists $xci]} {
      set f [open $xci]; set text [read $f]; close $f
      regsub {("SWVERSION":\s*\[\s*\{\s*"value":\s*")[^"]+(")} $text "\\1$::standin::version\\2" text
      regsub {(RUNTIME_PARAM.SWVERSION">)[^<]+(<)} $text "\\1$::standin::version\\2" text
      set f [open $xci w]; puts -nonewline $f $text; close $f
    }
  }
}
proc ::standin::ip_products {ip what} {
  if {[::standin::prop $ip IS_LOCKED 0]} { error "STAND-IN $what: IP $ip is locked (made by Vivado [::standin::prop $ip SW_VERSION]); upgrade_ip first" }
  set dir [file dirname [::standin::prop $ip IP_FILE]]
  return $dir
}
proc synth_ip {args} {
  ::standin::rec synth_ip {*}$args
  ::standin::check_opts synth_ip $args
  foreach ip [concat {*}[::standin::positional $args]] {
    set dir [::standin::ip_products $ip synth_ip]
    if {$::standin::mode ne "run"} { continue }
    set f [open [file join $dir $ip.dcp] w]; puts $f "STAND-IN checkpoint of IP $ip (not Vivado's)"; close $f
  }
}
# the IP catalog: every xilinx.com IP (the stand-in cannot know which exist), and the IPs packaged
# (component.xml) under the project's ip_repo_paths
proc ::standin::ipdef_exists {vlnv} {
  if {[string match xilinx.com:* $vlnv]} { return 1 }
  lassign [split $vlnv :] v l n ver
  foreach repo [::standin::prop $::standin::project IP_REPO_PATHS {}] {
    foreach comp [glob -nocomplain -directory $repo -- */component.xml component.xml */*/component.xml] {
      set f [open $comp]; set text [read $f]; close $f
      if {[regexp "<spirit:vendor>$v</spirit:vendor>\\s*<spirit:library>$l</spirit:library>\\s*<spirit:name>$n</spirit:name>\\s*<spirit:version>$ver</spirit:version>" $text]} { return 1 }
    }
  }
  return 0
}
proc get_ipdefs {args} {
  ::standin::rec get_ipdefs {*}$args
  ::standin::check_opts get_ipdefs $args
  set out {}
  foreach v [::standin::positional $args] { if {[::standin::ipdef_exists $v]} { lappend out $v } }
  return $out
}
namespace eval ::common {}
proc common::send_gid_msg {args} {
  ::standin::rec send_gid_msg {*}$args
  set sev [::standin::opt $args -severity INFO]
  puts "$sev: \[[::standin::opt $args -ssname] [::standin::opt $args -id]\] [lindex $args end]"
}
proc common::send_msg_id {id sev msg} { ::standin::rec send_msg_id $id $sev $msg; puts "$sev: \[$id\] $msg" }
proc config_ip_cache {args} { ::standin::check_opts config_ip_cache $args; ::standin::rec config_ip_cache {*}$args }
proc read_bd {args} {
  ::standin::rec read_bd {*}$args
  ::standin::check_opts read_bd $args
  foreach f [::standin::positional $args] {
    if {![file exists $f]} { error "STAND-IN read_bd: $f does not exist" }
    ::standin::add_file $f
    # its cells: IP-XACT componentInstances (an XML .bd) or "components" with a vlnv (a JSON .bd)
    set fh [open $f]; set text [read $fh]; close $fh
    foreach {-> cell attrs} [regexp -all -inline {<spirit:instanceName>([^<]+)</spirit:instanceName>\s*<spirit:componentRef ([^>]*)/>} $text] {
      set vlnv {}
      foreach k {vendor library name version} { regexp "spirit:$k=\"(\[^\"\]*)\"" $attrs -> v; lappend vlnv $v }
      lappend ::standin::cells [list /$cell ip [join $vlnv :]]
      ::standin::rec BD_CELL $cell [join $vlnv :]
    }
    foreach {-> cell vlnv} [regexp -all -inline {"([A-Za-z0-9_]+)":\s*\{\s*"vlnv":\s*"([^"]+)"} $text] {
      lappend ::standin::cells [list /$cell ip $vlnv]
      ::standin::rec BD_CELL $cell $vlnv
    }
    # the block design's own IPs (ip/<cell>/<cell>.xci beside the .bd) come with it
    foreach x [glob -nocomplain -directory [file join [file dirname $f] ip] */*.xci] {
      ::standin::rec BD_IP [file rootname [file tail $x]] $x
    }
  }
}
proc open_bd_design {args} { ::standin::check_opts open_bd_design $args; ::standin::rec open_bd_design {*}$args; return [file rootname [file tail [lindex [::standin::positional $args] 0]]] }
proc close_bd_design {args} { ::standin::check_opts close_bd_design $args; ::standin::rec close_bd_design {*}$args }
proc get_bd_designs {args} { ::standin::check_opts get_bd_designs $args; ::standin::rec get_bd_designs {*}$args; return {} }
proc create_bd_pin {args} { ::standin::check_opts create_bd_pin $args; ::standin::rec create_bd_pin {*}$args; return /[lindex $args end] }
proc create_bd_intf_pin {args} { ::standin::check_opts create_bd_intf_pin $args; ::standin::rec create_bd_intf_pin {*}$args; return /[lindex $args end] }
proc create_bd_addr_seg {args} { ::standin::check_opts create_bd_addr_seg $args; ::standin::rec create_bd_addr_seg {*}$args }
proc exclude_bd_addr_seg {args} { ::standin::check_opts exclude_bd_addr_seg $args; ::standin::rec exclude_bd_addr_seg {*}$args }
proc get_bd_intf_nets {args} { ::standin::check_opts get_bd_intf_nets $args; ::standin::rec get_bd_intf_nets {*}$args; return [::standin::bd_obj {*}$args] }
proc get_bd_nets {args} { ::standin::check_opts get_bd_nets $args; ::standin::rec get_bd_nets {*}$args; return [::standin::bd_obj {*}$args] }

# Anything else that is not Tcl: an error naming it.
proc unknown {args} {
  error "STAND-IN Vivado: command '[lindex $args 0]' is not defined by tests/standin/vivado_commands.tcl (if Vivado has it, add it there)"
}
