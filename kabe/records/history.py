"""Every archived metrics.json, in git order: the data behind `doit report` and `kabe diff`."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path

from kabe.paths import REPORTS, ROOT
from kabe.records.lineage import order_refs

# What a person compares between builds, in the order the tables show them.
METRICS = (("lut", "LUT"), ("ff", "FF"), ("dsp", "DSP48E1"), ("bram36_equiv", "BRAM36"), ("carry4", "CARRY4"),
           ("wns_ns", "WNS ns"))


@dataclass(frozen=True)
class Entry:
    commit: str  # archive directory name: sha or sha-dirty
    design: str
    flow: str
    record: dict

    @property
    def sha(self) -> str:
        return self.commit.removesuffix("-dirty")

    def value(self, key: str):
        if key in ("wns_ns", "whs_ns", "tns_ns"):
            return self.record["timing"].get(key)
        return self.record["utilization"].get(key)


def git_order(root: Path = ROOT) -> list[str]:
    """Commits oldest first (topological), so plots run along history, not along file dates. The
    base branch counts too: a pulled archive holds its commits even where HEAD does not descend from them."""
    try:
        out = subprocess.run(["git", "rev-list", "--topo-order", "--reverse", *order_refs(root)], cwd=root,
                             capture_output=True, text=True, check=True).stdout
    except (subprocess.CalledProcessError, FileNotFoundError):
        return []
    return out.split()


def load(reports_root: Path = REPORTS, root: Path = ROOT) -> list[Entry]:
    entries = []
    for path in sorted(Path(reports_root).glob("*/*/*/metrics.json")):
        flow_dir = path.parent
        try:
            record = json.loads(path.read_text())
        except json.JSONDecodeError:
            continue  # a damaged file is reported by `kabe gate`, not plotted
        entries.append(Entry(flow_dir.parent.parent.name, flow_dir.parent.name, flow_dir.name, record))
    rank = {sha: i for i, sha in enumerate(git_order(root))}
    # A dirty archive sorts right after its base commit; archives from commits not in this history go last.
    return sorted(entries, key=lambda e: (rank.get(e.sha, len(rank)), e.commit.endswith("-dirty"), e.design, e.flow))


def parent_of(sha: str, root: Path = ROOT) -> str | None:
    try:
        return subprocess.run(["git", "rev-parse", f"{sha}^"], cwd=root, capture_output=True, text=True,
                              check=True).stdout.strip()
    except subprocess.CalledProcessError:
        return None
