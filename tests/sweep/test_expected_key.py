"""kabe.sweep.expected: the client's own key of a variant, which a worker's unit must carry (issue 36, item 4).
The key is made the way the worker's build makes it (the shipped tree, the variant applied, the tree's own
kabe): with no setting it is the checkout's own key, and a setting that changes an input changes it."""

from __future__ import annotations

import pytest
import json
import subprocess
import sys

from kabe.sweep import expected, source

from .conftest import kabe_env

pytestmark = pytest.mark.e2e  # end to end: real tools, minutes (the fast tier leaves it out: -m 'not e2e')


def test_the_variant_key_is_the_checkouts_key_with_the_variant_applied(repo, tmp_path):
    shipped = source.pack(repo)
    args = (shipped.identity(), shipped.archive, "stage2", "cores/stage2/stage2.core", "constraints/pynq_z1.xdc", "open")
    plain = expected.variant_key(*args, {}, parent=tmp_path / "keys")
    assert not isinstance(plain, str), plain
    own = subprocess.run([sys.executable, "-c", "import json; from kabe import build; from kabe.project import designs; "
                          "print(build.cache_key(designs.get('stage2'), 'open').key)"], cwd=repo, env=kabe_env(repo),
                         capture_output=True, text=True, check=True).stdout.strip().splitlines()[-1]
    assert plain.key == own  # a copy elsewhere, the same inputs: the same key
    slower = expected.variant_key(*args, {"clock_period_ns": 9.5}, parent=tmp_path / "keys")
    assert not isinstance(slower, str) and slower.key != plain.key
    assert json.dumps(slower.material["files"]) != json.dumps(plain.material["files"])  # the XDC's hash
    assert not list((tmp_path / "keys").iterdir())  # each copy removed


def test_a_variant_that_cannot_be_applied_or_keyed_says_why(repo, tmp_path):
    shipped = source.pack(repo)
    args = (shipped.identity(), shipped.archive, "stage2", "cores/stage2/stage2.core", "constraints/pynq_z1.xdc")
    why = expected.variant_key(*args, "open", {"param.NOPE": 1}, parent=tmp_path)
    assert isinstance(why, str) and why.startswith("the variant cannot be applied: ") and "NOPE" in why
    why = expected.variant_key(*args[:2], "no_such_design", *args[3:], "open", {}, parent=tmp_path)
    assert isinstance(why, str) and why.startswith("computing it failed (exit 1): ") and "no_such_design" in why
    damaged = {**shipped.identity(), "sha256": "0" * 64}
    why = expected.variant_key(damaged, *args[1:], "open", {}, parent=tmp_path)
    assert isinstance(why, str) and "arrived damaged" in why
