"""scripts/print_models.py runs and prints the V80's numbers each next to its source (llm_accel.figures):
the peak, the channels that take it in, the ternary engine's tokens/s at the peak and on the channels
built, and the HBM capacity."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def test_print_models_prints_each_v80_number_beside_its_source(tmp_path):
    p = subprocess.run([sys.executable, str(REPO / "scripts" / "print_models.py"), "--plots", str(tmp_path)],
                       capture_output=True, text=True, timeout=300, cwd=REPO,
                       env={**os.environ, "PYTHONPATH": str(REPO)})
    assert p.returncode == 0, p.stderr[-2000:]
    lines = p.stdout.splitlines()
    lines = lines[lines.index("## The V80 for the ternary engine built here"):]

    def line(start: str) -> str:
        found = [ln for ln in lines if ln.startswith(start)]
        assert len(found) == 1, (start, found)
        return found[0]

    assert "819.2 GB/s (vendor" in line("- peak:") and "AVED" in line("- peak:")
    assert "820 GB/s (claimed" in line("- the post's claim:") and "seeds/004" in line("- the post's claim:")
    assert "460 GB/s (vendor" in line("- 460:") and "HBM2 Alveo" in line("- 460:")  # labelled as what it is
    assert line("- channels:").startswith("- channels: 64 channels take in the peak") and "board profile" in line("- channels:")
    assert "1,024 tok/s at the peak" in line("- Qwen 4B ternary:") and "0.8 GB a token" in line("- Qwen 4B ternary:")
    assert "-> 64 tok/s" in line("- Qwen 4B ternary on the 4 channels built") and "design.yaml" in line("- Qwen 4B ternary on")
    assert line("- capacity:").startswith("- capacity: 34,359,738,368 bytes") and "HBM15_PC1" in line("- capacity:")
    assert (tmp_path / "wall.png").stat().st_size > 0 and (tmp_path / "token_budget.png").stat().st_size > 0
