"""The files Yosys and Verilator open that no core file lists, found before they run, so that a build's
cache key (kabe.cache.cache) and Verilator's compiled model (kabe.sim.verilator_build) hold them.

A core file lists the sources; the tools open more:

* `` `include "defs.vh" ``: both tools look beside the file that includes it first, then in the
  include folders (the core's include_path, and any -I / +incdir+ its tool options name), then the
  working directory;
* `$readmemh("table.hex", mem)` / `$readmemb`: Yosys opens the name from its working directory, else
  beside the source that names it; the simulation opens it from its working directory (the FuseSoC
  work root, kabe.sim.runner). The name may sit in a parameter's default (`parameter INIT =
  "rom.hex"`) or a core parameter's value rather than in the call.

So every string literal of every HDL file (comments stripped) and every string value of the
target's parameters is resolved the way the tools would (beside the file, in the include folders, in
the work root) and every file that exists there is an input. A header found that way is read in
turn (it may include or name more). A name that resolves to no file is not an input (a `$display`
format, a module's label): over-reading a name costs nothing, since only files that exist count.

Not covered by the scan: a name assembled at elaboration time (`$sformatf("rom%0d.hex", i)`), an
`include through a macro. So what Verilator says it read (its dependency file, `--MMD`, on by default:
Vtop__ver.d) is checked against the hashed list after every compile (unkeyed()): a file the key
misses stops the build, naming the file, before any verdict is made from it.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Iterable

_COMMENTS = re.compile(rb"//[^\n]*|/\*.*?\*/", re.S)
_STRING = re.compile(rb'"((?:[^"\\\n]|\\.)*)"')
_NAME = re.compile(r"^[\w./+-]+$")  # what a file name in HDL looks like: no spaces, no format directives
HDL_SUFFIXES = {".v", ".sv", ".vh", ".svh", ".vhd", ".vhdl", ".h", ".inc", ".vinc", ".svi"}
MAX_FILES = 5000  # a bound on the walk, far above any design's


def _literals(path: Path) -> list[str]:
    try:
        data = path.read_bytes()
    except OSError:
        return []
    out = []
    for m in _STRING.finditer(_COMMENTS.sub(b" ", data)):
        text = m.group(1).decode("utf-8", "replace")
        if text and _NAME.match(text) and not text.endswith("/"):
            out.append(text)
    return out


def _resolve(name: str, here: Path, places: Iterable[Path]) -> list[Path]:
    p = Path(name)
    if p.is_absolute():
        return [p] if p.is_file() else []
    found = []
    for d in (here, *places):
        cand = Path(d) / p
        if cand.is_file():
            found.append(cand.resolve())
    return found


def files_read(hdl: Iterable[Path], include_dirs: Iterable[Path] = (), work_root: Path | None = None,
               parameters: dict | None = None) -> list[Path]:
    """The files the tools may open beyond `hdl`: every existing file a string literal of an HDL file
    (or a string parameter value) names, resolved beside that file, in `include_dirs` and in
    `work_root`; the headers among them read in turn. Sorted, resolved; `hdl` itself not repeated."""
    places = [Path(d) for d in include_dirs] + ([Path(work_root)] if work_root else [])
    given = {Path(p).resolve() for p in hdl}
    todo = sorted(given)
    seen: set[Path] = set(given)
    found: set[Path] = set()
    for value in (parameters or {}).values():
        if isinstance(value, str) and _NAME.match(value):
            for f in _resolve(value, Path(work_root or "."), places):
                if f not in seen:
                    seen.add(f)
                    found.add(f)
    while todo and len(seen) < MAX_FILES:
        src = todo.pop()
        for name in _literals(src):
            for f in _resolve(name, src.parent, places):
                if f in seen:
                    continue
                seen.add(f)
                found.add(f)
                if f.suffix.lower() in HDL_SUFFIXES:  # a header: it may include or name more
                    todo.append(f)
    return sorted(found)


def of_edam(edam) -> list[Path]:
    """files_read() for a resolved target (kabe.project.cores.Edam)."""
    hdl = [f.path for f in edam.files if f.is_hdl or f.is_include_file] + list(edam.reachable_headers)
    work_root = Path(edam.work_root) if str(edam.work_root) not in ("", ".") else None
    return files_read(hdl, edam.all_include_dirs, work_root, edam.parameters)


def dependency_file(path: Path) -> list[Path]:
    """The prerequisites of a make-style dependency file ("targets : deps", backslash-continued)."""
    try:
        text = Path(path).read_text(errors="replace")
    except OSError:
        return []
    deps: list[Path] = []
    for rule in text.replace("\\\n", " ").splitlines():
        if ":" not in rule:
            continue
        _targets, _, prereqs = rule.partition(" : ") if " : " in rule else rule.partition(": ")
        deps += [Path(p) for p in prereqs.split() if p]
    return deps


def unkeyed(opened: Iterable[Path], hashed: Iterable[Path], outside: Iterable[Path]) -> list[Path]:
    """The files a tool opened that are neither hashed nor under one of `outside` (the tool's own
    installation, the build's output folder): what a key built from `hashed` would miss."""
    keyed = {Path(p).resolve() for p in hashed}
    skip = [Path(p).resolve() for p in outside]
    missed = []
    for p in opened:
        r = Path(p).resolve()
        if r in keyed or any(r == s or s in r.parents for s in skip) or not r.is_file():
            continue
        missed.append(r)
    return sorted(set(missed))
