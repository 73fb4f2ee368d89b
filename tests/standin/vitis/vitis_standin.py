#!/usr/bin/env python3
"""STAND-IN for AMD Vitis's `v++`, `vitis-run`, `vitis_hls` and `vivado_hls`, for kabe's tests only.
THIS IS NOT AMD VITIS.

Installed as tests/standin/vitis/bin/v++ and bin/vitis-run (Vitis 2024.2 on), and bin_tcl/vitis_hls and
bin_tcl/vivado_hls (the Tcl tools before it): the same script, acting on the name it is called by. It accepts only the commands and options AMD documents (UG1702
"v++ Command", "v++ Mode HLS", "vitis-run Command"; UG1399 "HLS Config File Commands") that kabe uses,
and refuses anything else as the tools do (an ERROR line, exit 1):

  v++ --version
  v++ -c --mode hls --config <cfg> --work_dir <dir>                        C-synthesis
  vitis-run --mode hls (--csim | --cosim | --package) --config <cfg> --work_dir <dir>
  v++ -l -t hw --platform <xpfm> --config <cfg> -o <file.xclbin> [--clock.defaultFreqHz <Hz>] <xo>...
  vitis_hls -f <script.tcl> / vivado_hls -f <script.tcl>: the script runs in tclsh on hls_commands.tcl,
      whose procs (open_project, set_top, add_files, open_solution, set_part, create_clock, csim_design,
      csynth_design, cosim_design, export_design) accept only the options UG1399/UG902 document

What it writes has the real formats (csynth.xml, csynth.rpt "Synthesis Summary Report", the v++ link log
with its VPL lines, a Vivado routed timing summary, an .xclbin with the axlf header and sections of XRT's
xclbin.h), but its NUMBERS ARE A STAND-IN MODEL, not synthesis:
  - a loop's trip count is its `i < CONST` bound (#define'd constants are read) or its LOOP_TRIPCOUNT;
    its II the PIPELINE pragma's; its depth 2 plus, per BIND_OP pragma in its body, the pragma's
    latency= (1 when not given): so raising a BIND_OP latency adds a pipeline stage and the latency grows;
  - the estimated clock is KABE_STANDIN_HLS_ESTIMATE_NS (default 4.8 ns);
  - a link closes the kernel clock when it is at most KABE_STANDIN_VPP_FMAX_MHZ (default: any); above,
    it scales the clock down to that frequency and says so with VPL 60-732, as v++ documents it.
Every file it writes says STAND-IN in a comment or field where its format has one.
"""

from __future__ import annotations

import os
import re
import struct
import sys
import uuid as uuidlib
from pathlib import Path

VERSION = os.environ.get("KABE_STANDIN_VITIS_VERSION", "2024.2")
HERE = Path(__file__).resolve().parent


def fail(tool: str, msg: str) -> int:
    print(f"ERROR: [{tool} 60-602] {msg}")
    return 1


# ------------------------------------------------------------------ command lines

def options(argv: list[str], flags: set[str], valued: set[str], tool: str) -> tuple[dict, list[str]]:
    """Documented options only: flags (no value), valued (one value); other dashes are errors."""
    opts: dict = {}
    positional = []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in flags:
            opts[a] = True
        elif a in valued:
            if i + 1 >= len(argv):
                raise SystemExit(fail(tool, f"option {a} needs a value"))
            opts.setdefault(a, []).append(argv[i + 1])
            i += 1
        elif a.startswith("-"):
            raise SystemExit(fail(tool, f"unrecognised option '{a}' (STAND-IN: kabe may use only documented options)"))
        else:
            positional.append(a)
        i += 1
    return opts, positional


HLS_GENERAL = {"part", "platform", "freqhz"}
HLS_KEYS = {"flow_target", "clock", "clock_uncertainty", "syn.top", "syn.file", "syn.cflags", "syn.csimflags",
            "tb.file", "tb.cflags", "package.output.format", "package.output.file"}
LINK_SECTIONS = {"connectivity": {"nk", "sp", "stream_connect", "slr"}, "clock": {"defaultFreqHz", "freqHz"},
                 "vivado": {"prop", "param"}, "advanced": {"param", "prop"}}


def read_config(path: str, tool: str, sections: dict[str, set[str]]) -> dict:
    """key=value lines under [section] heads; a key the tool does not document is an error."""
    out: dict = {}
    section = ""
    for n, line in enumerate(Path(path).read_text().splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        m = re.fullmatch(r"\[(\w+)\]", line)
        if m:
            section = m.group(1).lower()
            if section not in sections:
                raise SystemExit(fail(tool, f"{path}:{n}: unknown config section [{section}]"))
            continue
        key, sep, value = line.partition("=")
        if not sep or key.strip() not in sections[section]:
            raise SystemExit(fail(tool, f"{path}:{n}: unknown config option '{key.strip()}' in [{section or 'general'}]"))
        out.setdefault(f"{section}.{key.strip()}" if section else key.strip(), []).append(value.strip())
    return out


# ------------------------------------------------------------------ the HLS stand-in model

def _defines(texts: list[str]) -> dict[str, int]:
    d: dict[str, int] = {}
    for t in texts:
        for name, expr in re.findall(r"^\s*#define\s+(\w+)\s+(.+?)\s*(?://.*)?$", t, re.M):
            try:
                d[name] = int(eval(re.sub(r"\b([A-Za-z_]\w*)\b", lambda m: str(d.get(m.group(1), m.group(1))), expr),
                                   {"__builtins__": {}}))
            except Exception:  # noqa: BLE001 - not an integer constant
                pass
    return d


def _block(text: str, start: int) -> str:
    """The text of the { ... } block that begins at or after start."""
    i = text.index("{", start)
    depth = 0
    for j in range(i, len(text)):
        depth += {"{": 1, "}": -1}.get(text[j], 0)
        if depth == 0:
            return text[i:j + 1]
    return text[i:]


def loops(texts: list[str]) -> list[dict]:
    consts = _defines(texts)
    out = []
    for text in texts:
        for m in re.finditer(r"^\s*(\w+):\s*\n\s*for\s*\(([^;]*);([^;]*);", text, re.M):
            body = _block(text, m.end())
            bound = re.search(r"<\s*(?:\([^)]*\))?\s*([A-Za-z_]\w*|\d+)\s*(?:\*\s*([A-Za-z_]\w*|\d+))?\s*$", m.group(3).strip())
            trip_min = trip_max = None
            if bound:
                vals = [consts.get(v, int(v) if v.isdigit() else None) for v in bound.groups() if v]
                if all(v is not None for v in vals):
                    trip_min = trip_max = eval("*".join(str(v) for v in vals))
            tc = re.search(r"LOOP_TRIPCOUNT\s+min=(\d+)\s+max=(\d+)", body)
            if tc:
                trip_min, trip_max = int(tc.group(1)), int(tc.group(2))
            ii = re.search(r"PIPELINE\s+II=(\d+)", body)
            depth = 2 + sum(int(x or 1) for x in re.findall(r"BIND_OP[^\n]*?(?:latency=(\d+))?\s*$", body, re.M))
            out.append({"name": m.group(1), "trip_min": trip_min or 1, "trip_max": trip_max or 1,
                        "ii": int(ii.group(1)) if ii else 1, "depth": depth, "pipelined": bool(ii),
                        "dsp": 8 * len(re.findall(r"BIND_OP[^\n]*impl=dsp", body))})
    return out


def csynth(cfg: dict, root: Path) -> int:
    """C-synthesis reports under root/syn/report (root: <work_dir>/hls, or <project>/<solution> of the Tcl flow)."""
    part = cfg.get("part", [None])[0]
    top = cfg.get("hls.syn.top", [None])[0]
    files = cfg.get("hls.syn.file", [])
    if not part or not top or not files:
        return fail("v++", "the config needs part=, syn.top= and at least one syn.file=")
    clock = cfg.get("hls.clock", ["10ns"])[0]
    m = re.fullmatch(r"([\d.]+)\s*(ns|MHz)?", clock)
    if not m:
        return fail("v++", f"clock={clock}: not a period (ns) or a frequency (MHz)")
    target = float(m.group(1)) if m.group(2) != "MHz" else 1000.0 / float(m.group(1))
    texts = [Path(f).read_text() for f in files]
    if not any(re.search(rf"\b{re.escape(top)}\s*\(", t) for t in texts):
        return fail("v++", f"[HLS 200-1451] cannot find the top function '{top}' in the syn.file sources")
    uncertainty = round(target * 0.27, 2)
    estimate = float(os.environ.get("KABE_STANDIN_HLS_ESTIMATE_NS", "4.8"))
    found = loops(texts)
    top_text = next((t for t in texts if re.search(rf"void\s+{top}\s*\(", t)), None)
    if top_text is None:
        return fail("v++", f"[HLS 200-1451] cannot find the definition of the top function '{top}'")
    top_body = _block(top_text, re.search(rf"void\s+{top}\s*\(", top_text).end())
    calls = max(1, len(re.findall(r"^\s*\w+\([^;]*\);\s*$", top_body, re.M)))  # the engines the top instantiates
    # KABE_STANDIN_HLS_II_MISS=<loop>: that loop's schedule misses its target II by one (HLS 200-880)
    missed = os.environ.get("KABE_STANDIN_HLS_II_MISS")
    for lp in found:
        lp["target_ii"] = lp["ii"]
        if lp["name"] == missed:
            lp["ii"] += 1
    for lp in found:
        lp["lat_min"] = (lp["trip_min"] - 1) * lp["ii"] + lp["depth"]
        lp["lat_max"] = (lp["trip_max"] - 1) * lp["ii"] + lp["depth"]
    lat_min = sum(lp["lat_min"] for lp in found) + 2
    lat_max = sum(lp["lat_max"] for lp in found) + 2
    res = {"BRAM_18K": 0, "DSP": sum(lp["dsp"] for lp in found) * calls, "FF": 310 * len(found) * calls,
           "LUT": 450 * len(found) * calls, "URAM": 0}
    rd = root / "syn" / "report"
    rd.mkdir(parents=True, exist_ok=True)
    loops_xml = "".join(
        f"<{lp['name']}>\n<TripCount>\n<range>\n<min>{lp['trip_min']}</min>\n<max>{lp['trip_max']}</max>\n</range>\n"
        f"</TripCount>\n<Latency>\n<range>\n<min>{lp['lat_min']}</min>\n<max>{lp['lat_max']}</max>\n</range>\n</Latency>\n"
        f"<AbsoluteTimeLatency>\n<range>\n<min>{lp['lat_min'] * target:g}</min>\n<max>{lp['lat_max'] * target:g}</max>\n"
        f"</range>\n</AbsoluteTimeLatency>\n<PipelineII>{lp['ii']}</PipelineII>\n<PipelineDepth>{lp['depth']}</PipelineDepth>\n"
        f"<IterationLatency>{lp['depth']}</IterationLatency>\n</{lp['name']}>\n" for lp in found)
    res_xml = "".join(f"<{k}>{v}</{k}>\n" for k, v in res.items())
    (rd / "csynth.xml").write_text(f"""<profile>
<!-- STAND-IN for Vitis HLS (kabe tests): the numbers are tests/standin/vitis's model, not synthesis -->
<ReportVersion>
<Version>{VERSION}</Version>
</ReportVersion>
<UserAssignments>
<unit>ns</unit>
<ProductFamily>zynq</ProductFamily>
<Part>{part}</Part>
<TopModelName>{top}</TopModelName>
<TargetClockPeriod>{target:.2f}</TargetClockPeriod>
<ClockUncertainty>{uncertainty:.2f}</ClockUncertainty>
<FlowTarget>{cfg.get('hls.flow_target', ['vivado'])[0]}</FlowTarget>
</UserAssignments>
<PerformanceEstimates>
<PipelineType>dataflow</PipelineType>
<SummaryOfTimingAnalysis>
<unit>ns</unit>
<EstimatedClockPeriod>{estimate:.3f}</EstimatedClockPeriod>
</SummaryOfTimingAnalysis>
<SummaryOfOverallLatency>
<unit>clock cycles</unit>
<Best-caseLatency>{lat_min}</Best-caseLatency>
<Average-caseLatency>{(lat_min + lat_max) // 2}</Average-caseLatency>
<Worst-caseLatency>{lat_max}</Worst-caseLatency>
<Best-caseRealTimeLatency>{lat_min * target:.3f} ns</Best-caseRealTimeLatency>
<Average-caseRealTimeLatency>{(lat_min + lat_max) / 2 * target:.3f} ns</Average-caseRealTimeLatency>
<Worst-caseRealTimeLatency>{lat_max * target:.3f} ns</Worst-caseRealTimeLatency>
<Interval-min>{lat_min + 1}</Interval-min>
<Interval-max>{lat_max + 1}</Interval-max>
</SummaryOfOverallLatency>
<SummaryOfLoopLatency>
{loops_xml}</SummaryOfLoopLatency>
</PerformanceEstimates>
<AreaEstimates>
<Resources>
{res_xml}</Resources>
<AvailableResources>
<BRAM_18K>280</BRAM_18K>
<DSP>220</DSP>
<FF>106400</FF>
<LUT>53200</LUT>
<URAM>0</URAM>
</AvailableResources>
</AreaEstimates>
</profile>
""")
    slack = round(target - uncertainty - estimate, 2)
    head = ["Modules", "& Loops"]
    rows = [(f"+ {top}*", "-", f"{slack:.2f}", str(lat_max), f"{lat_max * target:.3e}", "-", str(lat_max + 1), "-",
             "dataflow", "-", str(res["DSP"]), f"{res['FF']} (~0%)", f"{res['LUT']} (~0%)", "-")]
    for lp in found:
        rows.append((f" o {lp['name']}", "II" if lp["ii"] != lp["target_ii"] else "-", f"{slack:.2f}", str(lp["lat_max"]), f"{lp['lat_max'] * target:.3e}",
                     str(lp["depth"]), str(lp["ii"]), str(lp["trip_max"]), "yes" if lp["pipelined"] else "no",
                     "-", "-", "-", "-", "-"))
    cols = [("", "Issue", ""), ("", "", "Slack"), ("Latency", "(cycles)"), ("Latency", "(ns)"), ("Iteration", "Latency"),
            ("", "Interval"), ("Trip", "Count"), ("", "Pipelined"), ("", "BRAM"), ("", "DSP"), ("", "FF"), ("", "LUT"),
            ("", "URAM")]
    hdr1 = ["Modules", "Issue", "", "Latency", "Latency", "Iteration", "", "Trip", "", "", "", "", "", ""]
    hdr2 = ["& Loops", "Type", "Slack", "(cycles)", "(ns)", "Latency", "Interval", "Count", "Pipelined", "BRAM",
            "DSP", "FF", "LUT", "URAM"]
    widths = [max(len(r[i]) for r in [hdr1, hdr2, *rows]) + 1 for i in range(14)]
    border = "+" + "+".join("-" * (w + 1) for w in widths) + "+"

    def line(cells, first_left=False):
        out = []
        for i, (c, w) in enumerate(zip(cells, widths)):
            out.append((c.ljust(w) if (first_left and i == 0) else c.rjust(w)))
        return "|" + "|".join(out) + "|"
    table = [border, line([c.center(widths[0]) if i == 0 else c for i, c in enumerate(hdr1)]),
             line([c.center(widths[0]) if i == 0 else c for i, c in enumerate(hdr2)]), border,
             *[line(r, True) for r in rows], border]
    (rd / "csynth.rpt").write_text("\n\n" + "=" * 64 + f"\n== Synthesis Summary Report of '{top}'\n" + "=" * 64 + "\n"
                                   f"+ General Information: \n    * Date:           STAND-IN\n"
                                   f"    * Version:        {VERSION} (STAND-IN for Vitis HLS, kabe tests)\n"
                                   f"    * Project:        {root.parent.name}\n    * Solution:       hls (Vivado IP Flow Target)\n"
                                   f"    * Product family: zynq\n    * Target device:  {part}\n    \n\n"
                                   f"+ Performance & Resource Estimates: \n    \n"
                                   f"    PS: '+' for module; 'o' for loop; '*' for dataflow\n"
                                   + "\n".join("    " + t for t in table) + "\n")
    (root / "vitis_hls.log").write_text(
        f"INFO: [HLS 200-10] STAND-IN for Vitis HLS {VERSION} (kabe tests)\n"
        "INFO: [HLS 200-1510] Running: csynth_design \n"
        + "".join(f"WARNING: [HLS 200-880] The II Violation in module '{top}' (loop '{lp['name']}'): Unable to enforce "
                  f"a carried dependence constraint (II = {lp['target_ii']}, distance = 1, offset = 1) (STAND-IN)\n"
                  for lp in found if lp["ii"] != lp["target_ii"])
        + "".join(f"INFO: [HLS 200-1470] Pipelining result : Target II = {lp['target_ii']}, Final II = {lp['ii']}, "
                  f"Depth = {lp['depth']}, loop '{lp['name']}'\n" for lp in found if lp["pipelined"])
        + f"INFO: [HLS 200-789] **** Estimated Fmax: {1000 / estimate:.2f} MHz\n"
        + "INFO: [HLS 200-111] Finished Command csynth_design CPU user time: 0 seconds.\n")
    print(f"INFO: [v++ 60-791] STAND-IN C-synthesis of {top} done: {root}")
    return 0


def hls_run(cfg: dict, work: Path, what: str, root: Path | None = None) -> int:
    top = cfg.get("hls.syn.top", [None])[0]
    root = root or work / "hls"
    if not (root / "syn" / "report" / "csynth.xml").is_file() and what != "--csim":
        return fail("vitis-run", f"{work}: no synthesized HLS component; run v++ -c --mode hls first")
    if what == "--csim":
        if not cfg.get("hls.tb.file"):
            return fail("vitis-run", "C simulation needs a testbench (tb.file=)")
        print("INFO: [SIM 211-1] STAND-IN: C simulation is kabe's own (g++); nothing simulated here")
        return 0
    if what == "--cosim":
        if not cfg.get("hls.tb.file"):
            return fail("vitis-run", "C/RTL co-simulation needs a testbench (tb.file=)")
        sd = root / "sim" / "report"
        sd.mkdir(parents=True, exist_ok=True)
        status = os.environ.get("KABE_STANDIN_COSIM", "Pass")
        head = ["Report time       : STAND-IN (kabe tests)", "Solution          : solution1.",
                "Simulation tool   : xsim.", ""]
        border = "+----------+----------+" + "-" * 47 + "+" + "-" * 47 + "+----------------------+"
        cells = lambda vals: "".join(f"{v:>15}|" for v in vals)  # noqa: E731
        n = "100"
        table = [border,
                 "|          |          |" + "Latency(Clock Cycles)".center(47) + "|" + "Interval(Clock Cycles)".center(47)
                 + "| Total Execution Time |",
                 "+   RTL    +  Status  +" + "-" * 47 + "+" + "-" * 47 + "+    (Clock Cycles)    +",
                 "|          |          |" + "|".join(w.center(15) for w in ("min", "avg", "max")) + "|"
                 + "|".join(w.center(15) for w in ("min", "avg", "max")) + "|                      |",
                 border,
                 "|      VHDL|        NA|" + cells(["NA"] * 6) + f"{'NA':>22}|",
                 f"|   Verilog|{status:>10}|" + cells([n, n, n, "101", "101", "101"]) + f"{'101':>22}|",
                 border]
        (sd / f"{top}_cosim.rpt").write_text("\n".join(head + table) + "\n")
        return 0
    fmt = cfg.get("hls.package.output.format", ["ip_catalog"])[0]
    if fmt not in ("ip_catalog", "xo", "syn_dcp", "sysgen", "rtl"):
        return fail("vitis-run", f"package.output.format={fmt} is not a package format")
    out = Path(cfg.get("hls.package.output.file", [str(work / f"{top}.{'xo' if fmt == 'xo' else 'zip'}")])[0])
    package(out, top, fmt)
    print(f"INFO: [vitis-run 60-1662] STAND-IN: packaged {out}")
    return 0


def package(out: Path, top: str, fmt: str) -> None:
    import zipfile

    out.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(out, "w") as z:
        z.writestr("STAND-IN.txt", f"STAND-IN for a Vitis HLS {fmt} export of {top} (kabe tests); no RTL inside\n")
        z.writestr("kernel.xml", f'<?xml version="1.0"?>\n<root versionMajor="1"><kernel name="{top}" '
                                 f'language="c" vlnv="xilinx.com:hls:{top}:1.0"/></root>\n')


def tcl_tool(tool: str, argv: list[str]) -> int:
    """vitis_hls / vivado_hls: -version, or -f <script>: the script runs in tclsh on hls_commands.tcl, whose
    procs accept only documented options and record each call; the reports follow from the record."""
    import subprocess
    import tempfile

    if argv == ["-version"]:
        what = "Vitis HLS - High-Level Synthesis from C, C++ and OpenCL" if tool == "vitis_hls" else \
            "Vivado(TM) HLS - High-Level Synthesis from C, C++ and SystemC"
        print(f"****** {what} v{VERSION} (64-bit)\n  **** STAND-IN (kabe tests; not AMD's tool)")
        return 0
    if len(argv) != 2 or argv[0] != "-f" or not Path(argv[1]).is_file():
        return fail(tool, "the STAND-IN runs `-f <script.tcl>` or `-version` only")
    record = Path(tempfile.mkstemp(prefix="hls-calls-", suffix=".tcl")[1])
    wrapper = (f"set ::standin_record {{{record}}}\nset ::standin_tool {tool}\n"
               f"source {{{HERE / 'hls_commands.tcl'}}}\nsource {{{Path(argv[1]).resolve()}}}\n")
    script = record.with_suffix(".run.tcl")
    script.write_text(wrapper)  # a script file, not stdin: tclsh stops at the first error of a file
    proc = subprocess.run(["tclsh", str(script)], text=True, capture_output=True)
    script.unlink()
    print(proc.stdout, end="")
    if proc.returncode != 0:
        print(proc.stderr.strip().splitlines()[0] if proc.stderr.strip() else f"ERROR: tclsh exit {proc.returncode}")
        return 1
    calls = [line.split(" ", 1) for line in record.read_text().splitlines()]
    record.unlink()
    cfg: dict = {}
    project = solution = None
    steps = []
    for cmd, *rest in calls:
        arg = rest[0] if rest else ""
        words = arg.split(" ")
        if cmd == "open_project":
            project = arg
        elif cmd == "set_top":
            cfg["hls.syn.top"] = [arg]
        elif cmd == "add_files":
            cfg.setdefault(f"hls.{words[0]}.file", []).append(arg.split(" ", 1)[1].strip("{}"))
        elif cmd == "open_solution":
            solution = words[0]
            cfg["hls.flow_target"] = [words[1]]
        elif cmd == "set_part":
            cfg["part"] = [arg.strip("{}")]
        elif cmd == "create_clock":
            cfg["hls.clock"] = [f"{arg}ns"]
        else:
            steps.append((cmd, words))
    if project is None or solution is None:
        return fail(tool, "the script opened no project and solution (open_project, open_solution)")
    root = Path.cwd() / project / solution
    for cmd, words in steps:
        if cmd == "csynth_design":
            if csynth(cfg, root):
                return 1
        elif cmd == "cosim_design":
            cfg_tb = dict(cfg)
            if hls_run(cfg_tb, root.parent, "--cosim", root=root):
                return 1
        elif cmd == "export_design":
            if not (root / "syn" / "report" / "csynth.xml").is_file():
                return fail(tool, "export_design before csynth_design")
            fmt, out = words[0], " ".join(words[1:]).strip("{}")
            package(Path(out) if out else root / "impl" / f"{cfg['hls.syn.top'][0]}.zip", cfg["hls.syn.top"][0], fmt)
    return 0


# ------------------------------------------------------------------ v++ --link

def _xclbin(path: Path, kernels: list[str], clocks: list[tuple[str, int, int]], platform: str) -> None:
    """An .xclbin as XRT's xclbin.h lays it out: axlf + header + section headers, IP_LAYOUT (8) and
    CLOCK_FREQ_TOPOLOGY (11) sections. clocks: (name, type 1 DATA / 2 KERNEL / 3 SYSTEM, MHz)."""
    ip = struct.pack("<i4x", len(kernels)) + b"".join(
        struct.pack("<IIQ64s", 1, 0, 0x1800000 + 0x10000 * i, f"{k}:{k}_1".encode()) for i, k in enumerate(kernels))
    clk = struct.pack("<h6x", len(clocks))[:2] + b"".join(
        struct.pack("<HB5x128s", mhz, kind, name.encode()) for name, kind, mhz in clocks)
    sections = [(8, b"ip_layout", ip), (11, b"clk_freq_topo", clk)]
    head_len = 304 + 152 + 40 * len(sections)
    offset, shdrs, body = head_len, b"", b""
    for kind, name, data in sections:
        shdrs += struct.pack("<I16s4xQQ", kind, name, offset, len(data))
        body += data
        offset += len(data)
    total = head_len + len(body)
    axlf = b"xclbin2\x00" + struct.pack("<i", -1) + b"\x00" * 28 + b"STAND-IN".ljust(256, b"\x00") + struct.pack("<Q", 1)
    header = struct.pack("<QQQHBBHH16s64s16s16sI4x", total, 0, 0, 0, 2, 1, 0, 0, b"\x00" * 16,
                         platform.encode()[:64], uuidlib.uuid5(uuidlib.NAMESPACE_URL, str(path)).bytes,
                         b"STAND-IN", len(sections))
    path.write_bytes(axlf + header + shdrs + body)


def link(opts: dict, xos: list[str]) -> int:
    platform = opts.get("--platform", [None])[0]
    out = opts.get("-o", [None])[0]
    target = opts.get("-t", ["hw"])[0]
    if not platform or not Path(platform).is_file() or not platform.endswith(".xpfm"):
        return fail("v++", f"--platform {platform}: no such platform file (.xpfm)")
    if not out or not out.endswith(".xclbin"):
        return fail("v++", "-o must name the .xclbin to write")
    if target != "hw":
        return fail("v++", f"-t {target}: the STAND-IN links for hardware (hw) only")
    if not xos or not all(x.endswith(".xo") and Path(x).is_file() for x in xos):
        return fail("v++", f"the kernels to link must be existing .xo files, got {xos}")
    cfg = {}
    for c in opts.get("--config", []):
        cfg.update(read_config(c, "v++", {"": set(), **LINK_SECTIONS}))
    hz = opts.get("--clock.defaultFreqHz", cfg.get("clock.defaultFreqHz", ["300000000"]))[0]
    asked = int(hz) / 1e6
    fmax = float(os.environ.get("KABE_STANDIN_VPP_FMAX_MHZ", "0")) or None
    got = asked if fmax is None or asked <= fmax else fmax
    kernels = []
    import zipfile
    for x in xos:
        with zipfile.ZipFile(x) as z:
            kernels += re.findall(r'<kernel name="(\w+)"', z.read("kernel.xml").decode())
    cwd = Path.cwd()
    logs, vpl = cwd / "_x" / "logs" / "link", cwd / "_x" / "link" / "vivado" / "vpl"
    impl = vpl / "prj" / "prj.runs" / "impl_1"
    for d in (logs, impl, cwd / "_x" / "reports" / "link"):
        d.mkdir(parents=True, exist_ok=True)
    clock = "clk_kernel"  # as long as the fixture's clk_fpga_0: Vivado's tables stay aligned
    scaled = got < asked
    vpl_lines = [f"****** vpl v{VERSION} (64-bit)   STAND-IN for AMD vpl (kabe tests)",
                 "INFO: [VPL 60-839] Read in kernel information from file 'kernel_info.dat'.",
                 "INFO: [VPL 60-423]   Target device: standin_platform"]
    if scaled:
        # AMD's documented message when the kernel clock does not close: the link lowers the clock and goes on
        vpl_lines += [f"CRITICAL WARNING: [VPL 60-732] Link warning: One or more timing paths failed timing targets. "
                      f"The failing clock '{clock}' (kernel clock) frequency of {asked:g} MHz has been "
                      f"automatically changed to {got:g} MHz to meet timing."]
    import time
    vpl_lines += [f"INFO: [Common 17-206] Exiting Vivado at {time.strftime('%a %b %d %H:%M:%S %Y')}..."]
    (vpl / "runme.log").write_text("\n".join(vpl_lines) + "\n")
    # the routed timing summary: Vivado's format (a met report from kabe's own fixtures), its clock renamed to
    # the kernel clock at the frequency the link landed on
    fixture = (HERE.parent.parent / "fixtures" / "vivado" / "flow_timing_summary_met.rpt").read_text()
    period = 1000.0 / got
    fixture = fixture.replace("clk_fpga_0", clock)
    fixture = re.sub(r"(\b" + re.escape(clock) + r"\s+\{0\.000 )[\d.]+(\}\s+)[\d.]+(\s+)[\d.]+",
                     lambda m: f"{m.group(1)}{period / 2:.3f}{m.group(2)}{period:.3f}{m.group(3)}{got:.3f}", fixture)
    (impl / "standin_wrapper_timing_summary_routed.rpt").write_text(fixture)
    util = (HERE.parent.parent / "fixtures" / "vivado" / "flow_utilization.rpt").read_text()
    (impl / "standin_wrapper_utilization_placed.rpt").write_text(util)
    _xclbin(Path(out), kernels, [("DATA_CLK", 1, int(got)), (clock, 2, int(got))], Path(platform).stem)
    vpp = [f"INFO: [v++ 60-1306] Additional information associated with this v++ link can be found at:",
           f"\tReports: {cwd / '_x' / 'reports' / 'link'}", f"\tLog files: {logs}",
           f"INFO: [v++ 60-895]   Target platform: {platform}", "INFO: [v++ 60-629] Linking for hardware target",
           f"INFO: [v++ 60-1443] [00:00:00] Run run_link: Step vpl: Started",
           *[ln for ln in vpl_lines if "VPL 60-732" in ln],
           "INFO: [v++ 60-1441] [00:00:01] Run run_link: Step vpl: Completed",
           f"Successfully wrote ({Path(out).stat().st_size} bytes) to the output file: {out}",
           f"INFO: [v++ 60-586] Created {out}",
           "INFO: [v++ 60-791] Total elapsed time: 0h 0m 1s"]
    (logs / "v++.log").write_text("\n".join(vpp) + "\n")
    print("\n".join(vpp))
    return 0


def main(argv: list[str]) -> int:
    name = Path(sys.argv[0]).name
    if name == "v++":
        if argv in (["--version"], ["-v"]):
            print(f"v++ v{VERSION} (64-bit)\nSTAND-IN for AMD Vitis v++ (kabe tests; not AMD Vitis)")
            return 0
        opts, pos = options(argv, {"-c", "--compile", "-l", "--link"},
                            {"--mode", "--config", "--work_dir", "-t", "--target", "--platform", "-o", "--output",
                             "--clock.defaultFreqHz"}, "v++")
        if opts.get("-c") or opts.get("--compile"):
            if opts.get("--mode") != ["hls"] or pos:
                return fail("v++", "the STAND-IN compiles only HLS components: v++ -c --mode hls --config <cfg> --work_dir <dir>")
            cfg = read_config(opts["--config"][0], "v++", {"": HLS_GENERAL, "hls": HLS_KEYS})
            work = Path(opts.get("--work_dir", ["."])[0]).resolve()
            return csynth(cfg, work / "hls")
        if opts.get("-l") or opts.get("--link"):
            if "--mode" in opts or "--work_dir" in opts:
                return fail("v++", "--mode and --work_dir are for v++ -c; a link takes -t, --platform, --config, -o")
            for long, short in (("--target", "-t"), ("--output", "-o")):
                if long in opts:
                    opts[short] = opts.pop(long)
            return link(opts, pos)
        return fail("v++", "one of -c (compile) or -l (link) is required")
    if name == "vitis-run":
        if argv in (["--version"], ["-v"]):
            print(f"vitis-run v{VERSION} STAND-IN (kabe tests; not AMD Vitis)")
            return 0
        steps = {"--csim", "--cosim", "--package"}
        opts, pos = options(argv, steps, {"--mode", "--config", "--work_dir"}, "vitis-run")
        asked = [s for s in steps if opts.get(s)]
        if opts.get("--mode") != ["hls"] or len(asked) != 1 or pos or "--config" not in opts:
            return fail("vitis-run", "usage: vitis-run --mode hls (--csim | --cosim | --package) --config <cfg> --work_dir <dir>")
        cfg = read_config(opts["--config"][0], "vitis-run", {"": HLS_GENERAL, "hls": HLS_KEYS})
        return hls_run(cfg, Path(opts.get("--work_dir", ["."])[0]).resolve(), asked[0])
    if name in ("vitis_hls", "vivado_hls"):
        return tcl_tool(name, argv)
    return fail(name, f"the STAND-IN answers to v++, vitis-run, vitis_hls and vivado_hls, not {name}")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
