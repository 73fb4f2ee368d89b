# STAND-IN for AVED's place.pre.tcl (kabe tests only; not AMD's): AVED rewires the PMC IRQ here
puts "STAND-IN AVED place.pre.tcl"
