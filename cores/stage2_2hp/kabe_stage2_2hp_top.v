// kabe_stage2_2hp_top: stage 2, variant B. Two bandwidth probes, one per HP port, side by side:
// together they saturate DDR (docs/streams.md).

`resetall
`timescale 1ns / 1ps
`default_nettype none

module kabe_stage2_2hp_top #(
    parameter FIFO_DEPTH = 16
) (
    input  wire        clk,
    input  wire        rst,

    input  wire [63:0] s0_axis_tdata,
    input  wire        s0_axis_tvalid,
    output wire        s0_axis_tready,
    input  wire        s0_axis_tlast,

    output wire [63:0] m0_axis_tdata,
    output wire        m0_axis_tvalid,
    input  wire        m0_axis_tready,
    output wire        m0_axis_tlast,

    output wire [31:0] stat0_invalid,
    output wire        stat0_overflow,

    input  wire [63:0] s1_axis_tdata,
    input  wire        s1_axis_tvalid,
    output wire        s1_axis_tready,
    input  wire        s1_axis_tlast,

    output wire [63:0] m1_axis_tdata,
    output wire        m1_axis_tvalid,
    input  wire        m1_axis_tready,
    output wire        m1_axis_tlast,

    output wire [31:0] stat1_invalid,
    output wire        stat1_overflow
);

assign stat0_invalid = 32'd0;   // no invalid inputs exist for this design

kabe_probe #(
    .FIFO_DEPTH(FIFO_DEPTH)
) probe_0 (
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
    .status_overflow(stat0_overflow)
);

assign stat1_invalid = 32'd0;   // no invalid inputs exist for this design

kabe_probe #(
    .FIFO_DEPTH(FIFO_DEPTH)
) probe_1 (
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
    .status_overflow(stat1_overflow)
);

endmodule

`resetall
