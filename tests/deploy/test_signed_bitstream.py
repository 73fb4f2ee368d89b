"""Deploy trusts only bitstreams built here or signed by an allowed key (issue 21, build item 6), on
hand-made vivado archives with real ssh-keygen signatures. The end-to-end chain (pull, cache hit,
loopback board) is tests/ci/test_poisoned_cache_e2e.py."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from kabe.project import designs
from kabe.base import provenance
from kabe.deploy import ssh
from kabe.deploy.host import _archived_build
from kabe.store import signing

from records_fixtures import record, two_commit_repo, write_archive


@pytest.fixture()
def unit(tmp_path, monkeypatch):
    """A passing stage4 vivado archive of a real commit (bit, hwh, cell list, a manifest listing them)
    and a signer: (unit dir, its commit, sign(dir, key=None), another key)."""
    repo, (sha, _) = two_commit_repo(tmp_path)
    reports = tmp_path / "reports"
    path = write_archive(reports, record(sha, wns=0.25, flow="vivado"))
    d = path.parent
    (d / "kabe_stage4.bit").write_bytes(b"\x00\x09 STAND-IN bitstream bytes " * 40)
    (d / "kabe_stage4.hwh").write_text("<hwh/>")
    cells = [{"cell": f"dma{p}", "role": "dma", "port": p} for p in (0, 1)] + \
        [{"cell": f"stat{p}", "role": "stat", "port": p} for p in (0, 1)] + \
        [{"cell": "usr_access", "role": "usr_access", "port": None}]
    (d / "kabe_stage4.cells.json").write_text(json.dumps({"cells": cells}))
    _set_artifacts(d)
    keys = {}
    for name in ("ci", "other"):
        keys[name] = tmp_path / f"{name}_key"
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(keys[name])], check=True)
    allowed = tmp_path / "allowed_signers"
    allowed.write_text(f"ci@kabe {keys['ci'].with_suffix('.pub').read_text()}")
    monkeypatch.setattr(signing, "allowed_signers_file", lambda settings=None: allowed)

    def sign(unit_dir: Path, key: Path = keys["ci"]) -> None:
        (unit_dir / signing.SIGNATURE_FILE).write_bytes(
            signing.sign_unit(f"{sha}/stage4/vivado", signing.hash_dir(unit_dir), key))
    return d, sha, sign, keys["other"]


def _set_artifacts(d: Path) -> None:
    """manifest.json and metrics.json list the files' sha256 now (what an attacker rewrites together)."""
    artifacts = {k: provenance.sha256_file(d / f"kabe_stage4.{ext}")
                 for k, ext in (("bit", "bit"), ("hwh", "hwh"), ("cells", "cells.json"))}
    (d / "manifest.json").write_text(json.dumps({"artifacts": artifacts}))
    rec = json.loads((d / "metrics.json").read_text())
    (d / "metrics.json").write_text(json.dumps({**rec, "artifacts": artifacts}))


def _deployable(d: Path, sha: str):
    return _archived_build(designs.get("stage4"), "vivado", provenance.Commit(sha, False), d.parent.parent.parent)


def test_a_unit_built_here_and_a_signed_unit_are_deployable(unit):
    d, sha, sign, _ = unit
    assert _deployable(d, sha)[2].name == "kabe_stage4.bit"  # no signature: built on this machine
    sign(d)
    assert _deployable(d, sha)[2].name == "kabe_stage4.bit"


def test_one_byte_of_a_signed_bitstream_changed_is_not_deployed_even_with_its_hashes_rewritten(unit):
    d, sha, sign, _ = unit
    sign(d)
    bit = d / "kabe_stage4.bit"
    data = bytearray(bit.read_bytes())
    data[100] ^= 0x01
    bit.write_bytes(bytes(data))
    _set_artifacts(d)  # the manifest and metrics agree with the trojan: only the signature can tell
    with pytest.raises(ssh.DeployError) as e:
        _deployable(d, sha)
    assert str(e.value) == (f"{d}: its signature does not verify (file 'kabe_stage4.bit' changed since it was signed); "
                            f"kabe deploys only bitstreams built here or signed by a key in the allowed signers")


def test_a_unit_signed_by_a_key_not_allowed_is_not_deployed(unit):
    d, sha, sign, other = unit
    sign(d, other)
    with pytest.raises(ssh.DeployError, match=r"its signature does not verify \(signed by a key not in .*allowed_signers\)"):
        _deployable(d, sha)


def test_reused_from_cannot_name_a_commit_this_repository_does_not_have(unit):
    d, sha, sign, _ = unit
    rec = json.loads((d / "metrics.json").read_text())
    rec["reused_from"] = {"commit": "f" * 40, "dirty": False, "key": "0" * 64}
    (d / "metrics.json").write_text(json.dumps(rec))
    with pytest.raises(ssh.DeployError, match=f"built at {'f' * 12}, a commit not in this repository"):
        _deployable(d, sha)
