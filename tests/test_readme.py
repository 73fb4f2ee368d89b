"""The README is a door, not a manual (issue 44): at most 150 lines, the tool first, both commands
exactly as CI runs them, every verb in one table, every link to docs/ resolving."""

from __future__ import annotations

import re

from kabe import doit_tasks
from kabe.base.paths import ROOT

README = (ROOT / "README.md").read_text()
MAIN = "python3 -m venv .venv && . .venv/bin/activate && pip install -e . && doit build:stage4"
TESTS = "python3 -m venv .venv && . .venv/bin/activate && pip install -e '.[test]' && python -m pytest -q"


def test_the_readme_is_short_and_says_what_kabe_is_first():
    assert len(README.splitlines()) <= 150
    first = README.split("\n## ", 1)[0]
    assert "your own git repository" in first and "LLM" not in first.split("\n\n")[1]  # the tool, then this project
    for word in ("**WNS**", "**HP**", "**the document**"):
        assert word in first, word


def test_the_two_commands_are_there_exactly():
    blocks = re.findall(r"```\n(.*?)\n```", README, re.S)
    assert any(MAIN in b.splitlines() for b in blocks) and any(TESTS in b.splitlines() for b in blocks)
    assert TESTS.replace("pip install -e", "pip install -q -e") in (ROOT / ".ci" / "run").read_text()  # what CI runs


def test_every_verb_is_in_the_table():
    table = [ln for ln in README.splitlines() if ln.startswith("| `")]
    text = "\n".join(table)
    for verb in ("parse", "gate", "diff", "ci", "archive", "report", "doctor", "init", "new", "sweep"):
        assert f"`kabe {verb}" in text or f"kabe {verb}`" in text or f"`kabe {verb} " in text, verb
    for task in (n.removeprefix("task_") for n in doit_tasks.__all__ if n.startswith("task_")):
        assert f"`doit {task}" in text, task


def test_every_link_resolves():
    for doc in (ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))):
        for link in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", doc.read_text()):
            if "://" in link:
                continue
            assert (doc.parent / link).exists(), f"{doc.name}: {link}"
