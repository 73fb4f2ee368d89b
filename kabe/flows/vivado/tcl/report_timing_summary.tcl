# Sign-off timing of the routed design: setup, hold and pulse width, every clock, the worst paths
# per group with their logic levels, unconstrained endpoints listed (the gate fails on them).
file mkdir $::kabe(report_dir)
puts "kabe: reports -> $::kabe(report_dir)"
report_timing_summary -delay_type min_max -max_paths $::kabe(timing_max_paths) \
  -report_unconstrained -check_timing_verbose \
  -file [file join $::kabe(report_dir) timing_summary.rpt]
