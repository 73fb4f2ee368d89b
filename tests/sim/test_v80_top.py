"""The V80 design's top for any channel count: kabe's top generator (kabe:gen:top) with the
parameters of cores/v80_ternary/v80_ternary.core and `ports` set to N writes a top whose ports, as
Verilator elaborates them, are exactly the port contract the harness binds for N channels of
256-bit input beats, with one 32-byte ternary engine per channel.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
import yaml

import kabe
from kabe.project import designs
from kabe.base.paths import CORES, ROOT
from kabe.sim import port_contract, verilator_build

GENERATORS = Path(kabe.__file__).resolve().parent / "generators"
for where in (GENERATORS, ROOT / "scripts"):
    if str(where) not in sys.path:
        sys.path.insert(0, str(where))

import gen_adder_tree  # noqa: E402
import gen_top  # noqa: E402

CORE = CORES / "v80_ternary" / "v80_ternary.core"
ENGINE_SOURCES = [ROOT / "cores/lib/kabe_axis_fifo.v", ROOT / "cores/stage4/rtl/kabe_ternary_decode.v",
                  ROOT / "cores/stage4/rtl/kabe_ternary_engine.v"]


def _generate(kind: str) -> dict:
    return yaml.safe_load(CORE.read_text())["generate"][kind]["parameters"]


def _streams(n: int) -> designs.Streams:
    return designs.Streams({f"s{p}_axis": 256 for p in range(n)}, {f"m{p}_axis": 32 for p in range(n)},
                           {k: w for p in range(n) for k, w in ((f"stat{p}_invalid", 32), (f"stat{p}_overflow", 1))})


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("v80_tree") / "kabe_adder_tree.v"
    path.write_text(gen_adder_tree.generate_verilog(gen_adder_tree.spec_from_parameters(_generate("adder_tree"))))
    return path


@pytest.mark.parametrize("n", [2, 64])
def test_the_generated_top_has_n_channels_on_the_contract(n, tree, tmp_path):
    spec = gen_top.spec_from_parameters({**_generate("top"), "ports": n})
    text = gen_top.generate_verilog(spec, str(CORE))
    top = tmp_path / f"{spec.name}.v"
    top.write_text(text)
    argv = [str(verilator_build.verilator_root() / "bin" / "verilator"), "-Wno-fatal", "-Wno-lint",
            "--top-module", spec.name, *map(str, ENGINE_SOURCES), str(tree), str(top)]
    found = port_contract.read_ports(argv, spec.name, verilator_build._env())
    assert found is not None, "Verilator could not elaborate the generated top"
    want = port_contract.expected_ports(_streams(n))
    assert port_contract.problems(found, want) == []
    assert set(found) == set(want)  # nothing beyond the contract either
    assert len(want) == 2 + 10 * n and found[f"s{n - 1}_axis_tdata"] == ("input", 256)
    # one engine per channel, each fixed at 32-byte beats with the pipelined invalid counter
    engines = re.findall(r"^kabe_ternary_engine #\((.*?)\) port(\d+)_inst \(", text, re.S | re.M)
    assert [int(p) for _, p in engines] == list(range(n))
    assert all(".BEAT_BYTES(32)" in params and ".COUNT_PIPE(1)" in params for params, _ in engines)
    assert f"{n} HBM channels" in text.splitlines()[2]


def test_the_core_and_design_yaml_name_the_same_channel_count():
    d = designs.get("v80_ternary")
    assert gen_top.spec_from_core(CORE).ports == d.ports
    assert gen_top.spec_from_core(CORE).s_width == 8 * d.board.memory_ports.beat_bytes
    assert gen_adder_tree.spec_from_parameters(_generate("adder_tree")).terms == 5 * d.board.memory_ports.beat_bytes


def test_more_channels_than_any_board_has_are_refused():
    with pytest.raises(ValueError, match=r"ports is 65; give 1\.\.64"):
        gen_top.spec_from_parameters({**_generate("top"), "ports": 65})
