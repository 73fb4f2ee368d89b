"""STAND-IN for PYNQ 4's `pynq` package on a Kria KV260, for kabe's tests only. THIS IS NOT PYNQ.

The loopback board (tests/deploy/) runs kabe's board runner with this package first on its path, so the
runner's PynqBackend drives the API PYNQ 4 has on a Zynq UltraScale+ board:

    pynq.__version__                       "4.0.0" (KABE_STANDIN_PYNQ_VERSION to claim another)
    Overlay(bitfile)                       the .hwh beside it parsed with pynqmetadata (what PYNQ 4's
                                           Overlay uses), the PL "programmed" with the .bit; attributes
                                           named after the block design's cells: an axi_dma gets a DMA
                                           (sendchannel / recvchannel .transfer(buf), .wait()), an
                                           axi_gpio an AxiGPIO (channel1 / channel2 .read())
    allocate(shape, dtype)                 a numpy array with flush(), invalidate(), freebuffer(),
                                           physical_address (a contiguous buffer, here plain memory)

The PL behind it is the design's Verilator model (kabe's streaming harness, KABE_STANDIN_PL_HARNESS):
a DMA's pending MM2S/S2MM transfers of every port run through it together on the first wait(), as the
PL streams all ports at once; each stream's width is the DMA's own (its .hwh parameters), the port a
DMA feeds is the block design's (kabe_<design>.cells.json beside the .bit, as the wiring on the chip
is). The status GPIOs read the harness's counters, summed since the "programming" (as a counter in
the PL counts); the USR_ACCESS GPIO reads the commit word inside the programmed .bit.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from pathlib import Path

import numpy as np

__version__ = os.environ.get("KABE_STANDIN_PYNQ_VERSION", "4.0.0")
STANDIN = "STAND-IN pynq (kabe tests; not PYNQ)"


class PynqBuffer(np.ndarray):
    """allocate()'s buffer: a numpy array a DMA can move (PYNQ's is CMA memory)."""

    physical_address = 0

    def flush(self) -> None:
        pass

    def invalidate(self) -> None:
        pass

    def freebuffer(self) -> None:
        pass


def allocate(shape, dtype=np.uint32, **_kw) -> PynqBuffer:
    return np.zeros(shape, dtype=dtype).view(PynqBuffer)


def _usr_access(bit: bytes) -> int | None:
    """The USR_ACCESS word the .bit writes (the AXSS register write after the sync word)."""
    start = bit.find(bytes.fromhex("aa995566"))
    at = bit.find(bytes.fromhex("3001a001"), max(start, 0))
    return int.from_bytes(bit[at + 4:at + 8], "big") if start >= 0 and at >= 0 else None


class _PL:
    """The programmed PL: the Verilator harness, the ports the DMAs feed, the counters since programming."""

    def __init__(self, bit: Path, dma_ports: dict[str, int], widths: dict[str, tuple[int, int]]):
        self.harness = os.environ.get("KABE_STANDIN_PL_HARNESS", "")
        if not Path(self.harness).is_file():
            raise RuntimeError(f"{STANDIN}: KABE_STANDIN_PL_HARNESS={self.harness!r} is not the design's harness")
        self.usr_access = _usr_access(Path(bit).read_bytes())
        self.dma_ports = dma_ports  # dma cell -> port
        self.widths = widths  # dma cell -> (mm2s stream bits, s2mm stream bits)
        self.sends: dict[str, np.ndarray] = {}
        self.recvs: dict[str, np.ndarray] = {}
        self.counters: dict[str, int] = {}

    def run(self) -> None:
        """Every pending transfer through the harness at once (all ports stream together)."""
        if not self.sends:
            return
        cells = sorted(self.sends, key=lambda c: self.dma_ports[c])
        with tempfile.TemporaryDirectory(prefix="kabe-pynq4-") as tmp:
            tmp = Path(tmp)
            longest = 0
            argv = [self.harness, "--summary", str(tmp / "summary.json")]
            if self.usr_access is not None:
                argv += ["--usr-access", str(self.usr_access)]
            ports = []
            for cell in cells:
                p = self.dma_ports[cell]
                s_bits, m_bits = self.widths[cell]
                data = np.asarray(self.sends[cell], dtype=np.uint8)
                nb, wpb = (s_bits + 7) // 8, (s_bits + 63) // 64
                beats = data.size // nb
                padded = np.zeros((beats, 8 * wpb), dtype=np.uint8)
                padded[:, :nb] = data[:beats * nb].reshape(beats, nb)
                padded.tofile(tmp / f"in{p}.bin")
                out_beats = self.recvs[cell].size // ((m_bits + 7) // 8)
                argv += ["--port", str(tmp / f"in{p}.bin"), str(out_beats), str(tmp / f"out{p}.bin")]
                ports.append((cell, p, m_bits))
                longest = max(longest, beats)
            argv[3:3] = ["--max-cycles", str(4 * longest + 100_000)]
            proc = subprocess.run(argv, capture_output=True, text=True)
            if proc.returncode != 0:
                raise RuntimeError(f"{STANDIN}: the PL (harness) failed: {proc.stderr.strip()[-300:]}")
            for cell, p, m_bits in ports:
                nb, wpb = (m_bits + 7) // 8, (m_bits + 63) // 64
                raw = np.fromfile(tmp / f"out{p}.bin", dtype=np.uint8).reshape(-1, 8 * wpb)[:, :nb].reshape(-1)
                buf = self.recvs[cell]
                n = min(raw.size, buf.size)
                buf.view(np.uint8).reshape(-1)[:n] = raw[:n]
            summary = json.loads((tmp / "summary.json").read_text())
        for k, v in (summary.get("status") or {}).items():  # counters count since the bitstream loaded
            self.counters[k] = self.counters.get(k, 0) + int(v)
        self.sends.clear()
        self.recvs.clear()


class _Channel:
    def __init__(self, pl: _PL, cell: str, send: bool):
        self.pl, self.cell, self.send = pl, cell, send

    def transfer(self, buf) -> None:
        (self.pl.sends if self.send else self.pl.recvs)[self.cell] = buf

    def wait(self) -> None:
        self.pl.run()


class DMA:
    def __init__(self, pl: _PL, cell: str):
        self.sendchannel = _Channel(pl, cell, True)
        self.recvchannel = _Channel(pl, cell, False)


class _GpioChannel:
    def __init__(self, read):
        self._read = read

    def read(self) -> int:
        return self._read()


class AxiGPIO:
    def __init__(self, pl: _PL, signals: dict[int, str]):
        for ch in (1, 2):
            sig = signals.get(ch)
            setattr(self, f"channel{ch}", _GpioChannel(
                (lambda: pl.usr_access or 0) if sig == "usr_access" else (lambda s=sig: pl.counters.get(s, 0))))


class Overlay:
    """pynq.Overlay(bitfile): the .hwh beside it names the IP; their drivers are attributes by cell name."""

    def __init__(self, bitfile: str, download: bool = True, **_kw):
        from pynqmetadata.frontends import Metadata
        from pynqmetadata.views.runtime import RuntimeMetadataParser

        bit = Path(bitfile)
        hwh = bit.with_suffix(".hwh")
        if not hwh.is_file():
            raise RuntimeError(f"{STANDIN}: no {hwh.name} beside {bit.name}")
        self.ip_dict = RuntimeMetadataParser(Metadata(input=str(hwh))).ip_dict
        # the chip's wiring: which port each DMA feeds, which status signal each GPIO channel reads
        cells = json.loads(bit.with_name(bit.stem + ".cells.json").read_text())["cells"]
        dma_ports = {c["cell"]: int(c["port"]) for c in cells if c["role"] == "dma"}
        widths = {}
        for cell in dma_ports:
            params = {k.lower(): v for k, v in self.ip_dict[cell]["parameters"].items()}
            widths[cell] = (int(params["c_m_axis_mm2s_tdata_width"]), int(params["c_s_axis_s2mm_tdata_width"]))
        self._pl = _PL(bit, dma_ports, widths)
        self._drivers = {}
        for c in cells:
            if c["role"] == "dma":
                self._drivers[c["cell"]] = DMA(self._pl, c["cell"])
            else:
                self._drivers[c["cell"]] = AxiGPIO(self._pl, {int(k): v for k, v in c["channels"].items()})

    def __getattr__(self, name: str):
        drivers = self.__dict__.get("_drivers", {})
        if name in drivers:
            return drivers[name]
        raise AttributeError(f"Could not find IP or hierarchy {name} in overlay")
