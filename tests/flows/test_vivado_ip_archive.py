"""The IP cache shared through the archive, end to end, on the STAND-IN for Vivado (tests/standin/vivado; not AMD
Vivado) and real git: a bare remote, clone A that builds the design from scratch (tests/flows/scratch_design:
a clocking wizard as .xci, one as IP Tcl) and pushes with CI's key (`kabe archive push`), fresh clones that only
`kabe archive pull`. Someone else pushed first: clk_main's unit unsigned, clk_aux's with other content, signed by a
key the project does not allow. Then:

* clone B pulls before CI has pushed: both forged units are kept apart, and B's build generates both IPs itself;
* CI pushes (its signature completes the unsigned unit, which holds CI's very files; its clk_aux unit is shared
  beside the forged one); clone C pulls and builds a commit of its own: no IP is
  generated or synthesized, both come from the units C pulled, byte for byte what A built;
* in C, the part changes (a board of the project's own, xc7z010): both IPs are generated again (the part is in
  every IP's key), and back on the PYNQ-Z1 none is; the Vivado version changes (2023.2.1): both are generated
  again (the exact `vivado -version` line is in every key), and nothing else.
The keys are printed (`pytest -s`): sha256 of {module name, VLNV, CONFIG.*, part, `vivado -version` line}."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kabe.flows.vivado import ip_cache
from kabe.store import signing, store
from tests import repo_copy
from tests.flows.test_vivado_flow import calls
from tests.flows.test_vivado_own_top import SCRATCH, ip_generated, standin_fixtures

REF = "refs/kabe/archive"
pytestmark = [pytest.mark.e2e, pytest.mark.skipif(shutil.which("tclsh") is None or shutil.which("make") is None
                                or shutil.which("ssh-keygen") is None,
                                reason="the Vivado stand-in runs in tclsh, edalize's Makefile in make; signing needs ssh-keygen")]


def keypair(where: Path, name: str) -> Path:
    key = where / name
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(key)], check=True)
    return key


def clone_env(clone: Path, tmp: Path, name: str, **extra: str) -> dict:
    env = dict(os.environ, PYTHONPATH=str(clone), KABE_VIVADO_IP_CACHE=str(tmp / f"ip_cache_{name}"),
               KABE_STANDIN_FIXTURES=str(tmp / "fx"), **extra)
    env.pop("KABE_SIGNING_KEY", None)
    env["PATH"] = os.pathsep.join([str(clone / "tests" / "standin"), str(Path(sys.executable).parent), env["PATH"]])
    return env


def run(clone: Path, env: dict, *args: str) -> tuple[int, str]:
    p = subprocess.run([sys.executable, "-m", *args], cwd=clone, env=env, capture_output=True, text=True, timeout=900)
    return p.returncode, p.stdout + p.stderr


def build(clone: Path, env: dict, record: Path, *extra: str) -> tuple[int, str, list[list[str]]]:
    code, out = run(clone, dict(env, KABE_STANDIN_RECORD=str(record)), "doit", "build:scratch_clk", "flow=vivado", *extra)
    return code, out, calls(record)


def ip_record(clone: Path) -> dict[str, dict]:
    sha = repo_copy.git(clone, "rev-parse", "HEAD")
    rows = json.loads((clone / "reports" / sha / "scratch_clk" / "vivado" / "ip_cache.json").read_text())
    return {r["name"]: r for r in rows}


def made_ip(recs: list[list[str]]) -> list[str]:
    """The IPs a build made (created, generated or synthesized): none when they all came from the IP cache."""
    return sorted({c[1] for c in recs if c[0] in ("IP_GENERATED", "synth_ip")}
                  | {c[c.index("-module_name") + 1] for c in recs if c[0] == "create_ip" and "-module_name" in c})


def forge(unit: Path, dest: Path, edit: bool) -> Path:
    """A copy of an IP cache unit; edit: one product changed and its manifest redone, so it is whole (the IP
    cache's own check passes) but not what CI built."""
    out = dest / unit.name
    shutil.copytree(unit, out)
    if edit:
        target = next(p for p in sorted(out.rglob("*")) if p.is_file() and p.name != ip_cache.UNIT_FILE)
        target.write_bytes(target.read_bytes() + b"\n-- forged: not what CI built\n")
        manifest = json.loads((out / ip_cache.UNIT_FILE).read_text())
        manifest["files"] = ip_cache._hashes(out)
        (out / ip_cache.UNIT_FILE).write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
        assert ip_cache.check_unit(out) is not None
    return out


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("ip_archive")
    standin_fixtures(tmp / "fx")
    ci, other = keypair(tmp, "ci"), keypair(tmp, "mallory")
    remote = tmp / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    a = repo_copy.make(tmp / "A")
    shutil.copytree(SCRATCH, a / "cores" / "scratch_clk")
    (a / ".kabe").mkdir(exist_ok=True)
    (a / ".kabe" / "allowed_signers").write_text(f'ci@kabe namespaces="kabe-archive" {ci.with_suffix(".pub").read_text()}')
    repo_copy.git(a, "add", "-A")
    repo_copy.git(a, "commit", "-qm", "a design from scratch, CI's key allowed")
    repo_copy.git(a, "branch", "-M", "main")
    repo_copy.git(a, "remote", "add", "origin", str(remote))
    repo_copy.git(a, "push", "-q", "origin", "main")
    env_a = clone_env(a, tmp, "A")
    code, out, recs = build(a, env_a, tmp / "record_A.txt")
    assert code == 0, out
    assert made_ip(recs) == ["clk_aux", "clk_main"]
    keys = {n: r["key"] for n, r in ip_record(a).items()}
    print("\nIP cache keys (clone A, xc7z020clg400-1, STAND-IN for Vivado v2023.2):", json.dumps(keys, indent=1))

    # someone else pushes first: clk_main's unit unsigned, clk_aux's edited and signed by a key not allowed
    mallory = tmp / "M"
    subprocess.run(["git", "clone", "-q", str(remote), str(mallory)], check=True)
    a_cache = ip_cache.Store(tmp / "ip_cache_A")
    forged = {"clk_main": forge(a_cache.get(keys["clk_main"]), tmp / "forged", edit=False),
              "clk_aux": forge(a_cache.get(keys["clk_aux"]), tmp / "forged", edit=True)}
    for name, key in (("clk_main", None), ("clk_aux", other)):
        push_env = {signing.SIGNING_KEY_ENV: str(key)} if key else {}
        old = os.environ.get(signing.SIGNING_KEY_ENV)
        os.environ.pop(signing.SIGNING_KEY_ENV, None)
        os.environ.update(push_env)
        try:
            sc = store.SharedCache("vivado", used_by=lambda _u, n=name: {keys[n]: forged[n]},
                                   have=lambda _k: False, accept=lambda _f, _k: "unused")
            report = store.push("origin", mallory, mallory / "reports", ref=REF, shared=[sc])
        finally:
            os.environ.pop(signing.SIGNING_KEY_ENV, None)
            if old is not None:
                os.environ[signing.SIGNING_KEY_ENV] = old
        assert report.added == [f"ip/vivado/{keys[name]}"]
    return {"tmp": tmp, "remote": remote, "a": a, "env_a": env_a, "keys": keys, "ci": ci, "forged": forged}


def fresh_clone(world, name: str) -> tuple[Path, dict]:
    clone = world["tmp"] / name
    subprocess.run(["git", "clone", "-q", "-b", "main", str(world["remote"]), str(clone)], check=True)
    return clone, clone_env(clone, world["tmp"], name)


def test_forged_ip_units_are_not_used_and_the_build_makes_its_own(world):
    b, env = fresh_clone(world, "B")
    code, out = run(b, env, "kabe", "archive", "pull", "origin")
    print(out)
    assert code == 0, out
    keys = world["keys"]
    assert f"unverified ip/vivado/{keys['clk_main']}: unsigned" in out
    assert f"unverified ip/vivado/{keys['clk_aux']}: signed by a key not in " in out
    assert not (world["tmp"] / "ip_cache_B").exists() or not list((world["tmp"] / "ip_cache_B").rglob("unit.json"))
    code, out, recs = build(b, env, world["tmp"] / "record_B.txt")
    assert code == 0, out
    assert made_ip(recs) == ["clk_aux", "clk_main"]  # neither forged unit was taken
    assert {n: r["hit"] for n, r in ip_record(b).items()} == {"clk_main": False, "clk_aux": False}
    made = ip_cache.Store(world["tmp"] / "ip_cache_B").get(keys["clk_aux"])
    assert not any(b"forged" in p.read_bytes() for p in made.rglob("*") if p.is_file())


def test_another_clone_after_a_pull_regenerates_no_ip(world):
    a, keys = world["a"], world["keys"]
    code, out = run(a, dict(world["env_a"], **{signing.SIGNING_KEY_ENV: str(world["ci"])}), "kabe", "archive", "push",
                    "origin")
    print(out)
    assert code == 0, out
    # clk_main's unsigned unit held CI's very files: CI's signature completes it; clk_aux's held other content:
    # CI's unit is shared beside it (append-only: the forged one stays, and no pull takes it)
    assert "1 build(s) added" in out and "1 completed" in out and "unsigned" not in out
    assert f"the archive's ip/vivado/{keys['clk_aux']} is not this build" in out
    assert f"the archive's ip/vivado/{keys['clk_main']} is not this build" not in out

    c, env = fresh_clone(world, "C")
    code, out = run(c, env, "kabe", "archive", "pull", "origin")
    print(out)
    assert code == 0, out
    assert "shared cache: 2 unit(s) added to this machine's cache" in out
    c_cache = ip_cache.Store(world["tmp"] / "ip_cache_C")
    a_cache = ip_cache.Store(world["tmp"] / "ip_cache_A")
    for k in keys.values():  # what CI built, byte for byte (not the forged clk_aux)
        assert ip_cache._hashes(c_cache.get(k)) == ip_cache._hashes(a_cache.get(k))
    # a commit of C's own (its post-route hook): the build runs Vivado, and every IP comes from the pulled units
    hook = c / "cores" / "scratch_clk" / "hooks" / "post_route.tcl"
    hook.write_text(hook.read_text() + 'puts "clone C: one more line"\n')
    repo_copy.git(c, "commit", "-qam", "clone C's own change")
    code, out, recs = build(c, env, world["tmp"] / "record_C.txt")
    assert code == 0 and "cache miss" in out, out
    assert any(c_[0] == "launch_runs" for c_ in recs)  # Vivado ran the design
    assert made_ip(recs) == [] and "from the IP cache" in out
    assert {n: (r["key"], r["hit"]) for n, r in ip_record(c).items()} == {n: (k, True) for n, k in keys.items()}
    print("clone C after `kabe archive pull`: IPs made 0 of", len(keys), {n: k[:12] for n, k in keys.items()})


def test_a_changed_part_or_vivado_version_regenerates_the_ips_it_keys(world):
    c = world["tmp"] / "C"
    env = clone_env(c, world["tmp"], "C")
    keys = world["keys"]
    # another part: a board of the project's own (its boards/ folder), the PYNQ-Z1's profile on an xc7z010
    (c / "boards").mkdir(exist_ok=True)
    profile = (Path(__file__).resolve().parents[2] / "kabe" / "boards" / "profiles" / "pynq-z1.yaml").read_text()
    (c / "boards" / "acme-7010.yaml").write_text(profile.replace("xc7z020clg400-1", "xc7z010clg400-1")
                                                 .replace("name: PYNQ-Z1", "name: ACME 7010"))
    yaml = c / "cores" / "scratch_clk" / "design.yaml"
    pynq = yaml.read_text()
    yaml.write_text(pynq.replace("constraints: scratch_clk.xdc", "board: acme-7010\nconstraints: scratch_clk.xdc"))
    repo_copy.git(c, "add", "-A")
    repo_copy.git(c, "commit", "-qm", "the same design on an xc7z010")
    code, out, recs = build(c, env, world["tmp"] / "record_part.txt")
    assert code == 0, out
    assert made_ip(recs) == ["clk_aux", "clk_main"]
    part_keys = {n: r["key"] for n, r in ip_record(c).items()}
    assert all(part_keys[n] != keys[n] for n in keys)
    print("IP cache keys on xc7z010clg400-1:", json.dumps(part_keys, indent=1))
    yaml.write_text(pynq)  # back on the PYNQ-Z1: the xc7z020's units are still there
    repo_copy.git(c, "commit", "-qam", "back on the PYNQ-Z1")
    code, out, recs = build(c, env, world["tmp"] / "record_back.txt")
    assert code == 0 and made_ip(recs) == [], out

    # another Vivado: 2023.2.1 (the .xci was made with 2023.2: design.yaml allows its upgrade, said at each build)
    yaml.write_text(pynq.replace("  top: own\n", "  top: own\n  ip_upgrade: true\n"))
    repo_copy.git(c, "commit", "-qam", "IP upgrades allowed")
    code, out, recs = build(c, dict(env, KABE_STANDIN_VERSION="2023.2.1"), world["tmp"] / "record_version.txt")
    assert code == 0, out
    assert made_ip(recs) == ["clk_aux", "clk_main"]
    v_keys = {n: r["key"] for n, r in ip_record(c).items()}
    assert all(v_keys[n] not in (keys[n], part_keys[n]) for n in keys)
    print("IP cache keys on STAND-IN for Vivado v2023.2.1:", json.dumps(v_keys, indent=1))
    code, out, recs = build(c, dict(env, KABE_STANDIN_VERSION="2023.2.1"), world["tmp"] / "record_version2.txt",
                            "cache=off")
    assert code == 0 and made_ip(recs) == [], out  # the second build on that Vivado: from the cache
