# impl_1 for a design's own top on a Versal part, in place of edalize's run Tcl (which launches
# impl_1 -to_step write_bitstream, a step Versal's runs do not have; kabe's V80 shell, tcl/versal_run.tcl,
# sources this file as its first step): Versal's last step writes the
# programmable device image (.pdi), not a .bit. kabe's hooks run before that step (the reports, the Tcl
# second source, the commit in USR_ACCESS), the design's own hooks where design.yaml puts them.
#   launch_runs impl_1 -to_step write_device_image
#   PROGRESS must be 100 %
#   <impl_1>/<top>.pdi -> ::kabe(pdi_dest)      (the .xsa with it follows: edalize's post_build hook)
if {[get_property PROGRESS [get_runs impl_1]] ne "100%"} {
  launch_runs impl_1 -to_step write_device_image -jobs $::kabe(jobs)
  wait_on_run impl_1
  puts "Device image generation completed"
}
if {[get_property PROGRESS [get_runs impl_1]] ne "100%"} {
  puts "ERROR: kabe: implementation and device image generation failed (impl_1 PROGRESS [get_property PROGRESS [get_runs impl_1]])"
  exit 1
}
set _pdi [file join [get_property DIRECTORY [get_runs impl_1]] [get_property top [current_fileset]].pdi]
if {![file exists $_pdi]} {
  puts "ERROR: kabe: impl_1 finished but wrote no $_pdi"
  exit 1
}
file copy -force $_pdi $::kabe(pdi_dest)
puts "kabe: device image $_pdi -> $::kabe(pdi_dest)"
unset _pdi
