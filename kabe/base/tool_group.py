"""A build's tools die with the build: every tool process runs in a process group tied to its kabe.

kill -9 of `doit` alone (not its group) used to leave make, cc1plus and Yosys running, and the rerun
took the build folder while they still wrote there. Now each tool (Yosys, Verilator's make and g++,
the simulation, Vivado's make, FuseSoC) starts under a small shell that
- leads a process group of its own (a new session: a Ctrl-C at the terminal reaches kabe, which
  stops the group, not the tool behind kabe's back);
- gets SIGTERM when the kabe process that started it dies (PR_SET_PDEATHSIG). The signal reaches one
  process only: set on make, make would die and leave its g++ running; set on this shell, the shell
  passes it to the whole group (`kill 0`, once: it ignores its own copy);
- when the tool exits, stops whatever the tool left behind in its group, so nothing outlives the call.

Locks held for a build (kabe.base.scratch.exclusive's flock on build/<design>/<flow>/, Verilator's compile
lock) are registered with `inherited()` and every tool started meanwhile holds them too: an flock
belongs to the open file, which the tool processes share, so the kernel releases it only when the last
of them exits. A rerun after a kill -9 waits for the old build's tools instead of building beside them.

kabe.sweep.worker runs each variant's whole `kabe build` the same way, so a killed Dask worker takes its
build, and through the build's own groups its tools, with it.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import shutil
import signal
import subprocess
import time
from typing import Any, Iterator, Sequence

_PR_SET_PDEATHSIG = 1
GRACE_S = 10.0  # after SIGTERM, how long a tool gets to exit before the group is killed

# The group leader. "$@" runs in the background so that the shell, not the tool, waits: a trapped signal
# interrupts `wait` at once (it would wait for a foreground command first).
GROUP_GUARD = ('trap \'trap "" TERM; kill 0; exit 143\' TERM; '
               '"$@" & wait $!; rc=$?; trap "" TERM; kill 0 2>/dev/null; exit $rc')

try:  # resolved here, not in the child: between fork and exec the child should load nothing
    _prctl: Any = ctypes.CDLL(None, use_errno=True).prctl
except (OSError, AttributeError):  # not Linux: a killed kabe may leave its tools to finish on their own
    _prctl = None

_HELD: list[int] = []  # lock fds every tool started now inherits (see inherited())


@contextlib.contextmanager
def inherited(fd: int) -> Iterator[None]:
    """While the block runs, every tool started by this process holds `fd` (a lock) open as well."""
    _HELD.append(fd)
    try:
        yield
    finally:
        _HELD.remove(fd)


def held_fds() -> tuple[int, ...]:
    return tuple(dict.fromkeys(_HELD))


def _die_with(parent: int) -> None:
    """In the child, between fork and exec (start_new_session has already made it a group leader)."""
    if _prctl is not None:
        _prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
    if os.getppid() != parent:  # kabe died before prctl took effect: no signal will come
        os._exit(143)


def popen(argv: Sequence[str], **kw: Any) -> subprocess.Popen:
    """subprocess.Popen(argv, **kw), with the tool in a group that dies with this process and holds its
    build locks. A tool that is not installed raises FileNotFoundError, as Popen would. The exit status
    of a tool killed by signal N is 128 + N (the shell's), not -N. Its stdin is /dev/null (a background
    command's, in sh): kabe's tools read files, never a terminal. The signal comes when the *thread*
    that started the tool ends (prctl's rule), so start a tool from a thread that waits for it."""
    for own in ("preexec_fn", "start_new_session", "pass_fds", "close_fds", "shell", "stdin"):
        if own in kw:
            raise TypeError(f"tool_group.popen sets {own} itself")
    argv = [str(a) for a in argv]
    if shutil.which(argv[0], path=(kw.get("env") or os.environ).get("PATH")) is None and not os.path.isfile(argv[0]):
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), argv[0])
    parent = os.getpid()
    return subprocess.Popen(["/bin/sh", "-c", GROUP_GUARD, "kabe-tool", *argv], start_new_session=True,
                            pass_fds=held_fds(), preexec_fn=lambda: _die_with(parent), **kw)


def _leader_exited(proc: subprocess.Popen) -> bool:
    """The leader has exited; it stays an unreaped zombie, so its pid (the group's id) is not reused."""
    if proc.returncode is not None:
        return True
    try:
        return os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT | os.WNOHANG) is not None
    except ChildProcessError:
        return True


def stop(proc: subprocess.Popen, grace_s: float = GRACE_S) -> None:
    """SIGTERM the tool's group, SIGKILL whatever is left after grace_s, then reap the leader."""
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        deadline = time.monotonic() + grace_s
        while not _leader_exited(proc) and time.monotonic() < deadline:
            time.sleep(0.05)
        if proc.returncode is None:  # not reaped yet: the group id is still the leader's own
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def run(argv: Sequence[str], *, timeout: float | None = None, capture_output: bool = False,
        **kw: Any) -> subprocess.CompletedProcess:
    """subprocess.run for a tool: on a timeout, an exception or Ctrl-C the whole group is stopped (not only
    its first process) before the exception goes on."""
    if capture_output:
        kw["stdout"] = kw["stderr"] = subprocess.PIPE
    with popen(argv, **kw) as proc:
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            stop(proc)
            raise subprocess.TimeoutExpired(list(argv), timeout) from None
        except BaseException:
            stop(proc)
            raise
    return subprocess.CompletedProcess(list(argv), proc.returncode, out, err)
