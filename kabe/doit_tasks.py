"""kabe's doit tasks, for any project: a project's dodo.py is the one line `from kabe.doit_tasks import *`
(`kabe init` writes it; kabe's own dodo.py is the same line). doit imports the dodo.py from the
project's folder, so the designs and settings read here are that project's (kabe.base.paths).

    doit build:<design> [flow=open|vivado|auto]   verify, synthesize, gate, archive (cache=off: run every tool)
    doit build  (or just `doit`; `-n 2` in parallel) every design; a table of every verdict at the end
    doit sim:<design> [rows=N] [seed=1]           bit-exact verification (no rows: the model's full scale)
    doit sim:<design> ctx=N                       a size per port (what it counts is the model's)
    doit deploy:<design> board=user@host          verify on the board with the archived bitstream
    doit sweep:<design> [clock_period_ns=7,8]     build variants on Dask (cores/<design>/sweep.yaml)
    doit repro:<design> [flow=open]               build HEAD twice from clean checkouts, compare byte for byte
    doit list                                     every task, with what it does
"""

import functools
import sys

from doit import doit_cmd, get_var

from kabe.project import config
from kabe import tasks
from kabe.tasks import group_exit
from kabe.tasks.results import exit_on_user_error, install_interrupt_hook, refuse_unknown_designs
from kabe.tasks.verdict_reporter import VerdictReporter

# A wrong setting: one line, exit 2, before any task. The designs are read once, here; a broken
# design.yaml is said in one line and stops only its own tasks (BROKEN), never `doit list` or the others.
tasks.refuse_unknown_variables(getattr(doit_cmd, "_CMDLINE_VARS", None))  # `flwo=open`: exit 2, not ignored
DESIGNS, BROKEN = tasks.preflight(get_var("flow"), sys.argv[1:])
install_interrupt_hook()  # Ctrl-C: "interrupted; nothing archived", exit 130, no traceback
group_exit.install()  # `doit build` with a design failing its gate: exit 1 (judged), not doit's 2
refuse_unknown_designs(sys.argv[1:])  # `doit build:nosuch`: the known designs, exit 2

# `doit` alone is `doit build`: every design, each judged against its design.yaml's expect_gate
# (a design with expect_gate: fail failing its gate is its expected verdict). `continue`: one design's failure never
# stops the others, with or without -n N. The reporter prints kabe's verdict lines and the table.
DOIT_CONFIG = {
    # doit's state in SQLite, not its default dbm: two doit runs in one checkout at once (two terminals,
    # a sweep beside a build) corrupted the dbm files, and every later doit stopped in a JSON traceback
    "backend": "sqlite3",
    "dep_file": ".doit.sqlite3",
    "default_tasks": ["build"],
    "continue": True,
    "reporter": VerdictReporter,
    "verbosity": 2,
}


def _int_var(name):
    value = get_var(name)
    if value is None:
        return None
    try:
        return int(value)
    except ValueError:
        raise config.ConfigError(f"{name}={value!r} is not a whole number; e.g. {name}=1024") from None


_CACHE_WORDS = {"on": True, "true": True, "yes": True, "1": True, "off": False, "false": False, "no": False, "0": False}


def _cache_var() -> bool:
    """cache=on|off (and the usual spellings of either): any other word is refused, never read as "on"
    (cache=false used to reuse the cache, the opposite of what was asked)."""
    value = get_var("cache", "on")
    word = value.strip().lower()
    if word not in _CACHE_WORDS:
        raise config.ConfigError(f"cache={value!r} is neither on nor off; write cache=off to run every tool")
    return _CACHE_WORDS[word]


@functools.cache
def _commit():
    """The checkout's commit, read once for every task doit defines (a build's archive and a simulation's
    result are named after it)."""
    from kabe.base import provenance

    return provenance.current_commit()


@exit_on_user_error
def task_build():
    """verify, synthesize, gate and archive a design (flow=open|vivado|auto; cache=off runs every tool)"""
    yield from tasks.build_tasks(get_var("flow"), DESIGNS, use_cache=_cache_var(), board_var=get_var("board"),
                                 commit=_commit())
    yield from tasks.broken_tasks(BROKEN, "build")


@exit_on_user_error
def task_sim():
    """bit-exact verification of a design against its golden model (rows=N or ctx=N a port, seed=S)"""
    for design in DESIGNS.values():
        yield tasks.sim_task(design, _int_var("rows"), _int_var("seed") or 1, _int_var("ctx"), commit=_commit)
    yield from tasks.broken_tasks(BROKEN, "sim")


@exit_on_user_error
def task_deploy():
    """push the archived bitstream to the board and verify every row there (board=user@host rows=N)"""
    for design in DESIGNS.values():
        yield tasks.deploy_task(design, get_var("board"), _int_var("rows"), _int_var("seed") or 1)
    yield from tasks.broken_tasks(BROKEN, "deploy")


@exit_on_user_error
def task_sweep():
    """build a design's variants on Dask (sweep.yaml beside the design; key=v1,v2; scheduler=...; workers=N)"""
    overrides = tasks.sweep_overrides(getattr(doit_cmd, "_CMDLINE_VARS", None))  # doit keeps every key=value here
    for design in DESIGNS.values():
        yield tasks.sweep_task(design, get_var("flow"), overrides, get_var("scheduler"), _int_var("workers"))
    yield from tasks.broken_tasks(BROKEN, "sweep")


@exit_on_user_error
def task_report():
    """reports/index.html: metrics over commits, the bandwidth wall, the token budget (self-contained)"""
    return tasks.report_task()


@exit_on_user_error
def task_repro():
    """build a design twice from clean checkouts of HEAD, without the cache, and compare every artifact"""
    for design in DESIGNS.values():
        yield tasks.repro_task(design, get_var("flow"))
    yield from tasks.broken_tasks(BROKEN, "repro")


__all__ = ["DOIT_CONFIG", "task_build", "task_sim", "task_deploy", "task_sweep", "task_report", "task_repro"]
