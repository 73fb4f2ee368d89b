#!/usr/bin/env python3
"""Calibrate the open flow's pre-route timing estimate on real routed Vivado paths (issue 14).

    python scripts/calibrate_timing.py                  fit on the corpora, print the validation
                                                        (leave one design out); writes nothing
    python scripts/calibrate_timing.py --corpus DIR     ... with DIR's reports too (repeatable)
    python scripts/calibrate_timing.py --write          ... and regenerate kabe/timing/fitted_constants.py
                                                        and docs/timing_model_fit.png
    python scripts/calibrate_timing.py --evaluate DIR   score the committed model on any folder of
                                                        Vivado timing reports (same table)
    python scripts/calibrate_timing.py --evaluate DIR --hand-model
                                                        ... the hand-set model it replaced, for comparison

The corpora default to ../shared/fixtures/vivado-routed-paths beside the repository and, when
present, ../shared/routed-more (more public -1 7-series designs, gathered for issue 25 by
`python scripts/gather_routed_corpus.py`, which names each one's source); --corpus
adds folders. Each holds one `.rpt` per routed run; SOURCES.md, when present, names each file's
repository, which is what a "design" is (the three LiteX builds are one design; a repository in two
corpora is still one design, and a file found twice is read once). When the shared corpus is absent
the script says so and exits 0. The band's nominal coverage is `[tool.kabe] timing_band_coverage`
(default 0.8).
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
MORE_CORPUS = REPO.parent / "shared" / "routed-more"  # a default too, when present (issue 25)
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


def read_corpus(folder: Path, skip: set[str] = frozenset()) -> tuple[list, Counter, dict[str, str], dict[str, str]]:
    """(samples of every scope, reasons paths were left out, {file: sha256}, {file: why unreadable});
    a file whose digest is in `skip` is not read again."""
    repos = designs_from_sources(folder)
    samples, left_out, digests, bad = [], Counter(), {}, {}
    for f in sorted(folder.glob("*.rpt")):
        try:
            rep = report_file.read(f)
        except ReportError as e:
            bad[f.name] = str(e)
            continue
        digest = hashlib.sha256(f.read_bytes()).hexdigest()[:16]
        if digest in skip:
            left_out["file already read from another corpus"] += 1
            continue
        blocks = path_blocks(rep.lines, source=f.name)
        digests[f.name] = digest
        scope = scope_of(rep.header.get("device"), rep.header.get("speed_file"))
        design = repos.get(f.name) or f.stem.split("_")[0]
        for b in blocks:
            if b.path is None:  # one unreadable path does not make the report's others wrong
                left_out["unreadable path"] += 1
                continue
            s = sample(b.path, design=design, file=f.name, scope=scope, device=rep.header.get("device") or "")
            if isinstance(s, str):
                left_out[s] += 1
            else:
                samples.append(s)
    return dedupe(samples), left_out, digests, bad


def read_corpora(folders: list[Path]) -> tuple[list, Counter, dict[str, str], dict[str, str]]:
    """read_corpus over several folders: a design (repository) in two of them is one design, and a
    file whose bytes were already read (the same report copied into two corpora) is read once.
    Digests are keyed `corpus/file`."""
    samples, left_out, digests, bad, seen = [], Counter(), {}, {}, set()
    for folder in folders:
        s, lo, dg, bd = read_corpus(folder, skip=seen)
        name = _corpus_name(folder)
        samples += s
        left_out.update(lo)
        digests.update({f"{name}/{f}": h for f, h in dg.items()})
        bad.update({f"{name}/{f}": w for f, w in bd.items()})
        seen |= set(dg.values())
    return samples, left_out, digests, bad


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
    own, _ = V.evaluate(model, [s for s in samples if s.scope == MODEL_SCOPE])
    if own:
        print(f"\nwhere the error comes from ({MODEL_SCOPE} paths by class):\n")
        print(V.table(V.by_class(own)))
    return 0


def _generated_module(model, outcomes, corpora: list[Path], digests: dict, n_samples: int, n_designs: int,
                      n_all: int, n_all_designs: int) -> str:
    m = V.metrics(outcomes)
    band = model.band.to_json()
    band["meaning"] = ("a path's routed delay lies in logic + route x [lo, hi] (estimated logic and route, "
                       "after timing pressure) for `coverage` of the paths of a new design: design-level split "
                       "conformal on held-out route factors, each design one unit (kabe.timing.conformal); "
                       "`classes` are calibrated apart, `outside` is for a path outside `data`")
    data = {
        "provenance": {
            "command": COMMAND,
            "corpora": [_corpus_name(c) for c in corpora],
            "files": digests,
            "scope": f"{MODEL_SCOPE}: setup (slow corner), register-to-register data paths, routed",
            "summary": f"{n_samples} paths of {n_designs} designs ({MODEL_SCOPE})",
            "band_summary": f"band calibrated on {n_all} held-out paths of {n_all_designs} designs ({MODEL_SCOPE})",
            "validation": {"method": "leave one design out; the band calibrated on the training designs only",
                           **m},
        },
        "band": band,
        "clock": {"value": round(model.clock_ps_value, 1),
                  "meaning": "median of Vivado's clock path skew - clock uncertainty, ps"},
        "pressure": model.pressure.to_json() if model.pressure is not None else None,
        "clock_law": model.clock_law.to_json() if model.clock_law is not None else None,
        "high_fanout": model.high_fanout.to_json() if model.high_fanout is not None else None,
        "cells": model.cells, "nets": model.nets, "setup": model.setup,
    }
    return module_text(data)


def module_text(data: dict) -> str:
    """The constants module for `data`: a header saying how it was made, then MODEL."""
    corpora = data["provenance"]["corpora"]
    more = any(c.endswith("/routed-more") for c in corpora)
    v = data["provenance"]["validation"]
    body = pprint.pformat(data, width=100, sort_dicts=True)
    return ('"""GENERATED by `' + COMMAND + '`; do not edit by hand.\n\n'
            "The open flow's fitted delay model (kabe.timing.fitted reads it). Every constant carries the\n"
            "rows and designs it rests on; `provenance` names the corpus files (sha256) and the validation.\n"
            "Made from these corpora (beside the checkout):\n"
            + "".join(f"    {c}\n" for c in corpora)
            + ("where routed-more is gathered by `python scripts/gather_routed_corpus.py` (each file checked\n"
               "against its sha256 in scripts/routed_more_sources.tsv).\n" if more else "")
            + "`band` is kabe.timing.conformal's calibration on every design's held-out scores. Leaving one\n"
            f"design out, it held {v.get('band_contains_pct')} % of paths ({v.get('band_design_mean_pct')} % design "
            f"mean) at a median width of\n{v.get('band_median_width_ns')} ns over these {v.get('designs')} designs "
            f"(`provenance.validation`); on the shared corpus alone\n"
            "`python scripts/band_lodo.py` measures the same (tests/timing/test_band_claim.py, in CI).\n"
            '"""\n\nMODEL = ' + body + "\n")


def _corpus_name(corpus: Path) -> str:
    """The shared corpus by its name relative to the checkout (where it was read from differs per
    machine and worktree; what it is does not)."""
    c = corpus.resolve()
    parts = c.parts
    if "shared" in parts:  # ../shared/... beside the checkout, wherever that is
        return "../" + "/".join(parts[len(parts) - 1 - parts[::-1].index("shared"):])
    return str(corpus)


def plot(outcomes, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 6.0))
    count = Counter(o.sample.design for o in outcomes)
    named = sorted(d for d, _ in count.most_common(12))  # the legend names the 12 largest designs
    rest = [o for o in outcomes if o.sample.design not in named]
    if rest:
        ax.scatter([o.delay_ns for o in rest], [o.sample.delay_ns for o in rest], s=10, alpha=0.5, color="0.6",
                   label=f"{len(count) - len(named)} other designs")
    for k, d in enumerate(named):
        pts = [(o.delay_ns, o.sample.delay_ns) for o in outcomes if o.sample.design == d]
        ax.scatter([p[0] for p in pts], [p[1] for p in pts], s=16, alpha=0.75, marker="os^Dv<>P"[k % 8],
                   color=plt.get_cmap("tab20")(k % 20), label=d.split("/")[-1][:28])
    vals = [v for o in outcomes for v in (o.delay_ns, o.sample.delay_ns) if v > 0]
    bottom, top = min(vals) * 0.9, max(vals) * 1.1
    ax.plot([bottom, top], [bottom, top], "k-", lw=0.8, label="estimate = Vivado")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(bottom, top)
    ax.set_ylim(bottom, top)
    ax.set_xlabel("kabe estimate, model fitted without this design (ns)")
    ax.set_ylabel("Vivado routed data path delay (ns)")
    ax.set_title("Held-out paths (leave one design out), -1 Artix-class", fontsize=10)
    ax.legend(fontsize=6, loc="upper left")
    fig.text(0.01, 0.005, f"generated by {COMMAND}", fontsize=6, color="gray")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def coverage_setting() -> float:
    from kabe.project import config
    return float(config.value(config.load(), "timing_band_coverage"))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", type=Path, action="append", default=[],
                    help="another folder of routed Vivado reports to fit on (repeatable; added to the defaults)")
    ap.add_argument("--only", action="store_true", help="fit on the --corpus folders alone, not the defaults")
    ap.add_argument("--write", action="store_true", help="regenerate the constants module and the plot")
    ap.add_argument("--evaluate", type=Path, metavar="DIR", help="score the committed model on DIR's reports")
    ap.add_argument("--hand-model", action="store_true", help="with --evaluate: score the old hand-set model instead")
    a = ap.parse_args(argv)
    if a.evaluate is not None:
        if not a.evaluate.is_dir():
            print(f"--evaluate {a.evaluate}: not a folder; give a folder of Vivado .rpt files", file=sys.stderr)
            return 2
        return evaluate_folder(a.evaluate, a.hand_model)
    corpora = default_corpora() if not a.only else []
    for c in a.corpus:
        if not c.is_dir():
            print(f"calibration corpus not found at {c}: nothing to fit (the committed model stays)")
            return 0
        corpora.append(c)
    if not corpora:
        print(f"calibration corpus not found at {DEFAULT_CORPUS}: nothing to fit (the committed model stays)")
        return 0
    if not a.only and MORE_CORPUS not in corpora:
        # the committed model and its validation rest on both corpora: without the second the table
        # below is another (smaller) validation, and --write would replace the model with a weaker one
        print(f"note: {MORE_CORPUS} is absent, so this fits and validates on {len(corpora)} corpus "
              f"folder(s) only, not on what the committed model rests on; "
              f"`python scripts/gather_routed_corpus.py --clone` gathers it")
    try:
        text, outcomes, model = generate(corpora)
    except ValueError as e:
        print(str(e), file=sys.stderr)
        return 2
    print()
    first = _files_of(corpora[0])
    split = [(f"  designs of {_corpus_name(corpora[0])} (the point model's data)",
              [o for o in outcomes if o.sample.file in first])]
    if len(corpora) > 1:
        split.append(("  designs of the other corpora (never in the point fit)",
                      [o for o in outcomes if o.sample.file not in first]))
    print(V.table(_rows(f"held-out, {MODEL_SCOPE} (leave one design out)", outcomes)[:1]
                  + [(label, V.metrics(o)) for label, o in split if o]
                  + _rows("", outcomes)[1:]))
    print("\nwhere the error comes from (the same held-out paths by class):\n")
    print(V.table(V.by_class(outcomes)))
    b = model.band
    print(f"\nband: {b.coverage:.0%} of a new design's paths (design-level conformal over {b.data.get('designs')} "
          f"designs); route factor {b.lo:.3f} .. {b.hi:.3f} pooled, by class:")
    for name, c in b.classes.items():
        print(f"  {name:<11} {c['lo']:.3f} .. {c['hi']:.3f}  ({c['paths']} paths of {c['designs']} designs)")
    if b.outside is not None:
        print(f"  {'outside':<11} {b.outside[0]:.3f} .. {b.outside[1]:.3f}  (more than {b.data['max_levels']} levels,"
              f" or a requirement outside {b.data['requirement_ns'][0]:g} .. {b.data['requirement_ns'][1]:g} ns)")
    if model.pressure is not None:
        print(f"timing pressure: routing x max({model.pressure.floor:g}, x^-{model.pressure.k:g}) on paths over "
              f"their budget ({model.pressure.paths} such paths in {model.pressure.designs} designs)")
    if model.clock_law is not None:
        law = model.clock_law
        print(f"clock law: routing x min(1, e^{law.a:.4f} B^{law.b:.4f}) at a budget of B ns (1 from "
              f"{law.full_at_ns:.2f} ns; Theil-Sen over {law.designs} designs), never under the pressure floor")
    if model.high_fanout is not None:
        hf = model.high_fanout
        print(f"high fanout: a net of fanout F > {hf.knee} takes +{hf.per_doubling_ps:.0f} ps x log2(F / {hf.knee}), "
              f"up to its path's budget ({hf.paths} paths with such a net in {hf.designs} designs)")
    if a.write:
        CONSTANTS.write_text(text)
        plot(outcomes, PLOT)
        print(f"wrote {CONSTANTS.relative_to(REPO)} and {PLOT.relative_to(REPO)}")
    return 0


def _files_of(folder: Path) -> set[str]:
    return {f.name for f in folder.glob("*.rpt")}


def default_corpora() -> list[Path]:
    """The shared corpus, and ../shared/routed-more when it is there; [] without the shared corpus."""
    if not DEFAULT_CORPUS.is_dir():
        return []
    return [DEFAULT_CORPUS] + ([MORE_CORPUS] if MORE_CORPUS.is_dir() else [])


def generate(corpora: Path | list[Path], *, quiet: bool = False, coverage: float | None = None):
    """Fit on corpora: (the constants module's text, held-out outcomes, the model)."""
    corpora = [corpora] if isinstance(corpora, Path) else list(corpora)
    coverage = coverage_setting() if coverage is None else coverage
    samples, left_out, digests, bad = read_corpora(corpora)
    if not quiet:
        _print_intake(samples, left_out, bad)
    # the net and cell fit takes the first corpus (it does not hold on the others yet:
    # docs/timing_model.md); every corpus's designs calibrate timing pressure, the clock law and
    # the band, and validate all of them
    own = [s for s in samples if s.scope == MODEL_SCOPE]
    files_first = {f for f in _files_of(corpora[0])}
    base = [s for s in own if s.file in files_first]
    base_designs = {s.design for s in base}
    # a repository the first corpus has is that corpus's design: its other reports are not a new design
    extra = [s for s in own if s.file not in files_first and s.design not in base_designs]
    designs = sorted({s.design for s in own})
    where = ", ".join(str(c) for c in corpora)
    if len(designs) < 3:
        raise ValueError(f"{where}: {len(designs)} designs in scope ({MODEL_SCOPE}); need 3 or more "
                         f"to fit and validate by design")
    outcomes, band = V.validate(base, extra=extra, coverage=coverage)
    model = fit(base, band=band, extra=extra)
    if model.band is None:
        raise ValueError(f"{where}: {len(outcomes)} held-out paths with routing; need 10 or more for a band")
    return (_generated_module(model, outcomes, corpora, digests, len(base), len({s.design for s in base}),
                              len(own), len(designs)), outcomes, model)


if __name__ == "__main__":
    sys.exit(main())
