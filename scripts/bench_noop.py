#!/usr/bin/env python3
"""How long `doit build:<design>` takes when there is nothing to build, and when the cache has it.

    python scripts/bench_noop.py [design] [--runs N] [--noop-only] [--bytecode-cache]   (default stage4, 7 runs)

- no-op: `doit build:<design> flow=open` in this checkout, up to date (made so first): doit's
  start, loading the task list, and the up-to-date check (the build's content key) for one design.
- cache hit: in a temporary clone of this checkout (its files as they are, committed there), one
  cold build, then per run a docs-only commit and `doit build:<design> flow=open`: the key, the
  lookup, the re-gate and the archive under the new commit, with no tool started.

- list: bare `doit list`, one run after each no-op run (interleaved: both see the same load).

Prints every run's wall time and the median of each (issue 40's bar: no-op <= 0.3 s and <= 1.5x bare
`doit list`, hit <= 0.6 s on a 2-core machine), the median CPU time (user + system: what the run costs, whatever else the
machine is doing), the number of interleaved runs, and the 1-minute load average before and after, since
other people share these cores.

Python's bytecode cache: the runs inherit the environment; with PYTHONDONTWRITEBYTECODE set (as in some
sandboxes) no __pycache__ is written and every run compiles each kabe module it imports again (about
0.1 s of CPU on a cache hit), which a user's Python does not. The script says which it was;
--bytecode-cache runs without PYTHONDONTWRITEBYTECODE (Python's default: each run after the first
reads the compiled modules), for the number a user sees.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GIT_ID = ["-c", "user.name=kabe bench", "-c", "user.email=bench@kabe.invalid", "-c", "commit.gpgsign=false"]


CPU: list[float] = []  # CPU seconds (user + system) of each timed run, children included
ENV = dict(os.environ)  # the runs' environment (--bytecode-cache drops PYTHONDONTWRITEBYTECODE)


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _doit(cwd: Path, design: str) -> tuple[float, str]:
    env = {**ENV, "PYTHONPATH": str(cwd)}
    c0, t0 = _cpu(), time.monotonic()
    out = subprocess.run([sys.executable, "-m", "doit", f"build:{design}", "flow=open"], cwd=cwd, env=env,
                         capture_output=True, text=True)
    elapsed = time.monotonic() - t0
    CPU.append(_cpu() - c0)
    if out.returncode != 0:
        raise SystemExit(f"doit build:{design} failed in {cwd}:\n{out.stdout[-2000:]}{out.stderr[-2000:]}")
    return elapsed, out.stdout


def _doit_list(cwd: Path) -> float:
    env = {**ENV, "PYTHONPATH": str(cwd)}
    c0, t0 = _cpu(), time.monotonic()
    out = subprocess.run([sys.executable, "-m", "doit", "list"], cwd=cwd, env=env, capture_output=True, text=True)
    elapsed = time.monotonic() - t0
    LIST_CPU.append(_cpu() - c0)
    if out.returncode != 0:
        raise SystemExit(f"doit list failed in {cwd}:\n{out.stdout[-2000:]}{out.stderr[-2000:]}")
    return elapsed


LIST_CPU: list[float] = []


def noop(design: str, runs: int) -> tuple[list[float], list[float]]:
    """The no-op and bare `doit list`, interleaved (one of each per round), so that both see the same load."""
    _doit(ROOT, design)  # make it up to date first (may build)
    _doit_list(ROOT)
    times, lists = [], []
    for _ in range(runs):
        t, out = _doit(ROOT, design)
        if not out.lstrip().startswith("--"):  # doit prints "-- build:x" for an up-to-date task
            raise SystemExit(f"doit build:{design} was not a no-op:\n{out[-800:]}")
        times.append(t)
        lists.append(_doit_list(ROOT))
    return times, lists


def _clone(dest: Path) -> Path:
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, check=True,
                            capture_output=True).stdout.decode().split("\0")
    for rel in filter(None, listed):
        if rel.startswith("tests/") or not (ROOT / rel).is_file():
            continue
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, dest / rel)
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=dest, check=True)
    _commit(dest, "bench base")
    return dest


def _commit(repo: Path, message: str) -> None:
    subprocess.run(["git", *GIT_ID, "add", "-A"], cwd=repo, check=True)
    subprocess.run(["git", *GIT_ID, "commit", "-qm", message], cwd=repo, check=True)


def _docs_commit(repo: Path, what: str) -> None:
    with open(repo / "docs" / "bench_note.md", "a") as f:
        f.write(f"docs-only change {what}\n")
    _commit(repo, f"docs only {what}")


def cache_hits(design: str, runs: int) -> tuple[float, list[float]]:
    with tempfile.TemporaryDirectory(prefix="kabe-bench-") as tmp:
        repo = _clone(Path(tmp) / "repo")
        cold, _ = _doit(repo, design)
        times = []
        _docs_commit(repo, "warm-up")  # one untimed hit: a --bytecode-cache run compiles its modules here
        _doit(repo, design)
        for i in range(runs):
            _docs_commit(repo, str(i))
            t, out = _doit(repo, design)
            if "cache hit" not in out:
                raise SystemExit(f"run {i}: doit build:{design} after a docs-only commit was no cache hit:\n{out[-1500:]}")
            times.append(t)
        return cold, times


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("design", nargs="?", default="stage4")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--noop-only", action="store_true", help="skip the cold build and the cache hits")
    ap.add_argument("--bytecode-cache", action="store_true",
                    help="run without PYTHONDONTWRITEBYTECODE (Python's default, what a user has)")
    args = ap.parse_args(argv)
    if args.runs < 5:
        ap.error("--runs must be at least 5 (a median of fewer says little on a shared machine)")
    if args.bytecode_cache:
        ENV.pop("PYTHONDONTWRITEBYTECODE", None)
    print(f"load average before: {os.getloadavg()[0]:.2f} (1 min; {os.cpu_count()} cores); {args.runs} "
          f"interleaved runs each")
    print("bytecode cache: " + ("off (PYTHONDONTWRITEBYTECODE is set: every run compiles kabe's modules again)"
                                if ENV.get("PYTHONDONTWRITEBYTECODE") else "on (Python's default)"))
    n, lists = noop(args.design, args.runs)
    n_cpu, l_cpu = CPU[-args.runs:], LIST_CPU[-args.runs:]
    print(f"no-op   doit build:{args.design}: wall " + " ".join(f"{t:.3f}" for t in n)
          + f"  median {statistics.median(n):.3f} s (CPU median {statistics.median(n_cpu):.3f} s)")
    print(f"list    doit list (interleaved):  wall " + " ".join(f"{t:.3f}" for t in lists)
          + f"  median {statistics.median(lists):.3f} s (CPU median {statistics.median(l_cpu):.3f} s)")
    print(f"ratio   no-op / doit list: wall {statistics.median(n) / statistics.median(lists):.2f}x, "
          f"CPU {statistics.median(n_cpu) / statistics.median(l_cpu):.2f}x (the issue's bar: <= 1.5x)")
    if args.noop_only:
        print(f"load average after: {os.getloadavg()[0]:.2f} (1 min)")
        return 0
    cold, h = cache_hits(args.design, args.runs)
    h_cpu = CPU[-args.runs:]
    print(f"cold    doit build:{args.design} in a fresh clone: {cold:.1f} s")
    print(f"hit     doit build:{args.design} after a docs-only commit: wall " + " ".join(f"{t:.3f}" for t in h)
          + f"  median {statistics.median(h):.3f} s (CPU median {statistics.median(h_cpu):.3f} s)")
    print(f"hit / no-op: wall {statistics.median(h) / statistics.median(n):.2f}x (the issue's bar for the hit: "
          f"<= 0.6 s)")
    print(f"load average after: {os.getloadavg()[0]:.2f} (1 min); runs: {args.runs} no-op, {args.runs} list "
          f"(interleaved), {args.runs} hits")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
