# The commit inside the bitstream (Hog's rule): USR_ACCESS and the JTAG USERCODE (USERID) carry
# ::kabe(usr_access) = bits 27..0 the commit's first 7 hex digits, bit 31 set when the tree was
# dirty. Read it back from a .bit with kabe.flows.vivado.project.read_usr_access, or on the board through
# USR_ACCESSE2 / the JTAG USERCODE.
set_property BITSTREAM.CONFIG.USR_ACCESS $::kabe(usr_access) [current_design]
set_property BITSTREAM.CONFIG.USERID $::kabe(usr_access) [current_design]
puts "kabe: USR_ACCESS = USERID = $::kabe(usr_access) (commit $::kabe(commit), dirty $::kabe(dirty))"
