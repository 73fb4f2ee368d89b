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

import configparser
import fcntl
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

from kabe.errors import UserError, bounded
from kabe import designs, tool_group
from kabe.paths import BUILD, CORES, GENERATORS, ROOT, SCRIPTS

TARGETS = ("sim", "synth", "vivado")
HDL_TYPES = ("verilogSource", "systemVerilogSource", "vhdlSource")
# Files whose change cannot alter FuseSoC's answer (only their content, which the flows hash themselves).
_HDL_SUFFIXES = {".v", ".sv", ".vh", ".svh", ".vhd", ".vhdl", ".xdc", ".sdc", ".mem", ".hex"}
_STAMP = "kabe_resolve.json"
_STAMP_FORMAT = 2  # bump when the stamp or the way kabe calls FuseSoC changes
_LOCK = ".lock"
_OWN = {_LOCK, _STAMP, "fusesoc.conf"}  # kabe's files in a work root, not FuseSoC's output
# work root -> the inputs key FuseSoC last set it up for in this process (kabe.cores' docstring)
_FRESH: dict[Path, str] = {}


class CoreError(UserError, RuntimeError):
    """FuseSoC could not resolve a core: names the core file, FuseSoC's message and the fix."""


# File types FuseSoC and edalize know (FuseSoC's CAPI1 list, IP-XACT's and the ones edalize's tools read).
# FuseSoC passes any string through and every tool leaves out a file whose type it does not know, so a typo
# (`verilogSourc`) silently drops the file: kabe refuses an unknown type on an HDL file, or one a letter or
# two from a known type. An HDL type may carry a standard's version (verilogSource-2005, vhdlSource-2008).
KNOWN_FILE_TYPES = ("verilogSource", "systemVerilogSource", "vhdlSource", "xdc", "SDC", "sdc", "tclSource",
                    "user", "mem", "xci", "bd", "UCF", "PCF", "LPF", "PDC", "CST", "CCF", "QIP", "QSYS", "QSF",
                    "BMM", "vlt", "waiver", "edif", "uhdm", "dpiLibrary", "iceboxAscii", "chipdb", "bitstream",
                    "report", "tlverilogsource", "cppSource", "cSource", "systemCSource", "veribleLintRules",
                    "unknown", "swObject", "swCHeader")
_HDL_FILE_SUFFIXES = {".v", ".sv", ".vh", ".svh", ".vhd", ".vhdl"}
CAPI2_HEADER = "CAPI=2:"
_CORE_SCAN_EXCLUDE = {".git"}  # as FuseSoC's library scan


@dataclass(frozen=True)
class Declared:
    """One .core file FuseSoC's library scan reads: its path, the `name:` it declares, and whether its first
    line is the `CAPI=2:` FuseSoC needs (a core file without it is skipped: its VLNV is then "not found")."""

    path: Path
    name: str | None
    capi2: bool


@dataclass(frozen=True)
class SourceFile:
    path: Path  # absolute
    file_type: str  # FuseSoC file type: verilogSource, systemVerilogSource, xdc, user, ...
    core: str  # VLNV of the core that contributed it (a generated core for generator output)
    is_include_file: bool = False
    generated: bool = False  # produced by a FuseSoC generator (lives in generator_cache/)

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
    def reachable_headers(self) -> tuple[Path, ...]:
        """Every file directly in the target's include folders: Yosys and Verilator read any header an
        `include names there, listed in the core file or not, whatever its suffix (`.inc`, `.svh`,
        `.h`), so every key of an output built from this target (the build's cache key, Verilator's
        compiled model) must hash them all: an unlisted one left out kept an old verdict after it
        changed."""
        out: list[Path] = []
        for d in self.include_dirs:
            d = Path(d)
            if d.is_dir():
                out += sorted(p for p in d.iterdir() if p.is_file() and not p.name.startswith("."))
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
            "files": [{"path": str(f.path), "file_type": f.file_type, "core": f.core,
                       "is_include_file": f.is_include_file, "generated": f.generated} for f in self.files],
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


def project_fusesoc_conf() -> Path | None:
    """The project's own FuseSoC configuration (what `fusesoc library add` writes in the project's
    folder): its libraries are searched beside the project's cores/. The user's and the system's
    configuration are never read, so a build means the same on every machine."""
    conf = ROOT / "fusesoc.conf"
    return conf if conf.is_file() else None


def _library_roots() -> list[Path]:
    """The library locations the project's fusesoc.conf names (relative ones from the file's folder,
    as FuseSoC reads them)."""
    conf = project_fusesoc_conf()
    if conf is None:
        return []
    parser = configparser.ConfigParser()
    try:
        parser.read(conf)
    except configparser.Error as e:
        raise CoreError(f"{conf}: not a FuseSoC configuration ({' '.join(str(e).split())}). "
                        f"Fix: the file `fusesoc library add` writes, [library.<name>] sections") from None
    out = []
    for section in parser.sections():
        if section.startswith("library."):
            location = parser.get(section, "location", fallback=str(Path("fusesoc_libraries") / section[8:]))
            out.append((conf.parent / Path(location).expanduser()).resolve())
    return out


def _first_word(path: Path) -> str:
    """The first word of a core file's first line, as FuseSoC reads its CAPI version."""
    try:
        with open(path, errors="replace") as f:
            words = f.readline().split()
    except OSError:
        return ""
    return words[0] if words else ""


def declarations(cores_root: Path) -> list[Declared]:
    """Every .core file FuseSoC reads when it resolves a design of cores_root: kabe's own library, the
    project's cores/ and the libraries its fusesoc.conf names, each file once (by its real path), walked as
    FuseSoC walks them (symlinks followed once, .git and folders holding FUSESOC_IGNORE skipped)."""
    out: list[Declared] = []
    seen: set[Path] = set()
    for root in [GENERATORS, Path(cores_root), *_library_roots()]:
        if not Path(root).is_dir():
            continue
        visited: set[tuple[int, int]] = set()
        for dirpath, dirnames, filenames in os.walk(root, followlinks=True):
            if "FUSESOC_IGNORE" in filenames:
                dirnames[:] = []
                continue
            keep = []
            for name in sorted(dirnames):
                if name in _CORE_SCAN_EXCLUDE:
                    continue
                try:
                    st = os.stat(os.path.join(dirpath, name))
                except OSError:
                    continue
                if (st.st_dev, st.st_ino) not in visited:
                    visited.add((st.st_dev, st.st_ino))
                    keep.append(name)
            dirnames[:] = keep
            for name in sorted(filenames):
                if not name.endswith(".core"):
                    continue
                path = Path(dirpath, name)
                real = path.resolve()
                if real in seen or not path.is_file():
                    continue
                seen.add(real)
                out.append(Declared(path, designs.core_name(path), _first_word(path) == CAPI2_HEADER))
    return out


def _shown(path: Path | str) -> str:
    """A path as a message shows it: relative to the project when it is under it."""
    p = Path(path)
    try:
        return p.resolve().relative_to(ROOT.resolve()).as_posix()
    except ValueError:
        return str(p)


def _same_file(a: Path | str, b: Path | str) -> bool:
    return Path(a).resolve() == Path(b).resolve()


def _duplicate_error(d: designs.Design, vlnv: str, files: list[Path], used: Path | None = None) -> CoreError:
    """Two core files declare one VLNV: FuseSoC keeps one of them, silently, so a copied design whose core
    still says the original's name builds the original's files (red team 3b, repro 23)."""
    files = list(dict.fromkeys(Path(f) for f in files))
    listed = ", ".join(_shown(f) for f in files)
    picked = f" (this time it used {_shown(used)})" if used is not None else ""
    parts = vlnv.split(":")
    if vlnv == d.core:
        yaml_shown = _shown(d.yaml_file)
        if len(parts) == 4 and parts[2] != d.name:  # the design's folder holds a copy of another design's core
            new = ":".join([*parts[:2], d.name, parts[3]])
            fix = (f"a copied design needs its own VLNV: change `name:` in {_shown(d.core_file)} and `core:` in "
                   f"{yaml_shown} to {new}")
        else:
            others = ", ".join(_shown(f) for f in files if not _same_file(f, d.core_file))
            fix = (f"give the other core file(s) ({others}) a VLNV of their own (`name:`, and `core:` in the "
                   f"design.yaml beside each), or delete the stale copy")
        return CoreError(f"{_shown(d.core_file)}: VLNV {vlnv} is declared by {len(files)} core files ({listed}); "
                         f"FuseSoC silently keeps one of them{picked}, so design {d.name} could be verified and "
                         f"synthesized from the other's files. Fix: {fix}")
    return CoreError(f"{_shown(d.core_file)}: dependency {vlnv} is declared by {len(files)} core files ({listed}); "
                     f"FuseSoC silently keeps one of them{picked}. Fix: keep one (delete the stale copy), or give "
                     f"the other its own `name:` (a new version number, if it is a newer copy)")


def check_unique(d: designs.Design, declared: list[Declared]) -> None:
    """CoreError when another core file FuseSoC reads declares the design's own VLNV."""
    same = [x.path for x in declared if x.capi2 and x.name == d.core]
    if any(not _same_file(p, d.core_file) for p in same):
        raise _duplicate_error(d, d.core, [d.core_file, *same])


def _check_used_cores(d: designs.Design, edam: "Edam", declared: list[Declared]) -> None:
    """After resolution: the design's core is its own core file, and no core of the EDAM is declared twice."""
    own = edam.core_of.get(d.core)
    used = {p.resolve() for p in edam.core_files}
    if (own is not None and not _same_file(own, d.core_file)) or (used and Path(d.core_file).resolve() not in used):
        other = own if own is not None else None
        raise CoreError(f"{_shown(d.core_file)}: FuseSoC resolved {d.core} from "
                        f"{_shown(other) if other is not None else 'another core file'}, not from the design's own "
                        f"core file, so design {d.name} would be verified and synthesized from another core's files. "
                        f"Fix: give each core file its own `name:` (and `core:` in {_shown(d.yaml_file)} the "
                        f"design's)")
    for vlnv, path in edam.core_of.items():
        same = [x.path for x in declared if x.capi2 and x.name == vlnv]
        if len(same) > 1:
            raise _duplicate_error(d, vlnv, same, used=path)


def _resolve_inputs(cores_root: Path) -> list[Path]:
    """Files whose change may change FuseSoC's answer: core files and generator scripts/data, the
    project's fusesoc.conf and the core files of the libraries it names."""
    conf = project_fusesoc_conf()
    out = [conf] if conf else []
    for lib in _library_roots():
        out += sorted(p for p in lib.rglob("*.core") if p.is_file() and ".git" not in p.parts)
    for root in (GENERATORS, Path(cores_root), SCRIPTS):
        if not root.is_dir():
            continue
        for p in sorted(root.rglob("*")):
            if not p.is_file() or "__pycache__" in p.parts or p.name.startswith("."):
                continue
            if root == SCRIPTS and p.suffix != ".py":
                continue
            if p.suffix.lower() in _HDL_SUFFIXES:
                continue
            out.append(p)
    return out


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


_PARAM_TYPES = ("cmdlinearg", "generic", "plusarg", "vlogdefine", "vlogparam")
_DATATYPES = ("bool", "file", "int", "real", "str")
_CYCLE = re.compile(r"^(\S+?)-[^\s-]+-\d+ -> ", re.MULTILINE)  # simplesat: 'user_design_ce-0.1.0-0 -> [...]'


def _value_problem(datatype: str, value: Any) -> str | None:
    """Why FuseSoC cannot read value as a parameter of datatype (its capi2 _parse_param_value), or None."""
    if datatype == "int":
        if isinstance(value, int):
            return None
        if isinstance(value, str):
            try:
                int(value, 0)
                return None
            except ValueError:
                pass
        return ("which FuseSoC cannot read as an int. Fix: write a decimal or a 0x/0o/0b number (90 or 0x5A; a "
                "Verilog literal such as 8'h5A, a quoted value or a fraction is not read), or change the "
                "parameter's `datatype:`")
    if datatype == "bool":
        if isinstance(value, str) and value.lower() not in ("true", "false"):
            return "which is not a bool. Fix: write true or false"
        return None
    if datatype == "real" and not isinstance(value, float):
        try:
            float(value)
            return None
        except (TypeError, ValueError):
            return "which FuseSoC cannot read as a real. Fix: write a number (e.g. 2.5)"
    return None


def _parameter_problem(core: dict, target: str) -> str | None:
    """The first parameter of the core file FuseSoC cannot read: its datatype, paramtype, default, or a
    `NAME=value` under a target's `parameters:` (the asked target first); None when they all read."""
    specs = core.get("parameters") if isinstance(core.get("parameters"), dict) else {}
    for name, spec in specs.items():
        if not isinstance(spec, dict):
            continue
        datatype, paramtype = spec.get("datatype"), spec.get("paramtype")
        if datatype not in _DATATYPES:
            return (f"parameter {name} has datatype {bounded(datatype)}. Fix: `datatype:` is one of "
                    f"{', '.join(_DATATYPES)}")
        if paramtype not in _PARAM_TYPES:
            return (f"parameter {name} has paramtype {bounded(paramtype)}. Fix: `paramtype:` is one of "
                    f"{', '.join(_PARAM_TYPES)} (vlogparam: a Verilog parameter, vlogdefine: a `define)")
        if "default" in spec:
            why = _value_problem(datatype, spec["default"])
            if why:
                return f"parameter {name} (datatype {datatype}) has default: {bounded(spec['default'])}, {why}"
    targets = core.get("targets") if isinstance(core.get("targets"), dict) else {}
    for tname in sorted(targets, key=lambda t: (t != target, t != "default", str(t))):
        tdef = targets[tname]
        items = tdef.get("parameters") if isinstance(tdef, dict) else None
        for item in items if isinstance(items, list) else []:
            if not isinstance(item, str) or "=" not in item or "?" in item or "(" in item:
                continue  # a plain name, or a use-flag expression FuseSoC evaluates first
            name, value = item.split("=", 1)
            spec = specs.get(name.strip())
            if not isinstance(spec, dict) or spec.get("datatype") not in _DATATYPES:
                continue
            why = _value_problem(spec["datatype"], value.strip())
            if why:
                shown = value.strip() if len(value.strip()) <= 60 else value.strip()[:57] + "..."
                base = targets.get("default")
                if tname != "default" and isinstance(base, dict) and item in (base.get("parameters") or []):
                    tname = f"default' (which '{tname}' inherits"  # a `<<: *default` merge: said where written
                    where = f"target '{tname})"
                else:
                    where = f"target {tname!r}"
                return (f"{where} sets parameter {name.strip()} (datatype {spec['datatype']}) to {shown}, {why}")
    return None


def _package_core(package: str, declared: list[Declared]) -> str:
    """A core file for FuseSoC's solver name ('user_lib_helper'), else the name itself."""
    for x in declared:
        if x.name and "_".join(x.name.split(":")[:3]).strip("_") == package.strip("_"):
            return _shown(x.path)
    return package


def core_file_problem(core_file: Path, target: str, text: str = "", declared: list[Declared] = ()) -> str | None:
    """When FuseSoC failed: the mistake in the core file(s), said as one sentence naming the file and the fix,
    for the cases FuseSoC says only as a traceback or as "core not found" (a first line that is not
    `CAPI=2:`, a parameter value it cannot read, a dependency cycle); None when none of them is the cause."""
    shown = _shown(core_file)
    first = _first_word(core_file)
    if first != CAPI2_HEADER:
        seen = f"it is {bounded(first)}" if first else "it is empty"
        hint = (" (FuseSoC 2 reads CAPI2 only; `CAPI=1` is the old format: convert the file to CAPI2)"
                if first.startswith("CAPI=1") else " (add the colon)" if first == "CAPI=2" else "")
        return (f"{shown}: the first line must be `CAPI=2:` ({seen}); FuseSoC skips a core file without it, and "
                f"then says its core was not found. Fix: make the first line exactly `CAPI=2:`{hint}")
    if "Cyclic dependencies" in text:
        cycle = list(dict.fromkeys(_package_core(p, list(declared)) for p in _CYCLE.findall(text)))
        shown_cycle = " -> ".join(cycle + cycle[:1]) if cycle else "see FuseSoC's message"
        return (f"{shown}: the cores depend on each other in a cycle ({shown_cycle}), which FuseSoC cannot order. "
                f"Fix: remove the `depend:` entry that closes the cycle (no core may depend on itself, even "
                f"through another core)")
    try:
        core = yaml.load(Path(core_file).read_text(errors="replace"), Loader=designs.YAML_LOADER)
    except (OSError, yaml.YAMLError):
        core = None
    if isinstance(core, dict):
        why = _parameter_problem(core, target)
        if why:
            return f"{shown}: {why}"
    # a dependency FuseSoC did not find, declared by a core file it skipped for its first line
    missing = set(re.findall(r"<- '([^' ]+) [<>=!]", text)) | set(re.findall(r"requires '([^']+)', but this core was not found",
                                                                 text))
    for x in declared:
        if x.capi2 or not x.name or _same_file(x.path, core_file):
            continue
        parts = x.name.split(":")
        if {"_".join(parts[:3]).strip("_"), parts[2] if len(parts) > 2 else x.name} & {m.strip("_") for m in missing}:
            return (f"{_shown(x.path)}: the first line must be `CAPI=2:` (it is {bounded(_first_word(x.path))}); "
                    f"FuseSoC skips it, so {x.name}, a dependency of {shown}, is not found. Fix: make its first "
                    f"line exactly `CAPI=2:`")
    return None


def _run_fusesoc(cmd: list[str], design: designs.Design, target: str, declared: list[Declared] = ()) -> None:
    env = dict(os.environ)
    env.setdefault("PYTHONUNBUFFERED", "1")
    # Generators are run with `interpreter: python3`: make that the venv's python.
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    # FuseSoC and the generators it starts, in a process group tied to this build (kabe.tool_group)
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
    if any(f.path.is_relative_to(work_root) and not f.path.is_relative_to(gen_cache) for f in edam.files):
        return True  # a copyto file
    generated = [c for c in edam.core_files if c.is_relative_to(gen_cache)]
    if not generated:
        return False
    own = GENERATORS.resolve()
    return any(not c.is_relative_to(own) and _defines_generators(c) for c in edam.core_files)


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


def _file_type_known(file_type: str) -> bool:
    base = file_type.split("-")[0] if file_type.split("-")[0] in HDL_TYPES else file_type
    return base in KNOWN_FILE_TYPES


def _check_file_types(files: list[SourceFile], core_of: Mapping[str, Path], design, target: str) -> None:
    """CoreError for a file every tool would leave out because of its file_type: an HDL file (by suffix)
    with no type or one no tool knows, or any file whose type is a near-miss of a known one (a typo)."""
    import difflib

    for f in files:
        ft = f.file_type
        if _file_type_known(ft):
            continue
        hdl = f.path.suffix.lower() in _HDL_FILE_SUFFIXES
        near = difflib.get_close_matches(ft, KNOWN_FILE_TYPES, n=1, cutoff=0.75) if ft else []
        if not (near or (hdl and not f.is_include_file)):
            continue  # a tool-specific file kabe does not read, typed for another tool
        core_file = core_of.get(f.core) or getattr(design, "core_file", None)
        where = _shown(core_file) if core_file else f"core {f.core}"
        what = f"has file_type {ft!r}, which no tool knows" if ft else "has no file_type"
        guess = f" (did you mean {near[0]}?)" if near else ""
        raise CoreError(
            f"{where}: {_shown(f.path)} (target {target!r}) {what}{guess}, so every tool silently leaves the "
            f"file out. Fix: set its `file_type:` (on the file or its fileset) to one FuseSoC's tools know: "
            f"verilogSource, systemVerilogSource or vhdlSource for HDL (a version may follow, e.g. "
            f"verilogSource-2005), else one of {', '.join(t for t in KNOWN_FILE_TYPES if t not in HDL_TYPES)}")


def _parse_eda(eda_file: Path, work_root: Path, design: designs.Design, target: str, vlnv: str) -> Edam:
    try:
        eda = yaml.load(eda_file.read_text(), Loader=designs.YAML_LOADER)
    except (OSError, yaml.YAMLError) as e:
        raise CoreError(f"{design.core_file}: cannot read FuseSoC's EDAM {eda_file}: {e}. "
                        f"Fix: delete {work_root} and resolve again") from None
    files: list[SourceFile] = []
    include_dirs: list[Path] = []
    gen_cache = (work_root / "generator_cache").resolve()
    for entry in eda.get("files", []):
        path = (work_root / entry["name"]).resolve()
        inc = bool(entry.get("is_include_file", False))
        generated = gen_cache in path.parents
        files.append(SourceFile(path=path, file_type=str(entry.get("file_type", "")), core=str(entry.get("core", "")),
                                is_include_file=inc, generated=generated))
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
    _check_file_types(files, core_of, design, target)
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
    declared = declarations(Path(cores_root))
    check_unique(d, declared)
    work_root = work_root_for(d.name, target, params, flags, build_root).resolve()
    work_root.mkdir(parents=True, exist_ok=True)
    key = _inputs_hash(Path(cores_root), target, d.core, params, flags)
    stamp = work_root / _STAMP
    eda_file = work_root / (d.core.replace(":", "_") + ".eda.yml")

    # Another process (a parallel doit task, another agent) may be resolving the same target.
    with open(work_root / _LOCK, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
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
                _check_used_cores(d, edam, declared)
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
            _run_fusesoc(cmd, d, target, declared)
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
        _check_used_cores(d, edam, declared)
        unknown = sorted(set(params) - set(edam.parameters))
        if unknown:
            raise CoreError(f"{d.core_file}: target {target!r} has no parameter(s) {', '.join(unknown)}; "
                            f"its parameters: {', '.join(edam.parameters) or '(none)'}. "
                            f"Fix: declare them in the core and list them under the target's `parameters:`")
        stamp.write_text(json.dumps({"key": key, "eda_file": eda_file.name, "rerun": _must_rerun(edam),
                                     "files": files}) + "\n")
        _FRESH[work_root] = key
        return edam


_DEFINE_OPTION = re.compile(r"^-D([A-Za-z_][A-Za-z0-9_$]*)(?:=(.*))?$")


def hdl_settings(edam: Edam) -> dict[tuple[str, str], Any]:
    """What a target tells the HDL tools besides its files and top: ("parameter", name) -> value for its
    vlogparam/generic parameters, ("define", name) -> value for its vlogdefine parameters and the -D /
    +define+ of its verilator_options (which kabe's Verilator builds read). A parameter with no value is
    left out (no tool is given it). plusarg and cmdlinearg parameters are run-time arguments of a
    simulation, not part of the RTL: left out."""
    out: dict[tuple[str, str], Any] = {}
    for name, value in (edam.parameters or {}).items():
        kind = ((edam.parameter_specs or {}).get(name) or {}).get("paramtype", "vlogparam")
        if value is None or kind not in ("vlogparam", "generic", "vlogdefine"):
            continue
        out[("define" if kind == "vlogdefine" else "parameter", name)] = hdl_value(value)
    options = [str(o) for o in (edam.tool_options or {}).get("verilator_options", []) or []]
    for i, opt in enumerate(options):
        if opt == "-D" and i + 1 < len(options):
            opt = "-D" + options[i + 1]
        if m := _DEFINE_OPTION.match(opt):
            out[("define", m.group(1))] = m.group(2) if m.group(2) is not None else ""
        elif opt.startswith("+define+"):
            for item in filter(None, opt[len("+define+"):].split("+")):
                name, _, value = item.partition("=")
                out[("define", name)] = value
    return out


def _file_identity(f: SourceFile, work_root: Path) -> tuple[str, str]:
    """A file as both targets can share it: its path, or for a file FuseSoC wrote into the target's own work
    root (generator output, a copyto copy) its place there and its content."""
    try:
        rel = f.path.relative_to(Path(work_root).resolve())
    except ValueError:
        return ("file", str(f.path))
    try:
        digest = hashlib.sha256(f.path.read_bytes()).hexdigest()
    except OSError:
        digest = ""
    return (rel.as_posix(), digest)


def compare_targets(design: designs.Design, sim: Edam, synth: Edam) -> tuple[tuple[Path, ...], tuple[Path, ...]]:
    """kabe promises the verified RTL is the built RTL: CoreError when the sim and synth targets resolve to
    different designs (another toplevel; a parameter or define both set to different values, or one target
    sets and the other does not). Files may differ (a simulation model of a vendor primitive, glbl.v): returns
    (files only the sim target lists, files only the synth target lists), for the build to say and record."""
    core = _shown(design.core_file)
    diffs: list[str] = []
    if sim.toplevel != synth.toplevel:
        diffs.append(f"toplevel: target sim has {sim.toplevel}, target synth {synth.toplevel}")
    a, b = hdl_settings(sim), hdl_settings(synth)
    for key in sorted(set(a) | set(b)):
        kind, name = key
        if key in a and key in b:
            if a[key] != b[key]:
                diffs.append(f"{kind} {name}: target sim sets {name}={bounded(a[key])}, target synth "
                             f"{name}={bounded(b[key])}")
        elif key in a:
            diffs.append(f"{kind} {name}: target sim sets {name}={bounded(a[key])}, target synth does not set it")
        else:
            diffs.append(f"{kind} {name}: target synth sets {name}={bounded(b[key])}, target sim does not set it")
    if diffs:
        more = f"; and {len(diffs) - 3} more" if len(diffs) > 3 else ""
        raise CoreError(
            f"{core}: the sim and synth targets build different designs ({'; '.join(diffs[:3])}{more}), so the "
            f"simulation check would verify one design and the build synthesize another. Fix: give both targets "
            f"one toplevel and the same parameter and define values (set them once in the `default:` target both "
            f"inherit with `<<: *default`)")
    ids = {_file_identity(f, sim.work_root): f.path for f in sim.files}
    ids_synth = {_file_identity(f, synth.work_root): f.path for f in synth.files}
    sim_only = tuple(p for k, p in ids.items() if k not in ids_synth)
    synth_only = tuple(p for k, p in ids_synth.items() if k not in ids)
    return sim_only, synth_only


def shown_files(paths: Iterable[Path]) -> list[str]:
    """Paths as the console and metrics.json show them: relative to the project when under it."""
    return [_shown(p) for p in paths]
