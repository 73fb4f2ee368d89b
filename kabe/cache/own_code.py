"""kabe's own code a build runs, found from what the build imports: the part of a cache key that says
"kabe shaped this result".

A hand-kept list of folders (the FLOW_CODE of old) missed modules the build imports from elsewhere
(kabe/base/rtl_path.py, kabe/base/json_keys.py): a change to one of them kept the old verdict. So the list is
the import closure of the build's entry modules, read from the import statements (every one,
function-level included, as tests/test_layering.py reads them), never by importing, plus the few
non-Python files those modules read (the simulation harness's C++, kabe's board profiles and the
generator core kabe:gen:top), and the flow's modules (kabe.flows.get imports them by name, which no
import statement says).

Over-inclusion costs a rebuild; under-inclusion costs a verdict nobody re-earned. So a module named
by any import statement counts, used on the build's path or not.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

from kabe.project import flows as flow_registry
from kabe.base.paths import PACKAGE

# Where a build starts inside kabe: the pipeline, the simulation check (its child scripts are run
# as files, not imported) and the model API a project's golden model imports (kabe.verify).
ENTRY = ("build/__init__.py", "sim", "verify.py")
# Files a build reads that are not Python: the Verilator harness, board profiles, kabe:gen:top.
DATA = (("sim", (".cpp", ".h", ".hpp")), ("boards/profiles", None), ("generators", None))

_memo: dict[Path, tuple[tuple[int, int], tuple[str, ...]]] = {}
# Every `doit build:<design>` computes a key: the import statements are remembered on disk by file
# (mtime, size), so a no-op pays a stat per module, not a parse (derived data: safe to delete).
_DISK_MEMO = "own_code_imports.json"
_INSTALLED = Path(__file__).resolve().parent.parent  # only kabe's own files are remembered there
_loaded = False
_parsed = [0]  # files parsed since the memo was last saved
_modules: dict[tuple[Path, str], Path | None] = {}


def _module_file(dotted: str) -> Path | None:
    """kabe.x.y -> kabe/x/y.py or kabe/x/y/__init__.py; None when it is not a module of kabe."""
    known = (PACKAGE, dotted)
    if known not in _modules:
        _modules[known] = _find_module(dotted)
    return _modules[known]


def _find_module(dotted: str) -> Path | None:
    parts = dotted.split(".")
    if parts[0] != "kabe":
        return None
    base = PACKAGE.joinpath(*parts[1:])
    for cand in (base.with_suffix(".py"), base / "__init__.py"):
        if cand.is_file():
            return cand
    return None


def _names(f: Path) -> tuple[str, ...]:
    """Every dotted kabe module name an import statement of f may load (memoized by mtime and size)."""
    st = f.stat()
    stamp = (st.st_mtime_ns, st.st_size)
    hit = _memo.get(f)
    if hit and hit[0] == stamp:
        return hit[1]
    try:
        tree = ast.parse(f.read_bytes(), str(f))
    except (SyntaxError, ValueError):
        names: tuple[str, ...] = ()
    else:
        package = ["kabe", *f.relative_to(PACKAGE).parts[:-1]]  # what a relative import is relative to
        found: list[str] = []
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                found += [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    anchor = package[:len(package) - node.level + 1]
                    mod = ".".join(anchor + ([node.module] if node.module else []))
                else:
                    mod = node.module or ""
                found.append(mod)
                found += [f"{mod}.{a.name}" for a in node.names if a.name != "*"]  # a submodule, if it is one
        names = tuple(n for n in found if n == "kabe" or n.startswith("kabe."))
    _memo[f] = (stamp, names)
    _parsed[0] += 1
    return names


def _memo_file() -> Path:
    from kabe.base.paths import BUILD

    return BUILD / "cache" / _DISK_MEMO


def _load_memo() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    try:
        saved = json.loads(_memo_file().read_text())
        for path, (mtime, size, names) in saved.get("files", {}).items():
            _memo.setdefault(Path(path), ((int(mtime), int(size)), tuple(str(n) for n in names)))
    except (OSError, ValueError, TypeError, AttributeError):
        pass


def _save_memo() -> None:
    from kabe.store.archive import write_json_atomic

    try:
        write_json_atomic(_memo_file(), {"generated_by": "kabe.cache.own_code (derived; safe to delete)",
                                         "files": {str(p): [st[0], st[1], list(n)] for p, (st, n) in _memo.items()
                                                   if p.is_relative_to(_INSTALLED)}})
    except OSError:  # a read-only build/: the parse is done again next time, nothing else
        pass


def closure(flow: str) -> list[Path]:
    """Every kabe file a build with `flow` runs or reads: sorted, absolute."""
    _load_memo()
    todo: list[Path] = []
    for entry in ENTRY:
        p = PACKAGE / entry
        todo += sorted(p.rglob("*.py")) if p.is_dir() else [p]
    flow_module = _module_file(flow_registry.facts(flow).module)
    if flow_module is not None:
        todo.append(flow_module)
        if flow_module.name == "__init__.py":  # a flow package's Tcl hooks and HDL wrappers
            todo += [p for p in flow_module.parent.rglob("*") if p.is_file() and p.suffix not in (".py", ".pyc")]
    seen: set[Path] = set()
    while todo:
        f = todo.pop()
        if f in seen or "__pycache__" in f.parts:
            continue
        seen.add(f)
        if f.suffix != ".py":
            continue
        for name in _names(f):
            parts = name.split(".")
            for i in range(1, len(parts) + 1):  # each package on the way runs its __init__
                m = _module_file(".".join(parts[:i]))
                if m is not None and m not in seen:
                    todo.append(m)
    if _parsed[0]:
        _parsed[0] = 0
        _save_memo()
    for folder, suffixes in DATA:
        d = PACKAGE / folder
        if d.is_dir():
            seen.update(p for p in d.rglob("*") if p.is_file() and "__pycache__" not in p.parts
                        and (suffixes is None or p.suffix in suffixes))
    return sorted(seen)
