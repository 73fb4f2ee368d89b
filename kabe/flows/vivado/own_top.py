"""The design's own top through Vivado (design.yaml `vivado: {top: own}`, the default for a design that
is not one of kabe's AXI-Stream shells): its top, pins and clocks as its core and XDC describe them, its IP
(.xci or IP Tcl, through kabe's IP cache), its block designs (a write_bd_tcl script or a .bd), its hooks.

edalize's Vivado backend writes the project Tcl and the Makefile from an EDAM that holds the design's
HDL (Verilog, SystemVerilog, VHDL), constraints (xdc, SDC), memory files and its own Tcl; kabe adds only
Tcl of its own around them:
  * kabe_settings.tcl: every per-build value as ::kabe(...);
  * tcl/own_read_ips.tcl: the IPs' cached products, read (an .xci is never handed to edalize, whose
    project Tcl runs upgrade_ip on every IP: kabe names a version mismatch instead);
  * tcl/own_block_designs.tcl: each block design read (.bd) or built (a write_bd_tcl script, sourced
    there so that a script that stops early is caught), validated, generated, wrapped when the top is its
    wrapper, its .hwh kept (edalize's own .bd handling upgrades the cells: not used);
  * tcl/own_attach_hooks.tcl: the design's hooks (STEPS.<STEP>.TCL.PRE/POST) and kabe's report hooks
    before write_bitstream (the reports and the Tcl second source for the gate, the commit in USR_ACCESS);
  * the .xsa after the bitstream when the part has a processing system.
Clocks come from the design (an MMCM, a PS, a pin): collect() reads them from Vivado's timing report.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any, Callable

from kabe.base import provenance
from kabe.flows.base import FlowError
from kabe.flows.vivado import ip_cache, ip_source, versal
from kabe.flows.vivado.project import (EXPORT_XSA_TCL, HOOK_DIR, STRATEGY_TCL, TCL_DIR, TIMING_MAX_PATHS, Project,
                                       design_hooks, hook_dispatcher, own_image_pre_hook, settings_tcl,
                                       usr_access_word)
from kabe.flows.vivado.tool import STRATEGY_KEYS
from kabe.store import safe_fs

# the report hooks kabe runs on the routed design, before the bitstream (no PL-clock check: the design's
# clocks are its own, read from the report)
OWN_REPORT_HOOKS = ("check_vivado_version", "embed_commit", "report_timing_summary", "report_logic_levels",
                    "report_utilization", "report_clock_interaction", "timing_verdict")
PS_FAMILIES = ("zynq-7000", "zynq-ultrascale+", "versal")  # parts with a processing system: an .xsa is written
# the same by part name: Zynq-7000, Zynq/Kria UltraScale+, Versal (AI Core, AI Edge, Prime, Premium, HBM, the V80's;
# not xcvu: a Virtex UltraScale+ has no processing system)
PS_PARTS = ("xc7z", "xczu", "xck2", "xcvc", "xcve", "xcvm", "xcvp", "xcvh", "xcv80")
_EDALIZE_TYPES = ("verilogSource", "systemVerilogSource", "vhdlSource", "xdc", "SDC", "mem")
_VHDL_LIBRARY = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,62}")
_BD_SCRIPT_VERSION = re.compile(r"^\s*set\s+scripts_vivado_version\s+(\S+)", re.M)
_BD_SCRIPT_NAME = re.compile(r"^\s*set\s+design_name\s+(\S+)", re.M)
_BD_FILE_VERSION = re.compile(r'bd:tool_version="([^"]+)"|"tool_version"\s*:\s*"([^"]+)"')


def _version_mismatch(path: Path, made: str, running: str, what: str) -> FlowError:
    return FlowError(f"{path}: this {what} was written by Vivado {made}, and this build runs Vivado {running}; "
                     f"kabe does not upgrade it silently. Fix: upgrade it (open it in Vivado {running}, "
                     f"upgrade_ip / upgrade_bd_cells, write it again and commit), or pin Vivado {made} "
                     f"(put it on PATH; [tool.kabe] vivado_version = \"{made}\")")


def classify(edam, design, running: str) -> dict[str, list]:
    """The synth target's files by what the Vivado flow does with them."""
    out: dict[str, list] = {"edalize": [], "ip": [], "bd_scripts": [], "bd_files": [], "tcl": [], "ignored": []}
    seen_xdc = False
    for f in edam.files:
        base = f.file_type.split("-")[0]
        path = Path(f.path)
        if base in _EDALIZE_TYPES:
            entry = {"name": str(path), "file_type": f.file_type}
            if base == "vhdlSource" and getattr(f, "logical_name", ""):  # edalize: read_vhdl -library <name>
                if not _VHDL_LIBRARY.fullmatch(f.logical_name):  # written into Tcl as it is: an identifier only
                    raise FlowError(f"{getattr(f, 'core', '') or path}: logical_name {f.logical_name!r} of {path.name} "
                                    f"is not a VHDL library name (a letter, then letters, digits or _); rename it")
                entry["logical_name"] = f.logical_name
            if f.is_include_file:
                entry.update(is_include_file=True, include_path=str(path.parent))
            out["edalize"].append(entry)
            seen_xdc |= base in ("xdc", "SDC") and path.resolve() == Path(design.constraints).resolve()
        elif f.file_type == "xci":
            spec = ip_source.read_xci(path)
            problem = ip_cache.version_problem(spec, running, design.vivado.ip_upgrade)
            if problem:  # said in the core's file order, before any block design's
                raise FlowError(problem)
            out["ip"].append(spec)
        elif f.file_type == "bd":
            m = _BD_FILE_VERSION.search(path.read_text(errors="replace")[:4096])
            made = m and (m.group(1) or m.group(2))
            if made and not running.startswith(made):
                raise _version_mismatch(path, made, running, "block design")
            out["bd_files"].append(path)
        elif f.file_type == "tclSource":
            if ip_source.is_ip_tcl(path):
                out["ip"].extend(ip_source.read_ip_tcl(path))
                continue
            text = path.read_text(errors="replace")
            m = _BD_SCRIPT_VERSION.search(text)
            if m and not running.startswith(m.group(1)):
                raise _version_mismatch(path, m.group(1), running, "block-design script (write_bd_tcl)")
            if "create_bd_design" in text:  # sourced by kabe's block-design step, which checks how it ended
                name = _BD_SCRIPT_NAME.search(text)
                out["bd_scripts"].append((path, name.group(1) if name else None))
            else:
                out["tcl"].append(path)
        else:
            out["ignored"].append(f"{path} ({f.file_type})")
    if not seen_xdc:  # design.yaml's constraints: the design's pins and clocks, read like the core's own XDC
        out["edalize"].append({"name": str(design.constraints), "file_type": "xdc"})
    return out


def _hooks(design, dispatcher: Path, image_step: str) -> list[tuple[str, str, str, Path]]:
    """(run, STEP, PRE|POST, file) of every hook: kabe's dispatcher before the image step, the design's (on
    Versal a write_bitstream hook is the device image step's: that is the step that writes its image)."""
    return [("impl_1", image_step, "PRE", dispatcher),
            *((run, image_step if step == "WRITE_BITSTREAM" else step, when, f)
              for run, step, when, f in design_hooks(design))]


def generate(design, work_root: Path, *, edam, flow_settings: dict[str, Any], commit: provenance.Commit,
             version, run_ip_batch: Callable[[Path], None], say: Callable[[str], None] = print) -> Project:
    """The project for the design's own top: IP from the cache (generating misses with run_ip_batch),
    kabe's settings and hooks, edalize's Makefile + project Tcl, checked. Runs Vivado only for IP misses."""
    from edalize.flows.vivado import Vivado as EdalizeVivado

    fs = flow_settings
    confine_root = safe_fs.default_root(work_root, else_parent=True)
    work_root = safe_fs.confined(work_root, confine_root)
    safe_fs.remove_tree(work_root, confine_root)
    safe_fs.make_dirs(work_root, confine_root)
    report_dir = work_root / "reports"
    report_dir.mkdir()
    hwh_dir = work_root / "hwh"
    hwh_dir.mkdir()

    parts = classify(edam, design, version.short)
    for what in parts["ignored"]:  # said, so that a file left out is never a surprise
        say(f"not given to Vivado: {what} (a file type the Vivado flow does not read)")
    # Vivado writes into a block design's folder (save_bd_design, its generated products): it reads a copy
    # in the build folder, so a build never edits the checkout (the next build would be a dirty one)
    bd_copies = []
    for bd in parts["bd_files"]:
        dest = work_root / "bd" / bd.stem
        shutil.copytree(bd.parent, dest, ignore=shutil.ignore_patterns(".git"), copy_function=shutil.copyfile)
        for p in (dest, *dest.rglob("*")):  # a read-only checkout's modes are not the copy's: Vivado writes it
            p.chmod(p.stat().st_mode | 0o200)
        bd_copies.append(dest / bd.name)
    part = design.board.part
    target = ip_cache.IpTarget(part, version.line, version.short, work_root, upgrade=design.vivado.ip_upgrade)
    units = ip_cache.prepare(parts["ip"], target, generate=run_ip_batch, say=say)
    (work_root / "ip_cache.json").write_text(json.dumps(
        [{"name": u.spec.name, "vlnv": u.spec.vlnv, "source": str(u.spec.source), "kind": u.spec.kind,
          "key": u.key, "hit": u.hit} for u in units], indent=1) + "\n")

    name = f"kabe_{design.name}"
    top = edam.toplevel
    has_ps = design.board.family in PS_FAMILIES or part.lower().startswith(PS_PARTS)
    is_versal = design.board.is_versal  # its image is a .pdi, written by impl_1's write_device_image step
    image_step = versal.IMAGE_STEP if is_versal else "WRITE_BITSTREAM"
    settings_file = work_root / "kabe_settings.tcl"
    dispatcher = work_root / f"kabe_hooks_{image_step.lower()}_pre.tcl"
    hooks = _hooks(design, dispatcher, image_step)
    strategies = {k: fs.get(f"vivado_{k}", "") for k in STRATEGY_KEYS}
    word = usr_access_word(commit)
    values = {
        "design": design.name, "project": name, "part": part, "top": top, "family": design.board.family,
        "report_dir": report_dir, "timing_max_paths": TIMING_MAX_PATHS,
        "commit": commit.sha, "dirty": int(commit.dirty), "usr_access": f"0x{word:08X}",
        "vivado_version": fs["vivado_version"], "vivado_version_mismatch": fs["vivado_version_mismatch"],
        **strategies,
        "image_step": image_step, "hook_image_pre": dispatcher,
        "jobs": design.vivado.jobs or fs["vivado_jobs"], "pdi_dest": work_root / f"{name}.pdi",
        "ips": [(u.spec.name, u.xci) for u in units],
        "bd_files": bd_copies,
        "bd_scripts": [p for p, _ in parts["bd_scripts"]],
        "bd_names": [n for _, n in parts["bd_scripts"] if n],
        "bd_ip_cache": ip_cache.block_design_cache(part, version.line),
        "hwh_dir": hwh_dir, "hwh_dest": work_root / f"{name}.hwh",
        "hooks": [(run, step, when, f) for run, step, when, f in hooks],
        "xsa_dest": work_root / f"{name}.xsa",
    }
    settings_file.write_text(settings_tcl(values))
    dispatcher.write_text(hook_dispatcher(settings_file, (*own_image_pre_hook(design),
                                                         *(HOOK_DIR / f"{h}.tcl" for h in OWN_REPORT_HOOKS)),
                                          image_step))
    export_xsa = work_root / "kabe_export_xsa.tcl"
    if has_ps:
        export_xsa.write_text(f"# Generated by kabe.flows.vivado.own_top: edalize's post_build hook.\n"
                              f"source {{{settings_file}}}\nsource {{{HOOK_DIR / EXPORT_XSA_TCL}}}\n")

    files = list(parts["edalize"])
    kabe_first = [settings_file, TCL_DIR / "check_vivado_version.tcl", TCL_DIR / "own_read_ips.tcl"]
    kabe_last = [TCL_DIR / "own_block_designs.tcl", TCL_DIR / "own_attach_hooks.tcl", TCL_DIR / STRATEGY_TCL]
    tcl = [*kabe_first, *parts["tcl"], *kabe_last]
    files += [{"name": str(t), "file_type": "tclSource"} for t in tcl]
    vlogparams = {k: v for k, v in edam.parameters.items()
                  if (edam.parameter_specs.get(k) or {}).get("paramtype") == "vlogparam" and v is not None}
    generics = {k: v for k, v in edam.parameters.items()
                if (edam.parameter_specs.get(k) or {}).get("paramtype") == "generic" and v is not None}
    params = {k: {"datatype": (edam.parameter_specs.get(k) or {}).get("datatype", "str"), "paramtype": pt,
                  "default": v} for pt, d in (("vlogparam", vlogparams), ("generic", generics)) for k, v in d.items()}
    edam_out = {"name": name, "toplevel": top, "files": files, "parameters": params,
                "flow_options": {"part": part, "jobs": design.vivado.jobs or fs["vivado_jobs"]}}
    if has_ps:
        edam_out["hooks"] = {"post_build": [{"name": f"{name}.xsa", "cmd": [
            "vivado", "-notrace", "-mode", "batch", "-source", export_xsa.name, f"{name}.xpr"]}]}
    try:
        flow = EdalizeVivado(edam_out, str(work_root))
        flow.configure()
    except (RuntimeError, ValueError, KeyError) as e:
        raise FlowError(f"edalize could not generate the Vivado project in {work_root}: {e}") from None
    run_tcl = work_root / f"{name}_run.tcl"
    if is_versal:  # edalize's run Tcl launches write_bitstream, which a Versal run does not have
        if not run_tcl.is_file():
            raise FlowError(f"edalize wrote no {run_tcl}")
        run_tcl.write_text(f"# Written by kabe.flows.vivado.own_top in place of edalize's run Tcl (Versal: impl_1 "
                           f"-to_step write_device_image).\nsource {{{settings_file}}}\n"
                           f"source {{{TCL_DIR / VERSAL_RUN_TCL}}}\n")

    images = {"pdi": work_root / f"{name}.pdi"} if is_versal else {"bit": work_root / f"{name}.bit"}
    if has_ps:
        images["xsa"] = work_root / f"{name}.xsa"
    if parts["bd_files"] or parts["bd_scripts"]:
        images["hwh"] = work_root / f"{name}.hwh"
    user_files = [f for when in design.vivado.hooks.values() for f in when.values()]
    project = Project(name=name, work_root=work_root, report_dir=report_dir, bit=work_root / f"{name}.bit",
                      hwh=work_root / f"{name}.hwh", settings_tcl=settings_file, hook_tcl=dispatcher,
                      wrapper=settings_file, edam=edam_out, clock_name=None, clock_period_ns=None,
                      inputs=tuple(dict.fromkeys([*edam.input_files, *user_files, *tcl[1:],
                                                  *(p for p, _ in parts["bd_scripts"]), design.constraints,
                                                  *((TCL_DIR / VERSAL_RUN_TCL,) if is_versal else ())])),
                      cells=None, part=part, images=images, bd_wrapper=top, family=design.board.family)
    check_generated(project, [str(t) for t in tcl], has_ps)
    return project


VERSAL_RUN_TCL = "own_versal_run.tcl"


def check_generated(project: Project, tcl: list[str], has_ps: bool) -> None:
    """edalize's project Tcl sets the design's top, sources kabe's and the design's Tcl in order, and reads no
    IP itself (its read_ip would be followed by upgrade_ip)."""
    where = project.project_tcl
    if not where.is_file() or not project.makefile.is_file():
        raise FlowError(f"edalize wrote no {where.name} / Makefile in {project.work_root}")
    text = where.read_text()
    tops = re.findall(r"^set_property top (\S+) \[current_fileset\]", text, re.M)
    if tops != [project.bd_wrapper]:
        raise FlowError(f"{where}: top is {tops or 'not set'}, expected {project.bd_wrapper} (the core's toplevel)")
    sourced = re.findall(r"^source \{(.+?)\}", text, re.M)
    if sourced != tcl:
        raise FlowError(f"{where}: sources {sourced}, expected {tcl} in that order")
    if re.search(r"^(read_ip|upgrade_ip)\b", text, re.M):
        raise FlowError(f"{where}: edalize reads or upgrades IP itself; kabe reads IP from its cache only")
    mk = project.makefile.read_text()
    if f"{project.name}.bit" not in mk:  # edalize's name for its image target (a .pdi on Versal: its run Tcl)
        raise FlowError(f"{project.makefile}: no target {project.name}.bit")
    run_tcl = project.work_root / f"{project.name}_run.tcl"
    if project.family == "versal":
        text = run_tcl.read_text() if run_tcl.is_file() else ""
        if f"source {{{TCL_DIR / VERSAL_RUN_TCL}}}" not in text or "write_bitstream" in text:
            raise FlowError(f"{run_tcl}: not kabe's Versal run Tcl (it must source tcl/{VERSAL_RUN_TCL} and never "
                            f"launch write_bitstream)")
    if has_ps and f"{project.name}.xsa:" not in mk:
        raise FlowError(f"{project.makefile}: no target {project.name}.xsa (the .xsa export after the bitstream)")
