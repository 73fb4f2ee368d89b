// kabe_attn_delay: a fixed delay of DELAY clock cycles (every cycle, not only valid ones), so the
// gaps of a stream are kept. Data has no reset (it maps to SRL shift registers); valid is reset.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module kabe_attn_delay #(
    parameter WIDTH = 8,
    parameter DELAY = 4   // >= 1
) (
    input  wire             clk,
    input  wire             rst,
    input  wire             in_valid,
    input  wire [WIDTH-1:0] in_data,
    output wire             out_valid,
    output wire [WIDTH-1:0] out_data
);

reg [WIDTH-1:0] data_pipe [0:DELAY-1];
reg [DELAY-1:0] valid_pipe;

integer i, j;  // one loop variable per always block
always @(posedge clk) begin
    data_pipe[0] <= in_data;
    for (j = 1; j < DELAY; j = j + 1) begin
        data_pipe[j] <= data_pipe[j-1];
    end
end

always @(posedge clk) begin
    valid_pipe[0] <= in_valid;
    for (i = 1; i < DELAY; i = i + 1) begin
        valid_pipe[i] <= valid_pipe[i-1];
    end
    if (rst) begin
        valid_pipe <= {DELAY{1'b0}};
    end
end

assign out_valid = valid_pipe[DELAY-1];
assign out_data  = data_pipe[DELAY-1];

endmodule

`resetall
