"""A design verified by a cocotb testbench (`verify: {cocotb: "test_module"}`, docs/your_design.md).

The testbench runs in cocotb's own runner on Verilator (cocotb_tools.runner), in a child process
under kabe.base.tool_group, on the files of the design's `sim` target as FuseSoC resolves them. Its
JUnit XML is the simulation verdict: read here as data (size-capped, no DTD), every test case
counted, and passed only when at least one test ran and none failed or errored. The XML is kept
with the result and archived beside it (reports/<commit>/<design>/sim/junit.xml).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from rich.markup import escape

from kabe.base.errors import UserError, bounded
from kabe.project import cores, designs
from kabe.base import disk_space, provenance, tool_group
from kabe.project.design_context import DesignContext
from kabe.base.paths import ROOT
from . import verilator_build
from .ask import SimAsk
from ..flows import ghdl, yosys_script as ys
from .vl_output import runtime_warnings

CHILD = Path(__file__).with_name("cocotb_child.py")
MAX_XML_BYTES = 16 << 20
_TIMEOUT_S = 3600
TIMEOUT_ENV = "KABE_COCOTB_TIMEOUT_S"  # the documented setting (docs/your_design.md, "Tool time limits")


def timeout_setting() -> float:
    """KABE_COCOTB_TIMEOUT_S when set (seconds, > 0), else 3,600; a bad value is one line naming it."""
    text = os.environ.get(TIMEOUT_ENV)
    if not text:
        return float(_TIMEOUT_S)
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if value <= 0:
        raise CocotbError(f"{TIMEOUT_ENV}={text!r} is not a number of seconds above 0; set it to, say, 7200, or "
                          f"unset it (default {_TIMEOUT_S} s)")
    return value


class CocotbError(UserError, RuntimeError):
    """The cocotb testbench could not run, or its JUnit result cannot be read."""


def parse_junit(text: str, where: str) -> dict[str, Any]:
    """tests, failed, skipped and the failing cases' names and messages of a JUnit XML text."""
    if len(text) > MAX_XML_BYTES:
        raise CocotbError(f"{where}: the JUnit result is larger than {MAX_XML_BYTES >> 20} MiB")
    if "<!DOCTYPE" in text or "<!ENTITY" in text:
        raise CocotbError(f"{where}: the JUnit result declares a DTD or entities, which a test result never needs")
    try:
        root = ET.fromstring(text)
    except ET.ParseError as e:
        raise CocotbError(f"{where}: the JUnit result is not XML ({e})") from None
    cases = list(root.iter("testcase"))
    failed, skipped = [], 0
    for c in cases:
        bad = c.find("failure")
        bad = bad if bad is not None else c.find("error")
        if bad is not None:
            msg = " ".join((bad.get("message") or bad.text or "").split())
            failed.append(f"cocotb test {bounded(c.get('name'), 80)} failed" + (f": {msg[:200]}" if msg else ""))
        elif c.find("skipped") is not None:
            skipped += 1
    return {"tests": len(cases), "failed": len(failed), "skipped": skipped, "failures": failed}


def run(ctx: DesignContext, ask: SimAsk) -> dict:
    """Run the design's cocotb testbench (ctx: its sim target, commit and console as the verb resolved them;
    ask: the seed, parameter overrides, use flags and build root); the result has runner.run_sim's verdict keys
    (passed, mismatches, problems, rows_checked) and the JUnit XML text under "junit_xml"."""
    t_start = time.monotonic()
    d, console, seed, params, build_root = ctx.design, ctx.console, ask.seed, dict(ask.params), ask.build_root
    module = d.verify.value
    found = designs.verify_sources(d)
    if not found:
        raise CocotbError(f"{d.yaml_file}: verify.cocotb {module}: no {module.replace('.', '/')}.py in the design's "
                          f"folder ({d.directory}) or the project root ({ROOT}); create it or correct verify.cocotb")
    edam = verilator_build.sim_target(ctx, ask.flags, Path(os.path.abspath(build_root)))
    vhdl = ghdl.vhdl_files(edam)
    on_ghdl = bool(vhdl) and all(ys.language(s) == "vhdl" for s in ys.edam_sources(edam))
    if vhdl and not on_ghdl:  # mixed: Verilator on the Verilog with GHDL's netlist of the VHDL entities
        edam, params = verilator_build.vhdl_view(d, edam, dict(params or {}), build_root)
    kinds = ("generic", "vlogparam") if on_ghdl else ("vlogparam",)
    values = {k: v for k, v in edam.parameters.items()
              if edam.parameter_specs.get(k, {}).get("paramtype", "vlogparam") in kinds and v is not None}
    values.update(params or {})
    defines = {k: v for k, v in edam.parameters.items()
               if edam.parameter_specs.get(k, {}).get("paramtype") == "vlogdefine" and v is not None}
    commit = ctx.commit or provenance.current_commit()
    run_root = Path(build_root) / "sim" / d.name / "cocotb"
    run_root.mkdir(parents=True, exist_ok=True)
    disk_space.check_free(f"the {d.name} cocotb run", [disk_space.tmp_place(), disk_space.build_place(run_root)])
    work = Path(tempfile.mkdtemp(prefix=f"seed{seed}-", dir=run_root))
    try:
        results = work / "results.xml"
        # the simulation runs in work (cocotb's test_dir): a core's copyto files go there, as FuseSoC put them
        # in its work root, where kabe's own harness runs
        cores.place_copied_files(edam, work)
        job = {"sources": [str(p) for p in edam.sources], "includes": [str(p) for p in edam.include_dirs],
               # a bool is 1 or 0 (cores.hdl_value), never Python's True/False
               "defines": {k: cores.hdl_value(v) for k, v in defines.items()},
               # strings quoted as edalize and kabe's harness pass them: cocotb's runner writes -G<name>=<value>
               # as given, and Verilator reads an unquoted `blinky.hex` as a number
               "parameters": {k: verilator_build.param_value(v, edam.parameter_specs.get(k, {}))
                              for k, v in values.items()}, "toplevel": edam.toplevel,
               "build_dir": str(run_root / "build"), "test_dir": str(work), "results_xml": str(results),
               "module": module, "seed": seed, "pythonpath": [str(found[0].parent), str(ROOT)],
               # X random per run, as in kabe's own harness (verilator_build.X_OPTIONS): an output that
               # depends on X fails the testbench instead of matching it by luck
               "build_args": ["-Wno-fatal", "-Wno-lint", "-Wno-style", *verilator_build.X_OPTIONS,
                              *[str(o) for o in edam.tool_options.get("verilator_options", [])]],
               "plusargs": verilator_build.x_plusargs(seed)}
        # cocotb's runner rebuilds only when a source file is newer than its build (always=False): a change
        # of parameters, defines or flags would reuse the old model, so each set of them builds in its own folder
        what = {k: job[k] for k in ("sources", "includes", "defines", "parameters", "toplevel", "build_args")}
        job["build_dir"] = str(run_root / ("build-" + hashlib.sha256(
            json.dumps(what, sort_keys=True, default=str).encode()).hexdigest()[:16]))
        if on_ghdl:  # VHDL only: cocotb's GHDL runner on the VHDL itself, each library analysed in its own name
            if ghdl.command() is None:
                raise CocotbError(f"{vhdl[0]}: the cocotb testbench {module} of {d.name} runs on VHDL, and GHDL is "
                                  f"not installed. Fix: {ghdl.FIX}")
            std = ghdl.standard(vhdl)
            job.update(simulator="ghdl", libraries=_libraries(vhdl), plusargs=[], defines={},
                       parameters={k: cores.hdl_value(v) for k, v in values.items()},
                       build_args=[*([f"--std={std}"] if std else []), "-fsynopsys"])
            job["build_dir"] = str(run_root / ("ghdl-" + hashlib.sha256(json.dumps(
                {k: job[k] for k in ("libraries", "parameters", "toplevel", "build_args")}, sort_keys=True,
                default=str).encode()).hexdigest()[:16]))
        (work / "job.json").write_text(json.dumps(job, default=str))
        env = verilator_build._env()
        env["PATH"] = f"{verilator_build.verilator_root() / 'bin'}{os.pathsep}{env.get('PATH', '')}"
        if console:
            console.print(f"[dim]{d.name}[/]: cocotb {module} on {'GHDL' if on_ghdl else 'Verilator'} (cocotb's runner)"
                          f"{'' if on_ghdl or not vhdl else ', its VHDL as GHDL synthesized it'}")
        t0 = time.monotonic()
        limit = timeout_setting()
        try:
            proc = tool_group.run([sys.executable, str(CHILD), str(work / "job.json")], cwd=work, env=env,
                                  capture_output=True, text=True, timeout=limit)
        except subprocess.TimeoutExpired:
            raise CocotbError(f"the cocotb testbench {module} of {d.name} did not finish within {limit:.0f} s "
                              f"(Verilator's compile and the tests together). Fix: raise the limit "
                              f"({TIMEOUT_ENV}=7200; docs/your_design.md, \"Tool time limits\"), or shorten the "
                              f"tests") from None
        seconds = time.monotonic() - t0
        (run_root / "last.log").write_text(proc.stdout + "\n" + proc.stderr)
        if not results.is_file():
            errs = [ln.strip() for ln in (proc.stderr + proc.stdout).splitlines()
                    if "%Error" in ln or "error:" in ln.lower() or "Error" in ln][:3]
            raise CocotbError(f"the cocotb testbench {module} of {d.name} wrote no JUnit result (exit "
                              f"{proc.returncode}): {' | '.join(errs) or (proc.stderr or proc.stdout).strip()[-300:]} "
                              f"(log: {run_root / 'last.log'})")
        xml_text = results.read_text(errors="replace")
        # Verilator's runtime warnings (a $readmem file not found) are said, as kabe's harness says them
        warnings = runtime_warnings(proc.stdout + "\n" + proc.stderr)
        for w in warnings:
            if console:
                console.print(f"[yellow]{d.name}: the simulation warned: {escape(w)}[/]", soft_wrap=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    junit = parse_junit(xml_text, f"{d.name} (cocotb {module})")
    problems = list(junit["failures"])
    if junit["tests"] - junit["skipped"] == 0:
        problems.append(f"cocotb {module} ran no test (a testbench with no @cocotb.test, or every test skipped)")
    return {
        "design": d.name, "kind": None, "verification": d.verify.as_dict(), "ports": d.ports,
        "module": module, "tests": junit["tests"], "failed": junit["failed"], "skipped": junit["skipped"],
        "rows": junit["tests"], "rows_checked": junit["tests"], "words_checked": 0,
        "mismatches": 0, "first_mismatches": [], "problems": problems, "passed": not problems,
        "beats": 0, "cycles": 0, "beats_per_cycle": 0.0, "seed": seed,
        "parameters": values, "overrides": dict(params or {}), "flags": list(ask.flags),
        "seconds": round(time.monotonic() - t_start, 3), "frame_seconds": 0.0, "model_seconds": 0.0,
        "compile_seconds": 0.0, "simulate_seconds": round(seconds, 3), "compare_seconds": 0.0,
        "simulator": "cocotb", "version": _cocotb_version(on_ghdl), "junit_xml": xml_text, "warnings": warnings,
        "commit": commit.sha, "dirty": commit.dirty,
    }


def _libraries(vhdl: list) -> list:
    """[[library, [files]], ...] in FuseSoC's order, a run of files of one library as one group; a file with no
    logical_name goes to cocotb's toplevel library (top)."""
    groups: list = []
    for f in vhdl:
        lib = getattr(f, "logical_name", "") or "top"
        if groups and groups[-1][0] == lib:
            groups[-1][1].append(str(f))
        else:
            groups.append([lib, [str(f)]])
    return groups


def _cocotb_version(on_ghdl: bool = False) -> str:
    from importlib import metadata

    try:
        sim = ghdl.version() if on_ghdl else f"verilator {verilator_build.verilator_version()}"
        return f"cocotb {metadata.version('cocotb')}, {sim}"
    except metadata.PackageNotFoundError:
        return "cocotb (version unknown)"
