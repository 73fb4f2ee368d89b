"""Golden model of cores/v80_ternary: stage 4's ternary frames on wide beats, one frame per channel.

The V80 design is stage 4's ternary engine on 256-bit HBM beats (32 bytes, 160 weights a beat),
once per HBM channel. The frame is byte for byte stage 4's (docs/streams.md, "ternary engine"):
x = 5 x ROW_BYTES int8 values, then rows of ROW_BYTES packed bytes, 5 weights per byte, an int32
per row out; bytes 243..255 decode as five zeros and are counted in stat{p}_invalid. Only the
beat is wider: the same bytes are cut into (beats, width / 8) instead of 8-byte words. The frames,
the expected words and the invalid counts are llm_accel.model.frames' and llm_accel.model.ternary's own
(matvec_hw), drawn from the same seeds per port as stage 4's model: this file adds no arithmetic.

    verify: {model: "llm_accel.model.v80_ternary:stimulus"}      (cores/v80_ternary/design.yaml)

numpy only, like every golden model (llm_accel.model imports nothing else of kabe).
"""

from __future__ import annotations

from . import frames
from kabe.verify import Context, Stimulus

# size None (the build's simulation check): rows per channel. Small on purpose: a run at scale is
# `doit sim:v80_ternary rows=N` (N over all channels).
CHECK_ROWS_PER_PORT = 64


def stimulus(seed: int, size, context: Context) -> Stimulus:
    """size rows over all channels (None: CHECK_ROWS_PER_PORT per channel); input p paired with output
    p and stat{p}_*; context.options: row_bytes, invalid_fraction (None: frames' default, 1e-4).
    The same draws as stage 4's model for each (seed, channel): only the beat width differs."""
    return frames.kabe_stimulus("ternary", seed, size, context, rows_per_port_default=CHECK_ROWS_PER_PORT,
                                lane="HBM channel")
