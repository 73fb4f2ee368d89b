"""`kabe`: the pieces of the build usable alone, e.g. in someone else's CI.

    kabe parse <report>                 print the JSON record of a Yosys/Vivado/kabe report (type auto-detected)
    kabe gate <metrics.json | report>   exit 1 with the reasons when the gate fails, 0 when it passes
              [--junit FILE]            also write the checks as JUnit XML (one testcase per check)
    kabe build <design> [--flow F]      the same as `doit build:<design>` without doit
    kabe sim <design> [--rows N]        the same as `doit sim:<design> rows=N`
    kabe diff [A] [B] [--dirty]         Markdown table of metric deltas between two builds (A, B: git refs)
    kabe sweep <design> [KEY=V1,V2 ...] variants of a design built on Dask (sweep.yaml beside the design)
    kabe ci [DESIGN ...]                pull the archive, build, gate, compare with the base, report, push (CI's one command)
    kabe archive push|pull|du [REMOTE]  the per-commit archive shared through a ref of the project's own git remote
    kabe report [--site DIR]            the report page from the archive (`doit report`); DIR: it and its raw reports, to publish
    kabe doctor [--flow F] [--deploy]   what this machine has against what kabe needs, each problem with its fix
    kabe init                           make this folder of a git repository a kabe project ([tool.kabe], dodo.py, .gitignore, CI)
    kabe new <design>                   a design folder under cores/ to start from (refuses to overwrite)

Exit codes (the same as doit's, see the README): 0 pass; 1 the gate failed; 2 could not run (missing
tool, bad input, a report of the wrong kind, an unknown ref); 130 interrupted.
"""

from __future__ import annotations

import argparse
import errno
import json
import os
import re
import sys
from pathlib import Path

from rich.markup import escape

from kabe.project import config
from kabe.base import paths
from kabe.rules import gate
from kabe.base.console import make_console
from kabe.base.errors import EXIT_BROKEN_PIPE, EXIT_COULD_NOT_RUN, EXIT_INTERRUPTED, UserError, bug_message
from kabe.parsers import ReportError

_TIMING_KINDS = ("vivado_timing_summary", "kabe_timing")


class WrongInput(UserError):
    """`kabe gate` was given a file it cannot judge (not a timing report, not a metrics.json)."""


def _parse(args) -> int:
    from kabe.parsers.detect import parse_file

    try:
        record = parse_file(Path(args.report))
    except ReportError as e:  # bad input: one line naming the file and what is wrong
        print(f"kabe parse: {e}", file=sys.stderr)
        return 2
    print(json.dumps(record, indent=2))  # {"kind": ..., "path": ..., "record": ...}
    return 0


def _gate_report(path: Path) -> dict:
    """The timing record of a raw timing report. A report that cannot be read is a timing record with
    an "error": the gate FAILs. A file that is no timing report raises a UserError (exit 2)."""
    from kabe.flows.base import unreadable_timing
    from kabe.parsers import report_file
    from kabe.parsers.detect import detect_report, parse_report

    try:  # the one way reports are opened (NUL bytes, encoding, size): a file that is no text report fails
        rep = report_file.read(path)
    except ReportError as e:
        if isinstance(e, report_file.NotOneReport) or not path.is_file():
            raise WrongInput(f"{e}; `kabe gate` needs a timing report or a metrics.json") from None
        return unreadable_timing(str(e), estimated=False)
    try:
        kind = detect_report(rep)
    except ReportError as e:  # not a report kabe knows: nothing to judge (exit 2, not a FAIL)
        raise WrongInput(f"{path}: {e}; `kabe gate` needs a timing report or a metrics.json") from None
    if kind not in _TIMING_KINDS:
        raise WrongInput(f"{path} is a {kind} report; `kabe gate` needs a timing summary "
                         f"({' or '.join(_TIMING_KINDS)}) or a metrics.json")
    try:
        return parse_report(kind, rep)
    except report_file.NotOneReport as e:  # two runs, a section twice or missing: which one to judge is unknowable
        raise WrongInput(f"{e}; `kabe gate` judges one whole report") from None
    except ReportError as e:  # a timing report that cannot be trusted (truncated, say) fails the gate
        return unreadable_timing(str(e), estimated=kind == "kabe_timing")


def _gate_vitis(path: Path):
    """The verdict on a Vitis HLS / cosim / v++ link file, None when the file is none of those. A
    file of that kind that cannot be read is refused (ReportError: exit 2, one line), never passed."""
    from kabe.parsers import vitis_detect
    from kabe.rules import hls_gate

    kind = vitis_detect.sniff(path)
    if kind is None:
        return None
    if kind not in vitis_detect.GATED:
        raise WrongInput(f"{path} is a {kind} file, which the gate does not judge alone; give it the csynth report, "
                         f"the HLS log, the cosim report or the v++ link log")
    return hls_gate.evaluate(kind, vitis_detect.parse_path(path, kind)["record"])


def _gate(args) -> int:
    console = make_console(stderr=True)
    path = Path(args.input)
    rules = gate.TimingRules(fail_on_unconstrained=args.fail_on_unconstrained or gate.TimingRules.from_config().fail_on_unconstrained)
    # a file kabe cannot judge (not a report, a design not in this checkout) is a UserError: exit 2
    if path.suffix == ".json":
        from kabe.records import load as record_load

        # The one verdict every consumer computes (kabe.rules.verdict.judge via kabe.records.load): budgets
        # and waivers from this checkout's design of that name, never from the file; failures recorded
        # at build time that the numbers cannot re-derive are kept, so a failed build never passes.
        record, verdict = record_load.gate_file(path, rules=rules)
        timing = record["timing"]
    elif (vitis := _gate_vitis(path)) is not None:
        timing, verdict = None, vitis
    else:
        timing = _gate_report(path)
        verdict = gate.evaluate(timing, None, (), rules)
    for c in verdict.checks:
        console.print(f"  {'pass' if c['passed'] else '[red]FAIL[/]'} {c['name']}: expected {escape(str(c['expected']))}, got {escape(str(c['got']))}")
    for key, reason in verdict.waivers.items():
        console.print(f"  [yellow]waived[/] {key}: {escape(reason)}")
    for w in verdict.warnings:
        console.print(f"  [yellow]warning[/] {escape(w)}")
    for f in verdict.failures:
        console.print(f"[red]✗ {escape(f)}[/]")
    if args.junit:
        from kabe.records import junit

        junit.write(Path(args.junit), [junit.gate_suite(verdict, path.name, timing=timing)], name="kabe gate")
    if verdict.status == gate.NOT_ESTIMATED:  # no timing number: neither pass nor fail, and no pass
        console.print(f"[yellow]gate: timing NOT ESTIMATED ({escape(verdict.not_estimated)}): neither pass nor fail[/]")
        return 1
    console.print("[green]gate: PASS[/]" if verdict.passed else "[red]gate: FAIL[/]")
    from kabe.records.band_advice import fill_note, marginal_advice

    advice = marginal_advice(timing, record.get("design") if path.suffix == ".json" else None)
    if advice:  # what the estimate's band means for this verdict and what to do next, in one line
        console.print(f"[yellow]{escape(advice)}[/]", soft_wrap=True)
    if fill_note(timing):  # a WNS of 0 the high-fanout fill set: the model's cap, with the WNS without it
        console.print(f"[yellow]{escape(fill_note(timing))}[/]", soft_wrap=True)
    return 0 if verdict.passed else 1


def _build(args) -> int:
    from kabe.build import run

    return run(args.design, args.flow, use_cache=not args.no_cache)


def _sim(args) -> int:
    from kabe.project import designs
    from kabe.base.console import make_console
    from kabe.sim import runner

    console = make_console()
    try:
        design = designs.get(args.design)  # the verb resolves the design once; the runner takes its context
    except UserError as e:
        console.print(f"[red]sim {escape(args.design)}: {escape(str(e))}[/]")
        return 2
    return runner.main(design, args.rows, args.seed, console=console)


def _doctor(args) -> int:
    from kabe.setup.doctor import main as doctor

    return doctor(args.flow, args.board, args.deploy)


def _diff(args) -> int:
    from kabe.records.diff import render

    print(render(args.a, args.b, dirty=args.dirty), end="")
    return 0


def _sweep(args) -> int:
    from kabe.sweep import run

    return run.main(args.design, args.flow, args.overrides, args.scheduler, args.workers, args.file, args.diff,
                    args.insecure_scheduler)


def _list_designs(designs) -> int:
    """The CI matrix: only folder names that are valid design names (a name reaches a CI's shell and
    its artifact names; `x";id>&2;"` must not), each skipped folder said on stderr. A valid name whose
    design.yaml is broken is listed: its job says why."""
    listed, skipped = [], []
    for name in designs.names():
        (listed if designs.NAME_PATTERN.fullmatch(name) else skipped).append(name)
    print(json.dumps(listed))
    if skipped:
        shown = ", ".join(json.dumps(n)[:80] for n in skipped)  # JSON: an escape sequence is shown, not run
        print(f"kabe ci: skipped {len(skipped)} folder(s) under cores/ whose names are not design names "
              f"(letters, digits, '_' and '-', at most 64, not starting with '-'): {shown}", file=sys.stderr)
    return 0


def _ci(args) -> int:
    from kabe.project import designs
    from kabe.ci import CiOptions, run

    if args.list_designs:  # for a CI matrix: the designs come from cores/, not from the workflow file
        return _list_designs(designs)
    opts = CiOptions(designs=args.designs, flow=args.flow, base=args.base, remote=args.remote, pull=not args.no_pull,
                     push=args.push, rebuild=args.rebuild, bitstreams=args.bitstreams)
    opts.summary = Path(args.summary) if args.summary else opts.summary
    opts.junit = Path(args.junit) if args.junit else opts.junit
    return run(opts)


def _archive(args) -> int:
    from kabe import flows
    from kabe.store import store, store_size

    if args.action == "du":
        print(store_size.du(args.remote), end="")
        return 0
    if args.action == "push":
        from kabe.records.lineage import resolve

        commits = [resolve(c) or c for c in args.commit] if args.commit else None
        report = store.push(args.remote, commits=commits, bitstreams=args.bitstreams, shared=flows.shared_caches())
    else:
        report = store.pull(args.remote, bitstreams=args.bitstreams, accept_rewrite=args.accept_rewrite,
                            shared=flows.shared_caches())
    print("\n".join(report.lines()))
    return 0


def _report(args) -> int:
    from kabe.page.report import build_report  # here: it loads matplotlib, which no other verb needs

    if args.site is None:
        print(f"wrote {build_report()}")
        return 0
    from kabe.page.site import build_site

    print(build_site(Path(args.site)).line())
    return 0


def _init(args) -> int:
    from kabe.setup.project_init import init

    for line in init():
        print(line)
    return 0


def _new(args) -> int:
    from kabe.setup.project_init import new

    for line in new(args.design):
        print(line)
    return 0


# Verbs that read or write a project's designs, reports or builds: outside one they say so (exit 2).
_NEED_PROJECT = ("build", "sim", "diff", "sweep", "ci", "archive", "report")


def _add_ci_commands(sub) -> None:
    p = sub.add_parser("ci", help="pull the archive, build and gate, compare with the base, report, push")
    p.add_argument("designs", nargs="*", help="designs to build (default: all)")
    p.add_argument("--flow", default=None, choices=config.FLOWS)
    p.add_argument("--base", default=None, help="judge regressions against this commit (default: merge-base with the default branch)")
    p.add_argument("--remote", default="origin", help="git remote (name or URL) holding the shared archive")
    p.add_argument("--no-pull", action="store_true", help="do not pull the archive first")
    p.add_argument("--push", dest="push", action="store_true", default=None, help="push the archive (default: on the default branch only)")
    p.add_argument("--no-push", dest="push", action="store_false", help="never push the archive")
    p.add_argument("--rebuild", action="store_true", help="rebuild even when this commit's build is already archived")
    p.add_argument("--bitstreams", action="store_true", help="pull and push bitstreams (.bit/.bin/.hwh) too")
    p.add_argument("--summary", default=None, help="Markdown summary file (default: reports/ci-summary.md)")
    p.add_argument("--junit", default=None, help="JUnit XML file (default: reports/ci-junit.xml)")
    p.add_argument("--list-designs", action="store_true", help="print the designs as a JSON list (a CI matrix) and exit")
    p.set_defaults(fn=_ci)
    p = sub.add_parser("archive", help="share the per-commit archive through a ref of the project's git remote")
    p.add_argument("action", choices=["push", "pull", "du"])
    p.add_argument("remote", nargs="?", default="origin")
    p.add_argument("--commit", action="append", help="push only this commit's builds (repeatable; default: all clean ones)")
    p.add_argument("--bitstreams", action="store_true", help="bitstreams (.bit/.bin/.hwh) too")
    p.add_argument("--accept-rewrite", metavar="TIP", default=None,
                   help="pull: accept this new archive tip although it does not descend from the last one seen "
                        "(a deliberate rewrite; docs/archive.md)")
    p.set_defaults(fn=_archive)


# errno values that mean the folder cannot be written (read-only, not ours, full): the user's to fix
_CANNOT_WRITE = {errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOSPC, errno.EDQUOT}
_OVERRIDE = re.compile(r"^[A-Za-z_][\w.]*=")  # a sweep axis, KEY=V1,V2


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
    p.add_argument("--flow", default=None, choices=config.FLOWS)
    p.add_argument("--no-cache", action="store_true", help="run every tool even when this content was built before")
    p.set_defaults(fn=_build)
    p = sub.add_parser("sim", help="verify one design against the numpy model")
    p.add_argument("design")
    p.add_argument("--rows", type=int, default=None)
    p.add_argument("--seed", type=int, default=1)
    p.set_defaults(fn=_sim)
    p = sub.add_parser("diff", help="metric deltas between two builds (default: HEAD vs its nearest built ancestor)")
    p.add_argument("a", nargs="?", default=None,
                   help="older: a git ref or sha (default: per design, B's nearest ancestor with a clean archive)")
    p.add_argument("b", nargs="?", default=None, help="newer: a git ref or sha (default: HEAD's build); "
                                                       "<ref>-dirty names a build made with uncommitted changes")
    p.add_argument("--dirty", action="store_true", help="B is the working tree's build (HEAD-dirty)")
    p.set_defaults(fn=_diff)
    p = sub.add_parser("sweep", help="build a design's variants on Dask (LocalCluster, a scheduler, or a farm)")
    p.add_argument("design")
    p.add_argument("overrides", nargs="*", metavar="KEY=V1,V2", help="grid axes added to (or replacing) sweep.yaml's")
    p.add_argument("--flow", default=None, choices=config.FLOWS)
    p.add_argument("--scheduler", default=None,
                   help="a running Dask scheduler, tls://host:8786 with [tool.kabe.sweep] tls_* (docs/sweeps.md)")
    p.add_argument("--insecure-scheduler", action="store_true",
                   help="allow --scheduler tcp:// to another machine: whoever reaches it runs code on every worker")
    p.add_argument("--workers", type=int, default=None, help="LocalCluster workers (default: cores, memory allowing)")
    p.add_argument("--file", default=None, help="the sweep file (default: cores/<design>/sweep.yaml)")
    p.add_argument("--diff", nargs=2, metavar=("A", "B"), default=None,
                   help="instead of running: metric deltas between two archived variants (ids or prefixes)")
    p.set_defaults(fn=_sweep)
    p = sub.add_parser("doctor", help="what this machine has against what kabe needs, with the fixes")
    p.add_argument("--flow", default=None, choices=config.FLOWS)
    p.add_argument("--deploy", action="store_true", help="also require what deploying to the board needs")
    p.add_argument("--board", default=None, help="user@host of the board (implies --deploy)")
    p.set_defaults(fn=_doctor)
    _add_ci_commands(sub)
    p = sub.add_parser("report", help="the report page (reports/index.html) from the archive; --site: a folder to publish")
    p.add_argument("--site", metavar="DIR", default=None,
                   help="also write DIR: the page and every raw report it links to, to publish as a static site")
    p.set_defaults(fn=_report)
    p = sub.add_parser("init", help="make this folder (a git repository's top, or a folder of it) a kabe project (settings, dodo.py, .gitignore, CI)")
    p.set_defaults(fn=_init)
    p = sub.add_parser("new", help="a new design under cores/: design.yaml, a core file, an RTL stub, an XDC")
    p.add_argument("design")
    p.set_defaults(fn=_new)
    args, extra = parser.parse_known_args(argv)
    if args.cmd == "sweep":  # argparse cannot take KEY=V axes after an option; gather those it left over
        args.overrides += [a for a in extra if _OVERRIDE.match(a)]
        extra = [a for a in extra if not _OVERRIDE.match(a)]
    if extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    try:
        if args.cmd in _NEED_PROJECT:
            paths.require_project(args.cmd)
        return args.fn(args)
    except UserError as e:  # bad input, a missing tool, an unknown ref: one line, no traceback
        print(f"kabe {args.cmd}: {e}", file=sys.stderr)
        return EXIT_COULD_NOT_RUN
    except KeyboardInterrupt:
        print(f"kabe {args.cmd}: interrupted; nothing archived", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # `kabe parse r | head`: the reader has what it wanted; end quietly
        return _reader_went_away()
    except OSError as e:
        if e.errno not in _CANNOT_WRITE:
            return _bug(args.cmd)
        # the machine, not kabe: a read-only or full folder. One line naming the file and the fix.
        where = str(e.filename2 or e.filename or "a file")
        if ".tmp-" in Path(where).name:  # kabe's own temp folder beside the file: name the folder it is in
            where = str(Path(where).parent)
        print(f"kabe {args.cmd}: cannot write {where}: {os.strerror(e.errno)}; make that folder writable (or free "
              f"space there) and run again", file=sys.stderr)
        return EXIT_COULD_NOT_RUN
    except Exception:  # noqa: BLE001 - kabe's own bug: keep the traceback and say so
        return _bug(args.cmd)


def _bug(cmd: str) -> int:
    import traceback

    traceback.print_exc()
    print(f"kabe {cmd}: {bug_message()}", file=sys.stderr)
    return EXIT_COULD_NOT_RUN


def _reader_went_away() -> int:
    """stdout's reader closed the pipe. Point stdout at /dev/null so the interpreter's final flush
    cannot raise again, and exit as a tool killed by SIGPIPE does (128 + 13), which `set -o pipefail`
    scripts already know; no traceback, no "internal error"."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return EXIT_BROKEN_PIPE


if __name__ == "__main__":
    sys.exit(main())
