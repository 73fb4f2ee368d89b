#!/usr/bin/env python3
"""How often one `doit` run looks up the same facts: design.yaml loads (per design), FuseSoC
resolutions, content keys and git commit reads. A build context made once at the top (kabe.build.
BuildContext) should make each one per design and run.

    python scripts/count_fact_lookups.py build:stage2 cache=off

Runs doit in this process with counting wrappers (kabe's modules call these through their module,
so one wrapper sees every call), then prints the counts and where each call came from.
"""

from __future__ import annotations

import collections
import functools
import runpy
import sys
import traceback
import types

import kabe.cores
import kabe.designs
import kabe.provenance
import kabe.records.cache

COUNTED = [(kabe.designs, "load"), (kabe.cores, "resolve"), (kabe.records.cache, "key_for"),
           (kabe.provenance, "current_commit")]


def main(argv: list[str]) -> int:
    from doit.cmd_base import ModuleTaskLoader
    from doit.doit_cmd import DoitMain

    counts: collections.Counter = collections.Counter()
    callers: dict[str, list[str]] = collections.defaultdict(list)

    def wrap(mod, name):
        fn = getattr(mod, name)

        @functools.wraps(fn)
        def counted(*args, **kwargs):
            key = f"{mod.__name__}.{name}"
            if name == "load":
                key += f" ({args[0]})"
            counts[key] += 1
            stack = traceback.extract_stack(limit=5)[:-1]
            callers[key].append(" < ".join(f"{f.filename.rsplit('/', 1)[-1]}:{f.lineno}" for f in reversed(stack)))
            return fn(*args, **kwargs)
        setattr(mod, name, counted)

    for mod, name in COUNTED:
        wrap(mod, name)
    dodo = types.ModuleType("dodo")
    dodo.__dict__.update(runpy.run_path("dodo.py"))
    rc = DoitMain(ModuleTaskLoader(dodo)).run(argv)
    print(f"\ndoit {' '.join(argv)}: exit {rc}")
    for key, n in sorted(counts.items()):
        print(f"{n:3d}  {key}")
        for c in callers[key]:
            print(f"       {c}")
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
