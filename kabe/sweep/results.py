"""What a sweep produced: one row per variant (sweep.json), the best passing variant, a rich table,
and the Pareto plot (LUT against WNS, coloured by DSP) that the report page embeds.

Every verdict here is the client's: recomputed from the unit's numbers with this checkout's rules
(kabe.sweep.unit), never a worker's word; a unit refused by those checks is a failed row without
numbers, so it can neither be best nor sit on the Pareto front.

"Best" is a rule a reader can check: among variants whose gate passed, the shortest minimum period
(clock period minus WNS: the fastest clock the variant would reach, comparable across periods);
equal periods, the fewer LUTs, then the shorter period. The minimum period is not the critical path:
that is the worst path's data-path delay as the build reports it (timing.critical_path.delay_ns),
which leaves out the setup time and the clock terms; a row carries both, under their own names, so
a sweep and a plain build of the same variant print the same critical path. Pareto-optimal variants (no other has both fewer LUTs and
a larger WNS) are marked too, since the best trade-off is a design decision, not kabe's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.markup import escape
from rich.table import Table

SWEEP_FILE = "sweep.json"
PARETO_PNG = "pareto.png"


def row(variant, *, report: dict | None = None, worker: str | None = None, record: dict | None = None,
        verdict=None, archive: str | None = None, error: str | None = None, rejected: bool = False) -> dict[str, Any]:
    """One variant's line in sweep.json. status: passed | failed (the re-gated verdict said no, or the
    unit was rejected: `error` says why) | error (no unit: the task or the build failed).
    record and verdict: an accepted unit's record and the verdict kabe.sweep.unit recomputed for it."""
    out: dict[str, Any] = {"id": variant.id, "settings": variant.settings, "label": variant.label()}
    if record is not None and verdict is not None:
        util, timing = record.get("utilization") or {}, record.get("timing") or {}
        out.update(status="passed" if verdict.passed else "failed",
                   lut=util.get("lut"), ff=util.get("ff"), dsp=util.get("dsp"), bram36_equiv=util.get("bram36_equiv"),
                   wns_ns=timing.get("wns_ns"), period_ns=record.get("clock_period_ns"),
                   critical_path_ns=(timing.get("critical_path") or {}).get("delay_ns"),
                   estimated=bool(timing.get("estimated")), failures=list(verdict.failures), archive=archive)
    else:
        out.update(status="failed" if rejected else "error", failures=[error or "the build produced no archive"],
                   archive=None, **({"rejected": True} if rejected else {}))
    if worker is not None:
        out["worker"] = worker
    if report is not None:
        out.update(seconds=round(float(report["seconds"]), 1), rc=report["rc"])
    return out


def pareto_ids(rows: list[dict]) -> set[str]:
    pts = [r for r in rows if r.get("lut") is not None and r.get("wns_ns") is not None]
    return {r["id"] for r in pts
            if not any(o["lut"] <= r["lut"] and o["wns_ns"] >= r["wns_ns"]
                       and (o["lut"] < r["lut"] or o["wns_ns"] > r["wns_ns"]) for o in pts)}


def min_period_ns(r: dict) -> float:
    """The fastest clock period the variant would meet: its period minus its WNS."""
    return r["period_ns"] - r["wns_ns"]


def best(rows: list[dict]) -> dict | None:
    ok = [r for r in rows if r["status"] == "passed" and r.get("archive") and r.get("wns_ns") is not None
          and r.get("period_ns")]
    return min(ok, key=lambda r: (round(min_period_ns(r), 3), r.get("lut") or 0, r["period_ns"])) if ok else None


def table(rows: list[dict], best_id: str | None, front: set[str]) -> Table:
    t = Table(title="sweep results", show_lines=False)
    for col in ("variant", "settings", "status", "LUT", "FF", "DSP", "BRAM36", "WNS ns", "s", "worker"):
        t.add_column(col, overflow="fold")
    for r in rows:
        mark = (" best" if r["id"] == best_id else "") + (" pareto" if r["id"] in front else "")
        status = "[red]rejected[/]" if r.get("rejected") else \
            {"passed": "[green]pass[/]", "failed": "[red]FAIL[/]", "error": "[red]error[/]"}[r["status"]]
        wns = r.get("wns_ns")
        t.add_row(r["id"] + mark, escape(r["label"]), status,
                  *(str(r.get(k, "")) for k in ("lut", "ff", "dsp", "bram36_equiv")),
                  "-" if wns is None else f"{wns:+.3f}", str(r.get("seconds", "")), escape(str(r.get("worker", ""))))
    return t


def plot_pareto(rows: list[dict], title: str, path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pts = [r for r in rows if r.get("lut") is not None and r.get("wns_ns") is not None]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    if pts:
        sc = ax.scatter([r["lut"] for r in pts], [r["wns_ns"] for r in pts], c=[r.get("dsp") or 0 for r in pts],
                        cmap="viridis", s=60, edgecolors="black", zorder=3,
                        vmin=0, vmax=max([1] + [r.get("dsp") or 0 for r in pts]))
        fig.colorbar(sc, ax=ax, label="DSP48E1")
        bad = [r for r in pts if r["status"] != "passed"]
        ax.scatter([r["lut"] for r in bad], [r["wns_ns"] for r in bad], marker="x", s=120, color="red", zorder=4,
                   label="gate failed")
        front = sorted((r for r in pts if r["id"] in pareto_ids(pts)), key=lambda r: r["lut"])
        ax.plot([r["lut"] for r in front], [r["wns_ns"] for r in front], color="gray", lw=1, ls="--",
                label="Pareto front", zorder=2)
        for r in pts:
            ax.annotate(r["id"][:6], (r["lut"], r["wns_ns"]), fontsize=7, xytext=(4, 4), textcoords="offset points")
        ax.legend(fontsize=8)
    else:
        ax.text(0.5, 0.5, "no variant produced metrics", ha="center", va="center", transform=ax.transAxes)
    ax.axhline(0, color="red", lw=0.8)
    ax.set_xlabel("LUT")
    ax.set_ylabel("WNS (ns)")
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path
