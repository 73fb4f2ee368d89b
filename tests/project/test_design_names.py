"""Names are made safe before a shell, a C define, Tcl or a plot title sees them; design.yaml is read
with bounded cost (issue 18). Real Verilator and FuseSoC where a tool is involved."""

from __future__ import annotations

from kabe.project.design_context import DesignContext
import subprocess
from pathlib import Path

import pytest

from kabe import cli
from kabe.project import designs
from kabe.project.designs import DesignError
from kabe.base.errors import UserError
from kabe.sim import runner, verilator_build

from test_designs import CORE, GOOD, make

SHELL_NAME = "odd;`touch PWNED`;x"


@pytest.mark.parametrize("name", [SHELL_NAME, "../../x/evil", "-rf", "$\\foo$", "a b", "naïve", "x" * 65, ""])
def test_invalid_names_are_refused(name):
    with pytest.raises(DesignError, match="not a valid design name"):
        designs.check_name(name)


@pytest.mark.parametrize("name", ["stage4", "stage2_2hp", "my-design", "_x", "A9"])
def test_valid_names_pass(name):
    assert designs.check_name(name) == name


def test_a_design_folder_with_shell_metacharacters_is_refused(tmp_path):
    make(tmp_path, GOOD.replace("demo", "odd"), CORE.replace("demo", "odd"), name=SHELL_NAME)
    for load in (lambda: designs.all_designs(tmp_path), lambda: designs.get(SHELL_NAME, tmp_path),
                 lambda: designs.load(tmp_path / SHELL_NAME / "design.yaml")):
        with pytest.raises(DesignError, match="not a valid design name"):
            load()


def test_the_shell_name_is_refused_before_any_tool_runs(tmp_path, monkeypatch, capsys):
    """`kabe build` / `kabe sim` with the name: exit 2, one line, and no subprocess was started."""
    started = []

    def no_tool(*args, **kwargs):
        started.append(args[0] if args else kwargs.get("args"))
        raise AssertionError(f"a tool ran: {started[-1]}")

    monkeypatch.setattr(subprocess, "run", no_tool)
    monkeypatch.setattr(subprocess, "Popen", no_tool)
    monkeypatch.chdir(tmp_path)
    assert cli.main(["build", SHELL_NAME]) == 2
    assert cli.main(["sim", SHELL_NAME]) == 2
    out = capsys.readouterr()
    said = " ".join((out.out + out.err).split())  # rich wraps at the terminal width
    assert said.count("is not a valid design name") == 2 and "Traceback" not in said
    assert started == [] and not list(tmp_path.rglob("PWNED"))
    with pytest.raises(DesignError):
        verilator_build.build(DesignContext(designs.get(SHELL_NAME)), build_root=tmp_path)
    with pytest.raises(DesignError):  # the C string literal in kabe_design.h
        verilator_build._design_header('x"; system("touch PWNED"); //')


def test_verilator_make_runs_without_a_shell(tmp_path):
    """`verilator --build` ran `make -C <dir>` through sh: a build folder like `a;id>PWNED;b` ran `id`.
    kabe now runs make itself from an argv list (the build cannot succeed there, Verilator's own .d
    files cannot hold such a path, but nothing is executed and the failure is a clear SimBuildError)."""
    build_root = tmp_path / "a;id>PWNED;b"
    with pytest.raises(verilator_build.SimBuildError) as e:
        verilator_build.build(DesignContext(designs.get("stage2")), build_root=build_root)
    assert not list(tmp_path.rglob("PWNED"))
    assert "Traceback" not in str(e.value)


def test_make_argv_is_a_list():
    argv = verilator_build._make_argv(Path("/x/a;b $(c)/obj"), 2)
    assert argv[:3] == [argv[0], "-C", "/x/a;b $(c)/obj"] and "OPT_FAST=-O2" in argv


def test_a_verilator_failure_is_a_user_error_without_traceback(tmp_path, capsys, monkeypatch):
    """A parameter the top does not have: Verilator refuses it; kabe says so in one message, exit 2."""
    with pytest.raises(verilator_build.SimBuildError) as e:
        verilator_build.build(DesignContext(designs.get("stage2")), {"NO_SUCH_PARAM": 1}, build_root=tmp_path)
    assert isinstance(e.value, UserError)
    msg = str(e.value)
    assert "NO_SUCH_PARAM" in msg and "%Error" in msg and "Traceback" not in msg and "build.log" in msg
    monkeypatch.setattr(verilator_build, "BUILD", tmp_path)
    assert runner.main(designs.get("stage2"), 64, 1, params={"NO_SUCH_PARAM": 1}) == 2
    out = capsys.readouterr().out
    assert "Verilator could not build stage2" in out and "Traceback" not in out


# --- design.yaml with bounded cost --------------------------------------------------------------

def billion_laughs(levels: int = 9) -> str:
    """The classic alias bomb: 9 levels of 9 references each, ~500 bytes, 9**9 leaves when expanded."""
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]")
    return "\n".join(lines) + "\n"


def test_yaml_alias_bomb_is_one_clear_error(tmp_path):
    path = make(tmp_path, GOOD + "budgets_vivado: {lut: " + "{}}\n" + billion_laughs())
    with pytest.raises(DesignError) as e:
        designs.load(path)
    msg = str(e.value)
    assert "uses a YAML alias" in msg and str(path) in msg and len(msg) < 400


def test_doit_list_refuses_the_bomb_in_one_line(tmp_path):
    """The same through all_designs, as every `doit` start reads it."""
    make(tmp_path)
    make(tmp_path, billion_laughs(), CORE.replace("demo", "bomb"), name="bomb")
    with pytest.raises(DesignError, match=r"bomb/design.yaml: line 2 uses a YAML alias"):
        designs.all_designs(tmp_path)


def test_a_huge_design_yaml_is_refused_unread(tmp_path):
    path = make(tmp_path, GOOD + "#" + "x" * designs.MAX_YAML_BYTES + "\n")
    with pytest.raises(DesignError, match="larger than 64 KiB"):
        designs.load(path)


@pytest.mark.parametrize("budgets", [
    "budgets: [" + ",".join(["[1, 2, 3]"] * 2000) + "]",  # a big list: named by its size, not echoed
    "budgets: {lut: [" + ",".join(["1"] * 5000) + "]}",
    "budgets: {lut: {lt: '" + "x" * 20000 + "'}}",
    "budgets: {" + "x" * 20000 + ": {lt: 1}}",
])
def test_error_messages_do_not_echo_unbounded_values(tmp_path, budgets):
    path = make(tmp_path, GOOD.replace("budgets: {dsp: {eq: 0}, lut: {lt: 12000}}", budgets))
    with pytest.raises(DesignError) as e:
        designs.load(path)
    assert len(str(e.value)) < len(str(path)) + 300, str(e.value)[:500]


def test_deep_nesting_is_refused(tmp_path):
    path = make(tmp_path, GOOD + "deep: " + "[" * 20000 + "]" * 20000 + "\n")
    with pytest.raises(DesignError):
        designs.load(path)
