# Vivado strategies and directives chosen in [tool.kabe] (vivado_synth_strategy, vivado_impl_strategy,
# vivado_<step>_directive), e.g. by a sweep variant (kabe/sweep). kabe_settings.tcl carries them as
# ::kabe(...); empty means Vivado's default. A strategy resets its run's step arguments, so the
# strategies are set before the directives.
foreach {key run prop} {
    synth_strategy   synth_1 strategy
    impl_strategy    impl_1  strategy
    synth_directive  synth_1 STEPS.SYNTH_DESIGN.ARGS.DIRECTIVE
    opt_directive    impl_1  STEPS.OPT_DESIGN.ARGS.DIRECTIVE
    place_directive  impl_1  STEPS.PLACE_DESIGN.ARGS.DIRECTIVE
    route_directive  impl_1  STEPS.ROUTE_DESIGN.ARGS.DIRECTIVE
} {
    if {[info exists ::kabe($key)] && $::kabe($key) ne ""} {
        set_property $prop $::kabe($key) [get_runs $run]
        puts "kabe: $run $prop = $::kabe($key)"
    }
}
