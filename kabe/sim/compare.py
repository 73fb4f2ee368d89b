"""One output stream's words against the golden model's: the comparison the Verilator harness
(kabe.sim.runner) and the HLS C-simulation (kabe.sim.csim) share."""

from __future__ import annotations

import numpy as np

MAX_SHOWN_MISMATCHES = 10


def _show(word, signed: bool, bits: int):
    """A beat as a person reads it: signed when the model's array is, hex over 64 bits."""
    if np.ndim(word):
        return "0x" + "".join(f"{int(w):016x}" for w in reversed(word)).lstrip("0").rjust(1, "0")
    w = int(word)
    return w - (1 << bits) if signed and w >= 1 << (bits - 1) else w


def _mask_top(words: np.ndarray, bits: int) -> np.ndarray:
    """Bits above the port's width are not the design's (a wide port's last word is zero-filled)."""
    if bits % 64 == 0:
        return words
    mask = np.uint64((1 << (bits % 64)) - 1)
    if words.ndim == 1:
        return words & mask
    out = words.copy()
    out[:, -1] &= mask
    return out


def compare_output(name: str, bits: int, expected: np.ndarray, signed: bool, got: np.ndarray, summary: dict,
                   first: list, problems: list) -> int:
    """Mismatching beats on one output stream (value differences + missing + extra); fills first/problems."""
    n = min(expected.shape[0], got.shape[0])
    got_cmp = _mask_top(got[:n], bits)
    diff = got_cmp != expected[:n]
    bad = np.flatnonzero(diff if diff.ndim == 1 else diff.any(axis=1))
    for i in bad[: max(0, MAX_SHOWN_MISMATCHES - len(first))]:
        first.append({"port": name, "row": int(i), "expected": _show(expected[i], signed, bits),
                      "got": _show(got[i], signed, bits)})
    missing = max(0, expected.shape[0] - got.shape[0])
    extra = max(0, got.shape[0] - expected.shape[0])
    if missing:
        problems.append(f"{name}: {missing} of {expected.shape[0]} result beats never came out")
        if len(first) < MAX_SHOWN_MISMATCHES:
            first.append({"port": name, "row": int(got.shape[0]),
                          "expected": _show(expected[got.shape[0]], signed, bits), "got": None})
    if extra:
        problems.append(f"{name}: {extra} extra result beat(s) after the expected {expected.shape[0]}")
    want_tlast = [int(expected.shape[0]) - 1] if expected.shape[0] else []
    if summary["tlast_at"] != want_tlast:
        shown = summary["tlast_at"][:5]
        problems.append(f"{name}: tlast on beat(s) {shown}{' ...' if len(summary['tlast_at']) > 5 else ''}, "
                        f"expected exactly on beat {want_tlast} (the last result)")
    return int(bad.size) + missing + extra
