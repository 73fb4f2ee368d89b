// kabe_attn_divider: pipelined restoring divider, one quotient per clock.
//
//   quot = floor((num << PRE_SHIFT) / den)
//
// The caller guarantees quot < 2**Q_W (so the first partial remainder, (num << PRE_SHIFT) >> Q_W,
// is below den) and den > 0. One stage per quotient bit, each a compare-subtract of DEN_W + 1 bits;
// LATENCY = Q_W + 1 cycles (input register + Q_W stages). in_user travels alongside.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module kabe_attn_divider #(
    parameter NUM_W = 39,
    parameter DEN_W = 31,
    parameter Q_W = 25,
    parameter PRE_SHIFT = 17,
    parameter USER_W = 2
) (
    input  wire              clk,
    input  wire              rst,
    input  wire              in_valid,
    input  wire [NUM_W-1:0]  in_num,
    input  wire [DEN_W-1:0]  in_den,
    input  wire [USER_W-1:0] in_user,
    output wire              out_valid,
    output wire [Q_W-1:0]    out_quot,
    output wire [USER_W-1:0] out_user
);

localparam N_W = NUM_W + PRE_SHIFT;  // the shifted numerator
localparam R_W = DEN_W + 1;          // partial remainder (< 2 den)

wire [N_W-1:0] n_full = {in_num, {PRE_SHIFT{1'b0}}};
/* verilator lint_off UNUSEDSIGNAL */
wire [N_W-1:0] n_top  = n_full >> Q_W;  // < den by the caller's promise: only its low bits matter
/* verilator lint_on UNUSEDSIGNAL */

genvar s;
generate
    for (s = 0; s <= Q_W; s = s + 1) begin : stage
        /* verilator lint_off UNUSEDSIGNAL */  // the last stage's remainder and divisor
        reg [R_W-1:0]    rem;
        reg [Q_W-1:0]    nq;    // numerator bits still to bring down (top) / quotient bits (bottom)
        reg [DEN_W-1:0]  den;
        /* verilator lint_on UNUSEDSIGNAL */
        reg [USER_W-1:0] user;
        reg              valid;

        if (s == 0) begin : first
            always @(posedge clk) begin
                rem   <= n_top[R_W-1:0];
                nq    <= n_full[Q_W-1:0];
                den   <= in_den;
                user  <= in_user;
                valid <= in_valid;
                if (rst) begin
                    valid <= 1'b0;
                end
            end
        end else begin : step
            wire [R_W-1:0] t    = {stage[s-1].rem[R_W-2:0], stage[s-1].nq[Q_W-1]};
            wire [R_W:0]   diff = {1'b0, t} - {2'b0, stage[s-1].den};
            wire           ge   = !diff[R_W];
            always @(posedge clk) begin
                rem   <= ge ? diff[R_W-1:0] : t;
                nq    <= {stage[s-1].nq[Q_W-2:0], ge};
                den   <= stage[s-1].den;
                user  <= stage[s-1].user;
                valid <= stage[s-1].valid;
                if (rst) begin
                    valid <= 1'b0;
                end
            end
        end
    end
endgenerate

assign out_valid = stage[Q_W].valid;
assign out_quot  = stage[Q_W].nq;
assign out_user  = stage[Q_W].user;

endmodule

`resetall
