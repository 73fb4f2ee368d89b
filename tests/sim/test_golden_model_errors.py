"""A golden model's mistakes are one line naming the model, never a traceback blamed on kabe (red team
3b, repros 05, 15 and 16): a single value where beats belong, an expected or status function that
raises, a declared status output the model gives no value for."""

import types

import numpy as np
import pytest

from kabe.verify import Context, Stimulus
from kabe.sim import golden

D = types.SimpleNamespace(name="u2", verify=types.SimpleNamespace(value="models.u2:stimulus"))
CTX = Context(inputs={"s_axis": 8}, outputs={"m_axis": 8}, status={"beats_seen": 32})
A = np.arange(8, dtype=np.uint8)


def _one_line(e) -> str:
    text = str(e.value)
    assert "\n" not in text and "the golden model models.u2:stimulus of u2" in text
    return text


@pytest.mark.parametrize("value, shown", [(np.uint8(3), "a single value (uint8, a 0-d array)"),
                                          (np.array(7), "a single value (int64, a 0-d array)"),
                                          (np.zeros((2, 2, 2), dtype=np.uint8), "a 3-D uint8 array")])
def test_expected_beats_that_are_not_an_array_of_beats(value, shown):
    stim = Stimulus(inputs={"s_axis": A}, expected={"m_axis": value}, status={"beats_seen": 8})
    with pytest.raises(golden.ModelError) as e:
        golden.stimulus(D, lambda *a: stim, 1, None, CTX)
    assert f"expected beats on m_axis are {shown}" in _one_line(e)


def test_a_declared_status_the_model_gives_no_value_for_is_refused():
    stim = Stimulus(inputs={"s_axis": A}, expected={"m_axis": A})
    with pytest.raises(golden.ModelError) as e:
        golden.stimulus(D, lambda *a: stim, 1, None, CTX)
    assert "gives no expected value for status output(s) ['beats_seen']" in _one_line(e)
    with pytest.raises(golden.ModelError, match=r"\['beats_seen'\]"):  # a status function's answer, when called
        golden.check_status(D, {}, CTX)
    assert golden.check_status(D, {"beats_seen": np.int64(8)}, CTX) == {"beats_seen": 8}
    with pytest.raises(golden.ModelError, match="status beats_seen must be an integer, got NoneType"):
        golden.check_status(D, {"beats_seen": None}, CTX)


def test_an_expected_or_status_function_that_raises_is_one_line():
    def later():
        raise RuntimeError("model bug in the late part")

    for what in ("expected", "status"):
        with pytest.raises(golden.ModelError) as e:
            golden.call_later(D, later, what)
        assert _one_line(e).endswith(f"its {what} function raised RuntimeError: model bug in the late part")
    assert golden.call_later(D, lambda: {"m_axis": A}, "expected") == {"m_axis": A}
    assert golden.call_later(D, {"beats_seen": 1}, "status") == {"beats_seen": 1}
