"""One board profile (a YAML file) read into a Board, every field checked: a profile is a project's
file, so a mistake in it is one line naming the file, the key and the fix (docs/boards.md).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from kabe.boards import versions as versions_mod
from kabe.base.errors import UserError, bounded
from kabe.base.paths import PACKAGE

PROFILE_DIR = PACKAGE / "boards" / "profiles"  # kabe's own boards (package data)
KABE_TCL_DIR = PACKAGE / "flows" / "vivado" / "tcl"  # kabe's own block-design Tcl (package data)

# Yosys synth_xilinx -family values kabe's open flow can map to (xc7: 7-series incl. Zynq-7000;
# xcup: UltraScale+, the nearest fabric Yosys has to Versal's, so a proxy there).
SYNTH_FAMILIES = ("xc7", "xcu", "xcup")
# How the open flow times a board: "estimated" by kabe's xc7 pre-route model (fitted on routed 7-series
# paths), or "not_estimated": no routed data for that fabric, so no timing number and no timing PASS.
OPEN_TIMING = ("estimated", "not_estimated")
OUTPUTS = ("bit", "hwh", "xsa", "pdi")  # what the vivado flow writes and kabe archives and hashes
PROGRAMMERS = ("pynq", "ami_tool")  # how deploy loads the image (kabe.deploy)
FIGURE_KINDS = ("theoretical", "measured", "claimed", "vendor")


class BoardError(UserError):
    """A board profile is missing, unknown or invalid (one line, exit 2)."""


@dataclass(frozen=True)
class Figure:
    """One number with its provenance. kind: theoretical | measured | claimed | vendor."""

    value: float
    unit: str
    kind: str
    source: str
    quote: str = ""  # the source's own words, where the exact wording matters
    label: str = ""  # a short name the perf models select the figure by (e.g. "post", "amd")

    def __float__(self) -> float:
        return float(self.value)


@dataclass(frozen=True)
class MemoryPorts:
    """The memory lanes a design streams through: `count` of them, `beat_bytes` wide at the design's
    side, each at most `clock_mhz` (None: the design's own clock)."""

    name: str  # what the board calls one ("HP port", "HBM NMU")
    count: int
    beat_bytes: int
    clock_mhz: float | None = None


@dataclass(frozen=True)
class BaseDesign:
    """A vendor base design release: its name, the release folder, the Vivado it needs, where that is said."""

    name: str  # "AVED"
    release: str  # "amd_v80_gen5x8_25.1": the checkout's hw/<release> folder
    vivado: str  # "2025.1"
    source: str


@dataclass(frozen=True)
class PynqNeed:
    """Which PYNQ a board's image must run: a PEP 440 specifier, the image to flash, the source."""

    versions: str  # ">=3,<4"
    image: str  # "PYNQ v3.1 (the last image with PYNQ-Z1 support)"
    source: str
    machine: str = ""  # the board Python's platform.machine() the image runs ("aarch64" for PYNQ 4); "" any


@dataclass(frozen=True)
class Board:
    key: str  # the profile's file name: what design.yaml's `board:` says
    name: str  # for people, as the board is sold
    part: str
    family: str  # Vivado's device family name, as a flow branches on it: "zynq-7000", "versal", ...
    synth_family: str  # Yosys synth_xilinx -family for the open flow (SYNTH_FAMILIES)
    open_timing: str  # OPEN_TIMING
    constraints: str  # the board's default constraints file (design.yaml's `constraints:` wins)
    block_design: str  # the board's block-design Tcl (kabe's package Tcl or the project's boards/ folder)
    outputs: tuple[str, ...]  # the vivado flow's images, archived and hashed
    program: str  # PROGRAMMERS
    memory: str  # e.g. "DDR3, 16-bit"
    memory_ports: MemoryPorts
    profile_file: Path = field(compare=False)
    memory_capacity_bytes: int | None = None
    # Bandwidth figures in GB/s (1e9 B/s). `wall` is what a streaming design can actually get
    # (measured), `theoretical` what the memory interface could deliver; either may be unknown.
    theoretical: Figure | None = None
    wall: Figure | None = None
    other_bandwidths: tuple[Figure, ...] = ()
    default_clock_period_ns: float | None = None  # documents' builds only; a build's own clock wins
    dsp: int | None = None
    lut: int | None = None
    notes: tuple[str, ...] = ()
    # the AXI DMA per memory port kabe's block design places: its length register's bits and burst (beats)
    dma_length_width: int | None = None
    dma_burst: int | None = None
    dma_addr_width: int = 32  # the DMA's address bits: 32 on the Zynq-7000, 64 where DDR lies above 4 GiB
    # Vivado's board files for the board (a SOM's board part and its carrier connection): the vivado flow
    # sets them on the project, so the processing system takes the board's preset from them ("" none)
    board_part: str = ""
    board_connections: str = ""
    # an XDC of the board's own pins the block design drives (the KV260's fan enable): read into the project
    board_constraints: str = ""
    # The vendor base design the vivado flow stands on (the V80: AVED), and the Vivado version that
    # release was made with and needs ("2025.1" for amd_v80_gen5x8_25.1): a build with another fails first
    base_design: "BaseDesign | None" = None
    # The PYNQ the board's own image must run (kabe's deploy uses the board's PYNQ): e.g. PYNQ-Z1 ">=3,<4"
    # (PYNQ 4.0 dropped the Z1/Z2), KV260 ">=4". A PEP 440 specifier; `kabe doctor --deploy` checks it
    pynq: "PynqNeed | None" = None

    @property
    def is_versal(self) -> bool:
        return self.family == "versal"

    @property
    def timing_estimated(self) -> bool:
        return self.open_timing == "estimated"

    # the names the perf models have always used for the memory lane
    @property
    def port_beat_bytes(self) -> int:
        return self.memory_ports.beat_bytes

    @property
    def ports_max(self) -> int:
        return self.memory_ports.count

    @property
    def wall_gbps(self) -> float:
        if self.wall is None:
            raise ValueError(f"board {self.name!r} has no measured wall; pass a bandwidth explicitly")
        return float(self.wall)

    @property
    def wall_fraction_of_theoretical(self) -> float | None:
        if self.wall is None or self.theoretical is None:
            return None
        return float(self.wall) / float(self.theoretical)

    def block_design_tcl(self) -> Path:
        """The board's block-design Tcl: beside its profile (a project's board), else kabe's own."""
        return self._vivado_file("block_design", self.block_design)

    def board_constraints_xdc(self) -> Path | None:
        """The board's pin XDC (vivado.board_constraints): beside its profile, else kabe's own; None when none."""
        return self._vivado_file("board_constraints", self.board_constraints) if self.board_constraints else None

    def _vivado_file(self, key: str, name: str) -> Path:
        beside = self.profile_file.parent / name
        if beside.is_file():
            return beside
        own = KABE_TCL_DIR / name
        if own.is_file():
            return own
        raise BoardError(f"{self.profile_file}: vivado.{key}: {name!r} is neither beside the profile "
                         f"({beside}) nor one of kabe's ({own}); write the file or correct `{key}:`")


def profile_files(folder: Path) -> dict[str, Path]:
    """key -> file for every <key>.yaml in folder (none when the folder is absent)."""
    folder = Path(folder)
    return {p.stem: p for p in sorted(folder.glob("*.yaml"))} if folder.is_dir() else {}


_FIELDS = {"name", "part", "family", "open_flow", "vivado", "constraints", "deploy", "memory", "fabric",
           "bandwidth", "default_clock_period_ns", "notes", "dma", "base_design"}


def _fail(path: Path, what: str) -> BoardError:
    return BoardError(f"{path}: {what} (board profiles: docs/boards.md)")


def _table(path: Path, data: dict, key: str, required: bool = True) -> dict:
    v = data.get(key)
    if v is None and not required:
        return {}
    if not isinstance(v, dict):
        raise _fail(path, f"`{key}:` must be a mapping, got {bounded(v)}")
    return v


def _text(path: Path, where: str, v: object, allowed: tuple[str, ...] | None = None) -> str:
    if not isinstance(v, str) or not v.strip() or len(v) > 200:
        raise _fail(path, f"`{where}` must be a non-empty string, got {bounded(v)}")
    if allowed is not None and v not in allowed:
        raise _fail(path, f"`{where}`: {bounded(v)} is not one of {', '.join(allowed)}")
    return v


def _number(path: Path, where: str, v: object, integer: bool = False, optional: bool = False):
    if v is None and optional:
        return None
    ok = not isinstance(v, bool) and (isinstance(v, int) if integer else isinstance(v, (int, float)))
    if not ok or v <= 0:
        raise _fail(path, f"`{where}` must be a positive {'integer' if integer else 'number'}, got {bounded(v)}")
    return v


def _figure(path: Path, where: str, v: object, label: str = "") -> Figure | None:
    if v is None:
        return None
    if not isinstance(v, dict):
        raise _fail(path, f"`{where}` must be a mapping value/unit/kind/source[/quote], got {bounded(v)}")
    return Figure(float(_number(path, f"{where}.value", v.get("value"))), _text(path, f"{where}.unit", v.get("unit", "GB/s")),
                  _text(path, f"{where}.kind", v.get("kind"), FIGURE_KINDS), _text(path, f"{where}.source", v.get("source")),
                  str(v.get("quote", "")), str(v.get("label", label)))


@functools.lru_cache(maxsize=64)
def _load(path: Path, _mtime_ns: int) -> Board:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as e:
        raise _fail(path, f"cannot read the profile ({e.__class__.__name__})") from None
    except yaml.YAMLError as e:
        raise _fail(path, f"not valid YAML ({str(e).splitlines()[0][:120]})") from None
    if not isinstance(data, dict):
        raise _fail(path, "must be a YAML mapping")
    unknown = sorted(str(k)[:40] for k in data if k not in _FIELDS)
    if unknown:
        raise _fail(path, f"unknown key(s) {', '.join(unknown[:5])}; known keys: {', '.join(sorted(_FIELDS))}")
    open_flow, vivado, deploy = _table(path, data, "open_flow"), _table(path, data, "vivado"), _table(path, data, "deploy")
    memory, fabric = _table(path, data, "memory"), _table(path, data, "fabric", required=False)
    ports = memory.get("ports")
    if not isinstance(ports, dict):
        raise _fail(path, f"`memory.ports` must be a mapping name/count/beat_bytes[/clock_mhz], got {bounded(ports)}")
    outputs = vivado.get("outputs")
    if not isinstance(outputs, list) or not outputs:
        raise _fail(path, f"`vivado.outputs` must be a list of {', '.join(OUTPUTS)}, got {bounded(outputs)}")
    bandwidth = _table(path, data, "bandwidth", required=False)
    others = bandwidth.get("other", []) or []
    if not isinstance(others, list):
        raise _fail(path, f"`bandwidth.other` must be a list of figures, got {bounded(others)}")
    dma = _table(path, data, "dma", required=False)
    base = _table(path, data, "base_design", required=False)
    base_design = None
    if base:
        # a string: YAML reads an unquoted 2025.10 as the number 2025.1
        vivado_need = base.get("vivado") if isinstance(base.get("vivado"), str) else ""
        if not re.fullmatch(r"\d{4}\.\d(\.\d+)?", vivado_need):
            raise _fail(path, f"`base_design.vivado` must be a Vivado version like \"2025.1\" (quoted), got "
                              f"{bounded(base.get('vivado'))}")
        base_design = BaseDesign(_text(path, "base_design.name", base.get("name")),
                                 _text(path, "base_design.release", base.get("release")), vivado_need,
                                 _text(path, "base_design.source", base.get("source")))
    pynq = None
    if deploy.get("pynq") is not None:
        need = deploy["pynq"]
        if not isinstance(need, dict):
            raise _fail(path, f"`deploy.pynq` must be a mapping versions/image/source, got {bounded(need)}")
        versions = _text(path, "deploy.pynq.versions", need.get("versions"))
        try:
            versions_mod.check_spec(versions)
        except ValueError:
            raise _fail(path, f"`deploy.pynq.versions`: {bounded(versions)} is not a version specifier like \">=3,<4\"") from None
        unknown_need = sorted(str(k)[:40] for k in need if k not in ("versions", "image", "source", "machine"))
        if unknown_need:
            raise _fail(path, f"`deploy.pynq` has unknown key(s) {', '.join(unknown_need)}; known: versions, image, source, machine")
        machine = need.get("machine")
        pynq = PynqNeed(versions, _text(path, "deploy.pynq.image", need.get("image")),
                        _text(path, "deploy.pynq.source", need.get("source")),
                        _text(path, "deploy.pynq.machine", machine) if machine is not None else "")
    notes = data.get("notes", []) or []
    if not isinstance(notes, list) or not all(isinstance(n, str) for n in notes):
        raise _fail(path, "`notes` must be a list of strings")
    return Board(
        key=path.stem, name=_text(path, "name", data.get("name")), part=_text(path, "part", data.get("part")),
        family=_text(path, "family", data.get("family")),
        synth_family=_text(path, "open_flow.synth_family", open_flow.get("synth_family"), SYNTH_FAMILIES),
        open_timing=_text(path, "open_flow.timing", open_flow.get("timing"), OPEN_TIMING),
        constraints=_text(path, "constraints", data.get("constraints")),
        block_design=_text(path, "vivado.block_design", vivado.get("block_design")),
        outputs=tuple(_text(path, "vivado.outputs[]", o, OUTPUTS) for o in outputs),
        program=_text(path, "deploy.program", deploy.get("program"), PROGRAMMERS),
        memory=_text(path, "memory.kind", memory.get("kind")),
        memory_ports=MemoryPorts(
            _text(path, "memory.ports.name", ports.get("name")),
            _number(path, "memory.ports.count", ports.get("count"), integer=True),
            _number(path, "memory.ports.beat_bytes", ports.get("beat_bytes"), integer=True),
            _number(path, "memory.ports.clock_mhz", ports.get("clock_mhz"), optional=True)),
        profile_file=path,
        memory_capacity_bytes=_number(path, "memory.capacity_bytes", memory.get("capacity_bytes"), integer=True,
                                      optional=True),
        theoretical=_figure(path, "bandwidth.theoretical", bandwidth.get("theoretical")),
        wall=_figure(path, "bandwidth.wall", bandwidth.get("wall")),
        other_bandwidths=tuple(_figure(path, f"bandwidth.other[{i}]", f) for i, f in enumerate(others)),
        default_clock_period_ns=_number(path, "default_clock_period_ns", data.get("default_clock_period_ns"),
                                        optional=True),
        dsp=_number(path, "fabric.dsp", fabric.get("dsp"), integer=True, optional=True),
        lut=_number(path, "fabric.lut", fabric.get("lut"), integer=True, optional=True),
        notes=tuple(notes),
        dma_length_width=_number(path, "dma.length_width", dma.get("length_width"), integer=True, optional=True),
        dma_burst=_number(path, "dma.burst", dma.get("burst"), integer=True, optional=True),
        dma_addr_width=_addr_width(path, dma.get("addr_width", 32)),
        board_part=_text(path, "vivado.board_part", vivado["board_part"]) if vivado.get("board_part") is not None else "",
        board_connections=(_text(path, "vivado.board_connections", vivado["board_connections"])
                           if vivado.get("board_connections") is not None else ""),
        board_constraints=(_text(path, "vivado.board_constraints", vivado["board_constraints"])
                           if vivado.get("board_constraints") is not None else ""),
        base_design=base_design,
        pynq=pynq,
    )


def _addr_width(path: Path, v: object) -> int:
    """The AXI DMA's c_addr_width: 32 to 64 bits (PG021)."""
    if isinstance(v, bool) or not isinstance(v, int) or not 32 <= v <= 64:
        raise _fail(path, f"`dma.addr_width` must be an integer from 32 to 64 (the AXI DMA's address bits), got {bounded(v)}")
    return v


def load_profile(path: Path) -> Board:
    """The Board of one profile file (read once per file version: a profile is looked up per build)."""
    path = Path(path).resolve()
    try:
        mtime = path.stat().st_mtime_ns
    except OSError:
        raise _fail(path, "no such board profile") from None
    return _load(path, mtime)
