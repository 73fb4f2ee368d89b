"""The V80 post's arithmetic (seeds/004). Tolerance: 0.5% relative (the post rounds 820/4.5 to 182
before multiplying; the model keeps the unrounded chain, 0.1% higher)."""

import pytest

from llm_accel.perf import whatif_v80 as w

REL = 0.005


def rows():
    return {(r.model, r.bandwidth_gbps): r for r in w.table()}


@pytest.mark.parametrize("key,expected", sorted(w.DOC_TOK_S.items()))
def test_reproduces_the_posts_figures(key, expected):
    r = rows()[key]
    got = (r.baseline_tok_s, r.sparse_tok_s, r.speculative_tok_s)
    assert got == pytest.approx(expected, rel=REL)


def test_at_amds_460():
    r = rows()
    assert r[("Qwen 4B Q4", 460.0)].baseline_tok_s == pytest.approx(230)
    assert r[("Qwen 4B Q4", 460.0)].speculative_tok_s == pytest.approx(1840)
    assert r[("Qwen 9B Q4", 460.0)].speculative_tok_s == pytest.approx(460 / 4.5 * 8)


def test_assumptions_are_explicit():
    assert w.FETCH_FRACTION.value == 0.25 and w.SPECULATION.value == 2.0
    assert {k: a.value for k, a in w.MODEL_BYTES.items()} == {"Qwen 4B Q4": 2.0, "Qwen 9B Q4": 4.5}
    for a in (*w.MODEL_BYTES.values(), w.FETCH_FRACTION, w.SPECULATION):
        assert a.source and len(a.condition) > 40
    # the multipliers are the only thing between the wall and the headline
    r = w.table(fetch_fraction=1.0, speculation=1.0)
    assert all(x.speculative_tok_s == x.baseline_tok_s for x in r)


def test_render_markdown():
    md = w.render_markdown()
    for s in ("3,280", "1,458", "1,840", "820", "460", "holds only if", "https://"):
        assert s in md
