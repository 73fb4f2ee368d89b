// kabe_attn_score_ram: simple dual-port block RAM for the scores of one frame (one word per token,
// the 3 query heads side by side). Read LATENCY = 2 (BRAM read register + output register).

`resetall
`timescale 1ns / 1ps
`default_nettype none

module kabe_attn_score_ram #(
    parameter ADDR_W = 11,
    parameter DATA_W = 66
) (
    input  wire              clk,
    input  wire              we,
    input  wire [ADDR_W-1:0] waddr,
    input  wire [DATA_W-1:0] wdata,
    input  wire [ADDR_W-1:0] raddr,
    output reg  [DATA_W-1:0] rdata
);

(* ram_style = "block" *)
reg [DATA_W-1:0] mem [0:(1<<ADDR_W)-1];
reg [DATA_W-1:0] rd;

always @(posedge clk) begin
    if (we) begin
        mem[waddr] <= wdata;
    end
end

always @(posedge clk) begin
    rd    <= mem[raddr];
    rdata <= rd;
end

endmodule

`resetall
