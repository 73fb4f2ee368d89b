"""The build cache: a content key over everything that can change a build's output, and an index
from that key to an archive that already holds the output.

The key (sha256 of `material`, a JSON document written beside each archive as cache_key.json) covers:

* every file the design's `sim` and `synth` targets resolve to (RTL, includes, generated files,
  every core file taking part, generated cores included), by content, and every file the tools open
  that no core file lists: a header an `include finds beside the RTL or in an include folder, a
  `$readmemh` table (kabe.cache.tool_reads);
* the generator scripts those core files name (and the sibling modules they import), by content;
  their parameters are in the core files;
* the constraints (the XDC), the part, the flow, and the flow settings that shape the output;
* the tool versions (Yosys or Vivado, Verilator, FuseSoC);
* kabe's own code the build runs: the import closure of the build's modules (kabe.cache.own_code),
  not a list kept by hand;
* the design's facts from design.yaml that shape the build (core, kind, ports, row_bytes) and the
  size of the simulation check;
* the source of its golden model or cocotb testbench and of every module that source imports,
  directly or not, that is neither the standard library nor an installed distribution (the project's
  modules, a src/ layout package on PYTHONPATH, an editable install's source), and the versions of the
  installed distributions it imports (kabe.base.python_imports: resolved as Python would, never imported).

The key has two halves (issue 44): the synthesis half is the material without what only the simulation
check reads (design.yaml's `verify:`, the harness's `streams.hold` and `streams.traffic`, the sim target,
Verilator's version, the model's packages, the size of the check, and the files only the simulation side
reads, listed in the material as `sim_files`): synth_key(material). A build whose whole key is a miss but
whose synthesis half matches an archive re-runs the simulation check only and reuses that archive's
synthesis and timing results (a testbench-only change runs no Yosys). Every file the synthesis side reads
is in its half, whatever else reads it too, so a change that can alter synthesis changes that half.
kabe's own code stays in the synthesis half entirely (the simulation harness included): over-inclusion
costs a synthesis, never a false pass.

Not in the key, on purpose: the commit (the Vivado flow stamps it into USR_ACCESS at bitstream
time only, from a generated settings file that is no input), budgets and expect_gate (a hit is
re-gated with today's budgets), timestamps, absolute paths (every path is relative to the repo).

The index is derived data: every archive's metrics.json carries its `cache_key`, so any archive
under the reports root (a local build, or one pulled from the shared store) is a cache entry.
`<reports root>/.cache-index.json` only remembers which archive holds which key, so a lookup
reads one small file instead of every metrics.json; archives it has not seen are read once.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any, Callable, Mapping

from kabe.project import designs
from kabe.base import python_imports
from kabe.base import git
from kabe.project import flows as flow_registry
from kabe.base.paths import BUILD, GENERATORS, PACKAGE, ROOT
from kabe.boards.profile import PROFILE_DIR
from kabe.cache import own_code, tool_reads
from kabe.store.archive import write_json_atomic

KEY_FORMAT = 3  # bump when the material's shape or meaning changes: every old entry becomes a miss
INDEX_NAME = ".cache-index.json"
KEY_FILE = "cache_key.json"  # the material of the key, beside metrics.json in every archive
_OWN_FILES = ("metrics.json", "manifest.json", KEY_FILE)  # rewritten for the new commit on a hit

# kabe's own code is named in the key from the package's folder (kabe/...), wherever kabe is installed;
# in kabe's own checkout that is ROOT.
KABE_HOME = PACKAGE.parent


@dataclass(frozen=True)
class CacheKey:
    key: str  # sha256 hex of the material's canonical JSON
    material: dict
    # each of the material's files where it was read (kabe.cache.key_stamp checks them again); not hashed
    paths: dict = field(default_factory=dict, compare=False, repr=False)


@dataclass(frozen=True)
class Entry:
    """An archive whose output was built from the same key."""

    archive: Path
    record: dict  # its metrics.json
    manifest: dict


# The key.

def kabe_code(flow: str = flow_registry.DEFAULT) -> list[Path]:
    """kabe's files a build with `flow` runs or reads: editing one is a miss, like editing RTL
    (kabe.cache.own_code: what the build imports, not a list kept by hand)."""
    return own_code.closure(flow)


def flow_scripts(flow: str, root: Path = KABE_HOME) -> list[Path]:
    """kabe's package files the flow runs (the vivado flow's block design and Tcl hooks)."""
    return [f for d in flow_registry.facts(flow).key_script_dirs for f in sorted((root / d).glob("*.tcl"))]


_GENERATOR_CMD = re.compile(r"^\s+command\s*:\s*['\"]?([^'\"\s#]+)", re.M)
_IMPORT = re.compile(r"^(?:from|import)\s+([A-Za-z_]\w*)", re.M)


def generator_scripts(core_files) -> list[Path]:
    """The generator scripts named by `generators:` in these core files, plus the sibling modules
    they import (beside them, or kabe/generators/fusesoc_generator.py). Read by pattern: a generator core is a few lines."""
    found: dict[Path, None] = {}
    for core in core_files:
        text = Path(core).read_text(errors="replace")
        if "generators:" not in text:
            continue
        for cmd in _GENERATOR_CMD.findall(text.split("generators:", 1)[1]):
            script = (Path(core).parent / cmd).resolve()
            if script.is_file():
                found[script] = None
                for name in _IMPORT.findall(script.read_text(errors="replace")):
                    # beside the script, or kabe's shared helper (kabe/generators/fusesoc_generator.py)
                    for sibling in (script.with_name(f"{name}.py"), GENERATORS / f"{name}.py"):
                        if sibling.is_file():
                            found[sibling] = None
    return list(found)


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "missing"


def _remembered_line(exe: str, memo_name: str, ask: Callable[[str], list[str]], pick: Callable[[list[str]], str]) -> str:
    """The version line pick() takes from ask(exe)'s non-empty lines, remembered in build/cache/<memo_name> per
    executable (path, size, mtime): asking an AMD tool takes seconds, and the key is computed on every build."""
    st = Path(exe).stat()
    memo = BUILD / "cache" / memo_name
    stamp = f"{Path(exe).resolve()}:{st.st_size}:{st.st_mtime_ns}"
    try:
        saved = json.loads(memo.read_text())
        if saved.get("stamp") == stamp:
            return saved["line"]
    except (OSError, ValueError, KeyError):
        pass
    line = pick(ask(exe))
    write_json_atomic(memo, {"stamp": stamp, "line": line})
    return line


def _lines(text: str) -> list[str]:
    return [ln.strip() for ln in text.splitlines() if ln.strip()]


def vivado_version_line(exe: str | None = None) -> str:
    """First line of `vivado -version` that names Vivado and a release ("Vivado v2023.2 (64-bit)", the line
    kabe.flows.vivado.tool reads too), else its first line; "missing" when there is no vivado."""
    exe = exe or shutil.which("vivado")
    if not exe:
        return "missing"
    return _remembered_line(
        exe, "vivado_version.json",
        lambda e: _lines(subprocess.run([e, "-version"], capture_output=True, text=True, timeout=300).stdout),
        lambda lines: next((ln for ln in lines if "vivado" in ln.lower() and re.search(r"\d{4}\.\d", ln)),
                           lines[0] if lines else "unknown"))


# AMD's Vitis tools (kabe.flows.vitis_hls, kabe.flows.vitis): their version line, as vivado's above
_EXE_VERSION_FLAG = {"v++": "--version", "vitis_hls": "-version", "vivado_hls": "-version"}


def exe_version_line(name: str, flag: str) -> str:
    """The first line of `<name> <flag>` that names a release (20xx.y), remembered per executable like
    vivado_version_line; "missing" when it is not on PATH."""
    exe = shutil.which(name)
    if not exe:
        return "missing"

    def ask(e: str) -> list[str]:
        try:
            out = subprocess.run([e, flag], capture_output=True, text=True, timeout=300)
            return _lines(out.stdout + out.stderr)
        except (OSError, subprocess.TimeoutExpired):
            return []

    return _remembered_line(exe, f"{name.replace('+', 'p')}_version.json", ask,
                            lambda lines: next((ln for ln in lines if re.search(r"20\d\d\.\d", ln)),
                                               lines[0] if lines else "unknown"))


def tool_versions(flow: str) -> dict[str, str]:
    """The tools whose version can change a build's output (the simulation check included)."""
    versions = {"verilator": _version("verilator"), "fusesoc": _version("fusesoc")}
    for tool in flow_registry.facts(flow).tools:
        versions[tool] = vivado_version_line() if tool == "vivado" else \
            exe_version_line(tool, _EXE_VERSION_FLAG[tool]) if tool in _EXE_VERSION_FLAG else _version(tool)
    return versions


def _vhdl_tools(edams: Mapping[str, Any]) -> dict[str, str]:
    """GHDL's version when a target has VHDL (kabe.flows.ghdl turns it into the Verilog every tool reads): a new
    GHDL may synthesize other logic. Empty otherwise, so no other design's key changes."""
    vhdl = any(str(getattr(f, "file_type", "")).startswith("vhdlSource") or Path(f.path).suffix.lower() in (".vhd", ".vhdl")
               for e in edams.values() for f in getattr(e, "files", ()))
    return {"ghdl": exe_version_line("ghdl", "--version")} if vhdl else {}


def _rel(p: Path, root: Path) -> str:
    """The path relative to the checkout (paths here are absolute already: resolving them again for
    every file is a third of the key's cost)."""
    p = Path(os.path.normpath(p))
    try:
        return p.relative_to(root).as_posix()
    except ValueError:
        p = p.resolve()
        try:
            return p.relative_to(root).as_posix()
        except ValueError:
            pass
    if p.is_relative_to(PACKAGE):  # kabe's package data (kabe:gen:top) in a user's venv: the same key on every machine
        return p.relative_to(KABE_HOME).as_posix()
    return str(p)  # outside the checkout (a test's temporary XDC): its content is still hashed


def _sha(p: Path) -> str:
    return hashlib.sha256(Path(p).read_bytes()).hexdigest()


def _target(edam, root: Path) -> dict[str, Any]:
    return {"toplevel": edam.toplevel, "parameters": edam.parameters, "tool_options": edam.tool_options,
            "files": [[_rel(f.path, root), f.file_type, f.is_include_file] for f in edam.files]}


# what a simulation or an editor leaves beside a testbench: outputs, never inputs
_NOT_DATA = {"__pycache__", "sim_build", ".pytest_cache"}
# .py: Python beside a model is its code, in the key when imported (python_imports.closure)
_NOT_DATA_SUFFIXES = {".py", ".pyc", ".vcd", ".fst", ".ghw", ".log"}


def _data_in(folder: Path, root: Path) -> list[Path]:
    """Files a project's model, testbench or one of their helper modules in `folder` may read beside
    it (a table, coefficients as JSON, test vectors): every file in the folder, and below it unless
    that folder is the project's top (which holds everything). Python modules are not data: the ones
    it imports are in the key already (an unused one is not). A data file a model opens was left out
    of the key, and a changed one kept the old verdict."""
    top = folder.resolve() == root.resolve()
    found = folder.iterdir() if top else folder.rglob("*")
    out = []
    for p in found:
        rel = p.relative_to(folder).parts
        if (p.is_file() and not any(part.startswith(".") or part in _NOT_DATA for part in rel)
                and p.suffix not in _NOT_DATA_SUFFIXES and p.name != "results.xml"):
            out.append(p)
    return sorted(out)


def model_path(design, src: Path, root: Path) -> list[str]:
    """The sys.path a design's model or testbench is imported under: the project root first
    (kabe.sim.golden.load), a cocotb testbench's own folder before it (kabe.sim.cocotb_run), then this
    process's (PYTHONPATH, an editable install's .pth, site-packages)."""
    first = [str(src.parent)] if design.verify.kind == "cocotb" else []
    return first + [str(root)] + [p for p in sys.path if p not in first and p != str(root)]


def compute(design, flow: str, edams: Mapping[str, Any], *, sim_check_rows: int | None,
            tools: Mapping[str, str] | None = None, settings: Mapping[str, Any] | None = None,
            root: Path = ROOT) -> CacheKey:
    """The key of one build: `edams` are the design's resolved targets (kabe.project.cores.Edam by name)."""
    # what the synthesis side reads (its target, the XDC, the board, the flow's tables) and what only the
    # simulation check reads (its target, the model or testbench and their data): the key's two halves
    files: set[Path] = {Path(design.core_file), Path(design.constraints)}
    sim_files: set[Path] = set()
    if design.board.profile_file.parent != PROFILE_DIR:  # a project's own board (kabe's are kabe_code)
        files.add(design.board.profile_file)
        if flow_registry.facts(flow).board_profile_files:  # its block-design Tcl beside it (kabe's are flow_scripts)
            files.add(design.board.block_design_tcl())
    for name, edam in edams.items():
        side = sim_files if name == "sim" else files
        side.update(Path(p) for p in edam.input_files)
        side.update(edam.reachable_headers)
        side.update(tool_reads.of_edam(edam))  # what Yosys and Verilator open that no core file lists
        side.update(generator_scripts(sorted(Path(p) for p in edam.core_files)))
    # the design.yaml tables the flow declares as its inputs (the vivado flow's `vivado:`: hooks' Tcl, settings)
    tables = {t: getattr(design, t, None) for t in flow_registry.facts(flow).key_design_tables}
    tables = {t: v for t, v in tables.items() if v is not None and v.declared}
    for table in tables.values():
        files.update(table.files())
    packages: dict[str, str] = {}
    for src in designs.verify_sources(design, root):  # the model or testbench, and the project's modules it imports
        found = python_imports.closure(src, design.verify.value.split(":")[0], model_path(design, src, root),
                                       [root, design.directory])
        # kabe's own modules a model imports (kabe.verify) are kabe's code, keyed as such (kabe_code)
        mine = [f for f in found.files if not f.is_relative_to(PACKAGE.resolve())]
        sim_files.update(mine)
        packages.update(found.distributions)
        # data beside the model, and beside each of the team's modules it imports: a helper package
        # that reads src/teamlib/table.json computes other values when the table changes
        for folder in sorted({src.parent} | {f.parent for f in mine}):
            sim_files.update(_data_in(folder, root))
    own = kabe_code(flow) + flow_scripts(flow)
    synth_side = {_rel(p, root): Path(p) for p in files} | {_rel(p, KABE_HOME): p for p in own}
    sim_side = {_rel(p, root): Path(p) for p in sim_files}
    material = {
        "format": KEY_FORMAT,
        "flow": flow,
        "part": design.board.part,
        "board": design.board.key,  # its profile file is in "files" (a project's) or kabe's code (kabe's own)
        # how the design is verified, and the model's or testbench's source below in "files"
        "design": {"name": design.name, "core": design.core, "verify": design.verify.as_dict(),
                   "streams": design.streams.as_dict(), "ports": design.ports,
                   "row_bytes": design.row_bytes, "constraints": _rel(design.constraints, root),
                   **{t: v.as_dict() for t, v in tables.items()}},
        "sim_check_rows": sim_check_rows,
        "targets": {name: _target(e, root) for name, e in sorted(edams.items())},
        "tools": {**(tools if tools is not None else tool_versions(flow)), **_vhdl_tools(edams)},
        "settings": dict(settings or {}),
        # the installed distributions (numpy) the model or testbench imports, by version: not the project's
        # code, so not in "files", but a new version may compute other values (absent: none imported)
        **({"model_packages": packages} if packages else {}),
        "files": {rel: _sha(p) for rel, p in sorted((sim_side | synth_side).items())},
        # the files only the simulation check reads: outside the synthesis half (synth_key)
        "sim_files": sorted(set(sim_side) - set(synth_side)),
    }
    blob = json.dumps(material, sort_keys=True, separators=(",", ":"), default=str)
    return CacheKey(hashlib.sha256(blob.encode()).hexdigest(), json.loads(blob), sim_side | synth_side)


# What only the simulation check reads, left out of the synthesis half of a key (synth_material).
_SIM_SECTIONS = ("sim_check_rows", "model_packages", "sim_files")
_SIM_TOOLS = ("verilator",)
_SIM_STREAM_KEYS = ("hold", "traffic")  # the harness's held inputs and traffic: no flow reads them


def synth_material(material: Mapping[str, Any]) -> dict:
    """The synthesis half of a key's material: everything but what only the simulation check reads.
    A material without `sim_files` (an older format) keeps every file: it then matches no new key."""
    half = {k: v for k, v in material.items() if k not in _SIM_SECTIONS}
    design = dict(half.get("design") or {})
    design.pop("verify", None)
    if isinstance(design.get("streams"), dict):
        design["streams"] = {k: v for k, v in design["streams"].items() if k not in _SIM_STREAM_KEYS}
    half["design"] = design
    half["targets"] = {k: v for k, v in (half.get("targets") or {}).items() if k != "sim"}
    half["tools"] = {k: v for k, v in (half.get("tools") or {}).items() if k not in _SIM_TOOLS}
    sim_only = set(material.get("sim_files") or ())
    half["files"] = {k: v for k, v in (half.get("files") or {}).items() if k not in sim_only}
    half["half"] = "synth"
    return half


def synth_key(material: Mapping[str, Any]) -> str:
    """The key of the synthesis half of a material (what the flow's tools read)."""
    return key_of_material(synth_material(material))


def key_for(design, flow: str, *, sim_check_rows: int | None, synth=None, sim=None) -> CacheKey:
    """The key of building `design` with `flow`: resolves its targets (cheap when FuseSoC's answer is
    still valid); `synth`, `sim`: the targets when the caller has resolved them already (a build, once)."""
    from kabe.project import config, cores

    # the sim target only for a design that is simulated: `verify: {none: ...}` needs no sim target
    # (serv's own core file has none), and asking FuseSoC for one stopped its build
    edams = {"synth": synth or cores.resolve(design, "synth")}
    if design.verify.kind != "none":
        edams["sim"] = sim or cores.resolve(design, "sim")
    # the settings that change what Vivado produces: its jobs, and the strategies and directives a user
    # (or a sweep variant) chose; "" is Vivado's default
    keys = flow_registry.facts(flow).key_settings
    loaded = config.load() if keys else {}
    settings = {key: config.value(loaded, key) for key in keys}
    return compute(design, flow, edams, settings=settings, sim_check_rows=sim_check_rows)


def difference(old: Mapping[str, Any], new: Mapping[str, Any]) -> str | None:
    """The first thing that differs between two keys' material, in words (why a build was a miss)."""
    for section in sorted(set(old) | set(new)):
        a, b = old.get(section), new.get(section)
        if a == b:
            continue
        if isinstance(a, dict) and isinstance(b, dict):
            for k in sorted(set(a) | set(b)):
                if a.get(k) != b.get(k):
                    what = "added" if k not in a else "removed" if k not in b else "changed"
                    return f"{section}: {k} {what}"
        return f"{section} changed"
    return None


# The index.

def _load_index(path: Path) -> dict[str, str | None]:
    try:
        data = json.loads(path.read_text())
        if data.get("format") == KEY_FORMAT and isinstance(data.get("entries"), dict):
            return dict(data["entries"])
    except (OSError, ValueError, AttributeError):
        pass
    return {}


def _save_index(path: Path, entries: Mapping[str, str | None]) -> None:
    write_json_atomic(path, {"format": KEY_FORMAT, "generated_by": "kabe.cache.cache (derived; safe to delete)",
                             "entries": dict(sorted(entries.items()))})


def _read_key(archive: Path) -> str | None:
    try:
        return json.loads((archive / "metrics.json").read_text()).get("cache_key")
    except (OSError, ValueError, AttributeError):
        return None


def _complete(archive: Path, record: dict) -> dict | None:
    """The archive's manifest when every raw file and artifact it lists is there intact, else None."""
    try:
        manifest = json.loads((archive / "manifest.json").read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(manifest, dict):
        return None
    entries = list(archive.iterdir())
    if any(p.is_symlink() for p in entries):
        return None  # a hit copies its files into the new unit: a link would copy whatever it points at (a key)
    present = {p.name for p in entries if p.is_file()}
    if not set(manifest.get("raw_files", [])) <= present:
        return None
    wanted = set((record.get("artifacts") or {}).values())
    if wanted:
        have = {_sha(archive / n) for n in present if n not in _OWN_FILES}
        if not wanted <= have:
            return None
    return manifest


def key_of_material(material: Any) -> str:
    """The key a cache_key.json material hashes to (compute()'s canonical JSON)."""
    return hashlib.sha256(json.dumps(material, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def commit_exists(sha: str, git_root: Path = ROOT) -> bool:
    try:
        return git.run(git_root, "cat-file", "-e", f"{sha}^{{commit}}", check=False, timeout=60).returncode == 0
    except (git.GitError, OSError, subprocess.TimeoutExpired):
        return False


def untrusted(archive: Path, rel: str, record: Mapping[str, Any], key: str, git_root: Path = ROOT) -> str | None:
    """Why the archive at reports/<rel> may not be reused, or None. A cache entry is either built on
    this machine (no signature) or a pulled unit whose signature still verifies for an allowed signer
    (kabe.store.signing.verify_dir: every file as signed); the commit it names exists here; and its
    key, recomputed from its own cache_key.json, is the one asked for. `kabe archive pull` checks the
    same before it places a unit; this re-check at hit time is cheap and catches an edit since."""
    from kabe.store import signing

    check = signing.check_if_signed(archive, rel)
    if check is not None and not check.ok:
        return f"its signature does not verify: {check.reason}"
    sha = rel.split("/", 1)[0].removesuffix("-dirty")
    if sha != "nogit" and not commit_exists(sha, git_root):
        return f"it names commit {sha[:12]}, which is not in this repository"
    try:
        material = json.loads((archive / KEY_FILE).read_text())
    except (OSError, ValueError) as e:
        return f"its {KEY_FILE} cannot be read ({type(e).__name__})"
    if key_of_material(material) != key:
        return f"its {KEY_FILE} hashes to another key than its metrics.json says"
    return None


@dataclass
class Lookup:
    """What a lookup found: the entry to reuse (or None) and every candidate it refused, with why."""

    entry: Entry | None
    refused: list[tuple[Path, str]] = field(default_factory=list)


def remember(reports_root: Path, archive: Path, key: str | None) -> None:
    """Note a freshly written archive in the index (the index also finds it by itself, later)."""
    path = Path(reports_root) / INDEX_NAME
    entries = _load_index(path)
    entries[Path(archive).resolve().relative_to(Path(reports_root).resolve()).as_posix()] = key
    _save_index(path, entries)


# reports/<commit>/<design>/<flow> (kabe.project.designs.NAME_PATTERN for the design; no dot anywhere)
_UNIT = re.compile(r"(?:[0-9a-f]{40}|nogit)(?:-dirty)?/[A-Za-z0-9_][A-Za-z0-9_-]{0,63}/[a-z0-9_]+")


def lookup(reports_root: Path, design: str, flow: str, key: str, *, clean_only: bool = False,
           git_root: Path = ROOT) -> Entry | None:
    """An intact, trusted archive of `design`/`flow` built from `key`, or None (find() says why)."""
    return find(reports_root, design, flow, key, clean_only=clean_only, git_root=git_root).entry


def _synth_key_of(archive: Path) -> str | None:
    """The synthesis half of an archive's key, from its own cache_key.json (None: unreadable)."""
    try:
        material = json.loads((archive / KEY_FILE).read_text())
    except (OSError, ValueError):
        return None
    return synth_key(material) if isinstance(material, dict) else None


def find(reports_root: Path, design: str, flow: str, key: str, *, clean_only: bool = False,
         accept: Callable[[Entry], str | None] | None = None, git_root: Path = ROOT, half: str = "whole") -> Lookup:
    """The best intact, trusted archive of `design`/`flow` built from `key`, and the candidates refused.
    half="synth": `key` is a synthesis half (synth_key), matched against each archive's own
    cache_key.json, whose whole key is checked as for a whole hit (untrusted()).
    clean_only: skip archives built from a dirty tree (the Vivado flow's bitstream names its commit and
    its dirty flag). accept: the caller's last word on a candidate (the build re-derives its numbers
    from its raw reports): a reason refuses it and the next best is tried. An archive deleted or
    damaged since the index saw it is dropped from the index; the lookup goes on."""
    if half not in ("whole", "synth"):
        raise ValueError(f"half={half!r}: whole or synth")
    root = Path(reports_root)
    if not root.is_dir():
        return Lookup(None)
    path = root / INDEX_NAME
    entries = _load_index(path)
    changed = False
    for d in os.scandir(root):  # archives not seen yet: built here, or pulled (never .unverified/)
        if d.name.startswith(".") or not d.is_dir():
            continue
        rel = f"{d.name}/{design}/{flow}"
        if rel not in entries and (root / rel / "metrics.json").is_file():
            entries[rel], changed = _read_key(root / rel), True
    found: list[Entry] = []
    for rel, k in list(entries.items()):  # a copy: entries is edited as archives turn out gone
        if not _UNIT.fullmatch(rel):  # a hand-edited index: nothing outside reports/<commit>/<d>/<flow>
            entries.pop(rel)
            changed = True
            continue
        if not rel.endswith(f"/{design}/{flow}") or k is None or (half == "whole" and k != key):
            continue
        archive = root / rel
        try:
            record = json.loads((archive / "metrics.json").read_text())
            if not isinstance(record, dict):
                raise ValueError("not an object")
        except (OSError, ValueError):
            entries.pop(rel)  # removed or damaged since: forget it
            changed = True
            continue
        if record.get("cache_key") != k:  # rebuilt since (a dirty tree's archive is rewritten)
            entries[rel], changed = record.get("cache_key"), True
            continue
        if clean_only and record.get("dirty"):
            continue
        if half == "synth" and _synth_key_of(archive) != key:
            continue
        try:
            manifest = _complete(archive, record)
        except OSError:  # deleted while being read
            entries.pop(rel)
            changed = True
            continue
        if manifest is not None:
            found.append(Entry(archive, record, manifest))
    if changed:
        try:
            _save_index(path, entries)
        except OSError:  # a read-only reports/ is said by the build before any tool runs; the index is derived
            pass
    result = Lookup(None)
    # a clean commit's build first, then the newest
    for entry in sorted(found, key=lambda e: (not e.record.get("dirty"), str(e.record.get("finished", ""))),
                        reverse=True):
        rel = entry.archive.relative_to(root).as_posix()
        why = untrusted(entry.archive, rel, entry.record, entry.record["cache_key"], git_root)
        if why is None and accept is not None:
            why = accept(entry)
        if why is None:
            result.entry = entry
            break
        result.refused.append((entry.archive, why))
    return result


def nearest(reports_root: Path, design: str, flow: str) -> dict | None:
    """The key material of the newest archive of design/flow (to say why a build was a miss)."""
    best: tuple[str, dict] | None = None
    root = Path(reports_root)
    if not root.is_dir():
        return None
    for d in os.scandir(root):
        f = root / d.name / design / flow / KEY_FILE
        if d.name.startswith(".") or not f.is_file():
            continue
        try:
            when = json.loads((f.parent / "metrics.json").read_text()).get("finished", "")
            material = json.loads(f.read_text())
        except (OSError, ValueError):
            continue
        if best is None or when > best[0]:
            best = (when, material)
    return best[1] if best else None


def reused_files(entry: Entry) -> dict[str, Path]:
    """The files a hit carries over into the new commit's archive: everything but what is rewritten
    and the entry's signature, which signs the entry's unit, not the new one (the new unit is built
    here; `kabe archive push` signs it afresh)."""
    from kabe.store import signing

    return {p.name: p for p in sorted(entry.archive.iterdir())
            if p.is_file() and not p.is_symlink() and p.name not in _OWN_FILES and p.name != signing.SIGNATURE_FILE}


def built_by(record: Mapping[str, Any]) -> tuple[str, bool]:
    """(commit, dirty) of the build that produced a record's artifacts: the commit stamped into its
    bitstream. A reused record names the build it reused (`reused_from`, or `synth_reused_from` when
    only its simulation check ran); deploy checks USR_ACCESS against this."""
    origin = record.get("reused_from") or record.get("synth_reused_from") or {}
    if origin:
        return origin["commit"], bool(origin.get("dirty", False))
    return record["commit"], bool(record["dirty"])
