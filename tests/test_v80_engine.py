"""The V80 what-if fed by the engine's archived build (llm_accel.perf.v80_engine): channels, measured
beats/clk and the clock come from the record, so the table moves when the engine does."""

from __future__ import annotations

import pytest

from kabe.boards import get

ALVEO_V80 = get("v80")
from llm_accel.perf import v80_engine
from kabe.page import page_hooks, report
from llm_accel import page


def _record(ports=4, bpc=1.0, period=2.5, flow="open", wns=None, sim=True) -> dict:
    rec = {"design": "v80_ternary", "commit": "c" * 40, "flow": flow, "part": ALVEO_V80.part,
           "clock_period_ns": period, "finished": "2026-12-02T01:00:00+00:00",
           "timing": {"estimated": flow == "open", "wns_ns": wns}}
    if sim:
        rec["sim"] = {"ports": ports, "beats_per_cycle": bpc, "beats": 1000, "cycles": 1000}
    return rec


def test_engine_bandwidth_comes_from_the_record():
    f = v80_engine.facts_from_record(_record())
    assert (f.channels, f.beat_bytes, f.beats_per_cycle, f.clock_mhz) == (4, 32, 1.0, 400.0)
    assert f.engine_gbps == pytest.approx(51.2)  # 4 x 32 B x 1 x 400 MHz
    half = v80_engine.facts_from_record(_record(bpc=0.5))
    assert half.engine_gbps == pytest.approx(25.6)
    rows = {(r.model, r.bandwidth_label): r for r in v80_engine.table(f)}
    r = rows[("Qwen 4B Q4", "amd")]
    assert (r.bound, r.channels_to_saturate) == ("engine", 36)  # 460 / 12.8 = 35.9
    assert r.baseline_tok_s == pytest.approx(51.2 / 2.0)
    assert r.speculative_tok_s == pytest.approx(51.2 / 2.0 / 0.25 * 2)


def test_a_full_card_is_bound_by_hbm_at_amds_figure_and_the_posts_needs_more_than_the_card():
    f = v80_engine.facts_from_record(_record(ports=64))  # 819.2 GB/s: the HBM2e peak
    rows = {(r.model, r.bandwidth_label): r for r in v80_engine.table(f)}
    amd = rows[("Qwen 9B Q4", "amd")]
    assert amd.bound == "HBM" and amd.baseline_tok_s == pytest.approx(460 / 4.5)
    post = rows[("Qwen 4B Q4", "post")]
    assert post.bound == "engine" and post.channels_to_saturate == 65  # 820 > 64 x 12.8
    assert post.doc() == (410.0, 1640.0, 3280.0)
    peak = rows[("Qwen 4B Q4", "peak")]  # AVED's 819.2 GB/s: exactly the 64 channels the card has
    assert peak.bound == "HBM" and peak.channels_to_saturate == 64
    md = v80_engine.render_markdown(f)
    assert "65 (the card has 64)" in md and "(post 3,280)" in md and "a target, not met" in md


def test_only_a_routed_timing_that_meets_the_clock_counts_as_measured():
    assert not v80_engine.facts_from_record(_record(flow="open", wns=0.3)).timing_measured  # an estimate
    assert not v80_engine.facts_from_record(_record(flow="vivado", wns=-0.1)).timing_measured
    assert v80_engine.facts_from_record(_record(flow="vivado", wns=0.1)).timing_measured


@pytest.mark.parametrize("rec, says", [
    (_record(sim=False), "no simulation result"),
    (_record(ports=65), "65 channels, but the Alveo V80 has 64"),
    (_record(bpc=0), "sim.beats_per_cycle must be a positive number"),
    (_record(period=float("nan")), "clock_period_ns must be a positive number"),
    ({**_record(), "sim": {"ports": True, "beats_per_cycle": 1}}, "sim.ports must be a positive integer"),
])
def test_a_record_that_cannot_feed_the_model_is_named(rec, says):
    with pytest.raises(v80_engine.EngineRecordError, match=says):
        v80_engine.facts_from_record(rec)


def _page(records):
    return page_hooks.PageContext(work=None, records=records, figure=None, table=report.markdown_table_to_html)


def test_the_page_section_takes_the_newest_v80_build():
    old, new = _record(ports=2), {**_record(ports=8), "finished": "2026-12-02T02:00:00+00:00"}
    zynq = {**_record(ports=64), "part": "xc7z020clg400-1"}  # not a V80 build: never feeds the table
    html_ = page._v80_engine(_page([old, new, zynq]))
    assert "8 channel(s)" in html_ and "102.4 GB/s taken in" in html_
    assert "No V80 design is archived" in page._v80_engine(_page([zynq]))
