"""What kabe reads of core files itself, around FuseSoC: which file declares which VLNV (two that declare
one are refused: FuseSoC silently keeps one of them), the file types every tool would silently leave
out, and, when FuseSoC fails, the mistake in the core file said in its terms (a first line that is not
`CAPI=2:`, a parameter value FuseSoC cannot read, a dependency cycle) instead of FuseSoC's traceback or
"core not found". kabe.project.cores calls these; this module runs no FuseSoC.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

import yaml

from kabe.project import designs
from kabe.base.errors import UserError, bounded
from kabe.base.paths import ROOT


HDL_TYPES = ("verilogSource", "systemVerilogSource", "vhdlSource")


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


def first_word(path: Path) -> str:
    """The first word of a core file's first line, as FuseSoC reads its CAPI version."""
    try:
        with open(path, errors="replace") as f:
            words = f.readline().split()
    except OSError:
        return ""
    return words[0] if words else ""


def declarations(roots: list[Path]) -> list[Declared]:
    """Every .core file FuseSoC reads under roots (kabe's own library, the project's cores/ and the
    libraries its fusesoc.conf names), each file once (by its real path), walked as FuseSoC walks them
    (symlinks followed once, .git and folders holding FUSESOC_IGNORE skipped)."""
    out: list[Declared] = []
    seen: set[Path] = set()
    for root in roots:
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
                out.append(Declared(path, designs.core_name(path), first_word(path) == CAPI2_HEADER))
    return out


def shown(path: Path | str) -> str:
    """A path as a message shows it: relative to the project when it is under it."""
    p = Path(path)
    try:
        return p.resolve().relative_to(ROOT.resolve()).as_posix()
    except ValueError:
        return str(p)


def same_file(a: Path | str, b: Path | str) -> bool:
    return Path(a).resolve() == Path(b).resolve()


def _duplicate_error(d: designs.Design, vlnv: str, files: list[Path], used: Path | None = None) -> CoreError:
    """Two core files declare one VLNV: FuseSoC keeps one of them, silently, so a copied design whose core
    still says the original's name builds the original's files (red team 3b, repro 23)."""
    files = list(dict.fromkeys(Path(f) for f in files))
    listed = ", ".join(shown(f) for f in files)
    picked = f" (this time it used {shown(used)})" if used is not None else ""
    parts = vlnv.split(":")
    if vlnv == d.core:
        yaml_shown = shown(d.yaml_file)
        if len(parts) == 4 and parts[2] != d.name:  # the design's folder holds a copy of another design's core
            new = ":".join([*parts[:2], d.name, parts[3]])
            fix = (f"a copied design needs its own VLNV: change `name:` in {shown(d.core_file)} and `core:` in "
                   f"{yaml_shown} to {new}")
        else:
            others = ", ".join(shown(f) for f in files if not same_file(f, d.core_file))
            fix = (f"give the other core file(s) ({others}) a VLNV of their own (`name:`, and `core:` in the "
                   f"design.yaml beside each), or delete the stale copy")
        return CoreError(f"{shown(d.core_file)}: VLNV {vlnv} is declared by {len(files)} core files ({listed}); "
                         f"FuseSoC silently keeps one of them{picked}, so design {d.name} could be verified and "
                         f"synthesized from the other's files. Fix: {fix}")
    return CoreError(f"{shown(d.core_file)}: dependency {vlnv} is declared by {len(files)} core files ({listed}); "
                     f"FuseSoC silently keeps one of them{picked}. Fix: keep one (delete the stale copy), or give "
                     f"the other its own `name:` (a new version number, if it is a newer copy)")


def check_unique(d: designs.Design, declared: list[Declared]) -> None:
    """CoreError when another core file FuseSoC reads declares the design's own VLNV."""
    same = [x.path for x in declared if x.capi2 and x.name == d.core]
    if any(not same_file(p, d.core_file) for p in same):
        raise _duplicate_error(d, d.core, [d.core_file, *same])


def check_used_cores(d: designs.Design, edam: Any, declared: list[Declared]) -> None:
    """After resolution, the design's core is its own core file, and no core of the EDAM is declared
    twice (edam: a kabe.project.cores.Edam, not imported here since kabe.project.cores imports this module)."""
    own = edam.core_of.get(d.core)
    used = {p.resolve() for p in edam.core_files}
    if (own is not None and not same_file(own, d.core_file)) or (used and Path(d.core_file).resolve() not in used):
        other = own if own is not None else None
        raise CoreError(f"{shown(d.core_file)}: FuseSoC resolved {d.core} from "
                        f"{shown(other) if other is not None else 'another core file'}, not from the design's own "
                        f"core file, so design {d.name} would be verified and synthesized from another core's files. "
                        f"Fix: give each core file its own `name:` (and `core:` in {shown(d.yaml_file)} the "
                        f"design's)")
    for vlnv, path in edam.core_of.items():
        same = [x.path for x in declared if x.capi2 and x.name == vlnv]
        if len(same) > 1:
            raise _duplicate_error(d, vlnv, same, used=path)


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
            return shown(x.path)
    return package


def core_file_problem(core_file: Path, target: str, text: str = "", declared: list[Declared] = ()) -> str | None:
    """When FuseSoC failed: the mistake in the core file(s), said as one sentence naming the file and the fix,
    for the cases FuseSoC says only as a traceback or as "core not found" (a first line that is not
    `CAPI=2:`, a parameter value it cannot read, a dependency cycle); None when none of them is the cause."""
    here = shown(core_file)
    first = first_word(core_file)
    if first != CAPI2_HEADER:
        seen = f"it is {bounded(first)}" if first else "it is empty"
        hint = (" (FuseSoC 2 reads CAPI2 only; `CAPI=1` is the old format: convert the file to CAPI2)"
                if first.startswith("CAPI=1") else " (add the colon)" if first == "CAPI=2" else "")
        return (f"{here}: the first line must be `CAPI=2:` ({seen}); FuseSoC skips a core file without it, and "
                f"then says its core was not found. Fix: make the first line exactly `CAPI=2:`{hint}")
    if "Cyclic dependencies" in text:
        cycle = list(dict.fromkeys(_package_core(p, list(declared)) for p in _CYCLE.findall(text)))
        shown_cycle = " -> ".join(cycle + cycle[:1]) if cycle else "see FuseSoC's message"
        return (f"{here}: the cores depend on each other in a cycle ({shown_cycle}), which FuseSoC cannot order. "
                f"Fix: remove the `depend:` entry that closes the cycle (no core may depend on itself, even "
                f"through another core)")
    try:
        core = yaml.load(Path(core_file).read_text(errors="replace"), Loader=designs.YAML_LOADER)
    except (OSError, yaml.YAMLError):
        core = None
    if isinstance(core, dict):
        why = _parameter_problem(core, target)
        if why:
            return f"{here}: {why}"
    # a dependency FuseSoC did not find, declared by a core file it skipped for its first line
    missing = set(re.findall(r"<- '([^' ]+) [<>=!]", text)) | set(re.findall(r"requires '([^']+)', but this core was not found",
                                                                 text))
    for x in declared:
        if x.capi2 or not x.name or same_file(x.path, core_file):
            continue
        parts = x.name.split(":")
        if {"_".join(parts[:3]).strip("_"), parts[2] if len(parts) > 2 else x.name} & {m.strip("_") for m in missing}:
            return (f"{shown(x.path)}: the first line must be `CAPI=2:` (it is {bounded(first_word(x.path))}); "
                    f"FuseSoC skips it, so {x.name}, a dependency of {here}, is not found. Fix: make its first "
                    f"line exactly `CAPI=2:`")
    return _version_range_problem(here, text, declared)


# FuseSoC's solver: 'needer == 0.1.0-0' <- 'acme_ip_fifo >= 2.0-0' (a range FuseSoC could not meet)
_RANGE = re.compile(r"'([^' ]+) == ([^' ]+)' <- '([^' ]+) (>=|<=|>|<|\^|~|!=) ([^' ]+)'")


def _version_range_problem(here: str, text: str, declared: list[Declared]) -> str | None:
    """A `depend:` range no core in the libraries meets while the core itself is there, in other
    versions: name the range, the versions there are and their files (FuseSoC says only that the
    requirements conflict)."""
    for needer, _, package, op, version in _RANGE.findall(text):
        have = [x for x in declared if x.name and x.capi2
                and "_".join(x.name.split(":")[:3]).strip("_") == package.strip("_")]
        if not have:
            continue  # not there at all: the "not found" hint says that
        name = ":".join(have[0].name.split(":")[:3])
        versions = ", ".join(f"{(x.name.split(':') + [''])[3] or '(no version)'} in {shown(x.path)}" for x in have[:6])
        want = version.removesuffix("-0")
        by = _package_core(needer, declared)
        by = "" if by == here else f" (needed by {by})"
        return (f"{here}: no core meets the dependency {op}{name}:{want}{by}; "
                f"the libraries hold {versions}. Fix: change the range under `depend:`, or add the library that "
                f"holds a version in it (`fusesoc --config fusesoc.conf library add <name> <url or folder>`)")
    return None


def _file_type_known(file_type: str) -> bool:
    base = file_type.split("-")[0] if file_type.split("-")[0] in HDL_TYPES else file_type
    return base in KNOWN_FILE_TYPES


def check_file_types(files: Iterable[Any], core_of: Mapping[str, Path], design, target: str) -> None:
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
        where = shown(core_file) if core_file else f"core {f.core}"
        what = f"has file_type {ft!r}, which no tool knows" if ft else "has no file_type"
        guess = f" (did you mean {near[0]}?)" if near else ""
        raise CoreError(
            f"{where}: {shown(f.path)} (target {target!r}) {what}{guess}, so every tool silently leaves the "
            f"file out. Fix: set its `file_type:` (on the file or its fileset) to one FuseSoC's tools know: "
            f"verilogSource, systemVerilogSource or vhdlSource for HDL (a version may follow, e.g. "
            f"verilogSource-2005), else one of {', '.join(t for t in KNOWN_FILE_TYPES if t not in HDL_TYPES)}")
