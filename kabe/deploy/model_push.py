"""What the board needs of the project to run its golden model: the model's module and every module of
the project it imports (the same closure the cache key hashes), kabe/verify.py (the model API, numpy
only) under an empty kabe/__init__.py, and the design's Context as JSON. Pushed under project/ beside
the board runner, each file at its path relative to the project root."""

from __future__ import annotations

import contextlib
import json
import tempfile
from pathlib import Path

from kabe.project import designs
from kabe.base import python_imports
from kabe.base.paths import PACKAGE
from kabe.verify import Context

CONTEXT_FILE = "context.json"
VERIFY = PACKAGE / "verify.py"


def files(design: designs.Design, root: Path) -> dict[str, Path]:
    """Relative path under project/ -> the file to push."""
    from kabe.cache.cache import model_path

    out: dict[str, Path] = {}
    for src in designs.verify_sources(design, root):
        found = python_imports.closure(src, design.verify.value.split(":")[0], model_path(design, src, root),
                                       [root, design.directory])
        for f in found.files:
            if f.is_relative_to(PACKAGE.resolve()):
                continue  # kabe's own modules: only kabe/verify.py goes, below
            base = root.resolve() if f.is_relative_to(root.resolve()) else design.directory.resolve()
            out[f.relative_to(base).as_posix()] = f
    out["kabe/verify.py"] = VERIFY
    return out


@contextlib.contextmanager
def staged(pushed: dict[str, Path], context: Context):
    """(remote folder under project/ -> its files, the context file): the files grouped by folder, since
    a push copies files into one folder; the stub kabe/__init__.py and the context written to a temp folder."""
    with tempfile.TemporaryDirectory(prefix="kabe-push-") as tmp:
        tmp = Path(tmp)
        (tmp / "kabe").mkdir()
        (tmp / "kabe" / "__init__.py").write_text('"""kabe\'s model API on the board: kabe/verify.py only."""\n')
        folders: dict[str, list[Path]] = {"kabe": [tmp / "kabe" / "__init__.py"]}
        for rel, f in sorted(pushed.items()):
            parent = Path(rel).parent.as_posix()
            folders.setdefault("" if parent == "." else parent, []).append(f)
        context_file = tmp / CONTEXT_FILE
        context_file.write_text(json.dumps({"inputs": dict(context.inputs), "outputs": dict(context.outputs),
                                            "status": dict(context.status), "options": dict(context.options)}))
        yield folders, context_file
