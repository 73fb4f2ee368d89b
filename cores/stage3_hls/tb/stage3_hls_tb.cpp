// A hand-written testbench of the kernel (Vitis HLS's convention: main returns 0 on a pass), run by kabe
// beside its model-driven harness: one row with known values, worked out by hand.
#include <cstdio>
#include "stage3_hls.h"

int main() {
    hls::stream<beat_t> s0, s1;
    hls::stream<result_t> m0, m1;
    // x = 1, 2, 3, ... (mod 128 as int8), the row: all -1 on port 0 and all 2 on port 1
    long sum_x = 0;
    for (int port = 0; port < 2; port++) {
        hls::stream<beat_t>& s = port ? s1 : s0;
        for (int i = 0; i < ROW_BEATS; i++) {
            beat_t beat = 0;
            for (int k = 0; k < BEAT_BYTES; k++) {
                ap_int<8> x = (i * BEAT_BYTES + k + 1) % 128;
                if (port == 0) sum_x += x;
                beat.range(8 * k + 7, 8 * k) = x;
            }
            s.write(beat);
        }
        for (int i = 0; i < ROW_BEATS; i++) {
            beat_t beat = 0;
            for (int k = 0; k < BEAT_BYTES; k++) beat.range(8 * k + 7, 8 * k) = ap_int<8>(port ? 2 : -1);
            s.write(beat);
        }
    }
    stage3_hls(s0, s1, m0, m1, 1);
    int r0 = (ap_int<32>)m0.read(), r1 = (ap_int<32>)m1.read();
    if (r0 != -sum_x || r1 != 2 * sum_x || !m0.empty() || !m1.empty()) {
        std::printf("FAIL: got %d and %d, expected %ld and %ld\n", r0, r1, -sum_x, 2 * sum_x);
        return 1;
    }
    std::printf("PASS: %d and %d\n", r0, r1);
    return 0;
}
