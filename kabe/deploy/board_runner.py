#!/usr/bin/env python3
"""kabe's board-side runner: load the bitstream, stream the design's golden-model frames through the
PL, compare every output beat with the model, print one JSON result.

This file is copied to the board with bitfile.py and pl_names.py beside it, and the project's model
(its module and the project's modules it imports) with kabe/verify.py under project/; it imports
nothing else of kabe: numpy, the model, and (for --backend pynq) pynq. `--backend sim` drives the same
code above the transfer layer with the Verilator model of the design standing in for the PL.

The model is called as in simulation (kabe.verify): `stimulus(seed, size, context)`, or, when it declares
`board_chunks`, chunk after chunk of at most one DMA transfer per port, drawn one at a time. Input
stream p goes to DMA p, output stream p comes back from it; the status outputs are read through the
block design's GPIOs and held against the model's status, summed over the chunks.

The cells it talks to (a DMA and a status GPIO per port, the USR_ACCESS GPIO) are named by the block
design in kabe_<design>.cells.json beside the .bit; they are checked against the .hwh before anything
is programmed. After programming, the commit word the running PL reports (USR_ACCESSE2, read over
the GPIO) must be the archive's: a PL running another bitstream is never verified in its place.

Exit status: 0 every beat matches; 1 mismatches; 2 refused (commit/part mismatch, bad input, no pynq).
The result file is written to a temp name and renamed only after the run completed, so a run that
crashes or is killed leaves no result claiming anything.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE / "project")]  # bitfile, pl_names, board_frames; the model with kabe/verify.py
import bitfile  # noqa: E402  (pushed beside this file)
import board_frames  # noqa: E402  (pushed beside this file)
import pl_names  # noqa: E402  (pushed beside this file)
from board_frames import beat_bytes, bytes_to_words, words_to_bytes  # noqa: E402

MAX_REPORTED_MISMATCHES = 10
# One DMA transfer per port at most this big: the AXI DMA's length register (26 bits) stops at
# 64 MiB - 1, and pynq.allocate takes contiguous CMA memory, a limited pool on a 512 MB board.
DEFAULT_TRANSFER_MB = 32


class Refused(RuntimeError):
    """The runner will not run: the message says why and how to fix it."""


# --- the bitstream's provenance: header part, and the commit word in USR_ACCESS ---

def _part_core(part: str) -> str:
    """A part as a .bit header spells it: xc7z020clg400-1 -> 7z020clg400."""
    core = part.lower().removeprefix("xc")
    return core.rsplit("-", 1)[0] if "-" in core else core


def check_provenance(bit: Path, expect_commit: str, expect_dirty: bool, expect_part: str) -> dict[str, str]:
    data = Path(bit).read_bytes()
    try:
        header = bitfile.parse_header(data)
    except ValueError as e:
        raise Refused(f"{bit.name}: {e}; push the .bit written by the build") from None
    if _part_core(expect_part) not in header["part"].lower():
        raise Refused(f"{bit.name} was built for part {header['part']}, this board is {expect_part} "
                      f"({_part_core(expect_part)}); rebuild for {expect_part}")
    word = bitfile.read_usr_access(data)
    want = bitfile.commit_word(expect_commit, expect_dirty)
    if word != want:
        got = "no commit" if word is None else f"commit {bitfile.describe_word(word)}"
        raise Refused(f"{bit.name} carries {got} in USR_ACCESS but the archive it came from is "
                      f"{bitfile.describe_word(want)}; deploy the bitstream from its own archive (or rebuild)")
    header["commit"] = bitfile.describe_word(word)
    return header


def check_running_commit(word: int | None, expect_commit: str, expect_dirty: bool, allow_dirty: bool) -> str:
    """The USR_ACCESS word the programmed PL reports must be the archive's commit; a dirty build runs
    only when allowed. Returns the commit as text (e.g. 0123456)."""
    want = bitfile.commit_word(expect_commit, expect_dirty)
    if word is None:
        raise Refused("the running PL reports no USR_ACCESS word; the block design has no usr_access GPIO "
                      "(rebuild with this kabe, flow=vivado)")
    if word != want:
        raise Refused(f"the running PL reports commit {bitfile.describe_word(word)} (USR_ACCESS 0x{word:08X}), but the "
                      f"archive is {bitfile.describe_word(want)} (0x{want:08X}): another bitstream is configured; "
                      f"refusing to verify it in this archive's name (reload the bitstream, or deploy its own archive)")
    if word & bitfile.DIRTY_BIT and not allow_dirty:
        raise Refused(f"the running PL is a dirty build ({bitfile.describe_word(word)}): no commit names its code; "
                      f"commit and rebuild, or allow dirty builds ([tool.kabe.board] allow_dirty)")
    return bitfile.describe_word(word)


def load_names(bit: Path, ports: int) -> "pl_names.PlNames":
    """The block design's cell names (beside the .bit), each checked against the .hwh."""
    try:
        names = pl_names.load(pl_names.cells_file(bit), ports)
    except ValueError as e:
        raise Refused(str(e)) from None
    problems = pl_names.check_hwh(Path(bit).with_suffix(".hwh"), names)
    if problems:
        raise Refused("; ".join(problems) + " (the .hwh and the cell list come from one build: push both with the .bit)")
    return names


# --- transfer layers: the only code that differs between the board and the simulated PL ---

class PynqBackend:
    """A board programmed with pynq (the profile's deploy.program): Overlay(bit + hwh beside it), one AXI DMA per port pair, all ports concurrently."""

    name = "pynq"

    def __init__(self, bit: Path, ports: int, names: "pl_names.PlNames"):
        try:
            import pynq  # noqa: F401
        except ImportError:
            raise Refused("pynq is not installed on the board; flash the PYNQ image its profile names (docs/deploy.md: PYNQ-Z1 v3.x, PYNQ 4 dropped it), or `pip install pynq`") from None
        from pynq import Overlay

        # the image's PYNQ (PYNQ-Z1: 3.x; PYNQ 4 on the 64-bit boards): reported, the host holds it against the profile
        self.pynq_version = str(getattr(pynq, "__version__", "unknown"))
        self.names = names
        self.overlay = Overlay(str(bit))  # programs the PL (and its clock dividers, from the .hwh)
        try:
            self.dmas = [getattr(self.overlay, name) for name in names.dma]
            self.stat = [getattr(self.overlay, g.cell) for g in names.stat]
            self.usr = getattr(self.overlay, names.usr_access.cell)
        except AttributeError as e:
            raise Refused(f"the overlay has no cell the block design named ({e}); rebuild with flow=vivado") from None

    def read_usr_access(self) -> int:
        """The commit word of the configured bitstream: USR_ACCESSE2 -> the usr_access GPIO."""
        ch = self.names.usr_access.channel_of("usr_access")
        return int(getattr(self.usr, f"channel{ch}").read()) & 0xFFFF_FFFF

    def transfer(self, ins: list[tuple[np.ndarray, int]], outs: list[tuple[int, int]]):
        """ins: (words, bits) per input port; outs: (beats, bits) per output port. Returns the output
        words, the seconds the DMAs took and the status outputs read after them."""
        from pynq import allocate

        in_bufs = [allocate(shape=(words.shape[0] * beat_bytes(bits),), dtype=np.uint8) for words, bits in ins]
        out_bufs = [allocate(shape=(beats * beat_bytes(bits),), dtype=np.uint8) for beats, bits in outs]
        for buf, (words, bits) in zip(in_bufs, ins):
            buf[:] = words_to_bytes(words, bits)
            buf.flush()
        t0 = time.monotonic()
        for dma, out in zip(self.dmas, out_bufs):
            dma.recvchannel.transfer(out)
        for dma, buf in zip(self.dmas, in_bufs):
            dma.sendchannel.transfer(buf)
        for dma in self.dmas:
            dma.sendchannel.wait()
            dma.recvchannel.wait()
        elapsed = time.monotonic() - t0
        results = []
        for out, (beats, bits) in zip(out_bufs, outs):
            out.invalidate()
            results.append(bytes_to_words(np.array(out), bits))
        for b in in_bufs + out_bufs:
            b.freebuffer()
        return results, elapsed, self.status()

    def status(self) -> dict[str, int]:
        """Every status output the block design wired to a GPIO, by its name in design.yaml. A counter
        counts since the bitstream loaded: the last read is the run's total."""
        out = {}
        for gpio, g in zip(self.stat, self.names.stat):
            for signal, ch in g.channels.items():
                out[signal] = int(getattr(gpio, f"channel{ch}").read())
        return out

    cumulative = True


class SimBackend:
    """STAND-IN for the PL: the design's Verilator model (kabe's streaming harness binary)."""

    name = "sim"
    pynq_version = None  # no pynq: nothing of the board's image is claimed
    cumulative = False  # each transfer starts the simulated PL from reset

    def __init__(self, harness: Path, ports: int, pl_word: int | None = None):
        """pl_word: the USR_ACCESS register of the simulated PL, a parameter of the harness. Programming
        a .bit sets it to that bitstream's word; a test sets another to model a PL running something else."""
        if not Path(harness).is_file():
            raise Refused(f"--sim-harness {harness} does not exist; build it with `doit sim:<design>` first")
        self.harness = Path(harness)
        self.ports = ports
        self.pl_word = pl_word

    def read_usr_access(self) -> int | None:
        """Ask the simulated PL for its USR_ACCESS register (`--usr-access` of kabe/sim/harness.cpp): a run
        with empty streams whose summary reports the register."""
        if self.pl_word is None:
            return None
        with tempfile.TemporaryDirectory(prefix="kabe-board-") as tmp:
            tmp = Path(tmp)
            argv = [str(self.harness), "--summary", str(tmp / "summary.json"), "--max-cycles", "1000",
                    "--usr-access", str(self.pl_word)]
            for p in range(self.ports):
                (tmp / f"in{p}.bin").write_bytes(b"")
                argv += ["--port", str(tmp / f"in{p}.bin"), "0", str(tmp / f"out{p}.bin")]
            proc = subprocess.run(argv, capture_output=True, text=True)
            if proc.returncode != 0:
                raise RuntimeError(f"the simulated PL failed (exit {proc.returncode}): {proc.stderr.strip()[-300:]}")
            return json.loads((tmp / "summary.json").read_text()).get("usr_access")

    def transfer(self, ins, outs):
        """The harness streams each input's words with tvalid held high (docs/streams.md); its CLI is
        `--summary S --max-cycles N --port IN EXPECTED OUT` (kabe/sim/harness.cpp), uint64 words a beat."""
        with tempfile.TemporaryDirectory(prefix="kabe-board-") as tmp:
            tmp = Path(tmp)
            argv = [str(self.harness), "--summary", str(tmp / "summary.json"),
                    "--max-cycles", str(4 * max(words.shape[0] for words, _ in ins) + 100_000)]
            for p, ((words, _), (beats, _)) in enumerate(zip(ins, outs)):
                np.ascontiguousarray(words, dtype="<u8").tofile(tmp / f"in{p}.bin")
                argv += ["--port", str(tmp / f"in{p}.bin"), str(beats), str(tmp / f"out{p}.bin")]
            t0 = time.monotonic()
            proc = subprocess.run(argv, capture_output=True, text=True)
            elapsed = time.monotonic() - t0
            if proc.returncode != 0:
                raise RuntimeError(f"the simulated PL failed (exit {proc.returncode}): {proc.stderr.strip()[-300:]}")
            results = []
            for p, (beats, bits) in enumerate(outs):
                w = np.fromfile(tmp / f"out{p}.bin", dtype="<u8")
                per = (bits + 63) // 64
                results.append(w if per == 1 else w.reshape(-1, per))
            summary = json.loads((tmp / "summary.json").read_text())
        return results, elapsed, {k: int(v) for k, v in (summary.get("status") or {}).items()}


# --- the model, as the project gave it ---

def load_model(spec: str):
    """The model function `package.module:function`, from the pushed project (project/ beside this file)."""
    from kabe.verify import declared  # the pushed copy of kabe/verify.py

    module_name, _, func = spec.partition(":")
    try:
        fn = getattr(importlib.import_module(module_name), func)
    except (ImportError, AttributeError) as e:
        raise Refused(f"the model {spec} cannot be loaded on the board ({type(e).__name__}: {e}); "
                      f"the host pushes the model's module and the project's modules it imports") from None
    return fn, declared(fn)


# --- the run ---

def _sim_pl_word(args) -> int | None:
    """What the simulated PL's USR_ACCESS holds: the pushed .bit's word (programming it), unless the
    caller models a PL configured with another bitstream."""
    if args.sim_pl_usr_access is not None:
        return args.sim_pl_usr_access
    return bitfile.read_usr_access(Path(args.bit).read_bytes()) if args.bit else None


def read_context(path: Path):
    from kabe.verify import Context

    try:
        c = json.loads(Path(path).read_text())
        return Context(inputs={k: int(v) for k, v in c["inputs"].items()},
                       outputs={k: int(v) for k, v in c["outputs"].items()},
                       status={k: int(v) for k, v in c["status"].items()}, options=dict(c["options"]))
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
        raise Refused(f"--context {path}: not the context the host writes ({type(e).__name__}: {e})") from None


def run(args) -> dict:
    header = check_provenance(Path(args.bit), args.expect_commit, args.expect_dirty, args.expect_part) if args.bit else {}
    fn, declares = load_model(args.model)
    context = read_context(Path(args.context))
    ins, outs = list(context.inputs), list(context.outputs)
    ports = len(ins)
    if len(outs) != ports:
        raise Refused(f"the design has {ports} input and {len(outs)} output streams; the board's DMAs pair "
                      f"input p with output p, so deploy needs as many of each")
    names = load_names(Path(args.bit), ports) if args.bit else None
    backend = (PynqBackend(Path(args.bit), ports, names) if args.backend == "pynq"
               else SimBackend(Path(args.sim_harness), ports, _sim_pl_word(args)))
    # After programming, before any beat: the PL must run the archive's commit.
    pl_commit = (check_running_commit(backend.read_usr_access(), args.expect_commit, args.expect_dirty,
                                      args.allow_dirty) if args.bit else None)

    # Transfer by transfer: only one DMA-sized chunk per port exists at a time (a 512 MB board), each
    # compared with the model as soon as it comes back.
    h = hashlib.sha256()
    board_status: dict[str, int] = {}
    model_status: dict[str, int] = {}
    beats_done = [0] * ports
    mismatches, first, bytes_read, elapsed, checked = 0, [], 0, 0.0, 0
    for words_in, words_out, status, n_checked in board_frames.draw(fn, declares, args.seed, args.size, context,
                                                        args.transfer_mb << 20):
        board_frames.fingerprint_update(h, words_in)
        got_all, seconds, read = backend.transfer([(w, context.inputs[n]) for w, n in zip(words_in, ins)],
                                                  [(int(w.shape[0]), context.outputs[n]) for w, n in zip(words_out, outs)])
        elapsed += seconds
        for p, (exp, got) in enumerate(zip(words_out, got_all)):
            bits = context.outputs[outs[p]]
            exp, got = board_frames.mask(exp, bits), board_frames.mask(got, bits)
            keep = np.ones(exp.shape[0], dtype=bool)
            for i in declares.measured_beats:  # measured by the board itself (a cycle count): not the model's
                if -exp.shape[0] <= i < exp.shape[0]:
                    keep[i] = False
            n = min(got.shape[0], exp.shape[0])
            differ = (got[:n] != exp[:n]) if got.ndim == 1 else (got[:n] != exp[:n]).any(axis=1)
            bad = np.flatnonzero(differ & keep[:n])
            mismatches += bad.size + abs(int(got.shape[0]) - int(exp.shape[0]))
            first += [{"port": p, "row": beats_done[p] + int(i), "expected": board_frames.shown(exp[i]), "got": board_frames.shown(got[i])}
                      for i in bad[: max(0, MAX_REPORTED_MISMATCHES - len(first))]]
            beats_done[p] += int(exp.shape[0])
        bytes_read += sum(int(w.shape[0]) * beat_bytes(context.inputs[n]) for w, n in zip(words_in, ins))
        checked += n_checked
        for k, v in status.items():
            model_status[k] = model_status.get(k, 0) + v
        if backend.cumulative:  # the board's counters run since the bitstream loaded: the last read is the total
            board_status = dict(read)
        else:  # each simulated transfer starts from reset
            for k, v in read.items():
                board_status[k] = board_status.get(k, 0) + v
    digest = h.hexdigest()
    if args.expect_vectors and digest != args.expect_vectors:
        raise Refused("the test vectors drawn here differ from the host's (numpy versions differ?); "
                      "push the vectors instead of the seed")
    problems = []
    for k, want in sorted(model_status.items()):
        if k not in board_status:
            problems.append(f"{k}: the PL exposes no such status output, the model says {want}")
        elif board_status[k] != want:
            problems.append(f"{k} = {board_status[k]} on the board, the model says {want}")
    return {
        "model": args.model, "backend": backend.name, "rows_checked": checked, "mismatches": int(mismatches),
        "first_mismatches": first, "problems": problems, "passed": mismatches == 0 and not problems,
        "status": {k: board_status.get(k) for k in sorted(board_status)}, "seconds": round(elapsed, 6),
        "gb_per_s": round(bytes_read / elapsed / 1e9, 4) if elapsed else None,
        "bit_commit": header.get("commit"), "pl_commit": pl_commit, "bit_part": header.get("part"),
        "vectors_sha256": digest,
        "seed": args.seed, "host": platform.node(), "numpy": np.__version__,
        "pynq_version": backend.pynq_version, "machine": platform.machine(),
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", required=True, help="the golden model, package.module:function (under project/)")
    ap.add_argument("--context", required=True, help="the design's streams and options as JSON (kabe.verify.Context)")
    ap.add_argument("--size", type=int, default=None, help="the model's size (default: its own, size None)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--bit", help="the .bit (its .hwh beside it, same basename)")
    ap.add_argument("--expect-part", default="", help="the board profile's part; the .bit's header must name it")
    ap.add_argument("--expect-commit", default="", help="the archive's commit; the .bit's USR_ACCESS must name it")
    ap.add_argument("--expect-dirty", action="store_true", help="the archive was built from a dirty tree")
    ap.add_argument("--expect-vectors", default="", help="sha256 of the input beats the host drew")
    ap.add_argument("--allow-dirty", action="store_true", help="verify a PL built from a dirty tree")
    ap.add_argument("--sim-pl-usr-access", type=lambda v: int(v, 0), default=None,
                    help="sim backend: the simulated PL's USR_ACCESS register (default: the .bit's word)")
    ap.add_argument("--backend", choices=["pynq", "sim"], default="pynq")
    ap.add_argument("--transfer-mb", type=int, default=DEFAULT_TRANSFER_MB,
                    help="largest DMA transfer per port; a model that declares board_chunks streams in chunks this big")
    ap.add_argument("--sim-harness", help="sim backend: the Verilator harness binary standing in for the PL")
    ap.add_argument("--result", required=True, help="where to write the JSON result (atomically)")
    args = ap.parse_args(argv)
    try:
        if args.backend == "pynq" and not args.bit:
            raise Refused("--bit is required on the board")
        if args.bit and not args.expect_part:
            raise Refused("--expect-part is required with --bit (the board profile's part)")
        result = run(args)
    except Refused as e:
        print(f"kabe board runner: refused: {e}", file=sys.stderr)
        return 2
    fd, tmp = tempfile.mkstemp(prefix=".result.", dir=str(Path(args.result).resolve().parent))
    with os.fdopen(fd, "w") as f:
        json.dump(result, f, indent=2)
    os.replace(tmp, args.result)
    print(json.dumps(result))
    return 0 if result["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
