"""Vivado IP cache units through `kabe archive push|pull`, against a real bare remote and real ssh-keygen
signatures: a unit (ip/vivado/<key>/) is added to the puller's IP cache only when signed by an allowed key and
whole with its key its own material's; unsigned, forged (another key), edited-after-signing and mislabelled
units are kept apart in reports/.unverified-ip/ and never reach the cache. A unit pushed first by someone
else does not block the honest one: it is shared beside it and taken by the pull. (The end-to-end case, a
stand-in build in one clone and none of its IPs regenerated in another: tests/flows/test_vivado_ip_archive.py.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kabe.flows.vivado import ip_archive, ip_cache
from kabe.flows.vivado.ip_source import IpSpec
from kabe.store import archive_paths as ap
from kabe.store import signing, store
from tests.store.test_archive_trust import REF, git, keypair


def make_unit(cache: Path, name: str, hdl: str = "module x; endmodule\n", freq: str = "100.0") -> str:
    """One IP cache unit as ip_cache.prepare leaves it (a module folder with products), its key."""
    spec = IpSpec(name, "xilinx.com:ip:clk_wiz:6.0", {"CONFIG.CLKOUT1_REQUESTED_OUT_FREQ": freq}, Path("x.xci"), "xci")
    m = ip_cache.material(spec, "xc7z020clg400-1", "Vivado v2023.2 (64-bit)")
    prod = cache.parent / f"gen-{cache.name}-{name}-{freq}"
    (prod / name / "synth").mkdir(parents=True)
    (prod / name / f"{name}.xci").write_text(json.dumps({"name": name}))
    (prod / name / "synth" / f"{name}.v").write_text(hdl)
    key = ip_cache.key_of(m)
    ip_cache.Store(cache).put(key, m, prod / name)
    return key


def build_naming(reports: Path, sha: str, keys: list[str]) -> None:
    """A pushed build whose ip_cache.json names the IP units it used (what carries them into the push)."""
    d = reports / sha / "scratch" / "vivado"
    d.mkdir(parents=True)
    (d / "metrics.json").write_text(json.dumps({"commit": sha}) + "\n")
    (d / "ip_cache.json").write_text(json.dumps([{"name": f"ip{i}", "key": k, "hit": False}
                                                 for i, k in enumerate(keys)]) + "\n")


@pytest.fixture()
def world(tmp_path, monkeypatch):
    monkeypatch.delenv("KABE_SIGNING_KEY", raising=False)
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    dev = tmp_path / "dev"
    git(tmp_path, "init", "-q", "-b", "main", str(dev))
    (dev / "README").write_text("code\n")
    git(dev, "add", "README")
    git(dev, "commit", "-qm", "code")
    git(dev, "remote", "add", "origin", str(remote))
    git(dev, "push", "-q", "origin", "main")
    ci, other = keypair(tmp_path, "ci"), keypair(tmp_path, "other")
    puller = tmp_path / "puller"
    git(tmp_path, "clone", "-q", str(remote), str(puller))
    (puller / ".kabe").mkdir()
    (puller / ".kabe" / "allowed_signers").write_text(f'ci@kabe namespaces="kabe-archive" {ci.with_suffix(".pub").read_text()}')
    return {"tmp": tmp_path, "remote": remote, "dev": dev, "ci": ci, "other": other, "puller": puller,
            "sha": git(dev, "rev-parse", "HEAD")}


def push(world, monkeypatch, key: Path | None, cache: Path, keys: list[str], tag: str) -> store.PushReport:
    pusher = world["tmp"] / f"pusher-{tag}"
    git(world["tmp"], "clone", "-q", str(world["remote"]), str(pusher))
    build_naming(pusher / "reports", world["sha"], keys)
    if key:
        monkeypatch.setenv("KABE_SIGNING_KEY", str(key))
    else:
        monkeypatch.delenv("KABE_SIGNING_KEY", raising=False)
    return store.push("origin", pusher, pusher / "reports", ref=REF, shared=[ip_archive.shared_cache(cache)])


def pull(world, cache: Path) -> store.PullReport:
    return store.pull("origin", world["puller"], world["puller"] / "reports", ref=REF,
                      allowed_signers=world["puller"] / ".kabe" / "allowed_signers",
                      shared=[ip_archive.shared_cache(cache)])


def test_a_signed_ip_unit_reaches_the_cache_and_nothing_else_does(world, monkeypatch):
    tmp = world["tmp"]
    good_cache = tmp / "ci_cache"
    good = make_unit(good_cache, "clk_main")
    report = push(world, monkeypatch, world["ci"], good_cache, [good], "ci")
    print("\n".join(report.lines()))
    assert f"ip/vivado/{good}" in report.added and report.signed_by
    assert "shared cache: 1 unit(s) added" in "\n".join(report.lines())

    # unsigned, and forged (signed by a key not allowed), each for an IP key of its own
    bad_cache = tmp / "bad_cache"
    unsigned = make_unit(bad_cache, "clk_unsigned")
    forged = make_unit(bad_cache, "clk_forged", hdl="module x; /* not what CI built */ endmodule\n")
    assert push(world, monkeypatch, None, bad_cache, [unsigned], "unsigned").added
    assert push(world, monkeypatch, world["other"], bad_cache, [forged], "forged").added

    cache = tmp / "puller_cache"
    pulled = pull(world, cache)
    text = "\n".join(pulled.lines())
    print(text)
    assert pulled.shared_added == [f"ip/vivado/{good}"]
    why = dict(pulled.shared_unverified)
    assert why[f"ip/vivado/{unsigned}"] == "unsigned"
    assert why[f"ip/vivado/{forged}"].startswith("signed by a key not in ")
    store_ = ip_cache.Store(cache)
    assert store_.get(good) is not None and store_.get(unsigned) is None and store_.get(forged) is None
    for k in (unsigned, forged):
        assert (world["puller"] / "reports" / store.UNVERIFIED_SHARED / "vivado" / k / ip_cache.UNIT_FILE).is_file()
        assert f"unverified ip/vivado/{k}: " in text
    # the unit in the cache is the one CI built, byte for byte, and is used by the IP cache as it is
    assert (store_.get(good) / "clk_main" / "synth" / "clk_main.v").read_text() == "module x; endmodule\n"
    assert ip_cache.check_unit(store_.get(good)) is not None
    # the build unit travelled as well (not verified here: no such commit in the puller is needed for IP)
    again = pull(world, cache)
    assert again.shared_added == [] and again.shared_same == [f"ip/vivado/{good}"]
    # `kabe archive du`: the IP units on a row of their own, not taken for commits
    from kabe.store import store_size

    tip = git(world["puller"], "rev-parse", store._tracking_ref("origin", world["puller"]))
    rows, total = store_size.measure(world["puller"], tip)
    text = store_size.render("origin", REF, rows, total)
    print(text)
    assert text.splitlines()[0].endswith("1 commit(s), 2 build(s), 3 ip/vivado unit(s)")
    assert "| ip/vivado | 3 |" in text


def test_a_signed_unit_whose_content_is_not_its_key_is_not_used(world, monkeypatch):
    """Signed by CI, but what it holds is not what its name and manifest say: the flow's own check refuses it."""
    tmp = world["tmp"]
    cache = tmp / "ci_cache"
    key = make_unit(cache, "clk_main")
    unit = ip_cache.Store(cache).get(key)
    (unit / "clk_main" / "synth" / "clk_main.v").write_text("module evil; endmodule\n")  # after its manifest
    other = make_unit(cache, "clk_other", freq="50.0")
    # a whole unit of another key, filed under this key's name
    moved = ip_cache.Store(cache).unit_dir("0" * 64)
    moved.parent.mkdir(parents=True, exist_ok=True)
    ip_cache.shutil.copytree(ip_cache.Store(cache).get(other), moved)
    sc = ip_archive.shared_cache(cache)
    monkeypatch.setenv("KABE_SIGNING_KEY", str(world["ci"]))
    pusher = tmp / "pusher"
    git(tmp, "clone", "-q", str(world["remote"]), str(pusher))
    forced = store.SharedCache("vivado", used_by=lambda _u: {key: unit, "0" * 64: moved}, have=sc.have, accept=sc.accept)
    report = store.push("origin", pusher, pusher / "reports", ref=REF, shared=[forced])
    assert len(report.added) == 2
    pulled = pull(world, tmp / "puller_cache")
    why = dict(pulled.shared_unverified)
    print("\n".join(pulled.lines()))
    assert pulled.shared_added == []
    assert "not a whole IP cache unit" in why[f"ip/vivado/{key}"]
    assert "not a whole IP cache unit" in why[f"ip/vivado/{'0' * 64}"]
    assert not (tmp / "puller_cache").exists() or not any(ip_cache.Store(tmp / "puller_cache").root.glob("*/*/unit.json"))


def test_a_unit_pushed_first_by_someone_else_does_not_block_the_signed_one(world, monkeypatch):
    tmp = world["tmp"]
    honest = tmp / "ci_cache"
    key = make_unit(honest, "clk_main")
    forged_cache = tmp / "forged_cache"
    # the same key's unit with other content, manifest redone to match (whole, but not what CI built)
    assert make_unit(forged_cache, "clk_main", hdl="module x; /* forged */ endmodule\n") == key
    assert push(world, monkeypatch, None, forged_cache, [key], "first").added == [f"{world['sha']}/scratch/vivado",
                                                                                f"ip/vivado/{key}"]
    report = push(world, monkeypatch, world["ci"], honest, [key], "ci")
    beside = dict(report.beside)
    assert ap.base_unit(beside[f"ip/vivado/{key}"]) == f"ip/vivado/{key}"
    pulled = pull(world, tmp / "puller_cache")
    print("\n".join(pulled.lines()))
    assert pulled.shared_added == [beside[f"ip/vivado/{key}"]]
    assert dict(pulled.shared_unverified)[f"ip/vivado/{key}"] == "unsigned"
    got = ip_cache.Store(tmp / "puller_cache").get(key)
    assert (got / "clk_main" / "synth" / "clk_main.v").read_text() == "module x; endmodule\n"


def test_the_paths_of_shared_units_are_judged_like_builds():
    ok = ap.Entry("100644", "blob", "", 10, f"ip/vivado/{'a' * 64}/mig/mig/user_design/rtl/phy/x.v")
    assert ap.path_problem(ok) is None
    for bad in (f"ip/vivado/{'a' * 63}/x.xci", f"ip/Vivado/{'a' * 64}/x.xci", f"ip/vivado/{'a' * 64}/../x",
                f"ip/vivado/{'a' * 64}/.hidden", f"ip/vivado/{'a' * 64}/" + "/".join("d" * 9) + "/x"):
        assert ap.path_problem(ap.Entry("100644", "blob", "", 10, bad)), bad
    assert ap.path_problem(ap.Entry("120000", "blob", "", 10, f"ip/vivado/{'a' * 64}/x")) is not None
    assert ap.split_unit(f"ip/vivado/{'a' * 64}/x") is None  # never taken for a build
    assert signing.is_bitstream("x.bit")


def test_a_unit_pushed_first_and_signed_by_another_key_does_not_leave_the_honest_one_unsigned(world, monkeypatch):
    """The build units' rule as well: a pre-empting unit that carries a signature (of a key not allowed) made the
    honest push go beside it unsigned, so no pull could take it."""
    tmp = world["tmp"]
    key = make_unit(tmp / "ci_cache", "clk_main")
    assert make_unit(tmp / "forged_cache", "clk_main", hdl="module x; /* forged */ endmodule\n") == key
    push(world, monkeypatch, world["other"], tmp / "forged_cache", [key], "first")
    report = push(world, monkeypatch, world["ci"], tmp / "ci_cache", [key], "ci")
    beside = dict(report.beside)
    assert set(beside) == {f"ip/vivado/{key}"}  # (the build unit's files are the same: the archive's is kept)
    pulled = pull(world, tmp / "puller_cache")
    print("\n".join(pulled.lines()))
    assert pulled.shared_added == [beside[f"ip/vivado/{key}"]]
    assert dict(pulled.shared_unverified)[f"ip/vivado/{key}"].startswith("signed by a key not in ")
