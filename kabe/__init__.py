"""kabe (壁, "wall"): build orchestration and reproducibility for a bandwidth-bound FPGA LLM engine."""

__version__ = "0.1.0"
