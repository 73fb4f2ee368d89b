"""One output stream's words against the golden model's: the comparison the Verilator harness
(kabe.sim.runner) and the HLS C-simulation (kabe.sim.csim) share."""

from __future__ import annotations

import numpy as np

MAX_SHOWN_MISMATCHES = 10


def _show(word, signed: bool, bits: int) -> str:
    """A beat as it is on the wire: hex, as many digits as the port is wide (so two beats line up digit by
    digit), and its signed value after it when the model's array is signed: '0xfffffffd (-3)'."""
    if np.ndim(word):
        w = 0
        for part in reversed(word):
            w = (w << 64) | int(part)
    else:
        w = int(word)
    w &= (1 << bits) - 1
    text = f"0x{w:0{(bits + 3) // 4}x}"
    if signed and not np.ndim(word):
        text += f" ({w - (1 << bits) if w >= 1 << (bits - 1) else w})"
    return text


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
        first.append({"port": name, "beat": int(i), "expected": _show(expected[i], signed, bits),
                      "got": _show(got[i], signed, bits)})
    missing = max(0, expected.shape[0] - got.shape[0])
    extra = max(0, got.shape[0] - expected.shape[0])
    if missing:
        problems.append(f"{name}: {missing} of {expected.shape[0]} result beats never came out")
        if len(first) < MAX_SHOWN_MISMATCHES:
            first.append({"port": name, "beat": int(got.shape[0]),
                          "expected": _show(expected[got.shape[0]], signed, bits), "got": None})
    if extra:
        problems.append(f"{name}: {extra} extra result beat(s) after the expected {expected.shape[0]}")
    want_tlast = [int(expected.shape[0]) - 1] if expected.shape[0] else []
    if summary["tlast_at"] != want_tlast:
        shown = summary["tlast_at"][:5]
        problems.append(f"{name}: tlast on beat(s) {shown}{' ...' if len(summary['tlast_at']) > 5 else ''}, "
                        f"expected exactly on beat {want_tlast} (the last result)")
    return int(bad.size) + missing + extra
