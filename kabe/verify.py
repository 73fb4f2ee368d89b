"""The golden-model API a design's `verify: {model: "package.module:function"}` names
(docs/your_design.md). A user's model imports only this:

    from kabe.verify import Context, Stimulus

    def stimulus(seed: int, size: int | None, context: Context) -> Stimulus:
        rng = np.random.default_rng(seed)
        a = rng.integers(0, 2**32, size=size or 100_000, dtype=np.uint32)
        return Stimulus(inputs={"s_axis": a}, expected={"m_axis": a.astype(np.uint64) * 3})
"""

from kabe.model.stimulus import MAX_BITS, MIN_BITS, Context, Stimulus, StimulusError

__all__ = ["Context", "Stimulus", "StimulusError", "MIN_BITS", "MAX_BITS"]
