"""`kabe`: the pieces of the build usable alone, e.g. in someone else's CI.

    kabe parse <report>                 print the JSON record of a Yosys/Vivado/kabe report (type auto-detected)
    kabe gate <metrics.json | report>   exit 1 with the reasons when the gate fails, 0 when it passes
    kabe build <design> [--flow F]      the same as `doit build:<design>` without doit
    kabe sim <design> [--rows N]        the same as `doit sim:<design> rows=N`
    kabe diff [A] [B]                   Markdown table of metric deltas between two archived commits
    kabe doctor [--flow F] [--deploy]   what this machine has against what kabe needs, each problem with its fix
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from . import gate
from .records import metrics
from .parsers import ReportError


def _parse(args) -> int:
    from .parsers.detect import parse_file

    record = parse_file(Path(args.report))
    print(json.dumps(record, indent=2))  # {"kind": ..., "path": ..., "record": ...}
    return 0


def _gate_record(path: Path) -> tuple[dict | None, dict | None, list, list[str]]:
    """(timing, utilization, budgets, failures recorded at build time) from a metrics.json or a
    raw timing report. Recorded failures (a simulation mismatch, say) cannot be re-derived from the
    numbers, so they are carried over: re-gating a failed build never turns it into a pass."""
    if path.suffix == ".json":
        from . import designs

        record = metrics.load(path)
        try:
            budgets = gate.budgets_from_mapping(designs.get(record["design"]).budgets_for(record["flow"]))
        except designs.DesignError:  # a metrics file from another checkout: its own timing is still gated
            budgets = []
        return record["timing"], record["utilization"], budgets, list(record["gate"]["failures"])
    from .parsers.detect import parse_file

    parsed = parse_file(path)
    if parsed["kind"] not in ("vivado_timing_summary", "kabe_timing"):
        raise ReportError(f"{path} is a {parsed['kind']} report; `kabe gate` needs a timing summary or a metrics.json")
    return parsed["record"], None, [], []


def _gate(args) -> int:
    console = Console(stderr=True)
    path = Path(args.input)
    try:
        timing, utilization, budgets, recorded = _gate_record(path)
    except (ReportError, metrics.MetricsError) as e:
        console.print(f"[red]FAIL[/] {escape(str(e))}")
        return 1
    rules = gate.TimingRules(fail_on_unconstrained=args.fail_on_unconstrained or gate.TimingRules.from_config().fail_on_unconstrained)
    verdict = gate.evaluate(timing, utilization, budgets, rules)
    carried = [f for f in recorded if f not in verdict.failures]
    if carried:
        verdict.passed = False
        verdict.failures += [f"recorded at build time: {f}" for f in carried]
    for c in verdict.checks:
        console.print(f"  {'pass' if c['passed'] else '[red]FAIL[/]'} {c['name']}: expected {escape(str(c['expected']))}, got {escape(str(c['got']))}")
    for f in verdict.failures:
        console.print(f"[red]✗ {escape(f)}[/]")
    console.print("[green]gate: PASS[/]" if verdict.passed else "[red]gate: FAIL[/]")
    return 0 if verdict.passed else 1


def _build(args) -> int:
    from .build import run

    return run(args.design, args.flow, use_cache=not args.no_cache)


def _sim(args) -> int:
    from .sim import runner

    return runner.main(args.design, args.rows, args.seed)


def _doctor(args) -> int:
    from .doctor import main as doctor

    return doctor(args.flow, args.board, args.deploy)


def _diff(args) -> int:
    from .records.diff import render

    print(render(args.a, args.b), end="")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="kabe", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("parse", help="print a report's JSON record")
    p.add_argument("report")
    p.set_defaults(fn=_parse)
    p = sub.add_parser("gate", help="gate a metrics.json or a timing report")
    p.add_argument("input")
    p.add_argument("--fail-on-unconstrained", action="store_true",
                   help="fail when any endpoint is unconstrained (default: [tool.kabe] fail_on_unconstrained, else report only)")
    p.set_defaults(fn=_gate)
    p = sub.add_parser("build", help="build one design")
    p.add_argument("design")
    p.add_argument("--flow", default=None, choices=["open", "vivado", "auto"])
    p.add_argument("--no-cache", action="store_true", help="run every tool even when this content was built before")
    p.set_defaults(fn=_build)
    p = sub.add_parser("sim", help="verify one design against the numpy model")
    p.add_argument("design")
    p.add_argument("--rows", type=int, default=None)
    p.add_argument("--seed", type=int, default=1)
    p.set_defaults(fn=_sim)
    p = sub.add_parser("diff", help="metric deltas between two archived commits (default: newest vs its parent)")
    p.add_argument("a", nargs="?", default=None, help="older commit (default: B's parent)")
    p.add_argument("b", nargs="?", default=None, help="newer commit (default: the newest archived)")
    p.set_defaults(fn=_diff)
    p = sub.add_parser("doctor", help="what this machine has against what kabe needs, with the fixes")
    p.add_argument("--flow", default=None, choices=["open", "vivado", "auto"])
    p.add_argument("--deploy", action="store_true", help="also require what deploying to the board needs")
    p.add_argument("--board", default=None, help="user@host of the board (implies --deploy)")
    p.set_defaults(fn=_doctor)
    args = parser.parse_args(argv)
    try:
        return args.fn(args)
    except ReportError as e:
        print(f"kabe: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
