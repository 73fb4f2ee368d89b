"""A cache hit (kabe.records.cache): no tool runs. The earlier build's results are re-gated with
today's budgets and archived under this commit, naming the build that ran the tools (`reused_from`)."""

from __future__ import annotations

import datetime as dt
import time
from pathlib import Path

from kabe import designs, provenance
from kabe.build_verdict import build_verdict
from kabe.paths import ROOT
from kabe.records import cache, metrics
from kabe.records.archive import archive_dir, to_json, write_atomic


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


def reuse(entry: cache.Entry, design: designs.Design, flow_name: str, commit: provenance.Commit,
          key: cache.CacheKey, reports_root: Path, started: str, t0: float) -> dict:
    """Archive the hit `entry` under `commit`, re-gated; returns the new metrics record."""
    old = entry.record
    utilization = None if old["utilization"].get("missing") else old["utilization"]
    verdict = build_verdict(design, flow_name, old["timing"], utilization, old.get("sim"))
    recorded = {Path(k) if Path(k).is_absolute() else ROOT / k: v for k, v in old["inputs"].items()}
    inputs = {**old["inputs"], **provenance.input_hashes(p for p in recorded if p.is_file())}
    origin, origin_dirty = cache.built_by(old)  # a reuse of a reuse names the build that ran the tools
    reused_from = {"commit": origin, "dirty": origin_dirty, "key": key.key}
    record = {k: v for k, v in old.items() if not k.startswith("_")}
    record.update({"commit": commit.sha, "dirty": commit.dirty, "gate": verdict.as_dict(), "inputs": inputs,
                   "started": started, "finished": _now(), "seconds": round(time.monotonic() - t0, 3),
                   "tool_seconds": 0.0, "cache_key": key.key, "reused_from": reused_from})
    metrics.validate(record)
    manifest = {**entry.manifest, "commit": commit.sha, "dirty": commit.dirty, "inputs": inputs,
                "reused_from": reused_from}
    files: dict[str, str | Path] = {"metrics.json": to_json(record), "manifest.json": to_json(manifest),
                                    cache.KEY_FILE: to_json(key.material)}
    files.update(cache.reused_files(entry))
    dest = write_atomic(archive_dir(commit, design.name, flow_name, reports_root), files, root=reports_root)
    cache.remember(reports_root, dest, key.key)
    record["_archive"] = str(dest)
    return record
