"""Archives are written whole or not at all, and a dirty tree never lands on a clean commit's name."""

import pytest

from kabe.store.archive import archive_dir, write_atomic
from kabe.base.provenance import Commit


class Boom(Exception):
    pass


def test_replaces_the_whole_directory(tmp_path):
    dest = tmp_path / "reports" / "a"
    write_atomic(dest, {"metrics.json": "{}", "raw/yosys.log": "log"})
    write_atomic(dest, {"metrics.json": "{\"v\": 2}"})
    assert sorted(p.name for p in dest.rglob("*")) == ["metrics.json"]


def test_a_failed_write_leaves_the_previous_archive_and_no_debris(tmp_path, monkeypatch):
    dest = tmp_path / "reports" / "a"
    write_atomic(dest, {"metrics.json": "old"})
    import shutil

    def fail(*a, **kw):
        raise Boom()

    monkeypatch.setattr(shutil, "copyfile", fail)
    with pytest.raises(Boom):
        write_atomic(dest, {"metrics.json": "new", "big.rpt": tmp_path / "source.rpt"})
    assert (dest / "metrics.json").read_text() == "old"
    assert [p.name for p in dest.parent.iterdir()] == ["a"]  # no half-written temp directory left


def test_dirty_tree_archives_under_its_own_name(tmp_path):
    clean = archive_dir(Commit("a" * 40, False), "stage4", "open", tmp_path)
    dirty = archive_dir(Commit("a" * 40, True), "stage4", "open", tmp_path)
    assert clean != dirty and dirty.parts[-3] == "a" * 40 + "-dirty"
