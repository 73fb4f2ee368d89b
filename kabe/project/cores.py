"""Resolve a design's core file into an EDAM: the files, include dirs, top and parameters of one target.

FuseSoC does the resolving for real (`fusesoc run --setup --no-export`), generators included, and
kabe reads back the `.eda.yml` it writes; file lists therefore live only in core files. The
work root is build/fusesoc/<design>/<target>[-<override hash>]; generator output lands in its
generator_cache/.

Calling resolve() twice is cheap: the second call re-reads the EDAM unless a core file, a
generator script (any non-HDL file under cores/, any script under scripts/), the FuseSoC version,
the target or the overrides changed since the last setup. Two exceptions, since kabe cannot know what
files FuseSoC's output is read from there: a core tree that runs a project's (or a library's) own
generator, and a core listing a `copyto` file, are set up again by FuseSoC once in every kabe process
(generators re-run, copies re-made), so generated RTL is never older than the build. kabe's own
generators (kabe/generators) read nothing but their parameters and are hashed: they do not count.
force=True (a build with cache=off) sets up again whatever the case.

FuseSoC writes into a fresh folder beside the work root; kabe then moves into the work root only
the files that differ, and removes those of the last setup this one did not write (a file a core
stopped listing under `copyto`, an old generator_cache folder). An unchanged setup therefore changes
nothing on disk, and another build reading the same work root meanwhile is not disturbed.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

import yaml

from kabe.project import designs
from kabe.base import tool_group
from kabe.project.core_files import (HDL_TYPES, CoreError, Declared, check_file_types, check_unique, check_used_cores,
                             core_file_problem, declarations)
from kabe.project.core_inputs import _library_roots, _resolve_inputs, project_fusesoc_conf, resolve_inputs  # noqa: F401
from kabe.base.paths import BUILD, CORES, GENERATORS, ROOT
from kabe.base.lock import take as take_lock

TARGETS = ("sim", "synth", "vivado")
# The tool kabe runs for each of its targets: given to FuseSoC (`--tool`) when the target names no flow and
# no default_tool, where FuseSoC alone stops at "No flow or tool was supplied"
KABE_TOOLS = {"sim": "verilator", "synth": "yosys", "vivado": "vivado"}
_KABE_TOOL_ARGS = {"yosys": ["--arch=xilinx"]}  # edalize's yosys backend needs an arch (kabe's: synth_xilinx)
_NO_TOOL = "no flow or tool was supplied"
_STAMP = "kabe_resolve.json"
_STAMP_FORMAT = 3  # bump when the stamp or the way kabe calls FuseSoC changes
_LOCK = ".lock"
_OWN = {_LOCK, _STAMP, "fusesoc.conf"}  # kabe's files in a work root, not FuseSoC's output
# FuseSoC's cache root (XDG_CACHE_HOME/fusesoc) for one set-up, inside its work root. FuseSoC keeps the
# output of a `cache_type: input` generator there and reuses it while the generator's parameters and script
# are unchanged, even when a data file it reads changed; kept per set-up, such a generator is run again
# whenever kabe sets the target up (as every project generator is), and `rm -rf build` clears it.
# Cores a provider fetched into it are carried over from the last set-up (no download again).
FUSESOC_CACHE = ".fusesoc-cache"
# work root -> the inputs key FuseSoC last set it up for in this process (kabe.project.cores' docstring)
_FRESH: dict[Path, str] = {}


@dataclass(frozen=True)
class SourceFile:
    path: Path  # absolute
    file_type: str  # FuseSoC file type: verilogSource, systemVerilogSource, xdc, user, ...
    core: str  # VLNV of the core that contributed it (a generated core for generator output)
    is_include_file: bool = False
    generated: bool = False  # produced by a FuseSoC generator (lives in generator_cache/)
    logical_name: str = ""  # the core file's logical_name: a VHDL file's library ("" = the tool's default)

    def __fspath__(self) -> str:  # a SourceFile can be used wherever a path is expected
        return str(self.path)

    def __str__(self) -> str:
        return str(self.path)

    @property
    def is_hdl(self) -> bool:
        return self.file_type.split("-")[0] in HDL_TYPES


@dataclass(frozen=True)
class Edam:
    """One target of one design, as FuseSoC resolved it."""

    design: str
    target: str
    vlnv: str
    name: str  # FuseSoC's system name (vlnv with ':' -> '_')
    toplevel: str
    tool: str  # the flow's tool (verilator, yosys, vivado, ...)
    files: tuple[SourceFile, ...]  # in FuseSoC's order (dependencies first)
    include_dirs: tuple[Path, ...]
    parameters: dict[str, Any] = field(hash=False, compare=False)  # name -> value (default or override)
    parameter_specs: dict[str, dict] = field(hash=False, compare=False)  # name -> {datatype, paramtype, ...}
    tool_options: dict[str, Any] = field(hash=False, compare=False)  # flow_options minus `tool`, + tool_options
    flow: str | None = None
    work_root: Path = Path()
    eda_file: Path = Path()
    core_files: tuple[Path, ...] = ()  # every core file taking part (generated cores included)
    # VLNV -> the core file FuseSoC took it from (not in to_dict: the cache key hashes core_files already)
    core_of: dict[str, Path] = field(default_factory=dict, hash=False, compare=False)

    @property
    def sources(self) -> tuple[Path, ...]:
        """HDL files to compile, in order (include files excluded: they are reached via include_dirs)."""
        return tuple(f.path for f in self.files if f.is_hdl and not f.is_include_file)

    @property
    def include_files(self) -> tuple[Path, ...]:
        return tuple(f.path for f in self.files if f.is_include_file)

    @property
    def option_include_dirs(self) -> tuple[Path, ...]:
        """The include folders the target's tool options name (`-I<dir>`, `-I <dir>`, `+incdir+<a>+<b>` in
        verilator_options, yosys_read_options or any other list of options), as existing folders: a
        relative one read from the FuseSoC work root (where edalize runs the tools) and from each core
        file's folder, since over-reading costs nothing and only folders that exist count. kabe refuses
        them in a simulated target (kabe.project.core_targets) and passes none to its own Yosys script, but the
        key hashes what is in them anyway: a header found only through such an option is still an input."""
        found: list[Path] = []
        for value in (self.tool_options or {}).values():
            options = value.split() if isinstance(value, str) else value if isinstance(value, list) else []
            options = [str(o) for o in options]
            names: list[str] = []
            for i, opt in enumerate(options):
                if opt == "-I" and i + 1 < len(options):
                    names.append(options[i + 1])
                elif opt.startswith("-I") and len(opt) > 2:
                    names.append(opt[2:])
                elif opt.startswith("+incdir+"):
                    names += [n for n in opt[len("+incdir+"):].split("+") if n]
            bases = [Path(self.work_root)] + [Path(c).parent for c in self.core_files]
            for name in names:
                for d in ([Path(name)] if Path(name).is_absolute() else [b / name for b in bases]):
                    if d.is_dir() and d.resolve() not in found:
                        found.append(d.resolve())
        return tuple(found)

    @property
    def all_include_dirs(self) -> tuple[Path, ...]:
        """The core file's include folders and those the tool options name (option_include_dirs)."""
        return tuple(dict.fromkeys([Path(d) for d in self.include_dirs] + list(self.option_include_dirs)))

    @property
    def reachable_headers(self) -> tuple[Path, ...]:
        """Every file directly in the target's include folders (the core file's and its tool options',
        all_include_dirs): Yosys and Verilator read any header an
        `include names there, listed in the core file or not, whatever its suffix (`.inc`, `.svh`,
        `.h`), so every key of an output built from this target (the build's cache key, Verilator's
        compiled model) must hash them all: an unlisted one left out kept an old verdict after it
        changed."""
        out: list[Path] = []
        for d in self.all_include_dirs:
            d = Path(d)
            if d.is_dir():
                out += sorted(p for p in d.iterdir() if p.is_file() and not p.name.startswith("."))
        return tuple(out)

    @property
    def copied_files(self) -> tuple[tuple[str, Path], ...]:
        """(path relative to the work root, file) of every file FuseSoC copied into the work root (a core's
        `copyto:`, such as the table a `$readmemh("table.hex")` reads): the simulation runs there, and Yosys
        and cocotb, which run elsewhere, get the same files at the same relative paths (kabe.flows.open,
        kabe.sim.cocotb_run), so every tool reads one description."""
        root = Path(self.work_root).resolve()
        out = []
        for f in self.files:
            p = Path(f.path)
            if (p.is_relative_to(root) and not _generated(p, root)
                    and not p.is_relative_to(root / FUSESOC_CACHE)):
                out.append((p.relative_to(root).as_posix(), p))
        return tuple(out)

    @property
    def generated_files(self) -> tuple[Path, ...]:
        return tuple(f.path for f in self.files if f.generated)

    def files_of_type(self, *types: str) -> tuple[Path, ...]:
        return tuple(f.path for f in self.files if f.file_type.split("-")[0] in types)

    @property
    def input_files(self) -> tuple[Path, ...]:
        """Everything the target's output depends on (sources, includes, other files, core files)."""
        return tuple(dict.fromkeys([f.path for f in self.files] + list(self.core_files)))

    def to_dict(self) -> dict:
        return {
            "design": self.design, "target": self.target, "vlnv": self.vlnv, "name": self.name,
            "toplevel": self.toplevel, "tool": self.tool, "flow": self.flow,
            # logical_name only when a file has one: the key of every other target stays as it was
            "files": [{"path": str(f.path), "file_type": f.file_type, "core": f.core,
                       "is_include_file": f.is_include_file, "generated": f.generated,
                       **({"logical_name": f.logical_name} if f.logical_name else {})} for f in self.files],
            "include_dirs": [str(p) for p in self.include_dirs],
            "parameters": self.parameters, "parameter_specs": self.parameter_specs,
            "tool_options": self.tool_options, "work_root": str(self.work_root),
            "eda_file": str(self.eda_file), "core_files": [str(p) for p in self.core_files],
        }


def fusesoc_version() -> str:
    try:
        from importlib.metadata import version
        return version("fusesoc")
    except Exception:  # pragma: no cover - fusesoc is a hard dependency
        return "unknown"


def _format_override(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def hdl_value(value: Any) -> Any:
    """A parameter's value as the HDL tools are given it (-D, -G, -chparam): a bool is 1 or 0, as edalize
    passes it (its param_value_str filter), so `NAME ? a : b` means the same in simulation
    and synthesis; any other value is unchanged."""
    return int(value) if isinstance(value, bool) else value


def place_copied_files(edam: "Edam", folder: Path) -> list[Path]:
    """Copy the EDAM's copied_files into folder at their paths relative to the work root (where a tool that
    does not run in the work root resolves a relative `$readmemh` path); returns the copies."""
    folder = Path(folder)
    out = []
    for rel, src in edam.copied_files:
        dst = folder / rel
        if not dst.resolve().is_relative_to(folder.resolve()):  # `copyto: ../x` never writes outside the folder
            continue
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dst)
        out.append(dst)
    return out


def _override_key(params: Mapping[str, Any], flags: Iterable[str]) -> str:
    if not params and not flags:
        return ""
    blob = json.dumps({"params": {k: _format_override(v) for k, v in sorted(params.items())},
                       "flags": sorted(flags)}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:10]


def work_root_for(design: str, target: str, params: Mapping[str, Any] | None = None,
                  flags: Iterable[str] = (), build_root: Path = BUILD) -> Path:
    key = _override_key(params or {}, list(flags))
    return Path(build_root) / "fusesoc" / design / (f"{target}-{key}" if key else target)


def _inputs_hash(cores_root: Path, target: str, vlnv: str, params: Mapping[str, Any], flags) -> str:
    h = hashlib.sha256()
    h.update(json.dumps({"format": _STAMP_FORMAT, "fusesoc": fusesoc_version(), "target": target,
                         "vlnv": vlnv,
                         # the interpreter's version, not its path: `doit` and `python -m doit` reach the
                         # same venv through different paths, and must share one resolution
                         "python": sys.version,
                         "params": {k: _format_override(v) for k, v in sorted(params.items())},
                         "flags": sorted(flags)}, sort_keys=True).encode())
    for p in _resolve_inputs(cores_root):
        h.update(str(p).encode() + b"\0")
        h.update(hashlib.sha256(p.read_bytes()).digest())
    return h.hexdigest()


def _fusesoc_cmd() -> list[str]:
    exe = Path(sys.executable).with_name("fusesoc")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "fusesoc.main"]


_ERROR_LINE = re.compile(r"^(ERROR|CRITICAL)[: ]\s*(.*)$")


_MISSING_DEP = re.compile(r"<- '([^' ]+) ==")  # FuseSoC's solver: 'needed by == v' <- 'missing == v'
_PARSE_ERROR_IN = re.compile(r"parse error in (\S+?\.core)\b")


def _fix_hint(message: str, target: str, vlnv: str, core_file: str | None = None) -> str:
    m = message.lower()
    missing = _MISSING_DEP.findall(message) if "missing packages" in m else []
    other = [f for f in _PARSE_ERROR_IN.findall(message)
             if core_file is None or Path(f).resolve() != Path(core_file).resolve()]
    if missing or other:  # the cause is elsewhere than this core's syntax: name it
        parts = []
        if missing:
            parts.append(f"dependency {', '.join(dict.fromkeys(missing))} (FuseSoC's name: ':' read as '_') is in "
                         f"no core library FuseSoC reads (cores/ included): add the library that has it (`fusesoc --config "
                         f"fusesoc.conf library add <name> <url or folder>`), or correct the VLNV under `depend:`")
        if other:
            parts.append(f"{other[0]} does not parse, and FuseSoC reads every core file in its libraries: fix "
                         f"its syntax (CAPI=2 YAML)")
        return "; and ".join(parts)
    if m.startswith("parse error"):
        return "fix the core file's syntax (CAPI=2 YAML; `fusesoc core-info <vlnv>` shows the same error)"
    if "unrecognized arguments" in m:
        return ("a parameter override is not a parameter of this target: declare it in the core and list "
                "it under the target's `parameters:`")
    if "was not found" in m or "missing packages" in m or "no such core" in m or "could not find" in m:
        return (f"check that a core file under cores/ declares `name: {vlnv}` (and every dependency it "
                f"lists), and that design.yaml's `core:` matches it")
    if "target" in m and ("not found" in m or "no target" in m or "does not exist" in m):
        return f"add a `{target}:` target to the core file, or ask for one of its existing targets"
    if "generator" in m or "generat" in m:
        return ("the core's generator failed: run it by hand from the generator_cache input file named "
                "in the message, and fix the script or its `generate:` parameters")
    if "yaml" in m or "parse" in m or "scanner" in m or "mapping" in m or "capi" in m or "schema" in m:
        return "fix the core file's syntax (CAPI=2 YAML; `fusesoc core-info` shows the same error)"
    return "run the printed fusesoc command by hand to see the full log"


def _run_fusesoc(cmd: list[str], design: designs.Design, target: str, declared: list[Declared] = (),
                 cache_home: Path | None = None) -> None:
    env = dict(os.environ)
    if cache_home is not None:  # FUSESOC_CACHE (a project's fusesoc.conf naming a cache_root still wins)
        env["XDG_CACHE_HOME"] = str(cache_home)
    env.setdefault("PYTHONUNBUFFERED", "1")
    # Generators are run with `interpreter: python3`: make that the venv's python.
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    # FuseSoC and the generators it starts, in a process group tied to this build (kabe.base.tool_group)
    proc = tool_group.run(cmd, cwd=ROOT, capture_output=True, text=True, env=env)
    if proc.returncode == 0:
        return
    text = (proc.stderr + "\n" + proc.stdout).strip()
    problem = core_file_problem(design.core_file, target, text, declared)
    if problem:  # said in the core file's terms, not as FuseSoC's traceback or "not found"
        raise CoreError(problem)
    errors: list[str] = []
    in_error = False
    for line in text.splitlines():
        stripped = line.strip()
        if m := _ERROR_LINE.match(stripped):
            errors.append(m.group(2))
            in_error = True
        elif in_error and stripped and not re.match(r"^(INFO|WARNING|DEBUG)\b", stripped):
            errors[-1] += " / " + stripped  # FuseSoC's multi-line errors (dependency resolution)
        else:
            in_error = False
    # A core with a YAML/schema error is skipped by the library scan ("Parse error. Ignoring file"),
    # and FuseSoC then only says the core was not found: put the parse error first.
    parse = re.search(r"WARNING: Parse error\. Ignoring file (\S+?): (.*?)(?=\n(?:[A-Z]+:|\n)|\Z)", text, re.S)
    if parse:
        errors.insert(0, f"parse error in {parse.group(1)}: " + " ".join(parse.group(2).split()))
    if "Failed to run generator" in text:
        # The generator's own stderr is interleaved as plain lines: keep its last few.
        own = [line.strip() for line in text.splitlines()
               if line.strip() and not re.match(r"^(INFO|WARNING|ERROR|DEBUG|CRITICAL)\b", line.strip())]
        if own:
            errors.append("generator said: " + " / ".join(own[-4:]))
    raised = re.findall(r"^(\w+(?:Error|Exception): .*)$", text, re.MULTILINE) if "Traceback (most recent" in text else []
    if raised and not errors:  # FuseSoC stopped with a Python exception: its last line, not the traceback
        message = f"FuseSoC stopped with {raised[-1].strip()}"
    elif errors:
        message = " | ".join(errors[-3:])
    else:
        tail = [line for line in text.splitlines() if line.strip()]
        argerr = [line.strip() for line in tail if "error:" in line]  # argparse (bad override)
        tail = argerr[-1:] if argerr else tail[-6:]
        message = " | ".join(tail) or f"exit status {proc.returncode}"
    raise CoreError(
        f"{design.core_file}: FuseSoC could not set up target {target!r} of {design.core}: {message}. "
        f"Fix: {_fix_hint(message, target, design.core, str(design.core_file))}. (command: {' '.join(cmd)})"
    )


def _defines_generators(core_file: Path) -> bool:
    try:
        text = Path(core_file).read_text(errors="replace")
        if "generators" not in text:
            return False
        core = yaml.load(text, Loader=designs.YAML_LOADER)
    except (OSError, yaml.YAMLError):
        return True  # cannot tell: count it
    return isinstance(core, dict) and bool(core.get("generators"))


def _must_rerun(edam: Edam) -> bool:
    """True when FuseSoC's output depends on files kabe does not hash for the stamp: a generator
    other than kabe's own ran (it may read any file: a data file a parameter names, a module beside
    it), or a file was copied into the work root (`copyto`: an HDL or .hex source is not hashed)."""
    work_root = Path(edam.work_root)
    gen_cache = work_root / "generator_cache"
    fetched = work_root / FUSESOC_CACHE  # a provider's cores and input-cached generator output
    if any(f.path.is_relative_to(work_root) and not f.path.is_relative_to(gen_cache)
           and not f.path.is_relative_to(fetched) for f in edam.files):
        return True  # a copyto file
    generated = [c for c in edam.core_files if c.is_relative_to(gen_cache) or _generated(c, work_root)]
    if not generated:
        return False
    own = GENERATORS.resolve()
    return any(not c.is_relative_to(own) and _defines_generators(c) for c in edam.core_files)


def _generated(path: Path, work_root: Path) -> bool:
    """Under a FuseSoC generator_cache of this work root: the plain one, or the input-cached one in
    FUSESOC_CACHE."""
    return any(p.name == "generator_cache" for p in path.parents if p.is_relative_to(work_root))


def _seed_cache(work_root: Path, staging: Path) -> Path:
    """FUSESOC_CACHE for a new set-up in staging: the last set-up's, without its generator output
    (hard links where the file system allows: a provider's cores can be large)."""
    new = staging / FUSESOC_CACHE
    old = work_root / FUSESOC_CACHE
    if old.is_dir():
        def copy(src, dst):
            try:
                os.link(src, dst)
            except OSError:
                shutil.copy2(src, dst)
        shutil.copytree(old, new, symlinks=True, copy_function=copy,
                        ignore=lambda d, names: ["generator_cache"] if "generator_cache" in names else [])
    new.mkdir(exist_ok=True)
    return new


def _tree(root: Path) -> dict[str, Path]:
    """FuseSoC's files under root (relative posix path -> path), kabe's own files left out."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
            p = Path(dirpath, name)
            rel = p.relative_to(root).as_posix()
            if rel not in _OWN:
                out[rel] = p
    return out


def _same(a: Path, b: Path) -> bool:
    if a.is_symlink() or b.is_symlink():
        return a.is_symlink() and b.is_symlink() and os.readlink(a) == os.readlink(b)
    try:
        if a.stat().st_size != b.stat().st_size:
            return False
        return a.read_bytes() == b.read_bytes()
    except OSError:
        return False


def _publish(staging: Path, work_root: Path, last: list[str] | None) -> list[str]:
    """Make work_root hold FuseSoC's new output from staging: files that differ are moved in (one
    rename each), files of the last setup (`last`; every non-kabe file when unknown) that the new
    one did not write are removed, and folders left empty with them. Returns the new file list."""
    new = _tree(staging)
    old = _tree(work_root)
    for rel, src in new.items():
        dst = work_root / rel
        if rel in old and _same(src, dst):
            continue
        if dst.is_dir() and not dst.is_symlink():
            shutil.rmtree(dst)
        dst.parent.mkdir(parents=True, exist_ok=True)
        os.replace(src, dst)
    stale = (set(old) if last is None else set(last) & set(old)) - set(new)
    for rel in sorted(stale):
        (work_root / rel).unlink(missing_ok=True)
    for dirpath, _dirs, _files in sorted(os.walk(work_root), key=lambda t: -len(t[0])):
        if Path(dirpath) != work_root and not os.listdir(dirpath):
            os.rmdir(dirpath)
    return sorted(new)


def _parse_eda(eda_file: Path, work_root: Path, design: designs.Design, target: str, vlnv: str) -> Edam:
    try:
        eda = yaml.load(eda_file.read_text(), Loader=designs.YAML_LOADER)
    except (OSError, yaml.YAMLError) as e:
        raise CoreError(f"{design.core_file}: cannot read FuseSoC's EDAM {eda_file}: {e}. "
                        f"Fix: delete {work_root} and resolve again") from None
    files: list[SourceFile] = []
    include_dirs: list[Path] = []
    resolved_root = work_root.resolve()
    for entry in eda.get("files", []):
        path = (work_root / entry["name"]).resolve()
        inc = bool(entry.get("is_include_file", False))
        generated = _generated(path, resolved_root)
        files.append(SourceFile(path=path, file_type=str(entry.get("file_type", "")), core=str(entry.get("core", "")),
                                is_include_file=inc, generated=generated,
                                logical_name=str(entry.get("logical_name") or "")))
        if inc:
            d = (work_root / entry["include_path"]).resolve() if entry.get("include_path") else path.parent
            if d not in include_dirs:
                include_dirs.append(d)
    lost = [f for f in files if not f.path.exists()]
    foreign = sorted({f.core for f in lost if f.core and f.core.lstrip(":") != design.core.lstrip(":")})
    if foreign:  # a dependency's own core file lists them: that core, not the design's, is to fix
        listed = [str(f.path) for f in lost if f.core in foreign]
        raise CoreError(f"core {foreign[0]} (a dependency of {design.core}, from its library) lists file(s) that do "
                        f"not exist: {', '.join(listed[:5])}. Fix: that core is its library's: update the library "
                        f"(`fusesoc library update`), depend on a version whose files exist, or fix it there")
    missing = [str(f.path) for f in lost]
    if missing:
        raise CoreError(f"{design.core_file}: target {target!r} lists file(s) that do not exist: "
                        f"{', '.join(missing[:5])}. Fix: correct the fileset paths (relative to the core file)")
    params = eda.get("parameters") or {}
    flow_options = dict(eda.get("flow_options") or {})
    tool = flow_options.pop("tool", None)
    tool_options_all = eda.get("tool_options") or {}
    if tool is None and len(tool_options_all) == 1:
        tool = next(iter(tool_options_all))
    tool_options = dict(flow_options)
    tool_options.update(tool_options_all.get(tool, {}) if tool else {})
    core_files = []
    core_of: dict[str, Path] = {}
    for core_name, info in (eda.get("cores") or {}).items():
        cf = info.get("core_file") if isinstance(info, dict) else None
        if cf:
            core_files.append((work_root / cf).resolve())
            core_of[str(core_name)] = core_files[-1]
    check_file_types(files, core_of, design, target)
    toplevel = eda.get("toplevel")
    if isinstance(toplevel, list):
        toplevel = toplevel[0] if len(toplevel) == 1 else " ".join(toplevel)
    if not toplevel:
        raise CoreError(f"{design.core_file}: target {target!r} has no toplevel. Fix: add `toplevel: <module>`")
    return Edam(
        design=design.name, target=target, vlnv=vlnv, name=str(eda.get("name", "")), toplevel=str(toplevel),
        tool=str(tool or ""), files=tuple(files), include_dirs=tuple(include_dirs),
        parameters={k: v.get("default") for k, v in params.items()},
        parameter_specs={k: dict(v) for k, v in params.items()},
        tool_options=tool_options, flow="flow" if "flow_options" in eda else None,
        work_root=work_root, eda_file=eda_file, core_files=tuple(core_files), core_of=core_of,
    )


def resolve(design: str | designs.Design, target: str = "sim", *, params: Mapping[str, Any] | None = None,
            flags: Iterable[str] = (), cores_root: Path | None = None, build_root: Path = BUILD,
            force: bool = False) -> Edam:
    """Resolve design's `target` through FuseSoC; returns its Edam.

    params override core parameters (FuseSoC backend arguments, e.g. {"LATENCY_ADJUST": 1});
    flags are FuseSoC use flags. Overrides get their own work root, so they never disturb the
    default one. force: FuseSoC sets the target up again even when its last answer still holds
    (a build with cache=off). Raises CoreError (core file, FuseSoC's message, the fix) on any failure.
    """
    if isinstance(design, designs.Design):
        d = design
        cores_root = Path(cores_root) if cores_root else d.yaml_file.parent.parent
    else:
        cores_root = Path(cores_root or CORES)
        d = designs.get(design, cores_root=cores_root)
    params = dict(params or {})
    flags = list(flags)
    # another core file declaring the design's VLNV (a copied design not renamed): FuseSoC would keep one of
    # the two silently, and build whichever it kept
    declared = declarations([GENERATORS, Path(cores_root), *_library_roots()])
    check_unique(d, declared)
    work_root = work_root_for(d.name, target, params, flags, build_root).resolve()
    work_root.mkdir(parents=True, exist_ok=True)
    key = _inputs_hash(Path(cores_root), target, d.core, params, flags)
    stamp = work_root / _STAMP
    eda_file = work_root / (d.core.replace(":", "_") + ".eda.yml")

    # Another process (a parallel doit task, another agent) may be resolving the same target.
    with open(work_root / _LOCK, "w") as lock:
        take_lock(lock)
        try:
            state = json.loads(stamp.read_text())
            if not isinstance(state, dict):
                state = {}
        except (OSError, ValueError):
            state = {}
        if state.get("eda_file"):
            eda_file = work_root / Path(str(state["eda_file"])).name
        # reused: the same inputs, and either FuseSoC's output depends on nothing else or this process
        # has set it up for these inputs already (a build resolves a target several times)
        if (not force and state.get("key") == key and eda_file.exists()
                and (not state.get("rerun") or _FRESH.get(work_root) == key)):
            try:
                edam = _parse_eda(eda_file, work_root, d, target, d.core)
            except CoreError:
                pass
            else:
                check_used_cores(d, edam, declared)
                return edam
        stamp.unlink(missing_ok=True)
        _FRESH.pop(work_root, None)
        conf = project_fusesoc_conf()  # the project's libraries; no user or system config leaks in
        if conf is None:
            conf = work_root / "fusesoc.conf"
            conf.write_text("[main]\n")
        # FuseSoC writes into a fresh sibling of the work root (the same depth: its relative paths are
        # the same), and only what changed is moved in (_publish)
        for old in work_root.parent.glob(f".{work_root.name}.new-*"):  # a killed setup's (we hold the lock)
            shutil.rmtree(old, ignore_errors=True)
        staging = work_root.parent / f".{work_root.name}.new-{os.getpid()}"
        staging.mkdir()
        try:
            # kabe's own library first (kabe:gen:top, package data), then the project's cores
            cmd = _fusesoc_cmd() + ["--config", str(conf), "--cores-root", str(GENERATORS),
                                    "--cores-root", str(cores_root)]
            cmd += ["run", "--setup", "--no-export", "--work-root", str(staging), "--target", target]
            for fl in flags:
                cmd += ["--flag", fl]
            cmd.append(d.core)
            cmd += [f"--{k}={_format_override(v)}" for k, v in params.items()]
            try:
                _run_fusesoc(cmd, d, target, declared, cache_home=_seed_cache(work_root, staging))
            except CoreError as e:
                if _NO_TOOL not in str(e).lower() or target not in KABE_TOOLS:
                    raise
                # the target says no tool: kabe's own for this target, as kabe runs it anyway
                shutil.rmtree(staging, ignore_errors=True)
                staging.mkdir()
                at = cmd.index("--target") + 2
                cmd = cmd[:at] + ["--tool", KABE_TOOLS[target]] + cmd[at:] + _KABE_TOOL_ARGS.get(KABE_TOOLS[target], [])
                _run_fusesoc(cmd, d, target, declared, cache_home=_seed_cache(work_root, staging))
            eda_name = d.core.replace(":", "_") + ".eda.yml"
            if not (staging / eda_name).exists():
                found = sorted(p.name for p in staging.glob("*.eda.yml"))
                if len(found) != 1:
                    raise CoreError(f"{d.core_file}: FuseSoC ran but wrote no EDAM in {work_root} "
                                    f"(found {found}). Fix: check the target's flow/tool settings")
                eda_name = found[0]
            last = state.get("files") if isinstance(state.get("files"), list) else None
            files = _publish(staging, work_root, last)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        eda_file = work_root / eda_name
        edam = _parse_eda(eda_file, work_root, d, target, d.core)
        check_used_cores(d, edam, declared)
        unknown = sorted(set(params) - set(edam.parameters))
        if unknown:
            raise CoreError(f"{d.core_file}: target {target!r} has no parameter(s) {', '.join(unknown)}; "
                            f"its parameters: {', '.join(edam.parameters) or '(none)'}. "
                            f"Fix: declare them in the core and list them under the target's `parameters:`")
        stamp.write_text(json.dumps({"key": key, "eda_file": eda_file.name, "rerun": _must_rerun(edam),
                                     "files": files}) + "\n")
        _FRESH[work_root] = key
        return edam
