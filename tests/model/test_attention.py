"""llm_accel.model.attention: the stage-5 engine's integer arithmetic, its frames and its accuracy."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

from llm_accel.model import attention as att
from llm_accel.model import frames

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
import attention_accuracy as accuracy_study  # noqa: E402  (scripts/: the study is not part of the model)


def scalar_reference(q, k, v, c, shift):
    """The format spec, one Python int at a time (no numpy broadcasting or dtype to go wrong)."""
    out = []
    n = len(k)
    for h in range(len(q)):
        s = [sum(int(q[h][j]) * int(k[t][j]) for j in range(64)) for t in range(n)]
        m = max(s)
        p = []
        for t in range(n):
            z = ((m - s[t]) * c) >> shift
            p.append(int(att.EXP_TABLE[z % 1024]) >> (z // 1024))
        total = sum(p)
        for j in range(64):
            a = sum(p[t] * int(v[t][j]) for t in range(n))
            o = ((abs(a) << 17) // total + 1) >> 1
            out.append(-o if a < 0 else o)
    return np.array(out, dtype=np.int64).reshape(len(q), 64)


def test_exp_table():
    t = att.EXP_TABLE
    assert t.shape == (1024,) and t[0] == 2**17 and att.EXP_WIDTH == 18
    assert np.all(np.diff(t) <= 0) and t[-1] > 2**16
    f = np.arange(1024)
    assert np.max(np.abs(t - 2**17 * 2.0 ** (-f / 1024))) <= 0.5


def test_header_roundtrip_and_scale():
    h = att.Header(2048, 0xBEEF, 17)
    b = h.to_bytes()
    assert b.tolist() == [0, 8, 0, 0, 0xEF, 0xBE, 17, 0]
    assert att.Header.from_bytes(b) == h
    for scale in (1e-6, 3.1e-4, 0.02, 0.5):
        hd = att.header_for_scale(10, scale)
        assert 2**15 <= hd.c < 2**16
        assert abs(hd.scale / scale - 1) < 2**-15
    with pytest.raises(ValueError):
        att.Header(1, 2**16, 0)


@pytest.mark.parametrize("n", [1, 2, 7, 33])
def test_matches_scalar_spec(n):
    rng = np.random.default_rng(n)
    for stats in att.STATISTICS:
        case = att.synth_case(rng, n, stats)
        got = att.attention_hw(case.q, case.k, case.v, case.header.c, case.header.shift)
        want = scalar_reference(case.q, case.k, case.v, case.header.c, case.header.shift)
        np.testing.assert_array_equal(got, want)


def test_random_int8_and_header_extremes_match_scalar_spec():
    rng = np.random.default_rng(1)
    for c, shift in [(65535, 0), (1, 63), (40000, 20), (0, 0)]:
        q = rng.integers(-128, 128, (3, 64), dtype=np.int8)
        k = rng.integers(-128, 128, (9, 64), dtype=np.int8)
        v = rng.integers(-128, 128, (9, 64), dtype=np.int8)
        np.testing.assert_array_equal(att.attention_hw(q, k, v, c, shift), scalar_reference(q, k, v, c, shift))


def test_identities_and_widths_at_8192():
    n = 8192
    q = np.full((3, 64), -128, np.int8)
    k = np.full((n, 64), -128, np.int8)
    s = att.scores(q, k)
    assert s.max() == 2**20  # the score register needs 22 signed bits
    v = np.full((n, 64), -128, np.int8)
    # every weight is 1.0: L = n * 2**17 < 2**31, |a| = 128 L = 2**37 < 2**39
    out = att.attention_hw(q, k, v, 12345, 10)
    assert np.all(out == -128 * 2**16)
    v[:, 5] = 127
    out = att.attention_hw(q, k, v, 12345, 10)
    assert np.all(out[:, 5] == 127 * 2**16)


def test_single_token_returns_v():
    rng = np.random.default_rng(3)
    q = rng.integers(-128, 128, (3, 64), dtype=np.int8)
    k = rng.integers(-128, 128, (1, 64), dtype=np.int8)
    v = rng.integers(-128, 128, (1, 64), dtype=np.int8)
    out = att.attention_hw(q, k, v, 50000, 18)
    np.testing.assert_array_equal(out, np.repeat(v.astype(np.int32) * 2**16, 3, axis=0))


def test_rounding_half_away_from_zero():
    a = np.array([[3, -3, 1, -1, 0]], dtype=np.int64)
    total = np.array([[2**18]], dtype=np.int64)  # a / L * 2**16 = a / 4
    np.testing.assert_array_equal(att.normalize(a, total), [[1, -1, 0, 0, 0]])
    total = np.array([[2**19]], dtype=np.int64)  # a / 8: 3/8 -> 0, and 4/8 rounds away from zero
    np.testing.assert_array_equal(att.normalize(np.array([[4, -4, 3]]), total), [[1, -1, 0]])


@pytest.mark.parametrize("stats", att.STATISTICS)
def test_kernel_accuracy(stats):
    acc = accuracy_study.accuracy(np.random.default_rng(7), 512, stats, trials=2)
    assert acc.kernel_cos_min >= 0.999
    assert acc.kernel_max_abs < 0.25  # in V's integer steps
    assert acc.e2e_cos_min >= 0.98


def test_float_reference_is_softmax():
    rng = np.random.default_rng(0)
    q, k, v = rng.standard_normal((3, 64)), rng.standard_normal((5, 64)), rng.standard_normal((5, 64))
    out = att.attention_float(q, k, v, 0.125)
    w = np.exp(q @ k.T * 0.125)
    np.testing.assert_allclose(out, (w / w.sum(1, keepdims=True)) @ v)


def test_frame_layout_and_builder():
    rng = np.random.default_rng(11)
    f = frames.build("attention", rng, rows=5, row_bytes=64)
    assert f.rows == 5 and f.invalid == 0
    assert f.stream.dtype == np.uint8 and f.stream.size == att.frame_bytes(5) == 8 + 192 + 640
    assert f.stream.size % 8 == 0 and att.frame_beats(5) == 1 + 24 + 80
    hd = att.Header.from_bytes(f.stream[:8])
    assert hd.n == 5
    q = f.stream[8:200].view(np.int8).reshape(3, 64)
    k = f.stream[200:520].view(np.int8).reshape(5, 64)
    v = f.stream[520:].view(np.int8).reshape(5, 64)
    np.testing.assert_array_equal(f.expected, att.attention_hw(q, k, v, hd.c, hd.shift).ravel())
    assert f.expected.dtype == np.int32 and f.expected.size == att.RESULT_WORDS
    with pytest.raises(ValueError):
        frames.build("attention", rng, rows=5, row_bytes=512)


def test_scale_meaning():
    """p follows exp(-(m - s) * header.scale) to the table's precision."""
    hd = att.header_for_scale(1, 0.01)
    s = np.arange(0, -3000, -7, dtype=np.int64)[None, :]
    p = att.weights(s, hd.c, hd.shift) / 2**17
    want = np.exp(-(0 - s) * hd.scale)
    # 1/1024 octave of argument (0.07 %) plus the floor of the final shift (one LSB of 2**-17)
    assert np.all(np.abs(p - want) <= 1e-3 * want + 2.0**-17)
    assert math.isclose(hd.scale, 0.01, rel_tol=2**-15)
