"""Boards are data (issue 24): no module of the build pipeline names a board, its part or its memory
lane in code. Each reads them from the design's board profile (design.board: kabe/boards/profiles,
or a project's boards/), so a third board is a profile and a template, no code (docs/boards.md).

Checked on the code itself (identifiers, imported names, string constants), not on comments or
docstrings, which may say what a board is for. Modules about one board on purpose stay outside:
kabe.boards (the profiles' reader), llm_accel.perf (the documents' PYNQ-Z1 and V80 arithmetic), kabe.deploy
(pynq.Overlay is a programmer a profile names), kabe.timing (a model fitted on 7-series paths).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

KABE = Path(__file__).resolve().parent.parent / "kabe"
PIPELINE = ("build/__init__.py", "build/rederive.py", "build/reuse.py", "build/verdict.py", "project/constraints.py",
            "project/designs.py", "flows/base.py", "flows/open.py", "flows/yosys_script.py", "project/flows.py",
            "flows/vivado/project.py", "flows/vivado/collect.py", "rules/gate.py", "rules/verdict.py",
            "rules/outcome.py", "build/summary.py", "tasks/__init__.py", "setup/doctor.py", "sim/runner.py",
            "cache/cache.py", "ci/run.py", "ci/design_result.py", "rules/regressions.py")
# a board's name, its part, the PYNQ-Z1's lane: what a profile says and the pipeline must not
BOARD_WORDS = re.compile(r"PYNQ|pynq_z1|xc7z0\d\d|xcv80|HP port|HBM NMU|ALVEO_V80", re.I)


def board_words(source: str) -> list[tuple[int, str]]:
    """(line, text) of every identifier, imported name or non-docstring string constant naming a board."""
    tree = ast.parse(source)
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            text = node.value
        elif isinstance(node, ast.Name):
            text = node.id
        elif isinstance(node, ast.Attribute):
            text = node.attr
        elif isinstance(node, ast.alias):
            text = node.name
        else:
            continue
        if BOARD_WORDS.search(text):
            found.append((getattr(node, "lineno", 0), text[:80]))
    return found


@pytest.mark.parametrize("module", PIPELINE)
def test_the_pipeline_names_no_board(module):
    path = KABE / module
    assert path.is_file(), f"{path} moved: update PIPELINE"
    found = board_words(path.read_text())
    assert not found, f"kabe/{module} names a board in code (read it from design.board instead): {found}"


def test_the_check_sees_what_it_must_and_skips_what_it_may():
    code = ('"""The PYNQ-Z1 docstring."""\n'
            "from kabe.boards import PYNQ_Z1  # a comment on the PYNQ-Z1\n"
            'PART = "xc7z020clg400-1"\n'
            'def f():\n    """HP port docstring"""\n    return f"{n} HP port(s)"\n')
    assert [t for _, t in board_words(code)] == ["PYNQ_Z1", "xc7z020clg400-1", " HP port(s)"]
