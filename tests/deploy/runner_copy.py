"""The board runner as the host pushes it: board_runner.py with bitfile.py, pl_names.py and the model
package beside it in one folder, imported from there (it imports nothing of kabe)."""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path

from kabe.deploy import host


def copy(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for f in (host.RUNNER, host.BITFILE, host.PL_NAMES):
        shutil.copy(f, folder / f.name)
    shutil.copytree(host.MODEL_DIR, folder / "model", ignore=shutil.ignore_patterns("__pycache__"))
    return folder / host.RUNNER.name


def load(folder: Path):
    """Import the copied runner. Its own sys.path entry and the top-level `bitfile`, `pl_names` and
    `model` modules it brings in are removed again, so nothing leaks into other tests."""
    path = copy(folder)
    before = set(sys.modules)
    spec = importlib.util.spec_from_file_location(f"board_runner_copy_{abs(hash(folder))}", path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    finally:
        for name in set(sys.modules) - before:
            if name.split(".")[0] in ("bitfile", "pl_names", "model"):
                del sys.modules[name]
        while str(folder) in sys.path:
            sys.path.remove(str(folder))
    return module
