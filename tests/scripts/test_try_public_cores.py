"""scripts/try_public_cores.py, the zoo of public cores (issue 38 item 7): its list parses and pins every
source to a commit, bad lists are refused with one line, the COBS model matches the published
examples, and the whole script runs one tiny core from a fixture repository made here (a wheel, a
fresh project, doit build, kabe ci, the table) with the backpressure evidence in its row."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
for p in (REPO_ROOT / "scripts", REPO_ROOT / "scripts" / "public_cores"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

import try_public_cores as zoo  # noqa: E402
import zoo_models  # noqa: E402

pytestmark = pytest.mark.e2e  # end to end: real tools, minutes (the fast tier leaves it out: -m 'not e2e')


def test_the_list_parses_and_pins_every_core_to_a_commit():
    sources, cores = zoo.load_list()
    assert len(cores) >= 15
    for name, s in sources.items():
        assert zoo.SHA.match(s["commit"]), name
    for c in cores:
        assert c["source"] in sources and c["top"], c["name"]
    roles = {c["role"] for c in cores}
    assert {"fifo", "register"} <= roles
    kinds = {next(iter(c["verify"])) for c in cores}
    assert {"model", "cocotb", "none"} <= kinds
    assert any(c.get("mutant") for c in cores)


@pytest.mark.parametrize("change, said", [
    ("commit: 48ff7a7e2ef782cf778d47910cf85835c64b1bce", None),
    ("commit: main", "commit must be a full 40-hex commit"),
    ("commit: 48ff7a7e", "commit must be a full 40-hex commit"),
])
def test_a_source_without_an_exact_commit_is_refused(tmp_path, change, said):
    lst = tmp_path / "cores.yaml"
    lst.write_text(textwrap.dedent(f"""\
        sources:
          axis: {{repo: alexforencich/verilog-axis, {change}}}
        cores:
          - {{name: f, source: axis, files: [rtl/axis_fifo.v], top: axis_fifo, role: fifo,
              verify: {{model: passthrough}}, streams: {{in: {{s_axis: 8}}, out: {{m_axis: 8}}}}}}
        """))
    if said is None:
        assert len(zoo.load_list(lst)[1]) == 1
        return
    with pytest.raises(zoo.ListError, match=said):
        zoo.load_list(lst)
    p = subprocess.run([sys.executable, str(REPO_ROOT / "scripts" / "try_public_cores.py"), "--list", str(lst)],
                       capture_output=True, text=True)
    assert p.returncode == 2 and said in p.stderr and "Traceback" not in p.stderr


@pytest.mark.parametrize("entry, said", [
    ("verify: {model: no_such_model}, streams: {in: {s_axis: 8}, out: {m_axis: 8}}", "has no function no_such_model"),
    ("verify: {cocotb: test_nothing}", "no testbench"),
    ("verify: {model: passthrough}", "a golden model needs streams"),
    ("verify: {none: why}, depth: 3", "unknown key(s) depth"),
])
def test_a_core_entry_kabe_could_not_build_is_refused(tmp_path, entry, said):
    lst = tmp_path / "cores.yaml"
    lst.write_text("sources:\n  a: {repo: o/r, commit: " + "a" * 40 + "}\ncores:\n"
                   f"  - {{name: x, source: a, files: [x.v], top: x, role: core, {entry}}}\n")
    with pytest.raises(zoo.ListError, match=said.replace("(", r"\(").replace(")", r"\)")):
        zoo.load_list(lst)


def test_cobs_is_the_published_encoding():
    # Cheshire and Baker's examples (as on Wikipedia), without the trailing delimiter
    assert zoo_models.cobs(b"\x00") == b"\x01\x01"
    assert zoo_models.cobs(b"\x00\x00") == b"\x01\x01\x01"
    assert zoo_models.cobs(b"\x11\x22\x00\x33") == b"\x03\x11\x22\x02\x33"
    assert zoo_models.cobs(b"\x11\x00\x00\x00") == b"\x02\x11\x01\x01\x01"
    run = bytes(range(1, 255))
    assert zoo_models.cobs(run) == b"\xff" + run
    assert zoo_models.cobs(b"\x00" + run) == b"\x01\xff" + run
    assert zoo_models.cobs(bytes(range(1, 256))) == b"\xff" + run + b"\x02\xff"
    assert zoo_models.cobs(bytes(range(2, 256)) + b"\x00") == b"\xff" + bytes(range(2, 256)) + b"\x01\x01"


# A register slice of our own, in a git repository of its own: the script's whole path on one tiny core.
SLICE = """\
module tiny_slice (
  input  wire       clk, rst,
  input  wire [7:0] s_axis_tdata, input wire s_axis_tvalid, output wire s_axis_tready, input wire s_axis_tlast,
  output reg  [7:0] m_axis_tdata, output reg m_axis_tvalid, input wire m_axis_tready, output reg m_axis_tlast
);
  assign s_axis_tready = !m_axis_tvalid || m_axis_tready;
  always @(posedge clk) begin
    if (s_axis_tready) begin
      m_axis_tvalid <= s_axis_tvalid;
      m_axis_tdata <= s_axis_tdata;
      m_axis_tlast <= s_axis_tlast;
    end
    if (rst) m_axis_tvalid <= 1'b0;
  end
endmodule
"""


def test_the_script_runs_one_core_from_a_local_repository(tmp_path):
    src = tmp_path / "tiny"
    src.mkdir()
    (src / "tiny_slice.v").write_text(SLICE)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t.invalid", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", "init", "-q", "-b", "main", str(src)], check=True)
    subprocess.run([*git, "-C", str(src), "add", "-A"], check=True)
    subprocess.run([*git, "-C", str(src), "commit", "-qm", "a slice"], check=True)
    sha = subprocess.run(["git", "-C", str(src), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    lst = tmp_path / "cores.yaml"
    lst.write_text(textwrap.dedent(f"""\
        sources:
          tiny: {{repo: example/tiny, commit: {sha}}}
        cores:
          - name: tiny_slice
            source: tiny
            files: [tiny_slice.v]
            top: tiny_slice
            verify: {{model: passthrough}}
            streams: {{in: {{s_axis: 8}}, out: {{m_axis: 8}}}}
            role: register
        """))
    md = tmp_path / "table.md"
    p = subprocess.run([sys.executable, str(REPO_ROOT / "scripts" / "try_public_cores.py"), "--list", str(lst),
                        "--source", f"tiny={src}", "--work", str(tmp_path / "work"), "--working-tree",
                        "--markdown", str(md)], capture_output=True, text=True, timeout=1200)
    out = p.stdout + p.stderr
    assert p.returncode == 0, out[-4000:]
    row = next(ln for ln in md.read_text().splitlines() if ln.startswith("| tiny_slice "))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1] == f"example/tiny@{sha[:12]}"
    assert cells[4] == "pass 4000 beats, 0 mismatches" and cells[5] == "PASS"
    assert cells[7] == "0" and cells[8] == "0"  # doit build, kabe ci
    waited = int(cells[9].split("input waited ")[1].split(",")[0])
    assert waited > 0, cells[9]  # the harness's backpressure reached the slice's input
    assert "1 with every expectation met" in md.read_text()
