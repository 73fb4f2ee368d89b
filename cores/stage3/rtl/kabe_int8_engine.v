// kabe_int8_engine: stage-3 INT8 matrix-vector engine, one per HP port.
//
// Frame (docs/streams.md): x = ROW_BYTES int8 values (captured at the head of the stream into a
// memory), then rows of ROW_BYTES int8 weights. Per row: sum(x[i] * w[i]) as int32 on m_axis,
// m_axis_tlast on the frame's last result. A frame that ends (tlast) inside a row emits the
// partial sum with tlast; one that ends inside x emits nothing. Either way the engine waits for
// the next frame's x. s_axis_tready is constant 1: the engine never stalls the DMA; results wait
// in the output FIFO and status_overflow (sticky) says one was dropped.
//
// 8 int8 multiplies per clock (one 64-bit beat). Pipeline, NAIVE = 0 (the document's fixed build):
//   1  x read: x_mem[beat] registered (memory output register); weights registered
//   2  operand registers (DSP48E1 A/B registers)
//   3  product registers (DSP48E1 M register), multiply forced into DSPs with use_dsp
//   4  8-input adder tree
//   5  row accumulator -> output FIFO
// NAIVE = 1 is the document's first build, which failed timing at 7.00 ns: x read
// combinationally (counter -> memory -> multiply in one cycle) and the 8x8 multiply built from
// LUTs (use_dsp = "no"; the Yosys target also passes -nodsp). Same results, 3 stages.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module kabe_int8_engine #(
    parameter ROW_BYTES  = 512,  // bytes per row and in x; a multiple of 8
    parameter FIFO_DEPTH = 32,   // result words buffered against m_axis backpressure
    parameter NAIVE      = 0     // 1: the timing-failing first build (see above)
) (
    input  wire        clk,
    input  wire        rst,

    input  wire [63:0] s_axis_tdata,
    input  wire        s_axis_tvalid,
    output wire        s_axis_tready,
    input  wire        s_axis_tlast,

    output wire [31:0] m_axis_tdata,
    output wire        m_axis_tvalid,
    input  wire        m_axis_tready,
    output wire        m_axis_tlast,

    output wire        status_overflow
);

localparam LANES      = 8;
localparam ROW_BEATS  = ROW_BYTES / LANES;
localparam BEAT_WIDTH = ROW_BEATS > 1 ? $clog2(ROW_BEATS) : 1;
localparam MUL_LAT    = NAIVE ? 1 : 3;   // input beat -> product register
localparam CTRL_WIDTH = 4;               // {valid, first, emit, tlast}

assign s_axis_tready = 1'b1;

// ---------------------------------------------------------------- frame state
reg                  in_rows_reg, in_rows_next;  // 0: capturing x, 1: rows
reg [BEAT_WIDTH-1:0] beat_reg, beat_next;        // beat within x or within the row

localparam integer LAST_BEAT = ROW_BEATS - 1;

wire beat_last = beat_reg == LAST_BEAT[BEAT_WIDTH-1:0];

always @* begin
    in_rows_next = in_rows_reg;
    beat_next    = beat_reg;

    if (s_axis_tvalid) begin
        beat_next = beat_last ? 0 : beat_reg + 1;
        if (beat_last) begin
            in_rows_next = 1'b1;
        end
        if (s_axis_tlast) begin
            in_rows_next = 1'b0;
            beat_next    = 0;
        end
    end
end

always @(posedge clk) begin
    in_rows_reg <= in_rows_next;
    beat_reg    <= beat_next;

    if (rst) begin
        in_rows_reg <= 1'b0;
        beat_reg    <= 0;
    end
end

// control travelling with a row beat: emit = the row (or the frame) ends on this beat
wire [CTRL_WIDTH-1:0] in_ctrl = {
    s_axis_tvalid && in_rows_reg,
    beat_reg == 0,
    beat_last || s_axis_tlast,
    s_axis_tlast
};

// ---------------------------------------------------------------- x memory
reg [63:0] x_mem [0:ROW_BEATS-1];

always @(posedge clk) begin
    if (s_axis_tvalid && !in_rows_reg) begin
        x_mem[beat_reg] <= s_axis_tdata;
    end
end

// ---------------------------------------------------------------- multiplies
reg [CTRL_WIDTH*MUL_LAT-1:0] ctrl_mul_reg;       // control delayed to the product registers
wire [CTRL_WIDTH-1:0]        ctrl_p = ctrl_mul_reg[CTRL_WIDTH*MUL_LAT-1 -: CTRL_WIDTH];
wire [16*LANES-1:0]          prod;                // product registers, lane i at [16*i +: 16]

genvar i;
generate
if (MUL_LAT > 1) begin : ctrl_shift
    always @(posedge clk) begin
        ctrl_mul_reg <= {ctrl_mul_reg[CTRL_WIDTH*(MUL_LAT-1)-1:0], in_ctrl};
        if (rst) begin
            ctrl_mul_reg <= 0;
        end
    end
end else begin : ctrl_direct
    always @(posedge clk) begin
        ctrl_mul_reg <= in_ctrl;
        if (rst) begin
            ctrl_mul_reg <= 0;
        end
    end
end

if (NAIVE) begin : naive
    // counter -> memory (asynchronous read) -> LUT multiply, all in one cycle
    wire [63:0] x_rd = x_mem[beat_reg];

    for (i = 0; i < LANES; i = i + 1) begin : lane
        (* use_dsp = "no" *)
        reg signed [15:0] p_reg;

        always @(posedge clk) begin
            p_reg <= $signed(x_rd[8*i +: 8]) * $signed(s_axis_tdata[8*i +: 8]);
        end

        assign prod[16*i +: 16] = p_reg;
    end
end else begin : piped
    // stage 1: the x read is registered on its own (the document's timing fix)
    reg [63:0] x_rd_reg;
    reg [63:0] w_rd_reg;

    always @(posedge clk) begin
        x_rd_reg <= x_mem[beat_reg];
        w_rd_reg <= s_axis_tdata;
    end

    for (i = 0; i < LANES; i = i + 1) begin : lane
        // stages 2 and 3: registered operands and product, one DSP48E1 per lane
        reg signed [7:0] a_reg;
        reg signed [7:0] b_reg;
        (* use_dsp = "yes" *)
        reg signed [15:0] p_reg;

        always @(posedge clk) begin
            a_reg <= x_rd_reg[8*i +: 8];
            b_reg <= w_rd_reg[8*i +: 8];
            p_reg <= a_reg * b_reg;
        end

        assign prod[16*i +: 16] = p_reg;
    end
end
endgenerate

// ---------------------------------------------------------------- adder tree
wire signed [16:0] sum1 [0:3];
wire signed [17:0] sum2 [0:1];
wire signed [18:0] sum3;

generate
for (i = 0; i < 4; i = i + 1) begin : tree1
    assign sum1[i] = $signed(prod[32*i +: 16]) + $signed(prod[32*i+16 +: 16]);
end
for (i = 0; i < 2; i = i + 1) begin : tree2
    assign sum2[i] = sum1[2*i] + sum1[2*i+1];
end
endgenerate

assign sum3 = sum2[0] + sum2[1];

reg signed [18:0]      sum_reg;
reg [CTRL_WIDTH-1:0]   ctrl_sum_reg;

always @(posedge clk) begin
    sum_reg      <= sum3;
    ctrl_sum_reg <= ctrl_p;

    if (rst) begin
        ctrl_sum_reg <= 0;
    end
end

// ---------------------------------------------------------------- row accumulator
wire sum_valid = ctrl_sum_reg[3];
wire sum_first = ctrl_sum_reg[2];
wire sum_emit  = ctrl_sum_reg[1];
wire sum_tlast = ctrl_sum_reg[0];

reg [31:0] acc_reg, acc_next;
reg        emit_reg, emit_next;
reg        tlast_reg, tlast_next;

always @* begin
    acc_next   = acc_reg;
    emit_next  = 1'b0;
    tlast_next = tlast_reg;

    if (sum_valid) begin
        acc_next   = (sum_first ? 32'd0 : acc_reg) + {{13{sum_reg[18]}}, sum_reg};
        emit_next  = sum_emit;
        tlast_next = sum_tlast;
    end
end

always @(posedge clk) begin
    acc_reg   <= acc_next;
    emit_reg  <= emit_next;
    tlast_reg <= tlast_next;

    if (rst) begin
        emit_reg  <= 1'b0;
        tlast_reg <= 1'b0;
    end
end

// ---------------------------------------------------------------- output FIFO
kabe_axis_fifo #(
    .DEPTH(FIFO_DEPTH),
    .WIDTH(32)
) result_fifo (
    .clk(clk),
    .rst(rst),
    .s_axis_tdata(acc_reg),
    .s_axis_tvalid(emit_reg),
    .s_axis_tready(),
    .s_axis_tlast(tlast_reg),
    .m_axis_tdata(m_axis_tdata),
    .m_axis_tvalid(m_axis_tvalid),
    .m_axis_tready(m_axis_tready),
    .m_axis_tlast(m_axis_tlast),
    .status_overflow(status_overflow),
    .status_full()
);

endmodule

`resetall
