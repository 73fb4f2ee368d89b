"""The cells the board runner looks up in the pynq.Overlay, as the block design named them.

pynq.Overlay names its attributes after the block design's cells (`overlay.dma0`). kabe/flows/vivado/tcl/kabe_bd.tcl
spells those names once, creates the cells under them, and writes the same names to
`kabe_<design>.cells.json` beside the .bit and .hwh (archived with them, sha256 in the manifest).
The runner reads that file, never a cell name of its own, and checks each name against the .hwh
before it programs anything: a renamed cell is one clear refusal, not an AttributeError on the
board.

Standard library only: copied to the board beside board_runner.py (like bitfile.py).
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass
from pathlib import Path

# role -> the IP the cell must be (its VLNV without the version), as pynq binds a driver by it
IP_OF_ROLE = {"dma": "xilinx.com:ip:axi_dma", "stat": "xilinx.com:ip:axi_gpio", "usr_access": "xilinx.com:ip:axi_gpio"}


def cells_file(bit: Path) -> Path:
    """kabe_<design>.cells.json beside kabe_<design>.bit."""
    return Path(bit).with_name(Path(bit).stem + ".cells.json")


@dataclass(frozen=True)
class Gpio:
    cell: str
    channels: dict[str, int]  # signal name (e.g. stat0_invalid) -> GPIO channel (1 or 2)

    def channel_of(self, suffix: str) -> int:
        """The channel carrying the signal whose name ends with suffix (_invalid, _overflow)."""
        found = [ch for sig, ch in self.channels.items() if sig.endswith(suffix)]
        if len(found) != 1:
            raise ValueError(f"GPIO {self.cell} has no single channel for *{suffix} (channels: {self.channels})")
        return found[0]


@dataclass(frozen=True)
class PlNames:
    dma: tuple[str, ...]  # per port
    stat: tuple[Gpio, ...]  # the ports' status GPIOs (ports whose design has status outputs)
    usr_access: Gpio

    def roles(self) -> list[tuple[str, str]]:
        """(cell, role) of every cell the runner will ask the overlay for, in the order it asks."""
        return ([(name, "dma") for name in self.dma] + [(g.cell, "stat") for g in self.stat]
                + [(self.usr_access.cell, "usr_access")])


def load(path: Path, ports: int) -> PlNames:
    """Read and check the block design's names. Raises ValueError with what is wrong and the fix."""
    path = Path(path)
    try:
        data = json.loads(path.read_text())
        cells = data["cells"]
        if not isinstance(cells, list):
            raise TypeError("cells is not a list")
        by_role: dict[str, dict] = {}
        for c in cells:
            name, role, port = c["cell"], c["role"], c["port"]
            if not isinstance(name, str) or not name.isidentifier() or role not in IP_OF_ROLE:
                raise ValueError(f"entry {c!r} is not a cell name with a known role")
            channels = {str(sig): int(ch) for ch, sig in (c.get("channels") or {}).items()}
            by_role.setdefault(role, {})[port] = Gpio(name, channels) if role != "dma" else name
    except FileNotFoundError:
        raise ValueError(f"{path.name} is missing beside the bitstream; it is written by the vivado flow "
                         f"(kabe/flows/vivado/tcl/kabe_bd.tcl) with the .bit and .hwh: rebuild with flow=vivado") from None
    except (OSError, ValueError, TypeError, KeyError, AttributeError) as e:
        raise ValueError(f"{path.name} is not the block design's cell list ({e}); rebuild with flow=vivado") from None
    dmas, stats, ua = by_role.get("dma", {}), by_role.get("stat", {}), by_role.get("usr_access", {})
    # a status GPIO only where the design has status outputs (a design without any has none); a status
    # the model expects and no GPIO reads fails the run on the board
    missing = ([f"dma for port {p}" for p in range(ports) if p not in dmas]
               + ([] if None in ua else ["the USR_ACCESS GPIO"]))
    if missing:
        raise ValueError(f"{path.name} names no {', no '.join(missing)}; the block design (kabe/flows/vivado/tcl/kabe_bd.tcl) and this "
                         f"runner disagree: rebuild with flow=vivado")
    names = PlNames(tuple(dmas[p] for p in range(ports)), tuple(stats[p] for p in range(ports) if p in stats), ua[None])
    cells_named = [cell for cell, _ in names.roles()]
    twice = sorted({c for c in cells_named if cells_named.count(c) > 1})
    if twice:
        raise ValueError(f"{path.name} names {', '.join(twice)} for more than one role; rebuild with flow=vivado")
    return names


def check_hwh(hwh: Path, names: PlNames) -> list[str]:
    """Each cell must be in the .hwh as the IP its role needs, and mapped on the PS7's GP0 (pynq
    gives an attribute only to addressable IP). Returns the problems (empty: all there)."""
    try:
        root = ElementTree.parse(str(hwh)).getroot()
    except (OSError, ElementTree.ParseError) as e:
        return [f"{Path(hwh).name} cannot be read as a hardware handoff ({e})"]
    vlnv = {m.get("INSTANCE"): m.get("VLNV") or "" for m in root.iter("MODULE")}
    mapped = {r.get("INSTANCE") for r in root.iter("MEMRANGE") if r.get("MEMTYPE") == "REGISTER"}
    problems = []
    for cell, role in names.roles():
        want = IP_OF_ROLE[role]
        if cell not in vlnv:
            problems.append(f"cell {cell} ({role}) is not in {Path(hwh).name}")
        elif not vlnv[cell].startswith(want + ":"):
            problems.append(f"cell {cell} ({role}) is {vlnv[cell]} in {Path(hwh).name}, expected {want}")
        elif cell not in mapped:
            problems.append(f"cell {cell} ({role}) has no address in {Path(hwh).name}")
    return problems
