"""doit task definitions, as data. dodo.py only names the verbs; the dependency facts live here.

Up-to-date rule for a build: it reruns when its content key changes (kabe.cache.cache: any input
file of its FuseSoC targets, a generator, the XDC, a tool version, the flow, kabe's flow code), when
its budgets change (re-gated from the cache), or when the archive for the current commit is missing
(archived from the cache when the key was built before). The key is computed only for the tasks doit
is about to run, and read from its stamp (kabe.cache.key_stamp) when none of the files it was computed
from changed: a no-op runs no FuseSoC.
"""

from __future__ import annotations

import hashlib
import json
import sys

from kabe.project import config, designs
from kabe.base import provenance
from kabe.base.errors import EXIT_COULD_NOT_RUN, UserError
from kabe.store.archive import archive_dir
from kabe.tasks.results import action
from kabe.project import flows as flow_registry


class _build_config_changed:
    """doit's config_changed, with the config computed only when doit checks the task (for the
    tasks it is about to run), not when every task is defined: `doit build:<design>` pays for one
    design's key, not six. The config is the build's content key (kabe.cache.cache: every input
    file, generator, constraint, tool version and kabe's flow code), the budgets (an edit re-gates)
    and the archive name (a new commit archives again, from the cache)."""

    def __init__(self, config_fn):
        self.config_fn = config_fn
        self.digest = None

    def configure_task(self, task):
        task.value_savers.append(lambda: {"_kabe_build": self.digest})

    def __call__(self, task, values):
        try:
            config_now = self.config_fn()
        except (UserError, OSError):  # a broken core file, a missing XDC: not up to date; the build says why
            return False
        self.digest = hashlib.md5(json.dumps(config_now, sort_keys=True, default=str).encode()).hexdigest()
        return values.get("_kabe_build") == self.digest


def preflight(flow_request: str | None, argv: list[str] | None = None
              ) -> tuple[dict[str, designs.Design], dict[str, designs.DesignError]]:
    """Check the settings and every design.yaml before doit builds a task from them, and return the
    designs that load and those that do not. A wrong setting is one line and exit 2 (kabe.base.errors),
    not doit's traceback from inside a task. A broken design.yaml stops only itself: it is said in
    one line here, and its tasks (broken_task) fail with that line, exit 2, when they run; `doit list`
    and every other design's tasks go on."""
    try:
        config.resolve_flow(flow_request)
    except UserError as e:
        print(f"kabe: {e}", file=sys.stderr)
        raise SystemExit(EXIT_COULD_NOT_RUN) from None
    good, broken = designs.scan()
    # Said up front when no design was named (`doit`, `doit build`, `doit list`); a task named
    # explicitly (`doit build:x`) says its own design's error when it runs, and nobody else's.
    if not any(":" in a and not a.startswith("-") and "=" not in a for a in argv or []):
        for name, error in broken.items():
            print(f"kabe: design {name} cannot be read (its tasks fail, the other designs go on): {error}",
                  file=sys.stderr)
    return good, broken


def broken_tasks(broken: dict[str, designs.DesignError], verb: str):
    """One task per design whose design.yaml does not load, under the same name a good one would
    have (`doit build:<design>` finds it): it fails with the design's one-line error (exit 2)."""
    for name, error in broken.items():
        if designs.NAME_PATTERN.fullmatch(name):  # a folder that is no design name gets no task name
            yield broken_task(name, error, verb)


def broken_task(name: str, error: designs.DesignError, verb: str) -> dict:
    def refuse():
        if verb == "build":  # a build that could not run is on the report page with its reason
            _note_could_not_run(name, str(error))
        raise error

    return {
        "name": name,
        "doc": f"cannot be read: {error}",
        "actions": [action(refuse, f"{verb} {name}")],
        "uptodate": [False],
        "verbosity": 2,
    }


def _note_could_not_run(name: str, reason: str) -> None:
    """kabe.records.could_not_run's note for a design whose design.yaml does not load (the flow it would have
    built with: [tool.kabe] flow); a note that cannot be written costs the verdict nothing."""
    from kabe.base.paths import REPORTS
    from kabe.records import could_not_run

    try:
        flow = config.resolve_flow(None)
        try:
            commit = provenance.current_commit().archive_name
        except Exception:  # noqa: BLE001 - no git: the note names no commit
            commit = ""
        could_not_run.note(REPORTS, name, flow, reason, commit)
    except Exception:  # noqa: BLE001 - reports/ unwritable: the build's own line still says it
        pass


def build_tasks(flow_request: str | None, all_designs: dict | None = None, use_cache: bool = True,
                board_var: str | None = None, commit: provenance.Commit | None = None):
    """build:<design> for every design; the flow and the commit are looked up once for all. board_var: the
    command line's board= (the deploy host): a build that is given a board profile's name there says so."""
    flow = config.resolve_flow(flow_request)
    commit = commit or provenance.current_commit()
    for design in (designs.scan()[0] if all_designs is None else all_designs).values():
        yield build_task(design, design.own_flow or flow, commit, use_cache,  # an HLS kernel or link: its own
                         board_note=board_var_note(design, board_var))


def _build_config(design: designs.Design, flow: str, commit: provenance.Commit) -> dict:
    from kabe.cache import key_stamp  # not kabe.build: the check must stay cheap (no rich, no flows)

    # The key without the simulation check's size: that number lives in kabe/build/__init__.py, which is
    # itself hashed into the key, so a change of it still makes the build out of date. From the stamp of
    # the last key when none of its inputs changed (no FuseSoC: kabe.cache.key_stamp).
    return {"flow": flow, "key": key_stamp.key_for(design, flow, sim_check_rows=None).key,
            "budgets": design.budgets_for(flow), "archive": commit.archive_name}


def board_var_note(design: designs.Design, board_var: str | None) -> str | None:
    """`doit build:stage4 board=kv260`: board= is the deploy host (doit deploy), and a design's board is its
    design.yaml's `board:`, so the build is for that board, not kv260. A board= that names another board's
    profile gets one line saying so and which designs build for that board (None: nothing to say)."""
    if not board_var or "@" in board_var:
        return None
    from kabe import boards

    try:
        named = boards.get(board_var)
    except boards.BoardError:
        return None  # a host name (an ssh alias), not a board
    if named.key == design.board.key:
        return None
    on_it = sorted(d.name for d in designs.scan()[0].values() if d.board.key == named.key)
    which = (f"the designs built for it: {', '.join(on_it)} (doit build:{on_it[0]})" if on_it else
             f"no design names it yet: add `board: {named.key}` to a design.yaml")
    return (f"kabe: board={board_var} names the deploy host (doit deploy), not the board a build is for; "
            f"{design.name} builds for its design.yaml's board, {design.board.name} ({design.board.key}). "
            f"{named.name}: {which}")


def build_task(design: designs.Design, flow: str, commit: provenance.Commit, use_cache: bool = True,
               board_note: str | None = None) -> dict:
    def build_one():
        from kabe.build import run_outcome  # here, not at definition: defining the tasks loads no rich or flows

        if board_note:  # said when the build runs, so a deploy with an ssh alias named like a board is quiet
            print(board_note, file=sys.stderr)

        # the Design and the commit this task was defined with: the archive it writes is the target doit checks
        return run_outcome(design, flow, use_cache=use_cache, commit=commit)

    target = archive_dir(commit, design.name, flow) / "metrics.json"
    return {
        "name": design.name,
        "doc": f"verify, synthesize ({flow} flow), gate and archive {design.name} ({design.verify.label}, {design.ports} {design.board.memory_ports.name}(s) of {design.board.name})",
        "actions": [action(build_one, f"build {design.name}")],
        "targets": [str(target)],
        "uptodate": [_build_config_changed(lambda: _build_config(design, flow, commit)) if use_cache else False],
        "verbosity": 2,
    }


def sim_task(design: designs.Design, rows: int | None, seed: int, ctx: int | None = None, *,
             commit=None) -> dict:
    """rows: the model's size, total over the ports; ctx: a size per port (a context length, say), the same on
    every port (what a size counts is the model's: kabe.verify.Declares.size_name). commit(): the commit doit
    read once for all its tasks."""
    def sim_one():
        from kabe.sim import runner  # here, not at definition: defining the tasks loads no numpy

        return runner.main(design, rows, seed, commit=commit() if commit else None)

    if ctx is not None:
        rows = ctx * design.ports
    return {
        "name": design.name,
        "doc": f"stream whole frames through {design.name} in Verilator and compare every word with numpy "
               f"(rows=N: the model's size over all ports, or ctx=N a port; seed=S)",
        "actions": [action(sim_one, f"sim {design.name}")],
        "uptodate": [False],  # asked for explicitly: always runs
        "verbosity": 2,
    }


def deploy_task(design: designs.Design, board: str | None, rows: int | None, seed: int) -> dict:
    def deploy_one():
        from kabe.deploy import cli as deploy_cli

        return deploy_cli.main(design.name, board, rows, seed)

    return {
        "name": design.name,
        "doc": (f"write {design.name}'s archived .pdi to the card's flash with ami_tool on its host "
                f"(board=user@host); no on-card check yet" if design.board.program == "ami_tool" else
                f"push {design.name}'s archived .bit/.hwh to the board (board=user@host) and verify every row there"),
        "actions": [action(deploy_one, f"deploy {design.name}")],
        "uptodate": [False],
        "verbosity": 2,
    }


def report_task() -> dict:
    def write_page() -> int:
        from kabe.page.report import build_report  # here: it loads matplotlib, which no other verb needs

        print(f"wrote {build_report()}")
        return 0

    return {
        "basename": "report",
        "doc": "reports/index.html: every archived build's metrics over commits, the wall and the token budget",
        "actions": [action(write_page, "report")],
        "uptodate": [False],
        "verbosity": 2,
    }


def repro_task(design: designs.Design, flow: str | None) -> dict:
    def repro_one():
        from kabe.build import repro

        return repro.main(design.name, flow or flow_registry.DEFAULT)

    return {
        "name": design.name,
        "doc": f"build {design.name} twice from clean checkouts of HEAD without the cache and compare every "
               f"artifact byte for byte (flow=open|vivado); writes repro.json in the archive",
        "actions": [action(repro_one, f"repro {design.name}")],
        "uptodate": [False],
        "verbosity": 2,
    }


# Every doit variable a kabe task reads (kabe.doit_tasks); a sweep also takes its settings as key=v1,v2.
DOIT_VARIABLES = ("board", "cache", "ctx", "flow", "rows", "scheduler", "seed", "workers")


def refuse_unknown_variables(cmdline_vars: dict[str, str] | None) -> None:
    """A doit variable no kabe task reads is one line and exit 2 (`flwo=open` was ignored: the build ran
    on the default flow and said nothing)."""
    from kabe.sweep.spec import LIST_KEYS, PREFIXES, SCALAR_KEYS

    unknown = [k for k in (cmdline_vars or {}) if k not in DOIT_VARIABLES and k not in SCALAR_KEYS
               and k not in LIST_KEYS and not k.startswith(PREFIXES)]
    if unknown:
        print(f"kabe: unknown doit variable {unknown[0]!r}={cmdline_vars[unknown[0]]!r}; kabe's are "
              f"{', '.join(DOIT_VARIABLES)}, and for a sweep its settings ({', '.join(SCALAR_KEYS + LIST_KEYS)}, "
              f"{', '.join(p + '<name>' for p in PREFIXES)})", file=sys.stderr)
        raise SystemExit(EXIT_COULD_NOT_RUN)


def sweep_overrides(cmdline_vars: dict[str, str] | None) -> list[str]:
    """The `key=v1,v2` doit variables that name sweep settings (kabe.sweep.spec), as overrides."""
    from kabe.sweep.spec import LIST_KEYS, PREFIXES, SCALAR_KEYS

    return [f"{k}={v}" for k, v in (cmdline_vars or {}).items()
            if k in SCALAR_KEYS or k in LIST_KEYS or k.startswith(PREFIXES)]


def sweep_task(design: designs.Design, flow_request: str | None, overrides: list[str], scheduler: str | None,
               workers: int | None) -> dict:
    def sweep_one():
        from kabe.sweep import run

        return run.main(design.name, flow_request, overrides, scheduler, workers)

    return {
        "name": design.name,
        "doc": f"build variants of {design.name} on Dask (cores/{design.name}/sweep.yaml; key=v1,v2 overrides; "
               f"scheduler=tls://host:port, docs/sweeps.md; workers=N)",
        "actions": [action(sweep_one, f"sweep {design.name}")],
        "uptodate": [False],
        "verbosity": 2,
    }
