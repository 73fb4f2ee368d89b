"""The skip both HLS test files share: C-simulation needs g++ and the open HLS headers (kabe[hls])."""

from __future__ import annotations

import shutil

import pytest

from kabe.sim import hls_headers


def _have_headers() -> bool:
    try:
        hls_headers.find()
        return True
    except hls_headers.HeadersMissing:
        return False


needs_headers = pytest.mark.skipif(not _have_headers() or shutil.which("g++") is None,
                                   reason="needs g++ and the HLS headers: pip install -e '.[hls]'")
