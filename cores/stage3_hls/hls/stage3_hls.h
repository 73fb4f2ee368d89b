// Stage 3's INT8 engine as an HLS kernel: the same frames as the RTL engine (cores/stage3, docs/streams.md).
#ifndef STAGE3_HLS_H
#define STAGE3_HLS_H

#include "ap_int.h"
#include "hls_stream.h"

#define ROW_BYTES 512                 // bytes in x and in each row (design.yaml's row_bytes)
#define BEAT_BYTES 8                  // one 64-bit beat carries 8 int8 values: 8 multiplies per clock
#define ROW_BEATS (ROW_BYTES / BEAT_BYTES)

typedef ap_uint<64> beat_t;
typedef ap_uint<32> result_t;         // the int32 dot product, as the port's 32 bits

// Two engines, one per HP port: each stream is x (ROW_BYTES) followed by `rows` rows of ROW_BYTES,
// and gets one 32-bit result per row.
void stage3_hls(hls::stream<beat_t>& s0_axis, hls::stream<beat_t>& s1_axis,
                hls::stream<result_t>& m0_axis, hls::stream<result_t>& m1_axis, ap_uint<32> rows);

#endif
