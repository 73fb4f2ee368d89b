"""Paths relative to the design (issue 23): a file design.yaml names (its constraints) is looked for in
the design's own folder first, then in the project's constraints/; a miss names both places and
suggests no `git checkout` (the file may never have been committed). Designs in temporary folders."""

from __future__ import annotations

import pytest

from kabe.project import designs
from kabe.base.paths import CONSTRAINTS

CORE = "CAPI=2:\nname: test:design:{name}:0.1.0\n"


def design_dir(tmp_path, constraints: str | None, name: str = "serv"):
    d = tmp_path / "cores" / name
    d.mkdir(parents=True)
    (d / f"{name}.core").write_text(CORE.format(name=name))
    lines = [f"core: test:design:{name}:0.1.0", "verify: {model: 'llm_accel.model.frames:probe_stimulus'}", "ports: 1"]
    if constraints is not None:
        lines.append(f"constraints: {constraints}")
    (d / "design.yaml").write_text("\n".join(lines) + "\n")
    return d


XDC = "create_clock -period 10.000 -name clk [get_ports clk]\n"


@pytest.mark.parametrize("written", ["./serv_10ns.xdc", "serv_10ns.xdc", "xdc/serv_10ns.xdc"])
def test_a_file_beside_the_design_is_found_there(tmp_path, written):
    d = design_dir(tmp_path, written)
    (d / written).parent.mkdir(parents=True, exist_ok=True)
    (d / written).write_text(XDC)
    assert designs.load(d / "design.yaml").constraints == (d / written).resolve()


def test_a_bare_name_not_beside_the_design_is_the_projects(tmp_path):
    d = design_dir(tmp_path, "pynq_z1.xdc")
    assert designs.load(d / "design.yaml").constraints == CONSTRAINTS / "pynq_z1.xdc"
    d2 = design_dir(tmp_path, None, "dflt")  # the default names the project's board XDC
    assert designs.load(d2 / "design.yaml").constraints == CONSTRAINTS / "pynq_z1.xdc"


def test_the_designs_own_copy_comes_first(tmp_path):
    d = design_dir(tmp_path, "pynq_z1.xdc")
    (d / "pynq_z1.xdc").write_text(XDC)
    assert designs.load(d / "design.yaml").constraints == d / "pynq_z1.xdc"


def test_a_miss_names_both_places_and_no_git_checkout(tmp_path):
    d = design_dir(tmp_path, "./serv_10ns.xdc")
    with pytest.raises(designs.DesignError) as e:
        designs.load(d / "design.yaml")
    msg = str(e.value)
    assert msg == (f"{d / 'design.yaml'}: constraints: './serv_10ns.xdc' is in neither the design's folder "
                   f"({d / 'serv_10ns.xdc'}) nor the project's constraints/ ({CONSTRAINTS / 'serv_10ns.xdc'}); "
                   f"put the file in one of them or correct `constraints:`")
    assert "git checkout" not in msg and "\n" not in msg


def test_an_absolute_path_is_only_itself(tmp_path):
    xdc = tmp_path / "elsewhere.xdc"
    d = design_dir(tmp_path, str(xdc))
    with pytest.raises(designs.DesignError, match="elsewhere.xdc'?: no such file; correct `constraints:`"):
        designs.load(d / "design.yaml")
    xdc.write_text(XDC)
    assert designs.load(d / "design.yaml").constraints == xdc


def test_no_constraints_named_and_no_board_file_says_what_was_looked_for(tmp_path, monkeypatch):
    """design.yaml without `constraints:` in a project whose constraints/ lacks the board's file: the
    message said "constraints: 'pynq_z1.xdc' is in neither ...", a name the user never wrote (red team 3b)."""
    monkeypatch.setattr(designs, "CONSTRAINTS", tmp_path / "constraints")
    d = design_dir(tmp_path, None, "nox")
    with pytest.raises(designs.DesignError) as e:
        designs.load(d / "design.yaml")
    assert "design.yaml names no `constraints:`, so the board PYNQ-Z1's 'pynq_z1.xdc' is looked for" in str(e.value)
    assert "add `constraints: <your XDC>`" in str(e.value)
