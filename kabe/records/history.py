"""Every archived metrics.json, in git order: the data behind `doit report` and `kabe diff`.

Each record is read through kabe.records.load: validated, and its verdict recomputed from its
numbers (Entry.verdict, Entry.passed). A record that fails validation is kept aside as an
load.Invalid entry for the page and the diff to list; it never reaches a table or a plot.

What `kabe archive pull` kept apart (reports/.unverified/<commit>/<design>/<kind>/: unsigned, signed
by a key not allowed, naming a missing commit, a cache key not its own) is never an Entry of scan():
scan_unverified() reads it separately, with the reason it is not trusted, for the page and the diff
to show labelled as unverified history.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from kabe.project import designs
from kabe.base import git
from kabe.rules import gate
from kabe.base.paths import CORES, REPORTS, ROOT
from kabe.records import load as record_load
from kabe.store import store
from kabe.records.lineage import order_refs

# What a person compares between builds, in the order the tables show them.
METRICS = (("lut", "LUT"), ("ff", "FF"), ("dsp", "DSP48E1"), ("bram36_equiv", "BRAM36"), ("carry4", "CARRY4"),
           ("wns_ns", "WNS ns"))


@dataclass(frozen=True)
class Entry:
    commit: str  # archive directory name: sha or sha-dirty
    design: str
    flow: str
    record: dict  # schema-valid; its own gate.passed is NOT the verdict
    verdict: gate.Verdict  # recomputed from the numbers by kabe.records.load

    @property
    def sha(self) -> str:
        return self.commit.removesuffix("-dirty")

    @property
    def passed(self) -> bool:
        return self.verdict.passed

    def value(self, key: str):
        if key in ("wns_ns", "whs_ns", "tns_ns"):
            return self.record["timing"].get(key)
        return self.record["utilization"].get(key)


@dataclass(frozen=True)
class Unverified:
    """A unit kept apart by `kabe archive pull`: shown as unverified history, labelled, never trusted."""

    unit: str  # <commit>/<design>/<kind>
    path: Path  # reports/.unverified/<unit>
    reason: str  # why it is not trusted: the pull's own check, run again now
    entry: Entry | None  # its metrics record, validated and judged on its numbers (None: no record, or invalid)
    invalid: str | None = None  # why its record could not be read, when it has one

    @property
    def kind(self) -> str:
        return self.unit.rsplit("/", 1)[1]


@dataclass(frozen=True)
class History:
    entries: list[Entry]  # valid records, git order
    invalid: list[record_load.Invalid] = field(default_factory=list)  # records that failed validation


def git_order(root: Path = ROOT) -> list[str]:
    """Commits oldest first (topological), so plots run along history, not along file dates. The
    base branch counts too: a pulled archive holds its commits even where HEAD does not descend from them."""
    try:
        out = git.run(root, "rev-list", "--topo-order", "--reverse", *order_refs(root), text=True).stdout
    except git.GitError:
        return []
    return out.split()


def scan(reports_root: Path = REPORTS, root: Path = ROOT, cores_root: Path = CORES) -> History:
    """Every reports/<commit>/<design>/<flow>/metrics.json, validated and re-gated."""
    rules = gate.TimingRules.from_config()
    entries, invalid = [], []
    for path in sorted(Path(reports_root).glob("*/*/*/metrics.json")):
        if any(part.startswith(".") for part in path.relative_to(reports_root).parts[:-1]):
            continue  # kabe's own temp and moved-aside folders (.x.tmp-*, .x.old-*) mid-write
        result = record_load.checked(path, cores_root=cores_root, rules=rules)
        if isinstance(result, record_load.Invalid):
            invalid.append(result)
            continue
        commit, design, flow = record_load.location(path)
        entries.append(Entry(commit, design, flow, result.record, result.verdict))
    entries.sort(key=order_key(root))
    return History(entries, invalid)


def order_key(root: Path = ROOT):
    """The sort key of entries in git order. A dirty archive sorts right after its base commit;
    archives from commits not in this history go last."""
    rank = {sha: i for i, sha in enumerate(git_order(root))}
    return lambda e: (rank.get(e.sha, len(rank)), e.commit.endswith("-dirty"), e.design, e.flow)


def unverified_reason(unit_dir: Path, unit: str, root: Path = ROOT) -> str:
    """Why a kept-apart unit is not trusted, by the pull's own check (kabe.store.store: the signature
    for the project's allowed signers, the commit in this clone, the cache key), run again now: the
    pull writes no reason file, and a reason read from the folder would be the folder's word."""
    why = store.trust_problem(root, unit_dir, unit, store.allowed_signers_of(root))
    return why or "it verifies now, but was pulled before it did: run `kabe archive pull` again to take it in"


def scan_unverified(reports_root: Path = REPORTS, root: Path = ROOT, cores_root: Path = CORES) -> list[Unverified]:
    """Every unit under reports/.unverified/, with why it is not trusted; flow units (metrics.json)
    carry their record, validated and judged on its numbers like any archive, for showing only."""
    base = Path(reports_root) / store.UNVERIFIED
    if not base.is_dir():
        return []
    rules = gate.TimingRules.from_config()
    found: list[Unverified] = []
    for unit_dir in sorted(p for p in base.glob("*/*/*") if p.is_dir() and not p.is_symlink()):
        parts = unit_dir.relative_to(base).parts
        if any(part.startswith(".") for part in parts):
            continue  # the pull's own temp folders mid-write
        unit = "/".join(parts)
        reason = unverified_reason(unit_dir, unit, root)
        entry = invalid = None
        metrics_file = unit_dir / "metrics.json"
        if metrics_file.is_file():
            result = record_load.checked(metrics_file, cores_root=cores_root, rules=rules)
            if isinstance(result, record_load.Invalid):
                invalid = result.reason
            else:
                entry = Entry(*parts, result.record, result.verdict)
        found.append(Unverified(unit, unit_dir, reason, entry, invalid))
    key = order_key(root)
    with_entry = sorted((u for u in found if u.entry), key=lambda u: key(u.entry))
    return with_entry + [u for u in found if not u.entry]


def load(reports_root: Path = REPORTS, root: Path = ROOT, cores_root: Path = CORES) -> list[Entry]:
    """The valid entries only (scan() also says which records were refused)."""
    return scan(reports_root, root, cores_root).entries


def parent_of(sha: str, root: Path = ROOT) -> str | None:
    try:
        return git.out(root, "rev-parse", f"{sha}^")
    except git.GitError:
        return None


def expected_gates(designs_named, cores_root: Path) -> dict[str, str]:
    """{design: expect_gate} from each design.yaml still in cores/ ("pass" for one that is not)."""
    out = {}
    for name in designs_named:
        try:
            out[name] = designs.get(name, cores_root).expect_gate
        except designs.DesignError:
            out[name] = "pass"
    return out
