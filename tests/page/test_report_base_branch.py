"""Commits of main that origin/main lacks are named truthfully on the page (issue 44 item 3): they are on
main here, not pushed, not "this branch" as if another branch were checked out."""

from __future__ import annotations

from kabe.page import report

from records_fixtures import git, make_cores, record, two_commit_repo, write_archive


def test_local_commits_on_main_that_origin_lacks_are_said_so(tmp_path):
    repo, shas = two_commit_repo(tmp_path)
    git(repo, "branch", "-M", "main")
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(repo, "remote", "add", "origin", str(remote))
    git(repo, "push", "-q", "origin", f"{shas[0]}:refs/heads/main")  # origin has commit 0 only
    git(repo, "fetch", "-q", "origin")
    reports = tmp_path / "reports"
    for sha in shas:
        write_archive(reports, record(sha))
    write_archive(reports, dict(record(shas[1]), dirty=True), commit=f"{shas[1]}-dirty")
    page = report.build_report(reports, repo, make_cores(tmp_path), sections=()).read_text()
    assert f"<td>{shas[0][:12]}</td><td>yes</td>" in page
    assert f"<td>{shas[1][:12]}</td><td>no (on main here only, not on origin/main: not pushed)</td>" in page
    assert f"<td>{shas[1][:12]}-dirty</td><td>no (a dirty tree)</td>" in page
    assert "this branch" not in page
    assert ("3 archived commit(s) in git order: 1 on origin/main (lines), 2 not on it (hollow points: "
            "1 on main here only, not on origin/main: not pushed; 1 a dirty tree).") in page
