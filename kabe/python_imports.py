"""A Python module's own local files: the module and every module of the project it imports, found
by reading import statements (never by importing: every `doit` start computes cache keys, and a
user's model may be slow or broken to import).

Why: a build's cache key holds the source of the design's golden model or cocotb testbench
(kabe.records.cache). A model that keeps its arithmetic in a helper module (`from .quant import
requantize`) would otherwise reuse a verification made against the old helper after the helper
changed: a pass nobody re-earned.

What counts as local: a module file under one of `bases` (the project root, the design's folder). A
package's `__init__.py` files on the way are included too (Python runs them on import). Imports that
resolve nowhere under the bases (numpy, the standard library, kabe itself) are not followed: their
versions are the key's tools and kabe's own code. A conditional or function-level import counts the
same as a top-level one (it may run). A file that does not parse is kept and not followed: running the
model will say what is wrong with it.
"""

from __future__ import annotations

import ast
from pathlib import Path

MAX_FILES = 2000  # a bound on the walk, far above any model's helpers


def local_closure(first: Path, bases: list[Path]) -> list[Path]:
    """`first` and the local modules it imports, directly or not (sorted, resolved)."""
    bases = [b.resolve() for b in bases if b.is_dir()]
    seen: set[Path] = set()
    todo = [first.resolve()]
    while todo and len(seen) < MAX_FILES:
        f = todo.pop()
        if f in seen or not f.is_file():
            continue
        seen.add(f)
        base = next((b for b in bases if f.is_relative_to(b)), None)
        for parts in _imported(f, base):
            todo += _files_of(parts, bases)
    return sorted(seen)


def _imported(f: Path, base: Path | None) -> list[list[str]]:
    """The dotted names f imports, as parts; for `from M import a, b` also M.a and M.b (a and b may
    be submodules). Relative imports are resolved against f's package (f's folder under `base`)."""
    try:
        tree = ast.parse(f.read_bytes(), filename=str(f))
    except (SyntaxError, ValueError, OSError):
        return []
    package = list(f.parent.relative_to(base).parts) if base is not None else None
    out: list[list[str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [a.name.split(".") for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                if package is None or node.level - 1 > len(package):
                    continue  # above the project: nothing of ours
                head = package[:len(package) - (node.level - 1)]
            else:
                head = []
            module = head + (node.module.split(".") if node.module else [])
            if module:
                out.append(module)
            out += [module + [a.name] for a in node.names if a.name != "*"]
    return out


def _files_of(parts: list[str], bases: list[Path]) -> list[Path]:
    """The files importing `parts` runs under the first base that has it: each package's
    __init__.py on the way, and the module itself."""
    for base in bases:
        hit = base.joinpath(*parts)
        module = hit.with_suffix(".py") if not (hit / "__init__.py").is_file() else hit / "__init__.py"
        if module.is_file():
            inits = [base.joinpath(*parts[:k], "__init__.py") for k in range(1, len(parts))]
            return [p for p in inits if p.is_file()] + [module]
    return []
