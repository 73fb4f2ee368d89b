"""The stage-2 bandwidth probe: what it reports for a frame of n bytes."""

from __future__ import annotations

import numpy as np

from .frame import BEAT_BYTES


def expected(frame_bytes: int, cycles: int | None = None) -> np.ndarray:
    """The probe's three result words (beats, bytes, cycles); cycles == beats when tvalid is held high."""
    if frame_bytes % BEAT_BYTES:
        raise ValueError(f"frame of {frame_bytes} bytes is not whole 8-byte beats")
    beats = frame_bytes // BEAT_BYTES
    return np.array([beats, frame_bytes, beats if cycles is None else cycles], dtype=np.uint64)
