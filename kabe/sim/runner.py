"""Stream whole frames through a design in Verilator and compare every result word with numpy.

    run_sim("stage4", 524_278)  ->  result dict (also see write_result / main)

rows is the total over the design's ports (the document's 131,070 = 2 x 65,535); each port gets
rows / ports rows of its own random frame (seeds differ per port). The harness (harness.cpp)
holds tvalid high every cycle, so a design that never stalls shows beats_per_cycle == 1.000.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any, Iterable, Mapping

import numpy as np
from rich.console import Console
from rich.markup import escape
from rich.errors import LiveError

from kabe.console import make_console
from kabe.errors import UserError
from .. import designs, disk_space, provenance, tool_group
from ..records.archive import archive_dir, write_json_atomic
from ..cores import CoreError
from ..model import frames
from ..paths import BUILD, REPORTS
from . import verilator_build
from .verilator_build import SimBuildError

# Full-scale rows per port: the document's 65,535-row frame; the ternary engine's frame is as
# many 512 B rows as fit with x in 128 MiB (2**27 - 2,560 B) / 512 B = 262,139.
# For the attention engine a "row" is one K (and one V) row: rows per port = the context length,
# and full scale is the longest context the engine is built for (NMAX 2048).
FULL_ROWS_PER_PORT = {"probe": 65_535, "int8": 65_535, "ternary": 262_139, "attention": 2048}
# Default share of invalid ternary bytes (243..255) so stat_invalid is exercised on every run.
DEFAULT_INVALID_FRACTION = 1e-4
MAX_SHOWN_MISMATCHES = 10
_DRAIN_CYCLES = 64  # cycles simulated after the last expected word, to catch extra words


class SimError(UserError, RuntimeError):
    """The simulation could not run (bad row count, harness failure, cycle limit)."""


def full_scale_rows(design: str | designs.Design) -> int:
    d = designs.get(design)
    if d.kind not in FULL_ROWS_PER_PORT:
        raise SimError(f"{d.name} ({d.kind}) has no full-scale row count in kabe.sim.runner.FULL_ROWS_PER_PORT; "
                       f"pass rows explicitly")
    return FULL_ROWS_PER_PORT[d.kind] * d.ports


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


def _split_rows(d: designs.Design, rows: int) -> int:
    if isinstance(rows, bool) or not isinstance(rows, (int, np.integer)) or rows <= 0:
        raise SimError(f"rows must be a positive integer (total over {d.ports} port(s)), got {rows!r}")
    if rows % d.ports:
        raise SimError(f"{d.name} has {d.ports} HP ports and rows is the total over them: {rows} does not divide "
                       f"by {d.ports}; use {rows - rows % d.ports} or {rows + d.ports - rows % d.ports}")
    return int(rows) // d.ports


def _as_words(kind: str, expected: np.ndarray) -> np.ndarray:
    """Expected result words as the harness writes them (uint64, 32-bit results zero-extended)."""
    if kind == "probe":
        return expected.astype(np.uint64)
    return expected.astype(np.int32).view(np.uint32).astype(np.uint64)


def _show(kind: str, word: int) -> int:
    """A result word as a person reads it: int32 for engines, unsigned for the probe."""
    if kind == "probe":
        return int(word)
    w = int(word) & 0xFFFFFFFF
    return w - (1 << 32) if w >= 1 << 31 else w


def _compare_port(kind: str, port: int, expected_words: np.ndarray, got: np.ndarray, summary: dict,
                  expected_invalid: int, first: list, problems: list) -> int:
    """Mismatching rows on one port (value differences + missing + extra words); fills first/problems."""
    n = min(expected_words.size, got.size)
    if kind != "probe":
        # The result port is 32 bits wide; any higher bit would be a harness fault, not the design's.
        got_cmp = got[:n] & np.uint64(0xFFFFFFFF)
    else:
        got_cmp = got[:n]
    bad = np.flatnonzero(got_cmp != expected_words[:n])
    for i in bad[: max(0, MAX_SHOWN_MISMATCHES - len(first))]:
        first.append({"port": port, "row": int(i), "expected": _show(kind, expected_words[i]),
                      "got": _show(kind, got[i])})
    missing = max(0, expected_words.size - got.size)
    extra = max(0, got.size - expected_words.size)
    if missing:
        problems.append(f"port {port}: {missing} of {expected_words.size} result words never came out")
        if len(first) < MAX_SHOWN_MISMATCHES:
            first.append({"port": port, "row": int(got.size), "expected": _show(kind, expected_words[got.size]),
                          "got": None})
    if extra:
        problems.append(f"port {port}: {extra} extra result word(s) after the expected {expected_words.size}")
    want_tlast = [int(expected_words.size) - 1] if expected_words.size else []
    if summary["tlast_at"] != want_tlast:
        shown = summary["tlast_at"][:5]
        problems.append(f"port {port}: tlast on word(s) {shown}{' ...' if len(summary['tlast_at']) > 5 else ''}, "
                        f"expected exactly on word {want_tlast} (the frame's last result)")
    if summary["stat_invalid"] != expected_invalid:
        problems.append(f"port {port}: stat_invalid = {summary['stat_invalid']}, the model counts {expected_invalid} "
                        f"invalid weight bytes")
    if summary["stat_overflow"]:
        problems.append(f"port {port}: stat_overflow is set (the output FIFO dropped a result with m_tready held high)")
    if summary["tready_low_cycles"]:
        problems.append(f"port {port}: s_axis_tready was low on {summary['tready_low_cycles']} cycle(s) with tvalid "
                        f"high; the contract says tready is constant 1")
    if summary["beats_accepted"] != summary["beats_in"]:
        problems.append(f"port {port}: only {summary['beats_accepted']} of {summary['beats_in']} beats were accepted")
    return int(bad.size) + missing + extra


def run_sim(design: str | designs.Design, rows: int | None = None, seed: int = 1, row_bytes: int | None = None, *,
            params: Mapping[str, Any] | None = None, flags: Iterable[str] = (),
            invalid_fraction: float | None = None, console: Console | None = None,
            build_root: Path = BUILD, keep_files: bool = False) -> dict:
    """Simulate `rows` rows (total over ports; None = full scale) and compare every word with the model.

    params override core parameters (e.g. a deliberately broken variant); flags are FuseSoC use flags.
    Raises SimError / SimBuildError / CoreError / DesignError when the run cannot happen; a run that
    happens but disagrees with the model returns normally with mismatches > 0 or problems listed.
    """
    t_start = time.monotonic()
    console = console or make_console(stderr=True)
    d = designs.get(design)
    rows = full_scale_rows(d) if rows is None else rows
    rows_per_port = _split_rows(d, rows)
    row_bytes = d.row_bytes if row_bytes is None else int(row_bytes)
    invalid_fraction = (DEFAULT_INVALID_FRACTION if d.kind == "ternary" else 0.0) \
        if invalid_fraction is None else float(invalid_fraction)
    params = dict(params or {})
    commit = provenance.current_commit()

    with _stage(console, f"[bold]{d.name}[/]: resolving and compiling (Verilator)"):
        sb = verilator_build.build(d, params, flags=flags, build_root=build_root)
    if sb.compiled:
        console.print(f"[dim]{d.name}[/]: compiled in {sb.compile_seconds:.1f} s -> {sb.exe}")

    run_root = Path(build_root) / "sim" / d.name / "runs"
    run_root.mkdir(parents=True, exist_ok=True)
    places = [disk_space.build_place(run_root)]
    disk_space.check_free(f"the {d.name} simulation", places)  # its streams and outputs go to run_root
    workdir = Path(tempfile.mkdtemp(prefix=f"seed{seed}-", dir=run_root))
    try:
        # Streams: one per port, written to disk; the golden model's words are computed while the
        # simulation runs (the harness is one process on one core, numpy takes the other).
        t0 = time.monotonic()
        finishers = []
        port_args: list[str] = []
        with _stage(console, f"[bold]{d.name}[/]: building {d.ports} x {rows_per_port:,} rows ({d.kind}) with numpy"):
            for port in range(d.ports):
                rng = np.random.default_rng([seed, port])
                stream, n_expected, finish = frames.build_deferred(d.kind, rng, rows_per_port, row_bytes,
                                                                   invalid_fraction)
                in_path = workdir / f"in{port}.bin"
                try:
                    stream.tofile(in_path)
                except OSError as e:  # a full disk: one line naming it, not a traceback
                    full = disk_space.os_error_message(f"the {d.name} simulation", e, places[0], in_path)
                    if full:
                        raise SimError(full) from None
                    raise
                finishers.append(finish)
                port_args += ["--port", str(in_path), str(n_expected), str(workdir / f"out{port}.bin")]
                del stream
        frame_seconds = time.monotonic() - t0
        beats_per_port = [(workdir / f"in{p}.bin").stat().st_size // frames.BEAT_BYTES for p in range(d.ports)]
        console.print(f"[dim]{d.name}[/]: streams written in {frame_seconds:.1f} s "
                      f"({sum(beats_per_port):,} beats, {sum(beats_per_port) * 8 / 1e6:,.0f} MB)")

        # Simulate, and meanwhile compute what must come back.
        max_cycles = 4 * max(beats_per_port) + 100_000
        cmd = [str(sb.exe), "--summary", str(workdir / "summary.json"), "--max-cycles", str(max_cycles),
               "--drain", str(_DRAIN_CYCLES), *port_args]
        t0 = time.monotonic()
        with _stage(console, f"[bold]{d.name}[/]: simulating {max(beats_per_port):,} cycles per port"):
            # in a process group tied to this run: a killed build takes the simulation with it
            with tool_group.popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as sim_proc:
                try:
                    t1 = time.monotonic()
                    expected: list[np.ndarray] = []
                    invalid: list[int] = []
                    for finish in finishers:
                        frame = finish()
                        expected.append(_as_words(d.kind, frame.expected))
                        invalid.append(int(frame.invalid))
                        del frame
                    finishers.clear()
                    model_seconds = time.monotonic() - t1
                    out, err = sim_proc.communicate()
                except BaseException:  # Ctrl-C too: the simulation's own session never sees the terminal's
                    tool_group.stop(sim_proc)
                    raise
            proc = subprocess.CompletedProcess(cmd, sim_proc.returncode, out, err)
        simulate_seconds = time.monotonic() - t0
        frame_seconds += model_seconds
        if proc.returncode not in (0, 3) or not (workdir / "summary.json").exists():
            full = disk_space.full_message(f"the {d.name} simulation", proc.stderr + "\n" + proc.stdout, places)
            if full:
                raise SimError(full)
            raise SimError(f"the {d.name} harness failed (exit {proc.returncode}): "
                           f"{(proc.stderr or proc.stdout).strip()[-800:]}")
        summary = json.loads((workdir / "summary.json").read_text())
        problems: list[str] = []
        if summary["timeout"]:
            problems.append(f"cycle limit {max_cycles:,} reached before every expected word came out "
                            f"(the design hung or stalled)")
        console.print(f"[dim]{d.name}[/]: simulated {summary['total_cycles']:,} cycles in {simulate_seconds:.1f} s "
                      f"({summary['total_cycles'] / max(summary['sim_seconds'], 1e-9) / 1e6:.2f} M cycles/s)")

        # Compare.
        t0 = time.monotonic()
        first: list[dict] = []
        mismatches = 0
        port_results = []
        with _stage(console, f"[bold]{d.name}[/]: comparing against the numpy model"):
            for port, ps in enumerate(summary["ports"]):
                got = np.fromfile(workdir / f"out{port}.bin", dtype="<u8")
                mismatches += _compare_port(d.kind, port, expected[port], got, ps, invalid[port], first, problems)
                port_results.append({
                    "port": port, "rows": rows_per_port, "beats": ps["beats_accepted"], "cycles": ps["cycles"],
                    "beats_per_cycle": round(ps["beats_accepted"] / ps["cycles"], 6) if ps["cycles"] else 0.0,
                    "tready_low_cycles": ps["tready_low_cycles"], "words": ps["words"],
                    "expected_words": int(expected[port].size), "stat_invalid": ps["stat_invalid"],
                    "expected_invalid": invalid[port], "stat_overflow": ps["stat_overflow"],
                    "tlast_at": ps["tlast_at"][:10],
                    "latency_cycles": (ps["last_out_cycle"] - ps["last_accept_cycle"])
                    if ps["last_out_cycle"] >= 0 and ps["last_accept_cycle"] >= 0 else None,
                })
        compare_seconds = time.monotonic() - t0
    finally:
        if not keep_files:
            shutil.rmtree(workdir, ignore_errors=True)

    beats = sum(p["beats"] for p in port_results)
    port_cycles = sum(p["cycles"] for p in port_results)
    result = {
        "design": d.name,
        "kind": d.kind,
        "ports": d.ports,
        "rows": rows,
        "rows_per_port": rows_per_port,
        "row_bytes": row_bytes,
        # Engines: one result word per row (attention: per output element); the probe: the rows it counted.
        "rows_checked": sum(int(e.size) for e in expected) if d.kind != "probe" else rows,
        "words_checked": sum(int(e.size) for e in expected),
        "mismatches": mismatches,
        "first_mismatches": first,
        "problems": problems,
        "passed": mismatches == 0 and not problems,
        "beats": beats,
        "cycles": max((p["cycles"] for p in port_results), default=0),
        "total_cycles": summary["total_cycles"],
        "beats_per_cycle": round(beats / port_cycles, 6) if port_cycles else 0.0,
        "per_port": port_results,
        "stat_invalid": sum(p["stat_invalid"] for p in port_results),
        "invalid_fraction": invalid_fraction,
        "seed": seed,
        "parameters": {k: v for k, v in sb.parameters.items()},
        "overrides": params,
        "flags": list(flags),
        "seconds": round(time.monotonic() - t_start, 3),
        "frame_seconds": round(frame_seconds, 3),  # streams + the model's words (the latter during the simulation)
        "model_seconds": round(model_seconds, 3),
        "compile_seconds": round(sb.compile_seconds, 3),
        "compiled": sb.compiled,
        "simulate_seconds": round(simulate_seconds, 3),
        "sim_seconds": round(summary["sim_seconds"], 3),
        "compare_seconds": round(compare_seconds, 3),
        "mcycles_per_second": round(summary["total_cycles"] / max(summary["sim_seconds"], 1e-9) / 1e6, 3),
        "simulator": "verilator",
        "version": sb.verilator_version,
        "build_key": sb.key,
        "commit": commit.sha,
        "dirty": commit.dirty,
    }
    return result


def result_path(result: Mapping[str, Any], root: Path = REPORTS) -> Path:
    commit = provenance.Commit(result["commit"], bool(result.get("dirty", False)))
    return archive_dir(commit, result["design"], "sim", root) / "result.json"


def write_result(result: Mapping[str, Any], root: Path = REPORTS) -> Path:
    """reports/<commit>/<design>/sim/result.json, written atomically."""
    return write_json_atomic(result_path(result, root), dict(result))


def describe(result: Mapping[str, Any]) -> str:
    verdict = "[green]PASS[/]" if result["passed"] else "[red]FAIL[/]"
    return (f"{verdict} {result['design']}: {result['rows_checked']:,} rows, {result['mismatches']} mismatches, "
            f"{result['beats']:,} beats in {result['cycles']:,} cycles per port "
            f"(beats/cycle {result['beats_per_cycle']:.3f}), {result['seconds']:.1f} s wall "
            f"(frames {result['frame_seconds']:.1f} of which {result.get('model_seconds', 0.0):.1f} during the "
            f"simulation, compile {result['compile_seconds']:.1f}, "
            f"simulate {result['simulate_seconds']:.1f}, compare {result['compare_seconds']:.1f})")


def main(design: str, rows: int | None = None, seed: int = 1, *, console: Console | None = None,
         params: Mapping[str, Any] | None = None) -> int:
    """Run, archive and print one simulation; 0 when every word matched and no problem was seen."""
    console = console or make_console()
    try:
        result = run_sim(design, rows, seed=seed, console=console, params=params)
    except (designs.DesignError, CoreError, SimBuildError, SimError) as e:
        console.print(f"[red]sim {design}: {escape(str(e))}[/]")
        return 2
    path = write_result(result)
    console.print(describe(result))
    for m in result["first_mismatches"]:
        console.print(f"  port {m['port']} row {m['row']}: expected {m['expected']}, got {m['got']}")
    for p in result["problems"]:
        console.print(f"  [red]{p}[/]")
    console.print(f"[dim]result: {path}[/]")
    if not result["passed"]:
        console.print(f"[red]sim {design}: {result['mismatches']} mismatching word(s) and "
                      f"{len(result['problems'])} problem(s) against the numpy model[/]")
        return 1
    return 0
