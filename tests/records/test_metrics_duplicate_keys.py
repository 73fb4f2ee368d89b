"""A metrics.json whose object names a key twice is refused (exit 2, one line naming the key):
json.loads keeps the last value, so a failing value followed by a passing one would pass."""

import json

import pytest
from test_gate_metrics_input import _gate, _record


@pytest.mark.parametrize("key,first", [("wns_ns", -1.5), ("timing", {"failing_endpoints": 5})])
def test_a_key_given_twice_is_refused(key, first, tmp_path, capsys):
    """The failing value first, the passing one last."""
    rec = _record()
    good = json.dumps(rec["timing"][key]) if key != "timing" else None
    if key == "timing":
        text = json.dumps(rec).replace('"timing": ', f'"timing": {json.dumps(first)}, "timing": ', 1)
    else:
        text = json.dumps(rec).replace(f'"{key}": {good}', f'"{key}": {json.dumps(first)}, "{key}": {good}', 1)
    assert json.loads(text) == rec  # Python alone keeps the last value
    rc, lines = _gate(text, tmp_path, capsys)
    assert rc == 2 and len(lines) == 1 and f"'{key}' appears twice" in lines[0], lines


def test_a_key_given_twice_deep_in_a_list_is_refused(tmp_path, capsys):
    rec = _record()
    text = json.dumps(rec).replace('"name": "clk_fpga_0"', '"name": "x", "name": "clk_fpga_0"', 1)
    assert text != json.dumps(rec)
    rc, lines = _gate(text, tmp_path, capsys)
    assert rc == 2 and "'name' appears twice" in lines[0], lines
