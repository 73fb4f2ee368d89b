"""The wheel is the tool: built from this repository with its project beside it (llm_accel/, cores/), it
holds kabe and kabe's package data only: no golden model of a design, no study (the wall, the token
budget, the V80 what-if, their figures), no design of this repository."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
# what must stay out, by the names `unzip -l` shows
DESIGNS = sorted(p.parent.name for p in (REPO / "cores").glob("*/design.yaml"))
FOLDERS = {"llm_accel", "model", "perf"}
STUDY_STEMS = ("wall", "token_budget", "whatif", "v80_engine", "figures", "plots")
MODELS = {"probe.py", "int8.py", "ternary.py", "attention.py", "frames.py", "frame.py", "v80_ternary.py"}


def _project_file(name: str) -> bool:
    parts = name.split("/")
    stem = parts[-1].rsplit(".", 1)[0]
    return (bool(FOLDERS & set(parts[:-1])) or parts[-1] in MODELS or any(s in stem for s in STUDY_STEMS)
            or any(re.search(rf"(^|[/_.-]){re.escape(d)}([/_.-]|$)", name) for d in DESIGNS))


def _tree(dest: Path) -> Path:
    """The files git knows of the tool and of this project's study and designs, as a source tree."""
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=REPO, capture_output=True,
                            text=True, check=True).stdout.splitlines()
    for rel in listed:
        if rel in ("pyproject.toml", "README.md") or rel.split("/")[0] in ("kabe", "llm_accel", "cores"):
            src = REPO / rel
            if src.is_file():
                (dest / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(src, dest / rel)
    return dest


def test_the_wheel_holds_no_model_study_or_design(tmp_path):
    assert importlib.util.find_spec("wheel"), "the wheel package is missing: pip install -e '.[test]' (test extra)"
    src = _tree(tmp_path / "src")
    assert (src / "llm_accel" / "model" / "frames.py").is_file()  # the project is there to leave out
    p = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w",
                        str(tmp_path / "dist"), str(src)], capture_output=True, text=True,
                       env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    assert p.returncode == 0, p.stderr[-2000:]
    wheel = next((tmp_path / "dist").glob("kabe-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert "kabe/verify.py" in names and "kabe/cli.py" in names  # the tool and the model API are in it
    bad = [n for n in names if _project_file(n)]
    assert bad == [], f"{wheel.name} holds the project's files: {bad[:20]}"
    assert all(n.startswith(("kabe/", "kabe-")) for n in names), [n for n in names if not n.startswith("kabe")]
    # the board profiles carry board facts, no study figure (the measured wall lives with the study)
    profiles = [n for n in names if n.startswith("kabe/boards/profiles/")]
    with zipfile.ZipFile(wheel) as z:
        for n in profiles:
            text = z.read(n).decode()
            assert "1.97" not in text and "seeds/" not in text, n
