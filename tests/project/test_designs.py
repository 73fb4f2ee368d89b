"""design.yaml loading: every field validated, every error naming the file and the fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from kabe.project import designs
from kabe.project.designs import DesignError

GOOD = """\
core: kabe:design:demo:0.1.0
verify: {model: "llm_accel.model.frames:ternary_stimulus"}
ports: 2
row_bytes: 512
constraints: pynq_z1.xdc
expect_gate: pass
budgets: {dsp: {eq: 0}, lut: {lt: 12000}}
"""
CORE = "CAPI=2:\nname: kabe:design:demo:0.1.0\ntargets:\n  default: {}\n"


def make(root: Path, yaml_text: str = GOOD, core_text: str = CORE, name: str = "demo") -> Path:
    d = root / name
    d.mkdir(parents=True, exist_ok=True)
    (d / "design.yaml").write_text(yaml_text)
    if core_text is not None:
        (d / f"{name}.core").write_text(core_text)
    return d / "design.yaml"


def test_good_design_loads(tmp_path):
    path = make(tmp_path)
    d = designs.load(path)
    assert d.name == "demo"
    assert d.core == "kabe:design:demo:0.1.0"
    assert (d.verify.value, d.ports, d.row_bytes, d.expect_gate) == ("llm_accel.model.frames:ternary_stimulus", 2, 512, "pass")
    assert d.budgets == {"dsp": {"eq": 0}, "lut": {"lt": 12000}}
    assert d.core_file == tmp_path / "demo" / "demo.core"
    assert d.constraints.name == "pynq_z1.xdc" and d.constraints.is_absolute()
    with pytest.raises(Exception):
        d.ports = 1  # frozen


def test_all_designs_and_get(tmp_path):
    make(tmp_path)
    make(tmp_path, GOOD.replace("demo", "other"), CORE.replace("demo", "other"), name="other")
    assert list(designs.all_designs(tmp_path)) == ["demo", "other"]
    assert designs.get("other", tmp_path).core == "kabe:design:other:0.1.0"


def test_unknown_design_lists_known(tmp_path):
    make(tmp_path)
    with pytest.raises(DesignError, match=r"unknown design 'nope'.*known designs: demo"):
        designs.get("nope", tmp_path)


@pytest.mark.parametrize(
    "change, pattern",
    [
        (("verify: {model: ", "kind: ternary\nverify: {model: "), r"unknown key\(s\) kind"),
        (("ports: 2", "ports: 3"), r"ports must be 1\.\.2 \(HP ports of board pynq-z1 used\)"),
        (("ports: 2", "ports: two"), r"ports must be 1\.\.2 \(HP ports of board pynq-z1 used\)"),
        (("row_bytes: 512", "row_bytes: 500"), r"row_bytes must be a positive multiple of 8"),
        (("expect_gate: pass", "expect_gate: maybe"), r"expect_gate must be one of pass, fail"),
        (("core: kabe:design:demo:0.1.0", "core: demo"), r"core must be a VLNV"),
        (("core: kabe:design:demo:0.1.0\n", ""), r"missing required key\(s\) core"),
        (("lut: {lt: 12000}", "lut: {lt: TBD}"), r"budget lut.lt must be a number, got 'TBD'"),
        (("lut: {lt: 12000}", "lut: {below: 3}"), r"budget 'lut' uses unknown operator 'below'"),
        (("budgets:", "budget:"), r"unknown key\(s\) budget"),
        (("ports: 2", "ports: [oops"), r"is not valid YAML"),
    ],
)
def test_validation_errors_name_the_file(tmp_path, change, pattern):
    path = make(tmp_path, GOOD.replace(*change))
    with pytest.raises(DesignError, match=pattern) as e:
        designs.load(path)
    assert str(path) in str(e.value)


def test_core_name_must_match(tmp_path):
    path = make(tmp_path, core_text=CORE.replace("demo:0.1.0", "demo:0.2.0"))
    with pytest.raises(DesignError, match=r"core 'kabe:design:demo:0.1.0' is not declared") as e:
        designs.load(path)
    assert str(path) in str(e.value)


def test_missing_core_file(tmp_path):
    path = make(tmp_path, core_text=None)
    with pytest.raises(DesignError, match=r"no \.core file beside it"):
        designs.load(path)


def test_broken_core_yaml_still_maps_to_its_file(tmp_path):
    # The core's YAML error is FuseSoC's to report (kabe.project.cores); the design must still find the file.
    path = make(tmp_path, core_text=CORE + "filesets: [oops\n")
    assert designs.load(path).core_file.name == "demo.core"


def test_repository_designs_load():
    for name, d in designs.all_designs().items():
        assert d.core_file.is_file(), name
        # this project's designs are verified by its own models, through the door a user's has
        assert d.verify.kind == "model" and d.verify.value.startswith("llm_accel.model."), name


def test_vivado_budgets_replace_open_budgets_per_metric():
    from kabe.project import designs as d

    stage4 = d.get("stage4")
    assert stage4.budgets_for("open")["lut"] != stage4.budgets_for("vivado")["lut"]
    assert stage4.budgets_for("vivado")["dsp"] == {"eq": 0}  # not overridden: inherited from budgets


