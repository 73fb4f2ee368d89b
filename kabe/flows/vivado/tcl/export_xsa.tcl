# The Vitis / PetaLinux hardware handoff of a Zynq build: a fixed platform with the bitstream inside
# (UG835 write_hw_platform -fixed -include_bit), written once impl_1 has written the bitstream. Run in
# its own Vivado process on the project after edalize's bitstream step (an EDAM post_build hook,
# kabe/flows/vivado/project.py). pynq.Overlay accepts such an .xsa in place of the .bit/.hwh pair.
# (Versal builds write their .xsa before synthesis, as AVED does: tcl/v80_aved_bd.tcl.)
if {[get_property PROGRESS [get_runs impl_1]] ne "100%"} {
  error "kabe: impl_1 has not finished (PROGRESS [get_property PROGRESS [get_runs impl_1]]); no bitstream to put in $::kabe(xsa_dest)"
}
write_hw_platform -fixed -include_bit -force $::kabe(xsa_dest)
puts "kabe: hardware platform with the bitstream -> $::kabe(xsa_dest)"
