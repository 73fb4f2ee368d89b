"""Suite-wide policy: in CI (CI=true) a skipped test is a failure unless tests/skip_allowlist.txt
allows its reason, with a written why. A skip that hides a missing tool, a design that stopped
loading or a dependency that broke would otherwise turn a red run green.

Outside CI skips stay skips (a developer's machine may lack sshd or Chromium)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ALLOWLIST = Path(__file__).with_name("skip_allowlist.txt")
# The suite is this checkout's, whatever the shell says: a KABE_PROJECT left set would make every kabe the
# tests start in a throwaway copy or clone work on that project instead (kabe.base.paths), the real one included.
os.environ.pop("KABE_PROJECT", None)


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


# Read once, at the start: each test runs without the pipeline's variables (below), the policy still applies.
IN_CI = in_ci()
# The CI's own variables: kabe reads them to tell a change's pipeline from the default branch's (CI=true with
# none of GitHub's or GitLab's is an unknown CI, judged as a change). A test judges the repository it made,
# not the pipeline the suite happens to run in; a test about pipelines sets the variables it means.
PIPELINE_VARS = ("CI", "GITHUB_ACTIONS", "GITHUB_EVENT_NAME", "GITHUB_EVENT_PATH", "GITHUB_REF", "GITHUB_BASE_REF",
                 "GITHUB_HEAD_REF", "GITHUB_STEP_SUMMARY", "GITLAB_CI", "CI_MERGE_REQUEST_IID",
                 "CI_MERGE_REQUEST_TARGET_BRANCH_NAME", "CI_COMMIT_BRANCH", "CI_DEFAULT_BRANCH")


@pytest.fixture(autouse=True)
def outside_any_pipeline(monkeypatch):
    for var in PIPELINE_VARS:
        monkeypatch.delenv(var, raising=False)


def allowlist(path: Path = ALLOWLIST) -> list[tuple[str, str]]:
    """[(text in the skip reason, why it is allowed)]; an entry without a why is refused."""
    out = []
    for n, line in enumerate(path.read_text().splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        pattern, sep, why = line.partition("|")
        if not sep or not pattern.strip() or not why.strip():
            raise pytest.UsageError(f"{path}:{n}: an allow-list entry is '<text in the skip reason> | <why>'")
        out.append((pattern.strip(), why.strip()))
    return out


def skip_reason(report) -> str:
    lr = report.longrepr
    if isinstance(lr, tuple) and len(lr) == 3:
        return str(lr[2]).removeprefix("Skipped: ")
    return str(lr)


def unallowed(reason: str, entries: list[tuple[str, str]]) -> bool:
    return not any(pattern in reason for pattern, _ in entries)


_unallowed_collect: list[str] = []


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    if IN_CI and rep.skipped and not hasattr(rep, "wasxfail"):
        reason = skip_reason(rep)
        if unallowed(reason, allowlist()):
            rep.outcome = "failed"
            rep.longrepr = (f"skipped in CI, and the reason is not on tests/skip_allowlist.txt: {reason}\n"
                            f"Fix what makes it skip, or allow it there with a line '<text> | <why>'.")


def pytest_collectreport(report):
    if IN_CI and report.skipped and unallowed(skip_reason(report), allowlist()):
        _unallowed_collect.append(f"{report.nodeid}: {skip_reason(report)}")


def pytest_terminal_summary(terminalreporter):
    for line in _unallowed_collect:
        terminalreporter.write_line(f"FAILED (skipped module in CI, not allow-listed) {line}", red=True)


def pytest_sessionfinish(session, exitstatus):
    if _unallowed_collect and session.exitstatus == 0:
        session.exitstatus = 1
