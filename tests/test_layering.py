"""kabe's layers (ARCHITECTURE.md): an import only points down, and nothing imports in a cycle.

The import graph comes from grimp, which reads every import statement (function-level ones too), so a
lazy import cannot sneak a layer violation past this test. Every module of kabe must be placed in a
layer: a new module that is not fails here, so the rules cannot go quietly stale.
"""

from __future__ import annotations

import grimp
import pytest

# Top first. A module may import its own layer and any layer below it, never one above.
LAYERS: list[tuple[str, ...]] = [
    ("kabe.__main__",),  # `python -m kabe`: runs kabe.cli
    ("kabe.cli",),  # verbs
    ("kabe.doit_tasks", "kabe.tasks", "kabe.sweep", "kabe.ci"),  # what runs where (kabe/tasks/: the doit tasks,
    # their results and verdict lines; Dask; kabe ci)
    ("kabe.build", "kabe.deploy", "kabe.setup"),  # the pipeline (kabe/build/: the build, its cache reuse and
    # re-derivation, its verdict and summary, repro); deploy: host side of the board run; setup: init, doctor
    ("kabe.flows", "kabe.sim"),  # one module per flow; the Verilator harness
    ("kabe.parsers",),  # report readers
    ("kabe.timing",),  # the open flow's estimator (its report format is read by kabe.parsers.kabe_timing)
    ("kabe.page",),  # the report page
    ("kabe.cache", "kabe.store", "kabe.records"),  # the build cache; the shared archive; reading and writing records
    ("kabe.rules",),  # the gate's absolute limits, the regressions against a base, verdict: the one entry point
    # every consumer gates a record with, outcome: what a verdict means to whoever asked
    ("kabe.project",),  # the project's facts: its settings, designs, the XDC, hls:/vitis:, FuseSoC resolution,
    # the flows as data
    ("kabe.base", "kabe.boards"),  # foundation (kabe/base/: console, errors, paths, git, the board's
    # bitfile encoding, the ssh options settings may name); the board profiles
    ("kabe.verify",),  # the golden-model API for users: numpy only, imports nothing of kabe
]
# Runs on the board alone, beside bitfile, pl_names, board_frames and the project's model: it may import no kabe
# module at all (board_frames and the model reach kabe.verify's pushed copy).
STANDALONE = ("kabe.deploy.board_runner",)


@pytest.fixture(scope="module")
def graph():
    return grimp.build_graph("kabe")


def _layer_of(module: str) -> int | None:
    best, depth = None, -1
    for i, layer in enumerate(LAYERS):
        for prefix in layer:  # the most specific prefix wins (kabe.base.bitfile over kabe.deploy)
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > depth:
                best, depth = i, len(prefix)
    return best


def _internal(graph) -> set[str]:
    return {m for m in graph.modules if m.startswith("kabe.") and m not in STANDALONE}


def test_every_module_has_a_layer(graph):
    unplaced = sorted(m for m in _internal(graph) if _layer_of(m) is None)
    assert not unplaced, f"place these modules in a layer of tests/test_layering.py: {unplaced}"


def test_imports_point_down(graph):
    upward = []
    for m in sorted(_internal(graph)):
        for dep in graph.find_modules_directly_imported_by(m):
            if not dep.startswith("kabe.") or dep in STANDALONE:
                continue
            if _layer_of(dep) < _layer_of(m):
                upward.append(f"{m} imports {dep} (a higher layer)")
    assert not upward, "\n".join(upward)


def test_what_goes_to_the_board_imports_only_the_model_api(graph):
    """kabe/verify.py and board_frames.py are pushed to the board beside the runner: the model API
    imports nothing of kabe, board_frames only the model API."""
    for m, allowed in (("kabe.verify", ()), ("kabe.deploy.board_frames", ("kabe.verify",))):
        deps = [d for d in graph.find_modules_directly_imported_by(m) if d.startswith("kabe") and d not in allowed]
        assert not deps, f"{m} goes to the board but imports {deps}"


def test_board_runner_imports_no_kabe(graph):
    for m in STANDALONE:
        # kabe.verify: its copy is pushed under project/ with the model
        deps = [d for d in graph.find_modules_directly_imported_by(m) if d.startswith("kabe") and d != "kabe.verify"]
        assert not deps, f"{m} runs on the board alone but imports {deps}"


def test_no_import_cycles(graph):
    """Tarjan's strongly connected components over kabe's modules (package __init__ edges included)."""
    nodes = sorted(m for m in graph.modules if m == "kabe" or m.startswith("kabe."))
    edges = {m: sorted(d for d in graph.find_modules_directly_imported_by(m) if d in nodes) for m in nodes}
    index, low, stack, on_stack, cycles, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1 or v in edges[v]:
                cycles.append(sorted(comp))

    for v in nodes:
        if v not in index:
            visit(v)
    assert not cycles, f"import cycles: {cycles}"
