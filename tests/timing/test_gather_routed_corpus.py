"""scripts/gather_routed_corpus.py: the routed-more reports come back byte for byte from their
sources, or are named as missing; the committed sources list is the one the model rests on."""

from __future__ import annotations

import hashlib
import importlib.util
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, REPO / "scripts" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod  # dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


gather = _load("gather_routed_corpus")
calibrate = _load("calibrate_timing")

REPORT = b"Timing Report\r\n\r\nSlack (MET) :  1.234ns\r\n"  # CRLF kept: the bytes are what is hashed


def _repo_with_report(mirrors: Path, repository: str, path: str, data: bytes) -> str:
    """A real git repository laid out as the snapshot tool leaves one (<owner>+<name>/repo/.git)."""
    work = mirrors / repository.replace("/", "+") / "repo"
    (work / path).parent.mkdir(parents=True)
    (work / path).write_bytes(data)
    git = ["git", "-C", str(work), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "-q", str(work)], check=True)
    subprocess.run(git + ["add", "-A"], check=True)
    subprocess.run(git + ["commit", "-q", "-m", "report"], check=True)
    (work / path).write_bytes(b"a later run's report\n")  # HEAD moves on; the source names the commit
    subprocess.run(git + ["commit", "-q", "-am", "rerun"], check=True)
    return subprocess.run(git + ["rev-parse", "HEAD~1"], capture_output=True, text=True, check=True).stdout.strip()


def _tsv(path: Path, rows: list[tuple]) -> Path:
    path.write_text("# file\trepository\tcommit\tpath\tsha256\n" + "".join("\t".join(r) + "\n" for r in rows))
    return path


def test_reports_come_back_byte_for_byte_or_are_named(tmp_path):
    mirrors, out = tmp_path / "mirrors", tmp_path / "out"
    rpt = "impl_1/top_timing_summary_routed.rpt"
    commit = _repo_with_report(mirrors, "owner/alpha", rpt, REPORT)
    good = hashlib.sha256(REPORT).hexdigest()[:16]
    sources = gather.read_sources(_tsv(tmp_path / "s.tsv", [
        ("owner--alpha--top.rpt", "owner/alpha", commit, rpt, good),
        ("owner--alpha--forged.rpt", "owner/alpha", commit, rpt, "0" * 16),   # not the recorded bytes
        ("owner--alpha--gone.rpt", "owner/alpha", commit, "impl_1/none.rpt", good),
        ("other--beta--top.rpt", "other/beta", commit, rpt, good),             # no snapshot of it
    ]))
    got, missing = gather.gather(sources, out, lambda r: gather.git_dir_in(mirrors, r))
    assert [s.file for s in got] == ["owner--alpha--top.rpt"]
    assert (out / "owner--alpha--top.rpt").read_bytes() == REPORT  # the commit's bytes, not HEAD's
    assert "not the file kabe recorded" in missing["owner--alpha--forged.rpt"]
    assert "has no impl_1/none.rpt" in missing["owner--alpha--gone.rpt"]
    assert "no git directory for other/beta" in missing["other--beta--top.rpt"]
    assert sorted(p.name for p in out.iterdir()) == ["SOURCES.md", "owner--alpha--top.rpt"]  # no temp files
    # the calibration reads SOURCES.md's rows: the repository is the design
    assert calibrate.designs_from_sources(out) == {"owner--alpha--top.rpt": "owner/alpha"}


def test_main_exits_2_naming_what_it_could_not_gather(tmp_path, monkeypatch, capsys):
    rpt = "r.rpt"
    commit = _repo_with_report(tmp_path / "m", "owner/alpha", rpt, REPORT)
    monkeypatch.setattr(gather, "SOURCES", _tsv(tmp_path / "s.tsv", [
        ("a.rpt", "owner/alpha", commit, rpt, hashlib.sha256(REPORT).hexdigest()[:16]),
        ("b.rpt", "owner/beta", commit, rpt, "1" * 16)]))
    assert gather.main(["--mirrors", str(tmp_path / "m"), "--out", str(tmp_path / "o")]) == 2
    out, err = capsys.readouterr()
    assert "1 of 2 reports written" in out and "not gathered: b.rpt: no git directory for owner/beta" in err
    assert gather.main(["--mirrors", str(tmp_path / "absent"), "--out", str(tmp_path / "o")]) == 2
    assert "not a folder" in capsys.readouterr().err


def test_the_sources_list_is_what_the_committed_model_rests_on():
    """Every routed-more file the constants record (name and sha256) has one source line, and no
    line names a file the model does not rest on: regathering gives back exactly its data."""
    constants = (REPO / "kabe" / "timing" / "fitted_constants.py").read_text()
    recorded = dict(re.findall(r"'\.\./shared/routed-more/([^']+)': '([0-9a-f]+)'", constants))
    listed = {s.file: s.sha256 for s in gather.read_sources()}
    assert recorded and listed == recorded
    assert all(re.fullmatch(r"[0-9a-f]{40}", s.commit) for s in gather.read_sources())
