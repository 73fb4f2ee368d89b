# STAND-IN for AVED's opt.post.tcl (kabe tests only; not AMD's): AVED sets PDI properties here
set_property bitstream.general.compress true [current_design]
