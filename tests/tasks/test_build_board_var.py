"""`doit build:stage4 board=kv260`: board= on doit is the deploy host (doit deploy:<design> board=user@host),
and a design's board is its design.yaml's `board:`. A build given a board profile's name there says, in one
line, which board it builds for and which designs build for the one named (issue 43: the KV260's design is
kv260_ternary); a host (user@host, an ssh alias) or the design's own board says nothing."""

from __future__ import annotations

import subprocess
import sys

from kabe.project import designs
from kabe.base.paths import ROOT
from kabe.tasks import board_var_note


def test_a_board_name_on_a_build_says_which_board_it_builds_for():
    note = board_var_note(designs.get("stage4"), "kv260")
    assert note is not None
    assert "board=kv260 names the deploy host" in note and "PYNQ-Z1 (pynq-z1)" in note
    assert "kv260_ternary" in note and "doit build:kv260_ternary" in note
    assert "Alveo V80" in board_var_note(designs.get("stage4"), "Alveo V80")  # a display name is a board too


def test_hosts_and_the_designs_own_board_say_nothing():
    stage4 = designs.get("stage4")
    for var in (None, "", "xilinx@pynq", "xilinx@kv260", "my-board-alias", "pynq-z1"):
        assert board_var_note(stage4, var) is None, var
    assert board_var_note(designs.get("kv260_ternary"), "kv260") is None


def test_doit_list_with_a_board_name_runs_nothing_and_says_nothing():
    """The note is said when a build runs, never when tasks are only defined (doit list, a deploy)."""
    out = subprocess.run([sys.executable, "-m", "doit", "list", "board=kv260"], cwd=ROOT, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "names the deploy host" not in out.stdout + out.stderr
