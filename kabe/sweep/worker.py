"""The task a Dask worker runs: one variant's build, returned as data: (the archive folder as a tar,
a JSON report) -- bytes and a str, nothing the client would have to unpickle (kabe.sweep.unit).

The build is the normal `kabe build` (simulation check, flow, gate, archive), run as a child process
in a scratch copy of the shipped tree with that tree's own kabe code, so a worker builds exactly the
commit it was sent, whatever kabe version the worker itself has installed. The child:
- dies with the worker, its tool processes with it: it runs in a process group tied to the worker
  (kabe.base.tool_group, the same guard every build puts around its own Yosys, make and g++), so a killed
  worker takes the build down and the build's groups take its tools down: nothing is left running;
- is stopped, with its whole process group, when the client cancels the sweep (a Dask Event);
- writes only into its scratch copy, which is deleted afterwards; the client alone writes reports/.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections import deque
from pathlib import Path

from kabe.base import tool_group
from kabe.base.paths import project_dirs
from kabe.sweep import source, unit, variant

POLL_S = 1.0


class Cancelled(Exception):
    """The client asked every running build to stop (Ctrl-C)."""


def _cancel_requested(event_name: str | None) -> bool:
    if not event_name:
        return False
    try:
        from distributed import Event

        return Event(event_name).is_set()
    except (ImportError, ValueError, OSError):
        return False


def _stop(proc: subprocess.Popen) -> None:
    tool_group.stop(proc)  # the whole group: SIGTERM, then SIGKILL after tool_group.GRACE_S


def build_variant(job: unit.Job, archive: bytes, *, cancel_event: str | None = None,
                  timeout_s: float = 6 * 3600) -> tuple[bytes, str]:
    """Build one variant (job: the tree's identity, the design and its files, the flow, the variant);
    archive: the shipped tree. Returns (unit, report): the archive folder as a tar (b"" when the build
    wrote none) and a JSON report {identity, variant_id, rc, log_tail, seconds}. A tool or input failure
    is a result (rc 2, no unit), not an exception: the sweep records it as a failed variant."""
    t0 = time.monotonic()
    try:
        return _build(job, archive, cancel_event, timeout_s, t0)
    except Cancelled:
        raise
    except Exception as e:  # noqa: BLE001 - said as data: an exception would travel as a pickle
        return unit.answer(b"", job.identity, job.variant_id, 2, [f"{type(e).__name__}: {e}"], time.monotonic() - t0)


def _build(job: unit.Job, archive: bytes, cancel_event: str | None, timeout_s: float,
           t0: float) -> tuple[bytes, str]:
    design, flow, variant_id, settings = job.design, job.flow, job.variant_id, job.settings
    identity = job.identity
    # never build another commit's tree, whatever is in the cache: the copy is checked file by file
    work = source.verified_copy(identity, archive, source.cache_root() / "scratch")
    held = source.read_marker(work)
    try:
        tail: deque[str] = deque(maxlen=40)
        try:
            variant.apply(work, job.core_file, job.xdc_file, settings)
        except Exception as e:  # a setting the design cannot take: a failed variant
            return unit.answer(b"", held, variant_id, 2, [str(e)], time.monotonic() - t0)
        env = {**os.environ, "PYTHONPATH": str(work), "KABE_PROJECT": str(work), "COLUMNS": "200",  # work is the project
               "KABE_VARIANT": json.dumps({"id": variant_id, "settings": settings})}
        log = work / "sweep-build.log"
        with open(log, "w") as lf:
            build = [sys.executable, "-m", "kabe.cli", "build", design, "--flow", flow]
            proc = tool_group.popen(build, cwd=work, env=env, stdout=lf, stderr=subprocess.STDOUT)
            while True:
                try:
                    proc.wait(timeout=POLL_S)
                    break
                except subprocess.TimeoutExpired:
                    pass
                if _cancel_requested(cancel_event):
                    _stop(proc)
                    raise Cancelled(f"variant {variant_id} cancelled")
                if time.monotonic() - t0 > timeout_s:
                    _stop(proc)
                    tail.append(f"stopped after {timeout_s:.0f} s")
                    break
        tail.extend(log.read_text(errors="replace").splitlines()[-40:])
        archive_dir = project_dirs(work)["reports_dir"] / held["commit"] / design / flow  # the tree's own [tool.kabe]
        packed = unit.pack(archive_dir) if (archive_dir / "metrics.json").is_file() else b""
        return unit.answer(packed, held, variant_id, proc.returncode, list(tail), time.monotonic() - t0)
    finally:
        shutil.rmtree(work.parent, ignore_errors=True)  # scratch only: the cache and reports/ stay
