"""The history figure draws panels only for resources the design uses (no empty DSP/BRAM panels), and
every value label lies inside the figure and its own panel, never cut (issue 44 item 3)."""

from __future__ import annotations

import matplotlib.pyplot as plt

from kabe.records import history
from kabe.page import report_plot
from kabe.rules import gate

from records_fixtures import make_cores, record


def _entries(**util):
    out = []
    for i, lut in enumerate((9000, 9400, 12500)):
        rec = record(str(i) * 40, lut=lut, wns=0.25 - 0.3 * i)
        rec["utilization"].update(util)
        out.append(history.Entry(str(i) * 40, "stage4", "open", rec, gate.Verdict(i < 2)))
    return out


def _figure(entries, tmp_path):
    captured = {}
    real_close = plt.close
    plt.close = lambda fig: captured.setdefault("fig", fig)
    try:
        svg = report_plot.plot_design("stage4", entries, tmp_path / "h.svg", make_cores(tmp_path)).read_text()
    finally:
        plt.close = real_close
    return captured["fig"], svg


def test_a_design_using_no_dsp_or_bram_has_no_such_panels(tmp_path):
    fig, svg = _figure(_entries(dsp=0, bram36_equiv=0), tmp_path)
    assert [ax.get_title() for ax in fig.axes] == ["LUT", "FF", "WNS (ns)"]
    assert 'id="stage4-panel-dsp"' not in svg and 'id="stage4-panel-bram36_equiv"' not in svg
    fig, svg = _figure(_entries(dsp=4, bram36_equiv=0), tmp_path / "b")
    assert [ax.get_title() for ax in fig.axes] == ["LUT", "FF", "DSP48E1", "WNS (ns)"]


def test_value_labels_lie_inside_their_panel(tmp_path):
    fig, _ = _figure(_entries(dsp=4, bram36_equiv=2.5), tmp_path)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    labels = 0
    for ax in fig.axes:
        box = ax.get_window_extent(renderer)
        for t in ax.texts:
            if not (t.get_gid() or "").startswith("stage4-value-"):
                continue
            labels += 1
            tb = t.get_window_extent(renderer)
            assert box.x0 <= tb.x0 and tb.x1 <= box.x1, (ax.get_title(), t.get_text(), tb, box)
            assert box.y0 <= tb.y0 and tb.y1 <= box.y1, (ax.get_title(), t.get_text(), tb, box)
    assert labels == 5
