"""Long runs as DMA-sized frames: what the board runner sends and the host fingerprints."""

import hashlib

import numpy as np

from llm_accel.model import frames, int8, ternary


def test_chunks_fit_the_transfer_and_repeat_x_at_each_head():
    max_bytes = 80 + 3 * 16  # x (5 x 16 B) + 3 rows of 16 B
    chunks = list(frames.chunks("ternary", 7, 0, 10, row_bytes=16, max_bytes=max_bytes, invalid_fraction=0.05))
    assert [c.rows for c in chunks] == [3, 3, 3, 1]
    assert all(c.stream.size <= max_bytes for c in chunks)
    x = chunks[0].stream[:80]
    for c in chunks:
        assert np.array_equal(c.stream[:80], x)
        expected, invalid = ternary.matvec_hw(c.stream[:80].view(np.int8), c.stream[80:].reshape(-1, 16))
        assert c.expected.tolist() == expected.tolist() and c.invalid == invalid
    assert sum(c.invalid for c in chunks) > 0


def test_chunks_are_deterministic_and_differ_per_port():
    def digest(port):
        h = hashlib.sha256()
        for c in frames.chunks("int8", 3, port, 100, row_bytes=8, max_bytes=8 + 30 * 8):
            assert c.expected.tolist() == int8.matvec(c.stream[:8].view(np.int8), c.stream[8:].view(np.int8).reshape(-1, 8)).tolist()
            h.update(c.stream)
        return h.hexdigest()

    assert digest(0) == digest(0) and digest(0) != digest(1)


def test_kinds_without_x_come_as_one_frame():
    (probe,) = frames.chunks("probe", 1, 0, 64, row_bytes=8, max_bytes=64)
    assert probe.stream.size == 64 * 8
