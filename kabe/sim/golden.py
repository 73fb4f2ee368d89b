"""A design's golden model (`verify: {model: "package.module:function"}`), imported from the project
and called through the API of kabe.verify; everything it returns is checked against design.yaml's
`streams:` before a beat is written, and any mistake is one line naming the model and the fix.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any, Callable

from kabe.errors import UserError
from kabe.model.stimulus import Context, Stimulus, StimulusError, as_words
from .. import designs
from ..paths import ROOT


class ModelError(UserError, RuntimeError):
    """The design's golden model cannot be imported, fails, or returns what the design does not declare."""


def _line(e: BaseException, limit: int) -> str:
    """An exception's text on one line, bounded (a model's message is the user's, shown as written)."""
    text = " ".join(str(e).split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def load(d: designs.Design) -> Callable[..., Any]:
    """The model function design.yaml names, imported with the project root first on sys.path."""
    spec = d.verify.value
    module_name, func_name = spec.split(":")
    where = f"{d.yaml_file}: verify.model {spec}"
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    try:
        module = importlib.import_module(module_name)
    except Exception as e:  # noqa: BLE001 - the user's module: any failure is said in one line
        raise ModelError(f"{where}: cannot import {module_name} ({type(e).__name__}: {_line(e, 200)}); "
                         f"it must be importable from the project root {ROOT}") from None
    fn = getattr(module, func_name, None)
    if not callable(fn):
        raise ModelError(f"{where}: {module_name} has no function {func_name}; define "
                         f"`def {func_name}(seed, size, context) -> kabe.verify.Stimulus`")
    return fn


def stimulus(d: designs.Design, fn: Callable[..., Any], seed: int, size: int | None, context: Context) -> Stimulus:
    """fn(seed, size, context), its answer checked against the design's streams."""
    where = f"the golden model {d.verify.value} of {d.name}"
    try:
        stim = fn(seed, size, context)
    except Exception as e:  # noqa: BLE001 - a model's bug or refusal is the user's to fix: one line
        raise ModelError(f"{where} raised {type(e).__name__}: {_line(e, 300)}") from None
    if not isinstance(stim, Stimulus):
        raise ModelError(f"{where} returned {type(stim).__name__}, not a kabe.verify.Stimulus")
    if set(stim.inputs) != set(context.inputs):
        raise ModelError(f"{where} gives beats for {sorted(stim.inputs)}; design.yaml's streams.in declares "
                         f"{sorted(context.inputs)}: give one array per input stream")
    if not callable(stim.expected):
        check_outputs(d, stim.expected, context)
        if stim.expected_beats is not None:
            raise ModelError(f"{where}: expected_beats is only for an expected given as a function")
    elif stim.expected_beats is None or set(stim.expected_beats) != set(context.outputs):
        raise ModelError(f"{where}: an expected given as a function needs expected_beats, one count per output "
                         f"stream {sorted(context.outputs)}")
    return stim


def check_outputs(d: designs.Design, expected: Any, context: Context) -> None:
    where = f"the golden model {d.verify.value} of {d.name}"
    if not isinstance(expected, dict) or set(expected) != set(context.outputs):
        got = sorted(expected) if isinstance(expected, dict) else type(expected).__name__
        raise ModelError(f"{where} expects beats on {got}; design.yaml's streams.out declares "
                         f"{sorted(context.outputs)}: give one array per output stream")


def check_status(d: designs.Design, status: Any, context: Context) -> dict[str, int]:
    where = f"the golden model {d.verify.value} of {d.name}"
    if not isinstance(status, dict):
        raise ModelError(f"{where}: status must map status outputs to their final values, got {type(status).__name__}")
    unknown = sorted(set(status) - set(context.status))
    if unknown:
        raise ModelError(f"{where} expects status outputs {unknown} that design.yaml's streams.status does not declare")
    return {str(k): int(v) for k, v in status.items()}


def words(d: designs.Design, port: str, beats: Any, bits: int):
    """The beats as the harness's uint64 words; a beat that does not fit the port is one line."""
    try:
        return as_words(port, beats, bits)
    except StimulusError as e:
        raise ModelError(f"the golden model {d.verify.value} of {d.name}: {e}") from None
