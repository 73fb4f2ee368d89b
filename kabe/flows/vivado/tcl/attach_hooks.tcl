# Attach kabe's impl_1 hooks (edalize adds none). The dispatcher sources the single-purpose hook
# files in order just before the image is written, when the design is routed and final: the
# bitstream's step on Zynq-7000 (WRITE_BITSTREAM), the device image's on Versal (WRITE_DEVICE_IMAGE).
set_property STEPS.$::kabe(image_step).TCL.PRE $::kabe(hook_image_pre) [get_runs impl_1]
puts "kabe: impl_1 STEPS.$::kabe(image_step).TCL.PRE = $::kabe(hook_image_pre)"
# The design's own hooks (design.yaml vivado.hooks): {run STEP PRE|POST file} each; its write_bitstream
# pre hook runs inside the dispatcher above, before kabe's reports.
if {[info exists ::kabe(design_hooks)]} {
  foreach _h $::kabe(design_hooks) {
    lassign $_h _run _step _when _file
    set_property STEPS.$_step.TCL.$_when $_file [get_runs $_run]
    puts "kabe: $_run STEPS.$_step.TCL.$_when = $_file"
  }
  catch {unset _h _run _step _when _file}
}
