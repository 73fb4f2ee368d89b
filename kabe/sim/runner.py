"""Stream whole frames through a design in Verilator and compare every result word with numpy.

    run_sim("mydesign", 1_000)  ->  result dict (also see write_result / main)

rows is the model's size (for a model whose size is a total over the design's ports, each port gets
rows / ports of it, from its own seed).

Traffic: the harness (harness.cpp) drives the streams as real traffic does, with seeded gaps on every
input and backpressure on every output (design.yaml's streams.traffic sets the duties, DEFAULT_TRAFFIC
when it does not say), so a FIFO's full path and a skid buffer's skid path are exercised. A model that
says its design never stalls (stall_free: kabe's own engines, throughput one beat per clock) is run with
traffic off, tvalid high whenever a beat is left and tready always high, so beats_per_cycle measures it
(1.000), as does a design whose design.yaml says `traffic: off`.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Mapping

import numpy as np
from rich.console import Console
from rich.markup import escape
from rich.errors import LiveError

from kabe.base.console import make_console
from kabe.base.errors import UserError
from kabe.project import designs
from kabe.base import disk_space, provenance, tool_group
from kabe.project.design_context import DesignContext
from kabe.cache import tracked_outputs
from kabe.store.archive import archive_dir, write_json_atomic, write_text_atomic
from kabe.project.cores import CoreError
from ..verify import Chunks, Context, declared, words_per_beat
from kabe.base.paths import REPORTS
from . import golden, stream_feed, verilator_build
from .ask import SimAsk
from .stream_feed import StreamFeed
from .vl_output import design_stop, runtime_warnings  # noqa: F401 - runner's names too
from .golden import context_for
from .compare import MAX_SHOWN_MISMATCHES, compare_output  # noqa: F401 - the harness result's words against the model's
from .verilator_build import SimBuildError

_DRAIN_CYCLES = 64  # cycles simulated after the last expected word, to catch extra words
# The harness's traffic unless design.yaml's streams.traffic says otherwise: an input offers a beat on
# 80 % of the cycles, an output takes one on 70 % (their product < 1: a FIFO between them fills up)
DEFAULT_TRAFFIC = {"valid": 0.8, "ready": 0.7}


def traffic_for(d: designs.Design, stall_free: bool) -> dict | None:
    """The duties the harness runs d with, or None for traffic off (a stall-free model's throughput run,
    or design.yaml's `traffic: off`)."""
    spec = d.streams.traffic
    if spec == "off" or (stall_free and spec is None):
        return None
    return {**DEFAULT_TRAFFIC, **(spec or {})}


def traffic_seed(seed: int) -> int:
    """The harness's traffic generator seed for the run with this stimulus seed (a rerun reproduces it)."""
    digest = hashlib.sha256(f"kabe traffic for seed {int(seed)}".encode()).digest()
    return int.from_bytes(digest[:8], "little")


class SimError(UserError, RuntimeError):
    """The simulation could not run (bad row count, harness failure, cycle limit)."""


def _stopped_summary(streams: designs.Streams, beats_in: Mapping[str, int], expected_beats: Mapping[str, Any],
                     max_cycles: int) -> dict:
    """The harness's summary.json for a run the design stopped (the harness wrote none): nothing
    accepted, nothing out, no status read."""
    return {
        "timeout": False, "total_cycles": 0, "max_cycles": max_cycles, "sim_seconds": 0.0, "status": {},
        "inputs": [{"name": n, "beats_in": int(beats_in.get(n, 0)), "beats_accepted": 0, "cycles": 0,
                    "tready_low_cycles": 0, "first_accept_cycle": -1, "last_accept_cycle": -1}
                   for n in streams.inputs],
        "outputs": [{"name": n, "beats": 0, "expected_beats": int(expected_beats[n]), "tlast_at": [],
                     "first_out_cycle": -1, "last_out_cycle": -1} for n in streams.outputs],
    }


def declared_size(d: designs.Design, which: str) -> int | None:
    """The size the design's model declares for a build's check ("check_size") or a run at full scale
    ("full_size"); None: the model's own default (size None), or a design not verified by a model."""
    if d.verify.kind != "model":
        return None
    return declared(golden.load(d)).size(which, context_for(d))


@contextlib.contextmanager
def _stage(console: Console, text: str):
    """A spinner when no other live display is running (the build may be showing its own)."""
    status = console.status(text)
    try:
        status.start()
    except LiveError:
        status = None
    try:
        yield
    finally:
        if status is not None:
            status.stop()


def check_inputs(summary_inputs: list, stall_free: bool, problems: list) -> None:
    for s in summary_inputs:
        if stall_free and s["tready_low_cycles"]:
            problems.append(f"{s['name']}: tready was low on {s['tready_low_cycles']} cycle(s) with tvalid high; "
                            f"the model says the design never stalls its input (tready constant 1)")
        if s["beats_accepted"] != s["beats_in"]:
            problems.append(f"{s['name']}: only {s['beats_accepted']} of {s['beats_in']} beats were accepted")


def check_status(got: Mapping[str, int], want: Mapping[str, int], problems: list,
                 watch: Mapping[str, Mapping[str, int]] | None = None) -> None:
    """The status outputs at the end of the run against the model's; and, watched every cycle, one the model
    expects to end at 0 (an overflow flag, an error count) that was not 0 on some cycle is a problem too: a
    one-cycle pulse is not missed because the end of the run did not see it."""
    for name, value in want.items():
        if got.get(name) != value:
            problems.append(f"{name} = {got.get(name)} at the end of the run, the model expects {value}")
        elif value == 0 and watch and (watch.get(name) or {}).get("max", 0):
            w = watch[name]
            problems.append(f"{name} was {w['max']} on some cycle (first at cycle {w['first_nonzero_cycle']}) "
                            f"though it ends at 0 as the model expects: it went up during the run")


def run_sim(ctx: DesignContext, ask: SimAsk = SimAsk()) -> dict:
    """Simulate the design of ctx (kabe.project.design_context: its resolved sim target, XDC clocks, commit, console)
    against its verification and return the result (also see write_result / main).

    A golden model (`verify: {model: ...}`) is called with (seed, rows, context) and every beat of every
    output stream compared; a cocotb testbench runs in cocotb's own runner (kabe.sim.cocotb_run); an HLS
    kernel is C-simulated (kabe.sim.csim). ask (kabe.sim.ask.SimAsk): the size, seed and overrides.
    Raises SimError / SimBuildError / CoreError / DesignError / ModelError when the run cannot happen;
    a run that happens but disagrees with the model returns normally with mismatches > 0 or problems.
    """
    t_start = time.monotonic()
    d = ctx.design
    tracked_outputs.check()  # a simulation model or FuseSoC answer committed under build/ is never reused
    if d.verify.kind == "none":
        raise SimError(f"{d.name} is not simulated (design.yaml: verify: none: {d.verify.value})")
    if d.hls is not None:  # an HLS kernel: C-simulation of its C++ against the same model (kabe.sim.csim)
        from . import csim

        return csim.run(ctx, ask)
    if d.verify.kind == "cocotb":
        from . import cocotb_run

        return cocotb_run.run(ctx, ask)
    if ctx.commit is None:  # a build passes the one its archive is named after
        ctx = replace(ctx, commit=provenance.current_commit())
    prep = _prepare(ctx, ask)
    sb, held = _compile(ctx, ask, prep.stim)
    ran, timing = _run_harness(ctx, ask, prep, sb, held)
    timing = {"seconds": round(time.monotonic() - t_start, 3), **timing}
    return _result(d, prep.declares, prep.stim, sb, ran, prep.ask, timing, ctx.commit)


@dataclass
class _Prepared:
    """The model's side before anything compiles: its context, what it declares, its stimulus."""

    context: Context
    declares: Any
    stim: Any
    seconds: float
    ask: dict  # what the run asked for, as the result records it


def _prepare(ctx: DesignContext, ask: SimAsk) -> _Prepared:
    """The model first: a size it refuses is said before minutes of compiling."""
    d = ctx.design
    row_bytes = d.row_bytes if ask.row_bytes is None else int(ask.row_bytes)
    context = context_for(d, row_bytes, ask.invalid_fraction)
    fn = golden.load(d)
    declares = declared(fn)
    rows = ask.rows
    if rows is None:  # the model's full scale, when it declares one (else size None: its own choice)
        rows = declares.size("full_size", context)
    t0 = time.monotonic()
    with _stage(ctx.console, f"[bold]{d.name}[/]: building the streams ({d.verify.value})"):
        stim = golden.stimulus(d, fn, ask.seed, rows, context)
    recorded = {"rows": rows, "row_bytes": row_bytes, "seed": ask.seed, "params": dict(ask.params),
                "flags": list(ask.flags), "invalid_fraction": ask.invalid_fraction}
    return _Prepared(context, declares, stim, time.monotonic() - t0, recorded)


def _run_harness(ctx: DesignContext, ask: SimAsk, prep: _Prepared, sb, held: dict) -> tuple[_Ran, dict]:
    """Write the streams, simulate, read and compare, in a run folder of its own; (what ran, its seconds)."""
    d, console, stim = ctx.design, ctx.console, prep.stim
    traffic = traffic_for(d, stim.stall_free)
    # Absolute: the harness runs in the FuseSoC work root (below), not here.
    run_root = Path(os.path.abspath(ask.build_root)) / "sim" / d.name / "runs"
    run_root.mkdir(parents=True, exist_ok=True)
    places = [disk_space.build_place(run_root)]
    disk_space.check_free(f"the {d.name} simulation", places)  # its streams and outputs go to run_root
    workdir = Path(tempfile.mkdtemp(prefix=f"seed{ask.seed}-", dir=run_root))
    try:
        frames = _write_streams(d, stim, sb, workdir, places, console)
        frames.seconds += prep.seconds
        console.print(f"[dim]{d.name}[/]: streams written in {frames.seconds:.1f} s "
                      f"({frames.beats_in:,} beats on the longest input)")
        run = _simulate(d, sb, frames, traffic, ask.seed, workdir,
                        lambda: _expected(d, stim, frames, prep.context), console)
        outcome = _outcome(d, run, frames, workdir, places, console)
        t0 = time.monotonic()
        with _stage(console, f"[bold]{d.name}[/]: comparing against the golden model"):
            first, mismatches = _compare(d, outcome, run, frames, workdir, stim.stall_free)
        compare_seconds = time.monotonic() - t0
    finally:
        if not ask.keep_files:
            shutil.rmtree(workdir, ignore_errors=True)
    timing = {"frame_seconds": round(frames.seconds + run.model_seconds, 3),
              "model_seconds": round(run.model_seconds, 3), "compile_seconds": round(sb.compile_seconds, 3),
              "compiled": sb.compiled, "resolve_seconds": round(sb.resolve_seconds, 3), "simulate_seconds": round(run.simulate_seconds, 3),
              "sim_seconds": round(outcome.summary["sim_seconds"], 3), "compare_seconds": round(compare_seconds, 3),
              # the harness's time in read() waiting for a streamed input (its model slower than the simulation)
              "stream_wait_seconds": round(sum(i.get("stream_wait_seconds", 0.0) for i in outcome.summary["inputs"]), 3)}
    return _Ran(held, traffic, frames, run, outcome, first, mismatches), timing


@dataclass
class _Frames:
    """The input streams as written for the harness, and what the model says must come out."""

    argv: list[str]  # the harness's --in/--out/--side-* arguments
    beats_in: int  # beats on the longest input
    beats_of: dict[str, int]  # beats per input stream
    counts: dict  # beats the model expects per output stream
    side_expected: dict[str, np.ndarray]  # the model's words per output sideband port
    expected_now: dict | None  # the expected outputs when the model gave them at once, else None (later)
    seconds: float
    feeds: list  # the inputs the model gives as Chunks, written while the harness runs (kabe.sim.stream_feed)


@dataclass
class _Run:
    """The harness's run, and the model's words computed while it ran."""

    proc: subprocess.CompletedProcess
    max_cycles: int
    expected: dict[str, np.ndarray]
    signed: dict[str, bool]
    want_status: dict
    model_seconds: float
    simulate_seconds: float


@dataclass
class _Ran:
    """Everything one run gave, for its result record."""

    held: dict
    traffic: dict | None
    frames: _Frames
    run: _Run
    outcome: _Outcome
    first: list
    mismatches: int


@dataclass
class _Outcome:
    """What the harness reported: its summary (or the stopped run's), the design's stop, warnings, problems."""

    summary: dict
    stopped: str | None
    warnings: list[str]
    problems: list[str]


def _compile(ctx: DesignContext, ask: SimAsk, stim) -> tuple[Any, dict]:
    """The Verilator model (built or reused), saying what is not checked and which inputs are held."""
    d, console = ctx.design, ctx.console
    with _stage(console, f"[bold]{d.name}[/]: resolving and compiling (Verilator)"):
        sb = verilator_build.build(ctx, dict(ask.params), flags=ask.flags, build_root=ask.build_root,
                                   extra_defines=ask.extra_defines)
    if sb.compiled:
        console.print(f"[dim]{d.name}[/]: compiled in {sb.compile_seconds:.1f} s -> {sb.exe}")
    if sb.not_checked:  # not a failure (a debug port may be meant), but nothing verifies them: said every run
        console.print(f"[yellow]{d.name}: not checked: {escape(', '.join(sb.not_checked))} (outputs of top "
                      f"{escape(sb.toplevel)} in no stream or status of design.yaml; nothing compares them)[/]",
                      soft_wrap=True)
    driven = set(getattr(stim, "sideband", None) or {})  # sideband inputs the model drives beat by beat
    held = {k: v for k, v in sb.held.items() if k not in driven}
    if held:  # driven on purpose, never X: said every run, beside the unchecked outputs
        console.print(f"[yellow]{d.name}: held: {escape(held_text(held))} (inputs of top {escape(sb.toplevel)} "
                      f"in no stream of design.yaml; set another value in streams.hold)[/]", soft_wrap=True)
    if sb.clocking is not None and not sb.clocking.default:  # ports not named clk/rst, or several clocks: said
        console.print(f"[dim]{d.name}[/]: the harness drives {escape(sb.clocking.describe())}", soft_wrap=True)
    return sb, held


def _write_streams(d: designs.Design, stim, sb, workdir: Path, places: list, console: Console) -> _Frames:
    """One file per input stream; the golden model's expected beats are computed while the simulation
    runs when the model gives them as a function (the harness is one process on one core, numpy takes
    the other)."""
    t0 = time.monotonic()
    with _stage(console, f"[bold]{d.name}[/]: writing the streams"):
        argv: list[str] = []
        beats_in = 0
        beats_of: dict[str, int] = {}
        feeds: list[StreamFeed] = []
        for name, bits in d.streams.inputs.items():
            if isinstance(stim.inputs[name], Chunks):  # built and written while the harness runs
                feeds.append(StreamFeed(d, name, bits, stim.inputs[name], workdir / f"in.{name}.fifo"))
                beats_in = max(beats_in, beats_of.setdefault(name, int(stim.inputs[name].beats)))
                argv += ["--in-stream", str(feeds[-1].path), str(beats_of[name])]
                continue
            words = golden.words(d, name, stim.inputs[name], bits)
            in_path = workdir / f"in.{name}.bin"
            try:
                words.tofile(in_path)
            except OSError as e:  # a full disk: one line naming it, not a traceback
                full = disk_space.os_error_message(f"the {d.name} simulation", e, places[0], in_path)
                if full:
                    raise SimError(full) from None
                raise
            beats_in = max(beats_in, words.shape[0])
            beats_of[name] = int(words.shape[0])
            argv += ["--in", str(in_path)]
            del words
        expected_now = None if callable(stim.expected) else stim.expected
        counts = stim.expected_beats or {n: golden.beat_count(d, n, a) for n, a in expected_now.items()}
        for name in d.streams.outputs:
            argv += ["--out", str(workdir / f"out.{name}.bin"), str(int(counts[name]))]
        side_expected = _sideband_args(d, stim, sb, beats_of, counts, workdir, argv)
    return _Frames(argv, beats_in, beats_of, counts, side_expected, expected_now, time.monotonic() - t0, feeds)


def _simulate(d: designs.Design, sb, frames: _Frames, traffic: dict | None, seed: int, workdir: Path,
              model, console: Console) -> _Run:
    """Simulate, and meanwhile compute what must come back (`model()`: _expected's answer)."""
    slowest = min(traffic.values()) if traffic else 1.0
    # in the run's clock's cycles (the first clock): a slower second clock needs more of them
    c = sb.clocking
    ratio = (max(c.half_ps(p) for p in c.clocks) / c.half_ps(next(iter(c.clocks)))) if c is not None else 1.0
    max_cycles = int(4 * frames.beats_in * ratio / slowest) + 100_000
    traffic_args = ([] if traffic is None else
                    ["--valid-duty", repr(traffic["valid"]), "--ready-duty", repr(traffic["ready"]),
                     "--traffic-seed", str(traffic_seed(seed))])
    cmd = [os.path.abspath(sb.exe), "--summary", str(workdir / "summary.json"), "--max-cycles", str(max_cycles),
           "--drain", str(_DRAIN_CYCLES), *traffic_args, *frames.argv,
           *verilator_build.x_plusargs(seed)]  # X values random, fixed by the seed (a rerun reproduces them)
    t0 = time.monotonic()
    with _stage(console, f"[bold]{d.name}[/]: simulating {frames.beats_in:,} cycles per input"):
        # in a process group tied to this run: a killed build takes the simulation with it
        # Its working directory is the FuseSoC work root, as FuseSoC's own tools run: the files a core
        # lists with `copyto:` land there, where a design's $readmemh("table.hex") finds them.
        cwd = sb.edam.work_root if sb.edam is not None and Path(sb.edam.work_root).is_dir() else None
        with tool_group.popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              cwd=cwd) as sim_proc:
            try:
                output = stream_feed.Output(sim_proc) if frames.feeds else None  # read while the feeds wait
                for feed in frames.feeds:
                    feed.start(lambda: sim_proc.poll() is None)
                stream_feed.join_all(frames.feeds)  # first: the model's answer is complete once its parts are
                t1 = time.monotonic()
                expected, signed, want_status = model()
                model_seconds = time.monotonic() - t1 + sum(f.seconds for f in frames.feeds)
                out, err = output.wait() if output else sim_proc.communicate()
            except BaseException:  # Ctrl-C too: the simulation's own session never sees the terminal's
                tool_group.stop(sim_proc)
                raise
        proc = subprocess.CompletedProcess(cmd, sim_proc.returncode, out, err)
    return _Run(proc, max_cycles, expected, signed, want_status, model_seconds, time.monotonic() - t0)


def _expected(d: designs.Design, stim, frames: _Frames, context: Context) -> tuple[dict, dict, dict]:
    """The model's words per output, whether each is shown signed, and the status it expects."""
    outputs = d.streams.outputs
    raw = frames.expected_now if frames.expected_now is not None else golden.call_later(d, stim.expected, "expected")
    golden.check_outputs(d, raw, context)
    expected = {n: golden.words(d, n, raw[n], outputs[n]) for n in outputs}
    # shown signed when the model's values are (a negative one): int64 0..255 reads as bytes
    signed = {n: np.asarray(raw[n]).ndim == 1 and np.issubdtype(np.asarray(raw[n]).dtype, np.signedinteger)
              and bool((np.asarray(raw[n]) < 0).any()) for n in outputs}
    for n in outputs:
        if expected[n].shape[0] != int(frames.counts[n]):
            raise golden.ModelError(f"the golden model {d.verify.value} of {d.name}: expected_beats "
                                    f"says {frames.counts[n]} on {n}, its expected array has "
                                    f"{expected[n].shape[0]}")
    want_status = golden.check_status(d, golden.call_later(d, stim.status, "status"), context)
    return expected, signed, want_status


def _outcome(d: designs.Design, run: _Run, frames: _Frames, workdir: Path, places: list,
             console: Console) -> _Outcome:
    """The harness's exit read: its summary, the design's own stop (exit 1), or one SimError."""
    proc = run.proc
    output = (proc.stdout or "") + "\n" + (proc.stderr or "")
    warnings = runtime_warnings(output)
    for w in warnings:  # shown whether or not the run passes: a missing $readmem file is said here
        console.print(f"[yellow]{d.name}: the simulation warned: {escape(w)}[/]")
    # exit 1 is Verilator's own (vl_fatal): the design's assertion, $fatal or $stop ended the run
    stopped = design_stop(output) if proc.returncode == 1 else None
    if stopped is None and (proc.returncode not in (0, 3) or not (workdir / "summary.json").exists()):
        full = disk_space.full_message(f"the {d.name} simulation", proc.stderr + "\n" + proc.stdout, places)
        if full:
            raise SimError(full)
        raise SimError(f"the {d.name} harness failed (exit {proc.returncode}): "
                       f"{(proc.stderr or proc.stdout).strip()[-800:]}")
    problems: list[str] = []
    if stopped is not None:
        # the harness wrote no summary: the run ended at the design's check, before any word was compared
        problems.append(f"the design's own check failed and stopped the simulation: {stopped}")
        console.print(f"[red]{d.name}: {escape(problems[0])}[/]")
        summary = _stopped_summary(d.streams, frames.beats_of, frames.counts, run.max_cycles)
    else:
        summary = json.loads((workdir / "summary.json").read_text())
    if summary["timeout"]:
        problems.append(f"cycle limit {run.max_cycles:,} reached before every expected word came out "
                        f"(the design hung or stalled)")
    if stopped is None:
        console.print(f"[dim]{d.name}[/]: simulated {summary['total_cycles']:,} cycles in {run.simulate_seconds:.1f} s "
                      f"({summary['total_cycles'] / max(summary['sim_seconds'], 1e-9) / 1e6:.2f} M cycles/s)")
    return _Outcome(summary, stopped, warnings, problems)


def _compare(d: designs.Design, outcome: _Outcome, run: _Run, frames: _Frames, workdir: Path,
             stall_free: bool) -> tuple[list[dict], int]:
    """Every output word and sideband value against the model's, the inputs' acceptance and the status
    outputs (problems go to outcome.problems); returns (the first mismatches, how many)."""
    first: list[dict] = []
    mismatches = 0
    problems, summary = outcome.problems, outcome.summary
    if outcome.stopped is None:  # else nothing came out to compare: the design's failed check is the verdict
        check_inputs(summary["inputs"], stall_free, problems)
        for os_ in summary["outputs"]:
            name, bits = os_["name"], d.streams.outputs[os_["name"]]
            got = np.fromfile(workdir / f"out.{name}.bin", dtype="<u8")
            w = words_per_beat(bits)
            got = got if w == 1 else got.reshape(-1, w)
            mismatches += compare_output(name, bits, run.expected[name], run.signed[name], got, os_, first, problems)
        for port, want in frames.side_expected.items():
            mismatches += _compare_sideband(port, want, workdir, first, problems)
        check_status(summary["status"], run.want_status, problems, summary.get("status_watch"))
    if outcome.warnings and (mismatches or problems):  # a failed run: a warning may say why (a missing $readmem file)
        problems += [f"Verilator warned during the run: {w}" for w in outcome.warnings]
    return first, mismatches


def _per_port(ins: list, outs: list, status: dict, want_status: dict) -> list[dict]:
    """kabe's paired memory ports (the board's lanes): input p with output p and its counters."""
    per_port = []
    for p, (i, o) in enumerate(zip(ins, outs)):
        per_port.append({
            "port": p, "input": i["name"], "output": o["name"], "beats": i["beats_accepted"], "cycles": i["cycles"],
            "beats_per_cycle": round(i["beats_accepted"] / i["cycles"], 6) if i["cycles"] else 0.0,
            "tready_low_cycles": i["tready_low_cycles"], "words": o["beats"], "expected_words": o["expected_beats"],
            "stat_invalid": status.get(f"stat{p}_invalid"), "expected_invalid": want_status.get(f"stat{p}_invalid"),
            "stat_overflow": status.get(f"stat{p}_overflow"), "tlast_at": o["tlast_at"][:10],
            "latency_cycles": (o["last_out_cycle"] - i["last_accept_cycle"])
            if o["last_out_cycle"] >= 0 and i["last_accept_cycle"] >= 0 else None,
        })
    return per_port


def _result(d: designs.Design, declares, stim, sb, ran: _Ran, ask: dict, timing: dict, commit) -> dict:
    """The run's result record (kabe.records: result.json under the commit)."""
    held, traffic, frames, run, outcome = ran.held, ran.traffic, ran.frames, ran.run, ran.outcome
    first, mismatches = ran.first, ran.mismatches
    summary, stopped, problems = outcome.summary, outcome.stopped, outcome.problems
    ins, outs, status = summary["inputs"], summary["outputs"], summary["status"]
    rows, streams = ask["rows"], d.streams
    beats = sum(s["beats_accepted"] for s in ins)
    port_cycles = sum(s["cycles"] for s in ins)
    words_expected = sum(int(e.shape[0]) for e in run.expected.values())
    words_checked = words_expected if stopped is None else 0  # a stopped run compared nothing
    if words_expected == 0:  # a pass must have compared something, as a cocotb run with no test fails
        problems.append(f"the golden model {d.verify.value} expected no word on {', '.join(streams.outputs)}: "
                        f"nothing was checked (its expected arrays are empty"
                        f"{'' if frames.beats_in else ', and so is its stimulus'}); "
                        f"make it return at least one input beat and the words that must come out")
    return {
        "design": d.name,
        "kind": declares.label,
        "verification": d.verify.as_dict(),
        "streams": streams.as_dict(),
        "ports": d.ports,
        "rows": rows if rows is not None else words_expected,
        "rows_per_port": rows // d.ports if rows is not None and declares.per_port else None,
        "row_bytes": ask["row_bytes"],
        # what the model counts as checked (its `checked`, rows say), else the beats compared
        "rows_checked": 0 if stopped is not None else stim.checked if stim.checked is not None else words_checked,
        "words_checked": words_checked,
        "mismatches": mismatches,
        "first_mismatches": first,
        "problems": problems,
        "warnings": outcome.warnings,  # Verilator's runtime warnings (a $readmem file not found, a design's $warning)
        "passed": mismatches == 0 and not problems,
        "beats": beats,
        "cycles": max((s["cycles"] for s in ins), default=0),
        "total_cycles": summary["total_cycles"],
        "beats_per_cycle": round(beats / port_cycles, 6) if port_cycles else 0.0,
        "per_port": _per_port(ins, outs, status, run.want_status),
        "status": status,
        "expected_status": run.want_status,
        "stat_invalid": sum(v for k, v in status.items() if k.endswith("_invalid")),
        # what the run asked for, else kabe's own models' default; None for any other model (its own
        # default, which kabe does not know: the status counts say what the stimulus held)
        "invalid_fraction": ask["invalid_fraction"] if ask["invalid_fraction"] is not None else
        declares.options.get("invalid_fraction"),
        "seed": ask["seed"],
        "parameters": {k: v for k, v in sb.parameters.items()},
        "overrides": ask["params"],
        "flags": ask["flags"],
        **timing,  # frame_seconds: streams + the model's words (the latter during the simulation)
        "mcycles_per_second": round(summary["total_cycles"] / max(summary["sim_seconds"], 1e-9) / 1e6, 3),
        "simulator": "verilator",
        "version": sb.verilator_version,
        "x_seed": verilator_build.x_seed(ask["seed"]),  # +verilator+seed: the run's X values (rand reset 2)
        # the top's outputs in no stream or status (and no sideband the model expects): never compared
        "not_checked": [n for n in sb.not_checked if n not in frames.side_expected],
        "sideband": sorted(frames.side_expected) + sorted(n for n in (getattr(stim, "sideband", None) or {})
                                                          if n not in frames.side_expected),
        "held": held,  # the top's inputs in no stream, held at these values (never X)
        # the clocks (periods), resets (levels) and each stream's clock the harness drove (kabe.sim.clocking),
        # when they are not kabe's contract of one clk and an active-high rst
        **({"clocking": sb.clocking.as_dict()} if sb.clocking is not None and not sb.clocking.default else {}),
        # the clocks (periods), resets (levels) and each stream's clock the harness drove (kabe.sim.clocking),
        # when they are not kabe's contract of one clk and an active-high rst
        **({"clocking": sb.clocking.as_dict()} if sb.clocking is not None and not sb.clocking.default else {}),
        # the harness's gaps and backpressure (None: off, one beat per clock offered and taken)
        "traffic": traffic,
        "stall_cycles": {o["name"]: o.get("stall_cycles", 0) for o in outs},
        "gap_cycles": {i["name"]: i.get("gap_cycles", 0) for i in ins},
        "build_key": sb.key,
        "commit": commit.sha,
        "dirty": commit.dirty,
    }


def result_path(result: Mapping[str, Any], root: Path = REPORTS) -> Path:
    commit = provenance.Commit(result["commit"], bool(result.get("dirty", False)))
    return archive_dir(commit, result["design"], "sim", root) / "result.json"


def write_result(result: Mapping[str, Any], root: Path = REPORTS) -> Path:
    """reports/<commit>/<design>/sim/result.json, written atomically; a cocotb run's JUnit XML beside it
    (junit.xml), so the result names it rather than carrying it."""
    result = dict(result)
    xml_text = result.pop("junit_xml", None)
    path = result_path(result, root)
    if xml_text is not None:
        write_text_atomic(path.with_name("junit.xml"), xml_text)
        result["junit"] = "junit.xml"
    return write_json_atomic(path, result)


def mismatch_line(m: Mapping[str, Any]) -> str:
    """One mismatching beat: its port, its index on that port, both values in hex (a record from before
    beats were named says row)."""
    index = m.get("beat", m.get("row"))
    got = "nothing (the beat never came out)" if m.get("got") is None else m.get("got")
    return f"  {m.get('port')} beat {index}: expected {m.get('expected')}, got {got}"


def describe(result: Mapping[str, Any]) -> str:
    verdict = "[green]PASS[/]" if result["passed"] else "[red]FAIL[/]"
    if result.get("simulator") == "cocotb":
        return (f"{verdict} {result['design']}: cocotb {result['module']}, {result['tests']} test(s), "
                f"{result['failed']} failed, {result['seconds']:.1f} s wall")
    unit = "rows" if result.get("kind") else "beats"  # kabe's own models count rows, any other model beats
    if result.get("simulator") == "csim":  # untimed: no cycles to show
        return (f"{verdict} {result['design']}: C-simulation of {result['hls_top']}, {result['rows_checked']:,} {unit}, "
                f"{result['mismatches']} mismatches, {result['beats']:,} beats in, {result['seconds']:.1f} s wall "
                f"(frames {result['frame_seconds']:.1f}, compile {result['compile_seconds']:.1f}, "
                f"simulate {result['simulate_seconds']:.1f}, compare {result['compare_seconds']:.1f})")
    # the invalid inputs the design counted (stat<p>_invalid) beside what the model put in, when it says
    want_invalid = [v for k, v in (result.get("expected_status") or {}).items() if k.endswith("_invalid")]
    invalid = (f", {result['stat_invalid']:,} invalid input(s) counted (model {sum(want_invalid):,})"
               if want_invalid else "")
    unchecked = result.get("not_checked") or []
    unchecked_text = f"; not checked: {', '.join(unchecked)}" if unchecked else ""
    if result.get("held"):
        unchecked_text += f"; held: {held_text(result['held'])}"
    traffic = result.get("traffic")
    traffic_text = (f", traffic valid {traffic['valid']:.2f} ready {traffic['ready']:.2f}" if traffic
                    else ", traffic off" if "traffic" in result else "")
    return (f"{verdict} {result['design']}: {result['rows_checked']:,} {unit}, {result['mismatches']:,} mismatching "
            f"beat(s) of {result.get('words_checked', 0):,}, "
            f"{result['beats']:,} beats in {result['cycles']:,} cycles per port "
            f"(beats/cycle {result['beats_per_cycle']:.3f}{traffic_text}){invalid}, {result['seconds']:.1f} s wall "
            f"(frames {result['frame_seconds']:.1f} of which {result.get('model_seconds', 0.0):.1f} during the "
            f"simulation, compile {result['compile_seconds']:.1f}, "
            f"simulate {result['simulate_seconds']:.1f}, compare {result['compare_seconds']:.1f}){unchecked_text}")


def _sideband_args(d: designs.Design, stim, sb, beats_of: Mapping[str, int], counts: Mapping[str, Any],
                   workdir: Path, argv: list[str]) -> dict[str, np.ndarray]:
    """The model's sideband values (Stimulus.sideband) as harness files and arguments: an input stream's
    driven with its beats, an output stream's captured; returns the expected words per output sideband port.
    A port the top does not have, or a count that is not its stream's, is one line naming the model."""
    where = f"the golden model {d.verify.value} of {d.name}"
    expected: dict[str, np.ndarray] = {}
    for port, values in (getattr(stim, "sideband", None) or {}).items():
        if port not in sb.sidebands:
            have = ", ".join(sb.sidebands) or "none"
            raise golden.ModelError(f"{where} gives sideband values for {port}, which is not a sideband port of top "
                                    f"{sb.toplevel} (<stream>_tkeep/_tstrb/_tuser/_tid/_tdest of a declared stream, "
                                    f"64 bits at most; the top has: {have})")
        stream, kind, bits = sb.sidebands[port]
        words = golden.words(d, port, values, bits)
        want = beats_of[stream] if kind == "in" else int(counts[stream])
        if words.shape[0] != want:
            raise golden.ModelError(f"{where}: sideband {port} has {words.shape[0]} values, its stream {stream} "
                                    f"{want} beats: give one value per beat")
        path = workdir / f"side.{port}.bin"
        if kind == "in":
            words.tofile(path)
            argv += ["--side-in", port, str(path)]
        else:
            argv += ["--side-out", port, str(path)]
            expected[port] = words
    return expected


def _compare_sideband(port: str, want: np.ndarray, workdir: Path, first: list, problems: list) -> int:
    """Beats whose sideband value differs from the model's (missing and extra beats are the stream's own)."""
    got = np.fromfile(workdir / f"side.{port}.bin", dtype="<u8")
    n = min(got.shape[0], want.shape[0])
    bad = np.flatnonzero(got[:n] != want[:n])
    for i in bad[: max(0, MAX_SHOWN_MISMATCHES - len(first))]:
        first.append({"port": port, "row": int(i), "expected": int(want[i]), "got": int(got[i])})
    if bad.size:
        problems.append(f"{port}: {bad.size} beat(s) with another value than the model's (first at beat {int(bad[0])})")
    return int(bad.size)


def held_text(held: Mapping[str, int]) -> str:
    """`s_axis_tuser=0, pause_req=1`: the inputs the harness held, with their values."""
    return ", ".join(f"{k}={v}" for k, v in held.items())


def main(design: designs.Design, rows: int | None = None, seed: int = 1, *, console: Console | None = None,
         params: Mapping[str, Any] | None = None, commit: provenance.Commit | None = None) -> int:
    """The sim verb: resolve the design once (kabe.project.design_context), then run, archive and print one simulation;
    0 when every word matched and no problem was seen."""
    from kabe.project import design_context

    console = console or make_console()
    try:
        hls = design.hls is not None  # C-simulated from its synth target
        ctx = design_context.make(design, console=console, commit=commit, sim=not hls, synth=hls)
        result = run_sim(ctx, SimAsk(rows, seed, params=dict(params or {})))
    except UserError as e:  # a design, core, model, build or testbench mistake: one line, exit 2
        console.print(f"[red]sim {design.name}: {escape(str(e))}[/]")
        return 2
    path = write_result(result)
    console.print(describe(result))
    for m in result["first_mismatches"]:
        console.print(escape(mismatch_line(m)))
    for p in result["problems"]:
        console.print(f"  [red]{p}[/]")
    console.print(f"[dim]result: {path}[/]")
    if not result["passed"]:
        console.print(f"[red]sim {design.name}: {result['mismatches']:,} of {result.get('words_checked', 0):,} beat(s) "
                      f"differ and {len(result['problems'])} problem(s) against the golden model[/]")
        return 1
    return 0
