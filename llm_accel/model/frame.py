"""One port's frame: the stream the DMA sends and the result words it must produce.

Its own module so every golden model can return one without importing the frame builders
(llm_accel.model.frames imports the models).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# The designs' stream beat: 64-bit tdata, 8 bytes (docs/streams.md; the PYNQ-Z1 profile's HP-port beat). The
# models stay numpy-only (the board runner imports them), so the number is written here, once.
BEAT_BYTES = 8


@dataclass(frozen=True)
class Frame:
    """One port's input stream and the result words it must produce."""

    stream: np.ndarray  # uint8, whole beats
    expected: np.ndarray  # result words (int32 for engines, uint64 for the probe)
    rows: int
    invalid: int = 0  # invalid ternary bytes in the stream (the engine's stat counter)
