"""This checkout's cache key for one variant: what a worker's unit must carry to be taken (issue 36, item 4:
any reuse of a unit as this commit's build requires its cache_key.json to equal this checkout's key).

A unit's own cache_key.json only says what the worker claims to have built. The client makes the key itself,
the way the worker must have: the shipped tree (checked file by file, kabe.sweep.source.verified_copy), the
variant applied to a private copy (kabe.sweep.variant.apply), and the key computed there by that tree's own
kabe (kabe.build.cache_key, a child process whose project is the copy). The tree is this commit's, shipped by
this client, so its code is this checkout's code. Tool versions are in the key: a worker whose Yosys is
another version built from other inputs, and its unit is refused naming the difference.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from kabe.cache import cache
from kabe.sweep import source, variant

# run in the variant's copy, with that copy as the project and on sys.path first (as the worker's build runs)
_SCRIPT = ("import json, sys\nfrom kabe import build; from kabe.project import designs\n"
           "k = build.cache_key(designs.get(sys.argv[1]), sys.argv[2])\n"
           "print(json.dumps({'key': k.key, 'material': k.material}))\n")
TIMEOUT_S = 900


def variant_key(identity: dict, archive: bytes, design: str, core_file: str, xdc_file: str, flow: str,
                settings: dict, parent: Path | None = None) -> cache.CacheKey | str:
    """The key a build of this variant of the shipped tree has, or why it cannot be computed (a str: every
    unit of the variant is then refused, since nothing says what it was built from)."""
    parent = Path(parent or source.cache_root() / "keys")
    try:
        work = source.verified_copy(identity, archive, parent)
    except Exception as e:  # noqa: BLE001 - said as the reason, in one line
        return f"the shipped tree could not be copied: {type(e).__name__}: {str(e)[:200]}"
    try:
        try:
            variant.apply(work, core_file, xdc_file, settings)
        except Exception as e:  # noqa: BLE001 - the worker cannot build it either
            return f"the variant cannot be applied: {str(e)[:200]}"
        env = {**os.environ, "PYTHONPATH": str(work), "KABE_PROJECT": str(work)}
        env.pop("KABE_VARIANT", None)
        try:
            proc = subprocess.run([sys.executable, "-c", _SCRIPT, design, flow], cwd=work, env=env,
                                  capture_output=True, text=True, timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            return f"computing it took more than {TIMEOUT_S} s"
        lines = proc.stdout.strip().splitlines()
        if proc.returncode != 0 or not lines:
            said = (proc.stderr.strip().splitlines() or proc.stdout.strip().splitlines() or ["no output"])[-1]
            return f"computing it failed (exit {proc.returncode}): {said[:200]}"
        try:
            got = json.loads(lines[-1])
            return cache.CacheKey(str(got["key"]), dict(got["material"]))
        except (ValueError, KeyError, TypeError) as e:
            return f"computing it printed no key ({type(e).__name__})"
    finally:
        shutil.rmtree(work.parent, ignore_errors=True)
