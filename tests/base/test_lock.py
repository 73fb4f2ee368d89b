"""kabe.base.lock: free at once says nothing; a held lock is said once, then waited for until released."""

from __future__ import annotations

import threading
import time

from kabe.base import lock


def test_a_free_lock_is_taken_at_once_without_a_word(tmp_path):
    said = []
    with open(tmp_path / "l", "a+") as f:
        assert lock.take(f, lambda: said.append("busy")) is None
    assert said == []


def test_a_held_lock_is_said_once_and_waited_for(tmp_path):
    said = []
    with open(tmp_path / "l", "a+") as holder, open(tmp_path / "l", "a+") as waiter:  # two open files: two locks
        assert lock.take(holder) is None
        threading.Timer(0.3, lock.release, (holder,)).start()
        t0 = time.monotonic()
        waited = lock.take(waiter, lambda: said.append("busy"))
        assert said == ["busy"]
        assert waited is not None and 0.2 < waited <= time.monotonic() - t0 + 0.01
