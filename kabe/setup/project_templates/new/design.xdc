# The clock of design {name}: its top's port clk, at the default board's PL clock (FCLK0, 7.00 ns).
# The port must exist in the top: a create_clock on a missing port fails the gate ("no clock constrained").
create_clock -period 7.000 -name clk [get_ports clk]
