"""C-simulation of an HLS design against its golden model: g++, the HLS headers, kabe's generated harness.

    run(design, rows) -> the same result shape as kabe.sim.runner.run_sim (its `simulator` is "csim")

The design's model (design.yaml `verify: {model: ...}`, the same API as an RTL design's) gives the beats of
every input stream and the beats every output stream must hold; the harness (kabe.sim.csim_harness) calls
the kernel's top function once with those streams and the scalar arguments hls.args derives from the run,
and every output word is compared bit for bit with the model's (kabe.sim.compare.compare_output). Beats the
kernel left unread, or read from an empty stream, are problems: the kernel and the model disagree about
how much data a run is. An hls::stream of plain values carries no TLAST: the result says so.

A user's own C++ testbench (hls.testbench) is compiled with the kernel and run too; its exit status is its
verdict (Vitis HLS's convention: main returns 0 on a pass).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console

from kabe.project import cores, designs
from kabe.base import provenance, tool_group
from kabe.project.design_context import DesignContext
from kabe.base.errors import UserError
from kabe.verify import declared
from . import golden, hls_headers
from .ask import SimAsk
from .golden import context_for
from .compare import compare_output
from .csim_harness import declaration, source

CXX_STANDARD = "-std=c++14"  # what Vitis HLS's C-simulation compiles with
CXX_FLAGS = ("-O2", "-w")  # the headers' own warnings are AMD's, not the design's
CPP_TYPES = ("cppSource", "cSource")
COMPILE_TIMEOUT_S = 900
SIM_TIMEOUT_S = 3600


class CsimError(UserError, RuntimeError):
    """The C-simulation could not run: the kernel does not compile or link, or the harness failed."""


def kernel_sources(edam) -> tuple[list[Path], list[Path]]:
    """(C/C++ sources, include folders) of the design's synth target (FuseSoC file types cppSource, cSource)."""
    srcs, incs = [], list(getattr(edam, "include_dirs", ()))
    for f in edam.files:
        kind = f.file_type.split("-")[0]
        if kind not in CPP_TYPES:
            continue
        if f.is_include_file or Path(f.path).suffix in (".h", ".hpp", ".hh"):
            incs.append(Path(f.path).parent)
        else:
            srcs.append(Path(f.path))
    return srcs, list(dict.fromkeys(incs))


def _compiler() -> str:
    cxx = os.environ.get("CXX") or shutil.which("g++")
    if not cxx:
        raise CsimError("the C-simulation of an HLS design compiles with g++, which is not on PATH. Fix: "
                        "apt-get install g++ (or set CXX)")
    return cxx


_LINK_MISSING = re.compile(r"undefined reference to `([^']+)'")
_COMPILE_ERROR = re.compile(r"^(?P<where>[^:\s][^:]*:\d+(?::\d+)?): (?:fatal )?error: (?P<msg>.*)$", re.M)


def _first_error(text: str, spec, bits) -> str:
    m = _LINK_MISSING.search(text)
    if m:
        return (f"the kernel sources define no `{m.group(1)}`; kabe's harness calls the top as design.yaml's hls: "
                f"declares it: `{declaration(spec, bits)}`. Fix: make hls.top and hls.args match the kernel's top "
                f"function (argument order and types)")
    m = _COMPILE_ERROR.search(text)
    if m:
        return f"{m.group('where')}: error: {m.group('msg')}"
    return text.strip()[-600:]


def build(d: designs.Design, sources: list[Path], includes: list[Path], build_root: Path,
          extra: list[Path] = (), main_in_sources: bool = False) -> tuple[Path, bool, float]:
    """The compiled harness (or the user's testbench when main_in_sources), reused while nothing it is made
    of changed: (executable, compiled now, seconds)."""
    spec = d.hls
    bits = {**d.streams.inputs, **d.streams.outputs}
    cxx = _compiler()
    where, hdr = hls_headers.find()
    out_dir = Path(build_root) / "csim" / d.name
    out_dir.mkdir(parents=True, exist_ok=True)
    files = list(sources) + list(extra)
    h = hashlib.sha256()
    harness_text = "" if main_in_sources else source(spec, bits)
    h.update(harness_text.encode())
    for p in files:
        h.update(str(p).encode() + b"\0" + Path(p).read_bytes())
    for inc in includes:  # a header edited changes the kernel
        for hf in sorted(Path(inc).glob("*.h*")) if Path(inc).is_dir() else ():
            h.update(str(hf).encode() + b"\0" + hf.read_bytes())
    h.update(f"{cxx} {CXX_STANDARD} {CXX_FLAGS} {hdr}".encode())
    name = "testbench" if main_in_sources else "harness"
    exe = out_dir / f"{name}-{h.hexdigest()[:16]}"
    if exe.is_file():
        return exe, False, 0.0
    cmd = [cxx, CXX_STANDARD, *CXX_FLAGS, f"-I{hdr}", *(f"-I{i}" for i in includes)]
    if harness_text:
        harness = out_dir / "kabe_csim_harness.cpp"
        harness.write_text(harness_text)
        cmd.append(str(harness))
    cmd += [str(p) for p in files] + ["-o", str(exe) + ".tmp"]
    t0 = time.monotonic()
    try:
        proc = tool_group.run(cmd, capture_output=True, text=True, timeout=COMPILE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise CsimError(f"g++ did not compile {d.name}'s C-simulation within {COMPILE_TIMEOUT_S} s") from None
    if proc.returncode != 0:
        what = "the user testbench" if main_in_sources else "the HLS kernel with kabe's harness"
        raise CsimError(f"{d.name}: g++ could not build {what} (headers from {where}: {hdr}): "
                        f"{_first_error(proc.stderr + proc.stdout, spec, bits)}")
    os.replace(str(exe) + ".tmp", exe)
    return exe, True, time.monotonic() - t0


def _scalar_values(d: designs.Design, beats_in: dict[str, int], counts: dict[str, int]) -> list[int]:
    out = []
    for a in d.hls.args:
        if a.kind != "scalar":
            continue
        if isinstance(a.value, int):
            out.append(a.value)
        else:
            source_kind, port = a.value.split(":")
            out.append(beats_in[port] if source_kind == "beats" else counts[port])
    return out


def _read_summary(path: Path) -> dict[str, int]:
    out = {}
    for line in path.read_text().splitlines():
        parts = line.split()
        if len(parts) == 2:
            out[parts[0]] = int(parts[1])
        elif len(parts) == 3:
            out[f"{parts[0]}:{parts[1]}"] = int(parts[2])
    return out


def run_testbench(d: designs.Design, sources: list[Path], includes: list[Path], build_root: Path,
                  console: Console) -> dict[str, Any]:
    """The user's C++ testbench (hls.testbench) with the kernel: {files, exit, passed, output tail}."""
    exe, _, _ = build(d, sources, includes, build_root, extra=list(d.hls.testbench), main_in_sources=True)
    proc = tool_group.run([str(exe)], capture_output=True, text=True, timeout=SIM_TIMEOUT_S,
                          cwd=d.hls.testbench[0].parent)
    tail = (proc.stdout + proc.stderr).strip().splitlines()[-5:]
    return {"files": [p.name for p in d.hls.testbench], "exit": proc.returncode, "passed": proc.returncode == 0,
            "output_tail": tail}


def run(ctx: DesignContext, ask: SimAsk = SimAsk()) -> dict[str, Any]:
    """C-simulate ctx's HLS design (kabe.project.design_context: its synth target, commit and console as the verb
    resolved them) against its golden model. ask.sources: the kernel's C++ files instead of the synth
    target's (a test's deliberately broken copy); ask.testbench False: not the user's testbench. Raises
    CsimError / ModelError / CoreError when the run cannot happen; a run that disagrees with the model returns
    with mismatches or problems."""
    t_start = time.monotonic()
    d = _check_design(ctx.design)
    commit = ctx.commit or provenance.current_commit()
    context = context_for(d, None, ask.invalid_fraction)
    fn = golden.load(d)
    declares = declared(fn)
    rows = ask.rows if ask.rows is not None else declares.size("full_size", context)  # None: the model's own
    t0 = time.monotonic()
    stim = golden.stimulus(d, fn, ask.seed, rows, context)
    stim_seconds = time.monotonic() - t0
    exe, sources, includes, compiled, compile_seconds = _compile(ctx, ask)
    ran = _run_kernel(d, ask, exe, stim, context)
    ran.timing["frame_seconds"] += stim_seconds
    problems = ran.problems
    words_expected = sum(int(e.shape[0]) for e in ran.model.expected.values())
    if words_expected == 0:
        problems.append(f"the golden model {d.verify.value} expected no word: nothing was checked")
    testbench = (run_testbench(d, sources, includes, ask.build_root, ctx.console)
                 if d.hls.testbench and ask.testbench else None)
    if testbench is not None and not testbench["passed"]:
        problems.append(f"the user testbench {', '.join(testbench['files'])} failed (exit {testbench['exit']}): "
                        f"{' / '.join(testbench['output_tail'][-2:])}")
    timing = {"seconds": round(time.monotonic() - t_start, 3), "compile_seconds": round(compile_seconds, 3),
              "compiled": compiled, **{k: round(v, 3) for k, v in ran.timing.items()}}
    asked = {"rows": rows, "seed": ask.seed, "words_expected": words_expected, "build_key": exe.name}
    return _result(d, declares, stim, ran, asked, testbench, timing, commit)


def _check_design(d: designs.Design) -> designs.Design:
    if d.hls is None:
        raise CsimError(f"{d.name} is not an HLS design (design.yaml has no hls: section)")
    if d.verify.kind != "model":
        raise CsimError(f"{d.name}: an HLS design is verified by a golden model (verify: {{model: ...}}); "
                        f"got verify: {d.verify.kind}")
    return d


def _compile(ctx: DesignContext, ask: SimAsk) -> tuple[Path, list[Path], list[Path], bool, float]:
    """The kernel's harness from the synth target the verb resolved (or ask.sources): (exe, sources, include
    folders, compiled now, seconds)."""
    d = ctx.design
    edam = ctx.synth if ctx.synth is not None else cores.resolve(d, "synth")
    own_sources, includes = kernel_sources(edam)
    sources = list(ask.sources) if ask.sources is not None else own_sources
    if not sources:
        raise CsimError(f"{d.name}: the synth target of {d.core_file.name} lists no C/C++ source (file_type "
                        f"cppSource); list the kernel's .cpp files there")
    exe, compiled, compile_seconds = build(d, sources, includes, ask.build_root)
    if compiled:
        ctx.console.print(f"[dim]{d.name}[/]: C-simulation compiled in {compile_seconds:.1f} s -> {exe}")
    return exe, sources, includes, compiled, compile_seconds


@dataclass
class _Ran:
    """One C-simulation run: what went in, what the model says, what differed, and its seconds."""

    beats_in: dict[str, int]
    counts: dict
    model: "_Model"
    mismatches: int
    first: list[dict]
    problems: list[str]
    timing: dict[str, float]


def _run_kernel(d: designs.Design, ask: SimAsk, exe: Path, stim, context) -> _Ran:
    """Write the inputs, run the kernel beside the model, compare, in a run folder of its own."""
    run_root = Path(ask.build_root) / "csim" / d.name / "runs"
    run_root.mkdir(parents=True, exist_ok=True)
    workdir = Path(tempfile.mkdtemp(prefix=f"seed{ask.seed}-", dir=run_root))
    try:
        t0 = time.monotonic()
        beats_in = _write_inputs(d, stim, workdir)
        expected_now = None if callable(stim.expected) else stim.expected
        counts = dict(stim.expected_beats or {n: golden.beat_count(d, n, a) for n, a in expected_now.items()})
        frame_seconds = time.monotonic() - t0
        cmd = [str(exe), str(workdir), *(str(v) for v in _scalar_values(d, beats_in, counts))]
        t0 = time.monotonic()
        model, model_seconds = _simulate_beside_model(d, cmd, stim, expected_now, context)
        simulate_seconds = time.monotonic() - t0
        t0 = time.monotonic()
        mismatches, first, problems = _compare(d, workdir, beats_in, model)
        compare_seconds = time.monotonic() - t0
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    timing = {"frame_seconds": frame_seconds + model_seconds, "model_seconds": model_seconds,
              "simulate_seconds": simulate_seconds, "compare_seconds": compare_seconds}
    return _Ran(beats_in, counts, model, mismatches, first, problems, timing)


def _result(d: designs.Design, declares, stim, ran: _Ran, asked: dict, testbench, timing: dict,
            commit: provenance.Commit) -> dict[str, Any]:
    """The run's result record, in kabe.sim.runner.run_sim's shape (its `simulator` is "csim")."""
    rows, words_expected = asked["rows"], asked["words_expected"]
    beats = sum(ran.beats_in.values())
    hdr_from, hdr = hls_headers.find()
    return {
        "design": d.name, "kind": declares.label, "verification": d.verify.as_dict(),
        "streams": d.streams.as_dict(), "ports": d.ports, "rows": rows if rows is not None else words_expected,
        "rows_per_port": rows // d.ports if rows is not None and declares.per_port else None,
        "row_bytes": d.row_bytes,
        "rows_checked": stim.checked if stim.checked is not None else words_expected,
        "words_checked": words_expected, "mismatches": ran.mismatches, "first_mismatches": ran.first,
        "problems": ran.problems, "warnings": [], "passed": ran.mismatches == 0 and not ran.problems,
        "beats": beats, "beats_per_cycle": None,  # C-simulation is untimed: no cycles
        "cycles": None, "total_cycles": None, "per_port": [], "status": {}, "expected_status": ran.model.status,
        "seed": asked["seed"], "seconds": timing["seconds"],
        "frame_seconds": timing["frame_seconds"], "model_seconds": timing["model_seconds"],
        "compile_seconds": timing["compile_seconds"], "compiled": timing["compiled"],
        "simulate_seconds": timing["simulate_seconds"], "compare_seconds": timing["compare_seconds"],
        "simulator": "csim", "version": f"g++ with the HLS headers of {hdr_from} ({hdr})",
        "hls_top": d.hls.top, "scalars": dict(zip([a.name for a in d.hls.args if a.kind == "scalar"],
                                                   _scalar_values(d, ran.beats_in, ran.counts))),
        "tlast_checked": False,  # an hls::stream of values carries no TLAST
        "testbench": testbench, "build_key": asked["build_key"], "commit": commit.sha, "dirty": commit.dirty,
    }


@dataclass(frozen=True)
class _Model:
    """What the golden model says the kernel's outputs must be: words per output, whether each output's
    model values were negative integers (shown signed), and the status outputs it expects."""

    expected: dict[str, np.ndarray]
    signed: dict[str, bool]
    status: dict


def _write_inputs(d: designs.Design, stim, workdir: Path) -> dict[str, int]:
    """Each input stream's words in the file the kernel's harness reads; returns the beats per stream."""
    beats_in = {}
    for name, b in d.streams.inputs.items():
        words = golden.words(d, name, stim.inputs[name], b)
        words.tofile(workdir / f"in.{name}.bin")
        beats_in[name] = int(words.shape[0])
        del words
    return beats_in


def _simulate_beside_model(d: designs.Design, cmd: list[str], stim, expected_now, context) -> tuple[_Model, float]:
    """Run the C-simulation and, while it runs, the model's expected outputs; returns them with the
    model's seconds. A C-simulation that ends early (a crash in the kernel) is a CsimError."""
    outputs = d.streams.outputs
    with tool_group.popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proc:
        try:
            t1 = time.monotonic()
            raw = expected_now if expected_now is not None else golden.call_later(d, stim.expected, "expected")
            golden.check_outputs(d, raw, context)
            expected = {n: golden.words(d, n, raw[n], outputs[n]) for n in outputs}
            signed = {n: np.asarray(raw[n]).ndim == 1 and np.issubdtype(np.asarray(raw[n]).dtype, np.signedinteger)
                      and bool((np.asarray(raw[n]) < 0).any()) for n in outputs}
            want_status = golden.check_status(d, golden.call_later(d, stim.status, "status"), context)
            del raw
            model_seconds = time.monotonic() - t1
            out, err = proc.communicate(timeout=SIM_TIMEOUT_S)
        except BaseException:
            tool_group.stop(proc)
            raise
    workdir = Path(cmd[1])
    if proc.returncode != 0 or not (workdir / "summary.txt").is_file():
        raise CsimError(f"{d.name}: the C-simulation ended with exit {proc.returncode} before it finished "
                        f"(a crash in the kernel?): {(err or out).strip()[-600:]}")
    return _Model(expected, signed, want_status), model_seconds


def _compare(d: designs.Design, workdir: Path, beats_in: dict[str, int], model: _Model
             ) -> tuple[int, list[dict], list[str]]:
    """The kernel's outputs against the model's, and what its harness counted: (mismatches, the first
    mismatches, problems)."""
    summary = _read_summary(workdir / "summary.txt")
    problems: list[str] = []
    first: list[dict] = []
    mismatches = 0
    for name in d.streams.inputs:
        left = summary.get(f"left:{name}", 0)
        if left:
            problems.append(f"{name}: the kernel left {left:,} of {beats_in[name]:,} beats unread")
    if summary.get("empty_reads"):
        problems.append(f"the kernel read an empty stream {summary['empty_reads']:,} time(s) (hls::stream: "
                        f"'read while empty'): it reads more than the model gives it")
    for name, b in d.streams.outputs.items():
        got = np.fromfile(workdir / f"out.{name}.bin", dtype="<u8")
        w = (b + 63) // 64
        got = got if w == 1 else got.reshape(-1, w)
        n_exp = int(model.expected[name].shape[0])
        mismatches += compare_output(name, b, model.expected[name], model.signed[name], got,
                                     {"tlast_at": [n_exp - 1] if n_exp else []}, first, problems)
    if model.status:  # an hls::stream kernel has no status outputs the harness could read
        problems.append(f"the model expects status outputs {sorted(model.status)}, which an HLS kernel's "
                        f"C-simulation cannot read; declare no streams.status for an HLS design")
    return mismatches, first, problems
