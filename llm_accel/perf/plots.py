"""Figures for the wall and the token budget (matplotlib, Agg backend: files only, no display).

plot_wall:          Figure 1 of the lab report. Bytes read per stage stay at the wall; weights per
                    second rise 1.91 -> 9.16 G/s. Bars: the document's measurement; outlines: the
                    model's bound (llm_accel.perf.wall).
plot_token_budget:  Figure 6. Share of one token's time (matmul in the PL, attention, misc) at
                    contexts 128 / 512 / 2048, with attention on the CPU (measured) and in the PL
                    (projected) (llm_accel.perf.token_budget).
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from . import token_budget as tb  # noqa: E402
from . import wall as wl  # noqa: E402
from kabe.boards import Board  # noqa: E402
from kabe.page.report_plot import legend_entries  # noqa: E402

_MEASURED = "#4c72b0"
_BOUND = "#222222"
_COLORS = {"matmul": "#55a868", "attention_cpu": "#dd8452", "attention_pl": "#8172b3", "misc": "#b0b0b0"}


def plot_wall(path: str | Path, rows: list[wl.WallRow] | None = None, board: Board = wl.PYNQ_Z1) -> Path:
    """Write the Figure-1-style PNG to `path` and return it."""
    rows = wl.figure1(board=board) if rows is None else rows
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(10, 6.4), gridspec_kw={"height_ratios": [1, 1]})

    # Top: bytes read per second.
    labels = [r.stage for r in rows]
    y = list(range(len(rows)))[::-1]
    for yi, r in zip(y, rows):
        if r.measured_gbps is not None:
            ax1.barh(yi, r.measured_gbps, color=_MEASURED, height=0.55,
                     label="measured (document)" if yi == y[0] else None)
            ax1.text(r.measured_gbps - 0.03, yi, f"{r.measured_gbps:.2f}", va="center", ha="right",
                     color="white", fontsize=9, fontweight="bold")
        ax1.barh(yi, r.bound_gbps, fill=False, edgecolor=_BOUND, linestyle="--", height=0.55,
                 label="model bound min(lane, wall)" if yi == y[0] else None)
        ax1.text(r.bound_gbps + 0.03, yi, f"bound {r.bound_gbps:.2f} ({r.limiter})", va="center", fontsize=8)
    wall = wl.wall_of(board)
    ax1.axvline(wall, color="crimson", lw=1.5)
    ax1.text(wall, len(rows) - 0.45, f"wall {wall:.2f} (measured)", color="crimson",
             ha="right", fontsize=8)
    theoretical = wl.THEORETICAL.get(board.key)
    if theoretical is not None:
        ax1.axvline(float(theoretical), color="gray", lw=1, ls=":")
        ax1.text(float(theoretical), len(rows) - 0.45, f" DDR {float(theoretical):.2f}",
                 color="gray", fontsize=8)
    ax1.set_yticks(y, labels)
    ax1.set_xlim(0, 3.0)
    ax1.set_ylim(-0.6, len(rows) - 0.1)
    ax1.set_xlabel("bytes read from DDR, GB/s")
    ax1.set_title("The wall does not move: bytes read per stage", fontsize=11)
    ax1.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)

    # Bottom: weights per second (stages that carry weights).
    wrows = [r for r in rows if r.weights_per_byte > 0]
    y2 = list(range(len(wrows)))[::-1]
    for yi, r in zip(y2, wrows):
        if r.measured_weights_gps is not None:
            ax2.barh(yi, r.measured_weights_gps, color=_MEASURED, height=0.55,
                     label="measured (document)" if yi == y2[0] else None)
            ax2.text(r.measured_weights_gps - 0.1, yi, f"{r.measured_weights_gps:.2f}", va="center", ha="right",
                     color="white", fontsize=9, fontweight="bold")
        ax2.barh(yi, r.bound_weights_gps, fill=False, edgecolor=_BOUND, linestyle="--", height=0.55,
                 label="model bound x weights/byte" if yi == y2[0] else None)
        ax2.text(r.bound_weights_gps + 0.1, yi, f"bound {r.bound_weights_gps:.2f} ({r.weights_per_byte:g} w/B)",
                 va="center", fontsize=8)
    meas = [r.measured_weights_gps for r in wrows if r.measured_weights_gps]
    if len(meas) >= 2:
        ax2.set_title(f"What changed: weights carried per byte ({meas[-1] / meas[0]:.1f}x measured)", fontsize=11)
    else:
        ax2.set_title("What changed: weights carried per byte", fontsize=11)
    ax2.set_yticks(y2, [r.stage for r in wrows])
    ax2.set_xlim(0, max(r.bound_weights_gps for r in wrows) * 1.35)
    ax2.set_ylim(-0.6, len(wrows) - 0.4)
    ax2.set_xlabel("weights delivered, G weights/s")
    ax2.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)

    fig.suptitle(f"{board.name}: read bandwidth and weight rate per stage", fontsize=12)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def plot_token_budget(path: str | Path, rows: list[tb.Budget] | None = None) -> Path:
    """Write the Figure-6-style PNG (100% stacked time per token) to `path` and return it."""
    rows = tb.budgets() if rows is None else rows
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    groups = [("cpu", "attention on the CPU (fitted to the document's measurements)"), ("pl", "attention in the PL (projected)")]
    fig, axes = plt.subplots(len(groups), 1, figsize=(8.5, 5.6), sharex=True)
    for ax, (where, title) in zip(axes, groups):
        sub = [b for b in rows if b.attention_on == where]
        ys = list(range(len(sub)))[::-1]
        for yi, b in zip(ys, sub):
            left = 0.0
            parts = [("matmul", b.matmul_ms, _COLORS["matmul"], "matmul (PL)"),
                     ("attention", b.attention_ms, _COLORS["attention_" + where],
                      f"attention ({where.upper()})"),
                     ("misc", b.misc_ms, _COLORS["misc"], "misc (CPU)")]
            for key, ms, color, label in parts:
                share = ms / b.total_ms
                ax.barh(yi, share, left=left, color=color, height=0.6, label=label if yi == ys[0] else None)
                if share > 0.07:
                    ax.text(left + share / 2, yi, f"{share:.0%}\n{ms:.1f} ms", ha="center", va="center", fontsize=7)
                left += share
            ax.text(1.01, yi, f"{b.tok_s:.1f} tok/s\n{b.total_ms:.1f} ms", va="center", fontsize=8)
        ax.set_yticks(ys, [f"context {b.context}\nPL share {b.pl_share:.0%}" for b in sub])
        ax.set_xlim(0, 1)
        ax.set_title(title, fontsize=10, loc="left")
    handles, labels = legend_entries(axes)
    axes[-1].set_xlabel("share of one token's time")
    fig.suptitle("SmolLM2-135M, ternary matmul at 9.16 G weights/s: time per token", fontsize=11)
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.05, 0.9, 1))
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
