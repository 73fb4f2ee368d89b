"""A small V80 design for kabe's tests (STAND-IN engine, not one of kabe's cores): two 256-bit
channels, each input beat's low 32 bits passed on as its result, status outputs as kabe's engines
have them; `board: v80`. Enough for the V80 block design (its ports are what the wrapper and the DMAs
are built from) and for a V80 archive to deploy; the numbers in its reports are the Vivado stand-in's.

    design = v80_probe.make(tmp_path)   # <tmp>/v80_probe/design.yaml loaded as a kabe Design
"""

from __future__ import annotations

from pathlib import Path

PORTS = 2

ENGINE = """\
module v80_probe_top #(parameter ROW_BYTES = 512) (
  input  wire clk, input wire rst,
{ports}
);
{body}
endmodule
"""


def _engine_verilog(nports: int = PORTS) -> str:
    ports, body = [], []
    for p in range(nports):
        ports += [f"  input  wire [255:0] s{p}_axis_tdata, input wire s{p}_axis_tvalid, output wire s{p}_axis_tready,",
                  f"  input  wire s{p}_axis_tlast,",
                  f"  output reg  [31:0] m{p}_axis_tdata, output reg m{p}_axis_tvalid, input wire m{p}_axis_tready,",
                  f"  output reg  m{p}_axis_tlast,",
                  f"  output wire [31:0] stat{p}_invalid, output wire stat{p}_overflow" + ("," if p < nports - 1 else "")]
        body += [f"  assign s{p}_axis_tready = m{p}_axis_tready;",
                 f"  assign stat{p}_invalid = 32'd0;", f"  assign stat{p}_overflow = 1'b0;",
                 f"  always @(posedge clk) begin m{p}_axis_tvalid <= s{p}_axis_tvalid & ~rst; "
                 f"m{p}_axis_tdata <= s{p}_axis_tdata[31:0]; m{p}_axis_tlast <= s{p}_axis_tlast; end"]
    return ENGINE.format(ports="\n".join(ports), body="\n".join(body))


def _design_yaml(nports: int = PORTS) -> str:
    ins = ", ".join(f"s{p}_axis: 256" for p in range(nports))
    outs = ", ".join(f"m{p}_axis: 32" for p in range(nports))
    stats = ", ".join(f"stat{p}_invalid: 32, stat{p}_overflow: 1" for p in range(nports))
    return (f"core: kabe:test:v80_probe:0.1.0\nboard: v80\nverify: {{none: \"a stand-in engine for the V80 "
            f"flow's tests\"}}\nstreams:\n  in: {{{ins}}}\n  out: {{{outs}}}\n  status: {{{stats}}}\n"
            f"ports: {nports}\nrow_bytes: 512\nconstraints: v80_probe.xdc\nbudgets: {{lut: {{lt: 100000}}}}\n")


def make(root: Path, ports: int = PORTS):
    """<root>/v80_probe/: design.yaml, core file, RTL, XDC (400 MHz), `ports` channels; returns the loaded Design."""
    from kabe.project import designs

    d = Path(root) / "v80_probe"
    d.mkdir(parents=True, exist_ok=True)
    (d / "v80_probe_top.v").write_text(_engine_verilog(ports))
    (d / "v80_probe.core").write_text(
        "CAPI=2:\nname: kabe:test:v80_probe:0.1.0\nfilesets:\n  rtl:\n    files: [v80_probe_top.v]\n"
        "    file_type: verilogSource\ntargets:\n  default: &default\n    filesets: [rtl]\n    toplevel: v80_probe_top\n"
        "  synth:\n    <<: *default\n    flow: generic\n    flow_options:\n      tool: yosys\n      arch: xilinx\n"
        "      output_format: json\n      yosys_synth_options: [-family, xcup]\n")
    (d / "v80_probe.xdc").write_text("create_clock -period 2.500 -name clk_engine [get_ports clk]\n")
    (d / "design.yaml").write_text(_design_yaml(ports))
    return designs.load(d / "design.yaml")

