"""Signed units with real ssh-keygen keys: what verifies, and each way it must not."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from kabe.store import signing

UNIT = "ab" * 20 + "/stage2/open"


def keypair(where: Path, name: str) -> Path:
    key = where / name
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(key)], check=True)
    return key


@pytest.fixture()
def keys(tmp_path):
    ci, other = keypair(tmp_path, "ci"), keypair(tmp_path, "other")
    allowed = tmp_path / "allowed_signers"
    allowed.write_text(f'ci@kabe namespaces="kabe-archive" {ci.with_suffix(".pub").read_text()}')
    return ci, other, allowed


def unit_dir(tmp_path: Path, key: Path, files: dict[str, bytes], unit: str = UNIT) -> Path:
    d = tmp_path / "reports" / unit
    d.mkdir(parents=True)
    for name, data in files.items():
        (d / name).parent.mkdir(parents=True, exist_ok=True)
        (d / name).write_bytes(data)
    (d / signing.SIGNATURE_FILE).write_bytes(signing.sign_unit(unit, signing.hash_dir(d), key))
    return d


FILES = {"metrics.json": b'{"lut": 232}\n', "raw/yosys.log": b"log\n", "top.bit": b"BIT"}


def test_the_statement_is_canonical_and_never_lists_the_signature():
    s = signing.statement(UNIT, {"b": "2" * 64, "a": "1" * 64, signing.SIGNATURE_FILE: "3" * 64})
    assert s == ('{"files":{"a":"' + "1" * 64 + '","b":"' + "2" * 64 + '"},"format":2,"project":"","unit":"'
                 + UNIT + '"}').encode()


def test_a_unit_signed_for_another_project_folder_does_not_verify(tmp_path, keys):
    """Issue 36, item 4: a unit signed for a monorepo's fpga/ replayed as fpga2/'s build of the same
    commit and design verified (the statement named commit/design/kind only)."""
    ci, _other, allowed = keys
    d = tmp_path / "u"
    d.mkdir()
    (d / "metrics.json").write_bytes(b"{}\n")
    (d / signing.SIGNATURE_FILE).write_bytes(signing.sign_unit(UNIT, signing.hash_dir(d), ci, project="fpga"))
    assert signing.verify_dir(d, UNIT, allowed, project="fpga").ok
    check = signing.verify_dir(d, UNIT, allowed, project="fpga2")
    assert not check.ok and check.reason == ("the signature is for project folder 'fpga', not fpga2: a unit of "
                                             "another project of the repository")
    assert not signing.verify_dir(d, UNIT, allowed, project="").ok


def test_a_signed_unit_verifies_for_the_allowed_key(tmp_path, keys):
    ci, _other, allowed = keys
    d = unit_dir(tmp_path, ci, FILES)
    check = signing.verify_dir(d, UNIT, allowed)
    assert check.ok and check.signer == "ci@kabe" and set(check.file_hashes) == set(FILES)
    (d / "top.bit").unlink()  # a bitstream left behind by a pull without --bitstreams
    assert signing.verify_dir(d, UNIT, allowed).ok


def test_a_key_not_in_allowed_signers_is_refused(tmp_path, keys):
    _ci, other, allowed = keys
    check = signing.verify_dir(unit_dir(tmp_path, other, FILES), UNIT, allowed)
    assert not check.ok and check.reason == f"signed by a key not in {allowed}"


def test_a_changed_added_or_missing_file_is_refused(tmp_path, keys):
    ci, _other, allowed = keys
    d = unit_dir(tmp_path, ci, FILES)
    (d / "metrics.json").write_bytes(b'{"lut": 100}\n')
    assert signing.verify_dir(d, UNIT, allowed).reason == "file 'metrics.json' changed since it was signed"
    (d / "metrics.json").write_bytes(FILES["metrics.json"])
    (d / "extra.rpt").write_bytes(b"x")
    assert signing.verify_dir(d, UNIT, allowed).reason == "file 'extra.rpt' is not in the signed list"
    (d / "extra.rpt").unlink()
    (d / "raw" / "yosys.log").unlink()
    assert signing.verify_dir(d, UNIT, allowed).reason == "file 'raw/yosys.log' is signed but missing"


def test_a_signature_for_another_unit_or_a_forged_statement_is_refused(tmp_path, keys):
    ci, _other, allowed = keys
    d = unit_dir(tmp_path, ci, FILES)
    other_unit = "cd" * 20 + "/stage2/open"
    moved = tmp_path / "reports" / other_unit
    moved.parent.mkdir(parents=True)
    d.rename(moved)
    assert "the signature is for" in signing.verify_dir(moved, other_unit, allowed).reason
    sig = (moved / signing.SIGNATURE_FILE).read_bytes()
    stmt, _, armor = sig.partition(b"\n")
    forged = stmt.replace(b'"unit":"' + UNIT.encode(), b'"unit":"' + other_unit.encode())
    (moved / signing.SIGNATURE_FILE).write_bytes(forged + b"\n" + armor)
    check = signing.verify_dir(moved, other_unit, allowed)
    assert not check.ok and check.reason.startswith("bad signature")


def test_unsigned_unreadable_and_no_allowed_signers(tmp_path, keys):
    ci, _other, allowed = keys
    bare = tmp_path / "reports" / "bare"
    bare.mkdir(parents=True)
    assert signing.verify_dir(bare, UNIT, allowed).reason == "unsigned"
    (bare / signing.SIGNATURE_FILE).write_bytes(b"not a statement\nnor a signature")
    assert not signing.verify_dir(bare, UNIT, allowed).ok
    d = unit_dir(tmp_path, ci, FILES)
    assert "no allowed-signers file" in signing.verify_dir(d, UNIT, tmp_path / "absent").reason


def test_verify_statement_needs_the_exact_hashes(tmp_path, keys):
    ci, _other, allowed = keys
    hashes = {"metrics.json": "1" * 64}
    sig = signing.sign_unit(UNIT, hashes, ci)
    assert signing.verify_statement(UNIT, sig, hashes, allowed).ok
    assert not signing.verify_statement(UNIT, sig, {"metrics.json": "2" * 64}, allowed).ok


def test_the_signing_key_comes_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.delenv("KABE_SIGNING_KEY", raising=False)
    assert signing.signing_key() is None
    monkeypatch.setenv("KABE_SIGNING_KEY", str(tmp_path / "missing"))
    with pytest.raises(signing.SigningError, match="is not a file"):
        signing.signing_key()


def test_built_here_means_no_signature_file_at_all_not_even_a_dangling_link(tmp_path, keys):
    """check_if_signed is how a cache hit, kabe ci and deploy tell a unit built here from a pulled one:
    a link named like the signature (dangling or not) is a pulled unit that does not verify."""
    ci, _other, allowed = keys
    here = tmp_path / "reports" / "here"
    here.mkdir(parents=True)
    assert signing.check_if_signed(here, UNIT, allowed) is None
    (here / signing.SIGNATURE_FILE).symlink_to(tmp_path / "nowhere")
    check = signing.check_if_signed(here, UNIT, allowed)
    assert check is not None and not check.ok and check.reason == "unsigned"
    assert signing.check_if_signed(unit_dir(tmp_path, ci, FILES), UNIT, allowed).ok
