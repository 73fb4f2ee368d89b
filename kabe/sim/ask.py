"""What one simulation run asks for, beside the design's context (kabe.project.design_context): the size, the seed
and the overrides a verb or a test chose. The runner and the C-simulation take the two, never a name."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from kabe.base.paths import BUILD


@dataclass(frozen=True)
class SimAsk:
    rows: int | None = None  # the model's size (None: the full scale its model declares, else its own choice)
    seed: int = 1
    row_bytes: int | None = None  # None: design.yaml's
    params: Mapping[str, Any] = field(default_factory=dict)  # core parameter overrides (a broken variant)
    flags: tuple[str, ...] = ()  # FuseSoC use flags
    invalid_fraction: float | None = None
    extra_defines: Mapping[str, Any] | None = None  # Verilog defines on top of the sim target's (SYNTHESIS)
    build_root: Path = BUILD
    keep_files: bool = False  # keep the run's streams and outputs (a test reads them)
    sources: tuple[Path, ...] | None = None  # C-simulation: the kernel's C++ instead of the synth target's
    testbench: bool = True  # C-simulation: run the user's C++ testbench too
