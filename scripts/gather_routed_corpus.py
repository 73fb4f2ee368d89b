#!/usr/bin/env python3
"""Gather the routed Vivado reports the timing calibration reads from ../shared/routed-more (issue 25).

    python scripts/gather_routed_corpus.py --clone               git clone each repository (needs the
                                                                 network), take the file at its commit
    python scripts/gather_routed_corpus.py --mirrors DIR         ... from git directories already on disk:
                                                                 DIR/<owner>+<name>/repo (a bare snapshot,
                                                                 or a clone with .git inside)
    python scripts/gather_routed_corpus.py ... --out DIR         write there instead of ../shared/routed-more

The reports are public repositories' files, never this repository's: scripts/routed_more_sources.tsv
names each one (repository, commit, path) with the sha256 that kabe/timing/fitted_constants.py
records, and a file is written only when its bytes hash to it (atomically, so a half-written report
never looks gathered). SOURCES.md is written beside them in the table form calibrate_timing.py
reads (a row's repository is its design). A report that cannot be had is named, with why, and the
rest are still written; the exit code is then 2.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SOURCES = REPO / "scripts" / "routed_more_sources.tsv"
OUT = REPO.parent / "shared" / "routed-more"


@dataclass(frozen=True)
class Source:
    file: str
    repository: str  # owner/name
    commit: str
    path: str
    sha256: str      # a prefix of the file's sha256, as fitted_constants.py records it


def read_sources(tsv: Path | None = None) -> list[Source]:
    tsv = tsv or SOURCES
    out = []
    for n, line in enumerate(tsv.read_text().splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        cols = line.split("\t")
        if len(cols) != 5 or "/" in cols[0] or cols[0].startswith("."):
            raise ValueError(f"{tsv}:{n}: want file, repository, commit, path, sha256 separated by tabs")
        out.append(Source(*cols))
    return out


def git_dir_in(mirrors: Path, repository: str) -> Path | None:
    """The git directory the session's snapshot tool (or a clone) left for `owner/name`."""
    base = mirrors / repository.replace("/", "+") / "repo"
    for d in (base / ".git", base):
        if (d / "objects").is_dir():
            return d
    return None


def clone(repository: str, into: Path) -> Path | None:
    """A blobless clone (the history, no file contents until asked for): reports are a few files."""
    dest = into / repository.replace("/", "+")
    r = subprocess.run(["git", "clone", "-q", "--bare", "--filter=blob:none",
                        f"https://github.com/{repository}.git", str(dest)], capture_output=True, text=True)
    return dest if r.returncode == 0 else None


def blob(git_dir: Path, commit: str, path: str) -> bytes | None:
    r = subprocess.run(["git", "--git-dir", str(git_dir), "cat-file", "blob", f"{commit}:{path}"],
                       capture_output=True)
    return r.stdout if r.returncode == 0 else None


def write_atomic(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:  # a failed write leaves no temp file behind
        Path(tmp).unlink(missing_ok=True)
        raise


def sources_md(got: list[Source]) -> str:
    rows = [f"| `{s.file}` | [{s.repository}](https://github.com/{s.repository}) | `{s.path}` | `{s.commit[:12]}` |"
            for s in got]
    return ("# Routed Vivado timing reports of public 7-series designs (kabe issue 25: calibration data)\n\n"
            "Written by kabe's scripts/gather_routed_corpus.py: each file is a verbatim copy of the named\n"
            "repository's file at the named commit, checked against the sha256 kabe records.\n\n"
            "| file | repo | path in repo | commit |\n|---|---|---|---|\n" + "\n".join(rows) + "\n")


def gather(sources: list[Source], out: Path, git_dir_of) -> tuple[list[Source], dict[str, str]]:
    """(the sources written, {file: why not}); git_dir_of(repository) -> a git directory or None."""
    out.mkdir(parents=True, exist_ok=True)
    got, missing = [], {}
    for s in sources:
        g = git_dir_of(s.repository)
        if g is None:
            missing[s.file] = f"no git directory for {s.repository}"
            continue
        data = blob(g, s.commit, s.path)
        if data is None:
            missing[s.file] = f"{s.repository} has no {s.path} at {s.commit[:12]}"
            continue
        digest = hashlib.sha256(data).hexdigest()
        if not digest.startswith(s.sha256):
            missing[s.file] = f"{s.repository}:{s.path} hashes to {digest[:16]}, not {s.sha256}: not the file kabe recorded"
            continue
        write_atomic(out / s.file, data)
        got.append(s)
    if got:
        write_atomic(out / "SOURCES.md", sources_md(got).encode())
    return got, missing


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    how = ap.add_mutually_exclusive_group(required=True)
    how.add_argument("--mirrors", type=Path, metavar="DIR", help="folders <owner>+<name>/repo holding git directories")
    how.add_argument("--clone", action="store_true", help="clone each repository (blobless) into a temporary folder")
    ap.add_argument("--out", type=Path, default=OUT, help=f"where the reports go (default {OUT})")
    a = ap.parse_args(argv)
    try:
        sources = read_sources()
    except (OSError, ValueError) as e:
        print(f"gather_routed_corpus: {e}", file=sys.stderr)
        return 2
    if a.mirrors is not None and not a.mirrors.is_dir():
        print(f"--mirrors {a.mirrors}: not a folder; give the folder holding <owner>+<name>/repo", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        if a.clone:
            cache: dict[str, Path | None] = {}

            def git_dir_of(repository: str) -> Path | None:
                if repository not in cache:
                    cache[repository] = clone(repository, Path(tmp))
                return cache[repository]
        else:
            def git_dir_of(repository: str) -> Path | None:
                return git_dir_in(a.mirrors, repository)
        got, missing = gather(sources, a.out, git_dir_of)
    print(f"{len(got)} of {len(sources)} reports written to {a.out}")
    for f, why in missing.items():
        print(f"  not gathered: {f}: {why}", file=sys.stderr)
    return 2 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
