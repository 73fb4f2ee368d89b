"""The port contract is checked before anything compiles (issue 23): a top that lacks a port the
harness binds, or has it at another width or direction, is one line naming the port, the expected
and the found width and docs/streams.md, exit 2, with no Verilator C++ build started. Real Verilator
(its --json-only front end, a fraction of a second); the broken designs live in temporary folders
and a project made from kabe's templates (tests/template_project.py), never in cores/."""

from __future__ import annotations

from kabe.project.design_context import DesignContext
import textwrap
import types
from pathlib import Path

import pytest

import template_project
from kabe.project import designs
from kabe.base.errors import UserError
from kabe.sim import port_contract, verilator_build

# Every port of the contract for one probe port, as the generated tops declare them.
PORTS = {
    "clk": "input  wire        clk", "rst": "input  wire        rst",
    "s0_axis_tdata": "input  wire [63:0] s0_axis_tdata", "s0_axis_tvalid": "input  wire        s0_axis_tvalid",
    "s0_axis_tready": "output wire        s0_axis_tready", "s0_axis_tlast": "input  wire        s0_axis_tlast",
    "m0_axis_tdata": "output wire [63:0] m0_axis_tdata", "m0_axis_tvalid": "output wire        m0_axis_tvalid",
    "m0_axis_tready": "input  wire        m0_axis_tready", "m0_axis_tlast": "output wire        m0_axis_tlast",
    "stat0_invalid": "output wire [31:0] stat0_invalid", "stat0_overflow": "output wire        stat0_overflow",
}


def top_verilog(name: str, drop: str = "", replace: dict[str, str] | None = None) -> str:
    ports = {**PORTS, **(replace or {})}
    decls = [d for p, d in ports.items() if p != drop]
    outs = [p for p, d in ports.items() if p != drop and d.lstrip().startswith("output")]
    assigns = "\n".join(f"  assign {p} = 0;" for p in outs)
    return f"module {name} (\n  " + ",\n  ".join(decls) + f"\n);\n{assigns}\nendmodule\n"


def write_design(cores: Path, name: str, verilog: str, model: str = "llm_accel.model.frames:probe_stimulus") -> Path:
    """cores/<name>/: design.yaml, a core file with a hand-written top (no generator) and its sim target."""
    d = cores / name
    d.mkdir(parents=True)
    (d / "top.v").write_text(verilog)
    (d / f"{name}.core").write_text(textwrap.dedent(f"""\
        CAPI=2:
        name: test:design:{name}:0.1.0
        filesets:
          rtl:
            files: [top.v]
            file_type: verilogSource
        targets:
          default: &default
            filesets: [rtl]
            toplevel: {name}_top
          sim:
            <<: *default
            flow: sim
            flow_options:
              tool: verilator
              mode: cc
        """))
    (d / "design.yaml").write_text(f'core: test:design:{name}:0.1.0\nverify: {{model: "{model}"}}\n'
                                   f"streams: {{in: {{s0_axis: 64}}, out: {{m0_axis: 64}}, "
                                   f"status: {{stat0_invalid: 32, stat0_overflow: 1}}}}\nports: 1\n")
    return d / "design.yaml"


def verilator_argv(src: Path, top: str, *extra: str) -> list[str]:
    return [str(verilator_build.verilator_root() / "bin" / "verilator"), "-Wno-fatal", "--top-module", top,
            *extra, str(src)]


ONE_PROBE = designs.Streams({"s0_axis": 64}, {"m0_axis": 64}, {"stat0_invalid": 32, "stat0_overflow": 1})


def test_declared_streams_are_the_contract():
    s = designs.Streams({"s_axis": 32}, {"m_axis": 512}, {"count": 16})
    assert port_contract.expected_ports(s) == {
        "clk": ("input", 1), "rst": ("input", 1), "s_axis_tdata": ("input", 32), "s_axis_tvalid": ("input", 1),
        "s_axis_tready": ("output", 1), "s_axis_tlast": ("input", 1), "m_axis_tdata": ("output", 512),
        "m_axis_tvalid": ("output", 1), "m_axis_tready": ("input", 1), "m_axis_tlast": ("output", 1),
        "count": ("output", 16)}


def test_verilators_view_of_widths_directions_parameters_and_typedefs(tmp_path):
    src = tmp_path / "t.sv"
    src.write_text(textwrap.dedent("""\
        typedef logic [3:0] nib_t;
        module t #(parameter W = 8) (input wire clk, input wire [W-1:0] a, output logic [1:0][7:0] b,
                                     output nib_t n, input wire [0:5] asc, inout wire io, output real r);
          assign b = {a[7:0], a[7:0]}; assign n = a[3:0]; assign r = 0.0;
        endmodule
        """))
    ports = port_contract.read_ports(verilator_argv(src, "t", "-GW=32"), "t", verilator_build._env())
    assert ports == {"clk": ("input", 1), "a": ("input", 32), "b": ("output", 16), "n": ("output", 4),
                     "asc": ("input", 6), "io": ("inout", 1), "r": ("output", None)}


def test_a_design_verilator_cannot_read_is_left_to_the_build(tmp_path):
    src = tmp_path / "t.v"
    src.write_text("module t(input wire clk); this is not verilog (\nendmodule\n")
    assert port_contract.read_ports(verilator_argv(src, "t"), "t", verilator_build._env()) is None


@pytest.mark.parametrize("drop, replace, line", [
    ("m0_axis_tvalid", None, "m0_axis_tvalid is missing (expected a 1-bit output)"),
    ("", {"s0_axis_tdata": "input wire [31:0] s0_axis_tdata"}, "s0_axis_tdata is 32 bits, expected 64"),
    ("", {"m0_axis_tdata": "output wire [31:0] m0_axis_tdata"}, "m0_axis_tdata is 32 bits, expected 64"),
    ("", {"m0_axis_tready": "output wire m0_axis_tready"}, "m0_axis_tready is an output, expected an input"),
])
def test_what_is_off_the_contract_is_named(tmp_path, drop, replace, line):
    src = tmp_path / "t.v"
    src.write_text(top_verilog("t", drop, replace))
    found = port_contract.read_ports(verilator_argv(src, "t"), "t", verilator_build._env())
    assert port_contract.problems(found, port_contract.expected_ports(ONE_PROBE)) == [line]


def test_the_generated_tops_of_every_design_keep_the_contract(tmp_path):
    """All six designs pass the check as they build today (the check runs inside every sim build)."""
    from kabe.project import cores

    for name, d in designs.all_designs().items():
        if d.hls is not None:  # an HLS kernel's ports are its C++ top's (the C-simulation calls it: test_csim)
            continue
        edam = cores.resolve(d, "sim")
        values = {k: v for k, v in edam.parameters.items() if v is not None
                  and edam.parameter_specs.get(k, {}).get("paramtype", "vlogparam") == "vlogparam"}
        argv = [str(verilator_build.verilator_root() / "bin" / "verilator"), "-Wno-fatal", "-Wno-lint",
                "--top-module", edam.toplevel, *[f"-I{p}" for p in edam.include_dirs],
                *[verilator_build._param_arg(k, v, {}) for k, v in values.items()], *map(str, edam.sources)]
        found = port_contract.read_ports(argv, edam.toplevel, verilator_build._env())
        assert found is not None, name
        assert port_contract.problems(found, port_contract.expected_ports(d.streams)) == [], name


def test_the_build_refuses_before_verilating(tmp_path, monkeypatch):
    """verilator_build.build says the one line and never starts Verilator's C++ build or make."""
    d = designs.load(write_design(tmp_path / "cores", "noport", top_verilog("noport_top", "m0_axis_tvalid")))
    ran = []
    monkeypatch.setattr(verilator_build, "_run", lambda argv, cwd: ran.append(argv))
    with pytest.raises(verilator_build.PortContractError) as e:
        verilator_build.build(DesignContext(designs.get(d)), build_root=tmp_path / "build")
    assert isinstance(e.value, UserError) and isinstance(e.value, verilator_build.SimBuildError)
    msg = str(e.value)
    assert msg == ('top noport_top of design noport breaks the port contract (docs/streams.md, "Top-level ports"; '
                   "design.yaml's streams: s0_axis 64, m0_axis 64 bits): m0_axis_tvalid is missing (expected a 1-bit output)")
    assert ran == [] and not list((tmp_path / "build").rglob("obj"))


def test_doit_sim_exits_2_with_one_line(tmp_path):
    """The acceptance as a user meets it: `doit sim:<design>` in a project whose design's top lacks
    m0_axis_tvalid exits 2 with one line naming it; no Verilator build folder was made."""
    copy = template_project.make(tmp_path / "project")  # a project of its own, not a copy of this one
    (copy / "echo_model.py").write_text(  # the project's own model: one beat in, the same beat out
        "import numpy as np\nfrom kabe.verify import Stimulus\n\n\ndef stimulus(seed, size, context):\n"
        "    a = np.arange(size or 8, dtype=np.uint64)\n"
        "    return Stimulus(inputs={'s0_axis': a}, expected={'m0_axis': a}, status={'stat0_invalid': 0, 'stat0_overflow': 0})\n")
    y = write_design(copy / "cores", "noport", top_verilog("noport_top", "m0_axis_tvalid"), model="echo_model:stimulus")
    (y.parent / "noport.xdc").write_text("create_clock -period 7.000 -name clk [get_ports clk]\n")
    y.write_text(y.read_text() + "constraints: noport.xdc\n")
    rc, out = template_project.run(copy, "doit", "sim:noport", "rows=8", timeout=600)
    assert rc == 2, out
    lines = [ln for ln in out.splitlines() if "m0_axis_tvalid" in ln]
    assert len(lines) == 1 and "m0_axis_tvalid is missing (expected a 1-bit output)" in lines[0], out
    assert "docs/streams.md" in lines[0] and "Traceback" not in out and "error:" not in out
    assert not (copy / "build" / "sim" / "noport").exists()  # refused before the harness build's folder


def test_outputs_in_no_stream_or_status_are_named_as_not_checked(tmp_path):
    """A second output stream and a counter the design.yaml does not declare (red team 3b, repro 15):
    not a contract break (a debug port may be meant), but named, so a PASS does not hide them."""
    src = tmp_path / "t.v"
    extra = {"m2_axis_tdata": "output wire [7:0] m2_axis_tdata", "m2_axis_tready": "input wire m2_axis_tready",
             "beats_seen": "output wire [31:0] beats_seen", "dbg_io": "inout wire dbg_io"}
    src.write_text(top_verilog("t", "", extra))
    d = types.SimpleNamespace(name="t", streams=ONE_PROBE)  # check() reads only these of a design
    broken, not_checked = port_contract.check(d, "t", verilator_argv(src, "t"), verilator_build._env())
    assert broken is None
    assert not_checked == ["m2_axis_tdata", "beats_seen", "dbg_io"]  # in declaration order; inputs are not outputs
    found = port_contract.read_ports(verilator_argv(src, "t"), "t", verilator_build._env())
    assert port_contract.unchecked(found, port_contract.expected_ports(ONE_PROBE)) == not_checked


def test_a_clock_named_otherwise_is_named_with_the_fix():
    """A top with AXI's aclk and no create_clock on it was told only "clk is missing" (red team 3b): the
    message names the port it has and the XDC line that makes it the harness's clock (issue 38: the harness
    drives the XDC's clock port; resets are found by name, kabe.sim.clocking, tests/sim/test_clocking.py)."""
    found = {"aclk": ("input", 1), "aresetn": ("input", 1), "s_axis_tdata": ("input", 8)}
    (clk,) = port_contract.problems(found, {"clk": ("input", 1)})
    assert clk.startswith("clk is missing (expected a 1-bit input); the top has aclk: kabe's harness drives the clock "
                          "port the XDC's create_clock names, else an input named clk, so constrain it "
                          "(`create_clock -period <ns> [get_ports aclk]`")
    assert port_contract.problems({"x": ("input", 1)}, {"clk": ("input", 1)}) == ["clk is missing (expected a 1-bit input)"]
