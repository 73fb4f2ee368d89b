"""The plots are written, are PNGs, and are not trivially empty."""

import matplotlib.image as mpimg
import numpy as np

from llm_accel.perf import plots
from llm_accel.perf import wall

PNG = b"\x89PNG\r\n\x1a\n"


def _check(path):
    assert path.is_file() and path.read_bytes()[:8] == PNG
    assert path.stat().st_size > 20_000
    img = mpimg.imread(path)
    assert img.shape[0] > 400 and img.shape[1] > 600
    # more than background: many distinct colours and a good share of non-white pixels
    rgb = img[..., :3].reshape(-1, 3)
    assert len(np.unique((rgb * 255).astype(np.uint8), axis=0)) > 50
    assert (rgb.mean(axis=1) < 0.95).mean() > 0.02


def test_plot_wall(tmp_path):
    _check(plots.plot_wall(tmp_path / "sub" / "wall.png"))


def test_plot_wall_other_clock(tmp_path):
    _check(plots.plot_wall(tmp_path / "wall10.png", rows=wall.figure1(clock_period_ns=10.0)))


def test_plot_token_budget(tmp_path):
    _check(plots.plot_token_budget(tmp_path / "tb.png"))
