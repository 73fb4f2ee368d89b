"""The golden-model API a design's `verify: {model: "package.module:function"}` names
(docs/your_design.md). A user's model imports only this:

    from kabe.verify import Context, Stimulus

    def stimulus(seed: int, size: int | None, context: Context) -> Stimulus:
        rng = np.random.default_rng(seed)
        a = rng.integers(0, 2**32, size=size or 100_000, dtype=np.uint32)
        return Stimulus(inputs={"s_axis": a}, expected={"m_axis": a.astype(np.uint64) * 3})

numpy only, and it imports nothing else of kabe: the board runner carries this file to the board
beside the model, so a model runs there as it runs here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Union

import numpy as np

MIN_BITS, MAX_BITS = 8, 512

Beats = np.ndarray
# expected and status may be given now or as a zero-argument function kabe calls while the
# simulation runs (the other core computes the model's answer meanwhile)
Later = Union[Mapping[str, Any], Callable[[], Mapping[str, Any]]]


@dataclass(frozen=True)
class Context:
    """What the design declares, handed to the model: port name -> tdata bits, and options
    (design.yaml's row_bytes, and what a `doit sim` run overrides, e.g. invalid_fraction)."""

    inputs: Mapping[str, int]
    outputs: Mapping[str, int]
    status: Mapping[str, int] = field(default_factory=dict)
    options: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Chunks:
    """An input's beats given piece by piece, for a stream too long to build before the simulation starts:
    `beats` in all, `parts()` yields arrays of them in order (each a beat array as Stimulus describes).
    kabe's simulation writes each part to the harness while it runs, so building the input costs no wall
    time beside the simulation; the model's expected and status functions are called after the last part
    (a model computes its answer part by part as it yields them). Anything else reads it whole:
    np.asarray(chunks) is all the parts, concatenated."""

    beats: int
    parts: Callable[[], Any]  # () -> an iterable of beat arrays

    def __array__(self, dtype=None, copy=None):
        whole = np.concatenate([np.asarray(part) for part in self.parts()])
        return whole if dtype is None else whole.astype(dtype)


@dataclass(frozen=True)
class Stimulus:
    """One run: the beats offered on every input port (tlast on each port's last beat), the beats
    every output port must produce (tlast exactly on the last), and optionally the final value of
    status outputs (e.g. how many bytes were invalid on purpose: {"stat0_invalid": 13}).

    A beat array is either 1-D integers, one beat per element (ports up to 64 bits; signed values
    are two's complement at the port's width), or 2-D uint8 of shape (beats, bits / 8), byte i being
    tdata[8i+7:8i] (any width, 8 to 512 bits). A value of a b-bit port lies in -2**(b-1) .. 2**b - 1,
    whatever the array's dtype (numpy's default int64 holding 0..255 fits 8 bits)."""

    inputs: Mapping[str, Beats | Chunks]  # a long input as Chunks: built while the simulation runs
    expected: Later
    status: Later = field(default_factory=dict)
    expected_beats: Mapping[str, int] | None = None  # needed when expected is a function: beats per output
    stall_free: bool = False  # the design must hold every input's tready high (kabe's own contract)
    checked: int | None = None  # what the model counts as checked (kabe's: rows); default: expected beats
    # AXI-Stream sideband signals by the top's port name, `<stream>_<tkeep|tstrb|tuser|tid|tdest>` (64 bits
    # at most), one value per beat of its stream: on an input stream the value driven with each beat, on an
    # output stream the value expected with each beat (compared as tdata is). A sideband port the model
    # does not name is held at 0 (or design.yaml's streams.hold) on an input, and not checked on an output.
    sideband: Mapping[str, Beats] = field(default_factory=dict)


class StimulusError(ValueError):
    """A model's beats do not fit the ports design.yaml declares."""


def words_per_beat(bits: int) -> int:
    return (bits + 63) // 64


def as_words(port: str, beats: Any, bits: int) -> np.ndarray:
    """The beats as the harness reads them: uint64 words, little-endian, words_per_beat(bits) per beat;
    1-D for ports up to 64 bits, else (beats, words). Values wider than the port are refused."""
    a = np.asarray(beats)
    w = words_per_beat(bits)
    if a.ndim == 2:
        nbytes = (bits + 7) // 8
        if a.dtype != np.uint8 or a.shape[1] != nbytes:
            raise StimulusError(f"{port}: a 2-D beat array must be uint8 of shape (beats, {nbytes}) for a "
                                f"{bits}-bit port, got {a.dtype} {a.shape}")
        if bits % 8:
            top = a[:, -1] >> np.uint8(bits % 8)
            if top.any():
                raise StimulusError(f"{port}: beat {int(np.flatnonzero(top)[0])} has bits above bit {bits - 1}")
        padded = np.zeros((a.shape[0], 8 * w), dtype=np.uint8)
        padded[:, :nbytes] = a
        words = padded.view("<u8")
        return words.reshape(-1) if w == 1 else words
    if a.ndim != 1 or not np.issubdtype(a.dtype, np.integer):
        raise StimulusError(f"{port}: beats must be a 1-D integer array (one beat per element) or 2-D uint8 "
                            f"(beats, bytes), got {a.dtype} of shape {a.shape}")
    if bits > 64:
        raise StimulusError(f"{port} is {bits} bits: give its beats as 2-D uint8 (beats, {(bits + 7) // 8})")
    signed = np.issubdtype(a.dtype, np.signedinteger)
    if a.dtype == np.uint64 or (a.dtype.itemsize == 8 and signed):
        words = a.view(np.uint64)
    else:
        words = a.astype(np.int64 if signed else np.uint64, copy=False).view(np.uint64)
    if bits < 64:
        mask = np.uint64((1 << bits) - 1)
        if signed:  # a signed array fits when each value does, read either way (int64 0..255 on 8 bits)
            low, high = -(1 << (bits - 1)), (1 << bits) - 1
            bad = np.flatnonzero((a < low) | (a > high))
            if bad.size:
                raise StimulusError(f"{port}: beat {int(bad[0])} is {int(a[bad[0]])}, outside what fits {bits} bits "
                                    f"({low} to {high}: negative values as two's complement)")
            words = words & mask
        elif a.size and int(a.max()) >> bits:
            raise StimulusError(f"{port}: beat {int(np.flatnonzero(words > mask)[0])} has bits above bit {bits - 1}")
    return words


def resolve(value: Later) -> Mapping[str, Any]:
    """expected / status: the mapping itself, or what its function returns."""
    return value() if callable(value) else value


@dataclass(frozen=True)
class Declares:
    """What a model says about itself beyond its stimulus, all optional (`@declare(...)` on the function):

    check_size   the size of a build's simulation check: an int, or a function of the Context (seconds
                 of simulation); None: size None, the model's own default
    full_size    the size of `doit sim` and `doit deploy` given none (an int or a function of the
                 Context); None: size None, and kabe records the beats it compared
    size_name    what size counts, as the command line says it: "rows" (rows=N), "ctx" (ctx=N) ...
    per_port     size is a total over the input ports, split evenly (rows=N divides by the ports)
    options      the option values the model applies when a run gives none (invalid_fraction=1e-4):
                 recorded with every run, so a result says what its stimulus held
    label        the name of the model's stream format, recorded with each run
    board_chunks how a run streams on a board whose DMA moves at most max_bytes a port at a time:
                 a function (seed, size, context, max_bytes) -> iterable of Stimulus, each one
                 transfer per port, drawn one at a time (a 512 MB board holds one); None: the run's
                 whole Stimulus is one transfer
    measured_beats  beats of each output (by index in a transfer) that a board measures itself, like a
                 cycle count: compared in simulation, not on a board
    """

    check_size: Any = None
    full_size: Any = None
    size_name: str = "size"
    per_port: bool = False
    options: Mapping[str, Any] = field(default_factory=dict)
    label: str | None = None
    board_chunks: Callable[..., Any] | None = None
    measured_beats: tuple[int, ...] = ()

    def size(self, which: str, context: Context) -> int | None:
        value = getattr(self, which)
        return int(value(context)) if callable(value) else value


def declare(**facts: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorate a model function with its Declares: `@declare(check_size=64, size_name="rows")`."""
    declares = Declares(**facts)

    def mark(fn):
        fn.kabe_declares = declares
        return fn

    return mark


def declared(fn: Callable[..., Any]) -> Declares:
    """A model function's Declares (all defaults when it declares nothing)."""
    d = getattr(fn, "kabe_declares", None)
    return d if isinstance(d, Declares) else Declares()
