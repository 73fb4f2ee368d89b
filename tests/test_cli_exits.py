"""Exits a new user meets (issue 44): a verb that cannot write where it must (a read-only reports/, a
full disk) is one line naming the folder, exit 2, never a traceback calling it kabe's bug."""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys
from pathlib import Path


REPO = Path(__file__).resolve().parent.parent


def _project(tmp_path: Path) -> Path:
    repo = tmp_path / "mine"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, check=True)
    (repo / "pyproject.toml").write_text('[tool.kabe]\nflow = "open"\n')
    (repo / "reports").mkdir()
    return repo


def _read_only_mount_works() -> bool:
    return shutil.which("unshare") is not None and subprocess.run(
        ["unshare", "-rm", "sh", "-c", "mount -t tmpfs -o ro none /mnt 2>/dev/null || mount -t tmpfs -o ro none /tmp"],
        capture_output=True).returncode == 0


def test_kabe_report_on_a_read_only_reports_folder_is_one_line_exit_2(tmp_path, monkeypatch):
    repo = _project(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("KABE_PROJECT", None)
    if _read_only_mount_works():  # the real thing: reports/ on a read-only file system (root ignores chmod)
        cmd = ["unshare", "-rm", "sh", "-c", f'mount -t tmpfs -o ro none reports && exec "{sys.executable}" -m kabe.cli report']
        r = subprocess.run(cmd, cwd=repo, env=env, capture_output=True, text=True, timeout=300)
        out, code = r.stderr, r.returncode
    else:  # no mount namespace here: the same error raised where kabe writes
        from kabe import cli
        from kabe.store import archive

        def read_only(*a, dir=None, **kw):
            raise OSError(errno.EROFS, "Read-only file system", f"{dir}/.site.tmp-1-x")

        monkeypatch.setattr(archive.tempfile, "mkdtemp", read_only)
        monkeypatch.chdir(repo)
        import io
        from contextlib import redirect_stderr

        err = io.StringIO()
        with redirect_stderr(err):
            code = cli.main(["report"])
        out = err.getvalue()
    assert code == 2 and "Traceback" not in out and "internal error" not in out, out
    assert out.strip().splitlines() == [out.strip()], out  # one line
    assert out.startswith(f"kabe report: cannot write {repo / 'reports'}: Read-only file system; make that folder "
                          f"writable"), out


def test_a_bug_that_is_an_os_error_is_still_called_a_bug(monkeypatch, capsys):
    """Only the errno values that mean 'cannot write here' are the user's; any other OSError keeps its
    traceback and says it is kabe's bug."""
    from kabe import cli

    def broken(args):
        raise OSError(errno.EBADF, "Bad file descriptor")

    import argparse  # the verb's function is bound when the parser is built: swap it after parsing

    orig = argparse.ArgumentParser.parse_known_args

    def parse(self, args=None, namespace=None):
        ns, extra = orig(self, args, namespace)
        if getattr(ns, "cmd", None) == "init":
            ns.fn = broken
        return ns, extra

    monkeypatch.setattr(argparse.ArgumentParser, "parse_known_args", parse)
    code = cli.main(["init"])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" in err and "internal error" in err
