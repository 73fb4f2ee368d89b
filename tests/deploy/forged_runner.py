"""A FORGED board runner for deploy tests: it checks nothing and prints whatever result it is told to.

`write(folder, overrides, exit_code)` writes `folder/board_runner.py`. On the board it builds the
result an honest runner would print for the arguments it got (rows, seed, the vectors' digest,
the commit word, the model's invalid-byte counts: all from the pushed model and bitfile, as the
real runner computes them), replaces the fields named in `overrides`, prints it as the last line
and exits with `exit_code`. The host's verdict must not depend on the board's honesty.
"""

from __future__ import annotations

import json
from pathlib import Path

_TEMPLATE = '''#!/usr/bin/env python3
"""FORGED board runner written by tests/deploy/forged_runner.py (kabe tests): checks nothing."""
import argparse, json, sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent))
import bitfile
from model import frames

ap = argparse.ArgumentParser()
for name in ("--kind", "--expect-commit", "--expect-vectors", "--bit", "--backend", "--result", "--sim-harness"):
    ap.add_argument(name, default="")
for name in ("--ports", "--rows", "--row-bytes", "--seed", "--transfer-mb"):
    ap.add_argument(name, type=int, default=0)
ap.add_argument("--invalid-fraction", type=float, default=0.0)
ap.add_argument("--expect-dirty", action="store_true")
ap.add_argument("--allow-dirty", action="store_true")
a, _ = ap.parse_known_args()
invalid = [0] * a.ports
for chunk in frames.port_chunks(a.kind, a.seed, a.ports, a.rows // a.ports, a.row_bytes, a.transfer_mb << 20,
                                a.invalid_fraction):
    for p, f in enumerate(chunk):
        invalid[p] += int(f.invalid)
commit = bitfile.describe_word(bitfile.commit_word(a.expect_commit, a.expect_dirty))
honest = {"design_kind": a.kind, "backend": "forged", "rows_checked": a.rows, "mismatches": 0,
          "first_mismatches": [], "problems": [], "passed": True,
          "stats": [{"invalid": n, "overflow": 0} for n in invalid], "seconds": 0.5, "gb_per_s": 1.0,
          "weights_per_s": None, "bit_commit": commit, "pl_commit": commit, "bit_part": "7z020clg400",
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
