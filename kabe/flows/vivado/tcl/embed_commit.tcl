# The commit inside the image (Hog's rule): USR_ACCESS carries ::kabe(usr_access) = bits 27..0 the
# commit's first 7 hex digits, bit 31 set when the tree was dirty. Read it back from a .bit with
# kabe.flows.vivado.project.read_usr_access, or on the board through USR_ACCESSE2 / the JTAG USERCODE.
#
# Zynq-7000: USR_ACCESS and the JTAG USERCODE (USERID) both carry it (hook on write_bitstream).
# Versal: the hook runs before write_device_image; BITSTREAM.CONFIG.USR_ACCESS is the property AVED's
# own write_device_image.pre.tcl sets on the V80 (to TIMESTAMP, which kabe never uses: a time stamp
# makes two builds of one commit differ). AVED's hook runs first, so the commit set here wins.
# USERID is left alone on Versal: no Versal flow kabe read sets it.
set_property BITSTREAM.CONFIG.USR_ACCESS $::kabe(usr_access) [current_design]
if {$::kabe(family) ne "versal"} {
  set_property BITSTREAM.CONFIG.USERID $::kabe(usr_access) [current_design]
  puts "kabe: USR_ACCESS = USERID = $::kabe(usr_access) (commit $::kabe(commit), dirty $::kabe(dirty))"
} else {
  puts "kabe: USR_ACCESS = $::kabe(usr_access) (commit $::kabe(commit), dirty $::kabe(dirty))"
}
