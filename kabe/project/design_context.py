"""One design's facts as a verb resolved them, once: what the layers below the verbs (the flows, the
simulation) take instead of a design's name.

A verb (doit's build and sim tasks, `kabe build`, ...) reads the design, the commit, the FuseSoC answer of
each target it needs and the XDC's clocks once, and hands this object down; nothing below looks any of them
up again (scripts/count_fact_lookups.py counts). kabe.build.BuildContext carries one, with what only a
build has (the flow, the key, the variant).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from rich.console import Console

from kabe.project import constraints, designs
from kabe.base import provenance
from kabe.base.console import make_console

if TYPE_CHECKING:
    from kabe.project.cores import Edam


@dataclass(frozen=True)
class DesignContext:
    design: designs.Design
    # None only where no verb made the context (a test): the layer that needs it reads it then
    commit: provenance.Commit | None = None
    console: Console = field(default_factory=lambda: make_console(stderr=True))
    sim: Edam | None = None  # the resolved sim target (None: not resolved, the simulation resolves it)
    synth: Edam | None = None  # the resolved synth target (None: not asked for, as by a simulation alone)
    # the XDC's clocks, in its order, parsed once; clock_error: why there is none (kabe.project.constraints.NoClockError:
    # the gate judges it), or why the XDC could not be read (the build refuses that before any tool runs)
    clocks: tuple[constraints.Clock, ...] | None = None  # None: not read (a test's context): read when asked
    clock_error: constraints.ConstraintError | None = None

    @property
    def name(self) -> str:
        return self.design.name

    def _read(self) -> tuple[tuple[constraints.Clock, ...], constraints.ConstraintError | None]:
        return (self.clocks, self.clock_error) if self.clocks is not None else read_clocks(self.design)

    def xdc_clocks(self) -> list[constraints.Clock]:
        """The XDC's clocks as kabe.project.constraints.clocks gives them for the one file; NoClockError as it would."""
        clocks, why = self._read()
        if why is not None:
            raise why
        return constraints.replace_overridden(list(clocks))

    def port_clocks(self) -> list[tuple[str, float]]:
        """(port, period) of every create_clock on a port, in the XDC's order; [] when it has none (the build
        says why)."""
        return [(t, c.period_ns) for c in self._read()[0] if c.target_kind == "ports" for t in c.targets]

    def with_targets(self, *, sim: Edam | None = None, synth: Edam | None = None) -> DesignContext:
        return replace(self, sim=sim if sim is not None else self.sim, synth=synth if synth is not None else self.synth)


def read_clocks(design: designs.Design) -> tuple[tuple[constraints.Clock, ...], constraints.ConstraintError | None]:
    """(the XDC's clocks, None) or ((), why none): NoClockError and an unreadable file are kept as the reason
    (the build refuses a malformed XDC itself, kabe.build._check_inputs); parsed once per verb."""
    try:
        return tuple(constraints.parse_xdc(design.constraints)), None
    except constraints.ConstraintError as e:
        return (), e


def make(design: designs.Design, *, console: Console, commit: provenance.Commit | None = None,
         sim: bool = True, synth: bool = False, force: bool = False) -> DesignContext:
    """Resolve `design` once for a verb: the commit (unless the caller read it), the targets asked for (the sim
    target only when the design is simulated; force: FuseSoC sets them up again, cache=off) and the XDC's clocks."""
    from kabe.project import cores

    clocks, why = read_clocks(design)
    commit = commit or provenance.current_commit()
    sim_edam = cores.resolve(design, "sim", force=force) if sim and design.verify.kind != "none" else None
    synth_edam = cores.resolve(design, "synth", force=force) if synth else None
    return DesignContext(design, commit, console, sim_edam, synth_edam, clocks, why)
