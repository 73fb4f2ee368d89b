"""kabe.sweep.variant: a variant's settings become ordinary inputs in a scratch copy, and FuseSoC
resolves the edited core to what the variant asked for."""

from __future__ import annotations

import shutil
import tomllib

import pytest
import yaml

from kabe.project import constraints, cores, designs
from kabe.base.paths import ROOT
from kabe.sweep import variant
from kabe.sweep.spec import SweepError

CORE = "cores/stage4/stage4.core"
XDC = "constraints/pynq_z1.xdc"


@pytest.fixture
def tree(tmp_path):
    t = tmp_path / "tree"
    for part in ("cores", "constraints", "scripts", "pyproject.toml"):
        src = ROOT / part
        (shutil.copytree if src.is_dir() else shutil.copy2)(src, t / part)
    return t


def test_generator_parameter_period_and_options_land_in_the_inputs(tree):
    variant.apply(tree, CORE, XDC, {"generator.adder_tree.stages": 2, "clock_period_ns": 6.5,
                                    "synth_options": ["-nodsp"], "param.ROW_BYTES": 256})
    core = yaml.safe_load((tree / CORE).read_text())
    assert core["generate"]["adder_tree"]["parameters"]["stages"] == 2
    assert core["parameters"]["ROW_BYTES"]["default"] == 256
    assert core["targets"]["synth"]["flow_options"]["yosys_synth_options"] == ["-family", "xc7", "-nodsp"]
    assert (tree / CORE).read_text().startswith("CAPI=2:\n")
    assert [c.period_ns for c in constraints.parse_xdc(tree / XDC)] == [6.5]
    # FuseSoC reads the edited core: the resolved synth target carries the new parameter default
    d = designs.load(tree / "cores" / "stage4" / "design.yaml")
    edam = cores.resolve(d, "synth", cores_root=tree / "cores", build_root=tree / "build")
    assert edam.parameters["ROW_BYTES"] == 256


def test_vivado_settings_go_into_tool_kabe(tree):
    variant.apply(tree, CORE, XDC, {"vivado.impl_strategy": "Performance_Explore"})
    kabe = tomllib.loads((tree / "pyproject.toml").read_text())["tool"]["kabe"]
    assert kabe["vivado_impl_strategy"] == "Performance_Explore" and kabe["flow"] == "auto"


@pytest.mark.parametrize("settings, says", [
    ({"param.NOPE": 1}, "declares no parameter NOPE"),
    ({"generator.nope.stages": 2}, "no generate entry nope"),
    ({"generator.adder_tree.depth": 2}, "has no parameter depth"),
])
def test_a_setting_the_core_cannot_take_names_the_core_file(tree, settings, says):
    with pytest.raises(SweepError, match=says) as e:
        variant.apply(tree, CORE, XDC, settings)
    assert "stage4.core" in str(e.value)


def test_period_needs_exactly_one_clock(tree):
    xdc = tree / XDC
    xdc.write_text(xdc.read_text() + "\ncreate_clock -period 3.000 -name other [get_ports clk2]\n")
    with pytest.raises(SweepError, match="exactly one create_clock"):
        variant.apply(tree, CORE, XDC, {"clock_period_ns": 5})
