"""kabe's exit codes through doit, and no traceback for a mistake the user can fix.

doit's own process exit codes are 0 (every task succeeded), 1 (a task *failed*: TaskFailed),
2 (a task *could not run*: TaskError, which outranks a failure) and 3 (doit's own usage errors,
such as an option it does not know). kabe maps onto them:

    kabe 0 pass (as design.yaml expects)  -> the action returns its verdict as task values: doit 0
    kabe 1 gate failed                    -> GateFailed (a TaskFailed):                     doit 1
    kabe 2 could not run                  -> CouldNotRun (a TaskError):                      doit 2
    kabe 130 interrupted                  -> KeyboardInterrupt, turned into exit 130 by the hook below

The action has printed kabe's own verdict line by then; VerdictReporter (kabe.tasks.verdict_reporter)
prints it instead of doit's "Python Task failed: '<function ... <lambda>>' returned False".

A user's mistake found while doit loads the tasks (flow=bogus, rows=abc, an unknown design in
`doit build:nosuch`, a broken design.yaml) stops doit with one line and exit 2, before any task runs.
"""

from __future__ import annotations

import functools
import inspect
import os
import re
import sys
import traceback
from typing import Callable, Iterable

from doit.exceptions import TaskError, TaskFailed

from kabe.base.errors import EXIT_COULD_NOT_RUN, EXIT_GATE_FAILED, EXIT_INTERRUPTED, EXIT_PASS, UserError, bug_message
from kabe.rules.outcome import Outcome
from kabe.base.paths import CORES

# Whether this process already told the user it was interrupted (the build says it more precisely).
_interrupt_said = False


class GateFailed(TaskFailed):
    """The gate did not say what design.yaml expects (doit exit 1). `verdict`: Outcome.as_dict()."""

    def __init__(self, line: str, verdict: dict | None = None):
        super().__init__(line)
        self.verdict = verdict or {}


class CouldNotRun(TaskError):
    """Missing tool, bad input, a bug in kabe (doit exit 2). `verdict`: Outcome.as_dict() when known."""

    def __init__(self, line: str, verdict: dict | None = None):
        super().__init__(line)
        self.verdict = verdict or {}


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def action(fn: Callable[[], int | Outcome], what: str) -> Callable[[], object]:
    """A doit python-action around a kabe entry point that returns an exit code or an Outcome.
    `what` names the task in the lines printed for it ("build mydesign")."""

    def run():
        global _interrupt_said
        try:
            result = fn()
        except UserError as e:  # entry points catch their own; this is the net under them
            _say(f"kabe {what}: {e}")
            return CouldNotRun(f"kabe {what}: {e}")
        except KeyboardInterrupt:
            if not _interrupt_said:
                _say(f"kabe {what}: interrupted; nothing archived")
                _interrupt_said = True
            raise
        except Exception:  # noqa: BLE001 - a bug in kabe: the traceback is what the report needs
            traceback.print_exc()
            _say(f"kabe {what}: {bug_message()}")
            return CouldNotRun(f"kabe {what}: {bug_message()}")
        if isinstance(result, Outcome):
            code, line, values = result.code, f"kabe: {result.line}", result.as_dict()
        else:
            code, line, values = int(result), f"kabe {what}: exit {int(result)}", {"code": int(result)}
        if code == EXIT_PASS:
            return values  # doit keeps these as the task's values: the verdict table reads them
        if code == EXIT_INTERRUPTED:
            _interrupt_said = True  # the entry point printed "interrupted; nothing archived"
            raise KeyboardInterrupt
        if code == EXIT_GATE_FAILED:
            return GateFailed(line, values)
        return CouldNotRun(line, values)

    run.__name__ = run.__qualname__ = f"kabe {what}"  # what doit would show, if it showed a name
    return run


def _excepthook(exc_type, exc, tb) -> None:
    """Ctrl-C anywhere in doit (a build, an up-to-date check): one line and exit 130, no traceback.
    doit has closed its dependency file by the time an exception reaches the top."""
    if issubclass(exc_type, KeyboardInterrupt):
        if not _interrupt_said:
            _say("kabe: interrupted; nothing archived for builds that had not finished")
        sys.stdout.flush()
        os._exit(EXIT_INTERRUPTED)  # a clean 130, not death by SIGINT (which a parent sees as -2)
    sys.__excepthook__(exc_type, exc, tb)


def install_interrupt_hook() -> None:
    sys.excepthook = _excepthook


def exit_on_user_error(fn: Callable) -> Callable:
    """For dodo.py's task creators: a UserError while doit loads the tasks is one line and exit 2."""

    @functools.wraps(fn)  # doit orders task creators by their source line: wraps lets it find fn's
    def wrapper(*args, **kwargs):
        try:
            result = fn(*args, **kwargs)
            if inspect.isgenerator(result):  # a generator raises while it runs: run it here
                return (task for task in list(result))  # doit takes a generator or a dict, not a list
            return result
        except UserError as e:
            _say(f"kabe: {e}")
            raise SystemExit(EXIT_COULD_NOT_RUN) from None

    return wrapper


_TASK_ARG = re.compile(r"^(?P<base>[a-z_]+):(?P<name>.+)$")


def unknown_designs(argv: Iterable[str], basenames: Iterable[str] = ("build", "sim", "deploy"),
                    known: Iterable[str] | None = None) -> str | None:
    """The message for `doit build:nosuch` (doit would say "invalid parameter", exit 3), or None."""
    if known is None:  # the design names alone: reading every design.yaml is the tasks' job
        known = [p.parent.name for p in CORES.glob("*/design.yaml")]
    basenames, known = set(basenames), sorted(known)
    for arg in argv:
        m = _TASK_ARG.match(arg)
        if m and m.group("base") in basenames and m.group("name") not in known:
            return (f"unknown design {m.group('name')!r} in {arg!r}: no cores/{m.group('name')}/design.yaml; "
                    f"known designs: {', '.join(known)}")
    return None


def refuse_unknown_designs(argv: Iterable[str]) -> None:
    """Before doit looks for the task: one line listing the designs, exit 2."""
    msg = unknown_designs(argv)
    if msg:
        _say(f"kabe: {msg}")
        raise SystemExit(EXIT_COULD_NOT_RUN)
