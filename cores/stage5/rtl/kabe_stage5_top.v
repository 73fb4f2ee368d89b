// kabe_stage5_top: stage 5, the attention engine on two HP ports (each port serves its own KV
// heads: 3 query heads x 8 lanes x 2 ports = 48 multipliers, plus 2 x 3 for the softmax scale).
// Ports follow the top-level contract in docs/streams.md exactly (p = 0, 1).

`resetall
`timescale 1ns / 1ps
`default_nettype none

module kabe_stage5_top #(
    parameter NMAX = 2048,        // largest context length per frame (power of two, <= 8192)
    parameter FIFO_DEPTH = 256
) (
    input  wire        clk,
    input  wire        rst,

    // port 0: one HP port's DMA pair
    input  wire [63:0] s0_axis_tdata,
    input  wire        s0_axis_tvalid,
    output wire        s0_axis_tready,
    input  wire        s0_axis_tlast,

    output wire [31:0] m0_axis_tdata,
    output wire        m0_axis_tvalid,
    input  wire        m0_axis_tready,
    output wire        m0_axis_tlast,

    output wire [31:0] stat0_invalid,
    output wire        stat0_overflow,

    // port 1: one HP port's DMA pair
    input  wire [63:0] s1_axis_tdata,
    input  wire        s1_axis_tvalid,
    output wire        s1_axis_tready,
    input  wire        s1_axis_tlast,

    output wire [31:0] m1_axis_tdata,
    output wire        m1_axis_tvalid,
    input  wire        m1_axis_tready,
    output wire        m1_axis_tlast,

    output wire [31:0] stat1_invalid,
    output wire        stat1_overflow
);

kabe_attention_engine #(
    .NMAX(NMAX),
    .FIFO_DEPTH(FIFO_DEPTH)
) port0_inst (
    .clk(clk),
    .rst(rst),
    .s_axis_tdata(s0_axis_tdata),
    .s_axis_tvalid(s0_axis_tvalid),
    .s_axis_tready(s0_axis_tready),
    .s_axis_tlast(s0_axis_tlast),
    .m_axis_tdata(m0_axis_tdata),
    .m_axis_tvalid(m0_axis_tvalid),
    .m_axis_tready(m0_axis_tready),
    .m_axis_tlast(m0_axis_tlast),
    .stat_invalid(stat0_invalid),
    .stat_overflow(stat0_overflow)
);

kabe_attention_engine #(
    .NMAX(NMAX),
    .FIFO_DEPTH(FIFO_DEPTH)
) port1_inst (
    .clk(clk),
    .rst(rst),
    .s_axis_tdata(s1_axis_tdata),
    .s_axis_tvalid(s1_axis_tvalid),
    .s_axis_tready(s1_axis_tready),
    .s_axis_tlast(s1_axis_tlast),
    .m_axis_tdata(m1_axis_tdata),
    .m_axis_tvalid(m1_axis_tvalid),
    .m_axis_tready(m1_axis_tready),
    .m_axis_tlast(m1_axis_tlast),
    .stat_invalid(stat1_invalid),
    .stat_overflow(stat1_overflow)
);

endmodule

`resetall
