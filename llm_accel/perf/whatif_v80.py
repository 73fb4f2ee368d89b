"""The V80 forum post's arithmetic (seeds/004), with every assumption in the open.

The post (an answer from Gemini Pro, quoted by its author, who flags it as possibly
hallucinated) argues that batch-1 decode is bandwidth-bound, so

    tok/s = bandwidth / bytes per token                        (step A, the wall)
          x 1 / fetch_fraction                                 (step B, "DARF" activation sparsity)
          x tokens accepted per main-model pass                (step C, SRAM draft + speculation)

Only step A is the same physics as the lab report. B and C are assumptions, not measurements: they
are multipliers on how many *useful* weights each byte read carries, which is exactly the lab
report's lever (ternary: 5 weights per byte), except that nobody has measured these two.

The post's own figures (its Japanese text; checked, not taken from the digest):
  Qwen 4B Q4 ~ 2 GB, Qwen 9B Q4 ~ 4.5 GB; bandwidth 820 GB/s;
  4B: 820/2 = 410 -> x4 = 1,640 -> x2 = 3,280 tok/s;  9B: 820/4.5 = 182 -> 728 -> 1,456 tok/s.
  (820/4.5 = 182.2: the post rounds to 182 before multiplying; the unrounded chain is 728.9 and
  1,457.8, 0.1% higher. The model keeps the unrounded chain.)
Every row is evaluated at the V80's peak (819.2 GB/s: AMD's AVED NoC arithmetic, 64 HBM ports x
12.8 GB/s), at the post's 820 (its rounding of the peak), and at AMD's board-overview "approaching
460 GB/s" (the older HBM2 Alveo cards' figure): llm_accel.figures, each with its source.

The post's bytes per token are Q4's; the engine this project builds is ternary (5 weights a byte,
1.6 bits a weight), so ternary_table() gives the same arithmetic at the engine's bytes per token.
"""

from __future__ import annotations

from dataclasses import dataclass

from kabe import boards
from llm_accel.figures import V80_BANDWIDTHS, V80_PEAK


@dataclass(frozen=True)
class Assumption:
    name: str
    value: float
    unit: str
    source: str
    condition: str  # what must be true for this figure (or multiplier) to hold


MODEL_BYTES: dict[str, Assumption] = {
    "Qwen 4B Q4": Assumption(
        "Qwen 4B Q4 bytes per token", 2.0, "GB", "the post: 'Qwen 4B（Q4）: およそ2 GBのメモリが必要'",
        "every weight is read exactly once per token (batch 1, no reuse across tokens), at 4.0 bits per "
        "weight; real Q4 formats carry group scales (about 4.5 bits/weight), and KV-cache and activation "
        "reads are not counted, so 2 GB is a lower bound on bytes per token",
    ),
    "Qwen 9B Q4": Assumption(
        "Qwen 9B Q4 bytes per token", 4.5, "GB", "the post: 'Qwen 9B（Q4）: およそ4.5 GBのメモリが必要'",
        "as for 4B: all weights once per token at 4 bits, KV cache ignored",
    ),
}

FETCH_FRACTION = Assumption(
    "fetch fraction (DARF sparsity)", 0.25, "of weights per token",
    "the post, step B: '保守的に75%のスパース性（つまり、トークンごとにHBMからモデルの25%だけを読み出せばよい）"
    "を仮定すると、有効帯域は4倍になります'; its concept section instead says '15%〜20%だけをフェッチ' "
    "('5分の1', making 820 GB/s behave like '4 TB/s'); the arithmetic uses 25%",
    "x4 holds only if (1) for each token 75% of the weights contribute nothing and can be skipped "
    "(activation sparsity of that size: natural in ReLU MLPs, not in SwiGLU models like Qwen without "
    "retraining), (2) a predictor names the needed 25% before they are fetched, cheaply and with enough "
    "recall that skipping the rest does not change the output, (3) the scattered reads run at the same "
    "bytes/s as a sequential stream (skipped units must be whole rows/columns or bursts, not single "
    "weights), and (4) the attention projections, LM head and KV cache are either sparse too or small",
)

SPECULATION = Assumption(
    "speculation (tokens accepted per main-model pass)", 2.0, "tokens/pass",
    "the post, step C: '2倍〜2.5倍の高速化が得られます。ここでは保守的に2倍マルチプライヤーを使用します'; "
    "the draft proposes '3〜5個' tokens",
    "x2 holds only if (1) the on-chip draft model (post: under 600 MB, of about 673 MB of on-chip RAM) proposes tokens "
    "the 4B/9B model accepts, 2 per verification pass on average, (2) verifying k drafted tokens costs "
    "one pass's bytes (weights read once for the whole batch), and (3) the draft runs in the shadow of "
    "the verify pass. With DARF, (2) fails in part: k tokens need the union of their active weights, so "
    "x4 and x2 do not simply multiply",
)

# The post's tok/s, by (model, bandwidth): (step A, step B, step C). Only the 820 GB/s rows exist there.
DOC_TOK_S: dict[tuple[str, float], tuple[float, float, float]] = {
    ("Qwen 4B Q4", 820.0): (410.0, 1640.0, 3280.0),
    ("Qwen 9B Q4", 820.0): (182.0, 728.0, 1456.0),
}


@dataclass(frozen=True)
class Row:
    model: str
    bytes_per_token_gb: float
    bandwidth_label: str  # "peak" | "post" | "amd" (llm_accel.figures.V80_BANDWIDTHS)
    bandwidth_gbps: float
    fetch_fraction: float
    speculation: float

    @property
    def baseline_tok_s(self) -> float:
        return self.bandwidth_gbps / self.bytes_per_token_gb

    @property
    def sparse_tok_s(self) -> float:
        return self.baseline_tok_s / self.fetch_fraction

    @property
    def speculative_tok_s(self) -> float:
        return self.sparse_tok_s * self.speculation

    def doc(self) -> tuple[float, float, float] | None:
        return DOC_TOK_S.get((self.model, self.bandwidth_gbps))


def table(fetch_fraction: float = FETCH_FRACTION.value, speculation: float = SPECULATION.value,
          models: dict[str, Assumption] | None = None) -> list[Row]:
    """Every model at every V80 bandwidth figure (the peak 819.2, the post's 820, AMD's 460)."""
    models = MODEL_BYTES if models is None else models
    return [Row(name, a.value, label, float(f), fetch_fraction, speculation)
            for label, f in V80_BANDWIDTHS.items() for name, a in models.items()]


def _cell(model: float, ref: float | None) -> str:
    if ref is None:
        return f"{model:,.0f}"
    return f"{model:,.0f} (post {ref:,.0f}, {model / ref - 1:+.1%})"


def render_markdown(rows: list[Row] | None = None) -> str:
    rows = table() if rows is None else rows
    out = ["| model | GB/token | bandwidth | A: bw / bytes | B: / fetch fraction | C: x accepted per pass |",
           "|---|---|---|---|---|---|"]
    for r in rows:
        d = r.doc() or (None, None, None)
        out.append(f"| {r.model} | {r.bytes_per_token_gb:g} | {r.bandwidth_gbps:g} GB/s ({r.bandwidth_label}) | "
                   f"{_cell(r.baseline_tok_s, d[0])} | {_cell(r.sparse_tok_s, d[1])} (x{1 / r.fetch_fraction:g}) | "
                   f"{_cell(r.speculative_tok_s, d[2])} (x{r.speculation:g}) |")
    out += ["", "Bandwidth figures:"]
    for label, f in V80_BANDWIDTHS.items():
        out.append(f"- {label}: {f.cited()}")
    out += ["", "Assumptions and the condition under which each holds:", "",
            "| assumption | value | source | holds only if |", "|---|---|---|---|"]
    for a in (*MODEL_BYTES.values(), FETCH_FRACTION, SPECULATION):
        out.append(f"| {a.name} | {a.value:g} {a.unit} | {a.source} | {a.condition} |")
    out.append(f"| bandwidth | 819.2, 820 or 460 GB/s | see above | the whole bandwidth is sustained by one "
               f"batch-1 decode stream spread over all HBM channels; neither figure was measured here "
               f"(on the PYNQ-Z1 the measured wall was 93.6% of theoretical) |")
    return "\n".join(out)


# ---- the same arithmetic for the engine this project builds: ternary weights, 5 a byte -------------

TERNARY_WEIGHTS_PER_BYTE = 5  # 3^5 = 243 <= 256 (llm_accel.model.ternary)
MODEL_PARAMS = {"Qwen 4B": 4.0e9, "Qwen 9B": 9.0e9}  # the post's models, by their names' parameter counts
V80 = boards.get("v80")


def channel_gbps(board=V80) -> float:
    """One memory lane: beat bytes x lane clock (the board profile's), in GB/s."""
    lanes = board.memory_ports
    return lanes.beat_bytes * lanes.clock_mhz / 1e3


@dataclass(frozen=True)
class TernaryRow:
    model: str
    params: float
    bandwidth_label: str
    bandwidth_gbps: float

    @property
    def bytes_per_token_gb(self) -> float:
        return self.params / TERNARY_WEIGHTS_PER_BYTE / 1e9  # every weight read once per token, batch 1

    @property
    def tok_s(self) -> float:
        return self.bandwidth_gbps / self.bytes_per_token_gb


def ternary_table(channels_built: int = 4) -> list[TernaryRow]:
    """Each model at the V80's peak and at the `channels_built` HBM ports the engine uses."""
    built = channels_built * channel_gbps()
    return [TernaryRow(name, n, label, bw) for name, n in MODEL_PARAMS.items()
            for label, bw in (("peak", float(V80_PEAK)), (f"{channels_built} channels", built))]


def channels_for_peak() -> int:
    """HBM ports of one lane each that take in the whole peak."""
    return round(float(V80_PEAK) / channel_gbps())
