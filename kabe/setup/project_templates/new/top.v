// {top}: the skeleton `kabe new` writes. Replace the body with your design; keep the ports
// design.yaml's `streams:` names (clk, rst, then s_axis_* in and m_axis_* out).
// It adds up each frame's 32-bit words and sends the sum as one word when the frame's last word arrives.
`default_nettype none
module {top} (
    input  wire        clk,
    input  wire        rst,
    input  wire [31:0] s_axis_tdata,
    input  wire        s_axis_tvalid,
    output wire        s_axis_tready,
    input  wire        s_axis_tlast,
    output reg  [31:0] m_axis_tdata,
    output reg         m_axis_tvalid,
    input  wire        m_axis_tready,
    output reg         m_axis_tlast
);
    reg [31:0] sum;
    assign s_axis_tready = !m_axis_tvalid || m_axis_tready;  // wait while a sum is not taken

    always @(posedge clk) begin
        if (rst) begin
            sum <= 32'd0;
            m_axis_tvalid <= 1'b0;
            m_axis_tlast <= 1'b0;
            m_axis_tdata <= 32'd0;
        end else begin
            if (m_axis_tvalid && m_axis_tready)
                m_axis_tvalid <= 1'b0;
            if (s_axis_tvalid && s_axis_tready) begin
                if (s_axis_tlast) begin
                    m_axis_tdata <= sum + s_axis_tdata;
                    m_axis_tvalid <= 1'b1;
                    m_axis_tlast <= 1'b1;
                    sum <= 32'd0;
                end else begin
                    sum <= sum + s_axis_tdata;
                end
            end
        end
    end
endmodule
`default_nettype wire
