// kabe_axis_fifo: synchronous AXI-Stream FIFO with tlast that never stalls its writer, and a
// sticky overflow flag.
//
// kabe's engines hold their input tready at 1, so whatever feeds this FIFO cannot be stalled
// either: s_axis_tready is constant 1 and every cycle with s_axis_tvalid high is one word. A word
// that arrives while the FIFO is full (and not being read in the same cycle) is dropped, and
// status_overflow goes high and stays high until rst: results are never lost silently.
// status_full says the FIFO holds DEPTH words.
//
// Storage is distributed RAM with an asynchronous read (DEPTH is small: results are one word per
// row). DEPTH is rounded up to a power of two.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module kabe_axis_fifo #(
    parameter DEPTH = 32,
    parameter WIDTH = 32
) (
    input  wire             clk,
    input  wire             rst,

    input  wire [WIDTH-1:0] s_axis_tdata,
    input  wire             s_axis_tvalid,
    output wire             s_axis_tready,
    input  wire             s_axis_tlast,

    output wire [WIDTH-1:0] m_axis_tdata,
    output wire             m_axis_tvalid,
    input  wire             m_axis_tready,
    output wire             m_axis_tlast,

    output wire             status_overflow,
    output wire             status_full
);

// DEPTH is rounded up to a power of two (the pointers wrap naturally)
localparam ADDR_WIDTH = DEPTH > 1 ? $clog2(DEPTH) : 1;
localparam SIZE = 1 << ADDR_WIDTH;

// {tlast, tdata}
reg [WIDTH:0] mem [0:SIZE-1];

// one extra pointer bit tells full from empty
reg [ADDR_WIDTH:0] wr_ptr_reg, wr_ptr_next;
reg [ADDR_WIDTH:0] rd_ptr_reg, rd_ptr_next;
reg                overflow_reg, overflow_next;

// full and empty are registered, computed from the next pointers: the same values every cycle as
// comparing the registered pointers, without the comparator in front of the read address. Where the
// storage becomes block RAM, its address is rd_ptr_next, so that comparator sat on the critical path.
reg full, empty;
wire read  = m_axis_tready && !empty;
wire write = s_axis_tvalid && (!full || read);   // a full FIFO being read this cycle has room

assign s_axis_tready   = 1'b1;
assign m_axis_tvalid   = !empty;
assign {m_axis_tlast, m_axis_tdata} = mem[rd_ptr_reg[ADDR_WIDTH-1:0]];
assign status_overflow = overflow_reg;
assign status_full     = full;

always @* begin
    wr_ptr_next   = wr_ptr_reg;
    rd_ptr_next   = rd_ptr_reg;
    overflow_next = overflow_reg;

    if (write) begin
        wr_ptr_next = wr_ptr_reg + 1;
    end
    if (s_axis_tvalid && !write) begin
        overflow_next = 1'b1;
    end
    if (read) begin
        rd_ptr_next = rd_ptr_reg + 1;
    end
end

always @(posedge clk) begin
    wr_ptr_reg   <= wr_ptr_next;
    rd_ptr_reg   <= rd_ptr_next;
    overflow_reg <= overflow_next;
    full         <= wr_ptr_next == (rd_ptr_next ^ {1'b1, {ADDR_WIDTH{1'b0}}});
    empty        <= wr_ptr_next == rd_ptr_next;

    if (rst) begin
        wr_ptr_reg   <= 0;
        rd_ptr_reg   <= 0;
        overflow_reg <= 1'b0;
        full         <= 1'b0;
        empty        <= 1'b1;
    end
end

// storage: no reset
always @(posedge clk) begin
    if (write) begin
        mem[wr_ptr_reg[ADDR_WIDTH-1:0]] <= {s_axis_tlast, s_axis_tdata};
    end
end

endmodule

`resetall
