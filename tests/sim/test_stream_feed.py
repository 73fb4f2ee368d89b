"""Inputs a model gives part by part (kabe.verify.Chunks), written to the harness through a FIFO while it
simulates (kabe.sim.stream_feed, harness.cpp's --in-stream): still bit-exact against the model, and a
broken model, a model that fails half way or miscounts its beats, is caught and said in one line."""

from __future__ import annotations

import numpy as np
import pytest

from kabe.project import designs
from kabe.project.design_context import DesignContext
from kabe.sim.ask import SimAsk
from kabe.base.paths import CORES
from kabe.sim import golden, runner
from kabe.verify import Chunks, Context, Stimulus
from llm_accel.model import frames, ternary

CTX = Context(inputs={"s0_axis": 64, "s1_axis": 64}, outputs={"m0_axis": 32, "m1_axis": 32},
              status={"stat0_invalid": 32, "stat1_invalid": 32}, options={"row_bytes": 512})


# ---- no simulator ---------------------------------------------------------------------------------

def test_chunks_read_whole_are_their_parts_in_order():
    c = Chunks(5, lambda: iter([np.array([1, 2], dtype=np.uint64), np.array([3, 4, 5], dtype=np.uint64)]))
    assert np.asarray(c).tolist() == [1, 2, 3, 4, 5]


def test_ternary_parts_give_the_frame_and_its_results_whoever_asks_first(monkeypatch):
    monkeypatch.setattr(frames.TernaryParts, "PART_ROWS", 7)  # several parts, the last one short
    stim = frames.ternary_stimulus(3, 2 * 30, CTX)
    assert isinstance(stim.inputs["s0_axis"], Chunks)
    words = np.asarray(stim.inputs["s0_axis"])
    assert words.shape[0] == stim.inputs["s0_axis"].beats == (2560 + 30 * 512) // 8
    raw = words.view(np.uint8)
    want, invalid = ternary.matvec_hw(raw[:2560].view(np.int8), raw[2560:].reshape(30, 512))
    got = stim.expected()["m0_axis"]
    assert got.dtype == np.int32 and (got == want).all()
    assert stim.status()["stat0_invalid"] == invalid
    # the results without the parts ever being read: the same (each part from its own seeded generator)
    again = frames.ternary_stimulus(3, 2 * 30, CTX)
    assert (again.expected()["m0_axis"] == got).all() and again.status() == stim.status()
    assert not (frames.ternary_stimulus(4, 2 * 30, CTX).expected()["m0_axis"] == got).all()  # the seed counts


def test_a_chunks_without_a_count_is_refused_in_one_line():
    d = designs.get("stage4")
    bad = Stimulus(inputs={"s0_axis": Chunks(-1, lambda: iter(())), "s1_axis": np.zeros(1, dtype=np.uint64)},
                   expected=lambda: {}, expected_beats={"m0_axis": 0, "m1_axis": 0})
    with pytest.raises(golden.ModelError, match=r"Chunks of s0_axis needs beats, a count >= 0 \(got -1\)"):
        golden.stimulus(d, lambda *a: bad, 1, None, golden.context_for(d))


# ---- real simulation (stage4 streams its frames) ----------------------------------------------------

pytest_e2e = pytest.mark.e2e


def _stage4() -> designs.Design:
    if not (CORES / "stage4" / "design.yaml").exists():
        pytest.skip("cores/stage4/design.yaml is not in this tree")
    return designs.get("stage4")


@pytest_e2e
def test_a_streamed_run_is_bit_exact_and_a_broken_model_fails(monkeypatch):
    d = _stage4()
    monkeypatch.setattr(frames.TernaryParts, "PART_ROWS", 64)  # several parts through the FIFO
    r = runner.run_sim(DesignContext(d), SimAsk(2 * 300, seed=5, invalid_fraction=0.01))
    assert r["passed"] and r["mismatches"] == 0 and r["words_checked"] == 600 and r["stat_invalid"] > 0
    assert r["beats_per_cycle"] == 1.0

    real = ternary.matvec_hw

    calls: dict[int, int] = {}

    def off_by_one(x, rows):  # the model's answer wrong in row 10 of each port's third part
        out, invalid = real(x, rows)
        calls[id(x)] = calls.get(id(x), 0) + 1
        if calls[id(x)] == 3:
            out = out.copy()
            out[10] += 1
        return out, invalid

    monkeypatch.setattr(ternary, "matvec_hw", off_by_one)
    r = runner.run_sim(DesignContext(d), SimAsk(2 * 300, seed=5, invalid_fraction=0.01))
    assert not r["passed"] and r["mismatches"] == 2
    assert sorted((m["port"], m["beat"]) for m in r["first_mismatches"]) == [("m0_axis", 138), ("m1_axis", 138)]

@pytest_e2e
def test_a_model_failing_half_way_is_its_error_not_the_harness(monkeypatch):
    d = _stage4()
    monkeypatch.setattr(frames.TernaryParts, "PART_ROWS", 64)
    real = frames._ternary_rows
    calls = []

    def fails_on_the_third(rng, rows, row_bytes, fraction):
        calls.append(rows)
        if len(calls) == 3:
            raise RuntimeError("disk of weights unreadable")
        return real(rng, rows, row_bytes, fraction)

    monkeypatch.setattr(frames, "_ternary_rows", fails_on_the_third)
    with pytest.raises(golden.ModelError, match=r"its parts of s[01]_axis raised RuntimeError: disk of weights unreadable"):
        runner.run_sim(DesignContext(d), SimAsk(2 * 300, seed=5))


@pytest_e2e
def test_a_model_miscounting_its_beats_is_said(monkeypatch):
    d = _stage4()
    real = frames._ternary_chunks

    def one_more(*a):
        chunks, finish = real(*a)
        return Chunks(chunks.beats + 1, chunks.parts), finish

    monkeypatch.setattr(frames, "_ternary_chunks", one_more)
    with pytest.raises(golden.ModelError, match=r"the parts of s[01]_axis hold \d+ beats, its Chunks says \d+"):
        runner.run_sim(DesignContext(d), SimAsk(2 * 100, seed=5))


# A user's model giving its inputs as Chunks (a 32-bit and a 128-bit stream, parts of odd sizes), on the
# width design of tests/sim/user_designs.py printing a line for every beat: megabytes on the
# harness's stdout while the feeds wait for it to read (a pipe holds 64 KiB: read on its own thread).
CHUNKED_WIDTH_MODEL = '''\
import numpy as np

from kabe.verify import Chunks, Stimulus


def stimulus(seed, size, context):
    n = 150_000 if size is None else size  # 4.8 MB of input: more than the FIFOs hold
    rng = np.random.default_rng(seed)
    words = rng.integers(0, 2**32, size=4 * n, dtype=np.uint32)
    wide = rng.integers(0, 256, size=(n, 16), dtype=np.uint8)

    def parts(a, k):
        return lambda: (a[i:i + k] for i in range(0, len(a), k))

    return Stimulus(
        inputs={"s_axis": Chunks(4 * n, parts(words, 3001)), "s_wide_axis": Chunks(n, parts(wide, 701))},
        expected={"m_axis": words.view(np.uint8).reshape(n, 16), "m_narrow_axis": wide.reshape(-1).view("<u4")},
        status={"beats_seen": 4 * n},
    )
'''


@pytest_e2e
def test_a_user_models_chunks_stream_while_the_design_prints_much(tmp_path, monkeypatch):
    import threading

    from . import user_designs as u

    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(golden, "ROOT", tmp_path)
    top = u.WIDTH_TOP.replace("endmodule", '  always @(posedge clk) if (s_axis_tvalid) $display("beat %h", s_axis_tdata);\n'
                                           "endmodule")
    d = designs.load(u.write_width(tmp_path, top, CHUNKED_WIDTH_MODEL))
    done: dict = {}
    t = threading.Thread(target=lambda: done.update(r=runner.run_sim(DesignContext(d), SimAsk(None, seed=4, build_root=tmp_path / "build"))))
    t.start()
    t.join(timeout=240)
    assert not t.is_alive(), "the run hung: the harness's output was not read while the feeds waited"
    r = done["r"]
    assert r["passed"], (r["problems"], r["first_mismatches"])
    assert r["words_checked"] == 150_000 + 600_000 and r["beats"] == 750_000
