# STAND-IN for AVED's write_device_image.pre.tcl (kabe tests only; not AMD's). AVED's writes the
# Logic-UUID into the UUID ROM and, last, sets USR_ACCESS to a time stamp; so does this one.
puts "STAND-IN AVED write_device_image.pre.tcl: Logic-UUID (stand-in)"
set_property BITSTREAM.CONFIG.USR_ACCESS TIMESTAMP [current_design]
