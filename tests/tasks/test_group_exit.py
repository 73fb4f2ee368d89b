"""`doit build` exits 1 when a design fails its gate (judged), 2 only when one could not run.

doit fails a group task whose subtask failed with UnmetDependency, a TaskError, which made `doit build`
exit 2 ("could not run") for a design that was judged and archived (red team 3b, repro 13), while
`doit build:a build:b` exited 1. Checked with doit's own runner on plain Python tasks (no build needed):
kabe.tasks.group_exit is a patch of that runner."""

import pytest
from doit.cmd_base import ModuleTaskLoader
from doit.doit_cmd import DoitMain
from doit.exceptions import TaskError, TaskFailed

from kabe.tasks import group_exit


def _run(outcomes: dict, tmp_path, *args) -> int:
    def task_build():
        for name, result in outcomes.items():
            yield {"name": name, "actions": [lambda r=result: r], "verbosity": 0}

    config = {"dep_file": str(tmp_path / ".doit.db"), "continue": True, "verbosity": 0}
    return DoitMain(ModuleTaskLoader({"task_build": task_build, "DOIT_CONFIG": config})).run(list(args) or ["build"])


@pytest.mark.parametrize("parallel", [(), ("-n", "2")])
def test_a_design_failing_its_gate_fails_the_group_with_exit_1(tmp_path, parallel):
    group_exit.install()
    group_exit.install()  # idempotent
    outcomes = {"a": None, "b": TaskFailed("gate FAIL")}
    assert _run(outcomes, tmp_path, *parallel, "build") == 1
    assert _run(outcomes, tmp_path, "build:a", "build:b") == 1  # the same as naming each design


def test_a_design_that_could_not_run_still_makes_the_run_an_error(tmp_path):
    group_exit.install()
    assert _run({"a": TaskFailed("gate FAIL"), "b": TaskError("Yosys missing")}, tmp_path) == 2
    assert _run({"a": None}, tmp_path) == 0
