# Utilization of the implemented design: flat (the budget numbers) and per instance (by_instance).
report_utilization -file [file join $::kabe(report_dir) utilization.rpt]
report_utilization -hierarchical -hierarchical_depth 8 \
  -file [file join $::kabe(report_dir) utilization_hier.rpt]
