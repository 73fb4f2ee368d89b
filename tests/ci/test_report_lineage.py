"""The report page tells the base branch's builds (a line) from builds not on it (hollow points)."""

from __future__ import annotations

from kabe.rules import gate
from kabe.records import history
from kabe.page import report, report_plot

from .conftest import record


class _Axes:
    def __init__(self):
        self.lines, self.points = [], []

    def plot(self, xs, ys, **kw):
        self.lines.append((list(xs), list(ys)))
        return [object()]

    def scatter(self, xs, ys, **kw):
        self.points.append((list(xs), list(ys), kw.get("facecolors"), kw.get("label")))


def _entries(commits_luts):
    return [history.Entry(c, "stage2", "open", record(c, lut=lut), gate.Verdict(True)) for c, lut in commits_luts]


def test_base_commits_are_the_line_and_branch_commits_hollow_points():
    commits = ["a" * 40, "b" * 40, "c" * 40, "c" * 40 + "-dirty"]
    pts = [(i, 100 + i, True) for i in range(4)]
    ax = _Axes()
    report_plot.plot_series(ax, pts, commits, {"marker": "o"}, on_base={"a" * 40, "b" * 40})
    assert ax.lines == [([0, 1], [100, 101])]
    assert ax.points == [([2, 3], [102, 103], "none", "not on the base branch")]
    ax = _Axes()
    report_plot.plot_series(ax, pts, commits, {"marker": "o"}, on_base=None)  # no base branch known: one line, as before
    assert ax.lines == [([0, 1, 2, 3], [100, 101, 102, 103])] and ax.points == []


def test_the_page_lists_commits_in_git_order_and_says_which_are_on_the_base_branch():
    entries = _entries([("a" * 40, 1), ("b" * 40, 2), ("c" * 40, 3)])
    html = report.commits_table(entries, {"a" * 40, "b" * 40}, "main")
    assert html.index("a" * 12) < html.index("b" * 12) < html.index("c" * 12)
    assert "<td>" + "c" * 12 + "</td><td>no (another branch)</td>" in html  # not said to be this branch's
    on_here = {"a" * 40, "b" * 40, "c" * 40}
    html = report.commits_table(entries, {"a" * 40, "b" * 40}, "main", on_branch=on_here, current="topic")
    assert "<td>" + "c" * 12 + "</td><td>no (on topic, not on main)</td>" in html
    assert report.branch_note(entries, {"a" * 40}, "main", on_here, "topic") == (
        "3 archived commit(s) in git order: 1 on main (lines), 2 not on it (hollow points: 2 on topic, not on main).")
