# The gate's second source: Vivado's own answer, not kabe's reading of a report (like tsfpga's
# check_timing.tcl, but it decides nothing itself). The worst setup, hold, recovery and removal
# slack (get_timing_paths; recovery/removal are the **async_default** group's), whether any pin
# violates its pulse width (report_pulse_width), and how many clock pairs are unsafe
# (report_clock_interaction), written as <report_dir>/timing_verdict.json. kabe.rules.gate requires it
# to agree with the parsed report_timing_summary, or fails showing both.
proc ::kabe_worst_slack {args} {
  set paths [get_timing_paths -quiet -max_paths 1 -nworst 1 {*}$args]
  if {![llength $paths]} { return null }
  set s [get_property SLACK [lindex $paths 0]]
  # no constrained path of that kind: Vivado answers "" or inf, and JSON has neither
  if {![string is double -strict $s] || [string match -nocase "*inf*" $s] || [string match -nocase "*nan*" $s]} {
    return null
  }
  return $s
}
set _async [get_path_groups -quiet {**async_default**}]
set _other [get_path_groups -quiet -filter {NAME != "**async_default**"}]
set _v [dict create]
dict set _v wns_ns [::kabe_worst_slack -delay_type max]
dict set _v whs_ns [::kabe_worst_slack -delay_type min]
foreach {_key _type _groups} [list setup_ns max $_other hold_ns min $_other \
                                   recovery_ns max $_async removal_ns min $_async] {
  if {[llength $_groups]} {
    dict set _v $_key [::kabe_worst_slack -delay_type $_type -group $_groups]
  } else {
    dict set _v $_key null
  }
}
set _pw [string trim [report_pulse_width -all_violators -no_header -return_string]]
dict set _v pulse_width_violated [expr {$_pw ne "" ? "true" : "false"}]
dict set _v unsafe_clock_interactions \
  [regexp -all {\(unsafe\)} [report_clock_interaction -delay_type min_max -no_header -return_string]]
dict set _v clocks [llength [get_clocks -quiet]]

set _out [file join $::kabe(report_dir) timing_verdict.json]
set _f [open $_out.tmp w]
puts $_f "\{"
puts $_f "  \"schema\": \"kabe.vivado_timing_verdict/1\","
puts $_f "  \"vivado\": \"[version -short]\","
set _keys [dict keys $_v]
foreach _k $_keys {
  puts -nonewline $_f "  \"$_k\": [dict get $_v $_k]"
  puts $_f [expr {$_k eq [lindex $_keys end] ? "" : ","}]
}
puts $_f "\}"
close $_f
file rename -force $_out.tmp $_out
puts "kabe: Vivado's own timing verdict -> $_out"
unset _async _other _v _pw _out _f _keys _k _key _type _groups
rename ::kabe_worst_slack {}
