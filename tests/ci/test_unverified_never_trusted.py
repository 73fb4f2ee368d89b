"""A unit `kabe archive pull` kept apart as unverified (issue 21, build item 3) is never a regression
base, never a cache entry, never deployable: real git (a bare remote, a developer's clone that pushes
unsigned, CI's fresh clone that pulls), a real pull, the real consumers (`kabe ci`, kabe.cache.cache,
deploy's archive check). Each test then moves the same unit into reports/ (where a build made on
this machine lies) and sees the consumer take it: only where the pull put it keeps it out.
The page and `kabe diff` side is tests/records/test_unverified_history.py."""

from __future__ import annotations

import io
import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from rich.console import Console

from kabe.project import designs
from kabe.base import provenance
from kabe.ci import CiOptions, run
from kabe.deploy import ssh
from kabe.deploy.host import _archived_build
from kabe.cache import cache
from kabe.store import store

from .conftest import clone, git, write_archive, commit_file as _commit

MATERIAL = {"format": cache.KEY_FORMAT, "design": "stage2", "flow": "open", "what": "an unsigned unit's inputs"}


def _vivado_unit(reports: Path, sha: str) -> Path:
    """A passing stage4 vivado build with its bitstream, .hwh and cell list, the manifest listing them."""
    from records_fixtures import record

    d = reports / sha / "stage4" / "vivado"
    d.mkdir(parents=True)
    (d / "kabe_stage4.bit").write_bytes(b"\x00\x09 STAND-IN bitstream bytes " * 40)
    (d / "kabe_stage4.hwh").write_text("<hwh/>")
    cells = [{"cell": f"dma{p}", "role": "dma", "port": p} for p in (0, 1)] + \
        [{"cell": f"stat{p}", "role": "stat", "port": p} for p in (0, 1)] + [{"cell": "usr_access", "role": "usr_access", "port": None}]
    (d / "kabe_stage4.cells.json").write_text(json.dumps({"cells": cells}))
    artifacts = {k: provenance.sha256_file(d / f"kabe_stage4.{ext}") for k, ext in (("bit", "bit"), ("hwh", "hwh"),
                                                                                   ("cells", "cells.json"))}
    (d / "manifest.json").write_text(json.dumps({"artifacts": artifacts}))
    (d / "metrics.json").write_text(json.dumps({**record(sha, wns=0.25, flow="vivado"), "artifacts": artifacts}))
    return d


@pytest.fixture()
def pulled(remote, tmp_path, monkeypatch):
    """The developer builds main's base commit (stage2 open, 232 LUT, with its cache key; stage4 vivado
    with a bitstream) and pushes the archive unsigned; CI's clone pulls it (bitstreams too): every unit
    is kept apart. (CI clone on a feature branch one commit ahead, reports/, base, head)."""
    monkeypatch.delenv("KABE_SIGNING_KEY", raising=False)
    dev = clone(remote, tmp_path / "dev")
    base = _commit(dev, "base on main")
    git(dev, "push", "-q", "origin", "main")
    d = write_archive(dev / "reports", base, lut=232, wns=2.0)
    (d / cache.KEY_FILE).write_text(json.dumps(MATERIAL))
    rec = json.loads((d / "metrics.json").read_text())
    (d / "metrics.json").write_text(json.dumps({**rec, "cache_key": cache.key_of_material(MATERIAL)}))
    _vivado_unit(dev / "reports", base)
    assert store.push("origin", dev, dev / "reports", bitstreams=True).signed_by is None
    ci = clone(remote, tmp_path / "ci")
    reports = ci / "reports"
    report = store.pull("origin", ci, reports, bitstreams=True)
    assert sorted(report.unverified) == [(f"{base}/stage2/open", "unsigned"), (f"{base}/stage4/vivado", "unsigned")]
    assert not report.added and not (reports / base).exists()
    head = _commit(ci, "change", branch="feature")
    return ci, reports, base, head


def _trust_by_hand(reports: Path, unit: str) -> None:
    """The contrast: the same unit where a build of this machine lies."""
    (reports / unit).parent.mkdir(parents=True, exist_ok=True)
    shutil.move(reports / store.UNVERIFIED / unit, reports / unit)


def _ci(repo: Path) -> tuple[int, str, str]:
    out = io.StringIO()
    reports = repo / "reports"
    opts = CiOptions(designs=["stage2"], flow="open", summary=reports / "s.md", junit=reports / "j.xml", push=False)
    code = run(opts, Console(file=out, width=200, color_system=None), root=repo, reports_root=reports)
    return code, out.getvalue(), (reports / "s.md").read_text()


def test_an_unverified_build_of_the_base_commit_is_never_the_regression_base(pulled):
    ci, reports, base, head = pulled
    write_archive(reports, head, lut=260, wns=2.0)  # +12 % LUT: a regression against a 232-LUT base
    code, out, md = _ci(ci)
    assert f"unverified {base}/stage2/open: unsigned" in out  # kabe ci's own pull kept it apart again
    # no trusted base: kabe ci builds the base here (this test repository is no kabe project, so it cannot)
    # and the design fails saying why: nothing unjudged passes (issue 36, item 2)
    assert code == 2, out
    assert (f"stage2 (open): its regression rules cannot be judged: no trusted build of the base {base[:12]} "
            f"and building it here failed") in out
    _trust_by_hand(reports, f"{base}/stage2/open")
    code, out, md = _ci(ci)
    assert code == 1 and f"regression: stage2 lut 232 at base {base[:12]} -> 260 here" in out


def test_an_unverified_unit_is_never_a_cache_entry_even_with_its_key(pulled):
    ci, reports, base, _ = pulled
    key = cache.key_of_material(MATERIAL)
    assert cache.find(reports, "stage2", "open", key, git_root=ci).entry is None
    assert cache.nearest(reports, "stage2", "open") is None  # nor what a miss is explained against
    _trust_by_hand(reports, f"{base}/stage2/open")
    assert cache.find(reports, "stage2", "open", key, git_root=ci).entry.archive == reports / base / "stage2" / "open"


def test_an_unverified_bitstream_is_never_deployable(pulled):
    ci, reports, base, _ = pulled
    stage4, commit = designs.get("stage4"), provenance.Commit(base, False)
    assert (reports / store.UNVERIFIED / base / "stage4" / "vivado" / "kabe_stage4.bit").is_file()  # it came
    with pytest.raises(ssh.DeployError) as e:
        _archived_build(stage4, "vivado", commit, reports)
    assert str(e.value).startswith(f"{reports / base / 'stage4' / 'vivado' / 'metrics.json'}: ")
    _trust_by_hand(reports, f"{base}/stage4/vivado")
    assert _archived_build(stage4, "vivado", commit, reports)[2].name == "kabe_stage4.bit"
