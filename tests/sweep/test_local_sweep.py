"""The default sweep (a LocalCluster on this machine, no set-up), a variant that cannot build, the
key checks on results, `--diff` between variants, and Ctrl-C stopping every build."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from kabe.sweep import source, spec, unit

from .conftest import kabe_cmd, kabe_env

pytestmark = pytest.mark.e2e  # end to end: real tools, minutes (the fast tier leaves it out: -m 'not e2e')

SWEEP = """# three variants: two periods, and a parameter the core does not declare (a failed variant)
flow: open
variants:
  - {clock_period_ns: 7.0}
  - {clock_period_ns: 4.0}
  - {param.NOPE: 1}
"""


def test_local_cluster_sweep_records_every_variant_and_diffs_them(repo, tmp_path):
    sweep_file = tmp_path / "sweep.yaml"
    sweep_file.write_text(SWEEP)
    env = kabe_env(repo, KABE_SWEEP_CACHE=str(tmp_path / "cache"))
    r = subprocess.run(kabe_cmd("sweep", "stage2", "--workers", "2", "--file", str(sweep_file)), cwd=repo, env=env,
                       capture_output=True, text=True, timeout=1200)
    assert r.returncode == 0, r.stdout + r.stderr  # at least one variant passed
    assert "LocalCluster, 2 worker(s)" in r.stdout and "Traceback" not in r.stdout + r.stderr
    (sweep_dir,) = list((repo / "reports").glob("*/stage2/sweep-open"))
    summary = json.loads((sweep_dir / "sweep.json").read_text())
    by = {json.dumps(v["settings"], sort_keys=True): v for v in summary["variants"]}
    ok, tight, bad = by['{"clock_period_ns": 7.0}'], by['{"clock_period_ns": 4.0}'], by['{"param.NOPE": 1}']
    assert ok["status"] == "passed" and summary["best"] == ok["id"]
    assert tight["status"] == "failed" and tight["wns_ns"] < 0 and any("WNS" in f for f in tight["failures"])
    assert bad["status"] == "error" and "declares no parameter NOPE" in bad["failures"][0]  # failed, not lost
    assert not (sweep_dir / bad["id"]).exists()
    ok_record = json.loads((sweep_dir / ok["id"] / "metrics.json").read_text())
    assert ok_record["clock_period_ns"] == 7.0
    # one critical path: the sweep names the build's own (the data-path delay), and period - WNS by its own name
    path_ns = ok_record["timing"]["critical_path"]["delay_ns"]
    assert ok["critical_path_ns"] == path_ns
    assert f"minimum period {7.0 - ok['wns_ns']:.3f} ns" in r.stdout and f"critical path {path_ns:.3f} ns" in r.stdout
    d = subprocess.run(kabe_cmd("sweep", "stage2", "--diff", ok["id"], tight["id"][:6]), cwd=repo, env=env,
                       capture_output=True, text=True, timeout=120)
    assert d.returncode == 0, d.stdout + d.stderr
    wns_row = next(ln for ln in d.stdout.splitlines() if ln.startswith("| WNS ns"))
    assert f"{ok['wns_ns']:+.3f}" in wns_row and f"{tight['wns_ns']:+.3f}" in wns_row
    assert "| gate | pass | FAIL |" in d.stdout
    # the report page shows the sweep's Pareto plot and names the best variant
    from kabe.page.report import build_report

    page = build_report(repo / "reports", repo).read_text()
    assert "Sweeps (LUT against WNS" in page and f"best passing: {ok['id']}" in page


def _builds_under(path: Path) -> list[int]:
    """pids of processes whose working directory is below `path` (the sweep's scratch builds)."""
    out = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if os.readlink(f"/proc/{pid}/cwd").startswith(str(path)):
                out.append(int(pid))
        except OSError:
            continue
    return out


def test_ctrl_c_stops_every_build_and_archives_nothing(repo, tmp_path):
    cache = tmp_path / "cache"
    env = kabe_env(repo, KABE_SWEEP_CACHE=str(cache))
    p = subprocess.Popen(kabe_cmd("sweep", "stage4", "clock_period_ns=6.1,6.2", "--workers", "2"), cwd=repo, env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        t0 = time.monotonic()
        while not _builds_under(cache / "scratch"):
            assert p.poll() is None, p.stdout.read()
            assert time.monotonic() - t0 < 300, "no build started"
            time.sleep(0.2)
        time.sleep(2)
        p.send_signal(signal.SIGINT)
        out, _ = p.communicate(timeout=120)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 130, out
    assert "interrupted" in out and "Traceback" not in out
    t0 = time.monotonic()
    while _builds_under(cache / "scratch") and time.monotonic() - t0 < 30:
        time.sleep(0.5)
    assert not _builds_under(cache / "scratch"), "a build outlived the sweep"
    assert not list((repo / "reports").glob("*/stage4/sweep-open/*/metrics.json"))


def test_a_result_from_another_tree_or_variant_is_rejected():
    shipped = source.ShippedTree("a" * 40, "b" * 40, "c" * 64, b"")
    def no_key():
        raise AssertionError("no unit reaches the key check here")

    keys = dict(job=unit.Job(shipped.identity(), "stage2", "cores/stage2.core", "constraints/stage2.xdc", "open",
                             "0123456789", {}),
                archive_name="a" * 40, expected_key=no_key)
    report, accepted = unit.accept(unit.answer(b"", shipped.identity(), "0123456789", 2, ["no"], 1.0), **keys)
    assert accepted is None and report["rc"] == 2  # a build that wrote nothing: its report, no unit
    foreign = unit.answer(b"", {**shipped.identity(), "tree": "d" * 40}, "0123456789", 0, [], 1.0)
    with pytest.raises(unit.Rejected, match="rejected: built from tree 'dddd"):
        unit.accept(foreign, **keys)
    with pytest.raises(unit.Rejected, match="rejected: result of variant '9876543210'"):
        unit.accept(unit.answer(b"", shipped.identity(), "9876543210", 0, [], 1.0), **keys)


def test_a_worker_never_reuses_a_cached_tree_of_other_content(tmp_path, repo):
    shipped = source.pack(repo)
    tree = source.unpack(shipped.identity(), shipped.archive, tmp_path)
    assert (tree / "dodo.py").is_file() and source.read_marker(tree) == shipped.identity()
    with pytest.raises(spec.SweepError, match="arrived damaged"):
        source.unpack({**shipped.identity(), "tree": "f" * 40}, shipped.archive[:-10], tmp_path)


def test_a_project_below_its_repositorys_top_ships_its_own_folder_as_the_tree(tmp_path):
    """A monorepo's fpga/: the worker gets the commit's fpga/ tree as its project top (not the whole
    repository, where fpga/ would not be the folder it builds in), marked with the commit it came from,
    which the build there records."""
    from kabe.base import provenance

    top = tmp_path / "mono"
    (top / "fpga" / "cores").mkdir(parents=True)
    (top / "sw").mkdir()
    (top / "fpga" / "pyproject.toml").write_text("[tool.kabe]\ndefault_board = 'pynq-z1'\n")
    (top / "fpga" / "cores" / "x.txt").write_text("x\n")
    (top / "sw" / "main.py").write_text("print(1)\n")
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "x"]):
        subprocess.run(["git", *args], cwd=top, check=True, env=env, capture_output=True)
    (top / "fpga" / "uncommitted.txt").write_text("not shipped\n")
    shipped = source.pack(top / "fpga")
    sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=top, capture_output=True, text=True).stdout.strip()
    subtree = subprocess.run(["git", "rev-parse", "HEAD:fpga"], cwd=top, capture_output=True, text=True).stdout.strip()
    assert (shipped.commit, shipped.tree) == (sha, subtree)
    tree = source.unpack(shipped.identity(), shipped.archive, tmp_path / "cache")
    assert sorted(p.relative_to(tree).as_posix() for p in tree.rglob("*") if p.is_file()) == [
        ".kabe-tree", "cores/x.txt", "pyproject.toml"]
    assert provenance.current_commit(tree) == provenance.Commit(sha, False)
    assert source.pack(top).tree == subprocess.run(["git", "rev-parse", "HEAD^{tree}"], cwd=top, capture_output=True,
                                                   text=True).stdout.strip()  # the top: the whole tree, as before


def test_the_tree_cache_is_checked_file_by_file_not_by_its_marker(tmp_path, repo):
    """issue 36: the cache trusted its marker. Now every build's copy is compared with the shipped
    archive itself; an edited, added, removed or re-moded file in the cache (marker intact) is never
    built: the entry is extracted again and the copy holds the commit's bytes."""
    shipped = source.pack(repo)
    ident, cache = shipped.identity(), tmp_path / "cache"
    tree = source.unpack(ident, shipped.archive, cache)
    assert source.tree_differs(tree, ident, shipped.archive) is None
    honest = (tree / "dodo.py").read_bytes()
    tampers = {
        "edited": lambda t: (t / "dodo.py").write_text("import os; os.system('id')\n"),
        "added": lambda t: (t / "cores" / "evil.py").write_text("x = 1\n"),
        "removed": lambda t: (t / "dodo.py").unlink(),
        "made executable": lambda t: (t / "dodo.py").chmod(0o755),
    }
    for what, tamper in tampers.items():
        tree = source.unpack(ident, shipped.archive, cache)
        tamper(tree)
        assert source.read_marker(tree) == ident  # the marker says all is well
        assert source.tree_differs(tree, ident, shipped.archive), what  # the files say otherwise
        work = source.verified_copy(ident, shipped.archive, tmp_path / "scratch", cache)
        assert (work / "dodo.py").read_bytes() == honest and not (work / "cores" / "evil.py").exists(), what
        assert source.tree_differs(work, ident, shipped.archive) is None, what
        assert source.tree_differs(cache / ident["tree"], ident, shipped.archive) is None, what  # extracted again
    with pytest.raises(spec.SweepError, match="arrived damaged"):
        source.verified_copy(ident, shipped.archive[:-10], tmp_path / "scratch", cache)
