"""Where the HLS headers (ap_int.h, ap_fixed.h, hls_stream.h) are, for a C-simulation with g++.

AMD publishes them as open source, and two installs carry them: Vitis HLS itself (<install>/include,
found through XILINX_HLS or vitis_hls/vitis-run on PATH) and the hls4ml package on PyPI
(hls4ml/templates/vivado/ap_types/), which `pip install kabe[hls]` brings. KABE_HLS_INCLUDE names a
folder explicitly. The package is found without importing it (hls4ml's import pulls in its own
dependencies, which the headers do not need).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path

from kabe.base.errors import UserError

HEADERS = ("ap_int.h", "hls_stream.h")
EXTRA = "hls"  # pip install kabe[hls]


class HeadersMissing(UserError):
    """No folder with the HLS headers: one line with the fix."""


def _has_headers(folder: Path) -> bool:
    return all((folder / h).is_file() for h in HEADERS)


def candidates() -> list[tuple[str, Path]]:
    """(where it came from, folder) in the order they are tried."""
    out: list[tuple[str, Path]] = []
    if os.environ.get("KABE_HLS_INCLUDE"):
        out.append(("KABE_HLS_INCLUDE", Path(os.environ["KABE_HLS_INCLUDE"])))
    if os.environ.get("XILINX_HLS"):
        out.append(("XILINX_HLS", Path(os.environ["XILINX_HLS"]) / "include"))
    for exe in ("vitis_hls", "vitis-run"):
        found = shutil.which(exe)
        if found:  # <install>/bin/vitis_hls -> <install>/include
            out.append((exe, Path(found).resolve().parent.parent / "include"))
    spec = importlib.util.find_spec("hls4ml")
    if spec is not None and spec.submodule_search_locations:
        for loc in spec.submodule_search_locations:
            out.append(("hls4ml", Path(loc) / "templates" / "vivado" / "ap_types"))
    return out


def find() -> tuple[str, Path]:
    """(source, folder) of the first candidate that has the headers; HeadersMissing with the fix."""
    tried = candidates()
    for source, folder in tried:
        if _has_headers(folder):
            return source, folder
    if os.environ.get("KABE_HLS_INCLUDE"):
        raise HeadersMissing(f"KABE_HLS_INCLUDE={os.environ['KABE_HLS_INCLUDE']} has no {' and '.join(HEADERS)}; "
                             f"point it at a folder with the HLS headers, or unset it")
    raise HeadersMissing(f"the C-simulation of an HLS design needs the HLS headers ({', '.join(HEADERS)}), and "
                         f"neither Vitis HLS nor the hls4ml package is here. Fix: pip install 'kabe[{EXTRA}]' "
                         f"(hls4ml ships them), or set KABE_HLS_INCLUDE to a folder that has them")
