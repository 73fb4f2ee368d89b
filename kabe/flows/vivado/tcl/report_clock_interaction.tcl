# Clock pairs and how they are timed; an unsafe crossing fails the gate.
report_clock_interaction -delay_type min_max -significant_digits 3 \
  -file [file join $::kabe(report_dir) clock_interaction.rpt]
