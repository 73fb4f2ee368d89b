"""A JSON object that names a key twice is refused, not read: json.loads keeps the last value
silently, so a failing value followed by a passing one would pass. Which one was meant is a guess.
Used by every reader of JSON kabe judges (metrics.json, Vivado's timing_verdict.json)."""

from __future__ import annotations

from typing import Any

from kabe.base.errors import bounded


class DuplicateKey(ValueError):
    """One JSON object names a key twice."""


def one_value_per_key(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """json.loads's object_pairs_hook: the object as a dict, or DuplicateKey naming the key."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise DuplicateKey(f"key {bounded(key, 60)} appears twice in one object")
        out[key] = value
    return out
