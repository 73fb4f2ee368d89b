# The design's own block designs: each .bd the core lists is read; every block design in the project
# (those read and those a write_bd_tcl script made) is validated, saved and generated; when the top is
# <bd>_wrapper and no source defines it, the wrapper is made and added; each .hwh is kept in
# ::kabe(hwh_dir), the only one also as ::kabe(hwh_dest) (beside the .bit: PYNQ's convention).
foreach _bd $::kabe(bd_files) { read_bd $_bd }
# A write_bd_tcl script reports its failures (wrong Vivado version, an IP missing from the catalog, a
# design name taken) with an ERROR message and `return <n>`, n > 0, which no caller sees: kabe checks it.
foreach _script $::kabe(bd_scripts) {
  set _rc [uplevel #0 [list source $_script]]
  if {[string is integer -strict $_rc] && $_rc != 0} {
    error "kabe: the block-design script $_script stopped early (it returned $_rc; its ERROR message is above)"
  }
}
foreach _name $::kabe(bd_names) {
  if {![llength [get_files -quiet $_name.bd]]} {
    error "kabe: the block-design script that sets design_name $_name made no block design $_name.bd"
  }
}
# The IPs inside a block design are generated with it, by Vivado: its own IP cache keeps their outputs,
# in one folder per (Vivado version, part) under kabe's IP cache (kabe.flows.vivado.ip_cache keeps the
# design's standalone IPs itself, keyed and reported per IP)
if {[llength [get_files -quiet *.bd]] && $::kabe(bd_ip_cache) ne ""} {
  file mkdir $::kabe(bd_ip_cache)
  config_ip_cache -use_cache_location $::kabe(bd_ip_cache)
  puts "kabe: block-design IPs cached by Vivado in $::kabe(bd_ip_cache)"
}
set _hwh {}
foreach _bd [get_files -quiet *.bd] {
  set _name [file rootname [file tail $_bd]]
  open_bd_design $_bd
  if {![llength [get_bd_cells -quiet]]} {
    error "kabe: block design $_name has no cells (its script or .bd made an empty design)"
  }
  validate_bd_design
  save_bd_design
  generate_target all [get_files $_bd]
  if {$::kabe(top) eq "${_name}_wrapper" && ![llength [get_files -quiet ${_name}_wrapper.*]]} {
    add_files -norecurse [make_wrapper -files [get_files $_bd] -top]
    puts "kabe: block design $_name wrapped as the top ${_name}_wrapper"
  }
  foreach _h [get_files -quiet -all -of_objects [get_files $_bd] *.hwh] {
    file copy -force $_h [file join $::kabe(hwh_dir) [file tail $_h]]
    lappend _hwh $_h
  }
  close_bd_design [current_bd_design]
  puts "kabe: block design $_name validated and generated"
}
if {[llength $_hwh] == 1} { file copy -force [lindex $_hwh 0] $::kabe(hwh_dest) }
catch {unset _bd _name _hwh _h _script _rc}
