#!/usr/bin/env python3
"""kabe's board-side runner: load the bitstream, stream every frame through the PL, check every
result against the numpy model, print one JSON result.

This file is copied to the board with the `model/` package, bitfile.py and pl_names.py beside it and
imports nothing else of kabe: numpy, the model, and (for --backend pynq) pynq. `--backend sim` drives
the same code above the transfer layer with the Verilator model of the design standing in for the PL.

The cells it talks to (a DMA and a status GPIO per port, the USR_ACCESS GPIO) are named by the block
design in kabe_<design>.cells.json beside the .bit; they are checked against the .hwh before anything
is programmed. After programming, the commit word the running PL reports (USR_ACCESSE2, read over
the GPIO) must be the archive's: a PL running another bitstream is never verified in its place.

Exit status: 0 all rows match; 1 mismatches; 2 refused (commit/part mismatch, bad input, no pynq).
The result file is written to a temp name and renamed only after the run completed, so a run that
crashes or is killed leaves no result claiming anything.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bitfile  # noqa: E402  (pushed beside this file)
import pl_names  # noqa: E402  (pushed beside this file)
from model import frames  # noqa: E402  (the pushed copy of kabe.model)

EXPECTED_PART = "7z020clg400"
MAX_REPORTED_MISMATCHES = 10
# One DMA transfer per port at most this big: the AXI DMA's length register (26 bits) stops at
# 64 MiB - 1, and pynq.allocate takes contiguous CMA memory, a limited pool on a 512 MB board.
DEFAULT_TRANSFER_MB = 32


class Refused(RuntimeError):
    """The runner will not run: the message says why and how to fix it."""


# --- the bitstream's provenance: header part, and the commit word in USR_ACCESS ---

def check_provenance(bit: Path, expect_commit: str, expect_dirty: bool) -> dict[str, str]:
    data = Path(bit).read_bytes()
    try:
        header = bitfile.parse_header(data)
    except ValueError as e:
        raise Refused(f"{bit.name}: {e}; push the .bit written by the build") from None
    if EXPECTED_PART not in header["part"]:
        raise Refused(f"{bit.name} was built for part {header['part']}, this board is a PYNQ-Z1 ({EXPECTED_PART}); "
                      f"rebuild for xc7z020clg400-1")
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
    """The PYNQ-Z1: Overlay(bit + hwh beside it), one AXI DMA per HP port, all ports concurrently."""

    name = "pynq"

    def __init__(self, bit: Path, ports: int, names: "pl_names.PlNames"):
        try:
            import pynq  # noqa: F401
        except ImportError:
            raise Refused("pynq is not installed on the board; flash the PYNQ image its profile names (docs/deploy.md: PYNQ-Z1 v3.x, PYNQ 4 dropped it)") from None
        from pynq import Overlay

        self.names = names
        self.overlay = Overlay(str(bit))  # programs the PL (and its FCLK dividers, from the .hwh)
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

    def transfer(self, streams: list[np.ndarray], out_words: list[int], out_dtype) -> tuple[list[np.ndarray], float]:
        from pynq import allocate

        ins = [allocate(shape=(s.size,), dtype=np.uint8) for s in streams]
        outs = [allocate(shape=(n,), dtype=out_dtype) for n in out_words]
        for buf, s in zip(ins, streams):
            buf[:] = s
            buf.flush()
        t0 = time.monotonic()
        for dma, out in zip(self.dmas, outs):
            dma.recvchannel.transfer(out)
        for dma, buf in zip(self.dmas, ins):
            dma.sendchannel.transfer(buf)
        for dma in self.dmas:
            dma.sendchannel.wait()
            dma.recvchannel.wait()
        elapsed = time.monotonic() - t0
        results = []
        for out in outs:
            out.invalidate()
            results.append(np.array(out))
        for b in ins + outs:
            b.freebuffer()
        return results, elapsed, self.stats()

    def stats(self) -> list[dict]:
        """Each port's status outputs (the *_invalid count, the *_overflow flag) through the block
        design's AXI GPIO, on the channels the cell list names. Counts since the bitstream loaded."""
        out = []
        for gpio, g in zip(self.stat, self.names.stat):
            inv, ovf = g.channel_of("_invalid"), g.channel_of("_overflow")
            out.append({"invalid": int(getattr(gpio, f"channel{inv}").read()),
                        "overflow": int(getattr(gpio, f"channel{ovf}").read())})
        return out


class SimBackend:
    """STAND-IN for the PL: the design's Verilator model (kabe's streaming harness binary)."""

    name = "sim"

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

    def transfer(self, streams, out_words, out_dtype):
        """The harness streams each port's bytes with tvalid held high (docs/streams.md); its CLI is
        `--summary S --max-cycles N --port IN EXPECTED OUT` (kabe/sim/harness.cpp)."""
        with tempfile.TemporaryDirectory(prefix="kabe-board-") as tmp:
            tmp = Path(tmp)
            argv = [str(self.harness), "--summary", str(tmp / "summary.json"),
                    "--max-cycles", str(4 * max(s.size // 8 for s in streams) + 100_000)]
            for p, s in enumerate(streams):
                s.tofile(tmp / f"in{p}.bin")
                argv += ["--port", str(tmp / f"in{p}.bin"), str(out_words[p]), str(tmp / f"out{p}.bin")]
            t0 = time.monotonic()
            proc = subprocess.run(argv, capture_output=True, text=True)
            elapsed = time.monotonic() - t0
            if proc.returncode != 0:
                raise RuntimeError(f"the simulated PL failed (exit {proc.returncode}): {proc.stderr.strip()[-300:]}")
            words = [np.fromfile(tmp / f"out{p}.bin", dtype=np.uint64) for p in range(len(streams))]
            summary = json.loads((tmp / "summary.json").read_text())
        stats = [{"invalid": port["stat_invalid"], "overflow": port["stat_overflow"]} for port in summary["ports"]]
        return [w.astype(out_dtype) for w in words], elapsed, stats


# --- the run ---

def _sim_pl_word(args) -> int | None:
    """What the simulated PL's USR_ACCESS holds: the pushed .bit's word (programming it), unless the
    caller models a PL configured with another bitstream."""
    if args.sim_pl_usr_access is not None:
        return args.sim_pl_usr_access
    return bitfile.read_usr_access(Path(args.bit).read_bytes()) if args.bit else None


def run(args) -> dict:
    header = check_provenance(Path(args.bit), args.expect_commit, args.expect_dirty) if args.bit else {}
    ports, kind = args.ports, args.kind
    per_port = args.rows // ports
    if per_port * ports != args.rows:
        raise Refused(f"rows={args.rows} does not split over {ports} ports; use a multiple of {ports}")
    out_dtype = np.uint64 if kind == "probe" else np.int32
    names = load_names(Path(args.bit), ports) if args.bit else None
    backend = (PynqBackend(Path(args.bit), ports, names) if args.backend == "pynq"
               else SimBackend(Path(args.sim_harness), ports, _sim_pl_word(args)))
    # After programming, before any row: the PL must run the archive's commit.
    pl_commit = (check_running_commit(backend.read_usr_access(), args.expect_commit, args.expect_dirty,
                                      args.allow_dirty) if args.bit else None)

    # Chunk by chunk: only one DMA-sized frame per port exists at a time (a 512 MB board), each
    # checked against the model as soon as it comes back.
    h = hashlib.sha256()
    stats = [{"invalid": 0, "overflow": 0} for _ in range(ports)]
    model_invalid = [0] * ports
    rows_done = [0] * ports
    mismatches, first, bytes_read, elapsed = 0, [], 0, 0.0
    for chunk in frames.port_chunks(kind, args.seed, ports, per_port, args.row_bytes, args.transfer_mb << 20,
                                    args.invalid_fraction):
        frames.fingerprint_update(h, chunk)
        out, seconds, chunk_stats = backend.transfer([f.stream for f in chunk], [f.expected.size for f in chunk],
                                                     out_dtype)
        elapsed += seconds
        for p, (f, got) in enumerate(zip(chunk, out)):
            exp = f.expected.astype(out_dtype)
            if kind == "probe":  # cycle counts are the board's own measurement, not the model's
                exp, got = exp[:2], got[:2]
            n = min(got.size, exp.size)
            bad = np.flatnonzero(got[:n] != exp[:n])
            mismatches += bad.size + abs(int(got.size) - int(exp.size))
            first += [{"port": p, "row": rows_done[p] + int(i), "expected": int(exp[i]), "got": int(got[i])}
                      for i in bad[: max(0, MAX_REPORTED_MISMATCHES - len(first))]]
            rows_done[p] += f.expected.size
            model_invalid[p] += f.invalid
            bytes_read += f.stream.size
        if backend.name == "pynq":  # the board's counters run since the bitstream loaded: the last read is the total
            stats = chunk_stats
        else:  # each simulated chunk starts from reset
            stats = [{"invalid": a["invalid"] + b["invalid"], "overflow": a["overflow"] | b["overflow"]}
                     for a, b in zip(stats, chunk_stats)]
    digest = h.hexdigest()
    if args.expect_vectors and digest != args.expect_vectors:
        raise Refused("the test vectors regenerated here differ from the host's (numpy versions differ?); "
                      "push the vectors instead of the seed")
    problems = []
    for p, st in enumerate(stats):
        if st["invalid"] != model_invalid[p]:
            problems.append(f"port {p}: stat_invalid = {st['invalid']}, the model counts {model_invalid[p]} invalid weight bytes")
        if st["overflow"]:
            problems.append(f"port {p}: stat_overflow is set: the engine dropped a result (output FIFO full)")
    weights_per_byte = {"int8": 1, "ternary": 5}.get(kind, 0)
    return {
        "design_kind": kind, "backend": backend.name, "rows_checked": args.rows, "mismatches": int(mismatches),
        "first_mismatches": first, "problems": problems, "passed": mismatches == 0 and not problems,
        "stats": stats, "seconds": round(elapsed, 6),
        "gb_per_s": round(bytes_read / elapsed / 1e9, 4) if elapsed else None,
        "weights_per_s": round(bytes_read * weights_per_byte / elapsed, 1) if elapsed and weights_per_byte else None,
        "bit_commit": header.get("commit"), "pl_commit": pl_commit, "bit_part": header.get("part"),
        "vectors_sha256": digest,
        "seed": args.seed, "host": platform.node(), "numpy": np.__version__,
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kind", required=True, choices=sorted(frames.BUILDERS))
    ap.add_argument("--ports", type=int, required=True)
    ap.add_argument("--rows", type=int, required=True, help="total over all ports")
    ap.add_argument("--row-bytes", type=int, default=frames.DEFAULT_ROW_BYTES)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--invalid-fraction", type=float, default=0.0,
                    help="ternary: share of weight bytes made invalid (243..255), to check decode-as-zero and the counter")
    ap.add_argument("--bit", help="the .bit (its .hwh beside it, same basename)")
    ap.add_argument("--expect-commit", default="", help="the archive's commit; the .bit's USR_ACCESS must name it")
    ap.add_argument("--expect-dirty", action="store_true", help="the archive was built from a dirty tree")
    ap.add_argument("--expect-vectors", default="", help="sha256 of the frames the host generated")
    ap.add_argument("--allow-dirty", action="store_true", help="verify a PL built from a dirty tree")
    ap.add_argument("--sim-pl-usr-access", type=lambda v: int(v, 0), default=None,
                    help="sim backend: the simulated PL's USR_ACCESS register (default: the .bit's word)")
    ap.add_argument("--backend", choices=["pynq", "sim"], default="pynq")
    ap.add_argument("--transfer-mb", type=int, default=DEFAULT_TRANSFER_MB,
                    help="largest DMA transfer per port; longer runs go as several frames (x repeated at each head)")
    ap.add_argument("--sim-harness", help="sim backend: the Verilator harness binary standing in for the PL")
    ap.add_argument("--result", required=True, help="where to write the JSON result (atomically)")
    args = ap.parse_args(argv)
    try:
        if args.backend == "pynq" and not args.bit:
            raise Refused("--bit is required on the board")
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
