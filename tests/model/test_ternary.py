"""The ternary format exactly as the document defines it: 5 weights per byte, least significant
base-3 digit first, weight = digit - 1; bytes 243..255 are not encodings."""

import numpy as np
import pytest

from llm_accel.model import frames, int8, ternary


def test_the_documents_worked_example():
    # 178 = 1 + 2*3 + 1*9 + 0*27 + 2*81 -> digits (1,2,1,0,2) -> weights (0,+1,0,-1,+1)
    assert ternary.unpack(np.array([178], np.uint8), 5).tolist() == [0, 1, 0, -1, 1]
    assert ternary.pack(np.array([0, 1, 0, -1, 1])).tolist() == [178]


def test_every_valid_byte_round_trips():
    b = np.arange(243, dtype=np.uint8)
    w = ternary.unpack(b, 5 * 243)
    assert set(np.unique(w)) <= {-1, 0, 1}
    assert ternary.pack(w).tolist() == b.tolist()


def test_pack_pads_with_zero_weights():
    # 7 weights -> 2 bytes; the 3 padding weights are 0 (digit 1)
    w = np.array([1, 1, 1, 1, 1, -1, -1])
    b = ternary.pack(w)
    assert len(b) == 2 and ternary.unpack(b, 10).tolist() == [1, 1, 1, 1, 1, -1, -1, 0, 0, 0]


@pytest.mark.parametrize("bad", [2, -2, 127])
def test_pack_refuses_non_ternary_weights(bad):
    with pytest.raises(ValueError, match=f"index 3 is {bad}"):
        ternary.pack(np.array([0, 1, -1, bad, 0]))


@pytest.mark.parametrize("bad", [243, 250, 255])
def test_unpack_and_matvec_refuse_invalid_bytes(bad):
    b = np.array([10, bad, 20], np.uint8)
    with pytest.raises(ValueError, match=f"byte {bad} at index 1 is not a ternary encoding"):
        ternary.unpack(b, 15)
    with pytest.raises(ValueError, match=f"byte {bad}"):
        ternary.matvec(np.zeros(15, np.int8), b[None, :])


def test_matvec_against_a_plain_python_loop():
    rng = np.random.default_rng(3)
    x = rng.integers(-128, 128, size=40, dtype=np.int8)
    rows = rng.integers(0, 243, size=(17, 8), dtype=np.uint8)
    expected = []
    for row in rows:
        total = 0
        for j, byte in enumerate(int(v) for v in row):
            for k in range(5):  # digit k of byte j weighs x[5j + k]
                total += ((byte // 3**k) % 3 - 1) * int(x[5 * j + k])
        expected.append(total)
    assert ternary.matvec(x, rows).tolist() == expected
    assert ternary.matvec(x, rows, chunk=4).tolist() == expected  # chunking changes nothing


def test_matvec_hw_decodes_invalid_bytes_as_zero_and_counts_them():
    x = np.arange(1, 11, dtype=np.int8)
    rows = np.array([[ternary.pack(np.ones(5, int))[0], 250], [251, 255]], np.uint8)
    got, invalid = ternary.matvec_hw(x, rows)
    assert got.tolist() == [1 + 2 + 3 + 4 + 5, 0] and invalid == 3


def test_matvec_hw_equals_decoding_every_weight_at_full_row_width_and_extremes():
    """The table-gather matvec against the plain decode-and-multiply, on 512-byte rows with invalid
    bytes, x at -128 and +127 (the largest sums), and a chunk that does not divide the rows."""
    rng = np.random.default_rng(11)
    rows = rng.integers(0, 256, size=(301, 512), dtype=np.uint8)  # ~5% invalid bytes
    rows[0] = 242  # every weight +1
    rows[1] = 0  # every weight -1
    for x in (rng.integers(-128, 128, size=2560, dtype=np.int8), np.full(2560, -128, np.int8),
              np.full(2560, 127, np.int8)):
        decoded = ternary.DECODE[rows].reshape(301, 2560).astype(np.int64) @ x.astype(np.int64)
        got, invalid = ternary.matvec_hw(x, rows, chunk=64)
        assert got.dtype == np.int32 and got.tolist() == decoded.tolist()
        assert invalid == int((rows >= 243).sum())
    assert ternary.matvec_hw(np.full(2560, -128, np.int8), rows[:1])[0].tolist() == [-128 * 2560]


def test_invalid_bytes_come_at_the_asked_rate_in_distinct_places():
    f = frames.ternary_frame(np.random.default_rng(5), 4000, row_bytes=512, invalid_fraction=1e-3)
    w = f.stream[2560:]
    assert f.invalid == int((w >= 243).sum())
    assert abs(f.invalid - 2048) < 5 * 2048 ** 0.5  # binomial(2,048,000, 1e-3): mean 2,048, sd ~45
    assert set(np.unique(w[w >= 243]).tolist()) == set(range(243, 256))  # every invalid code appears


def test_int8_matvec_against_a_plain_python_loop_at_the_extremes():
    x = np.array([-128] * 512, np.int8)
    rows = np.stack([np.full(512, -128, np.int8), np.full(512, 127, np.int8)])
    assert int8.matvec(x, rows).tolist() == [512 * 128 * 128, -512 * 128 * 127]


def test_frames_put_x_at_the_head_and_whole_beats_after():
    rng = np.random.default_rng(0)
    f = frames.ternary_frame(rng, 3, row_bytes=16)
    assert f.stream.size == 5 * 16 + 3 * 16 and f.stream.size % 8 == 0
    x = f.stream[:80].view(np.int8)
    assert ternary.matvec(x, f.stream[80:].reshape(3, 16)).tolist() == f.expected.tolist()
    g = frames.int8_frame(rng, 2, row_bytes=8)
    assert int8.matvec(g.stream[:8].view(np.int8), g.stream[8:].view(np.int8).reshape(2, 8)).tolist() == g.expected.tolist()
    with pytest.raises(ValueError, match="multiple of 8"):
        frames.int8_frame(rng, 2, row_bytes=12)
