"""Issue 44: the band says what it claims. Leave one design out on the shared routed corpus, the
corpus CI lays beside the checkout (each held-out design's band calibrated on the other designs
only, scripts/band_lodo.py), the band holds its nominal coverage, 80 +- 5 %, of a held-out design's
paths: averaged over designs (what kabe.timing.conformal promises) and pooled over paths. Before
issue 44 it held 95.0 % of paths (96.4 % design mean) at a median width of 20.7 ns there.
Skips only when the shared corpus is absent (never in CI)."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("KABE_SHARED_DIR") or os.environ.get("KABE_SHARED") or REPO.parent / "shared")
CORPUS = SHARED / "fixtures" / "vivado-routed-paths"


def _band_lodo():
    spec = importlib.util.spec_from_file_location("band_lodo", REPO / "scripts" / "band_lodo.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"shared fixtures not available: {CORPUS} is absent")
def test_the_band_holds_its_claim_on_designs_the_fit_never_saw():
    lodo = _band_lodo()
    s = lodo.summary(lodo.held_out([CORPUS], 0.8))
    assert s["designs"] >= 10, s
    assert 75.0 <= s["design_mean_pct"] <= 85.0, s  # the claim: a new design's paths, on average
    assert 75.0 <= s["pooled_pct"] <= 85.0, s       # every held-out path alike
    assert s["median_width_ns"] < 5.0, s            # it was 20.7 ns


def test_the_script_prints_per_design_and_overall(tmp_path, capsys, monkeypatch):
    """scripts/band_lodo.py on a stand-in corpus (Vivado's layout, tests/timing/vivado_path_text.py):
    a row per held-out design, the overall line, and the plot."""
    import sys
    sys.path.insert(0, str(Path(__file__).parent))
    from test_calibration import ROWS
    from vivado_path_text import path_block, report
    names = ("alpha", "beta", "gamma", "delta", "eps", "zeta")
    for design, scale in zip(names, (1.0, 1.2, 0.9, 1.05, 0.8, 1.1)):
        rows = [r if r[0] != "net" else (r[0], r[1], round(r[2] * scale, 3), r[3]) for r in ROWS]
        (tmp_path / f"{design}_run.rpt").write_text(report(path_block(rows), *(path_block(rows[:2] + [
            ("cell", "SLICE_X2Y1", "LUT5", "Prop_lut5_I1_O", 0.15, "u/l5/O"), ("net", fo, 0.9 * scale * k, "u/z"),
            ("end", "SLICE_X4Y2", "FDRE", "u/z_reg/CE")]) for fo, k in ((12, 1.0), (30, 1.3)))))
    lodo = _band_lodo()
    monkeypatch.setattr(lodo.CT, "DEFAULT_CORPUS", tmp_path)
    assert lodo.main(["--plot", str(tmp_path / "lodo.png")]) == 0
    out = capsys.readouterr().out
    for d in names:
        assert f"| {d} | 3 | " in out
    assert "| **all: 6 designs** | 18 |" in out and "design mean" in out and " - " not in out
    assert (tmp_path / "lodo.png").stat().st_size > 0
    assert lodo.main(["--corpus", str(tmp_path / "absent")]) == 2
    assert "not a folder" in capsys.readouterr().err
