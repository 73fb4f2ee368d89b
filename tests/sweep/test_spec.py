"""kabe.sweep.spec: grids, lists, ids and the refusals, on the real stage4 design."""

from __future__ import annotations

import pytest

from kabe.project import designs
from kabe.sweep import spec


def test_grid_expands_every_combination_with_stable_ids():
    vs = spec.expand({"generator.adder_tree.stages": [2, 3], "clock_period_ns": [6, 7, 8]}, None, "t")
    assert len(vs) == 6 and len({v.id for v in vs}) == 6
    again = spec.expand({"clock_period_ns": [6, 7, 8], "generator.adder_tree.stages": [2, 3]}, None, "t")
    assert {v.id for v in vs} == {v.id for v in again}  # the id is of the settings, not of their order
    assert all(len(v.id) == 10 for v in vs)


def test_ids_hash_the_normalised_settings():
    a = spec.expand({"clock_period_ns": [7]}, None, "t")[0]
    b = spec.expand(None, [{"clock_period_ns": 7.0}], "t")[0]
    assert a.id == b.id  # 7 and 7.0 are the same period


def test_list_and_grid_deduplicate():
    vs = spec.expand({"clock_period_ns": [7]}, [{"clock_period_ns": 7}, {"synth_options": ["-nodsp"]}], "t")
    assert [v.settings for v in vs] == [{"clock_period_ns": 7.0}, {"synth_options": ["-nodsp"]}]


def test_synth_options_in_a_grid_is_one_value_per_list():
    vs = spec.expand({"synth_options": [["-nodsp"], ["-retime"]]}, None, "t")
    assert [v.settings["synth_options"] for v in vs] == [["-nodsp"], ["-retime"]]
    (v,) = spec.expand({"synth_options": ["-nodsp", "-retime"]}, None, "t")  # a flat list: one option set
    assert v.settings["synth_options"] == ["-nodsp", "-retime"]


@pytest.mark.parametrize("key, value, says", [
    ("clock_period_ns", -1, "positive"),
    ("clock_period_ns", True, "positive"),
    ("synth_options", ["nodsp"], "options like"),
    ("vivado.bogus", "x", "unknown Vivado setting"),
    ("vivado.impl_strategy", "a;b", "strategy or directive"),
    ("param.A.B", 1, "param.<NAME>"),
    ("frequency", 100, "unknown setting"),
])
def test_bad_settings_are_refused_with_the_key(key, value, says):
    with pytest.raises(spec.SweepError, match=says):
        spec.expand(None, [{key: value}], "cores/x/sweep.yaml")


def test_a_huge_grid_is_refused():
    with pytest.raises(spec.SweepError, match="combinations"):
        spec.expand({"param.A": list(range(100)), "param.B": list(range(100))}, None, "t")


def test_load_the_committed_stage4_sweep_and_override_an_axis():
    d = designs.get("stage4")
    sw = spec.load(d)
    assert sw.flow == "open" and len(sw.variants) == 6
    sw2 = spec.load(d, overrides=["clock_period_ns=7,8"])
    assert sorted({v.settings["clock_period_ns"] for v in sw2.variants}) == [7.0, 8.0] and len(sw2.variants) == 4


def test_no_sweep_file_and_no_overrides_says_what_to_do(tmp_path):
    d = designs.get("stage2")
    with pytest.raises(spec.SweepError, match="no sweep file"):
        spec.load(d, tmp_path / "none.yaml")
    assert len(spec.load(d, tmp_path / "none.yaml", ["clock_period_ns=7,8"]).variants) == 2
