"""A design's golden model (`verify: {model: "package.module:function"}`), imported from the project
and called through the API of kabe.verify; everything it returns is checked against design.yaml's
`streams:` before a beat is written, and any mistake is one line naming the model and the fix.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from kabe.base import project_callable
from kabe.base.project_callable import one_line
from kabe.base.errors import UserError
from kabe.verify import Chunks, Context, Stimulus, StimulusError, as_words, resolve
from kabe.project import designs
from kabe.base.paths import ROOT


class ModelError(UserError, RuntimeError):
    """The design's golden model cannot be imported, fails, or returns what the design does not declare."""


def line(e: BaseException) -> str:
    """An exception raised by a model, on one bounded line (for the messages other modules write)."""
    return one_line(e, 300)


def load(d: designs.Design) -> Callable[..., Any]:
    """The model function design.yaml names, imported with the project root first on sys.path."""
    return project_callable.load(d.verify.value, ROOT, f"{d.yaml_file}: verify.model {d.verify.value}", ModelError,
                                 "(seed, size, context) -> kabe.verify.Stimulus`")


def stimulus(d: designs.Design, fn: Callable[..., Any], seed: int, size: int | None, context: Context) -> Stimulus:
    """fn(seed, size, context), its answer checked against the design's streams."""
    where = f"the golden model {d.verify.value} of {d.name}"
    try:
        stim = fn(seed, size, context)
    except Exception as e:  # noqa: BLE001 - a model's bug or refusal is the user's to fix: one line
        raise ModelError(f"{where} raised {type(e).__name__}: {one_line(e, 300)}") from None
    if not isinstance(stim, Stimulus):
        raise ModelError(f"{where} returned {type(stim).__name__}, not a kabe.verify.Stimulus")
    if set(stim.inputs) != set(context.inputs):
        raise ModelError(f"{where} gives beats for {sorted(stim.inputs)}; design.yaml's streams.in declares "
                         f"{sorted(context.inputs)}: give one array per input stream")
    for name, beats in stim.inputs.items():
        if isinstance(beats, Chunks) and (isinstance(beats.beats, bool) or not isinstance(beats.beats, (int, np.integer))
                                          or beats.beats < 0 or not callable(beats.parts)):
            raise ModelError(f"{where}: Chunks of {name} needs beats, a count >= 0 (got {beats.beats!r}), and parts, "
                             f"a function yielding beat arrays")
    if not callable(stim.expected):
        check_outputs(d, stim.expected, context)
        for name in context.outputs:
            beat_count(d, name, stim.expected[name])  # a 0-d array or a ragged list: said now, in one line
        if stim.expected_beats is not None:
            raise ModelError(f"{where}: expected_beats is only for an expected given as a function")
    elif stim.expected_beats is None or set(stim.expected_beats) != set(context.outputs):
        raise ModelError(f"{where}: an expected given as a function needs expected_beats, one count per output "
                         f"stream {sorted(context.outputs)}")
    if not callable(stim.status):  # a status given now is checked now (a function's answer: when it is called)
        check_status(d, stim.status, context)
    return stim


def check_outputs(d: designs.Design, expected: Any, context: Context) -> None:
    where = f"the golden model {d.verify.value} of {d.name}"
    if not isinstance(expected, dict) or set(expected) != set(context.outputs):
        got = sorted(expected) if isinstance(expected, dict) else type(expected).__name__
        raise ModelError(f"{where} expects beats on {got}; design.yaml's streams.out declares "
                         f"{sorted(context.outputs)}: give one array per output stream")


def beat_count(d: designs.Design, port: str, beats: Any) -> int:
    """How many beats the model expects on `port`: the length of a 1-D or 2-D array; anything else
    (a single value, a 0-d array, a ragged list) is one line naming the model and the port."""
    where = f"the golden model {d.verify.value} of {d.name}"
    try:
        a = np.asarray(beats)
    except Exception as e:  # noqa: BLE001 - whatever the model handed over: one line
        raise ModelError(f"{where}: expected beats on {port} are not an array ({type(e).__name__}: {one_line(e, 200)})") from None
    if a.ndim not in (1, 2):
        shown = f"a single value ({a.dtype}, a 0-d array)" if a.ndim == 0 else f"a {a.ndim}-D {a.dtype} array"
        raise ModelError(f"{where}: expected beats on {port} are {shown}; give a 1-D array, one element per beat "
                         f"(or 2-D uint8 (beats, bytes))")
    return int(a.shape[0])


def call_later(d: designs.Design, value: Any, what: str) -> Any:
    """The model's `expected` or `status` (kabe.verify.resolve): a function it gave is called
    here, and whatever it raises is one line naming the model, not a traceback."""
    try:
        return resolve(value)
    except Exception as e:  # noqa: BLE001 - a model's bug is the user's to fix: one line
        raise ModelError(f"the golden model {d.verify.value} of {d.name}: its {what} function raised "
                         f"{type(e).__name__}: {one_line(e, 300)}") from None


def check_status(d: designs.Design, status: Any, context: Context) -> dict[str, int]:
    where = f"the golden model {d.verify.value} of {d.name}"
    if not isinstance(status, dict):
        raise ModelError(f"{where}: status must map status outputs to their final values, got {type(status).__name__}")
    unknown = sorted(set(status) - set(context.status))
    if unknown:
        raise ModelError(f"{where} expects status outputs {unknown} that design.yaml's streams.status does not declare")
    missing = [name for name in context.status if name not in status]
    if missing:  # a declared status nobody predicts would be compared with nothing: refused, as a missing stream is
        raise ModelError(f"{where} gives no expected value for status output(s) {missing} that design.yaml's "
                         f"streams.status declares: return status={{{', '.join(repr(m) + ': ...' for m in missing)}}} "
                         f"in its Stimulus, or remove them from streams.status")
    out = {}
    for k, v in status.items():
        try:
            out[str(k)] = int(v)
        except (TypeError, ValueError, OverflowError) as e:
            raise ModelError(f"{where}: status {k} must be an integer, got {type(v).__name__} ({one_line(e, 100)})") from None
    return out


def words(d: designs.Design, port: str, beats: Any, bits: int):
    """The beats as the harness's uint64 words; a beat that does not fit the port is one line."""
    try:
        return as_words(port, beats, bits)
    except StimulusError as e:
        raise ModelError(f"the golden model {d.verify.value} of {d.name}: {e}") from None


def context_for(d: designs.Design, row_bytes: int | None = None, invalid_fraction: float | None = None) -> Context:
    """What the design declares, handed to its model (kabe.verify.Context)."""
    streams = d.streams
    return Context(inputs=dict(streams.inputs), outputs=dict(streams.outputs), status=dict(streams.status),
                   options={"row_bytes": d.row_bytes if row_bytes is None else int(row_bytes),
                            "invalid_fraction": invalid_fraction})
