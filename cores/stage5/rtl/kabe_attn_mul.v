// kabe_attn_mul: one registered signed multiplier, shaped to become one DSP48E1 (AREG/BREG, MREG,
// PREG). LATENCY = 3 cycles from a/b to p. No reset: the engine carries valid beside it.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module kabe_attn_mul #(
    parameter AW = 19,  // signed; <= 25 for one DSP48E1
    parameter BW = 8    // signed; <= 18
) (
    input  wire                    clk,
    input  wire signed [AW-1:0]    a,
    input  wire signed [BW-1:0]    b,
    output wire signed [AW+BW-1:0] p
);

reg signed [AW-1:0]    a_reg;
reg signed [BW-1:0]    b_reg;
reg signed [AW+BW-1:0] m_reg;
reg signed [AW+BW-1:0] p_reg;

always @(posedge clk) begin
    a_reg <= a;
    b_reg <= b;
    m_reg <= a_reg * b_reg;
    p_reg <= m_reg;
end

assign p = p_reg;

endmodule

`resetall
