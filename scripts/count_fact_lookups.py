#!/usr/bin/env python3
"""How often one `doit` run looks up the same facts: design.yaml loads (per design), the commit read,
the FuseSoC resolution per (design, target) -- sim and synth apart --, the flow made from its name,
the XDC parse (per file), the content key and the verdict on a record (kabe.rules.verdict.judge). A build context made once at the top (kabe.build.
BuildContext) should make each one once per design and run.

    python scripts/count_fact_lookups.py build:stage4 cache=off
    python scripts/count_fact_lookups.py kabe ci --design stage4      (a kabe verb: argv after "kabe")

Runs doit in this process under a profile hook that counts calls of the functions below by their code
object, so a call is counted however the caller imported the function (`from kabe.project.constraints import
parse_xdc` included), then prints the counts and where each call came from. Exit 1 when a fact was
looked up more than once (--allow-repeats: print only), else doit's exit code.
"""

from __future__ import annotations

import collections
import runpy
import sys
import threading
import types
from pathlib import Path

import kabe.project.constraints
import kabe.project.cores
import kabe.project.designs
import kabe.flows
import kabe.base.provenance
import kabe.cache.cache
import kabe.rules.verdict


def _design_name(value) -> str:
    return getattr(value, "name", None) or str(value)


def _resolve_label(loc: dict) -> str:
    extra = "".join(f" {k}={loc[k]!r}" for k in ("params", "flags") if loc.get(k))
    return f"({_design_name(loc.get('design'))}, {loc.get('target', 'sim')}{extra})"


# (module, function, fact name, label from the call's arguments): one line per fact and label
COUNTED = [
    (kabe.project.designs, "load", "design.yaml load", lambda loc: f"({loc.get('yaml_file')})"),
    (kabe.base.provenance, "current_commit", "commit read", lambda loc: ""),
    (kabe.project.cores, "resolve", "FuseSoC resolution", _resolve_label),
    (kabe.flows, "get", "flow resolution", lambda loc: f"({loc.get('name')})"),
    (kabe.project.constraints, "parse_xdc", "XDC parse", lambda loc: f"({loc.get('path')})"),
    (kabe.cache.cache, "key_for", "cache key", lambda loc: f"({_design_name(loc.get('design'))}, "
                                                             f"{loc.get('flow')})"),
    # the verdict on a record (`kabe ci` judges each once; a build judges its own)
    (kabe.rules.verdict, "judge", "verdict", lambda loc: f"({getattr(loc.get('facts'), 'name', '?')}, "
                                                         f"{getattr(loc.get('facts'), 'flow', '?')}, record of "
                                                         f"{str((loc.get('record') or {}).get('commit') or 'this build')[:12]})"),
]


class Counter:
    """A profile hook: counts calls of COUNTED's functions, with the call site of each."""

    def __init__(self) -> None:
        self.counts: collections.Counter = collections.Counter()
        self.callers: dict[str, list[str]] = collections.defaultdict(list)
        self._watched = {getattr(mod, name).__code__: (fact, label) for mod, name, fact, label in COUNTED}
        self._root = str(Path(kabe.__file__).resolve().parent.parent) + "/"

    def hook(self, frame, event, arg):
        if event != "call":
            return
        seen = self._watched.get(frame.f_code)
        if seen is None:
            return
        fact, label = seen
        key = f"{fact} {label(frame.f_locals)}".rstrip()
        self.counts[key] += 1
        self.callers[key].append(self._where(frame.f_back))

    def _where(self, frame) -> str:
        out = []
        while frame is not None and len(out) < 4:
            name = frame.f_code.co_filename
            out.append(f"{name.removeprefix(self._root)}:{frame.f_lineno}")
            frame = frame.f_back
        return " < ".join(out)

    def repeated(self) -> list[str]:
        return [k for k, n in self.counts.items() if n > 1]

    def report(self) -> str:
        lines = []
        for key, n in sorted(self.counts.items()):
            lines.append(f"{n:3d}  {key}")
            lines += [f"       {c}" for c in self.callers[key]]
        return "\n".join(lines)


def run_counted(argv: list[str]) -> tuple[int, Counter]:
    """doit `argv` (or `kabe ...`: argv[0] == "kabe") in this process, counted; (the exit code, the counter)."""
    from doit.cmd_base import ModuleTaskLoader
    from doit.doit_cmd import DoitMain

    counter = Counter()
    threading.setprofile(counter.hook)
    sys.setprofile(counter.hook)
    try:
        if argv[:1] == ["kabe"]:
            from kabe import cli

            rc = cli.main(argv[1:])
        else:
            dodo = types.ModuleType("dodo")
            dodo.__dict__.update(runpy.run_path("dodo.py"))
            rc = DoitMain(ModuleTaskLoader(dodo)).run(argv)
    finally:
        sys.setprofile(None)
        threading.setprofile(None)
    return rc, counter


def main(argv: list[str]) -> int:
    allow = "--allow-repeats" in argv
    argv = [a for a in argv if a != "--allow-repeats"]
    rc, counter = run_counted(argv)
    print(f"\n{'' if argv[:1] == ['kabe'] else 'doit '}{' '.join(argv)}: exit {rc}")
    print(counter.report())
    twice = counter.repeated()
    if twice:
        print(f"\nlooked up more than once: {', '.join(sorted(twice))}")
        return rc or (0 if allow else 1)
    print("\nevery fact looked up once")
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
