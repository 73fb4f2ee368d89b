#!/usr/bin/env python3
"""Every real Vitis HLS / cosim / v++ link file in ../shared/fixtures/vitis-hls and vitis-link: its
kind, its key values and `kabe gate`'s verdict (PASS, FAIL, or refused/not judged with the one-line
reason), then every cut of each file (~60 per file): refused, or read and never judged better
than the whole file.

    python scripts/vitis_report_table.py [--shared DIR]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kabe.parsers import ReportError, vitis_detect  # noqa: E402
from kabe.parsers.detect import parse_file  # noqa: E402
from kabe.rules import gate, hls_gate  # noqa: E402


def _values(kind: str, r: dict) -> str:
    if kind.startswith("vitis_hls_csynth"):
        clk = (f"est {r['estimated_clock_ns']} + unc {r['uncertainty_ns']} vs target {r['target_clock_ns']}"
               if r["estimated_clock_ns"] is not None else f"slack printed {r['slack_printed']} -> {r['slack_ns']}")
        worst_ii = max((lp["ii"] for lp in r["loops"] if isinstance(lp["ii"], int)), default=None)
        return (f"{r['tool'] or ''} {r['version']}; {clk}; latency {r['latency_max']}, interval {r['interval_max']}; "
                f"{len(r['loops'])} loops (max II {worst_ii}); LUT {r['resources']['lut']} FF {r['resources']['ff']}")
    if kind == "vitis_hls_log":
        lr = r["last_run"]
        return (f"{r['version']}; {r['runs']} csynth runs; last: 200-871 x{len(lr['timing_violations'])}, II viol "
                f"x{len(lr['ii_violations'])}, II over target x{len(lr['ii_worse_than_target']) + len(lr['ii_over_default'])}")
    if kind == "vitis_cosim":
        return "; ".join(f"{k} {v['status']} lat {v['latency_max']}" for k, v in r["rtl"].items())
    if kind == "vitis_link_log":
        return f"{r['log']} {r['version']}; scaled {r['scaled']}; VPL 101-2 x{len(r['unscalable_clock_failures'])}; errors {r['errors']}"
    if kind == "xclbin":
        return f"uuid {r['uuid'][:8]}..; {r['platform_vbnv'][:30]}; {r['num_sections']} sections; kernels {r['kernels']}"
    if kind == "xclbin_info":
        return f"kernels {r['kernels']}; uuid {r['uuid']}; {r['clocks_note'] or r['clocks']}"
    if kind == "vitis_system_estimate":
        return f"target {r['target_clock_mhz']} MHz; " + ", ".join(f"{t['module']} {t['estimated_mhz']:.0f}" for t in r["timing"])
    if kind == "vitis_accelerator_utilization":
        return f"kernels {r['kernels']}; " + ", ".join(f"{k} LUT {r['rows'][k]['lut']}" for k in r["kernels"])
    if kind == "vivado_timing_summary":
        return f"WNS {r['wns_ns']} WHS {r['whs_ns']} WPWS {r['wpws_ns']}"
    return ""


def _verdict(kind: str, r: dict) -> str:
    if kind in vitis_detect.GATED:
        return "PASS" if hls_gate.evaluate(kind, r).passed else "FAIL"
    if kind == "vivado_timing_summary":
        return "PASS" if gate.evaluate(r, None, ()).passed else "FAIL"
    return "not judged alone (exit 2)"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shared", default=os.environ.get("KABE_SHARED_DIR") or ROOT.parent / "shared")
    shared = Path(ap.parse_args().shared) / "fixtures"
    print("| file | kind | key values | verdict |\n|---|---|---|---|")
    cuts = refused = worse = 0
    for folder in ("vitis-hls", "vitis-link"):
        for p in sorted((shared / folder).glob("*")):
            if p.name in ("SOURCES.md", "expected.json"):
                continue
            try:
                parsed = parse_file(p)
            except ReportError as e:
                print(f"| {p.name} | - | refused: {e} | exit 2 |")
                continue
            kind, rec = parsed["kind"], parsed["record"]
            whole = _verdict(kind, rec)
            print(f"| {p.name} | {kind} | {_values(kind, rec)} | {whole} |")
            if vitis_detect.sniff(p) is None:
                continue
            data = p.read_bytes()
            with tempfile.TemporaryDirectory() as d:
                for cut in range(1, len(data) - 1, max(1, len(data) // 60)):
                    q = Path(d) / p.name
                    q.write_bytes(data[:cut])
                    cuts += 1
                    try:
                        got = vitis_detect.parse_path(q)
                    except ReportError:
                        refused += 1
                        continue
                    if whole == "FAIL" and got["kind"] in vitis_detect.GATED \
                            and hls_gate.evaluate(got["kind"], got["record"]).passed:
                        worse += 1
    print(f"\ncuts: {cuts}, refused: {refused}, read (a whole earlier part of a log): {cuts - refused}, "
          f"cuts of a failing file that pass: {worse}")
    return 1 if worse else 0


if __name__ == "__main__":
    sys.exit(main())
