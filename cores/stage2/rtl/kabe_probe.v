// kabe_probe: stage-2 bandwidth probe. An AXI-Stream sink that accepts every beat (tready is
// constant 1), throws the data away and reports, per frame (tlast), three 64-bit words:
//
//   beats   beats in the frame
//   bytes   8 x beats
//   cycles  clock cycles from the first beat's cycle to the last beat's cycle, inclusive
//           (equal to beats when tvalid was held high)
//
// with m_axis_tlast on the third (docs/streams.md). One FIFO entry holds one frame's report
// {cycles, beats}; a serializer turns it into the three words, so frames shorter than three beats
// back to back lose nothing. status_overflow is sticky: a report was dropped because the FIFO was
// full (the output held back for FIFO_DEPTH frames).

`resetall
`timescale 1ns / 1ps
`default_nettype none

module kabe_probe #(
    parameter FIFO_DEPTH = 16,
    parameter COUNT_WIDTH = 48     // <= 61: the bytes word is beats << 3
) (
    input  wire        clk,
    input  wire        rst,

    /* verilator lint_off UNUSEDSIGNAL */
    input  wire [63:0] s_axis_tdata,    // counted, never looked at
    /* verilator lint_on UNUSEDSIGNAL */
    input  wire        s_axis_tvalid,
    output wire        s_axis_tready,
    input  wire        s_axis_tlast,

    output wire [63:0] m_axis_tdata,
    output wire        m_axis_tvalid,
    input  wire        m_axis_tready,
    output wire        m_axis_tlast,

    output wire        status_overflow
);

localparam CW = COUNT_WIDTH;

reg          busy_reg, busy_next;    // between a frame's first beat and its tlast
reg [CW-1:0] beats_reg, beats_next;
reg [CW-1:0] cycles_reg, cycles_next;
reg          report_valid_reg, report_valid_next;
reg [CW-1:0] report_beats_reg, report_beats_next;
reg [CW-1:0] report_cycles_reg, report_cycles_next;
reg [1:0]    word_reg, word_next;    // which of the three output words is on m_axis

wire [2*CW-1:0] fifo_tdata;
wire            fifo_tvalid;
wire            fifo_tready;

wire [CW-1:0] out_beats  = fifo_tdata[CW-1:0];
wire [CW-1:0] out_cycles = fifo_tdata[2*CW-1:CW];

assign s_axis_tready = 1'b1;

always @* begin
    busy_next          = busy_reg;
    beats_next         = beats_reg;
    cycles_next        = cycles_reg;
    report_valid_next  = 1'b0;
    report_beats_next  = report_beats_reg;
    report_cycles_next = report_cycles_reg;

    // the counts including this cycle
    if (busy_reg) begin
        cycles_next = cycles_reg + 1;
        if (s_axis_tvalid) begin
            beats_next = beats_reg + 1;
        end
    end else if (s_axis_tvalid) begin
        busy_next   = 1'b1;
        cycles_next = 1;
        beats_next  = 1;
    end

    if (s_axis_tvalid && s_axis_tlast) begin
        busy_next          = 1'b0;
        report_valid_next  = 1'b1;
        report_beats_next  = beats_next;
        report_cycles_next = cycles_next;
    end
end

always @(posedge clk) begin
    busy_reg          <= busy_next;
    beats_reg         <= beats_next;
    cycles_reg        <= cycles_next;
    report_valid_reg  <= report_valid_next;
    report_beats_reg  <= report_beats_next;
    report_cycles_reg <= report_cycles_next;

    if (rst) begin
        busy_reg         <= 1'b0;
        beats_reg        <= 0;
        cycles_reg       <= 0;
        report_valid_reg <= 1'b0;
    end
end

kabe_axis_fifo #(
    .DEPTH(FIFO_DEPTH),
    .WIDTH(2*CW)
) report_fifo (
    .clk(clk),
    .rst(rst),
    .s_axis_tdata({report_cycles_reg, report_beats_reg}),
    .s_axis_tvalid(report_valid_reg),
    .s_axis_tready(),
    .s_axis_tlast(1'b1),
    .m_axis_tdata(fifo_tdata),
    .m_axis_tvalid(fifo_tvalid),
    .m_axis_tready(fifo_tready),
    .m_axis_tlast(),
    .status_overflow(status_overflow),
    .status_full()
);

// serializer: one report -> beats, bytes, cycles
always @* begin
    word_next = word_reg;
    if (fifo_tvalid && m_axis_tready) begin
        word_next = word_reg == 2'd2 ? 2'd0 : word_reg + 2'd1;
    end
end

always @(posedge clk) begin
    word_reg <= word_next;

    if (rst) begin
        word_reg <= 2'd0;
    end
end

assign fifo_tready   = m_axis_tready && word_reg == 2'd2;
assign m_axis_tvalid = fifo_tvalid;
assign m_axis_tlast  = word_reg == 2'd2;
assign m_axis_tdata  = word_reg == 2'd0 ? {{64-CW{1'b0}}, out_beats} :
                       word_reg == 2'd1 ? {{64-CW-3{1'b0}}, out_beats, 3'b000} :
                                          {{64-CW{1'b0}}, out_cycles};

endmodule

`resetall
