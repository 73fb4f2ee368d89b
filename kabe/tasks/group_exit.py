"""`doit build` (every design) exits 1 when a design fails its gate, as `doit build:a build:b` does.

doit runs the group task `build` after its subtasks; when one failed, doit fails the group with
UnmetDependency, a TaskError, and a TaskError makes the whole run exit 2. kabe's exit codes say 2
for "could not run: nothing judged, nothing archived" (README), and CI tells infrastructure trouble
from a failing design by them, so a group whose subtasks were all judged (each failed with a
TaskFailed: a gate failure or an unexpected verdict) must exit 1. doit has no setting for this; the
shim below keeps doit's behaviour for every other error (a subtask that could not run still makes
the group, and the run, an error).
"""

from __future__ import annotations

from doit import runner
from doit.exceptions import TaskFailed, UnmetDependency

_FAILURE_OF = "_kabe_failure"  # the failure doit handed to a node, kept to judge its group


def judged_failures_only(node) -> bool:
    """A group node whose unmet dependencies all failed with a TaskFailed (or are such groups)."""
    bad = list(getattr(node, "bad_deps", ()) or ())
    return bool(bad) and all(isinstance(getattr(n, _FAILURE_OF, None), TaskFailed) for n in bad)


def install() -> None:
    """Patch doit's Runner once (the multiprocess runners inherit it): idempotent."""
    if getattr(runner.Runner._handle_task_error, "_kabe", False):
        return
    original = runner.Runner._handle_task_error

    def _handle_task_error(self, node, base_fail):
        if isinstance(base_fail, UnmetDependency) and node.task.has_subtask and judged_failures_only(node):
            # the group failed because designs failed their gates: a failure (a TaskFailed, which doit's
            # own handler counts as exit 1 unless an error came first), not an error
            base_fail = GroupFailed(base_fail.message)
        setattr(node, _FAILURE_OF, base_fail)
        original(self, node, base_fail)

    _handle_task_error._kabe = True
    runner.Runner._handle_task_error = _handle_task_error


class GroupFailed(TaskFailed):
    """A group task whose subtasks were judged and failed (the verdict table says which)."""
