"""A model's beats as the harness's words (kabe.verify.as_words): a value fits a b-bit port
when it lies in -2**(b-1) .. 2**b - 1, whatever the array's dtype (red team 3b, repro 05: numpy's
default int64 holding 0..255, or a Python list, was refused as "a signed beat" on an 8-bit port)."""

import numpy as np
import pytest

from kabe.verify import StimulusError, as_words


@pytest.mark.parametrize("beats", [np.arange(256), np.arange(256).tolist(), np.arange(256, dtype=np.int16),
                                   np.arange(256, dtype=np.uint8)])
def test_values_0_to_255_fit_an_8_bit_port_in_any_integer_dtype(beats):
    assert as_words("s_axis", beats, 8).tolist() == list(range(256))


def test_negative_values_are_twos_complement():
    assert as_words("s_axis", np.array([-128, -1, 0, 127], dtype=np.int8), 8).tolist() == [128, 255, 0, 127]
    assert as_words("s_axis", [-1, 255], 8).tolist() == [255, 255]  # -1 and 255: one bit pattern, either reading
    assert as_words("s_axis", np.array([-(1 << 31), (1 << 32) - 1]), 32).tolist() == [1 << 31, (1 << 32) - 1]


@pytest.mark.parametrize("beats, bits, message", [
    (np.array([0, 256]), 8, "beat 1 is 256, outside what fits 8 bits (-128 to 255"),
    ([5, -129], 8, "beat 1 is -129, outside what fits 8 bits (-128 to 255"),
    (np.array([1 << 16], dtype=np.int32), 16, "beat 0 is 65536, outside what fits 16 bits (-32768 to 65535"),
])
def test_only_values_that_fit_neither_reading_are_refused(beats, bits, message):
    with pytest.raises(StimulusError, match=message.replace("(", r"\(")):
        as_words("s_axis", beats, bits)


def test_an_unsigned_value_above_the_port_is_still_refused():
    with pytest.raises(StimulusError, match="beat 1 has bits above bit 7"):
        as_words("s_axis", np.array([1, 256], dtype=np.uint16), 8)
