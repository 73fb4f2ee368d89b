# Attach kabe's impl_1 hooks (edalize adds none). The dispatcher sources the single-purpose hook
# files in order just before write_bitstream, when the design is routed and final.
set_property STEPS.WRITE_BITSTREAM.TCL.PRE $::kabe(hook_write_bitstream_pre) [get_runs impl_1]
puts "kabe: impl_1 STEPS.WRITE_BITSTREAM.TCL.PRE = $::kabe(hook_write_bitstream_pre)"
