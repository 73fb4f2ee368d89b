"""A metrics.json that is not a regular file (a FIFO, /dev/zero) is refused in one line, at once: the
archive re-gate and `kabe gate x.json` read records through kabe.records.metrics.load (issue 37, item 6)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from kabe.base import regular_file
from kabe.records import metrics


def test_a_fifo_named_metrics_json_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "metrics.json"
    os.mkfifo(fifo)
    t0 = time.monotonic()
    with pytest.raises(metrics.MetricsError, match="is not a regular file \\(a FIFO\\)"):
        metrics.load(fifo)
    assert time.monotonic() - t0 < 5


def test_dev_zero_is_refused_and_a_big_file_too(tmp_path):
    with pytest.raises(metrics.MetricsError, match="character device"):
        metrics.load("/dev/zero")
    big = tmp_path / "metrics.json"
    big.write_bytes(b" " * (metrics.MAX_RECORD_BYTES + 1))
    with pytest.raises(metrics.MetricsError, match="larger than"):
        metrics.load(big)


def test_kabe_gate_on_a_fifo_json_is_one_line_exit_2(tmp_path):
    fifo = tmp_path / "metrics.json"
    os.mkfifo(fifo)
    r = subprocess.run([sys.executable, "-m", "kabe", "gate", str(fifo)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "not a regular file" in r.stderr and "Traceback" not in r.stderr


def test_read_returns_the_bytes_of_a_regular_file_up_to_the_cap(tmp_path):
    f = tmp_path / "x"
    f.write_bytes(b"abc")
    assert regular_file.read(f, 3) == b"abc"
    with pytest.raises(regular_file.NotReadable) as e:
        regular_file.read(f, 2)
    assert e.value.why == "too_big"
