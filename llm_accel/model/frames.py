"""Frame builders: the byte streams the DMA sends to each port, and what must come back.

A frame is x (captured at the head of the stream) followed by rows; see docs/streams.md.
"""

from __future__ import annotations

import numpy as np

from . import attention, int8, probe, ternary
from .frame import BEAT_BYTES, Frame
from kabe.verify import Chunks, Stimulus, declare

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
    w = _ternary_rows(rng, rows, row_bytes, invalid_fraction)
    stream = np.concatenate([x.view(np.uint8), w.ravel()])

    def finish() -> Frame:
        expected, invalid = ternary.matvec_hw(x, w)
        return Frame(stream, expected, rows, invalid)

    return stream, finish


def _ternary_rows(rng: np.random.Generator, rows: int, row_bytes: int, invalid_fraction: float) -> np.ndarray:
    """rows packed rows of valid bytes, some invalid (243..255) when invalid_fraction > 0."""
    w = rng.integers(0, ternary.VALID_BYTES, size=(rows, row_bytes), dtype=np.uint8)
    if invalid_fraction > 0:
        # Each byte invalid with probability invalid_fraction, independently: the same law as a
        # Bernoulli mask (a binomial count, then that many distinct positions uniformly), without
        # drawing a float64 per byte (1 GB and 7 s for a seed-scale frame).
        count = int(rng.binomial(w.size, invalid_fraction))
        where = rng.choice(w.size, size=count, replace=False)
        w.reshape(-1)[where] = rng.integers(ternary.VALID_BYTES, 256, size=count, dtype=np.uint8)
    return w


class TernaryParts:
    """One port's ternary frame (x, then rows) built part by part for kabe's simulation to stream
    (kabe.verify.Chunks): each part of rows drawn from its own generator (seed, port, 1, part), so any
    part is the same whoever asks for it first, and its results computed as it is drawn. result()
    gives the whole frame's (expected, invalid), computing the parts nobody drew yet."""

    PART_ROWS = 8192  # 4 MiB of 512 B rows: a part's model work runs beside ~0.1 s of simulation

    def __init__(self, seed: int, port: int, rows: int, row_bytes: int, invalid_fraction: float):
        _check_row_bytes(row_bytes)
        self.seed, self.port, self.rows, self.row_bytes, self.fraction = seed, port, rows, row_bytes, invalid_fraction
        self.x = np.random.default_rng([seed, port]).integers(
            -128, 128, size=row_bytes * ternary.WEIGHTS_PER_BYTE, dtype=np.int8)
        self._done: dict[int, tuple[np.ndarray, int]] = {}  # part -> (results, invalid bytes)

    @property
    def stream_bytes(self) -> int:
        return self.x.size + self.rows * self.row_bytes

    def _part(self, c: int) -> np.ndarray:
        n = min(self.PART_ROWS, self.rows - c * self.PART_ROWS)
        w = _ternary_rows(np.random.default_rng([self.seed, self.port, 1, c]), n, self.row_bytes, self.fraction)
        self._done[c] = ternary.matvec_hw(self.x, w)
        return w

    def parts(self):
        """The frame's bytes: x, then each part's rows."""
        yield self.x.view(np.uint8)
        for c in range(-(-self.rows // self.PART_ROWS)):
            yield self._part(c).ravel()

    def result(self) -> tuple[np.ndarray, int]:
        n = -(-self.rows // self.PART_ROWS)
        for c in range(n):
            if c not in self._done:
                self._part(c)
        return (np.concatenate([self._done[c][0] for c in range(n)]) if n else np.zeros(0, dtype=np.int64),
                sum(self._done[c][1] for c in range(n)))


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


# ---- kabe's six designs through the golden-model API (kabe.verify, docs/your_design.md) ----
# Each design.yaml names one: `verify: {model: "llm_accel.model.frames:ternary_stimulus"}`.

# Full-scale rows per port (size None): the document's 65,535-row frame; the ternary engine's frame
# is as many 512 B rows as fit with x in 128 MiB (2**27 - 2,560 B) / 512 B = 262,139. For the
# attention engine a "row" is one K (and one V) row: the longest context it is built for (NMAX 2048).
FULL_ROWS_PER_PORT = {"probe": 65_535, "int8": 65_535, "ternary": 262_139, "attention": 2048}
# Default share of invalid ternary bytes (243..255) so stat_invalid is exercised on every run.
DEFAULT_INVALID_FRACTION = 1e-4
# Result word width per kind: the probe's 64-bit counts, the engines' int32 results.
RESULT_BITS = {"probe": 64, "int8": 32, "ternary": 32, "attention": 32}


def _split(size: int, ports: int, lane: str = "HP port") -> int:
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size <= 0:
        raise ValueError(f"rows must be a positive integer (total over {ports} {lane}(s)), got {size!r}")
    if size % ports:
        raise ValueError(f"the design has {ports} {lane}s and rows is the total over them: {size} does not "
                         f"divide by {ports}; use {size - size % ports} or {size + ports - size % ports}")
    return int(size) // ports


def _beats(stream: np.ndarray, name: str, bits: int, row_bytes: int) -> np.ndarray:
    """The frame's bytes as the port's beats: 8-byte little-endian words on a 64-bit port (kabe's PYNQ
    designs), else (beats, bits / 8) rows of bytes, byte i being tdata[8i+7:8i] (the V80's 256-bit beats)."""
    if bits == 64:
        return stream.view("<u8")
    beat = bits // 8
    if bits % 8 or row_bytes % beat:
        raise ValueError(f"row_bytes {row_bytes} is not a whole number of {name}'s {bits}-bit beats; "
                         f"give a multiple of {beat}")
    return stream.reshape(-1, beat)


def _ternary_chunks(seed: int, port: int, rows: int, row_bytes: int, fraction: float, name: str, bits: int):
    """One port's ternary frame as kabe.verify.Chunks (its beats part by part), and finish() -> its Frame
    (the results of every part, drawn or not)."""
    frame = TernaryParts(seed, port, rows, row_bytes, fraction)
    beat = 8 if bits == 64 else bits // 8
    _beats(np.zeros(row_bytes, dtype=np.uint8), name, bits, row_bytes)  # a row_bytes the port cannot take: now

    def parts():
        for part in frame.parts():
            yield _beats(part, name, bits, row_bytes)

    def finish() -> Frame:
        expected, invalid = frame.result()
        return Frame(np.zeros(0, dtype=np.uint8), expected, rows, invalid)  # the stream went part by part

    return Chunks(frame.stream_bytes // beat, parts), finish


def kabe_stimulus(kind: str, seed: int, size, context, *, rows_per_port_default: int | None = None,
                  lane: str = "HP port") -> Stimulus:
    """kabe's frames of `kind` on the design's ports, input p paired with output p and stat{p}_*; size
    None: rows_per_port_default per port (default: the document's full scale)."""
    ins, outs = list(context.inputs), list(context.outputs)
    if len(ins) != len(outs) or not ins:
        raise ValueError(f"kabe's {kind} model pairs input and output ports one to one; the design declares "
                         f"{len(ins)} input(s) and {len(outs)} output(s)")
    ports = len(ins)
    rows = (rows_per_port_default or FULL_ROWS_PER_PORT[kind]) * ports if size is None else size
    per_port = _split(rows, ports, lane)
    row_bytes = int(context.options.get("row_bytes") or DEFAULT_ROW_BYTES)
    fraction = context.options.get("invalid_fraction")
    fraction = (DEFAULT_INVALID_FRACTION if kind == "ternary" else 0.0) if fraction is None else float(fraction)
    inputs, finishers, counts = {}, [], {}
    for p in range(ports):
        if kind == "ternary":  # the seed-scale frame (256 MiB a port): streamed to the simulation as it is drawn
            inputs[ins[p]], finish = _ternary_chunks(seed, p, per_port, row_bytes, fraction, ins[p],
                                                     context.inputs[ins[p]])
            finishers.append(finish)
            counts[outs[p]] = per_port  # one result word per row
            continue
        stream, n_expected, finish = build_deferred(kind, np.random.default_rng([seed, p]), per_port, row_bytes,
                                                    fraction)
        inputs[ins[p]] = _beats(stream, ins[p], context.inputs[ins[p]], row_bytes)
        finishers.append(finish)
        counts[outs[p]] = int(n_expected)
    done: list[Frame] = []

    def frames_now() -> list[Frame]:  # the model's words, computed once (expected, then status)
        if not done:
            done.extend(f() for f in finishers)
            finishers.clear()
        return done

    def expected():
        return {outs[p]: (f.expected.astype(np.uint64) if kind == "probe" else f.expected.astype(np.int32))
                for p, f in enumerate(frames_now())}

    def status():
        out = {}
        for p, f in enumerate(frames_now()):
            if f"stat{p}_invalid" in context.status:
                out[f"stat{p}_invalid"] = int(f.invalid)
            if f"stat{p}_overflow" in context.status:
                out[f"stat{p}_overflow"] = 0  # sticky: a result dropped with m_tready held high
        return out

    return Stimulus(inputs=inputs, expected=expected, status=status, expected_beats=counts, stall_free=True,
                    checked=rows if kind == "probe" else None)


def _port_count(context) -> int:
    return len(context.inputs)


def board_chunks(kind: str):
    """How a run of `kind` streams on a board: chunk after chunk (chunks()), each one DMA transfer per
    port of at most max_bytes, x repeated at each head; the same draws on the host and the board."""
    def chunks_of(seed: int, size, context, max_bytes: int):
        ins, outs = list(context.inputs), list(context.outputs)
        ports = len(ins)
        per_port = _split(size, ports)
        row_bytes = int(context.options.get("row_bytes") or DEFAULT_ROW_BYTES)
        fraction = context.options.get("invalid_fraction")
        fraction = (DEFAULT_INVALID_FRACTION if kind == "ternary" else 0.0) if fraction is None else float(fraction)
        for chunk in port_chunks(kind, seed, ports, per_port, row_bytes, max_bytes, fraction):
            status = {}
            for p, f in enumerate(chunk):
                if f"stat{p}_invalid" in context.status:
                    status[f"stat{p}_invalid"] = int(f.invalid)
                if f"stat{p}_overflow" in context.status:
                    status[f"stat{p}_overflow"] = 0
            yield Stimulus(inputs={ins[p]: _beats(f.stream, ins[p], context.inputs[ins[p]], row_bytes)
                                   for p, f in enumerate(chunk)},
                           expected={outs[p]: (f.expected.astype(np.uint64) if kind == "probe"
                                               else f.expected.astype(np.int32)) for p, f in enumerate(chunk)},
                           status=status, checked=sum(int(f.rows) for f in chunk))
    return chunks_of


def _declares(kind: str) -> dict:
    """What kabe asks of each of these models (kabe.verify.Declares): a build's check runs
    CHECK_ROWS_PER_PORT rows a port, `doit sim` and `doit deploy` the full scale."""
    return dict(check_size=lambda c: CHECK_ROWS_PER_PORT * _port_count(c),
                full_size=lambda c: FULL_ROWS_PER_PORT[kind] * _port_count(c),
                size_name="ctx" if kind == "attention" else "rows", per_port=True, label=kind,
                options={"invalid_fraction": DEFAULT_INVALID_FRACTION if kind == "ternary" else 0.0},
                board_chunks=board_chunks(kind),
                measured_beats=(2,) if kind == "probe" else ())  # the probe's cycle count is the board's own


# The simulation check a build runs first: small (seconds), still whole frames through every port.
CHECK_ROWS_PER_PORT = 64


@declare(**_declares("probe"))
def probe_stimulus(seed: int, size, context) -> Stimulus:
    """stage2's probe: random bytes in, three 64-bit counts per port out."""
    return kabe_stimulus("probe", seed, size, context)


@declare(**_declares("int8"))
def int8_stimulus(seed: int, size, context) -> Stimulus:
    """stage3's INT8 matrix-vector engine: size rows over all ports, int32 results."""
    return kabe_stimulus("int8", seed, size, context)


@declare(**_declares("ternary"))
def ternary_stimulus(seed: int, size, context) -> Stimulus:
    """stage4's ternary engine: size rows over all ports, invalid_fraction of the bytes 243..255."""
    return kabe_stimulus("ternary", seed, size, context)


@declare(**_declares("attention"))
def attention_stimulus(seed: int, size, context) -> Stimulus:
    """stage5's attention engine: size = the context length summed over ports, one frame each."""
    return kabe_stimulus("attention", seed, size, context)

