"""A FORGED board runner for deploy tests: it checks nothing and prints whatever result it is told to.

`write(folder, overrides, exit_code)` writes `folder/board_runner.py`. On the board it builds the
result an honest runner would print for the arguments it got (rows, seed, the vectors' digest,
the commit word, the model's status: all from the pushed model, board_frames and bitfile, as the
real runner computes them), replaces the fields named in `overrides`, prints it as the last line
and exits with `exit_code`. The host's verdict must not depend on the board's honesty.
"""

from __future__ import annotations

import json
from pathlib import Path

_TEMPLATE = '''#!/usr/bin/env python3
"""FORGED board runner written by tests/deploy/forged_runner.py (kabe tests): checks nothing."""
import argparse, hashlib, importlib, json, sys
from pathlib import Path
HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE / "project")]
import bitfile, board_frames
from kabe.verify import Context, declared

ap = argparse.ArgumentParser()
for name in ("--model", "--context", "--expect-commit", "--expect-vectors", "--expect-part", "--bit", "--backend",
             "--result", "--sim-harness"):
    ap.add_argument(name, default="")
for name in ("--size", "--seed", "--transfer-mb"):
    ap.add_argument(name, type=int, default=None)
ap.add_argument("--expect-dirty", action="store_true")
ap.add_argument("--allow-dirty", action="store_true")
a, _ = ap.parse_known_args()
module, _, func = a.model.partition(":")
fn = getattr(importlib.import_module(module), func)
c = json.loads(Path(a.context).read_text())
context = Context(inputs=c["inputs"], outputs=c["outputs"], status=c["status"], options=c["options"])
status, checked = {}, 0
for _, _, st, n in board_frames.draw(fn, declared(fn), a.seed, a.size, context, a.transfer_mb << 20):
    checked += n
    for k, v in st.items():
        status[k] = status.get(k, 0) + v
commit = bitfile.describe_word(bitfile.commit_word(a.expect_commit, a.expect_dirty))
honest = {"model": a.model, "backend": "forged", "rows_checked": checked, "mismatches": 0,
          "first_mismatches": [], "problems": [], "passed": True,
          "status": status, "seconds": 0.5, "gb_per_s": 1.0,
          "bit_commit": commit, "pl_commit": commit, "bit_part": "7z020clg400",
          "vectors_sha256": a.expect_vectors, "seed": a.seed, "host": "forged", "numpy": "n/a"}
OVERRIDES = json.loads(%(overrides)r)
DROP = %(drop)r
honest.update(OVERRIDES)
for k in DROP:
    honest.pop(k, None)
print(%(printed)s)
sys.exit(%(exit_code)d)
'''


def write(folder: Path, overrides: dict | None = None, exit_code: int = 0, drop: tuple[str, ...] = (),
          raw_stdout: str | None = None) -> Path:
    """The forged runner in folder/board_runner.py (the name the host runs). raw_stdout replaces the JSON line."""
    folder.mkdir(parents=True, exist_ok=True)
    printed = repr(raw_stdout) if raw_stdout is not None else "json.dumps(honest)"
    (folder / "board_runner.py").write_text(_TEMPLATE % {"overrides": json.dumps(overrides or {}), "drop": list(drop),
                                                         "printed": printed, "exit_code": exit_code})
    return folder / "board_runner.py"
