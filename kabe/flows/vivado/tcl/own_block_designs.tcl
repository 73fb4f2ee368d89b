# The design's own block designs: each .bd the core lists is read; every block design in the project
# (those read and those a write_bd_tcl script made) is validated, saved and generated; when the top is
# <bd>_wrapper and no source defines it, the wrapper is made and added; each .hwh is kept in
# ::kabe(hwh_dir), the only one also as ::kabe(hwh_dest) (beside the .bit: PYNQ's convention).
foreach _bd $::kabe(bd_files) { read_bd $_bd }
foreach _name $::kabe(bd_names) {
  if {![llength [get_files -quiet $_name.bd]]} {
    error "kabe: the block-design script that sets design_name $_name made no block design $_name.bd (it stopped early: see its messages above)"
  }
}
set _hwh {}
foreach _bd [get_files -quiet *.bd] {
  set _name [file rootname [file tail $_bd]]
  open_bd_design $_bd
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
catch {unset _bd _name _hwh _h}
