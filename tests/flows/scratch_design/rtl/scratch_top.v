// The top: board pins in, LEDs out; two clocking wizards (one from an .xci, one from IP Tcl), a VHDL
// blinker on each clock, and the block design's constant on the last LED.
module scratch_top (
    input  wire       clk,
    output wire [3:0] led
);
    wire clk_100, clk_50, locked_main, locked_aux;
    clk_main u_clk_main (.clk_in1(clk), .clk_out1(clk_100), .locked(locked_main));
    clk_aux  u_clk_aux  (.clk_in1(clk), .clk_out1(clk_50), .locked(locked_aux));
    blink #(.WIDTH(26)) u_blink_100 (.clk(clk_100), .rst(~locked_main), .q(led[0]));
    blink #(.WIDTH(25)) u_blink_50 (.clk(clk_50), .rst(~locked_aux), .q(led[1]));
    both_locked u_both (.a(locked_main), .b(locked_aux), .y(led[2]));
    scratch_bd_wrapper u_bd (.led_bd(led[3]));
endmodule
