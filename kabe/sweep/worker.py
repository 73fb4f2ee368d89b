"""The task a Dask worker runs: one variant's build, returned as its archive's bytes.

The build is the normal `kabe build` (simulation check, flow, gate, archive), run as a child process
in a scratch copy of the shipped tree with that tree's own kabe code, so a worker builds exactly the
commit it was sent, whatever kabe version the worker itself has installed. The child:
- dies with the worker, its tool processes with it: it runs under a shell that leads its own
  process group and gets SIGTERM when the worker dies (PR_SET_PDEATHSIG), and that shell passes the
  signal on to the whole group (the build, its Yosys, Verilator, make and g++), so a killed worker
  leaves nothing running;
- is stopped, with its whole process group, when the client cancels the sweep (a Dask Event);
- writes only into its scratch copy, which is deleted afterwards; the client alone writes reports/.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import shutil
import subprocess
import sys
import time
from collections import deque
from pathlib import Path

from kabe.sweep import source, variant

POLL_S = 1.0
_PR_SET_PDEATHSIG = 1


class Cancelled(Exception):
    """The client asked every running build to stop (Ctrl-C)."""


# The build's group leader. PR_SET_PDEATHSIG reaches one process only: were it set on the build, a
# killed worker would take the build down and leave its Yosys child running. This shell gets the
# signal instead and sends it to its process group (`kill 0`), once (the trap is removed first).
_GROUP_GUARD = 'trap "trap - TERM; kill 0" TERM; "$@" & wait $!'


def _die_with_parent() -> None:  # runs in the child between fork and exec
    os.setsid()  # its own process group: cancelling stops Yosys/Verilator too
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    except OSError:
        pass  # not Linux: a killed worker may leave its build to finish on its own


def _cancel_requested(event_name: str | None) -> bool:
    if not event_name:
        return False
    try:
        from distributed import Event

        return Event(event_name).is_set()
    except (ImportError, ValueError, OSError):
        return False


def _stop(proc: subprocess.Popen) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
            proc.wait(timeout=10)
            return
        except ProcessLookupError:
            return
        except subprocess.TimeoutExpired:
            continue


def _worker_address() -> str:
    try:
        from distributed import get_worker

        return get_worker().address
    except (ImportError, ValueError):
        return "local"


def collect_archive(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


def build_variant(identity: dict, archive: bytes, design: str, core_file: str, xdc_file: str, flow: str,
                  variant_id: str, settings: dict, *, cancel_event: str | None = None,
                  timeout_s: float = 6 * 3600) -> dict:
    """Build one variant; returns {identity, variant_id, rc, files, log_tail, worker, seconds}. A tool or
    input failure is a result (rc 2, no archive), not an exception: the sweep records it as failed."""
    t0 = time.monotonic()
    tree = source.unpack(identity, archive)
    held = source.read_marker(tree)
    if held != identity:  # never build another commit's tree, whatever is in the cache
        raise RuntimeError(f"tree cache holds {held} where {identity} was asked for")
    work = source.scratch_copy(tree, source.cache_root() / "scratch")
    try:
        tail: deque[str] = deque(maxlen=40)
        try:
            variant.apply(work, core_file, xdc_file, settings)
        except Exception as e:  # a setting the design cannot take: a failed variant
            return {"identity": held, "variant_id": variant_id, "rc": 2, "files": {}, "log_tail": [str(e)],
                    "worker": _worker_address(), "seconds": time.monotonic() - t0}
        env = {**os.environ, "PYTHONPATH": str(work), "COLUMNS": "200",
               "KABE_VARIANT": json.dumps({"id": variant_id, "settings": settings})}
        log = work / "sweep-build.log"
        with open(log, "w") as lf:
            build = [sys.executable, "-m", "kabe.cli", "build", design, "--flow", flow]
            proc = subprocess.Popen(["/bin/sh", "-c", _GROUP_GUARD, "kabe-build", *build], cwd=work,
                                    env=env, stdout=lf, stderr=subprocess.STDOUT, preexec_fn=_die_with_parent)
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
        archive_dir = work / "reports" / held["commit"] / design / flow
        files = collect_archive(archive_dir) if (archive_dir / "metrics.json").is_file() else {}
        return {"identity": held, "variant_id": variant_id, "rc": proc.returncode, "files": files,
                "log_tail": list(tail), "worker": _worker_address(), "seconds": time.monotonic() - t0}
    finally:
        shutil.rmtree(work.parent, ignore_errors=True)  # scratch only: the cache and reports/ stay
