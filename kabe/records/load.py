"""An archived metrics.json read as untrusted input: validated, then re-gated, before anything shows it.

Archives come from this machine, from a shared remote, from another checkout or from a hand edit, so
nothing in one is taken on its word. checked() reads a record strictly (size cap, no NaN/Infinity,
the schema), checks that it belongs where it lies (the commit, design and flow of its folder), and
recomputes its verdict with kabe.rules.verdict.judge (the one entry point every consumer calls) from its
numbers, THIS checkout's facts of that design (budgets, waivers) and this checkout's timing rules.
The record's `passed` field is never read as the verdict. What the numbers cannot re-derive is
carried over from the record as a failure (kabe.rules.verdict): re-gating can turn a pass into a fail,
never a fail into a pass.

The answer is a Checked record with its verdict, or an Invalid entry with one bounded reason. The
report page and `kabe diff` list an Invalid entry and go on; deploy and `kabe gate` refuse it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from kabe.project import designs
from kabe.rules import gate, verdict
from kabe.base.errors import bounded
from kabe.base.paths import CORES
from kabe.records import metrics
from kabe.project import flows as flow_registry

# Whether each flow's timing is a pre-route estimate (kabe.flows registry's ESTIMATED; the records
# layer may not import the flows, so tests/test_records_load.py keeps the two equal). A record whose
# claim differs is not one kabe wrote: an "estimated" vivado record would skip the hold checks.
ESTIMATED_BY_FLOW = {name: f.estimated for name, f in flow_registry.FLOWS.items()}
ARCHIVE_NAME = re.compile(r"([0-9a-f]{40}|nogit)(-dirty)?")


@dataclass(frozen=True)
class Checked:
    """A record that passed validation, with the verdict recomputed from its numbers."""

    path: Path
    record: dict
    verdict: gate.Verdict

    @property
    def passed(self) -> bool:
        return self.verdict.passed


@dataclass(frozen=True)
class Invalid:
    """An archived record kabe cannot trust, and why (one line, bounded)."""

    path: Path
    reason: str


class RecordRefused(metrics.MetricsError):
    """The record is well formed but does not belong where it lies, or cannot be re-gated here."""


def location(path: Path) -> tuple[str, str, str]:
    """(archive name, design, flow) of reports/<archive name>/<design>/<flow>/metrics.json."""
    flow_dir = Path(path).parent
    return flow_dir.parent.parent.name, flow_dir.parent.name, flow_dir.name


def _check_location(record: dict, where: tuple[str, str, str]) -> None:
    archive, design, flow = where
    if not ARCHIVE_NAME.fullmatch(archive):
        raise RecordRefused(f"its folder {bounded(archive)} is not a commit (40 hex digits, optionally -dirty)")
    designs.check_name(design, "its design folder")
    if flow not in ESTIMATED_BY_FLOW:
        raise RecordRefused(f"its folder {bounded(flow)} is not a flow ({', '.join(ESTIMATED_BY_FLOW)})")
    sha, dirty = archive.removesuffix("-dirty"), archive.endswith("-dirty")
    claims = {"commit": (record["commit"], sha), "dirty": (record["dirty"], dirty),
              "design": (record["design"], design), "flow": (record["flow"], flow)}
    for key, (said, folder) in claims.items():
        if said != folder:
            raise RecordRefused(f"it says {key} {bounded(said)} but lies in the folder of {bounded(folder)}")


def design_for(record: dict, cores_root: Path = CORES) -> designs.Design:
    """This checkout's design of the record's name: its budgets are the ones the record is held to.
    DesignError (exit 2 for `kabe gate`) when the name is not a design name or not in this checkout."""
    name = designs.check_name(record["design"], "its design")
    if not (Path(cores_root) / name / "design.yaml").is_file():
        raise designs.DesignError(f"design {name} is not in this checkout (no {Path(cores_root).name}/{name}/design.yaml), "
                            f"so its budgets are unknown and its verdict cannot be recomputed")
    return designs.get(name, cores_root)


def check_flow_claims(record: dict) -> None:
    """Refuse a record whose timing claims an estimate its flow never makes (or sign-off it cannot)."""
    if record["timing"]["estimated"] is not ESTIMATED_BY_FLOW[record["flow"]]:
        raise RecordRefused(f"its timing says estimated: {str(record['timing']['estimated']).lower()}, which the "
                            f"{record['flow']} flow never writes")


def gate_record(record: dict, *, cores_root: Path = CORES, rules: gate.TimingRules | None = None,
                design: designs.Design | None = None) -> gate.Verdict:
    """The verdict on a schema-valid record wherever it lies (`kabe gate metrics.json`, a sweep
    worker's result): its flow claims checked, this checkout's design of its name, kabe.rules.verdict.judge.
    design: that design when the caller has loaded it already (kabe ci), used only when its name is the
    record's. Raises RecordRefused / DesignError (exit 2) for a record it cannot judge."""
    check_flow_claims(record)
    # under this checkout's facts of its design (budgets, waivers) and rules
    own = design if design is not None and design.name == record.get("design") else design_for(record, cores_root)
    return verdict.judge(record, verdict.DesignFacts.of(own, record["flow"]), rules or gate.TimingRules.from_config())


def gate_file(path: Path, *, cores_root: Path = CORES, rules: gate.TimingRules | None = None) -> tuple[dict, gate.Verdict]:
    """(record, verdict) of a metrics.json read strictly (kabe.records.metrics.load) and gated by
    gate_record: what `kabe gate metrics.json` does. Raises MetricsError / DesignError (exit 2)."""
    record = metrics.load(Path(path))
    return record, gate_record(record, cores_root=cores_root, rules=rules)


def checked(path: Path, *, cores_root: Path = CORES, rules: gate.TimingRules | None = None,
            where: tuple[str, str, str] | None = None, design: designs.Design | None = None) -> Checked | Invalid:
    """Read, validate and re-gate one metrics.json. where: the (archive, design, flow) the record must
    belong to; default: the folders it lies in. Never raises for a bad record: returns Invalid."""
    path = Path(path)
    rules = rules or gate.TimingRules.from_config()
    try:
        record = metrics.load(path)
        _check_location(record, where or location(path))
        judged = gate_record(record, cores_root=cores_root, rules=rules, design=design)
    except (metrics.MetricsError, designs.DesignError) as e:
        return Invalid(path, _reason(str(e), path))
    except (TypeError, ValueError, KeyError, AttributeError, ArithmeticError) as e:
        # The schema should make this unreachable; if a record still trips the gate, it is listed as
        # invalid (the page and the diff go on) rather than crashing them.
        return Invalid(path, _reason(f"its numbers could not be gated ({type(e).__name__}: {e})", path))
    return Checked(path, record, judged)


def _reason(message: str, path: Path) -> str:
    message = message.removeprefix(f"{path}: ")
    message = " ".join(message.split())
    return message if len(message) <= 300 else message[:297] + "..."
