"""The board runner as the host pushes it: board_runner.py with bitfile.py, pl_names.py and
board_frames.py beside it, and kabe/verify.py (the model API) under project/, imported from there."""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path

from kabe.deploy import host, model_push


def copy(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for f in (host.RUNNER, host.BITFILE, host.PL_NAMES, host.BOARD_FRAMES):
        shutil.copy(f, folder / f.name)
    (folder / "project" / "kabe").mkdir(parents=True, exist_ok=True)
    (folder / "project" / "kabe" / "__init__.py").write_text("")
    shutil.copy(model_push.VERIFY, folder / "project" / "kabe" / "verify.py")
    return folder / host.RUNNER.name


def load(folder: Path):
    """Import the copied runner. Its own sys.path entries and the top-level `bitfile`, `pl_names` and
    `board_frames` modules it brings in are removed again, so nothing leaks into other tests."""
    path = copy(folder)
    before = set(sys.modules)
    spec = importlib.util.spec_from_file_location(f"board_runner_copy_{abs(hash(folder))}", path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    finally:
        for name in set(sys.modules) - before:
            if name.split(".")[0] in ("bitfile", "pl_names", "board_frames"):
                del sys.modules[name]
        for entry in (str(folder), str(folder / "project")):
            while entry in sys.path:
                sys.path.remove(entry)
    return module
