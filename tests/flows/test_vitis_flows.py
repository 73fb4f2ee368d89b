"""flow=vitis_hls and flow=vitis end to end on the stand-ins for v++ and vitis-run (tests/standin/vitis: NOT
AMD Vitis; its numbers are a model, its file formats the real ones), in a throwaway clone of this checkout:

- stage3_hls builds: its C-simulation against the numpy model, C-synthesis, the export; the archive holds the
  csynth reports; an edit that adds a pipeline stage (a multiplier latency of 2) shows as a latency change
  in `kabe diff`;
- a v++ link of its .xo whose log says the kernel clock was scaled down (VPL 60-732) fails the gate naming
  the clock and both frequencies; with the lower clock accepted in design.yaml it passes, and metrics.json
  records the clock the xclbin has (read from the xclbin).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

import repo_clone

ROOT = Path(__file__).resolve().parents[2]
STANDIN_BIN = ROOT / "tests" / "standin" / "vitis" / "bin"


from hls_needs import needs_headers  # noqa: E402 - g++ and the HLS headers

pytestmark = [pytest.mark.e2e, needs_headers]

LINK_DESIGN = {
    "design.yaml": """core: kabe:design:stage3_link:0.1.0
verify: {none: "a v++ link of a kernel verified by its own design (stage3_hls's C-simulation)"}
constraints: kernel_clock.xdc
vitis:
  platform: standin_platform.xpfm
  kernels: [stage3_hls]
  connectivity: link.cfg
""",
    "stage3_link.core": """CAPI=2:
name: kabe:design:stage3_link:0.1.0
targets:
  default: &default
    toplevel: stage3_hls
  synth:
    <<: *default
    flow: sim
    flow_options:
      tool: verilator
""",
    "kernel_clock.xdc": "# the kernel clock asked of the link: 500 MHz\ncreate_clock -period 2.000 -name ap_clk [get_ports ap_clk]\n",
    "link.cfg": "[connectivity]\nnk=stage3_hls:1:stage3_hls_1\n",
    "standin_platform.xpfm": "<?xml version=\"1.0\"?>\n<!-- a STAND-IN platform file (kabe tests) -->\n<platform name=\"standin\"/>\n",
}


def _env(**extra):
    return {"PATH": f"{STANDIN_BIN}{os.pathsep}{os.environ['PATH']}", **extra}


def _build(clone: Path, design: str, *flags: str, **extra) -> tuple[subprocess.CompletedProcess, dict | None]:
    proc = repo_clone.kabe(clone, "build", design, *flags, **_env(**extra))
    archives = sorted((clone / "reports").glob(f"*/{design}/*/metrics.json"), key=lambda p: p.stat().st_mtime)
    return proc, (json.loads(archives[-1].read_text()) | {"_dir": str(archives[-1].parent)}) if archives else None


@pytest.fixture(scope="module")
def clone(tmp_path_factory):
    c = repo_clone.make(tmp_path_factory.mktemp("vitis") / "repo")
    yaml = c / "cores" / "stage3_hls" / "design.yaml"
    yaml.write_text(yaml.read_text().replace("export: ip_catalog", "export: xo"))  # the link takes an .xo
    link = c / "cores" / "stage3_link"
    link.mkdir()
    for name, text in LINK_DESIGN.items():
        (link / name).write_text(text)
    repo_clone.commit_all(c, "stage3_hls exported as an .xo; a v++ link of it")
    proc, record = _build(c, "stage3_hls")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return c, record


def test_the_hls_build_archives_its_csynth_reports(clone):
    c, record = clone
    archive = Path(record["_dir"])
    for name in ("csynth.xml", "csynth.rpt", "hls_config.cfg", "csynth.log", "package.log", "stage3_hls.xo"):
        assert (archive / name).is_file(), name
    assert record["flow"] == "vitis_hls" and record["gate"]["passed"] is True
    assert record["timing"]["estimated"] is True and record["hls"]["estimated"] is True
    assert {lp["name"]: lp["ii"] for lp in record["hls"]["loops"]} == {"read_x": 1, "mac": 1}
    assert record["sim"]["simulator"] == "csim" and record["sim"]["mismatches"] == 0
    assert record["sim"]["rows_checked"] == 128  # the build's quick check; full scale: tests/sim/test_csim.py
    assert any(ch["name"] == "hls.clock" and ch["passed"] for ch in record["gate"]["checks"])
    cfg = (archive / "hls_config.cfg").read_text()
    assert "part=xc7z020clg400-1" in cfg and "clock=7ns" in cfg and "syn.top=stage3_hls" in cfg


def test_an_added_pipeline_stage_shows_in_kabe_diff(clone):
    c, before = clone
    src = c / "cores" / "stage3_hls" / "hls" / "stage3_hls.cpp"
    text = src.read_text()
    assert "op=mul impl=dsp\n" in text
    src.write_text(text.replace("op=mul impl=dsp\n", "op=mul impl=dsp latency=2\n", 1))  # one more multiplier stage
    repo_clone.commit_all(c, "stage3_hls: the multiply in two DSP stages")
    proc, after = _build(c, "stage3_hls")
    assert proc.returncode == 0, proc.stdout[-3000:]
    old, new = before["hls"]["latency_max"], after["hls"]["latency_max"]
    assert new == old + 1, (old, new)
    diff = repo_clone.kabe(c, "diff")
    assert diff.returncode == 0, diff.stdout + diff.stderr
    row = next(ln for ln in diff.stdout.splitlines() if "HLS latency" in ln and "stage3_hls" in ln)
    assert f"| {old:,} | {new:,} | +1 " in row, row


def test_a_scaled_kernel_clock_fails_naming_the_clocks(clone):
    c, _ = clone
    proc, record = _build(c, "stage3_link", KABE_STANDIN_VPP_FMAX_MHZ="307.5")
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert record["flow"] == "vitis" and record["gate"]["passed"] is False
    failures = " ".join(record["gate"]["failures"])
    assert "clk_kernel" in failures and "500" in failures and "307.5" in failures and "VPL 60-732" in failures
    assert record["timing"]["link"]["scaled"] is True


def test_with_the_lower_clock_accepted_it_passes_and_records_the_xclbin_clock(clone):
    c, _ = clone
    yaml = c / "cores" / "stage3_link" / "design.yaml"
    yaml.write_text(yaml.read_text() + "  accept_clock_mhz: 300   # the lowest kernel clock this design accepts\n")
    repo_clone.commit_all(c, "stage3_link: a kernel clock of 300 MHz or more is accepted")
    proc, record = _build(c, "stage3_link", KABE_STANDIN_VPP_FMAX_MHZ="307.5")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert record["gate"]["passed"] is True
    x = record["vitis_link"]  # read from the xclbin (its CLOCK_FREQ_TOPOLOGY holds whole MHz)
    assert x["kernel_clock_mhz"] == 307.0 and x["asked_clock_mhz"] == 500.0 and x["kernels"] == ["stage3_hls"]
    assert x["scaled"] is True and x["accepted_min_clock_mhz"] == 300.0
    assert (Path(record["_dir"]) / "stage3_link.xclbin").is_file()
    # the same content again: a cache hit, its numbers re-derived from the archived logs and xclbin
    proc, again = _build(c, "stage3_link", KABE_STANDIN_VPP_FMAX_MHZ="307.5")
    assert proc.returncode == 0 and "cache hit" in proc.stdout, proc.stdout[-2000:]
    assert again["vitis_link"]["kernel_clock_mhz"] == 307.0
    # a link that lands below the accepted clock fails (the stand-in's knob is no input: run the tools again)
    proc, record = _build(c, "stage3_link", "--no-cache", KABE_STANDIN_VPP_FMAX_MHZ="250")
    assert proc.returncode == 1 and "below the accepted 300 MHz" in " ".join(record["gate"]["failures"])
