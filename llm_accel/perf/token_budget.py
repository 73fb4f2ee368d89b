"""Token budget: where the milliseconds of one decoded token go (SmolLM2-135M on the PYNQ-Z1).

    ms/token = matmul (PL, ternary weights streamed at the measured rate)
             + attention (CPU: fitted to the document's measurements; or PL: KV-cache bytes / wall)
             + misc (CPU: layernorm, softmax glue, sampling ..., measured 4.2 ms)

Which figures are inputs and which are derived
----------------------------------------------
Inputs, measured in the lab report (seeds/000, section 7 and its 2026-09-13 addendum), in `DOC`:
  - 9.16 G weights/s: stage 4's measured ternary weight rate (= 1.83 GB/s x 5, rounded).
  - 4.2 ms misc per token (CPU).
  - 83 ms CPU attention at context 512 (INT8 C code on the Cortex-A9; the float version: 158 ms).
  - whole-system 26.2 / 9.8 / 2.8 tok/s at contexts 128 / 512 / 2048 with attention on the CPU.
  - 1.97 GB/s, the board's wall (kabe.boards), for the PL attention projection.
Derived here (and checked against the document's own derived figures, in `DOC_DERIVED`):
  - matmul weights and bytes per token from the model's dimensions (below), matmul ms.
  - the CPU attention model a + b*L (how: below), PL attention ms, totals, tok/s, PL share.

What the matmul counts
----------------------
Per layer the seven linear layers q, k, v, o (attention) and gate, up, down (SwiGLU MLP):
  q, o: 576x576; k, v: 576x192 (3 KV heads x 64); gate, up, down: 576x1536
  = 3,538,944 weights/layer, x30 layers = 106,168,320 weights.
Plus the LM head: the embeddings are tied, so the LM head *is* the 49152x576 embedding matrix
(28,311,552 weights), and it is read once per token like any other linear layer. Counted, as
ternary. Total 134,479,872 weights = 26.9 MB at 5 weights/byte: the document's "135M parameters,
27 MB of weights". 134,479,872 / 9.16e9 weights/s = 14.68 ms, the document's figure to 0.01%.
Without the LM head it would be 11.59 ms / 21.2 MB, so the document evidently counts it.
(Ternarising the LM head is the document's assumption; BitNet-style models usually keep it wider.)
Not counted: the input-embedding lookup (one 576-wide row), the RMSNorm weights (CPU, in misc).

The CPU attention model, and how it was derived
-----------------------------------------------
The document measured the whole system at three contexts. Subtracting its matmul (14.68 ms) and
misc (4.2 ms) from 1000 / tok_s gives the attention time those measurements imply:
  L=128: 19.29 ms, L=512: 83.16 ms (the document also measured 83 ms directly), L=2048: 338.26 ms.
Using the directly measured 83 ms at 512 and the implied values at 128 and 2048, a least-squares
line gives attention_cpu(L) = -2.02 ms + 0.1661 ms x L. The slope is the cost per cached
position: 30 layers x 9 heads x 64 x 2 (QK^T and AV) = 34,560 INT8 MACs, so 0.1661 ms per
position is 0.208 G MAC/s, the document's "0.21 G MAC/s" (below the CPU's 0.28 G MAC/s ceiling).
The intercept is slightly negative: a purely proportional model (through zero, i.e. a fixed MAC
rate) misses 26.2 tok/s at context 128 by 4.6%, so the document's numbers themselves say the
CPU is a little cheaper per position at short contexts (a plausible but unverified reading: at
L=128 one layer's K/V, 49 KB, stays in the A9's 512 KB L2; at 2048, 786 KB, it does not).
The fitted line is an interpolation of three measurements; outside 128..2048 it is extrapolation.

The PL attention projection
---------------------------
Once attention is in the PL it is read-bound like the matmul: per token it reads the whole INT8
KV cache, 30 layers x (K + V) x 3 KV heads x 64 x L = 11,520 x L bytes (per-head scales not
counted), at the board's wall (1.97 GB/s): 2.99 ms at L=512. The document says 2.94 ms; that is
5.90 MB at 2.006 GB/s, a touch above the measured wall, so this model is 1.8% more pessimistic.
(The document's 2.94 is reproduced exactly by 17.69 M MACs / (3.15 MAC/byte x 1.91 GB/s), using
its "3.15 reuses per byte" and stage 3's INT8 rate; 3.15 could not be derived from the dimensions,
which give exactly 3 MACs per KV byte, so this model does not use it. `doc_pl_attention_ms`
shows that reading for comparison.)
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from llm_accel.figures import PYNQ_Z1_WALL


@dataclass(frozen=True)
class ModelDims:
    name: str
    hidden: int
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    intermediate: int
    vocab: int
    tied_embeddings: bool


SMOLLM2_135M = ModelDims("SmolLM2-135M", hidden=576, layers=30, heads=9, kv_heads=3, head_dim=64,
                         intermediate=1536, vocab=49152, tied_embeddings=True)

TERNARY_WEIGHTS_PER_BYTE = 5


def linear_weights_per_layer(m: ModelDims = SMOLLM2_135M) -> dict[str, int]:
    q_out, kv_out = m.heads * m.head_dim, m.kv_heads * m.head_dim
    return {
        "q": m.hidden * q_out, "k": m.hidden * kv_out, "v": m.hidden * kv_out, "o": q_out * m.hidden,
        "gate": m.hidden * m.intermediate, "up": m.hidden * m.intermediate, "down": m.intermediate * m.hidden,
    }


def lm_head_weights(m: ModelDims = SMOLLM2_135M) -> int:
    return m.vocab * m.hidden


def matmul_weights(m: ModelDims = SMOLLM2_135M, include_lm_head: bool = True) -> int:
    """Weights read per token by the linear layers (+ the LM head, tied to the embeddings)."""
    n = m.layers * sum(linear_weights_per_layer(m).values())
    return n + (lm_head_weights(m) if include_lm_head else 0)


def matmul_bytes(m: ModelDims = SMOLLM2_135M, weights_per_byte: float = TERNARY_WEIGHTS_PER_BYTE,
                 include_lm_head: bool = True) -> float:
    return matmul_weights(m, include_lm_head) / weights_per_byte


def kv_bytes_per_token(context: int, m: ModelDims = SMOLLM2_135M, bytes_per_value: int = 1) -> int:
    """INT8 KV-cache bytes read to decode one token at context length `context` (K and V, all layers)."""
    return m.layers * 2 * m.kv_heads * m.head_dim * context * bytes_per_value


def attention_macs(context: int, m: ModelDims = SMOLLM2_135M) -> int:
    """QK^T and AV multiply-accumulates for one token: every query head over every position."""
    return m.layers * 2 * m.heads * m.head_dim * context


# --- Document figures --------------------------------------------------------------------------

@dataclass(frozen=True)
class DocInputs:
    """Measured in the lab report; the model's inputs."""

    weight_rate_gps: float = 9.16  # stage 4, G ternary weights / s (measured)
    misc_ms: float = 4.2  # CPU, per token (measured)
    cpu_attention_ms: dict[int, float] = field(default_factory=lambda: {512: 83.0})  # INT8, measured
    cpu_attention_float_ms: dict[int, float] = field(default_factory=lambda: {512: 158.0})  # reference
    cpu_total_tok_s: dict[int, float] = field(default_factory=lambda: {128: 26.2, 512: 9.8, 2048: 2.8})
    cpu_int8_dot_ceiling_gmacs: float = 0.28  # reference
    kv_bandwidth_gbps: float = float(PYNQ_Z1_WALL)  # the wall (measured by the stage 2 probe)


@dataclass(frozen=True)
class DocDerived:
    """Figures the document itself derived from its measurements; the model is checked against them."""

    matmul_ms: float = 14.68
    matmul_only_tok_s: float = 68.0
    weights_mb: float = 27.0
    cpu_attention_gmacs: float = 0.21
    attention_over_matmul_512: float = 5.7
    pl_attention_ms_512: float = 2.94
    pl_total_ms_512: float = 21.8
    pl_tok_s_512: float = 46.0
    pl_share_2048_cpu: float = 0.04
    kv_reuse_per_byte: float = 3.15
    int8_read_gbps: float = 1.91  # stage 3 measured (used only by doc_pl_attention_ms)


DOC = DocInputs()
DOC_DERIVED = DocDerived()


def matmul_ms(m: ModelDims = SMOLLM2_135M, weight_rate_gps: float = DOC.weight_rate_gps,
              include_lm_head: bool = True) -> float:
    """Matmul time per token: weights / weight rate. Independent of context."""
    return matmul_weights(m, include_lm_head) / (weight_rate_gps * 1e9) * 1e3


@dataclass(frozen=True)
class CpuAttentionModel:
    """attention_cpu(L) = intercept_ms + slope_ms_per_position * L (fitted; see module docstring)."""

    intercept_ms: float
    slope_ms_per_position: float
    points: tuple[tuple[int, float], ...]  # the (L, ms) points it was fitted to

    def __call__(self, context: int) -> float:
        return self.intercept_ms + self.slope_ms_per_position * context

    def effective_gmacs(self, m: ModelDims = SMOLLM2_135M) -> float:
        """MAC rate implied by the slope (MACs per position / time per position)."""
        return attention_macs(1, m) / (self.slope_ms_per_position * 1e-3) / 1e9


def implied_cpu_attention_ms(doc: DocInputs = DOC, m: ModelDims = SMOLLM2_135M) -> dict[int, float]:
    """Attention time implied by each whole-system measurement: 1000/tok_s - matmul - misc."""
    mm = matmul_ms(m, doc.weight_rate_gps)
    return {L: 1e3 / tps - mm - doc.misc_ms for L, tps in sorted(doc.cpu_total_tok_s.items())}


def fit_cpu_attention(doc: DocInputs = DOC, m: ModelDims = SMOLLM2_135M) -> CpuAttentionModel:
    """Least-squares line through the document's CPU attention times: the direct measurement where
    there is one (83 ms at 512), else the value implied by the whole-system tok/s."""
    pts = implied_cpu_attention_ms(doc, m)
    pts.update(doc.cpu_attention_ms)
    L = np.array(sorted(pts), dtype=float)
    y = np.array([pts[int(x)] for x in L])
    slope, intercept = np.polyfit(L, y, 1)
    return CpuAttentionModel(float(intercept), float(slope), tuple((int(x), float(pts[int(x)])) for x in L))


def pl_attention_ms(context: int, m: ModelDims = SMOLLM2_135M, bandwidth_gbps: float = DOC.kv_bandwidth_gbps) -> float:
    """Projected PL attention: read the INT8 KV cache once per token at `bandwidth_gbps`."""
    return kv_bytes_per_token(context, m) / (bandwidth_gbps * 1e9) * 1e3


def doc_pl_attention_ms(context: int, m: ModelDims = SMOLLM2_135M, d: DocDerived = DOC_DERIVED) -> float:
    """The reading that reproduces the document's 2.94 ms: MACs / (3.15 MAC/byte x 1.91 GB/s).
    For comparison only (3.15 is the document's figure, not derivable from the dimensions)."""
    return attention_macs(context, m) / (d.kv_reuse_per_byte * d.int8_read_gbps * 1e9) * 1e3


@dataclass(frozen=True)
class Budget:
    context: int
    attention_on: str  # "cpu" | "pl"
    matmul_ms: float
    attention_ms: float
    misc_ms: float

    @property
    def total_ms(self) -> float:
        return self.matmul_ms + self.attention_ms + self.misc_ms

    @property
    def tok_s(self) -> float:
        return 1e3 / self.total_ms

    @property
    def pl_ms(self) -> float:
        return self.matmul_ms + (self.attention_ms if self.attention_on == "pl" else 0.0)

    @property
    def pl_share(self) -> float:
        """Fraction of the token's time spent in the PL (the document's 'PL share')."""
        return self.pl_ms / self.total_ms

    def shares(self) -> dict[str, float]:
        t = self.total_ms
        return {"matmul": self.matmul_ms / t, "attention": self.attention_ms / t, "misc": self.misc_ms / t}


def budget(context: int, attention_on: str = "cpu", m: ModelDims = SMOLLM2_135M, doc: DocInputs = DOC,
           cpu_model: CpuAttentionModel | None = None, kv_bandwidth_gbps: float | None = None) -> Budget:
    if attention_on == "cpu":
        att = (cpu_model or fit_cpu_attention(doc, m))(context)
    elif attention_on == "pl":
        att = pl_attention_ms(context, m, doc.kv_bandwidth_gbps if kv_bandwidth_gbps is None else kv_bandwidth_gbps)
    else:
        raise ValueError(f"attention_on must be 'cpu' or 'pl', got {attention_on!r}")
    return Budget(context, attention_on, matmul_ms(m, doc.weight_rate_gps), att, doc.misc_ms)


DOC_CONTEXTS = (128, 512, 2048)


def budgets(contexts: tuple[int, ...] = DOC_CONTEXTS, m: ModelDims = SMOLLM2_135M, doc: DocInputs = DOC) -> list[Budget]:
    """CPU-attention and PL-attention budgets at each context."""
    cpu = fit_cpu_attention(doc, m)
    return [budget(L, where, m, doc, cpu) for where in ("cpu", "pl") for L in contexts]


def _err(model: float, ref: float | None) -> str:
    return "-" if ref is None else f"{(model / ref - 1):+.1%}"


def render_markdown(rows: list[Budget] | None = None, doc: DocInputs = DOC, d: DocDerived = DOC_DERIVED) -> str:
    rows = budgets() if rows is None else rows
    head = ("| context | attention on | matmul ms (PL) | attention ms | misc ms (CPU) | total ms | tok/s | "
            "doc tok/s | error | PL share |")
    out = [head, "|" + "---|" * (head.count("|") - 1)]
    for b in rows:
        ref = doc.cpu_total_tok_s.get(b.context) if b.attention_on == "cpu" else (
            d.pl_tok_s_512 if b.context == 512 else None)
        where = "CPU" if b.attention_on == "cpu" else "PL"
        out.append(f"| {b.context} | {where} | {b.matmul_ms:.2f} | {b.attention_ms:.2f} | {b.misc_ms:.2f} | "
                   f"{b.total_ms:.2f} | {b.tok_s:.2f} | {ref if ref is not None else '-'} | {_err(b.tok_s, ref)} | "
                   f"{b.pl_share:.1%} |")
    return "\n".join(out)


def reconciliation(m: ModelDims = SMOLLM2_135M, doc: DocInputs = DOC, d: DocDerived = DOC_DERIVED) -> str:
    """Markdown: what the matmul counts and how it meets the document's 27 MB / 14.68 ms."""
    per = linear_weights_per_layer(m)
    lin, head = matmul_weights(m, False), lm_head_weights(m)
    cpu = fit_cpu_attention(doc, m)
    b512 = budget(512, "pl", m, doc)
    lines = [
        "| quantity | model | document | error |", "|---|---|---|---|",
        f"| linear weights per layer ({', '.join(per)}) | {sum(per.values()):,} | - | - |",
        f"| x {m.layers} layers | {lin:,} | - | - |",
        f"| + LM head (tied embeddings, {m.vocab}x{m.hidden}) | {head:,} | - | - |",
        f"| total ternary weights per token | {lin + head:,} | 135M | - |",
        f"| bytes at 5 weights/byte (MB) | {(lin + head) / 5e6:.2f} | {d.weights_mb:g} | {_err((lin + head) / 5e6, d.weights_mb)} |",
        f"| matmul ms at {doc.weight_rate_gps} G w/s | {matmul_ms(m, doc.weight_rate_gps):.3f} | {d.matmul_ms} | "
        f"{_err(matmul_ms(m, doc.weight_rate_gps), d.matmul_ms)} |",
        f"| matmul ms without the LM head | {matmul_ms(m, doc.weight_rate_gps, False):.3f} | - | - |",
        f"| matmul-only tok/s | {1e3 / matmul_ms(m, doc.weight_rate_gps):.1f} | {d.matmul_only_tok_s:g} | "
        f"{_err(1e3 / matmul_ms(m, doc.weight_rate_gps), d.matmul_only_tok_s)} |",
        f"| CPU attention fit: intercept ms, slope ms/position | {cpu.intercept_ms:.2f}, {cpu.slope_ms_per_position:.4f} | - | - |",
        f"| CPU attention effective G MAC/s (slope) | {cpu.effective_gmacs(m):.3f} | {d.cpu_attention_gmacs} | "
        f"{_err(cpu.effective_gmacs(m), d.cpu_attention_gmacs)} |",
        f"| CPU attention at 512 / matmul | {cpu(512) / matmul_ms(m, doc.weight_rate_gps):.2f} | {d.attention_over_matmul_512} | "
        f"{_err(cpu(512) / matmul_ms(m, doc.weight_rate_gps), d.attention_over_matmul_512)} |",
        f"| KV bytes per token at 512 (INT8) | {kv_bytes_per_token(512, m):,} | - | - |",
        f"| PL attention ms at 512 (KV / {doc.kv_bandwidth_gbps} GB/s) | {b512.attention_ms:.3f} | {d.pl_attention_ms_512} | "
        f"{_err(b512.attention_ms, d.pl_attention_ms_512)} |",
        f"| (doc's reading: MACs / (3.15 x 1.91 GB/s)) | {doc_pl_attention_ms(512, m):.3f} | {d.pl_attention_ms_512} | "
        f"{_err(doc_pl_attention_ms(512, m), d.pl_attention_ms_512)} |",
        f"| PL-attention total ms at 512 | {b512.total_ms:.2f} | {d.pl_total_ms_512} | {_err(b512.total_ms, d.pl_total_ms_512)} |",
        f"| PL-attention tok/s at 512 | {b512.tok_s:.1f} | {d.pl_tok_s_512:g} | {_err(b512.tok_s, d.pl_tok_s_512)} |",
        f"| PL share at 2048, CPU attention | {budget(2048, 'cpu', m, doc, cpu).pl_share:.1%} | {d.pl_share_2048_cpu:.0%} | "
        f"{_err(budget(2048, 'cpu', m, doc, cpu).pl_share, d.pl_share_2048_cpu)} |",
    ]
    return "\n".join(lines)
