"""The streaming harness and its runner: every design matches numpy bit for bit, and a broken one is caught.

Designs are compiled once into build/sim/<design>/<key>/ and reused (Verilator compiles take
10-20 s each on a 2-core machine); runs here are small (a few hundred rows per port).
"""

from __future__ import annotations

from kabe.project.design_context import DesignContext
from kabe.sim.ask import SimAsk
import json

import numpy as np
import pytest

from pathlib import Path

from kabe.project import designs
from kabe.base.errors import UserError
from llm_accel.model import frames
from kabe.verify import Context, as_words
from kabe.base.paths import CORES
from kabe.sim import runner, verilator_build

pytestmark = pytest.mark.e2e  # end to end: real tools, minutes (the fast tier leaves it out: -m 'not e2e')

# The designs the project plans, plus any other design.yaml in the tree.
# (an HLS design's C-simulation is tests/sim/test_csim.py's)
DESIGNS = sorted({"stage2", "stage2_2hp", "stage3", "stage3_naive", "stage4"}
                 | {p.parent.name for p in CORES.glob("*/design.yaml") if "\nhls:" not in p.read_text()})
SMALL_ROWS_PER_PORT = {"attention": 48}  # context length of the one frame per port


def _design(name: str) -> designs.Design:
    if not (CORES / name / "design.yaml").exists():
        pytest.skip(f"cores/{name}/design.yaml is not in this tree yet")
    return designs.get(name)  # an invalid design.yaml fails the test rather than skipping it


# ---- comparison logic, no simulator -------------------------------------------------------------

def _summary(words: int, tlast_at=None):
    return {"tlast_at": [words - 1] if tlast_at is None else tlast_at}


def _compare(expected, got, summary):
    first, problems = [], []
    exp = as_words("m0_axis", np.asarray(expected, dtype=np.int32), 32)
    n = runner.compare_output("m0_axis", 32, exp, True, np.asarray(got, dtype=np.uint64), summary, first, problems)
    return n, first, problems


def test_compare_clean():
    exp = np.array([5, -3, 7], dtype=np.int32)
    assert _compare(exp, exp.view(np.uint32).astype(np.uint64), _summary(3)) == (0, [], [])


def test_compare_catches_a_flipped_word_and_reports_it_signed():
    exp = np.array([5, -3, 7], dtype=np.int32)
    got = exp.copy()
    got[1] = -4
    n, first, problems = _compare(exp, got.view(np.uint32).astype(np.uint64), _summary(3))
    assert n == 1 and first == [{"port": "m0_axis", "beat": 1, "expected": "0xfffffffd (-3)", "got": "0xfffffffc (-4)"}]
    assert not problems
    assert runner.mismatch_line(first[0]) == "  m0_axis beat 1: expected 0xfffffffd (-3), got 0xfffffffc (-4)"


def test_compare_catches_missing_extra_tlast_stats_and_stalls():
    exp = np.arange(4, dtype=np.int32)
    n, first, problems = _compare(exp, exp[:3].astype(np.uint64), _summary(3))
    assert n == 1 and any("never came out" in p for p in problems) and first[0]["got"] is None
    n, _, problems = _compare(exp, np.arange(5, dtype=np.uint64), _summary(5))
    assert n == 1 and any("extra" in p for p in problems)
    _, _, problems = _compare(exp, exp.astype(np.uint64), _summary(4, tlast_at=[1, 3]))
    assert any("tlast" in p for p in problems)
    problems = []
    runner.check_status({"stat0_invalid": 2, "stat0_overflow": 1}, {"stat0_invalid": 3, "stat0_overflow": 0}, problems)
    assert problems == ["stat0_invalid = 2 at the end of the run, the model expects 3",
                        "stat0_overflow = 1 at the end of the run, the model expects 0"]
    problems = []
    ins = [{"name": "s0_axis", "tready_low_cycles": 7, "beats_accepted": 10, "beats_in": 10}]
    runner.check_inputs(ins, True, problems)
    assert any("tready was low on 7" in p for p in problems)
    problems = []
    runner.check_inputs(ins, False, problems)  # a design that may stall its input (not kabe's contract)
    assert problems == []


def test_wide_beats_compare_by_whole_beat():
    """A 128-bit output: a beat differing only in its top word is one mismatch, shown in hex."""
    exp_bytes = np.arange(32, dtype=np.uint8).reshape(2, 16)
    exp = as_words("m_axis", exp_bytes, 128)
    got = exp.copy()
    got[1, 1] ^= np.uint64(1 << 63)
    first, problems = [], []
    n = runner.compare_output("m_axis", 128, exp, False, got, _summary(2), first, problems)
    assert n == 1 and first[0]["beat"] == 1 and first[0]["expected"] == "0x1f1e1d1c1b1a19181716151413121110"
    assert first[0]["got"] == "0x9f1e1d1c1b1a19181716151413121110"


def test_rows_must_divide_by_ports():
    ctx = Context(inputs={"s0_axis": 64, "s1_axis": 64}, outputs={"m0_axis": 32, "m1_axis": 32})
    with pytest.raises(ValueError, match=r"2 HP ports.*131071 does not divide by 2; use 131070 or 131072"):
        frames.int8_stimulus(1, 131_071, ctx)
    with pytest.raises(ValueError, match="positive integer"):
        frames.int8_stimulus(1, 0, ctx)


def test_write_result_path(tmp_path):
    result = {"design": "stage4", "commit": "a" * 40, "dirty": True, "mismatches": 0}
    path = runner.write_result(result, root=tmp_path)
    assert path == tmp_path / f"{'a' * 40}-dirty" / "stage4" / "sim" / "result.json"
    assert json.loads(path.read_text())["mismatches"] == 0


# ---- real designs in Verilator ------------------------------------------------------------------

@pytest.mark.parametrize("name", DESIGNS)
def test_small_run_matches_the_model(name):
    d = _design(name)
    kind = d.verify.value.split(":")[1].removesuffix("_stimulus")  # this project's models: frames.<kind>_stimulus
    rows = SMALL_ROWS_PER_PORT.get(kind, 300) * d.ports
    r = runner.run_sim(DesignContext(designs.get(name)), SimAsk(rows, seed=7, invalid_fraction=0.01 if kind == "ternary" else None))
    assert r["mismatches"] == 0, r["first_mismatches"]
    assert r["problems"] == [], r["problems"]
    assert r["passed"]
    assert r["beats_per_cycle"] == 1.0
    assert r["simulator"] == "verilator" and r["version"]
    # the model's declared label (the V80 design's model declares none)
    assert r["kind"] == (kind if kind in ("probe", "int8", "ternary", "attention") else None)
    if kind == "ternary":
        assert r["stat_invalid"] > 0  # the invalid-byte path was exercised and agreed with the model
    if kind in ("int8", "ternary"):  # one result word per row
        assert r["rows_checked"] == rows


def test_the_model_declares_its_sizes():
    """The sizes come from the model (kabe.verify.Declares), not from the tool."""
    assert runner.declared_size(designs.get("stage4"), "full_size") == 524_278
    assert runner.declared_size(designs.get("stage4"), "check_size") == 128
    assert runner.declared_size(designs.get("stage5"), "full_size") == 4096  # a context of 2048 on each of 2 ports
    assert runner.declared_size(designs.get("v80_ternary"), "full_size") is None  # declares none: its own size None


def test_rows_not_divisible_is_refused_before_anything_runs():
    d = _design("stage4")
    with pytest.raises(UserError, match="does not divide by 2"):
        runner.run_sim(DesignContext(designs.get(d)), SimAsk(1001, build_root=Path("/nonexistent/never-built")))


def test_second_build_is_reused():
    d = _design("stage4")
    first = verilator_build.build(DesignContext(designs.get(d)))
    again = verilator_build.build(DesignContext(designs.get(d)))
    assert not again.compiled and again.key == first.key and again.exe.exists()


def test_broken_stage4_is_caught(monkeypatch, tmp_path):
    """The stage-4 engine with its adder-tree sum misaligned by one cycle must not pass."""
    d = _design("stage4")
    r = runner.run_sim(DesignContext(designs.get(d)), SimAsk(200, seed=3, params={"LATENCY_ADJUST": 1}))
    assert r["mismatches"] > 0 and not r["passed"]
    assert r["first_mismatches"] and r["first_mismatches"][0]["expected"] != r["first_mismatches"][0]["got"]
    # main() turns it into a non-zero exit status (archived under a temporary root here).
    monkeypatch.setattr(runner, "write_result", lambda result: runner.write_json_atomic(tmp_path / "r.json", result))
    assert runner.main(designs.get("stage4"), 200, 3, params={"LATENCY_ADJUST": 1}) == 1
    assert runner.main(designs.get("stage4"), 200, 3) == 0


def test_main_reports_a_bad_row_count():
    _design("stage4")
    assert runner.main(designs.get("stage4"), 1001, 1) == 2


def test_an_unsigned_data_path_mismatch_is_hex_at_the_ports_width():
    """issue 44: `{'port': 'm_axis', 'row': 0, 'expected': 4293141113, 'got': 4293163298}` (a Python repr,
    decimal). Now: hex as wide as the port, the beat's index, one line."""
    exp = as_words("m_axis", np.array([4293141113, 7], dtype=np.uint32), 32)
    got = exp.copy()
    got[0] = np.uint64(4293163298)
    first, problems = [], []
    assert runner.compare_output("m_axis", 32, exp, False, got, _summary(2), first, problems) == 1
    assert runner.mismatch_line(first[0]) == "  m_axis beat 0: expected 0xffe42279, got 0xffe47922"
    assert runner.mismatch_line({"port": "m_axis", "beat": 3, "expected": "0x00000001", "got": None}) == (
        "  m_axis beat 3: expected 0x00000001, got nothing (the beat never came out)")
