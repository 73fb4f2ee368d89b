# The hooks of a design's own top: ::kabe(hooks) is {run STEP PRE|POST file} per hook, the design's
# (design.yaml vivado.hooks) and kabe's dispatcher before write_bitstream (the reports, the Tcl second
# source for the gate, the commit in USR_ACCESS; the design's own write_bitstream pre hook runs inside it).
foreach _h $::kabe(hooks) {
  lassign $_h _run _step _when _file
  set_property STEPS.$_step.TCL.$_when $_file [get_runs $_run]
  puts "kabe: $_run STEPS.$_step.TCL.$_when = $_file"
}
catch {unset _h _run _step _when _file}
