"""A throwaway git repository with this checkout's files, for tests that commit or edit sources.

`make(dest)` copies every file git knows or would add (ignored files such as build/ and reports/
left out; tests/ too: no build reads it) into dest and commits it, so uncommitted work is tested
as it is. `kabe(clone, *args)` runs kabe's CLI there, on the clone's own code; with
`forbid_tools=True` any attempt to start Yosys, Verilator or the simulation harness raises inside
that process and every command it starts is logged, which is how a test proves that a cache hit
ran no tool.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GIT_ID = ["-c", "user.name=kabe test", "-c", "user.email=test@kabe.invalid", "-c", "commit.gpgsign=false"]

# Runs inside the clone's Python: log every command started; refuse the tools a cache hit must not run.
_GUARD = r"""
import json, subprocess, sys
log_path, forbid, argv = sys.argv[1], sys.argv[2] == "1", json.loads(sys.argv[3])
_real_init = subprocess.Popen.__init__
def _logged(self, args, *a, **kw):
    cmd = [str(x) for x in (args if isinstance(args, (list, tuple)) else [args])]
    with open(log_path, "a") as f:
        f.write(json.dumps(cmd) + "\n")
    # kabe.base.tool_group starts a tool as `/bin/sh -c <guard> kabe-tool <tool> ...`: judge the tool, not the shell
    prog = cmd[4:] if len(cmd) > 4 and cmd[3] == "kabe-tool" else cmd
    exe = prog[0].rsplit("/", 1)[-1]  # the program, not its arguments (paths may contain any word)
    if forbid and (any(w in exe for w in ("yosys", "verilator", "harness")) or any("yowasp" in c for c in prog[1:3])):
        raise RuntimeError("a tool was started although this build must not run one: " + " ".join(cmd))
    _real_init(self, args, *a, **kw)
subprocess.Popen.__init__ = _logged
from kabe import cli
sys.exit(cli.main(argv))
"""


def program(cmd: list[str]) -> list[str]:
    """A logged command as the tool it starts: kabe.base.tool_group wraps a tool in `/bin/sh -c <guard> kabe-tool`."""
    return cmd[4:] if len(cmd) > 4 and cmd[3] == "kabe-tool" else cmd


def git(clone: Path, *args: str) -> str:
    return subprocess.run(["git", *GIT_ID, *args], cwd=clone, check=True, capture_output=True, text=True).stdout.strip()


def make(dest: Path) -> Path:
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, check=True,
                            capture_output=True).stdout.decode().split("\0")
    dest.mkdir(parents=True, exist_ok=True)
    for rel in filter(None, listed):
        src = ROOT / rel
        if rel.startswith("tests/") or not src.is_file():
            continue
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dest / rel)
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=dest, check=True)
    git(dest, "add", "-A")
    git(dest, "commit", "-qm", "base")
    return dest


def commit_all(clone: Path, message: str) -> str:
    git(clone, "add", "-A")
    git(clone, "commit", "-qm", message)
    return git(clone, "rev-parse", "HEAD")


def env(clone: Path, **extra: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(clone), **extra}


def kabe(clone: Path, *args: str, forbid_tools: bool = False, log: Path | None = None,
         **extra_env: str) -> subprocess.CompletedProcess:
    log = log or clone / "build" / "commands.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    return subprocess.run([sys.executable, "-c", _GUARD, str(log), "1" if forbid_tools else "0", json.dumps(list(args))],
                          cwd=clone, env=env(clone, **extra_env), capture_output=True, text=True)


def python(clone: Path, code: str, **extra_env: str) -> str:
    """Run `code` with the clone's kabe; returns its stdout (raises with its stderr on failure)."""
    proc = subprocess.run([sys.executable, "-c", code], cwd=clone, env=env(clone, **extra_env),
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise AssertionError(f"in {clone}: {code}\n{proc.stderr[-2000:]}")
    return proc.stdout.strip()
