"""Frame builders: the byte streams the DMA sends to each port, and what must come back.

A frame is x (captured at the head of the stream) followed by rows; see docs/streams.md.
"""

from __future__ import annotations

import numpy as np

from . import attention, int8, probe, ternary
from .frame import Frame

BEAT_BYTES = 8
DEFAULT_ROW_BYTES = 512
DEFAULT_ROWS_PER_PORT = 65_535


def _check_row_bytes(row_bytes: int) -> None:
    if row_bytes <= 0 or row_bytes % BEAT_BYTES:
        raise ValueError(f"row length {row_bytes} B must be a positive multiple of {BEAT_BYTES} B")


def int8_frame(rng: np.random.Generator, rows: int, row_bytes: int = DEFAULT_ROW_BYTES,
               x: np.ndarray | None = None) -> Frame:
    """x: the vector at the head (drawn from rng when not given)."""
    _check_row_bytes(row_bytes)
    if x is None:
        x = rng.integers(-128, 128, size=row_bytes, dtype=np.int8)
    w = rng.integers(-128, 128, size=(rows, row_bytes), dtype=np.int8)
    stream = np.concatenate([x.view(np.uint8), w.view(np.uint8).ravel()])
    return Frame(stream, int8.matvec(x, w), rows)


def ternary_frame(
    rng: np.random.Generator, rows: int, row_bytes: int = DEFAULT_ROW_BYTES, invalid_fraction: float = 0.0,
    x: np.ndarray | None = None,
) -> Frame:
    """Random valid packed rows; with invalid_fraction > 0 some bytes are 243..255 (decoded as zero).
    x: the vector at the head (drawn from rng when not given)."""
    stream, finish = _ternary_deferred(rng, rows, row_bytes, invalid_fraction, x)
    return finish()


def _ternary_deferred(rng: np.random.Generator, rows: int, row_bytes: int, invalid_fraction: float,
                      x: np.ndarray | None):
    """The stream now, the expected words when finish() is called (the same draws either way)."""
    _check_row_bytes(row_bytes)
    if x is None:
        x = rng.integers(-128, 128, size=row_bytes * ternary.WEIGHTS_PER_BYTE, dtype=np.int8)
    w = rng.integers(0, ternary.VALID_BYTES, size=(rows, row_bytes), dtype=np.uint8)
    if invalid_fraction > 0:
        # Each byte invalid with probability invalid_fraction, independently: the same law as a
        # Bernoulli mask (a binomial count, then that many distinct positions uniformly), without
        # drawing a float64 per byte (1 GB and 7 s for a seed-scale frame).
        count = int(rng.binomial(w.size, invalid_fraction))
        where = rng.choice(w.size, size=count, replace=False)
        w.reshape(-1)[where] = rng.integers(ternary.VALID_BYTES, 256, size=count, dtype=np.uint8)
    stream = np.concatenate([x.view(np.uint8), w.ravel()])

    def finish() -> Frame:
        expected, invalid = ternary.matvec_hw(x, w)
        return Frame(stream, expected, rows, invalid)

    return stream, finish


def probe_frame(rng: np.random.Generator, rows: int, row_bytes: int = DEFAULT_ROW_BYTES) -> Frame:
    """The probe sees rows of arbitrary bytes; it reports beats, bytes and cycles."""
    _check_row_bytes(row_bytes)
    stream = rng.integers(0, 256, size=rows * row_bytes, dtype=np.uint8)
    return Frame(stream, probe.expected(stream.size), rows)


BUILDERS = {
    "probe": probe_frame,
    "int8": int8_frame,
    "ternary": ternary_frame,
    "attention": attention.attention_frame,  # rows = context length, row_bytes = head_dim (64)
}


def build(kind: str, rng: np.random.Generator, rows: int, row_bytes: int = DEFAULT_ROW_BYTES,
          invalid_fraction: float = 0.0) -> Frame:
    """invalid_fraction: share of weight bytes replaced by invalid encodings (243..255); only the
    ternary format has any, the other kinds ignore it."""
    try:
        builder = BUILDERS[kind]
    except KeyError:
        raise ValueError(f"unknown design kind {kind!r}; known: {', '.join(BUILDERS)}") from None
    if kind == "ternary":
        return ternary_frame(rng, rows, row_bytes, invalid_fraction=invalid_fraction)
    return builder(rng, rows, row_bytes)


def build_deferred(kind: str, rng: np.random.Generator, rows: int, row_bytes: int = DEFAULT_ROW_BYTES,
                   invalid_fraction: float = 0.0):
    """(stream, expected word count, finish): the same frame as build(), with the golden model's
    work left to finish() -> Frame. A simulation can start on the stream and the expected words be
    computed while it runs, on the other core (the seed-scale check does). Kinds whose model is
    cheap come finished already."""
    if kind == "ternary":
        stream, finish = _ternary_deferred(rng, rows, row_bytes, invalid_fraction, None)
        return stream, rows, finish  # one result word per row
    frame = build(kind, rng, rows, row_bytes, invalid_fraction)
    return frame.stream, int(frame.expected.size), lambda: frame


X_BYTES_PER_ROW_BYTE = {"int8": 1, "ternary": ternary.WEIGHTS_PER_BYTE}  # x length = row_bytes x this


def chunks(kind: str, seed: int, port: int, rows: int, row_bytes: int = DEFAULT_ROW_BYTES,
           max_bytes: int = 32 << 20, invalid_fraction: float = 0.0):
    """One port's rows as a sequence of frames of at most max_bytes each, built one at a time.

    Each frame carries the same x at its head (the engine takes frames back to back), so a run of
    any length fits the DMA's 64 MiB transfer limit and a 512 MB board's memory: only one chunk per
    port exists at a time. Deterministic from (seed, port): the host and the board draw the same
    frames. Kinds without x (the probe, the attention engine) come as one frame."""
    if kind not in X_BYTES_PER_ROW_BYTE:
        yield build(kind, np.random.default_rng([seed, port]), rows, row_bytes, invalid_fraction)
        return
    _check_row_bytes(row_bytes)
    x_len = row_bytes * X_BYTES_PER_ROW_BYTE[kind]
    x = np.random.default_rng([seed, port, 0]).integers(-128, 128, size=x_len, dtype=np.int8)
    per_chunk = max(1, (max_bytes - x_len) // row_bytes)
    for c, start in enumerate(range(0, rows, per_chunk)):
        rng = np.random.default_rng([seed, port, 1, c])
        n = min(per_chunk, rows - start)
        yield (ternary_frame(rng, n, row_bytes, invalid_fraction, x=x) if kind == "ternary"
               else int8_frame(rng, n, row_bytes, x=x))


def port_chunks(kind: str, seed: int, ports: int, rows_per_port: int, row_bytes: int = DEFAULT_ROW_BYTES,
                max_bytes: int = 32 << 20, invalid_fraction: float = 0.0):
    """Chunk after chunk, one frame per port: what a run sends over all ports at once."""
    return zip(*(chunks(kind, seed, p, rows_per_port, row_bytes, max_bytes, invalid_fraction) for p in range(ports)))


def fingerprint_update(h, chunk) -> None:
    """Add one chunk (a frame per port) to a hash, in the order host and board both use."""
    for frame in chunk:
        h.update(frame.stream)
