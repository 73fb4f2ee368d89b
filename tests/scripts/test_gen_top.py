"""kabe/generators/gen_top.py (package data): the generated top's structure (the port contract of docs/streams.md, one
engine per port, parameters passed through), its refusals, both entry points, and every repository
design's core describing its top consistently with its design.yaml.

That the generated tops behave exactly as the hand-written ones did is shown elsewhere: the top
benches in tests/rtl/ simulate them through FuseSoC, and the open-flow metrics are unchanged.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO_ROOT = Path(__file__).resolve().parents[2]
SCRIPT = REPO_ROOT / "kabe" / "generators" / "gen_top.py"
CORES = REPO_ROOT / "cores"
if str(SCRIPT.parent) not in sys.path:
    sys.path.insert(0, str(SCRIPT.parent))

import fusesoc_generator  # noqa: E402
import gen_top as gen  # noqa: E402

TERNARY = gen.TopSpec(name="kabe_x_top", engine="kabe_ternary_engine", ports=2,
                      top_parameters={"ROW_BYTES": 512, "FIFO_DEPTH": 32, "LATENCY_ADJUST": 0})
PROBE = gen.TopSpec(name="kabe_p_top", engine="kabe_probe", ports=1, m_width=64, overflow_port="status_overflow",
                    invalid_port="none", top_parameters={"FIFO_DEPTH": 16})
NAIVE = gen.TopSpec(name="kabe_n_top", engine="kabe_int8_engine", ports=1, overflow_port="status_overflow",
                    invalid_port="none", top_parameters={"ROW_BYTES": 512, "FIFO_DEPTH": 32},
                    engine_constants={"NAIVE": 1})


def _strip_comments(text: str) -> str:
    return re.sub(r"//[^\n]*", "", text)


def module_ports(text: str, name: str) -> dict[str, tuple[str, int]]:
    """name -> (direction, width) from the ANSI port list of `module name`."""
    m = re.search(rf"\bmodule\s+{name}\b\s*(?:#\s*\((?P<params>.*?)\)\s*)?\((?P<ports>.*?)\);", _strip_comments(text), re.S)
    assert m, f"no module {name}"
    ports = {}
    for decl in m.group("ports").split(","):
        pm = re.fullmatch(r"\s*(input|output)\s+wire\s+(?:\[(\d+):0\]\s+)?(\w+)\s*", decl)
        assert pm, f"unexpected port declaration {decl!r}"
        ports[pm.group(3)] = (pm.group(1), int(pm.group(2)) + 1 if pm.group(2) else 1)
    return ports


def module_parameters(text: str, name: str) -> dict[str, int]:
    m = re.search(rf"\bmodule\s+{name}\b\s*#\s*\((.*?)\)\s*\(", _strip_comments(text), re.S)
    return {k: int(v) for k, v in re.findall(r"parameter\s+(\w+)\s*=\s*(-?\d+)", m.group(1))} if m else {}


def instances(text: str, engine: str) -> dict[str, tuple[dict[str, str], dict[str, str]]]:
    """instance name -> (parameter connections, port connections) of every `engine` instance."""
    out = {}
    pattern = rf"^{engine}\b\s*(?:#\s*\((?P<params>.*?)\)\s*)?(?P<inst>\w+)\s*\((?P<conns>.*?)\);"
    for m in re.finditer(pattern, _strip_comments(text), re.S | re.M):
        pairs = lambda s: dict(re.findall(r"\.(\w+)\(([^()]*)\)", s or ""))  # noqa: E731
        out[m.group("inst")] = (pairs(m.group("params")), pairs(m.group("conns")))
    return out


def contract_ports(nports: int, m_width: int) -> dict[str, tuple[str, int]]:
    """docs/streams.md, "Top-level ports (every design)"."""
    ports = {"clk": ("input", 1), "rst": ("input", 1)}
    for p in range(nports):
        ports.update({
            f"s{p}_axis_tdata": ("input", 64), f"s{p}_axis_tvalid": ("input", 1),
            f"s{p}_axis_tready": ("output", 1), f"s{p}_axis_tlast": ("input", 1),
            f"m{p}_axis_tdata": ("output", m_width), f"m{p}_axis_tvalid": ("output", 1),
            f"m{p}_axis_tready": ("input", 1), f"m{p}_axis_tlast": ("output", 1),
            f"stat{p}_invalid": ("output", 32), f"stat{p}_overflow": ("output", 1),
        })
    return ports


@pytest.mark.parametrize("spec", [TERNARY, PROBE, NAIVE, gen.TopSpec("t4", "e", 4)], ids=lambda s: s.name)
def test_top_follows_the_port_contract(spec):
    text = gen.generate_verilog(spec)
    assert module_ports(text, spec.name) == contract_ports(spec.ports, spec.m_width)
    assert list(module_parameters(text, spec.name).items()) == list(spec.top_parameters.items())
    insts = instances(text, spec.engine)
    assert list(insts) == [f"port{p}_inst" for p in range(spec.ports)]
    for p, (params, conns) in enumerate(insts.values()):
        # every top parameter passed through by name, then the constants
        assert params == {**{k: k for k in spec.top_parameters}, **{k: str(v) for k, v in spec.engine_constants.items()}}
        want = {"clk": "clk", "rst": "rst"}
        want.update({f"{b}_axis_{s}": f"{b}{p}_axis_{s}" for b in "sm" for s in ("tdata", "tvalid", "tready", "tlast")})
        want[spec.overflow_port] = f"stat{p}_overflow"
        if spec.counts_invalid:
            want[spec.invalid_port] = f"stat{p}_invalid"
        assert conns == want, p
    for p in range(spec.ports):
        tie = f"assign stat{p}_invalid = 32'd0;"
        assert (tie in text) != spec.counts_invalid, "stat_invalid is either the engine's or tied to 0"


def test_header_marks_the_file_generated():
    text = gen.generate_verilog(TERNARY, "kabe:design:stage4-top:0.1.0")
    lines = text.splitlines()
    assert lines[0] == "// Generated by kabe/generators/gen_top.py for kabe:design:stage4-top:0.1.0; do not edit:"
    assert "core file" in lines[1]
    assert "kabe_x_top: 2 HP ports, one kabe_ternary_engine per port" in lines[2]
    assert "`default_nettype none" in lines and lines[-1] == "`resetall"
    assert text.count("module kabe_x_top") == 1 and text.count("endmodule") == 1


def test_parameter_order_and_constants():
    text = gen.generate_verilog(NAIVE)
    assert text.index("parameter ROW_BYTES = 512") < text.index("parameter FIFO_DEPTH = 32")
    params, _ = instances(text, "kabe_int8_engine")["port0_inst"]
    assert list(params.items()) == [("ROW_BYTES", "ROW_BYTES"), ("FIFO_DEPTH", "FIFO_DEPTH"), ("NAIVE", "1")]
    assert "parameter NAIVE" not in text, "a constant is fixed by the design, not a knob of the top"


def test_no_parameters_at_all():
    text = gen.generate_verilog(gen.TopSpec("bare_top", "bare_engine", 1))
    assert "module bare_top (" in text and "#(" not in text
    assert "bare_engine port0_inst (" in text


@pytest.mark.parametrize(
    "params,fragment",
    [
        ({"engine": "e", "ports": 1}, r"\['name'\] missing"),
        ({"name": "t", "engine": "e", "ports": 1, "port": 2}, r"unknown top-generator parameter\(s\) \['port'\]"),
        ({"name": "t", "engine": "e", "ports": 0}, r"ports is 0; give 1..64"),
        ({"name": "t", "engine": "e", "ports": 65}, r"ports is 65"),
        ({"name": "t", "engine": "e", "ports": 1, "s_width": 12}, r"s_width is 12; .*multiple of 8"),
        ({"name": "t", "engine": "e", "ports": 1, "s_width": 1024}, r"s_width is 1024"),
        ({"name": "t", "engine": "e", "ports": 1, "port_name": "a*/b"}, r"port_name is 'a\*/b'"),
        ({"name": "t", "engine": "e", "ports": "2"}, r"ports is '2'"),
        ({"name": "9t", "engine": "e", "ports": 1}, r"name is '9t'; it must be a Verilog identifier"),
        ({"name": "t", "engine": "t", "ports": 1}, r"cannot instantiate itself"),
        ({"name": "t", "engine": "e", "ports": 1, "m_width": 0}, r"m_width is 0"),
        ({"name": "t", "engine": "e", "ports": 1, "invalid_port": "a b"}, r"invalid_port is 'a b'"),
        ({"name": "t", "engine": "e", "ports": 1, "top_parameters": {"N": "big"}}, r"top_parameters N is 'big'; give an integer"),
        ({"name": "t", "engine": "e", "ports": 1, "top_parameters": [1]}, r"top_parameters must be a mapping"),
        ({"name": "t", "engine": "e", "ports": 1, "top_parameters": {"N": 1}, "engine_constants": {"N": 2}},
         r"N is both a top parameter and an engine constant"),
    ],
)
def test_bad_parameters_are_refused(params, fragment):
    with pytest.raises(ValueError, match=fragment):
        gen.spec_from_parameters(params)


FUSESOC_INPUT = """\
files_root: /somewhere/cores/stage3_naive
gapi: '1.0'
parameters:
  name: kabe_n_top
  engine: kabe_int8_engine
  ports: 1
  overflow_port: status_overflow
  invalid_port: none
  top_parameters:
    ROW_BYTES: 512
    FIFO_DEPTH: 32
  engine_constants:
    NAIVE: 1
vlnv: kabe:design:stage3_naive-top:0.1.0
"""


def test_fusesoc_generator_mode(tmp_path):
    """Called as FuseSoC does: `python3 gen_top.py <input.yml>` in the output directory."""
    cfg = tmp_path / "top_input.yml"
    cfg.write_text(FUSESOC_INPUT)
    result = subprocess.run([sys.executable, str(SCRIPT), str(cfg)], cwd=tmp_path, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "kabe_n_top.v").read_text() == gen.generate_verilog(NAIVE, "kabe:design:stage3_naive-top:0.1.0")
    (core_file,) = tmp_path.glob("*.core")
    core = yaml.safe_load(core_file.read_text())
    assert core["name"] == "kabe:design:stage3_naive-top:0.1.0"
    assert core["filesets"]["rtl"]["files"] == ["kabe_n_top.v"]


def test_fusesoc_mode_refuses_bad_parameters_in_one_line(tmp_path):
    cfg = tmp_path / "top_input.yml"
    cfg.write_text(FUSESOC_INPUT.replace("ports: 1", "ports: 0"))
    result = subprocess.run([sys.executable, str(SCRIPT), str(cfg)], cwd=tmp_path, capture_output=True, text=True)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert "kabe:design:stage3_naive-top:0.1.0: ports is 0" in result.stderr
    assert "/somewhere/cores/stage3_naive" in result.stderr
    assert not list(tmp_path.glob("*.v"))


def test_config_reader_without_pyyaml_reads_nested_mappings():
    """A bare python3 (no PyYAML) still reads FuseSoC's input file, the parameter maps included."""
    assert fusesoc_generator._parse_simple_yaml(FUSESOC_INPUT) == yaml.safe_load(FUSESOC_INPUT)
    with pytest.raises(ValueError, match="cannot read indented line"):
        fusesoc_generator._parse_simple_yaml("a: 1\n  b: 2\n")
    with pytest.raises(ValueError, match="only nested `key: value` mappings"):
        fusesoc_generator._parse_simple_yaml("a:\n  - 1\n")


def _design_cores() -> list[Path]:
    # an HLS design's top is its C++ function, not a generated one
    return sorted(p.parent for p in CORES.glob("*/design.yaml") if "\nhls:" not in p.read_text())


def _top_entry(core: dict) -> tuple[str, dict]:
    entries = [(k, g) for k, g in (core.get("generate") or {}).items() if g.get("generator") == gen.GENERATOR_NAME]
    assert len(entries) == 1, "one generate: entry with the top generator"
    return entries[0]


@pytest.mark.parametrize("directory", _design_cores(), ids=lambda p: p.name)
def test_every_design_generates_its_top(directory):
    """The core is the single source of the top: its generate: entry, used by every target, names
    the target's toplevel and as many ports as design.yaml; no hand-written top is left beside it."""
    facts = yaml.safe_load((directory / "design.yaml").read_text())
    core_file = directory / f"{directory.name}.core"
    core = yaml.safe_load(core_file.read_text())
    key, entry = _top_entry(core)
    spec = gen.spec_from_parameters(entry["parameters"])
    assert spec.ports == facts["ports"], f"{core_file}: ports {spec.ports}, design.yaml says {facts['ports']}"
    for name, target in core["targets"].items():
        assert target["toplevel"] == spec.name, name
        assert key in target.get("generate", []), f"target {name} does not run the top generator"
    assert not [p for p in directory.rglob("*.v") if re.search(rf"\bmodule\s+{spec.name}\b", p.read_text())]
    assert gen.spec_from_core(core_file) == spec


def test_command_line_prints_a_cores_top(tmp_path):
    out = tmp_path / "top.v"
    core = CORES / "stage4" / "stage4.core"
    result = subprocess.run([sys.executable, str(SCRIPT), "--core", str(core), "-o", str(out)],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    text = out.read_text()
    assert text.startswith(f"// Generated by kabe/generators/gen_top.py for {core}; do not edit:")
    assert module_ports(text, "kabe_stage4_top") == contract_ports(2, 32)
    bad = subprocess.run([sys.executable, str(SCRIPT), "--core", str(CORES / "lib" / "kabe_lib.core")],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "found 0" in bad.stderr and "Traceback" not in bad.stderr
