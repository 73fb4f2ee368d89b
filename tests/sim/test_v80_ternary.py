"""cores/v80_ternary: stage 4's ternary engine on 256-bit HBM beats, one per channel, bit-exact in
Verilator against the same numpy model (llm_accel.model.v80_ternary on llm_accel.model.frames/ternary).

The model tests need no simulator; the simulation compiles the design's harness once into
build/sim/v80_ternary/ (reused afterwards) and streams a few hundred rows per channel.
"""

from __future__ import annotations

from kabe.project.design_context import DesignContext
from kabe.sim.ask import SimAsk
import numpy as np
import pytest

from kabe.project import designs
from llm_accel.model import frames, ternary, v80_ternary
from kabe.verify import Context, as_words, resolve
from kabe.sim import runner

ROWS_PER_PORT = 150  # x (80 beats) + 150 rows x 16 beats = 2,480 beats per channel


def _context(ports: int, bits: int = 256, row_bytes: int = 512, fraction: float | None = None) -> Context:
    return Context(inputs={f"s{p}_axis": bits for p in range(ports)}, outputs={f"m{p}_axis": 32 for p in range(ports)},
                   status={n: w for p in range(ports) for n, w in ((f"stat{p}_invalid", 32), (f"stat{p}_overflow", 1))},
                   options={"row_bytes": row_bytes, "invalid_fraction": fraction})


def test_the_model_is_stage4s_frames_on_wider_beats():
    """Same seed, same bytes and the same expected words as stage 4's model; only the beat is 32 bytes."""
    wide = v80_ternary.stimulus(5, 40, _context(2, fraction=0.01))
    narrow = frames.ternary_stimulus(5, 40, _context(2, bits=64, fraction=0.01))
    for p in range(2):
        beats = np.asarray(wide.inputs[f"s{p}_axis"])  # kabe.verify.Chunks, read whole
        assert wide.inputs[f"s{p}_axis"].beats == 80 + 20 * 16
        assert beats.dtype == np.uint8 and beats.shape == (80 + 20 * 16, 32)
        assert np.array_equal(beats.reshape(-1).view("<u8"), np.asarray(narrow.inputs[f"s{p}_axis"]))
        assert np.array_equal(as_words("s", beats, 256).reshape(-1), np.asarray(narrow.inputs[f"s{p}_axis"]))
    assert wide.expected_beats == {"m0_axis": 20, "m1_axis": 20} and wide.stall_free
    exp_w, exp_n = resolve(wide.expected), resolve(narrow.expected)
    assert all(np.array_equal(exp_w[k], exp_n[k]) and exp_w[k].dtype == np.int32 for k in exp_n)
    status = resolve(wide.status)
    assert status == resolve(narrow.status) and status["stat0_invalid"] > 0


def test_the_expected_words_are_the_ternary_model_by_hand():
    """One channel, checked against llm_accel.model.ternary directly (x, rows and invalid bytes from the stream)."""
    stim = v80_ternary.stimulus(11, 30, _context(1, fraction=0.02))
    stream = np.asarray(stim.inputs["s0_axis"]).reshape(-1)
    x = stream[:5 * 512].view(np.int8)
    rows = stream[5 * 512:].reshape(30, 512)
    want, invalid = ternary.matvec_hw(x, rows)
    assert invalid > 0 and resolve(stim.status)["stat0_invalid"] == invalid
    assert np.array_equal(resolve(stim.expected)["m0_axis"], want)


def test_the_model_refuses_what_the_design_cannot_take():
    with pytest.raises(ValueError, match=r"4 HBM channels.*10 does not divide by 4; use 8 or 12"):
        v80_ternary.stimulus(1, 10, _context(4))
    with pytest.raises(ValueError, match=r"row_bytes 48 is not a whole number of s0_axis's 256-bit beats"):
        v80_ternary.stimulus(1, 4, _context(2, row_bytes=48))
    with pytest.raises(ValueError, match="positive integer"):
        v80_ternary.stimulus(1, 0, _context(2))
    assert v80_ternary.stimulus(1, None, _context(3)).expected_beats == {f"m{p}_axis": 64 for p in range(3)}


def test_the_design_declares_the_v80_and_wide_streams():
    d = designs.get("v80_ternary")
    assert d.board.key == "v80" and d.verify.value == "llm_accel.model.v80_ternary:stimulus"
    assert 2 <= d.ports <= d.board.memory_ports.count
    assert d.streams.inputs == {f"s{p}_axis": 8 * d.board.memory_ports.beat_bytes for p in range(d.ports)}
    assert d.streams.outputs == {f"m{p}_axis": 32 for p in range(d.ports)}
    assert d.constraints.name == "v80.xdc" and d.budgets["dsp"] == {"eq": 0}


@pytest.mark.e2e  # a Verilator build of the design, frames streamed through it: out of the fast tier
def test_the_design_is_bit_exact_in_verilator_at_one_beat_per_clock():
    d = designs.get("v80_ternary")
    rows = ROWS_PER_PORT * d.ports
    r = runner.run_sim(DesignContext(designs.get(d)), SimAsk(rows, seed=9, invalid_fraction=0.01))
    assert r["mismatches"] == 0, r["first_mismatches"]
    assert r["problems"] == [] and r["passed"]
    assert r["rows_checked"] == rows == r["words_checked"]
    beats_per_port = 5 * d.row_bytes // 32 + ROWS_PER_PORT * d.row_bytes // 32
    assert r["beats"] == beats_per_port * d.ports
    for port in r["per_port"]:
        # the harness offered a beat every cycle; the engine took every one (tready constant 1)
        assert port["beats"] == beats_per_port and port["cycles"] == beats_per_port, port
        assert port["beats_per_cycle"] == 1.0 and port["tready_low_cycles"] == 0
        assert port["words"] == ROWS_PER_PORT and port["stat_overflow"] == 0
        assert port["stat_invalid"] == port["expected_invalid"] > 0  # invalid bytes counted, as the model says
    assert r["beats_per_cycle"] == 1.0
