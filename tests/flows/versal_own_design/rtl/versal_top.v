// A plain top on a Versal part: a pin clock through a Versal clocking wizard (IP Tcl), a VHDL pulse
// generator on its output, one LED. No processing system instantiated, no AXI-Stream shell.
module versal_top (
    input  wire ref_clk_p,
    output wire led
);
    wire clk_250, locked;
    clk_wiz_v u_clk (.clk_in1(ref_clk_p), .clk_out1(clk_250), .locked(locked));
    pulse u_pulse (.clk(clk_250), .rst(~locked), .q(led));
endmodule
