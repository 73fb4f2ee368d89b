"""kill -9 at 10 moments of an archive write (kabe.store.archive.write_atomic replacing an existing
archive), then a rerun: no leftover folder, and the archive equal to a clean write's.

The writer is a real process killed with SIGKILL. To make each moment exact (not a race with a timer),
the child announces the moment on stdout and blocks on stdin there; the test kills it while it waits.
The moments are reached through the functions write_atomic calls, wrapped in the child only.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from kabe.store.archive import write_atomic

ROOT = Path(__file__).resolve().parents[2]
FILES = 4

CHILD = textwrap.dedent("""
    import os, shutil, sys, tempfile
    from pathlib import Path
    from kabe.store import archive, safe_fs
    dest, stop = Path(sys.argv[1]), int(sys.argv[2])
    step = [0]

    def point(label):
        step[0] += 1
        if step[0] == stop:
            print(label, flush=True)
            sys.stdin.read()  # killed here

    real_recover, real_mkdtemp, real_rename, real_rmtree = (archive.recover_leftovers, tempfile.mkdtemp, os.rename,
                                                             shutil.rmtree)
    def recover(*a, **k):
        point("before the leftovers of others are recovered")
        return real_recover(*a, **k)
    def mkdtemp(*a, **k):
        out = real_mkdtemp(*a, **k)
        point("the temp folder made, empty")
        return out
    renames = [0]
    def rename(src, dst):
        renames[0] += 1
        if renames[0] == 1:
            point("every file written, before the old archive is moved aside")
        real_rename(src, dst)
        point("between the two renames (the final name missing)" if renames[0] == 1
              else "the new archive in place, the old one not yet removed")
    def rmtree(path, *a, **k):
        first = sorted(Path(path).rglob("*"))[0]
        first.unlink()
        point("half-way through removing the old archive")
        return real_rmtree(path, *a, **k)
    archive.recover_leftovers, tempfile.mkdtemp, os.rename, shutil.rmtree = recover, mkdtemp, rename, rmtree

    def writer(i):
        def write(f):
            f.write(b"new %d, first half\\n" % i)
            f.flush()
            point(f"file {i} half written")
            f.write(b"new %d, second half\\n" % i)
        return write

    archive.write_atomic(dest, {f"f{i}.txt": writer(i) for i in range(%(files)d)} | {"sub/deep.txt": "deep\\n"})
    print("finished", flush=True)
""".replace("%(files)d", str(FILES)))


def new_version() -> dict:
    return {**{f"f{i}.txt": f"new {i}, first half\nnew {i}, second half\n" for i in range(FILES)},
            "sub/deep.txt": "deep\n"}


def old_version() -> dict:
    return {"f0.txt": "old\n", "old-only.txt": "gone after the replace\n"}


def contents(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def kill_at(dest: Path, moment: int) -> str:
    """Start a writer of the new version, kill -9 it at `moment`; what it said it was doing."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1"}
    proc = subprocess.Popen([sys.executable, "-c", CHILD, str(dest), str(moment)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, env=env)
    said = proc.stdout.readline().strip()
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    return said


@pytest.fixture()
def clean_write(tmp_path) -> dict[str, bytes]:
    dest = write_atomic(tmp_path / "clean" / "reports" / ("ab" * 20) / "stage2" / "open", new_version())
    return contents(dest)


MOMENTS = range(1, 11)


@pytest.mark.parametrize("moment", MOMENTS)
def test_kill_9_then_a_rerun_leaves_no_debris_and_the_clean_archive(tmp_path, clean_write, moment):
    design_dir = tmp_path / "reports" / ("ab" * 20) / "stage2"
    dest = write_atomic(design_dir / "open", old_version())
    said = kill_at(dest, moment)
    assert said and said != "finished", f"moment {moment} was not reached"
    leftovers = sorted(p.name for p in design_dir.iterdir() if p.name != "open")
    print(f"moment {moment} ({said}): left {leftovers or 'nothing'}; final name "
          f"{'present' if dest.exists() else 'missing'}")
    write_atomic(dest, new_version())  # the rerun
    assert sorted(p.name for p in design_dir.iterdir()) == ["open"]  # no .open.tmp-*, no .open.old-*
    assert contents(dest) == clean_write


def test_an_old_archive_whose_final_name_is_missing_is_put_back_by_the_next_write(tmp_path):
    """Killed between the two renames: the complete previous archive sits in .open.old-<pid>; the next
    archive write in that folder (another kind) puts it back under its name."""
    design_dir = tmp_path / "reports" / ("ab" * 20) / "stage2"
    dest = write_atomic(design_dir / "open", old_version())
    assert kill_at(dest, 8) == "between the two renames (the final name missing)"
    assert not dest.exists() and [p.name for p in design_dir.iterdir() if p.name.startswith(".open.old-")]
    write_atomic(design_dir / "sim", {"result.json": "{}\n"})
    assert sorted(p.name for p in design_dir.iterdir()) == ["open", "sim"]
    assert contents(dest) == {k: v.encode() for k, v in old_version().items()}


def test_a_live_writers_temp_folder_is_left_alone(tmp_path):
    design_dir = tmp_path / "reports" / ("ab" * 20) / "stage2"
    live = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    try:
        busy = design_dir / f".open.tmp-{live.pid}-abc123"
        busy.mkdir(parents=True)
        write_atomic(design_dir / "sim", {"result.json": "{}\n"})
        assert busy.is_dir()  # another process may be filling it right now
    finally:
        live.kill()
        live.wait()
    write_atomic(design_dir / "sim", {"result.json": "{}\n"})
    assert not busy.exists()


def test_an_archive_root_above_reports_or_build_is_refused(tmp_path):
    """A pulled '<sha>/../..' once normalised to the checkout and its parent became the root; now every
    destination or root that holds the checkout, or lies in it outside reports/ and build/, is refused
    before anything is made."""
    from kabe.base.paths import REPORTS
    from kabe.store import safe_fs

    # Names that exist nowhere: were the guard broken, this test would make folders, never replace any.
    absent = "kabe-test-not-a-folder"
    cases = ((ROOT / absent, None), (ROOT / "kabe" / absent, None), (ROOT.parent / absent, None),
             (REPORTS / absent, ROOT), (REPORTS / absent, ROOT.parent), (ROOT / "docs" / absent, ROOT / "docs"))
    for dest, root in cases:
        with pytest.raises(safe_fs.UnsafePathError):
            write_atomic(dest, {"x": "y"}, root=root)
    assert not any(p.exists() for p, _ in cases)


def test_leftovers_of_the_cache_index_and_of_older_kabes_are_removed(tmp_path):
    """'..cache-index.json.<pid>-*' of a dead writer goes at the next write of the index; leftovers named
    as kabe named them before the pid was in the name go once they are an hour old (younger: kept)."""
    from kabe.store.archive import LEGACY_AGE_S, write_text_atomic

    reports = tmp_path / "reports"
    design_dir = reports / ("ab" * 20) / "stage2"
    design_dir.mkdir(parents=True)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale_index = reports / f"..cache-index.json.{dead.pid}-x1y2z3"
    stale_index.write_text("{")
    old_tmp, young_tmp = design_dir / ".open.tmp-abcd1234", design_dir / ".sim.tmp-efgh5678"
    old_index = reports / "..cache-index.json.k3j4h5g6"
    for p in (old_tmp, young_tmp):
        p.mkdir()
        (p / "metrics.json").write_text("{")
    old_index.write_text("{")
    an_hour_ago = time.time() - LEGACY_AGE_S - 60
    for p in (old_tmp, old_index):
        os.utime(p, (an_hour_ago, an_hour_ago))
    write_text_atomic(reports / ".cache-index.json", "{}\n")
    assert sorted(p.name for p in reports.iterdir()) == [".cache-index.json", "ab" * 20]
    write_atomic(design_dir / "open", {"metrics.json": "{}"})
    assert sorted(p.name for p in design_dir.iterdir()) == [".sim.tmp-efgh5678", "open"]
