"""INT8 matrix-vector product: the stage-3 engine's arithmetic."""

from __future__ import annotations

import numpy as np


def matvec(x, rows, chunk: int = 2048) -> np.ndarray:
    """int32 dot product of each int8 row with the int8 vector x."""
    x = np.asarray(x, dtype=np.int8)
    rows = np.asarray(rows, dtype=np.int8)
    if rows.ndim != 2 or rows.shape[1] != x.size:
        raise ValueError(f"rows of shape {rows.shape} do not match x of {x.size} values")
    # float64 is exact: |sum| <= 512 * 128 * 128 = 2**23, far below 2**53.
    xf = x.astype(np.float64)
    out = np.empty(rows.shape[0], dtype=np.int32)
    for start in range(0, rows.shape[0], chunk):
        out[start : start + chunk] = (rows[start : start + chunk].astype(np.float64) @ xf).astype(np.int32)
    return out
