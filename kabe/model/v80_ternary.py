"""Golden model of cores/v80_ternary: stage 4's ternary frames on wide beats, one frame per channel.

The V80 design is stage 4's ternary engine on 256-bit HBM beats (32 bytes, 160 weights a beat),
once per HBM channel. The frame is byte for byte stage 4's (docs/streams.md, "ternary engine"):
x = 5 x ROW_BYTES int8 values, then rows of ROW_BYTES packed bytes, 5 weights per byte, an int32
per row out; bytes 243..255 decode as five zeros and are counted in stat{p}_invalid. Only the
beat is wider: the same bytes are cut into (beats, width / 8) instead of 8-byte words. The frames,
the expected words and the invalid counts are kabe.model.frames' and kabe.model.ternary's own
(matvec_hw), drawn from the same seeds per port as stage 4's model: this file adds no arithmetic.

    verify: {model: "kabe.model.v80_ternary:stimulus"}      (cores/v80_ternary/design.yaml)

numpy only, like every golden model (kabe.model imports nothing else of kabe).
"""

from __future__ import annotations

import numpy as np

from . import frames
from .frame import Frame
from .stimulus import Context, Stimulus

# size None (the build's simulation check): rows per channel. Small on purpose: a run at scale is
# `doit sim:v80_ternary rows=N` (N over all channels).
CHECK_ROWS_PER_PORT = 64


def _rows_per_port(size, ports: int) -> int:
    if size is None:
        return CHECK_ROWS_PER_PORT
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size <= 0:
        raise ValueError(f"rows must be a positive integer (total over {ports} channel(s)), got {size!r}")
    if size % ports:
        raise ValueError(f"the design has {ports} HBM channels and rows is the total over them: {size} does not "
                         f"divide by {ports}; use {size - size % ports} or {size + ports - size % ports}")
    return int(size) // ports


def _beat_bytes(ins: dict[str, int], row_bytes: int) -> dict[str, int]:
    out = {}
    for name, bits in ins.items():
        beat = bits // 8
        if row_bytes % beat:
            raise ValueError(f"row_bytes {row_bytes} is not a whole number of {name}'s {bits}-bit beats; "
                             f"give a multiple of {beat}")
        out[name] = beat
    return out


def stimulus(seed: int, size, context: Context) -> Stimulus:
    """size rows over all channels (None: CHECK_ROWS_PER_PORT per channel); input p paired with output
    p and stat{p}_*; context.options: row_bytes, invalid_fraction (None: frames' default, 1e-4)."""
    ins, outs = dict(context.inputs), list(context.outputs)
    if len(ins) != len(outs) or not ins:
        raise ValueError(f"the V80 ternary model pairs input and output channels one to one; the design declares "
                         f"{len(ins)} input(s) and {len(outs)} output(s)")
    ports = len(ins)
    per_port = _rows_per_port(size, ports)
    row_bytes = int(context.options.get("row_bytes") or frames.DEFAULT_ROW_BYTES)
    beats = _beat_bytes(ins, row_bytes)
    fraction = context.options.get("invalid_fraction")
    fraction = frames.DEFAULT_INVALID_FRACTION if fraction is None else float(fraction)

    inputs, finishers = {}, []
    for p, name in enumerate(ins):
        # the same draws as stage 4's model for this (seed, port): only the beat width differs
        stream, _, finish = frames.build_deferred("ternary", np.random.default_rng([seed, p]), per_port, row_bytes,
                                                  fraction)
        inputs[name] = stream.reshape(-1, beats[name])  # (beats, bytes): byte i is tdata[8i+7:8i]
        finishers.append(finish)
    done: list[Frame] = []

    def frames_now() -> list[Frame]:  # the model's words, computed once (expected, then status)
        if not done:
            done.extend(f() for f in finishers)
            finishers.clear()
        return done

    def expected():
        return {outs[p]: f.expected.astype(np.int32) for p, f in enumerate(frames_now())}

    def status():
        out = {}
        for p, f in enumerate(frames_now()):
            if f"stat{p}_invalid" in context.status:
                out[f"stat{p}_invalid"] = int(f.invalid)
            if f"stat{p}_overflow" in context.status:
                out[f"stat{p}_overflow"] = 0  # sticky: a result dropped with m_tready held high
        return out

    # one result beat per row: the beats compared are the rows checked
    return Stimulus(inputs=inputs, expected=expected, status=status, expected_beats={o: per_port for o in outs},
                    stall_free=True)
