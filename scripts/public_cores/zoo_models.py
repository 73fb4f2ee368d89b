"""Golden models for the zoo's cores (scripts/try_public_cores.py copies this file to each throwaway
project's root; design.yaml names `zoo_models:<function>`). Written here from each core's documented
behaviour, not from its RTL or its own testbench.

Each run is one frame per stream (tlast on the last beat, as kabe's harness drives it)."""

from __future__ import annotations

import numpy as np

from kabe.verify import Stimulus

BEATS = 4000  # a build's check; `doit sim:<design> rows=N` asks for N


def _n(size):
    return BEATS if size is None else int(size)


def _one(d: dict) -> tuple[str, int]:
    (name, bits), = d.items()
    return name, bits


def _words(rng, n, bits):
    return rng.integers(0, 1 << bits, size=n, dtype=np.uint64) if bits < 64 else \
        rng.integers(0, 2**63, size=n, dtype=np.uint64) * np.uint64(2) + rng.integers(0, 2, size=n, dtype=np.uint64)


def passthrough(seed, size, context):
    """A FIFO or register slice: every beat comes out once, in order, bit for bit; status outputs 0."""
    rng = np.random.default_rng(seed)
    (si, bits), (so, _) = _one(context.inputs), _one(context.outputs)
    data = _words(rng, _n(size), bits)
    return Stimulus(inputs={si: data}, expected={so: data.copy()}, status={k: 0 for k in context.status})


def passthrough_user(seed, size, context):
    """passthrough with a tuser sideband (USER_ENABLE=1, USER_WIDTH from the port): it travels with its beat."""
    st = passthrough(seed, size, context)
    (si, _), (so, _) = _one(context.inputs), _one(context.outputs)
    n = len(st.inputs[si])
    user = np.random.default_rng(seed + 1).integers(0, 2, size=n, dtype=np.uint64)
    return Stimulus(inputs=st.inputs, expected=st.expected, status=st.status,
                    sideband={f"{si}_tuser": user, f"{so}_tuser": user.copy()})


def _frame_bytes(rng, n, zero_share=0.05):
    b = rng.integers(1, 256, size=n, dtype=np.uint8)
    b[rng.random(n) < zero_share] = 0
    return b


def adapter_keep(seed, size, context):
    """A width converter down from S to M bytes with tkeep on both sides: the frame's bytes come out in
    order, M at a time, the last beat's tkeep covering only the bytes that are there. The input's last
    beat is partial (its missing bytes 0, tkeep clear)."""
    rng = np.random.default_rng(seed)
    (si, sbits), (so, mbits) = _one(context.inputs), _one(context.outputs)
    sb, mb = sbits // 8, mbits // 8
    n = _n(size) * mb - int(rng.integers(1, mb)) if mb > 1 else _n(size)  # a partial last output beat
    data = rng.integers(0, 256, size=n, dtype=np.uint8)

    def beats(width):
        nb = -(-n // width)
        padded = np.zeros(nb * width, dtype=np.uint8)
        padded[:n] = data
        keep = np.full(nb, (1 << width) - 1, dtype=np.uint64)
        rest = n - (nb - 1) * width
        keep[-1] = (1 << rest) - 1
        words = padded.reshape(nb, width)
        return (words if width * 8 > 64 else words.astype(np.uint64) @ (np.uint64(1) << (np.arange(width, dtype=np.uint64) * np.uint64(8)))), keep

    s_words, s_keep = beats(sb)
    m_words, m_keep = beats(mb)
    return Stimulus(inputs={si: s_words}, expected={so: m_words},
                    sideband={f"{si}_tkeep": s_keep, f"{so}_tkeep": m_keep})


def cobs(frame: bytes) -> bytes:
    """Consistent Overhead Byte Stuffing (Cheshire and Baker, 1999): each zero becomes the distance to
    the next; a run of 254 non-zero bytes is a block of code 0xFF with no zero implied."""
    out, block = bytearray(), bytearray()
    ended_full = False
    for b in frame:
        if b == 0:
            out += bytes([len(block) + 1]) + block
            block, ended_full = bytearray(), False
        else:
            block.append(b)
            ended_full = False
            if len(block) == 254:
                out += b"\xff" + block
                block, ended_full = bytearray(), True
    if not ended_full:
        out += bytes([len(block) + 1]) + block
    return bytes(out)


def _cobs_frame(seed, size):
    rng = np.random.default_rng(seed)
    frame = _frame_bytes(rng, _n(size), zero_share=0.004)  # long zero-free runs: 0xFF blocks happen
    return rng, bytes(frame)


def cobs_encode(seed, size, context):
    """verilog-axis axis_cobs_encode with APPEND_ZERO=1: one frame in, its COBS encoding and a 0 out."""
    _, frame = _cobs_frame(seed, size)
    enc = np.frombuffer(cobs(frame) + b"\x00", dtype=np.uint8)
    return Stimulus(inputs={"s_axis": np.frombuffer(frame, dtype=np.uint8)}, expected={"m_axis": enc.copy()},
                    sideband={"m_axis_tuser": np.zeros(len(enc), dtype=np.uint8)})


def cobs_decode(seed, size, context):
    """verilog-axis axis_cobs_decode: a COBS-encoded frame in, the frame out, tuser (error) 0 on every beat."""
    _, frame = _cobs_frame(seed, size)
    data = np.frombuffer(frame, dtype=np.uint8)
    return Stimulus(inputs={"s_axis": np.frombuffer(cobs(frame), dtype=np.uint8)}, expected={"m_axis": data.copy()},
                    sideband={"m_axis_tuser": np.zeros(len(data), dtype=np.uint8)})
