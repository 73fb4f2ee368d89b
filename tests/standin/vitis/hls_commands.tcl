# STAND-IN for the Tcl commands of Vitis HLS / Vivado HLS (kabe tests; NOT AMD's tools).
# Each proc accepts only the options UG1399 ("Vitis HLS Command Reference") / UG902 (Vivado HLS)
# document and kabe uses, refuses anything else as the tools do (an error: the script stops, exit 1),
# and records the call in the file ::standin_record; the Python stand-in then writes the reports.
# ::standin_tool is vitis_hls or vivado_hls (open_solution -flow_target exists in Vitis HLS only).

proc standin_record {args} {
    set f [open $::standin_record a]
    puts $f [list {*}$args]
    close $f
}

proc standin_options {cmd argv flags valued {min_pos 0} {max_pos 1}} {
    set pos {}
    set opts [dict create]
    for {set i 0} {$i < [llength $argv]} {incr i} {
        set a [lindex $argv $i]
        if {$a in $flags} {
            dict set opts $a 1
        } elseif {$a in $valued} {
            incr i
            if {$i >= [llength $argv]} { error "ERROR: \[HLS 200-70\] $cmd: option $a needs a value" }
            dict set opts $a [lindex $argv $i]
        } elseif {[string index $a 0] eq "-"} {
            error "ERROR: \[HLS 200-70\] $cmd: unknown option '$a' (STAND-IN: kabe may use documented options only)"
        } else {
            lappend pos $a
        }
    }
    if {[llength $pos] < $min_pos || [llength $pos] > $max_pos} {
        error "ERROR: \[HLS 200-70\] $cmd: expects $min_pos..$max_pos argument(s), got '$pos'"
    }
    return [list $opts $pos]
}

proc open_project {args} {
    lassign [standin_options open_project $args {-reset} {} 1 1] o p
    standin_record open_project [lindex $p 0]
}
proc set_top {args} {
    lassign [standin_options set_top $args {} {} 1 1] o p
    standin_record set_top [lindex $p 0]
}
proc add_files {args} {
    lassign [standin_options add_files $args {-tb -blackbox} {-cflags -csimflags} 1 1] o p
    set file [lindex $p 0]
    if {![file exists $file]} { error "ERROR: \[HLS 200-40\] Cannot find source file $file" }
    standin_record add_files [expr {[dict exists $o -tb] ? "tb" : "syn"}] $file
}
proc open_solution {args} {
    set flags {-reset}
    set valued [expr {$::standin_tool eq "vitis_hls" ? {-flow_target} : {}}]
    lassign [standin_options open_solution $args $flags $valued 1 1] o p
    if {[dict exists $o -flow_target] && [dict get $o -flow_target] ni {vivado vitis}} {
        error "ERROR: \[HLS 200-70\] open_solution: -flow_target must be vivado or vitis"
    }
    standin_record open_solution [lindex $p 0] [expr {[dict exists $o -flow_target] ? [dict get $o -flow_target] : "vivado"}]
}
proc set_part {args} {
    lassign [standin_options set_part $args {} {-tool} 1 1] o p
    standin_record set_part [lindex $p 0]
}
proc create_clock {args} {
    lassign [standin_options create_clock $args {} {-period -name} 0 0] o p
    if {![dict exists $o -period]} { error "ERROR: \[HLS 200-70\] create_clock: -period is required" }
    standin_record create_clock [dict get $o -period]
}
proc csim_design {args} {
    lassign [standin_options csim_design $args {-clean -O -setup} {-argv} 0 0] o p
    standin_record csim_design
}
proc csynth_design {args} {
    lassign [standin_options csynth_design $args {} {} 0 0] o p
    standin_record csynth_design
}
proc cosim_design {args} {
    lassign [standin_options cosim_design $args {-O} {-rtl -trace_level -tool} 0 0] o p
    standin_record cosim_design
}
proc export_design {args} {
    lassign [standin_options export_design $args {} {-format -output -rtl -flow -description -display_name -vendor -library -version -ipname} 0 0] o p
    set fmt [expr {[dict exists $o -format] ? [dict get $o -format] : "ip_catalog"}]
    if {$fmt ni {ip_catalog xo syn_dcp sysgen}} { error "ERROR: \[HLS 200-70\] export_design: unknown -format $fmt" }
    standin_record export_design $fmt [expr {[dict exists $o -output] ? [dict get $o -output] : ""}]
}
