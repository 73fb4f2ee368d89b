#!/usr/bin/env python3
"""Calibrate the open flow's pre-route timing estimate on real routed Vivado paths (issue 14).

    python scripts/calibrate_timing.py                  fit on the corpus, print the validation
                                                        (leave one design out); writes nothing
    python scripts/calibrate_timing.py --write          ... and regenerate kabe/timing/fitted_constants.py
                                                        and docs/timing_model_fit.png
    python scripts/calibrate_timing.py --evaluate DIR   score the committed model on any folder of
                                                        Vivado timing reports (same table)
    python scripts/calibrate_timing.py --evaluate DIR --hand-model
                                                        ... the hand-set model it replaced, for comparison

The corpus defaults to ../shared/fixtures/vivado-routed-paths beside the repository (one `.rpt`
per routed run; SOURCES.md, when present, names each file's repository, which is what a "design"
is: the three LiteX builds are one design). When it is absent the script says so and exits 0.
"""

from __future__ import annotations

import argparse
import hashlib
import pprint
import re
import sys
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from kabe.parsers import ReportError  # noqa: E402
from kabe.parsers import report_file  # noqa: E402
from kabe.parsers.vivado_timing_paths import path_blocks  # noqa: E402
from kabe.timing import validation as V  # noqa: E402
from kabe.timing.calibration_data import MODEL_SCOPE, dedupe, sample, scope_of  # noqa: E402
from kabe.timing.fit import fit  # noqa: E402

DEFAULT_CORPUS = REPO.parent / "shared" / "fixtures" / "vivado-routed-paths"
CONSTANTS = REPO / "kabe" / "timing" / "fitted_constants.py"
PLOT = REPO / "docs" / "timing_model_fit.png"
COMMAND = "python scripts/calibrate_timing.py --write"


def designs_from_sources(folder: Path) -> dict[str, str]:
    """file name -> repository, from SOURCES.md's table rows: | `file.rpt` | [owner/name](...) |"""
    src = folder / "SOURCES.md"
    if not src.is_file():
        return {}
    return {m.group(1).split("/")[-1]: m.group(2)
            for m in re.finditer(r"^\|\s*`([^`]+\.rpt)`\s*\|\s*\[([^\]]+)\]", src.read_text(), re.M)}


def read_corpus(folder: Path) -> tuple[list, Counter, dict[str, str], dict[str, str]]:
    """(samples of every scope, reasons paths were left out, {file: sha256}, {file: why unreadable})."""
    repos = designs_from_sources(folder)
    samples, left_out, digests, bad = [], Counter(), {}, {}
    for f in sorted(folder.glob("*.rpt")):
        try:
            rep = report_file.read(f)
        except ReportError as e:
            bad[f.name] = str(e)
            continue
        blocks = path_blocks(rep.lines, source=f.name)
        digests[f.name] = hashlib.sha256(f.read_bytes()).hexdigest()[:16]
        scope = scope_of(rep.header.get("device"), rep.header.get("speed_file"))
        design = repos.get(f.name) or f.stem.split("_")[0]
        for b in blocks:
            if b.path is None:  # one unreadable path does not make the report's others wrong
                left_out["unreadable path"] += 1
                continue
            s = sample(b.path, design=design, file=f.name, scope=scope)
            if isinstance(s, str):
                left_out[s] += 1
            else:
                samples.append(s)
    return dedupe(samples), left_out, digests, bad


def _print_intake(samples, left_out, bad) -> None:
    scopes = Counter(s.scope for s in samples)
    print(f"paths used: {len(samples)} ({', '.join(f'{n} {k}' for k, n in scopes.most_common())})")
    for why, n in left_out.most_common():
        print(f"  left out: {n:5d}  {why}")
    for name, why in bad.items():
        print(f"  unreadable, skipped: {name}: {why}")


def _rows(label: str, outcomes) -> list[tuple[str, dict]]:
    return [(label, V.metrics(outcomes))] + [(f"  {d}", m) for d, m in V.by_design(outcomes)]


def evaluate_folder(folder: Path, hand_model: bool = False) -> int:
    from kabe.timing.fitted import load
    from kabe.timing.routing import RoutingModel
    samples, left_out, _, bad = read_corpus(folder)
    if not samples:
        if left_out or bad:  # paths were there, each left out for a reason: say which
            _print_intake(samples, left_out, bad)
            print(f"{folder}: every path was left out (reasons above): none is one the model can time",
                  file=sys.stderr)
        else:
            print(f"{folder}: no timing path in any .rpt file (need routed Vivado report_timing"
                  f" or report_timing_summary text with path details)", file=sys.stderr)
        return 2
    model = RoutingModel() if hand_model else load()
    _print_intake(samples, left_out, bad)
    print("model: the hand-set RoutingModel (before issue 14), for comparison" if hand_model else
          f"model: kabe/timing/fitted_constants.py, fitted on {model.provenance.get('summary')}")
    rows = []
    for scope in sorted({s.scope for s in samples}, key=lambda x: x != MODEL_SCOPE):
        outcomes, unmodelled = V.evaluate(model, [s for s in samples if s.scope == scope])
        label = f"{scope} (the model's scope)" if scope == MODEL_SCOPE else f"{scope} (out of scope, for information)"
        rows += _rows(label, outcomes) if scope == MODEL_SCOPE else [(label, V.metrics(outcomes))]
        if unmodelled:
            print(f"  left out: {unmodelled:5d}  arc the model cannot time ({scope})")
    print()
    print(V.table(rows))
    return 0


def _generated_module(model, outcomes, corpus: Path, digests: dict, n_samples: int, n_designs: int) -> str:
    m = V.metrics(outcomes)
    data = {
        "provenance": {
            "command": COMMAND,
            "corpus": _corpus_name(corpus),
            "files": digests,
            "scope": f"{MODEL_SCOPE}: setup (slow corner), register-to-register data paths, routed",
            "summary": f"{n_samples} paths of {n_designs} designs ({MODEL_SCOPE})",
            "validation": {"method": "leave one design out; band from the training designs only (nested)",
                           **m},
        },
        "band": {"lo": model.band.lo, "hi": model.band.hi, "quantiles": list(model.band.quantiles),
                 "meaning": "routed route delay / estimated route delay (after timing pressure), p10 and "
                            "p90 over the paths of held-out designs, each design weighing the same; the "
                            "band is logic + route x [lo, hi]"},
        "clock": {"value": round(model.clock_ps_value, 1),
                  "meaning": "median of Vivado's clock path skew - clock uncertainty, ps"},
        "pressure": model.pressure.to_json() if model.pressure is not None else None,
        "cells": model.cells, "nets": model.nets, "setup": model.setup,
    }
    body = pprint.pformat(data, width=100, sort_dicts=True)
    return ('"""GENERATED by `' + COMMAND + '`; do not edit by hand.\n\n'
            "The open flow's fitted delay model (kabe.timing.fitted reads it). Every constant carries the\n"
            "rows and designs it rests on; `provenance` names the corpus files (sha256) and the validation.\n"
            '"""\n\nMODEL = ' + body + "\n")


def _corpus_name(corpus: Path) -> str:
    """The shared corpus by its name relative to the checkout (where it was read from differs per
    machine and worktree; what it is does not)."""
    c = corpus.resolve()
    if c.parent.name == "fixtures" and c.parent.parent.name == "shared":
        return f"../shared/fixtures/{c.name}"
    return str(corpus)


def plot(outcomes, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 6.0))
    for k, d in enumerate(sorted({o.sample.design for o in outcomes})):
        pts = [(o.delay_ns, o.sample.delay_ns) for o in outcomes if o.sample.design == d]
        ax.scatter([p[0] for p in pts], [p[1] for p in pts], s=16, alpha=0.75, marker="os^Dv<>P"[k % 8],
                   color=plt.get_cmap("tab20")(k % 20), label=d.split("/")[-1][:28])
    top = max(max(o.delay_ns, o.sample.delay_ns) for o in outcomes) * 1.05
    ax.plot([0, top], [0, top], "k-", lw=0.8, label="estimate = Vivado")
    ax.set_xlim(0, top)
    ax.set_ylim(0, top)
    ax.set_xlabel("kabe estimate, model fitted without this design (ns)")
    ax.set_ylabel("Vivado routed data path delay (ns)")
    ax.set_title("Held-out paths (leave one design out), -1 Artix-class", fontsize=10)
    ax.legend(fontsize=6, loc="upper left")
    fig.text(0.01, 0.005, f"generated by {COMMAND}", fontsize=6, color="gray")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help="folder of routed Vivado reports to fit on")
    ap.add_argument("--write", action="store_true", help="regenerate the constants module and the plot")
    ap.add_argument("--evaluate", type=Path, metavar="DIR", help="score the committed model on DIR's reports")
    ap.add_argument("--hand-model", action="store_true", help="with --evaluate: score the old hand-set model instead")
    a = ap.parse_args(argv)
    if a.evaluate is not None:
        if not a.evaluate.is_dir():
            print(f"--evaluate {a.evaluate}: not a folder; give a folder of Vivado .rpt files", file=sys.stderr)
            return 2
        return evaluate_folder(a.evaluate, a.hand_model)
    if not a.corpus.is_dir():
        print(f"calibration corpus not found at {a.corpus}: nothing to fit (the committed model stays)")
        return 0
    try:
        text, outcomes, model = generate(a.corpus)
    except ValueError as e:
        print(str(e), file=sys.stderr)
        return 2
    print()
    print(V.table(_rows(f"held-out, {MODEL_SCOPE} (leave one design out)", outcomes)))
    print(f"\nband (route factor, p10..p90 over held-out paths): {model.band.lo:.3f} .. {model.band.hi:.3f}")
    if model.pressure is not None:
        print(f"timing pressure: routing x max({model.pressure.floor:g}, x^-{model.pressure.k:g}) on paths over "
              f"their budget ({model.pressure.paths} such paths in {model.pressure.designs} designs)")
    if a.write:
        CONSTANTS.write_text(text)
        plot(outcomes, PLOT)
        print(f"wrote {CONSTANTS.relative_to(REPO)} and {PLOT.relative_to(REPO)}")
    return 0


def generate(corpus: Path, *, quiet: bool = False):
    """Fit on a corpus: (the constants module's text, held-out outcomes, the model)."""
    samples, left_out, digests, bad = read_corpus(corpus)
    if not quiet:
        _print_intake(samples, left_out, bad)
    own = [s for s in samples if s.scope == MODEL_SCOPE]
    designs = sorted({s.design for s in own})
    if len(designs) < 3:
        raise ValueError(f"{corpus}: {len(designs)} designs in scope ({MODEL_SCOPE}); need 3 or more "
                         f"to fit and validate by design")
    outcomes = V.leave_one_design_out(own)
    model = fit(own, band=V.band_from(V.leave_one_design_out(own, nested_band=False)))
    if model.band is None:
        raise ValueError(f"{corpus}: {len(outcomes)} held-out paths with routing; need 10 or more for a band")
    return _generated_module(model, outcomes, corpus, digests, len(own), len(designs)), outcomes, model


if __name__ == "__main__":
    sys.exit(main())
