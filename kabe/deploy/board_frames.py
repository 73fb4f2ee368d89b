"""A golden model's run as the board streams it: transfers of input words, the words each output must
produce, the status the model expects, and the bytes a DMA moves. The host draws the same transfers
as the board to fingerprint them and to count the model's status itself.

numpy and kabe.verify only: pushed to the board beside board_runner.py (kabe/verify.py with it).
"""

from __future__ import annotations

import numpy as np

from kabe.verify import as_words, resolve


# --- beats as the DMA moves them: each beat is ceil(bits / 8) bytes, little-endian ---

def beat_bytes(bits: int) -> int:
    return (bits + 7) // 8


def words_to_bytes(words: np.ndarray, bits: int) -> np.ndarray:
    """kabe.verify.as_words' uint64 words (1-D, or (beats, words)) as the DMA's byte stream."""
    w = np.ascontiguousarray(words.reshape(words.shape[0], -1), dtype="<u8")
    return w.view(np.uint8)[:, :beat_bytes(bits)].reshape(-1)


def bytes_to_words(data: np.ndarray, bits: int) -> np.ndarray:
    """The DMA's byte stream back as uint64 words, the shape as_words gives."""
    nb = beat_bytes(bits)
    words_per_beat = (bits + 63) // 64
    beats = data.size // nb
    padded = np.zeros((beats, 8 * words_per_beat), dtype=np.uint8)
    padded[:, :nb] = np.asarray(data[:beats * nb], dtype=np.uint8).reshape(beats, nb)
    out = padded.view("<u8")
    return out.reshape(-1) if words_per_beat == 1 else out


def stimuli(fn, declares, seed: int, size, context, max_bytes: int):
    """The run as transfers: the model's own chunks (declares.board_chunks), else its whole Stimulus."""
    if declares.board_chunks is not None:
        yield from declares.board_chunks(seed, size, context, max_bytes)
    else:
        yield fn(seed, size, context)


def mask(words: np.ndarray, bits: int) -> np.ndarray:
    if bits % 64 == 0:
        return words
    if words.ndim == 1:
        return words & np.uint64((1 << bits) - 1)
    out = words.copy()
    out[:, -1] &= np.uint64((1 << (bits % 64)) - 1)
    return out


def shown(word) -> int | str:
    return int(word) if np.ndim(word) == 0 else "0x" + "".join(f"{int(w):016x}" for w in reversed(word))


def draw(fn, declares, seed: int, size, context, max_bytes: int):
    """Each transfer as (input words per port, expected words per port, status, checked), computed
    from the model as kabe.sim does: the same draws on the host (to fingerprint) and the board."""
    ins, outs = list(context.inputs), list(context.outputs)
    for stim in stimuli(fn, declares, seed, size, context, max_bytes):
        words_in = [as_words(n, stim.inputs[n], context.inputs[n]) for n in ins]
        expected = resolve(stim.expected)
        words_out = [as_words(n, expected[n], context.outputs[n]) for n in outs]
        status = {k: int(v) for k, v in resolve(stim.status).items()}
        checked = stim.checked if stim.checked is not None else sum(int(w.shape[0]) for w in words_out)
        yield words_in, words_out, status, int(checked)


def fingerprint_update(h, words_in) -> None:
    """Add one transfer's input beats to a hash, in the order host and board both use."""
    for w in words_in:
        h.update(np.ascontiguousarray(w, dtype="<u8").tobytes())


