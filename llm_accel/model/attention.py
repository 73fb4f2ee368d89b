"""The stage-5 attention engine: its integer arithmetic, a float64 reference, and an accuracy report.

Written from the format below (docs/streams.md, "attention engine (stage 5)"), not from the RTL.

One frame = one decode step of one layer for one KV head of SmolLM2-135M (head_dim 64, 9 query
heads sharing 3 KV heads, so 3 query heads per KV head). Byte stream, 8-byte beats, little endian:

    beat 0        header: n (uint32, context length, 1..NMAX), c (uint16), shift (uint8), 0 (uint8)
    beats 1..24   q: 3 query heads x 64 int8 (head 0 first)
    8n beats      K: n rows of 64 int8 (token 0 first)
    8n beats      V: n rows of 64 int8

Arithmetic (all integer, what the RTL computes bit for bit):

    s[h,t] = sum_j q[h,j] k[t,j]                        int32 score (|s| <= 2**20)
    m[h]   = max_t s[h,t]
    z[h,t] = ((m[h] - s[h,t]) * c) >> shift             exponent, base 2, 10 fraction bits
    p[h,t] = EXP_TABLE[z & 1023] >> (z >> 10)           weight, 1.0 = 2**17 (0 once z >> 10 >= 18)
    L[h]   = sum_t p[h,t]                               softmax denominator (>= 2**17)
    a[h,j] = sum_t p[h,t] v[t,j]                        weighted V sum (|a| <= 128 L)
    o[h,j] = sign(a) * ((|a| * 2**17 // L + 1) >> 1)    int32 result, round half away from zero

EXP_TABLE[f] = round(2**17 * 2**(-f/1024)), f = 0..1023 (18-bit entries). So p = 2**17 * 2**(-z/1024)
with z = (m - s) * c / 2**shift: the softmax of s * scale needs c / 2**shift = scale * 1024 * log2(e)
(`header_for_scale`). The result o is Q8.16 in V's units: the real output is o / 2**16 * v_scale.

Result words per frame: 192 int32 (head 0 elements 0..63, then head 1, then head 2), tlast on the
last. Frames may follow each other in one DMA transfer (tlast only at the end): the engine takes the
next beat after a frame's last V beat as the next header.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .frame import BEAT_BYTES, Frame

HEAD_DIM = 64
Q_HEADS = 9
KV_HEADS = 3
GROUP = Q_HEADS // KV_HEADS  # query heads per KV head, i.e. per frame
LAYERS = 30
HEADER_BYTES = 8
Q_BYTES = GROUP * HEAD_DIM  # 192
RESULT_WORDS = GROUP * HEAD_DIM  # 192

EXP_FRAC_BITS = 10  # z's fraction bits: the table covers one octave in 1024 steps
EXP_ENTRIES = 1 << EXP_FRAC_BITS
P_ONE_BITS = 17  # p = 2**17 means weight 1.0
P_ONE = 1 << P_ONE_BITS
OUT_FRAC_BITS = 16  # result words are Q8.16 in V's units
NMAX_DEFAULT = 2048


def _exp_table() -> np.ndarray:
    f = np.arange(EXP_ENTRIES, dtype=np.float64)
    return np.floor(P_ONE * np.exp2(-f / EXP_ENTRIES) + 0.5).astype(np.int64)


EXP_TABLE = _exp_table()
EXP_TABLE.setflags(write=False)
EXP_WIDTH = int(EXP_TABLE.max()).bit_length()  # 18


@dataclass(frozen=True)
class Header:
    """The frame's first beat: context length and the softmax scale as c / 2**shift."""

    n: int
    c: int
    shift: int

    def __post_init__(self) -> None:
        if not 0 <= self.n < 2**32:
            raise ValueError(f"context length {self.n} does not fit the header's uint32")
        if not 0 <= self.c < 2**16:
            raise ValueError(f"scale mantissa c = {self.c} does not fit uint16")
        if not 0 <= self.shift < 64:
            raise ValueError(f"scale shift {self.shift} is outside 0..63")

    def to_bytes(self) -> np.ndarray:
        raw = self.n.to_bytes(4, "little") + self.c.to_bytes(2, "little") + bytes([self.shift, 0])
        return np.frombuffer(raw, dtype=np.uint8).copy()

    @classmethod
    def from_bytes(cls, b) -> "Header":
        b = bytes(np.asarray(b, dtype=np.uint8)[:HEADER_BYTES])
        return cls(int.from_bytes(b[0:4], "little"), int.from_bytes(b[4:6], "little"), b[6] & 63)

    @property
    def scale(self) -> float:
        """The softmax scale this header stands for (natural-log units)."""
        return self.c / 2.0**self.shift / EXP_ENTRIES * math.log(2.0)


def header_for_scale(n: int, scale: float) -> Header:
    """Header whose c / 2**shift best approximates scale * 1024 * log2(e), with c in [2**15, 2**16)."""
    if not scale > 0:
        raise ValueError(f"softmax scale {scale} must be positive")
    g = scale * EXP_ENTRIES / math.log(2.0)
    shift = 15 - math.floor(math.log2(g))
    if not 0 <= shift < 64:
        raise ValueError(f"softmax scale {scale} is outside what c / 2**shift can express (shift {shift})")
    c = int(math.floor(g * 2.0**shift + 0.5))
    if c >= 2**16:  # rounding carried into the next octave
        c, shift = c >> 1, shift - 1
    return Header(n, c, shift)


# ------------------------------------------------------------------------------------------------
# the engine's integer arithmetic
# ------------------------------------------------------------------------------------------------


def _check_qkv(q, k, v) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    q = np.asarray(q, dtype=np.int8)
    k = np.asarray(k, dtype=np.int8)
    v = np.asarray(v, dtype=np.int8)
    if q.ndim != 2 or q.shape[1] != HEAD_DIM:
        raise ValueError(f"q has shape {q.shape}; expected (heads, {HEAD_DIM})")
    if k.ndim != 2 or k.shape[1] != HEAD_DIM or k.shape != v.shape or k.shape[0] < 1:
        raise ValueError(f"k {k.shape} and v {v.shape} must both be (n >= 1, {HEAD_DIM})")
    return q, k, v


def scores(q, k) -> np.ndarray:
    """int64 (heads, n): q . k for every query head and token."""
    return np.asarray(q, dtype=np.int64) @ np.asarray(k, dtype=np.int64).T


def weights(s: np.ndarray, c: int, shift: int) -> np.ndarray:
    """int64 p[h, t] from scores: the table-driven exp of -(m - s) * c / 2**shift * ln2 / 1024."""
    d = s.max(axis=-1, keepdims=True) - s
    z = (d * int(c)) >> int(shift)
    i = np.minimum(z >> EXP_FRAC_BITS, 32)  # T < 2**18, so any shift >= 18 gives 0
    return EXP_TABLE[z & (EXP_ENTRIES - 1)] >> i


def normalize(a: np.ndarray, total: np.ndarray) -> np.ndarray:
    """o = sign(a) * round_half_away(|a| * 2**16 / L), via the divider's floor(|a| * 2**17 / L)."""
    mag = np.abs(a)
    q2 = (mag << (OUT_FRAC_BITS + 1)) // total
    o = (q2 + 1) >> 1
    return np.where(a < 0, -o, o)


def attention_hw(q, k, v, c: int, shift: int) -> np.ndarray:
    """The engine's result words: int32 (heads, 64), Q8.16 in V's units."""
    q, k, v = _check_qkv(q, k, v)
    p = weights(scores(q, k), c, shift)
    total = p.sum(axis=1, keepdims=True)
    a = p @ v.astype(np.int64)
    return normalize(a, total).astype(np.int32)


def attention_hw_float(q, k, v, c: int, shift: int) -> np.ndarray:
    """attention_hw's output as float64 in V's integer units (o / 2**16)."""
    return attention_hw(q, k, v, c, shift).astype(np.float64) / 2.0**OUT_FRAC_BITS


# ------------------------------------------------------------------------------------------------
# float64 reference
# ------------------------------------------------------------------------------------------------


def attention_float(q, k, v, scale: float) -> np.ndarray:
    """softmax(q k^T * scale) v in float64; q (heads, d), k and v (n, d)."""
    q = np.asarray(q, dtype=np.float64)
    k = np.asarray(k, dtype=np.float64)
    v = np.asarray(v, dtype=np.float64)
    s = (q @ k.T) * scale
    s -= s.max(axis=-1, keepdims=True)
    w = np.exp(s)
    w /= w.sum(axis=-1, keepdims=True)
    return w @ v


def quantize(x, axis=None) -> tuple[np.ndarray, np.ndarray]:
    """Symmetric int8 quantization (per tensor, or per slice along axis): (int8 values, scale)."""
    x = np.asarray(x, dtype=np.float64)
    amax = np.max(np.abs(x)) if axis is None else np.max(np.abs(x), axis=axis, keepdims=True)
    scale = np.maximum(amax, 1e-30) / 127.0
    return np.clip(np.rint(x / scale), -127, 127).astype(np.int8), scale


# ------------------------------------------------------------------------------------------------
# frames
# ------------------------------------------------------------------------------------------------


def frame_stream(q, k, v, header: Header) -> np.ndarray:
    """The uint8 byte stream of one frame (header, q, K rows, V rows)."""
    q, k, v = _check_qkv(q, k, v)
    if q.shape[0] != GROUP:
        raise ValueError(f"a frame carries {GROUP} query heads, got {q.shape[0]}")
    if header.n != k.shape[0]:
        raise ValueError(f"header says n = {header.n} but K has {k.shape[0]} rows")
    return np.concatenate([header.to_bytes(), q.view(np.uint8).ravel(), k.view(np.uint8).ravel(), v.view(np.uint8).ravel()])


def frame_bytes(n: int) -> int:
    return HEADER_BYTES + Q_BYTES + 2 * n * HEAD_DIM


def frame_beats(n: int) -> int:
    return frame_bytes(n) // BEAT_BYTES


@dataclass(frozen=True)
class Case:
    """One KV head's worth of float data, its int8 quantization and the frame header."""

    q_f: np.ndarray  # (3, 64) float
    k_f: np.ndarray  # (n, 64)
    v_f: np.ndarray
    scale: float  # softmax scale on the float scores (1/sqrt(64) for SmolLM2)
    q: np.ndarray  # int8
    k: np.ndarray
    v: np.ndarray
    sq: float
    sk: float
    sv: float
    header: Header

    @property
    def int_scale(self) -> float:
        """Softmax scale on the integer scores."""
        return self.scale * self.sq * self.sk


def make_case(q_f, k_f, v_f, scale: float = 1.0 / math.sqrt(HEAD_DIM), k_per_channel: bool = False) -> Case:
    """Quantize float q/k/v to the engine's int8 inputs and header.

    k_per_channel: quantize K per channel (scale sk_j per column) and fold sk_j into q before
    quantizing q (q.k = sum (q_j sk_j)(k_j / sk_j)); the engine is unchanged. Then sk = 1.
    """
    q_f, k_f, v_f = np.asarray(q_f), np.asarray(k_f), np.asarray(v_f)
    if k_per_channel:
        k, skj = quantize(k_f, axis=0)
        q, sq = quantize(q_f * skj)
        sk = 1.0
    else:
        q, sq = quantize(q_f)
        k, sk = quantize(k_f)
    v, sv = quantize(v_f)
    header = header_for_scale(k.shape[0], scale * float(sq) * float(sk))
    return Case(q_f, k_f, v_f, scale, q, k, v, float(sq), float(sk), float(sv), header)


STATISTICS = ("gaussian", "outlier_keys", "peaked", "flat")


def synth_case(rng: np.random.Generator, n: int, statistics: str = "gaussian", k_per_channel: bool = False) -> Case:
    """Float q/k/v with the named statistics, quantized to int8 per tensor.

    gaussian      q, k, v ~ N(0, 1): scores ~ N(0, 1) after the 1/8 scale
    outlier_keys  as gaussian, but 4 of 64 key channels are 15x larger (and q follows them a
                  little), as in LLM key caches: per-tensor int8 leaves the other channels coarse
    peaked        q aligned with a few keys, scores spread over ~40 nats: near one-hot softmax
    flat          q 20x smaller: near-uniform softmax (every weight counts)
    """
    d = HEAD_DIM
    q_f = rng.standard_normal((GROUP, d))
    k_f = rng.standard_normal((n, d))
    v_f = rng.standard_normal((n, d))
    if statistics == "gaussian":
        q_f *= 1.5
    elif statistics == "outlier_keys":
        ch = rng.choice(d, size=4, replace=False)
        k_f[:, ch] *= 15.0
        k_f[:, ch] += 5.0 * rng.standard_normal(4)
        q_f[:, ch] *= 0.5
    elif statistics == "peaked":
        hot = rng.choice(n, size=min(3, n), replace=False)
        q_f = 0.3 * q_f + 3.0 * k_f[hot[: GROUP]][np.arange(GROUP) % len(hot)]
    elif statistics == "flat":
        q_f *= 0.05
    else:
        raise ValueError(f"unknown statistics {statistics!r}; known: {', '.join(STATISTICS)}")
    return make_case(q_f, k_f, v_f, k_per_channel=k_per_channel)


def case_frame(case: Case):
    """(stream, expected int32 words) of one Case."""
    stream = frame_stream(case.q, case.k, case.v, case.header)
    expected = attention_hw(case.q, case.k, case.v, case.header.c, case.header.shift).ravel()
    return stream, expected


def attention_frame(rng: np.random.Generator, rows: int, row_bytes: int = HEAD_DIM):
    """frames.BUILDERS["attention"]: one KV head's frame of context length `rows`.

    Returns llm_accel.model.frames.Frame (stream, 192 expected int32 words, rows, invalid 0). The
    statistics rotate with the generator so a run covers flat, peaked and outlier-heavy cases.
    """
    if row_bytes != HEAD_DIM:
        raise ValueError(f"attention rows are head_dim = {HEAD_DIM} int8 bytes; got row_bytes {row_bytes}")
    if rows < 1:
        raise ValueError(f"context length {rows} must be at least 1")
    statistics = STATISTICS[int(rng.integers(len(STATISTICS)))]
    stream, expected = case_frame(synth_case(rng, rows, statistics))
    return Frame(stream, expected, rows)
