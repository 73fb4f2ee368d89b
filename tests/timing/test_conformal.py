"""The band's design-level conformal calibration (kabe.timing.conformal, issue 25): each design one
unit, the coverage a promise about a new design, classes calibrated apart, a path outside the data
given the widest band with its reason."""

from __future__ import annotations

import numpy as np
import pytest

from kabe.timing import conformal as C
from kabe.timing.fitted import Band


def test_one_big_design_does_not_set_the_band():
    """A design with 90 paths and 14 with 2 each: pooled, the big one would set the band; by
    design, the big one is 1/15 of the weight."""
    scores = np.array([0.5] * 90 + [r for _ in range(14) for r in (1.0, 1.2)])
    designs = ["big"] * 90 + [f"d{i}" for i in range(14) for _ in range(2)]
    lo, hi = C.conformal_quantiles(scores, designs, 0.8)
    assert lo > 0.6 and hi <= 1.25  # pooled, 0.5 would be the middle of the band


def test_coverage_holds_on_new_designs():
    """Designs of exchangeable paces: calibrated on 30, the band holds about `coverage` of the
    paths of each of 200 new ones (on average over designs), at 80 % and at 90 %."""
    rng = np.random.default_rng(7)

    def design(n):
        pace = np.exp(rng.normal(0, 0.2))
        return pace * np.exp(rng.normal(0, 0.15, n))

    for coverage in (0.8, 0.9):
        cal = [(design(int(rng.integers(1, 30))), f"c{k}") for k in range(30)]
        scores = np.concatenate([s for s, _ in cal])
        names = [d for s, d in cal for _ in s]
        lo, hi = C.conformal_quantiles(scores, names, coverage)
        got = np.mean([np.mean((lo <= s) & (s <= hi)) for s in (design(10) for _ in range(200))])
        assert coverage - 0.06 <= got <= coverage + 0.08, (coverage, got)


def test_the_band_holds_its_claim_not_more_with_few_designs():
    """Calibrated on 10 exchangeable designs, the band holds about `coverage` of a new design's paths
    on average over calibration draws: 80 +- 5 %, not the 90 % and more that split conformal's
    guarantee level (coverage x (1 + 1/K), no interpolation) gave with few designs (issue 44)."""
    rng = np.random.default_rng(11)

    def design(n):
        return np.exp(rng.normal(0, 0.2)) * np.exp(rng.normal(0, 0.15, n))

    got = []
    for _ in range(60):  # over many calibration draws: the claim is an average
        cal = [(design(8), f"c{k}") for k in range(10)]
        lo, hi = C.conformal_quantiles(np.concatenate([s for s, _ in cal]), [d for s, d in cal for _ in s], 0.8)
        got += [np.mean((lo <= s) & (s <= hi)) for s in (design(10) for _ in range(20))]
    assert 0.75 <= np.mean(got) <= 0.85, np.mean(got)


def _rows(n_designs, cls_levels, spread, rng):
    return [(float(np.exp(rng.normal(0, spread))), f"{cls_levels}-{d}", C.PathFeatures(cls_levels, 0, 10.0))
            for d in range(n_designs) for _ in range(3)]


def test_a_class_that_misses_more_gets_a_wider_band_and_a_thin_class_the_pooled_one():
    rng = np.random.default_rng(3)
    rows = _rows(20, 2, 0.1, rng) + _rows(20, 9, 0.5, rng) + _rows(3, 1, 0.1, rng)
    rows += [(1.0, "slow", C.PathFeatures(2, 0, 100.0))]  # one slow-clock design: too few
    b = C.calibrate(rows, 0.8)
    d, lc = b["classes"]["default"], b["classes"]["long-chain"]
    assert lc["hi"] - lc["lo"] > 2 * (d["hi"] - d["lo"])
    slow = b["classes"]["slow-clock"]
    assert slow["designs"] == 1 and "fewer than" in slow["why"]
    # the pooled band at the same coverage: a wider one would claim 80 % and hold more (issue 44)
    assert (slow["lo"], slow["hi"]) == (b["lo"], b["hi"])
    assert b["quantiles"] == [0.1, 0.9] and b["coverage"] == 0.8


def test_a_path_outside_the_data_gets_the_widest_band_and_says_why():
    rng = np.random.default_rng(4)
    band = Band.from_json(C.calibrate(_rows(20, 2, 0.1, rng) + _rows(20, 9, 0.4, rng), 0.8))
    inside = C.PathFeatures(3, 0, 10.0)
    assert band.outside_data(inside) is None
    lo, hi, name, why = band.factors(C.PathFeatures(40, 0, 10.0))
    assert name == "outside-data" and "40 logic levels" in why and "at most 9" in why
    assert (lo, hi) == band.outside and lo <= min(c["lo"] for c in band.classes.values())
    assert band.factors(C.PathFeatures(3, 0, 2000.0))[2] == "outside-data"
    assert band.factors(inside)[2] == "default"
    assert band.coverage == pytest.approx(0.8)


def test_features_of_a_sample_and_of_an_estimated_path_agree():
    from kabe.timing.calibration_data import PathSample
    s = PathSample(design="x", file="x.rpt", delay_ns=3.0, requirement_ns=8.0, slack_ns=1.0, clock_ns=0.0,
                   setup_ns=0.05, cells=[("RAMB36E1", "CLKARDCLK", "DOADO[0]", 2.4), ("LUT6", "I0", "O", 0.1)],
                   end=("DSP48E1", "A[0]"))
    assert C.sample_features(s) == C.steps_features(["RAMB36E1", "LUT6", "DSP48E1"], 8.0) == \
        C.PathFeatures(levels=1, bram_dsp=2, requirement_ns=8.0)
    assert C.path_class(C.sample_features(s)) == "bram-dsp"
    assert C.path_class(C.PathFeatures(1, 1, 50.0)) == "slow-clock"
    s.nets.append(("FDRE", "Q", "LUT6", "I0", 300, 7.5))  # a reset-like net spread over the device
    assert C.sample_features(s).max_fanout == 300 and C.path_class(C.sample_features(s)) == "high-fanout"
    assert C.path_class(C.steps_features(["FDRE", "LUT6", "FDRE"], 8.0, [0, 300, 1])) == "high-fanout"


def test_the_coverage_setting_is_a_share_between_one_half_and_0_95():
    from kabe.project import config
    assert config.value({}, "timing_band_coverage") == 0.8
    assert config.validate({"timing_band_coverage": 0.9})["timing_band_coverage"] == 0.9
    for bad in (1.5, 0.3, "0.8", True):
        with pytest.raises(config.ConfigError, match="timing_band_coverage"):
            config.validate({"timing_band_coverage": bad})
