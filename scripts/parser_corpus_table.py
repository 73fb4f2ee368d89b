#!/usr/bin/env python3
"""The parsers and the gate over every real Vivado report kabe has seen, and the false-pass count.

Prints (Markdown):
  1. one row per file of ../shared/fixtures/vivado-reports and vivado-reports-more (and, with
     --all, vivado-routed-paths and vivado-versal): report kind x Vivado version x family, parsed or refused (why),
     and for a timing summary the gate's verdict with its reasons;
  2. kind x version x family counts;
  3. false passes: every timing-summary fixture (kabe's own in tests/fixtures/vivado and the real
     ones) x every mutation kind of tests/parsers/report_mutations.py, how many mutants the gate
     passed (each must fail).

    python scripts/parser_corpus_table.py [--shared DIR] [--all]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "parsers"))

import report_mutations as rm  # noqa: E402

from kabe.rules.gate import evaluate  # noqa: E402
from kabe.parsers import ReportError, report_file  # noqa: E402
from kabe.parsers.detect import detect_report, parse_file  # noqa: E402
from kabe.parsers.vivado_timing_summary import parse as parse_summary  # noqa: E402

KIND = {"vivado_timing_summary": "timing summary", "vivado_utilization": "utilization",
        "vivado_utilization_hier": "utilization -hier", "vivado_timing": "report_timing",
        "vivado_clock_interaction": "clock interaction", "vivado_logic_levels": "logic levels"}


def family(device: str | None) -> str:
    d = (device or "").lower().removeprefix("xc")
    if d[:1] == "7":
        return {"z": "7-series (Zynq-7000)", "a": "7-series (Artix-7)", "k": "7-series (Kintex-7)",
                "v": "7-series (Virtex-7)", "s": "7-series (Spartan-7)"}.get(d[1:2], "7-series")
    if d.startswith("zu"):
        return "UltraScale+ (Zynq MPSoC/RFSoC)"
    if d[:2] in ("ku", "vu"):
        return "UltraScale+" if "p" in d.split("-")[0] else "UltraScale"
    if d[:1] == "v":
        return "Versal"
    return "?"


def version(header: dict) -> str:
    words = header.get("tool_version", "").replace("v.", " ").split()
    return next((w for w in words if w[:4].isdigit() and "." in w), "?")


def row(path: Path) -> tuple[str, str, str, str, str]:
    try:
        rep = report_file.read(path)
        kind = KIND.get(detect_report(rep), detect_report(rep))
    except ReportError as e:
        return path.name, "?", "?", "?", f"refused: {e}"
    fam, ver = family(rep.header.get("device")), version(rep.header)
    try:
        rec = parse_file(path)["record"]
    except ReportError as e:
        return path.name, kind, ver, fam, "refused: " + str(e).split(": ", 1)[-1][:120]
    if kind != "timing summary":
        what = (f"{len(rec)} pairs, {sum(p['unsafe'] for p in rec)} unsafe" if kind == "clock interaction"
                else f"LUT {rec['lut']}, FF {rec['ff']}, DSP {rec['dsp']}, BRAM {rec['bram36_equiv']}"
                if kind == "utilization" else "")
        return path.name, kind, ver, fam, f"parsed{': ' + what if what else ''}"
    v = evaluate(rec, None)
    why = "; ".join(f.replace("timing gate: ", "").split(";")[0][:60] for f in v.failures)
    warn = f" ({len(rec['warnings'])} path warnings)" if rec["warnings"] else ""
    return path.name, kind, ver, fam, f"parsed{warn}, gate {'PASS' if v.passed else 'FAIL: ' + why}"


def false_passes(files: list[Path]) -> dict[str, tuple[int, int, int]]:
    """kind -> (mutants, false passes, truncations inside the -datasheet appendix that passed with
    the full report's record: the verdict basis intact)."""
    out: dict[str, list[int]] = {k: [0, 0, 0] for k in rm.KINDS}
    with tempfile.TemporaryDirectory() as tmp:
        for f in files:
            text = f.read_text(errors="replace")
            full = parse_summary(text, "full")
            appendix = text.find("\n| Data sheet")
            for kind in rm.KINDS:
                for m in rm.must_fail(kind, text):
                    out[kind][0] += 1
                    try:
                        if isinstance(m, bytes):
                            p = Path(tmp) / "m.rpt"
                            p.write_bytes(m)
                            rec = parse_file(p)["record"]
                        else:
                            rec = parse_summary(m, "m")
                    except ReportError:
                        continue
                    if evaluate(rec, None).passed:
                        intact = (kind == "truncated" and appendix > 0 and len(m) > appendix
                                  and all(rec[k] == full[k] for k in full if k != "warnings"))
                        out[kind][2 if intact else 1] += 1
    return {k: tuple(v) for k, v in out.items()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shared", default=os.environ.get("KABE_SHARED_DIR") or str(ROOT.parent / "shared"))
    ap.add_argument("--all", action="store_true", help="also the vivado-routed-paths and vivado-versal corpora")
    args = ap.parse_args()
    fx = Path(args.shared) / "fixtures"
    folders = ["vivado-reports", "vivado-reports-more"] + (["vivado-routed-paths", "vivado-versal"] if args.all else [])
    files = [p for d in folders for p in sorted((fx / d).rglob("*"))
             if p.is_file() and p.suffix in (".rpt", ".txt")]
    if not files:
        print(f"no reports under {fx} (pass --shared DIR)", file=sys.stderr)
        return 2
    rows = [row(p) for p in files]
    print("| file | kind | Vivado | family | result |\n|---|---|---|---|---|")
    for r in rows:
        print("| " + " | ".join(x.replace("|", "/") for x in r) + " |")
    print("\n| kind | Vivado | family | files | parsed | refused |\n|---|---|---|---|---|---|")
    groups = Counter((r[1], r[2], r[3]) for r in rows)
    for key in sorted(groups):
        parsed = sum(1 for r in rows if (r[1], r[2], r[3]) == key and r[4].startswith("parsed"))
        print(f"| {key[0]} | {key[1]} | {key[2]} | {groups[key]} | {parsed} | {groups[key] - parsed} |")
    reports = [r for r in rows if r[1] != "?"]
    print(f"\n{len(reports)} reports: {sum(r[4].startswith('parsed') for r in reports)} parsed, "
          f"{sum(not r[4].startswith('parsed') for r in reports)} refused")

    ts = [p for p in sorted((ROOT / "tests" / "fixtures" / "vivado").glob("*timing_summary*.rpt"))
          if "truncated" not in p.name]
    ts += [p for p, r in zip(files, rows) if r[1] == "timing summary" and r[4].startswith("parsed")]
    counts = false_passes(ts)
    print(f"\nFalse passes over {len(ts)} timing summaries (kabe's own + real) x every mutation kind:\n")
    print("| mutation | mutants | false passes |\n|---|---|---|")
    for kind, (n, fp, intact) in counts.items():
        note = f" (+{intact} datasheet-appendix cuts: verdict basis intact, same verdict as the full report)" if intact else ""
        print(f"| {kind} | {n} | {fp}{note} |")
    total = sum(c[1] for c in counts.values())
    print(f"\ntotal false passes: {total}")
    return 0 if total == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
