"""`doit repro:<design>`: build one commit twice from clean checkouts, without the cache, and
compare every artifact byte for byte.

Each build runs in its own `git worktree` of the commit (two different directories, so a leaked
absolute path shows up as a difference) with `kabe build --no-cache`: FuseSoC and its generators,
the simulation check, the flow, the gate and the archive, all from nothing. Compared, in the
pipeline's order, so the first difference named is the earliest one:

1. generated sources: build/fusesoc/<design>/<target>/generator_cache/** (generator output; an input-cached
   generator's under .fusesoc-cache/fusesoc/generator_cache/);
2. the flow's work directory: build/<design>/<flow>/** (the open flow's netlist.json among them);
3. the archive: reports/<commit>/<design>/<flow>/** (metrics.json, manifest.json, raw reports).

Before comparing, and only there, the volatile fields below are normalised (VOLATILE: each rule
names what it replaces and why); every other byte must be equal. repro.json (archived at
reports/<commit>/<design>/repro/) lists every file compared with both hashes, every rule with how
often it applied, and on a difference the first artifact and line that differ (the line of the
normalised text: the same line for text files, the canonical re-dump for the JSON records).
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import os
import re
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from rich.console import Console
from rich.markup import escape

from kabe.base.console import make_console
from kabe.project import config, cores, designs
from kabe.base import provenance, tool_group
from kabe.base import git
from kabe.base.errors import UserError
from kabe.base.paths import REPORTS, ROOT, project_dirs
from kabe.store.archive import archive_dir, write_json_atomic
from kabe.project import flows as flow_registry

FORMAT = "kabe.build.repro/1"
ROOT_TOKEN = "<checkout>"
VOLATILE_TOKEN = "<volatile>"


class ReproError(UserError):
    """The commit could not be built twice (not a git checkout, a build that could not run)."""


@dataclass(frozen=True)
class Rule:
    """One documented volatile field: `files` (glob on the file name) and what it replaces."""

    name: str
    files: str
    why: str
    apply: Callable[[str, dict], str]  # (text, context) -> normalised text


def _sub(pattern: str, repl: str, flags: int = re.M):
    rx = re.compile(pattern, flags)
    return lambda text, ctx: rx.sub(repl, text)


def _json_fields(*paths: str):
    """Replace JSON fields (dotted paths) by VOLATILE_TOKEN; the rest is re-dumped canonically."""
    def apply(text: str, ctx: dict) -> str:
        data = json.loads(text)
        for dotted in paths:
            node = data
            parts = dotted.split(".")
            for part in parts[:-1]:
                node = node.get(part) if isinstance(node, dict) else None
            if isinstance(node, dict) and parts[-1] in node:
                node[parts[-1]] = VOLATILE_TOKEN
        return json.dumps(data, indent=2, sort_keys=True) + "\n"
    return apply


# Every normalisation applied before comparing. Nothing else is excused.
VOLATILE: tuple[Rule, ...] = (
    Rule("checkout path", "*", "the absolute path of each build's checkout (two worktrees, two paths)",
         lambda text, ctx: text.replace(ctx["root"], ROOT_TOKEN)),
    Rule("yosys run time", "yosys.log",
         "Yosys's closing line states the run's wall, user and system seconds",
         _sub(r"\b(time|user|system): [0-9.]+s", rf"\1: {VOLATILE_TOKEN}")),
    Rule("yosys time spent", "yosys.log", "Yosys's last line ranks passes by the seconds they took",
         _sub(r"^Time spent: .*$", f"Time spent: {VOLATILE_TOKEN}")),
    Rule("build timestamps and durations", "metrics.json",
         "when the build started and finished, how long it and its steps took, and whether the "
         "Verilator model was compiled by this run or found",
         _json_fields("started", "finished", "seconds", "tool_seconds", "sim.seconds", "sim.frame_seconds",
                      "sim.compile_seconds", "sim.simulate_seconds", "sim.sim_seconds", "sim.compare_seconds",
                      "sim.model_seconds",
                      "sim.mcycles_per_second", "sim.compiled")),
    Rule("verilator build key", "metrics.json",
         "the simulation model's build-directory key hashes its sources' absolute paths",
         _json_fields("sim.build_key")),
    # Vivado (not measured on this machine, which has no Vivado): report headers and the .bit
    # header's date and time. Listed here so that a Vivado repro starts from the same rules.
    Rule("vivado report header", "*.rpt", "Vivado's report header states the date, host and command line",
         _sub(r"^\| (Date|Host|Command)\s*:.*$", rf"| \1 : {VOLATILE_TOKEN}")),
)
BINARY_SUFFIXES = (".bit", ".bin", ".dcp")


def _is_volatile_free(path: Path) -> bool:
    return path.suffix not in BINARY_SUFFIXES


def normalise(name: str, data: bytes, root: str, counts: dict[str, int]) -> bytes:
    if not _is_volatile_free(Path(name)):
        return data
    try:
        text = data.decode()
    except UnicodeDecodeError:
        return data
    for rule in VOLATILE:
        if fnmatch.fnmatch(Path(name).name, rule.files):
            new = rule.apply(text, {"root": root})
            if new != text:
                counts[rule.name] = counts.get(rule.name, 0) + 1
            text = new
    return text.encode()


# ----------------------------------------------------------------------------------------------


def _git(*args: str, cwd: Path = ROOT) -> str:
    proc = git.run(cwd, *args, check=False, text=True)
    if proc.returncode != 0:
        raise ReproError(f"git {' '.join(args)} failed in {cwd}: {proc.stderr.strip()}")
    return proc.stdout.strip()


def _build_in(checkout: Path, design: str, flow: str, console: Console) -> None:
    cmd = [sys.executable, "-m", "kabe.cli", "build", design, "--flow", flow, "--no-cache"]
    env = {**os.environ, "PYTHONPATH": str(checkout), "KABE_PROJECT": str(checkout)}  # the checkout is the project
    console.print(f"[dim]repro {design}: building in {checkout}[/]")
    # in a tool group (kabe.base.tool_group): a Ctrl-C or kill of `kabe repro` stops the child build and its tools
    proc = tool_group.run(cmd, cwd=checkout, env=env, capture_output=True, text=True)
    build = project_dirs(checkout)["build_dir"]  # the checkout's own [tool.kabe] says where
    build.mkdir(parents=True, exist_ok=True)
    (build / "repro_build.log").write_text(proc.stdout + proc.stderr)
    if proc.returncode not in (0, 1):  # 1: the gate failed, which is a result like any other
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-6:])
        raise ReproError(f"the build of {design} in {checkout} could not run (exit {proc.returncode}):\n{tail}")


def artifacts(checkout: Path, commit: provenance.Commit, design: str, flow: str) -> dict[str, Path]:
    """name -> file, in comparison order (generated sources, the flow's work directory, the archive)."""
    out: dict[str, Path] = {}
    build, reports = project_dirs(checkout)["build_dir"], project_dirs(checkout)["reports_dir"]
    fusesoc = build / "fusesoc" / design
    groups = [sorted([*fusesoc.glob("*/generator_cache/**/*"),
                      *fusesoc.glob(f"*/{cores.FUSESOC_CACHE}/fusesoc/generator_cache/**/*")]),
              sorted((build / design / flow).rglob("*")),
              sorted(archive_dir(commit, design, flow, reports).rglob("*"))]
    for files in groups:
        for f in files:
            if f.is_file():
                out[f.relative_to(checkout).as_posix()] = f
    return out


def _first_line(a: bytes, b: bytes) -> tuple[int, str, str]:
    la, lb = a.decode(errors="replace").splitlines(), b.decode(errors="replace").splitlines()
    for i, (x, y) in enumerate(zip(la, lb), start=1):
        if x != y:
            return i, x[:300], y[:300]
    n = min(len(la), len(lb)) + 1
    return n, (la[n - 1][:300] if len(la) >= n else "<end of file>"), (lb[n - 1][:300] if len(lb) >= n else "<end of file>")


def compare(a_root: Path, b_root: Path, a: dict[str, Path], b: dict[str, Path]) -> dict:
    """Both builds' artifacts, normalised, byte for byte."""
    counts: dict[str, int] = {}
    files, differences = [], []
    for name in list(dict.fromkeys([*a, *b])):
        if name not in a or name not in b:
            differences.append({"artifact": name, "line": None,
                                "a": "present" if name in a else "missing", "b": "present" if name in b else "missing"})
            continue
        da = normalise(name, a[name].read_bytes(), str(a_root), counts)
        db = normalise(name, b[name].read_bytes(), str(b_root), counts)
        same = da == db
        files.append({"artifact": name, "identical": same, "sha256_a": hashlib.sha256(da).hexdigest(),
                      "sha256_b": hashlib.sha256(db).hexdigest()})
        if not same:
            if _is_volatile_free(Path(name)):
                line, x, y = _first_line(da, db)
            else:
                line, x, y = None, f"{len(da)} bytes", f"{len(db)} bytes"
            differences.append({"artifact": name, "line": line, "a": x, "b": y})
    return {"files": files, "differences": differences, "rules_applied": counts}


def repro(design_name: str, flow_request: str | None = flow_registry.DEFAULT, *, reports_root: Path = REPORTS,
          console: Console | None = None, keep: bool = False) -> dict:
    """Build HEAD's commit twice and compare; returns (and archives) the repro record."""
    console = console or make_console()
    design = designs.get(design_name)
    flow = config.resolve_flow(flow_request)
    here = provenance.current_commit()
    if here.sha == "nogit":
        raise ReproError(f"{ROOT} is not a git checkout: repro builds a commit. Fix: run it in a clone")
    if here.dirty:
        console.print(f"[yellow]repro {design.name}: the tree has uncommitted changes; building commit "
                      f"{here.sha[:12]} as committed[/]")
    commit = provenance.Commit(here.sha, False)
    # A project below its repository's top (a monorepo's fpga/) is the same folder in each worktree.
    prefix = provenance.project_prefix() or ""
    tmp = Path(tempfile.mkdtemp(prefix=f"kabe-repro-{design.name}-"))
    worktrees = [tmp / "a", tmp / "b"]
    checkouts = [w / prefix for w in worktrees]  # the project inside each worktree
    try:
        for w, c in zip(worktrees, checkouts):
            _git("worktree", "add", "--detach", str(w), commit.sha)
            _build_in(c, design.name, flow, console)
        found = [artifacts(c, commit, design.name, flow) for c in checkouts]
        reports_dir = project_dirs(checkouts[0])["reports_dir"].relative_to(checkouts[0]).as_posix()
        if not any(name.startswith(f"{reports_dir}/") for name in found[0]):
            raise ReproError(f"the build in {checkouts[0]} archived nothing (see build/repro_build.log there)")
        result = compare(checkouts[0], checkouts[1], *found)
    finally:
        if not keep:
            for c in worktrees:
                git.worktree_remove(ROOT, c)
            shutil.rmtree(tmp, ignore_errors=True)
            git.run(ROOT, "worktree", "prune", check=False)
    record = {
        "schema": FORMAT, "commit": commit.sha, "design": design.name, "flow": flow,
        "identical": not result["differences"],
        "first_difference": result["differences"][0] if result["differences"] else None,
        "differences": result["differences"],
        "compared": len(result["files"]),
        "volatile": [{"name": r.name, "files": r.files, "why": r.why,
                      "applied": result["rules_applied"].get(r.name, 0)} for r in VOLATILE],
        "files": result["files"],
    }
    record["_path"] = str(write_json_atomic(archive_dir(commit, design.name, "repro", reports_root) / "repro.json",
                                            {k: v for k, v in record.items() if not k.startswith("_")}))
    return record


def describe(record: dict) -> str:
    if record["identical"]:
        return (f"[green]identical[/] {record['design']} ({record['flow']}): {record['compared']} artifacts, "
                f"byte for byte after the listed normalisations")
    d = record["first_difference"]
    where = f" line {d['line']}" if d["line"] else ""
    return (f"[red]NOT identical[/] {record['design']} ({record['flow']}): {len(record['differences'])} artifact(s) "
            f"differ; first: {escape(d['artifact'])}{where}\n  a: {escape(str(d['a']))}\n  b: {escape(str(d['b']))}")


def main(design: str, flow: str | None = flow_registry.DEFAULT, console: Console | None = None) -> int:
    console = console or make_console()
    try:
        record = repro(design, flow, console=console)
    except UserError as e:
        console.print(f"[red]repro {design}: {escape(str(e))}[/]")
        return 2
    console.print(describe(record))
    console.print(f"[dim]{record['_path']}[/]")
    return 0 if record["identical"] else 1
