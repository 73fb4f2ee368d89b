"""`kabe`: the pieces of the build usable alone, e.g. in someone else's CI.

    kabe parse <report>                 print the JSON record of a Yosys/Vivado/kabe report (type auto-detected)
    kabe gate <metrics.json | report>   exit 1 with the reasons when the gate fails, 0 when it passes
              [--junit FILE]            also write the checks as JUnit XML (one testcase per check)
    kabe build <design> [--flow F]      the same as `doit build:<design>` without doit
    kabe sim <design> [--rows N]        the same as `doit sim:<design> rows=N`
    kabe diff [A] [B]                   Markdown table of metric deltas between two archived commits
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from . import gate, metrics
from .parsers import ReportError


def _parse(args) -> int:
    from .parsers.detect import parse_file

    try:
        record = parse_file(Path(args.report))
    except ReportError as e:  # bad input: one line naming the file and what is wrong
        print(f"kabe parse: {e}", file=sys.stderr)
        return 2
    print(json.dumps(record, indent=2))  # {"kind": ..., "path": ..., "record": ...}
    return 0


class _NotGateable(ValueError):
    """A file `kabe gate` cannot judge at all (another kind of report): bad input, exit 2."""


def _gate_record(path: Path) -> tuple[dict | None, dict | None, list, dict, list[str]]:
    """(timing, utilization, budgets, waivers, failures recorded at build time) from a
    metrics.json or a raw timing report. Recorded failures (a simulation mismatch, say) cannot be
    re-derived from the numbers, so they are carried over: re-gating a failed build never turns
    it into a pass. A report that cannot be read raises ReportError: the gate's verdict is FAIL."""
    if path.suffix == ".json":
        from . import designs

        record = metrics.load(path)
        try:
            design = designs.get(record["design"])
            budgets = gate.budgets_from_mapping(design.budgets_for(record["flow"]))
            waivers = dict(design.waivers)
        except designs.DesignError:  # a metrics file from another checkout: its own timing is still gated
            budgets, waivers = [], {}
        return record["timing"], record["utilization"], budgets, waivers, list(record["gate"]["failures"])
    from .parsers.detect import parse_file

    parsed = parse_file(path)
    if parsed["kind"] not in ("vivado_timing_summary", "kabe_timing"):
        raise _NotGateable(f"{path} is a {parsed['kind']} report; `kabe gate` needs a timing summary "
                           f"(report_timing_summary, or kabe's timing estimate) or a metrics.json")
    return parsed["record"], None, [], {}, []


def _gate(args) -> int:
    console = Console(stderr=True)
    path = Path(args.input)
    rules = gate.TimingRules(fail_on_unconstrained=args.fail_on_unconstrained or gate.TimingRules.from_config().fail_on_unconstrained)
    try:
        timing, utilization, budgets, waivers, recorded = _gate_record(path)
    except _NotGateable as e:
        console.print(f"kabe gate: {escape(str(e))}")
        return 2
    except (ReportError, metrics.MetricsError) as e:
        # an unreadable report is the gate's business: it fails, through the same rules as any other
        timing, utilization, budgets, waivers, recorded = {"error": str(e)}, None, [], {}, []
    verdict = gate.evaluate(timing, utilization, budgets, rules, waivers)
    carried = [f for f in recorded if f not in verdict.failures]
    if carried:
        verdict.passed = False
        verdict.failures += [f"recorded at build time: {f}" for f in carried]
    for c in verdict.checks:
        console.print(f"  {'pass' if c['passed'] else '[red]FAIL[/]'} {c['name']}: expected {escape(str(c['expected']))}, got {escape(str(c['got']))}")
    for key, reason in verdict.waivers.items():
        console.print(f"  [yellow]waived[/] {key}: {escape(reason)}")
    for w in verdict.warnings:
        console.print(f"  [yellow]warning[/] {escape(w)}")
    for f in verdict.failures:
        console.print(f"[red]✗ {escape(f)}[/]")
    if args.junit:
        write_junit(verdict, path.name, Path(args.junit))
    console.print("[green]gate: PASS[/]" if verdict.passed else "[red]gate: FAIL[/]")
    return 0 if verdict.passed else 1


def junit_xml(verdict: gate.Verdict, suite: str) -> str:
    """The verdict as JUnit XML, the format CI systems render: one testcase per check, a failing
    check a <failure> carrying what was expected and what was found; waivers as properties,
    warnings as system-out."""
    cases = verdict.checks
    failed = [c for c in cases if not c["passed"]]
    root = ET.Element("testsuites", name="kabe gate", tests=str(len(cases)), failures=str(len(failed)))
    ts = ET.SubElement(root, "testsuite", name=suite, tests=str(len(cases)), failures=str(len(failed)),
                       errors="0", skipped="0")
    props = ET.SubElement(ts, "properties")
    ET.SubElement(props, "property", name="gate.passed", value=str(verdict.passed).lower())
    for key, reason in verdict.waivers.items():
        ET.SubElement(props, "property", name=f"waiver.{key}", value=reason)
    for c in cases:
        case = ET.SubElement(ts, "testcase", classname=f"kabe.gate.{suite}", name=c["name"])
        if not c["passed"]:
            msg = c.get("message") or f"{c['name']}: expected {c['expected']}, got {c['got']}"
            f = ET.SubElement(case, "failure", type="gate", message=msg)
            f.text = f"expected: {c['expected']}\ngot: {c['got']}"
    # failures with no check of their own (recorded at build time): one testcase each
    own = {c.get("message") for c in cases}
    for i, msg in enumerate((m for m in verdict.failures if m not in own), start=1):
        case = ET.SubElement(ts, "testcase", classname=f"kabe.gate.{suite}", name=f"recorded.{i}")
        ET.SubElement(case, "failure", type="gate", message=msg).text = msg
    if verdict.warnings:
        ET.SubElement(ts, "system-out").text = "\n".join(verdict.warnings)
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def write_junit(verdict: gate.Verdict, suite: str, path: Path) -> Path:
    """Written beside the target and renamed, so CI never reads half a file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(junit_xml(verdict, suite))
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def _build(args) -> int:
    from .build import run

    return run(args.design, args.flow)


def _sim(args) -> int:
    from .sim import runner

    return runner.main(args.design, args.rows, args.seed)


def _diff(args) -> int:
    from .diff import render

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
    p.add_argument("--junit", metavar="FILE", default=None,
                   help="also write the checks as JUnit XML: one testcase per check, a failure carries expected and got")
    p.set_defaults(fn=_gate)
    p = sub.add_parser("build", help="build one design")
    p.add_argument("design")
    p.add_argument("--flow", default=None, choices=["open", "vivado", "auto"])
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
    args = parser.parse_args(argv)
    try:
        return args.fn(args)
    except ReportError as e:
        print(f"kabe: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
