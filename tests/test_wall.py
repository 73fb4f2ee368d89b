"""The wall model against the lab report's Figure 1 / stage table (seeds/000).

Tolerances: bounds are exact arithmetic (1e-9); the document's rounded ratios (93.6%, 96.7%, 4.8x,
9.16 = 1.83 x 5) are checked to the precision they were printed with (0.5 percentage points, 0.1%).
"""

import pytest

from llm_accel.perf import wall
from kabe.boards import get
from llm_accel import figures
from llm_accel.perf.wall import StreamConfig, bound, config_from_metrics, figure1, lane_gbps


def test_board_profiles_and_the_studys_figures():
    pynq, v80 = get("pynq-z1"), get("v80")
    assert pynq.part == "xc7z020clg400-1"
    assert (pynq.port_beat_bytes, pynq.ports_max, pynq.dsp, pynq.lut) == (8, 2, 220, 53_200)
    assert pynq.default_clock_period_ns == 7.00 and (pynq.dma_length_width, pynq.dma_burst) == (26, 16)
    # the measured wall is the study's figure, not the board profile's
    assert wall.wall_of(pynq) == float(figures.PYNQ_Z1_WALL) == 1.97 and float(figures.PYNQ_Z1_DDR) == 2.10
    # documented 93.6%; rounded figures give 93.8%
    assert 1.97 / 2.10 == pytest.approx(wall.DOC_RATIOS["wall_over_theoretical"], abs=0.005)
    bw = figures.V80_BANDWIDTHS
    assert (float(bw["peak"]), float(bw["post"]), float(bw["amd"])) == (819.2, 820, 460)
    assert bw["amd"].source.startswith("https://") and "460" in bw["amd"].quote and "HBM2" in bw["amd"].what
    assert v80.memory == "HBM2e" and v80.memory_capacity_bytes == 32 * 2**30 == figures.V80_HBM_BYTES.value
    assert get("V80") == v80 and get("pynq_z1") == pynq
    with pytest.raises(ValueError):
        wall.wall_of(v80)  # nobody measured it


def test_lane_arithmetic():
    one = StreamConfig("a", "probe", 1, 7.0)
    two = StreamConfig("b", "probe", 2, 7.0)
    assert lane_gbps(one) == pytest.approx(8 / 7.0)  # 1.143 GB/s: about half of DDR
    assert lane_gbps(two) == pytest.approx(16 / 7.0)
    assert bound(one).limiter == "lane" and bound(one).bound_gbps == pytest.approx(8 / 7.0)
    assert bound(two).limiter == "memory" and bound(two).bound_gbps == 1.97
    half = StreamConfig("c", "int8", 2, 7.0, beats_per_cycle=0.5)
    assert bound(half).bound_gbps == pytest.approx(8 / 7.0)


def test_figure1_bound_and_measured_side_by_side():
    rows = {r.kind: r for r in figure1()}
    for r in rows.values():
        assert r.bound_gbps == pytest.approx(1.97)  # two HP ports at 7 ns: the wall, not the lane
        assert r.measured_gbps <= r.bound_gbps + 1e-12  # every measurement sits at or below the bound
    assert rows["int8"].bound_weights_gps == pytest.approx(1.97)
    assert rows["ternary"].bound_weights_gps == pytest.approx(9.85)
    assert rows["probe"].bound_weights_gps == 0
    assert (rows["int8"].measured_gbps, rows["ternary"].measured_gbps) == (1.91, 1.83)
    assert (rows["int8"].measured_weights_gps, rows["ternary"].measured_weights_gps) == (1.91, 9.16)
    # 9.16 G weights/s = 1.83 GB/s x 5: 9.15, and 1.83 is printed to +-0.005, so x5 is good to +-0.025
    assert rows["ternary"].measured_gbps * 5 == pytest.approx(9.16, abs=0.025)
    assert 9.16 / 5 == pytest.approx(1.83, abs=0.005)
    # 4.8x, and stage 3 = 96.7% of the probe (rounded figures give 97.0%)
    assert rows["ternary"].measured_weights_gps / rows["int8"].measured_weights_gps == pytest.approx(4.8, abs=0.05)
    assert rows["int8"].measured_gbps / rows["probe"].measured_gbps == pytest.approx(0.967, abs=0.005)


def test_figure1_measured_only_at_the_documents_clock():
    assert all(r.measured_gbps is None for r in figure1(clock_period_ns=10.0))
    slow = figure1(clock_period_ns=10.0)
    assert all(r.limiter == "lane" and r.bound_gbps == pytest.approx(1.6) for r in slow)


def test_config_from_metrics_takes_the_builds_clock():
    metrics = {"design": "stage4", "clock_period_ns": 8.0}
    cfg = config_from_metrics(metrics, {"kind": "ternary", "ports": 2})
    assert cfg.clock_period_ns == 8.0 and cfg.beats_per_cycle == 1.0
    r = bound(cfg)
    assert r.lane_gbps == pytest.approx(2.0) and r.bound_gbps == pytest.approx(1.97)
    cfg = config_from_metrics(metrics, {"kind": "ternary", "ports": 2}, sim={"beats": 900, "cycles": 1000})
    assert cfg.beats_per_cycle == pytest.approx(0.45)
    assert bound(cfg).bound_gbps == pytest.approx(0.9) and bound(cfg).limiter == "lane"

    class D:  # duck-typed like kabe.project.designs.Design
        kind, ports, name = "int8", 1, "stage3"
    assert config_from_metrics({"clock_period_ns": 7.0}, D()).ports == 1
    with pytest.raises(ValueError, match="clock_period_ns"):
        config_from_metrics({"design": "x"}, D())
    with pytest.raises(ValueError, match="kind"):
        StreamConfig("x", "fp16", 1, 7.0)


def test_render_markdown_has_a_row_per_stage():
    md = wall.render_markdown(figure1(include_one_port_probe=True))
    assert md.count("\n") == 1 + 4
    assert "9.16" in md and "9.85" in md and "lane" in md
