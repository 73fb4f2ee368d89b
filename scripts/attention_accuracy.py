"""The stage-5 attention engine's accuracy study: the fixed-point engine (llm_accel.model.attention)
against float64 attention, per context length and input statistics.

    python scripts/attention_accuracy.py

Kept out of the golden model: the model says what the hardware computes; this script measures how
far that is from float attention (docs/streams.md, stage 5).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

from llm_accel.model.attention import (GROUP, STATISTICS, attention_float, attention_hw_float,  # noqa: E402
                                  synth_case)

def cosine(a: np.ndarray, b: np.ndarray) -> float:
    a = np.ravel(a)
    b = np.ravel(b)
    den = float(np.linalg.norm(a) * np.linalg.norm(b))
    return float(a @ b) / den if den else 1.0


@dataclass(frozen=True)
class Accuracy:
    statistics: str
    n: int
    trials: int
    kernel_max_abs: float  # vs float64 on the same int8 inputs, in V's integer units
    kernel_cos_min: float
    e2e_max_rel: float  # vs float64 on the unquantized inputs, max error / max|ref|
    e2e_cos_min: float
    e2e_pc_cos_min: float  # the same with per-channel K scales folded into q


def accuracy(rng: np.random.Generator, n: int, statistics: str, trials: int = 4) -> Accuracy:
    """Worst case over trials (and query heads) of the engine vs float64 attention.

    kernel: float64 softmax attention on the very int8 q, k, v the engine sees (with the exact
    float scale), against the engine's Q8.16 output: what the fixed-point pipeline loses.
    e2e: float64 attention on the unquantized floats, against the engine's output times v_scale:
    adds the int8 quantization of q, k and v (per tensor; e2e_pc: K per channel, folded into q).
    """
    kmax = emax = 0.0
    kcos = ecos = pccos = 1.0
    for _ in range(trials):
        state = rng.bit_generator.state
        case = synth_case(rng, n, statistics)
        rng_pc = np.random.default_rng()
        rng_pc.bit_generator.state = state  # the same floats, quantized the other way
        case_pc = synth_case(rng_pc, n, statistics, k_per_channel=True)
        hw = attention_hw_float(case.q, case.k, case.v, case.header.c, case.header.shift)
        ref_k = attention_float(case.q, case.k, case.v, case.int_scale)
        ref_e = attention_float(case.q_f, case.k_f, case.v_f, case.scale)
        out_e = hw * case.sv
        hw_pc = attention_hw_float(case_pc.q, case_pc.k, case_pc.v, case_pc.header.c, case_pc.header.shift) * case_pc.sv
        kmax = max(kmax, float(np.max(np.abs(hw - ref_k))))
        emax = max(emax, float(np.max(np.abs(out_e - ref_e)) / max(np.max(np.abs(ref_e)), 1e-30)))
        for h in range(GROUP):
            kcos = min(kcos, cosine(hw[h], ref_k[h]))
            ecos = min(ecos, cosine(out_e[h], ref_e[h]))
            pccos = min(pccos, cosine(hw_pc[h], ref_e[h]))
    return Accuracy(statistics, n, trials, kmax, kcos, emax, ecos, pccos)


def accuracy_report(seed: int = 5, contexts=(128, 512, 2048), trials: int = 4) -> list[Accuracy]:
    rng = np.random.default_rng(seed)
    return [accuracy(rng, n, st, trials) for n in contexts for st in STATISTICS]


def format_report(rows: list[Accuracy]) -> str:
    lines = [
        "stage-5 attention: fixed point (Q8.16 out, 2^(-z/1024) table exp, p 1.0 = 2^17) vs float64",
        "kernel: float64 on the same int8 q/k/v (max |err| in V's integer units, cosine per query head)",
        "e2e: float64 on the unquantized q/k/v, per-tensor int8 (max err relative to max|ref|);",
        "e2e pc: K quantized per channel with its scales folded into q (same engine, same format)",
        f"{'statistics':<14}{'n':>6}{'kernel max|err|':>17}{'kernel cos min':>16}{'e2e max rel':>13}{'e2e cos':>10}{'e2e pc cos':>12}",
    ]
    for r in rows:
        lines.append(
            f"{r.statistics:<14}{r.n:>6}{r.kernel_max_abs:>17.3e}{r.kernel_cos_min:>16.9f}"
            f"{r.e2e_max_rel:>13.3e}{r.e2e_cos_min:>10.6f}{r.e2e_pc_cos_min:>12.6f}"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    print(format_report(accuracy_report()))
