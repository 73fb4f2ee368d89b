"""doit's console reporter with kabe's words: the verdict line instead of doit's failure line, and a
final table of every design's verdict when more than one design was asked for (`doit build`).

Set as DOIT_CONFIG["reporter"] in dodo.py (`--reporter` on the command line still picks another).
It runs in doit's main process; with `-n N` the builds run in worker processes and their verdicts
come back as task values (a success) or inside the GateFailed/CouldNotRun (a failure), so the table
is the same with or without `-n`. An up-to-date build shows the verdict doit saved when it last ran,
and its line says the verdict again from its archive (the metrics.json doit's target names, read and
re-gated as every archived record is: kabe.records.load), so a no-op rerun says what it found.
"""

from __future__ import annotations

from doit.reporter import ConsoleReporter

from kabe.tasks.group_exit import GroupFailed
from kabe.tasks.results import CouldNotRun, GateFailed

ARCHIVED = "(up to date; from its archive)"

GROUP = "build"


class VerdictReporter(ConsoleReporter):
    desc = "console output with kabe's verdict lines and a final table of build verdicts"

    def __init__(self, outstream, options):
        super().__init__(outstream, options)
        self._wanted: list[str] = []  # build:<design> tasks this run was asked for, in order
        self._seen: dict[str, tuple[str, object]] = {}  # task name -> (how, task or failure)

    def initialize(self, tasks, selected_tasks):
        wanted = []
        for name in selected_tasks:
            task = tasks.get(name)
            subtasks = task.task_dep if task is not None and task.has_subtask else [name]
            wanted += [n for n in subtasks if n.startswith(GROUP + ":") and n not in wanted]
        self._wanted = wanted

    def add_failure(self, task, fail):
        self._seen[task.name] = ("failed", fail)
        if isinstance(fail, (GateFailed, CouldNotRun, GroupFailed)):
            return  # the action printed kabe's verdict line already (the table ends a group); doit's would repeat it
        super().add_failure(task, fail)

    def _write_failure(self, result, write_exception=True):
        """doit's own failures (a file_dep that vanished, an unmet dependency): one kabe-style line."""
        fail = result["exception"]
        lines = fail.message.strip().splitlines()
        first = lines[0].removeprefix("ERROR: ") if lines else fail.get_name()
        self.write(f"kabe: {result['task'].name}: could not run ({fail.get_name()}): {first}\n")
        if write_exception and fail.traceback:  # an exception below doit: a bug, keep where it happened
            self.write("".join(fail.traceback))

    def add_success(self, task):
        self._seen[task.name] = ("ran", task)

    def skip_uptodate(self, task):
        super().skip_uptodate(task)
        self._seen[task.name] = ("up to date", task)  # doit fills task.values right after this call
        if task.name.startswith(GROUP + ":") and task.targets:
            self.write(archived_line(task.targets[0]) + "\n")

    def complete_run(self):
        super().complete_run()
        if len(self._wanted) > 1:
            self.write(verdict_table([self._row(name) for name in self._wanted]))

    def _row(self, name: str) -> dict:
        design = name.split(":", 1)[1]
        how, obj = self._seen.get(name, ("not run", None))
        values = dict(getattr(obj, "values", None) or getattr(obj, "verdict", None) or {})
        row = {"design": design, "flow": values.get("flow", "-"), "verdict": values.get("verdict", "-"),
               "expected": values.get("expected", "-"), "how": how, "reason": values.get("reason", "")}
        if how == "failed" and not values:  # a doit-level failure (a missing file_dep, say)
            row["verdict"], row["reason"] = "could not run", obj.message.strip().splitlines()[0]
        if how == "failed" and isinstance(obj, GateFailed):
            row["result"] = "UNEXPECTED"
        elif how == "failed":
            row["result"] = "could not run"
        elif how == "not run":
            row["result"] = "not run (an earlier error or Ctrl-C stopped doit)"
        else:
            row["result"] = "ok" + (" (up to date)" if how == "up to date" else "")
        return row


def archived_line(metrics_json, cores_root=None) -> str:
    """`kabe build mydesign (open flow, 1a2b3c4d5e6f): gate PASS (up to date; from its archive)`: the
    verdict recomputed from the archived record (never its recorded `passed`), or why it cannot be."""
    from pathlib import Path

    from kabe.project import designs
    from kabe.rules import outcome
    from kabe.records import load

    path = Path(metrics_json)
    where = {} if cores_root is None else {"cores_root": Path(cores_root)}
    checked = load.checked(path, **where)
    if isinstance(checked, load.Invalid):
        return f"kabe build: {path}: the archive cannot be read again: {checked.reason}"
    try:
        expected = load.design_for(checked.record, **where).expect_gate
    except designs.DesignError as e:  # checked() judged it, so the design loads; said if it no longer does
        return f"kabe build: {path}: {e}"
    record = {**checked.record, "_archive": str(path.parent)}
    return f"kabe build {outcome.from_record(record, expected, checked.verdict).line} {ARCHIVED}"


def verdict_table(rows: list[dict]) -> str:
    """Plain text: it goes to logs as often as to terminals."""
    head = ("design", "flow", "gate", "expected", "result", "why")
    lines = [(r["design"], r["flow"], r["verdict"].upper() if r["verdict"] == "fail" else r["verdict"],
              r["expected"], r["result"], r["reason"] if r["result"] != "ok" or r["verdict"] == "fail" else "")
             for r in rows]
    widths = [max(len(str(x[i])) for x in [head, *lines]) for i in range(len(head) - 1)]
    out = ["", "kabe: verdicts"]
    for cells in [head, *lines]:
        out.append("  " + "  ".join(str(c).ljust(w) for c, w in zip(cells, widths)) + "  " + str(cells[-1]))
    good = sum(r["result"].startswith("ok") for r in rows)
    out.append(f"kabe: {good} of {len(rows)} designs gave the verdict design.yaml expects"
               + ("" if good == len(rows) else "; the others are marked above"))
    return "\n".join(line.rstrip() for line in out) + "\n"
