# Logic-level distribution per clock: the stage-3 story (9 levels of LUT multiply at 7.39 ns) is
# exactly what this table shows at a glance.
report_design_analysis -logic_level_distribution -logic_level_dist_paths $::kabe(timing_max_paths) \
  -file [file join $::kabe(report_dir) logic_levels.rpt]
