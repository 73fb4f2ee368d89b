// kabe_attention_engine: stage 5, one decode step of attention for one KV head, one HP port.
//
// Frame (docs/streams.md, "attention engine (stage 5)"; model kabe.model.attention), 8-byte beats:
//   header (1 beat): n (uint32, 1..NMAX), c (uint16), shift (uint8), 0
//   q (24 beats):    3 query heads x 64 int8
//   K (8n beats):    n rows of 64 int8;   V (8n beats): n rows of 64 int8
// Result: 192 int32 words, o[h][j] Q8.16 in V's units, head-major; tlast on the 192nd.
//   s = q.k;  m = max s;  z = ((m - s) * c) >> shift;  p = EXP[z & 1023] >> (z >> 10);
//   L = sum p;  a = sum p v;  o = sign(a) * ((|a| << 17) / L + 1) >> 1
// s_axis_tready is constant 1: nothing here ever stalls; every pipeline is a fixed-latency chain
// carrying its own valid, so tvalid gaps pass through unchanged.
//
// Datapath: 24 DSP multipliers (3 query heads x 8 lanes) shared by the two phases:
//   K phase: A = q[h][8b + lane] (from a per-head LUTRAM), B = k byte; per head an 8-term adder tree
//            (generated, scripts/gen_adder_tree.py) and a row accumulator give s[h,t], written to
//            the score BRAM (3 x 22 bits per token) while the running max m[h] is kept.
//   V phase: A = p[h,t] (18-bit weight), B = v byte; per head and lane an accumulator in LUTRAM
//            (8 entries x 40 bits, one per beat of a row): a += p v, the first token overwrites.
// The V rows are delayed by V_DELAY cycles so that p[h,t] (score BRAM read, m - s, x c in a DSP,
// shift, exp ROM, shift) is ready when row t reaches the multipliers: the K phase has finished
// and m is final by then. Three more DSPs do (m - s) x c: 27 DSP48E1 per port.
// After the last V beat the drain reads the 192 accumulators through the LUTRAM read port
// (one per cycle) into a pipelined divider (0 DSP) and the output FIFO.
//
// Malformed frames (n out of range, tlast before the end, V rows arriving while the drain still
// reads the previous frame's accumulators) give no results and count in stat_invalid.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module kabe_attention_engine #(
    parameter NMAX = 2048,       // largest context length (power of two, <= 8192)
    parameter FIFO_DEPTH = 256   // output FIFO words (>= 192: one frame of results)
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

    output wire [31:0] stat_invalid,
    output wire        stat_overflow
);

localparam TW = $clog2(NMAX);     // token index bits
localparam GROUP = 3;             // query heads per KV head
localparam LANES = 8;             // bytes per beat
localparam S_W = 22;              // score: |q.k| <= 2^20
localparam D_W = 21;              // m - s < 2^21
localparam P_W = 18;              // weight p <= 2^17
localparam A_W = 40;              // sum p v: |a| <= 2^37 at n = 8192
localparam L_W = 31;              // sum p <= 2^30 at n = 8192
localparam MA_W = P_W + 1;        // multiplier A port: p (unsigned) or q (int8), signed
localparam PROD_W = MA_W + 8;
localparam Q_W = 25;              // divider quotient bits: (|a| << 17) / L <= 2^24
localparam TREE_W = 16 + 3;       // adder tree sum of 8 int16 products
localparam TAG_W = 16;            // adder tree sideband: {t (13 bits), b (3 bits)}

// p pipeline: cycles from the V row's first beat at the issue stage to p_hold
localparam TRIG_DELAY = 8;        // wait for the last K row's score and the final max
localparam P_LATENCY = 12;        // score RAM (2), m - s (1), x c (3), shift (2), split (1), ROM (2), shift (1)
localparam V_DELAY = TRIG_DELAY + P_LATENCY + 1;  // V beats reach the multipliers one cycle after p_hold

generate
    if (NMAX < 2 || NMAX > 8192 || (1 << TW) != NMAX) begin : bad_nmax
        nmax_must_be_a_power_of_two_up_to_8192 bad();
    end
    if (FIFO_DEPTH < 192) begin : bad_fifo
        fifo_depth_must_hold_one_frame_of_192_results bad();
    end
endgenerate

assign s_axis_tready = 1'b1;

// ---------------------------------------------------------------------------------------------
// S0: input register
// ---------------------------------------------------------------------------------------------

reg        in_valid_reg;
reg [63:0] in_data_reg;
reg        in_last_reg;

always @(posedge clk) begin
    in_valid_reg <= s_axis_tvalid;
    in_data_reg  <= s_axis_tdata;
    in_last_reg  <= s_axis_tlast;
    if (rst) begin
        in_valid_reg <= 1'b0;
    end
end

// ---------------------------------------------------------------------------------------------
// parser: header, q, K rows, V rows; issue stage registers
// ---------------------------------------------------------------------------------------------

localparam [2:0] ST_HDR = 3'd0, ST_Q = 3'd1, ST_K = 3'd2, ST_V = 3'd3, ST_SKIP = 3'd4;

reg [2:0]    state_reg;
reg [2:0]    beat_reg;          // beat within a 64-byte row
reg [1:0]    qhead_reg;         // q head being captured
reg [TW-1:0] tok_reg;           // token index
reg [TW-1:0] last_tok_reg;      // n - 1
reg [15:0]   hdr_c_reg;
reg [5:0]    hdr_shift_reg;
reg [31:0]   invalid_reg;
reg          v_pending_reg;     // last V beat issued, drain not started yet
reg          drain_busy_reg;

// issue stage (registered parser outputs)
reg          iss_k_reg, iss_v_reg, iss_trig_reg;
reg [2:0]    iss_beat_reg;
reg [TW-1:0] iss_tok_reg;
reg          iss_first_reg;     // token 0
reg          iss_vlast_reg;     // last beat of the last V row
reg [63:0]   iss_data_reg;
reg [15:0]   act_c_reg;         // the scale in use by the p pipeline (copied at the first V row)
reg [5:0]    act_shift_reg;

wire [31:0] hdr_n = in_data_reg[31:0];
wire        hdr_ok = hdr_n != 32'd0 && hdr_n <= NMAX;
wire        row_end = beat_reg == 3'd7;
wire        tok_end = tok_reg == last_tok_reg;
wire        drain_conflict = v_pending_reg || drain_busy_reg;

reg invalid_inc;                // a malformed frame was seen (counted the cycle after)

// q capture: one LUTRAM per query head, 8 words of 64 bits (the 8 beats of its row)
wire q_we = in_valid_reg && state_reg == ST_Q;

always @(posedge clk) begin
    invalid_inc   <= 1'b0;
    iss_k_reg     <= 1'b0;
    iss_v_reg     <= 1'b0;
    iss_trig_reg  <= 1'b0;
    iss_beat_reg  <= beat_reg;
    iss_tok_reg   <= tok_reg;
    iss_first_reg <= tok_reg == {TW{1'b0}};
    iss_vlast_reg <= tok_end && row_end;
    iss_data_reg  <= in_data_reg;

    if (in_valid_reg) begin
        case (state_reg)
            ST_HDR: begin
                beat_reg  <= 3'd0;
                qhead_reg <= 2'd0;
                tok_reg   <= {TW{1'b0}};
                if (!hdr_ok || in_last_reg) begin
                    invalid_inc <= 1'b1;
                    state_reg <= in_last_reg ? ST_HDR : ST_SKIP;
                end else begin
                    /* verilator lint_off WIDTHTRUNC */
                    last_tok_reg  <= hdr_n - 1;
                    /* verilator lint_on WIDTHTRUNC */
                    hdr_c_reg     <= in_data_reg[47:32];
                    hdr_shift_reg <= in_data_reg[53:48];
                    state_reg     <= ST_Q;
                end
            end
            ST_Q: begin
                beat_reg <= beat_reg + 3'd1;
                if (row_end) begin
                    qhead_reg <= qhead_reg + 2'd1;
                    if (qhead_reg == 2'd2) begin
                        state_reg <= ST_K;
                    end
                end
                if (in_last_reg) begin
                    invalid_inc <= 1'b1;
                    state_reg <= ST_HDR;
                end
            end
            ST_K: begin
                iss_k_reg <= 1'b1;
                beat_reg  <= beat_reg + 3'd1;
                if (row_end) begin
                    tok_reg <= tok_end ? {TW{1'b0}} : tok_reg + 1'b1;
                    if (tok_end) begin
                        state_reg <= ST_V;
                    end
                end
                if (in_last_reg) begin
                    invalid_inc <= 1'b1;
                    state_reg <= ST_HDR;
                end
            end
            ST_V: begin
                if (tok_reg == {TW{1'b0}} && beat_reg == 3'd0 && drain_conflict) begin
                    // the accumulators still hold the previous frame's results: drop this frame
                    invalid_inc <= 1'b1;
                    state_reg <= in_last_reg ? ST_HDR : ST_SKIP;
                end else begin
                    iss_v_reg    <= 1'b1;
                    iss_trig_reg <= beat_reg == 3'd0;
                    if (tok_reg == {TW{1'b0}} && beat_reg == 3'd0) begin
                        act_c_reg     <= hdr_c_reg;
                        act_shift_reg <= hdr_shift_reg;
                    end
                    beat_reg <= beat_reg + 3'd1;
                    if (row_end) begin
                        tok_reg <= tok_reg + 1'b1;
                    end
                    if (row_end && tok_end) begin
                        state_reg <= ST_HDR;  // complete; the next beat is the next header
                    end else if (in_last_reg) begin
                        invalid_inc <= 1'b1;
                        state_reg <= ST_HDR;
                    end
                end
            end
            default: begin  // ST_SKIP: wait for the end of a rejected frame
                if (in_last_reg) begin
                    state_reg <= ST_HDR;
                end
            end
        endcase
    end

    if (invalid_inc && invalid_reg != 32'hFFFF_FFFF) begin
        invalid_reg <= invalid_reg + 32'd1;
    end

    if (rst) begin
        state_reg    <= ST_HDR;
        beat_reg     <= 3'd0;
        qhead_reg    <= 2'd0;
        tok_reg      <= {TW{1'b0}};
        invalid_reg  <= 32'd0;
        iss_k_reg    <= 1'b0;
        iss_v_reg    <= 1'b0;
        iss_trig_reg <= 1'b0;
        invalid_inc  <= 1'b0;
    end
end

assign stat_invalid = invalid_reg;

// q storage and read (at the issue stage, for the K beat being issued)
wire [63:0] q_word [0:GROUP-1];

genvar h, l;
generate
    for (h = 0; h < GROUP; h = h + 1) begin : qmem
        reg [63:0] mem [0:7];
        always @(posedge clk) begin
            if (q_we && qhead_reg == h) begin
                mem[beat_reg] <= in_data_reg;
            end
        end
        assign q_word[h] = mem[iss_beat_reg];
    end
endgenerate

// ---------------------------------------------------------------------------------------------
// V rows: delay line, so that each row meets its weight p at the multipliers
// ---------------------------------------------------------------------------------------------

wire          dv_valid;
wire [63:0]   dv_data;
wire [2:0]    dv_beat;
wire          dv_first;
wire          dv_vlast;

kabe_attn_delay #(
    .WIDTH(64 + 3 + 1 + 1),
    .DELAY(V_DELAY)
) v_delay_inst (
    .clk(clk),
    .rst(rst),
    .in_valid(iss_v_reg),
    .in_data({iss_data_reg, iss_beat_reg, iss_first_reg, iss_vlast_reg}),
    .out_valid(dv_valid),
    .out_data({dv_data, dv_beat, dv_first, dv_vlast})
);

// ---------------------------------------------------------------------------------------------
// multipliers: 3 heads x 8 lanes, A = q (K phase) or p (V phase), B = the beat's byte
// ---------------------------------------------------------------------------------------------

reg [P_W-1:0] p_hold [0:GROUP-1];  // weight of the V row now entering the multipliers

// tags beside the multipliers (3 cycles: A/B register, M, P)
reg          mt_valid [0:2];
reg          mt_isv   [0:2];
reg [2:0]    mt_beat  [0:2];
reg [TW-1:0] mt_tok   [0:2];
reg          mt_first [0:2];
reg          mt_vlast [0:2];

wire [PROD_W-1:0] prod [0:GROUP*LANES-1];

generate
    for (h = 0; h < GROUP; h = h + 1) begin : mh
        for (l = 0; l < LANES; l = l + 1) begin : ml
            wire [MA_W-1:0] a_in = dv_valid ? {1'b0, p_hold[h]}
                                            : {{(MA_W-8){q_word[h][8*l+7]}}, q_word[h][8*l +: 8]};
            wire [7:0]      b_in = dv_valid ? dv_data[8*l +: 8] : iss_data_reg[8*l +: 8];
            kabe_attn_mul #(
                .AW(MA_W),
                .BW(8)
            ) mul_inst (
                .clk(clk),
                .a(a_in),
                .b(b_in),
                .p(prod[h*LANES + l])
            );
        end
    end
endgenerate

integer k1, k2, k3, k4, k5;  // one loop variable per always block
always @(posedge clk) begin
    mt_valid[0] <= iss_k_reg || dv_valid;
    mt_isv[0]   <= dv_valid;
    mt_beat[0]  <= dv_valid ? dv_beat : iss_beat_reg;
    mt_tok[0]   <= iss_tok_reg;
    mt_first[0] <= dv_first;
    mt_vlast[0] <= dv_valid && dv_vlast;
    for (k1 = 1; k1 < 3; k1 = k1 + 1) begin
        mt_valid[k1] <= mt_valid[k1-1];
        mt_isv[k1]   <= mt_isv[k1-1];
        mt_beat[k1]  <= mt_beat[k1-1];
        mt_tok[k1]   <= mt_tok[k1-1];
        mt_first[k1] <= mt_first[k1-1];
        mt_vlast[k1] <= mt_vlast[k1-1];
    end
    if (rst) begin
        for (k1 = 0; k1 < 3; k1 = k1 + 1) begin
            mt_valid[k1] <= 1'b0;
            // The reset keeps mt_beat in flip-flops (an SRL16E has none): pr_beat addresses the 24 V
            // accumulators in LUTRAM, and an SRL's 1.5 ns clock-to-out made that read-add-write the
            // critical path (pre-route estimate -0.675 ns at 7.00 ns).
            mt_beat[k1]  <= 3'd0;
        end
    end
end

// products: mt_*[0] sits beside the A/B registers, [1] beside M, [2] beside the P register
wire          pr_valid = mt_valid[2];
wire          pr_isv   = mt_isv[2];
wire [2:0]    pr_beat  = mt_beat[2];
wire [TW-1:0] pr_tok   = mt_tok[2];
wire          pr_first = mt_first[2];
wire          pr_vlast = mt_vlast[2];

// ---------------------------------------------------------------------------------------------
// K phase: adder trees, row accumulators, score BRAM, running max
// ---------------------------------------------------------------------------------------------

wire [TREE_W-1:0] tree_sum [0:GROUP-1];
wire              tree_valid;
/* verilator lint_off UNUSEDSIGNAL */  // the tag's padding bits
wire [TAG_W-1:0]  tree_tag;
/* verilator lint_on UNUSEDSIGNAL */

generate
    for (h = 0; h < GROUP; h = h + 1) begin : kt
        wire [16*LANES-1:0] terms;
        for (l = 0; l < LANES; l = l + 1) begin : lane
            assign terms[16*l +: 16] = prod[h*LANES + l][15:0];  // int8 x int8 fits int16
        end
        /* verilator lint_off PINCONNECTEMPTY */
        if (h == 0) begin : with_tag
            kabe_attn_adder_tree tree_inst (
                .clk(clk),
                .rst(rst),
                .in_data(terms),
                .in_valid(pr_valid && !pr_isv),
                .in_user({{(TAG_W-3-TW){1'b0}}, pr_tok, pr_beat}),
                .out_sum(tree_sum[h]),
                .out_valid(tree_valid),
                .out_user(tree_tag)
            );
        end else begin : no_tag
            kabe_attn_adder_tree tree_inst (
                .clk(clk),
                .rst(rst),
                .in_data(terms),
                .in_valid(1'b0),
                .in_user({TAG_W{1'b0}}),
                .out_sum(tree_sum[h]),
                .out_valid(),
                .out_user()
            );
        end
        /* verilator lint_on PINCONNECTEMPTY */
    end
endgenerate

wire [2:0]    tree_beat = tree_tag[2:0];
wire [TW-1:0] tree_tok  = tree_tag[3 +: TW];

reg signed [S_W-1:0] row_acc [0:GROUP-1];
reg                  score_valid;
reg [TW-1:0]         score_tok;
reg signed [S_W-1:0] max_reg [0:GROUP-1];

always @(posedge clk) begin
    score_valid <= tree_valid && tree_beat == 3'd7;
    score_tok   <= tree_tok;
    for (k2 = 0; k2 < GROUP; k2 = k2 + 1) begin
        if (tree_valid) begin
            row_acc[k2] <= (tree_beat == 3'd0 ? {S_W{1'b0}} : row_acc[k2])
                          + {{(S_W-TREE_W){tree_sum[k2][TREE_W-1]}}, tree_sum[k2]};
        end
        if (score_valid && (score_tok == {TW{1'b0}} || row_acc[k2] > max_reg[k2])) begin
            max_reg[k2] <= row_acc[k2];
        end
    end
    if (rst) begin
        score_valid <= 1'b0;
    end
end

// ---------------------------------------------------------------------------------------------
// p pipeline: p[h,t] = EXP[z & 1023] >> (z >> 10), z = ((m - s) * c) >> shift
// ---------------------------------------------------------------------------------------------

wire          tp_valid;
wire [TW-1:0] tp_tok;
wire          tp_first;

kabe_attn_delay #(
    .WIDTH(TW + 1),
    .DELAY(TRIG_DELAY)
) trig_delay_inst (
    .clk(clk),
    .rst(rst),
    .in_valid(iss_trig_reg),
    .in_data({iss_tok_reg, iss_first_reg}),
    .out_valid(tp_valid),
    .out_data({tp_tok, tp_first})
);

wire [GROUP*S_W-1:0] score_rd;

kabe_attn_score_ram #(
    .ADDR_W(TW),
    .DATA_W(GROUP*S_W)
) score_ram_inst (
    .clk(clk),
    .we(score_valid),
    .waddr(score_tok),
    .wdata({row_acc[2], row_acc[1], row_acc[0]}),
    .raddr(tp_tok),
    .rdata(score_rd)
);

// tags of the p pipeline: index = cycles after tp (tag[c] describes the data registered c cycles on)
reg pt_valid [1:P_LATENCY];
reg pt_first [1:P_LATENCY];

always @(posedge clk) begin
    pt_valid[1] <= tp_valid;
    pt_first[1] <= tp_first;
    for (k3 = 2; k3 <= P_LATENCY; k3 = k3 + 1) begin
        pt_valid[k3] <= pt_valid[k3-1];
        pt_first[k3] <= pt_first[k3-1];
    end
    if (rst) begin
        for (k3 = 1; k3 <= P_LATENCY; k3 = k3 + 1) begin
            pt_valid[k3] <= 1'b0;
        end
    end
end

reg  [L_W-1:0] sum_p [0:GROUP-1];

generate
    for (h = 0; h < GROUP; h = h + 1) begin : pp
        // cycle 3: d = m - s (score_rd is valid at cycle 2)
        reg [D_W-1:0] d_reg;
        wire signed [S_W-1:0] s_rd = score_rd[S_W*h +: S_W];
        /* verilator lint_off UNUSEDSIGNAL */  // m - s < 2^21 and y < 2^37: the top bits are 0
        wire signed [S_W:0]   d_full = {max_reg[h][S_W-1], max_reg[h]} - {s_rd[S_W-1], s_rd};
        always @(posedge clk) begin
            d_reg <= d_full[D_W-1:0];
        end
        // cycles 4..6: y = d * c in a DSP
        wire signed [D_W+17:0] y_full;
        kabe_attn_mul #(
            .AW(D_W + 1),
            .BW(17)
        ) scale_mul_inst (
            .clk(clk),
            .a({1'b0, d_reg}),
            .b({1'b0, act_c_reg}),
            .p(y_full)
        );
        /* verilator lint_on UNUSEDSIGNAL */
        wire [D_W+15:0] y = y_full[D_W+15:0];  // < 2^37
        // cycles 7, 8: z = y >> shift (coarse, then fine)
        reg [D_W+15:0] y1_reg, z_reg;
        always @(posedge clk) begin
            y1_reg <= y >> {act_shift_reg[5:4], 4'b0000};
            z_reg  <= y1_reg >> act_shift_reg[3:0];
        end
        // cycle 9: split into ROM address (fraction) and shift (integer part, 18+ means p = 0)
        reg [9:0] f_reg;
        reg [4:0] i_reg [9:11];
        reg       zero_reg [9:11];
        always @(posedge clk) begin
            f_reg       <= z_reg[9:0];
            i_reg[9]    <= z_reg[14:10];
            zero_reg[9] <= z_reg[D_W+15:10] >= 18;
            i_reg[10]    <= i_reg[9];
            zero_reg[10] <= zero_reg[9];
            i_reg[11]    <= i_reg[10];
            zero_reg[11] <= zero_reg[10];
        end
        // cycles 10, 11: exp ROM (generated, scripts/gen_exp_table.py)
        wire [P_W-1:0] e_rd;
        kabe_attn_exp_rom exp_rom_inst (
            .clk(clk),
            .addr(f_reg),
            .data(e_rd)
        );
        // cycle 12: p
        reg [P_W-1:0] p_reg;
        always @(posedge clk) begin
            p_reg <= zero_reg[11] ? {P_W{1'b0}} : e_rd >> i_reg[11];
        end

        // p_hold and the softmax denominator
        always @(posedge clk) begin
            if (pt_valid[P_LATENCY]) begin
                p_hold[h] <= p_reg;
                sum_p[h]  <= (pt_first[P_LATENCY] ? {L_W{1'b0}} : sum_p[h]) + {{(L_W-P_W){1'b0}}, p_reg};
            end
        end
    end
endgenerate

// ---------------------------------------------------------------------------------------------
// V phase: per head and lane, a += p v in LUTRAM (8 entries: one per beat of a row)
// ---------------------------------------------------------------------------------------------

reg          acc_valid;
reg [2:0]    acc_beat;
reg          acc_vlast;
reg [7:0]    drain_idx;          // 0..191: head (7:6), beat (5:3), lane (2:0)
// Two read ports, not one muxed address: the accumulate path (pr_beat -> LUTRAM -> adder) then has
// no drain_busy -> address mux in front of it (it was the design's critical path; RAM32M has the ports).
wire [A_W-1:0] acc_rd [0:GROUP*LANES-1];    // the row being accumulated, at pr_beat
wire [A_W-1:0] drain_rd [0:GROUP*LANES-1];  // the accumulator being drained, at drain_idx's beat

always @(posedge clk) begin
    acc_valid <= pr_valid && pr_isv;
    acc_beat  <= pr_beat;
    acc_vlast <= pr_vlast;
    if (rst) begin
        acc_valid <= 1'b0;
    end
end

generate
    for (h = 0; h < GROUP; h = h + 1) begin : vh
        for (l = 0; l < LANES; l = l + 1) begin : vl
            reg [A_W-1:0] mem [0:7];
            reg [A_W-1:0] sum_reg;
            wire [PROD_W-1:0] pv = prod[h*LANES + l];
            assign acc_rd[h*LANES + l] = mem[pr_beat];
            assign drain_rd[h*LANES + l] = mem[drain_idx[5:3]];
            always @(posedge clk) begin
                sum_reg <= (pr_first ? {A_W{1'b0}} : acc_rd[h*LANES + l])
                           + {{(A_W-PROD_W){pv[PROD_W-1]}}, pv};
                if (acc_valid) begin
                    mem[acc_beat] <= sum_reg;
                end
            end
        end
    end
endgenerate

// ---------------------------------------------------------------------------------------------
// drain: 192 accumulators -> |a| / L -> round -> output FIFO
// ---------------------------------------------------------------------------------------------

reg [L_W-1:0] den_reg [0:GROUP-1];

always @(posedge clk) begin
    if (iss_v_reg && iss_vlast_reg) begin
        v_pending_reg <= 1'b1;
    end
    if (acc_valid && acc_vlast) begin
        // the last row's write lands at this edge; read from the next cycle on
        v_pending_reg  <= 1'b0;
        drain_busy_reg <= 1'b1;
        drain_idx      <= 8'd0;
        for (k4 = 0; k4 < GROUP; k4 = k4 + 1) begin
            den_reg[k4] <= sum_p[k4];
        end
    end else if (drain_busy_reg) begin
        drain_idx <= drain_idx + 8'd1;
        if (drain_idx == 8'd191) begin
            drain_busy_reg <= 1'b0;
        end
    end
    if (rst) begin
        v_pending_reg  <= 1'b0;
        drain_busy_reg <= 1'b0;
        drain_idx      <= 8'd0;
    end
end

// DR1: lane select per head; DR2: head select, sign and magnitude
reg [A_W-1:0] dr1_val [0:GROUP-1];
reg [1:0]     dr1_head;
reg           dr1_valid, dr1_last;
reg [A_W-2:0] dr2_mag;
reg           dr2_neg, dr2_valid, dr2_last;
reg [L_W-1:0] dr2_den;

always @(posedge clk) begin
    for (k5 = 0; k5 < GROUP; k5 = k5 + 1) begin
        dr1_val[k5] <= drain_rd[k5*LANES + {29'd0, drain_idx[2:0]}];
    end
    dr1_head  <= drain_idx[7:6];
    dr1_valid <= drain_busy_reg;
    dr1_last  <= drain_idx == 8'd191;

    dr2_neg   <= dr1_val[dr1_head][A_W-1];
    /* verilator lint_off WIDTHTRUNC */
    dr2_mag   <= dr1_val[dr1_head][A_W-1] ? -dr1_val[dr1_head] : dr1_val[dr1_head];
    /* verilator lint_on WIDTHTRUNC */
    dr2_den   <= den_reg[dr1_head];
    dr2_valid <= dr1_valid;
    dr2_last  <= dr1_last;
    if (rst) begin
        dr1_valid <= 1'b0;
        dr2_valid <= 1'b0;
    end
end

wire           div_valid;
wire [Q_W-1:0] div_quot;
wire           div_neg, div_last;

kabe_attn_divider #(
    .NUM_W(A_W - 1),
    .DEN_W(L_W),
    .Q_W(Q_W),
    .PRE_SHIFT(17),
    .USER_W(2)
) divider_inst (
    .clk(clk),
    .rst(rst),
    .in_valid(dr2_valid),
    .in_num(dr2_mag),
    .in_den(dr2_den),
    .in_user({dr2_neg, dr2_last}),
    .out_valid(div_valid),
    .out_quot(div_quot),
    .out_user({div_neg, div_last})
);

// round half away from zero: o = (q2 + 1) >> 1, then the sign
wire [Q_W:0]  rounded = ({1'b0, div_quot} + 1'b1) >> 1;
reg  [31:0]   out_word;
reg           out_valid, out_last;

always @(posedge clk) begin
    out_word  <= div_neg ? -{{(32-Q_W-1){1'b0}}, rounded} : {{(32-Q_W-1){1'b0}}, rounded};
    out_valid <= div_valid;
    out_last  <= div_last;
    if (rst) begin
        out_valid <= 1'b0;
    end
end

/* verilator lint_off PINCONNECTEMPTY */
kabe_axis_fifo #(
    .DEPTH(FIFO_DEPTH),
    .WIDTH(32)
) fifo_inst (
    .clk(clk),
    .rst(rst),
    .s_axis_tdata(out_word),
    .s_axis_tvalid(out_valid),
    .s_axis_tready(),
    .s_axis_tlast(out_last),
    .m_axis_tdata(m_axis_tdata),
    .m_axis_tvalid(m_axis_tvalid),
    .m_axis_tready(m_axis_tready),
    .m_axis_tlast(m_axis_tlast),
    .status_overflow(stat_overflow),
    .status_full()
);
/* verilator lint_on PINCONNECTEMPTY */

endmodule

`resetall
