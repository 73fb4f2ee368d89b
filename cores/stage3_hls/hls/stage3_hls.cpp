// Stage 3's INT8 engine in C++ for Vitis HLS: x captured at the head of the stream, then one
// pipelined loop over every beat of every row (II=1: 8 multiplies per clock, as the RTL engine),
// one int32 result per row. Verified by C-simulation against the numpy model (design.yaml).
#include "stage3_hls.h"

static void int8_engine(hls::stream<beat_t>& s_axis, hls::stream<result_t>& m_axis, ap_uint<32> rows) {
    ap_int<8> x[ROW_BYTES];
#pragma HLS ARRAY_PARTITION variable=x cyclic factor=8

read_x:
    for (int i = 0; i < ROW_BEATS; i++) {
#pragma HLS PIPELINE II=1
        beat_t beat = s_axis.read();
        for (int k = 0; k < BEAT_BYTES; k++) {
#pragma HLS UNROLL
            x[i * BEAT_BYTES + k] = beat.range(8 * k + 7, 8 * k);
        }
    }

    ap_int<32> acc = 0;
    ap_uint<6> beat_no = 0;  // the beat within the row (ROW_BEATS = 64)
mac:
    for (ap_uint<40> n = 0; n < (ap_uint<40>)rows * ROW_BEATS; n++) {
#pragma HLS PIPELINE II=1
#pragma HLS LOOP_TRIPCOUNT min=64 max=4194240
        beat_t beat = s_axis.read();
        ap_int<19> sum = 0;  // 8 products of int8 x int8: |sum| <= 8 * 2^14
        for (int k = 0; k < BEAT_BYTES; k++) {
#pragma HLS UNROLL
            ap_int<8> w = beat.range(8 * k + 7, 8 * k);
            ap_int<16> p = w * x[beat_no * BEAT_BYTES + k];
#pragma HLS BIND_OP variable=p op=mul impl=dsp
            sum += p;
        }
        ap_int<32> total = acc + sum;
        if (beat_no == ROW_BEATS - 1) {
            m_axis.write((result_t)total);
            acc = 0;
        } else {
            acc = total;
        }
        beat_no++;
    }
}

void stage3_hls(hls::stream<beat_t>& s0_axis, hls::stream<beat_t>& s1_axis,
                hls::stream<result_t>& m0_axis, hls::stream<result_t>& m1_axis, ap_uint<32> rows) {
#pragma HLS INTERFACE mode=axis port=s0_axis
#pragma HLS INTERFACE mode=axis port=s1_axis
#pragma HLS INTERFACE mode=axis port=m0_axis
#pragma HLS INTERFACE mode=axis port=m1_axis
#pragma HLS INTERFACE mode=s_axilite port=rows
#pragma HLS INTERFACE mode=s_axilite port=return
#pragma HLS DATAFLOW
    int8_engine(s0_axis, m0_axis, rows);
    int8_engine(s1_axis, m1_axis, rows);
}
