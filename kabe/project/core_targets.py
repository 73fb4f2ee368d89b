"""The sim and synth targets of a design must build one design: kabe promises the verified RTL is the
built RTL, while FuseSoC lets each target set its own toplevel, parameters and defines. compare_targets
refuses two targets that differ in those; files only one target lists (a simulation model of a vendor
primitive) are returned for the build to say and record.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any, Iterable

from kabe.project import designs
from kabe.project.core_files import CoreError, shown
from kabe.project.cores import Edam, SourceFile, hdl_value
from kabe.base.errors import bounded


_DEFINE_OPTION = re.compile(r"^-D([A-Za-z_][A-Za-z0-9_$]*)(?:=(.*))?$")
# -G<name>=<value> and -pvalue+<name>=<value> set a parameter of the top, as a vlogparam does
_PARAM_OPTION = re.compile(r"^(?:-G|-pvalue\+)([A-Za-z_][A-Za-z0-9_$.]*)=(.*)$")
# Verilator options that pull sources or settings into the simulation that the synth target never sees,
# so the comparison below cannot vouch for them: option -> what it does (an option ending in + or of the
# form -I<dir>/-U<name> is matched as a prefix, the others as a word or --opt=value)
_UNCOMPARABLE = {
    "-f": "reads more options from a file", "-F": "reads more options from a file",
    "-y": "searches a folder for modules", "-v": "reads a library file", "+libext+": "searches for modules by suffix",
    "-I": "adds an include folder", "+incdir+": "adds an include folder", "-U": "undefines a macro",
    "--top-module": "picks the top", "--top": "picks the top", "-top": "picks the top",
    "--bbox-sys": "black-boxes unsupported system calls", "--bbox-unsup": "black-boxes unsupported constructs",
    "--x-assign": "fixes the value of X (kabe randomises it)", "--x-initial": "fixes the value of X (kabe randomises it)",
}
_PREFIX_OPTIONS = ("+libext+", "+incdir+", "-I", "-U")
_SOURCE_SUFFIXES = (".v", ".sv", ".vh", ".svh", ".vlt", ".vlib", ".c", ".cc", ".cpp", ".h", ".vhd", ".vhdl")


def _number(text: str) -> Any:
    """A -G value as a core parameter would hold it: a plain decimal is an int (so -GN=4 equals a vlogparam
    N: 4), anything else is kept as written."""
    return int(text) if re.fullmatch(r"-?[0-9]+", text.strip()) else text


def uncomparable_option(option: str) -> str | None:
    """Why a verilator_options entry cannot be compared with the synth target (None: it can)."""
    for name, why in _UNCOMPARABLE.items():
        if option == name or option.startswith(f"{name}=") or (name in _PREFIX_OPTIONS and option.startswith(name)):
            return why
    if not option.startswith(("-", "+")) and option.lower().endswith(_SOURCE_SUFFIXES):
        return "adds a source file"
    return None


def hdl_settings(edam: Edam) -> dict[tuple[str, str], Any]:
    """What a target tells the HDL tools besides its files and top: ("parameter", name) -> value for its
    vlogparam/generic parameters and the -G / -pvalue+ of its verilator_options, ("define", name) -> value for
    its vlogdefine parameters and the -D / +define+ of its verilator_options (which kabe's Verilator builds
    read). A parameter with no value is
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
        if m := _PARAM_OPTION.match(opt):
            out[("parameter", m.group(1))] = _number(m.group(2))
        elif m := _DEFINE_OPTION.match(opt):
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


def _check_verilator_options(core: str, sim: Edam) -> None:
    """CoreError for a sim-target verilator_options entry whose effect the comparison cannot see."""
    for opt in [str(o) for o in (sim.tool_options or {}).get("verilator_options", []) or []]:
        why = uncomparable_option(opt)
        if why:
            raise CoreError(
                f"{core}: the sim target's verilator_options has {opt!r}, which {why} for the simulation only, so "
                f"kabe cannot check that the simulated design is the one synthesized. Fix: list the files in a "
                f"fileset both targets use (include files with `is_include_file: true`), set parameters and "
                f"defines as core `parameters:`, and drop {opt!r}")


_MODULE = re.compile(r"^\s*(?:module|macromodule|primitive|interface)\s+(?:automatic\s+|static\s+)?"
                     r"([A-Za-z_][A-Za-z0-9_$]*)", re.M)
_BLOCK_COMMENT = re.compile(r"/\*.*?\*/", re.S)


def declared_modules(path: Path) -> set[str]:
    """The modules (interfaces, UDPs) an HDL file declares (kabe.flows.open checks their names too)."""
    return _declared(path)


def _declared(path: Path) -> set[str]:
    """The modules (interfaces, UDPs) an HDL file declares; empty for a file that is not HDL or not read."""
    try:
        text = Path(path).read_text(errors="replace")
    except OSError:
        return set()
    return set(_MODULE.findall(_BLOCK_COMMENT.sub("", text)))


_LINE_COMMENT = re.compile(r"//[^\n]*")
# the conditional-compilation directives and `define/`undef (a `define's body runs to the end of its line,
# continued by a backslash at a line's end)
_DIRECTIVE = re.compile(r"`(ifdef|ifndef|elsif|else|endif|define|undef)\b[ \t]*([A-Za-z_][A-Za-z0-9_$]*)?")
_DEFINE_BODY = re.compile(r"(?:[^\n\\]|\\\n|\\.)*")


def preprocess(text: str, defines: set[str]) -> str:
    """The text a Verilog tool compiles with `defines` set: comments removed, and only the branches of
    `ifdef/`ifndef/`elsif/`else/`endif that are taken, with no directive left (each becomes a line break,
    so a module after one starts a line). `define and `undef in a taken branch change `defines` (the
    caller's set: a later file of the same compile sees them). Macros are not expanded: kabe reads module
    names, which a macro seldom makes."""
    text = _LINE_COMMENT.sub("", _BLOCK_COMMENT.sub(" ", text))
    out: list[str] = []
    stack: list[list[bool]] = []  # per open `ifdef: [its branch taken now, a branch taken already, parent on]
    on, at = True, 0
    for m in _DIRECTIVE.finditer(text):
        if m.start() < at:  # inside a `define's body
            continue
        if on:
            out.append(text[at:m.start()])
        at = m.end()
        kind, name = m.group(1), m.group(2) or ""
        if kind in ("ifdef", "ifndef"):
            taken = on and ((name in defines) == (kind == "ifdef"))
            stack.append([taken, taken, on])
        elif kind == "elsif" and stack:
            frame = stack[-1]
            frame[0] = frame[2] and not frame[1] and name in defines
            frame[1] = frame[1] or frame[0]
        elif kind == "else" and stack:
            frame = stack[-1]
            frame[0] = frame[2] and not frame[1]
            frame[1] = True
        elif kind == "endif" and stack:
            stack.pop()
        elif kind in ("define", "undef"):
            if kind == "define":
                at = _DEFINE_BODY.match(text, at).end()
            if on and name:
                (defines.add if kind == "define" else defines.discard)(name)
        on = stack[-1][0] if stack else True
        out.append("\n")
    if on:
        out.append(text[at:])
    return "".join(out)


def modules_in(text: str) -> set[str]:
    """The modules (interfaces, UDPs) a text declares (comments already removed, or it is preprocessed)."""
    return set(_MODULE.findall(text))


_PACKAGE = re.compile(r"^\s*package\s+(?:automatic\s+|static\s+)?([A-Za-z_][A-Za-z0-9_$]*)", re.M)
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_$]*")


def sources_of_top(sources: Iterable, top: str, read=None) -> list:
    """The sources the top's hierarchy can use, in their order: the file declaring the top, every file
    declaring a module or package a used file names (by identifier: a superset of what it instantiates or
    imports), and every file that declares neither or defines a macro (a package of macros, a file of
    `define`s others rely on). A library core's file the top never uses is left out, so Yosys never stops
    at one it cannot read. Every source when no file declares the top (a generated or foreign name).
    read(src): a file's text as a tool sees it (kabe.flows.open's primitive check: preprocessed), else the
    file as it is."""
    sources = list(sources)
    texts, declares = {}, {}
    for i, src in enumerate(sources):
        try:
            text = read(src) if read is not None else Path(src).read_text(errors="replace")
        except OSError:
            return sources
        text = _LINE_COMMENT.sub("", _BLOCK_COMMENT.sub("", text))
        texts[i] = text
        declares[i] = set(_MODULE.findall(text)) | set(_PACKAGE.findall(text))
    by_name: dict[str, list[int]] = {}
    for i, names in declares.items():
        for n in names:
            by_name.setdefault(n, []).append(i)
    if top not in by_name:
        return sources
    keep: set[int] = set()
    todo = list(by_name[top]) + [i for i in declares if not declares[i] or "`define" in texts[i]]
    while todo:
        i = todo.pop()
        if i in keep:
            continue
        keep.add(i)
        for name in set(_IDENT.findall(texts[i])) & by_name.keys():
            todo += by_name[name]
    return [src for i, src in enumerate(sources) if i in keep]


def _check_module_sources(core: str, only: tuple[Path, ...], target: str, other: Edam) -> None:
    """A file only one target lists may add a module (a vendor primitive's simulation model), never give
    another body to a module the other target builds from its own file: then the targets build different
    logic under one name and the simulation verifies another design than the one synthesized."""
    theirs: dict[str, Path] = {}
    for p in other.sources:
        for m in _declared(p):
            theirs.setdefault(m, p)
    for p in only:
        for m in sorted(_declared(p) & set(theirs)):
            here, there = (p, theirs[m]) if target == "sim" else (theirs[m], p)
            raise CoreError(
                f"{core}: module {m} is defined by {shown(here)} in the sim target and by {shown(there)} in the "
                f"synth target, so the simulation would verify another design than the one built. Fix: list one "
                f"file for {m} in a fileset both targets use (a sim-only file may only add a module the synth "
                f"target does not define, such as a vendor primitive's model)")


def _check_work_root_files(core: str, sim: Edam, synth: Edam) -> None:
    """A `copyto` copy FuseSoC writes at one place of each target's work root is read by that name in both
    builds (`$readmemh("rom.mem")`): different content there is different logic. Generator output is not
    compared here: its folder is named after the generator's parameters, so the same place in both work
    roots means the same generator and parameters, and different content there is a generator that is not
    deterministic (a build time stamp), which `kabe repro` names."""
    theirs = dict(_file_identity(f, synth.work_root) for f in synth.files if not f.generated)
    for f in sim.files:
        if f.generated:
            continue
        rel, digest = _file_identity(f, sim.work_root)
        if rel != "file" and rel in theirs and theirs[rel] != digest:
            raise CoreError(
                f"{core}: {rel} (a file FuseSoC copies into each target's work root: `copyto:`) has different content in the sim target than in the synth target, so the simulation would "
                f"verify another design than the one built. Fix: give both targets one source for {rel} (one "
                f"fileset both use)")


def compare_targets(design: designs.Design, sim: Edam, synth: Edam) -> tuple[tuple[Path, ...], tuple[Path, ...]]:
    """kabe promises the verified RTL is the built RTL: CoreError when the sim and synth targets resolve to
    different designs (another toplevel; a parameter or define both set to different values, or one target
    sets and the other does not; a verilator_options entry kabe cannot compare; a module or work-root file
    with another body per target). Files may differ otherwise (a simulation model of a vendor primitive,
    glbl.v): returns (files only the sim target lists, files only the synth target lists), for the build to
    say and record."""
    core = shown(design.core_file)
    _check_verilator_options(core, sim)
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
    _check_work_root_files(core, sim, synth)
    ids = {_file_identity(f, sim.work_root): f for f in sim.files}
    ids_synth = {_file_identity(f, synth.work_root): f for f in synth.files}
    sim_only = tuple(f.path for k, f in ids.items() if k not in ids_synth)
    synth_only = tuple(f.path for k, f in ids_synth.items() if k not in ids)
    # generator output at one place of both work roots is one generator with one set of parameters: content
    # that differs there is a generator that is not deterministic (_check_work_root_files), not a sim-only model
    regenerated = {k[0] for k, f in ids.items() if f.generated} & {k[0] for k, f in ids_synth.items() if f.generated}
    _check_module_sources(core, tuple(f.path for k, f in ids.items() if k not in ids_synth and f.is_hdl
                                      and k[0] not in regenerated), "sim", synth)
    _check_module_sources(core, tuple(f.path for k, f in ids_synth.items() if k not in ids and f.is_hdl
                                      and k[0] not in regenerated), "synth", sim)
    return sim_only, synth_only


def shown_files(paths: Iterable[Path]) -> list[str]:
    """Paths as the console and metrics.json show them: relative to the project when under it."""
    return [shown(p) for p in paths]


# Xilinx's primitives by family (UG953): the names Verilator has no model of unless a sim-only file adds one
_XILINX_PRIMITIVE = re.compile(r"^(?:BUF(?:G\w*|H\w*|R|IO|MR\w*)|I?OBUF\w*|IBUF\w*|[IO]DDR\w*|[IO]SERDES\w*|"
                               r"[IO]DELAY\w*|IDELAYCTRL|MMCM\w*|PLLE\w*|RAMB\d+\w*|RAM\d+[XM]\w*|DSP48\w*|"
                               r"SRLC?\d+E?|LUT\d\w*|FD[RSCPE]E?\w*|LD[CP]E?|CARRY\d|MUXF\d|STARTUPE\d|"
                               r"USR_ACCESSE\d|GT[PXHY]E\d\w*|PS7|PS8\w*|XADC|ICAPE\d)$")


def vendor_module_fix(module: str, tool: str) -> str | None:
    """What to do about a module no file defines when it is an XPM macro or a Xilinx primitive (tool:
    "verilator" or "yosys"), in kabe's words; None for any other name (a file missing from the core)."""
    if module.lower().startswith("xpm_"):
        return (f"{module} is an XPM macro, which only Vivado provides: build with flow=vivado, and give the "
                f"simulation a behavioural model of it as a sim-only file of the sim target"
                + ("" if tool == "verilator" else "; for the open flow, replace it by a portable module"))
    if _XILINX_PRIMITIVE.match(module) and tool == "verilator":
        return (f"{module} is a Xilinx primitive, which Verilator has no model of: add its simulation model (Vivado's "
                f"data/verilog/src/unisims/{module}.v, or a behavioural one) as a sim-only file of the sim target")
    return None

