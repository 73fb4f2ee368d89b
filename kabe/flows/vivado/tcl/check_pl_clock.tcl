# The clock the design was meant to meet is the clock Vivado timed: the board's engine clock (the
# PS7's FCLK0 on Zynq-7000, AVED's clock wizard output on the V80), named ::kabe(clock_name) in the
# design's XDC, must exist with the XDC's period. Otherwise stop before the image is written.
set _clk [get_clocks -quiet $::kabe(clock_name)]
if {![llength $_clk]} {
  error "kabe: no clock $::kabe(clock_name) in the routed design; the board clock the XDC names is not the one the block design made"
}
set _period [get_property PERIOD $_clk]
if {abs($_period - $::kabe(period_ns)) > 0.001} {
  error "kabe: clock $::kabe(clock_name) has period $_period ns, the XDC says $::kabe(period_ns) ns"
}
puts "kabe: clock $::kabe(clock_name) period $_period ns matches the XDC"
unset _clk _period
