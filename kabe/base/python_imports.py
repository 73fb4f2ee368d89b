"""The project's own Python a module runs: the module and every module it imports, directly or not, that
is neither the standard library, nor an installed third-party distribution, nor kabe itself; found by
reading import statements and resolving them as Python would (never by importing: every `doit` start
computes cache keys, and a user's model may be slow or broken to import).

Why: a build's cache key holds the source of the design's golden model or cocotb testbench
(kabe.cache.cache). A model that keeps its arithmetic in a helper module (`from .quant import
requantize`, or `from teamlib import KEY` with the team's own package in a src/ layout on PYTHONPATH
or installed with `pip install -e .`) would otherwise reuse a verification made against the old
helper after the helper changed: a pass nobody re-earned.

How an import is resolved: with the finders Python itself uses (sys.meta_path: the path finder over the
sys.path the model runs under, an editable install's finder), one dotted part at a time, so no
package's __init__ is executed on the way. What is found:

* under the standard library, built in or frozen: not followed, not hashed (the interpreter's);
* under a site-packages (or dist-packages) folder: an installed distribution, not the project's code:
  not followed, not hashed; its distribution's name and version are returned (`distributions`), so a
  key can hold them;
* kabe's own package: not followed (the key holds kabe's code that shapes a result);
* anywhere else (the project, a src/ layout on PYTHONPATH, an editable install's source): the team's
  code, hashed and followed. A package's `__init__.py` files on the way are included (Python runs them).

An import that resolves nowhere on that path is looked for by file under `bases` too (the project root,
the design's folder, the model's own folder: a model may extend sys.path itself). A conditional or
function-level import counts the same as a top-level one (it may run). A file that does not parse is
kept and not followed: running the model will say what is wrong with it.
"""

from __future__ import annotations

import ast
import functools
import site
import sys
import sysconfig
from dataclasses import dataclass, field
from importlib import machinery, metadata
from pathlib import Path

MAX_FILES = 2000  # a bound on the walk, far above any model's helpers
_PACKAGE = Path(__file__).resolve().parents[1]  # kabe's own package


@dataclass
class Closure:
    files: list[Path] = field(default_factory=list)  # the project's modules, sorted, resolved
    distributions: dict[str, str] = field(default_factory=dict)  # installed distributions imported: name -> version


def local_closure(first: Path, bases: list[Path]) -> list[Path]:
    """`first` and the local modules it imports found by file under `bases` only (no sys.path)."""
    return closure(first, None, [], bases).files


def closure(first: Path, module: str | None, path: list[str] | None, bases: list[Path] = ()) -> Closure:
    """`first` (the module named `module`, or None when unknown) and the project's modules it imports,
    directly or not, resolved over `path` (the sys.path it runs under; None: this process's), then by
    file under `bases`; plus the installed distributions it imports (by name, with their versions)."""
    path = list(sys.path) if path is None else [str(p) for p in path]
    bases = [Path(b).resolve() for b in bases if Path(b).is_dir()]
    out = Closure()
    seen: set[Path] = set()
    first = Path(first).resolve()
    if module is None:  # its dotted name under the first base holding it
        base = next((b for b in bases if first.is_relative_to(b)), None)
        if base is not None:
            rel = first.relative_to(base).with_suffix("").parts
            module = ".".join(rel[:-1] if rel and rel[-1] == "__init__" else rel)
    todo: list[tuple[Path, str | None]] = [(first, module)]
    if module and "." in module:  # importing it runs its packages' __init__.py first
        todo += _resolve(module.split(".")[:-1], path, bases, out.distributions)
    while todo and len(seen) < MAX_FILES:
        f, name = todo.pop()
        if f in seen or not f.is_file():
            continue
        seen.add(f)
        if name is not None:
            package = name if f.name == "__init__.py" else name.rpartition(".")[0]
            package_parts = package.split(".") if package else []
        else:
            package_parts = None
        for parts in _imported(f, package_parts):
            todo += _resolve(parts, path, bases + [first.parent], out.distributions)
    out.files = sorted(seen)
    out.distributions = dict(sorted(out.distributions.items()))
    return out


def _imported(f: Path, package: list[str] | None) -> list[list[str]]:
    """The dotted names f imports, as parts; for `from M import a, b` also M.a and M.b (a and b may
    be submodules). Relative imports are resolved against f's package (None: unknown, not followed)."""
    try:
        tree = ast.parse(f.read_bytes(), filename=str(f))
    except (SyntaxError, ValueError, OSError):
        return []
    out: list[list[str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [a.name.split(".") for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                if package is None or node.level - 1 > len(package) or (node.level == 1 and not package):
                    continue  # above the top-level package: an ImportError when it runs
                head = package[:len(package) - (node.level - 1)]
            else:
                head = []
            module = head + (node.module.split(".") if node.module else [])
            if module:
                out.append(module)
            out += [module + [a.name] for a in node.names if a.name != "*"]
    return out


# Where a module lives.

@functools.lru_cache(maxsize=1)
def _site_dirs() -> tuple[Path, ...]:
    dirs = set(site.getsitepackages() if hasattr(site, "getsitepackages") else [])
    dirs.add(site.getusersitepackages())
    paths = sysconfig.get_paths()
    dirs.update((paths["purelib"], paths["platlib"]))
    return tuple(Path(d).resolve() for d in dirs if d)


@functools.lru_cache(maxsize=1)
def _stdlib_dirs() -> tuple[Path, ...]:
    dirs = set()
    for scheme_vars in ({}, {"base": sys.base_prefix, "platbase": sys.base_exec_prefix,
                             "installed_base": sys.base_prefix, "installed_platbase": sys.base_exec_prefix}):
        paths = sysconfig.get_paths(vars=scheme_vars)
        dirs.update((paths["stdlib"], paths["platstdlib"]))
    return tuple(Path(d).resolve() for d in dirs if d)


def kind_of(origin: Path) -> str:
    """'kabe', 'installed' (site-packages), 'stdlib' or 'project' for a module's file."""
    origin = origin.resolve()
    if origin.is_relative_to(_PACKAGE):
        return "kabe"
    if any(origin.is_relative_to(d) for d in _site_dirs()) or \
            {"site-packages", "dist-packages"} & set(origin.parts):
        return "installed"
    if any(origin.is_relative_to(d) for d in _stdlib_dirs()):
        return "stdlib"
    return "project"


@functools.lru_cache(maxsize=1)
def _distributions_of() -> dict[str, list[str]]:
    try:
        return metadata.packages_distributions()
    except Exception:  # noqa: BLE001 - a broken distribution's metadata: versions unknown, nothing else
        return {}


def _installed(top: str, into: dict[str, str]) -> None:
    dists = _distributions_of().get(top) or []
    if not dists:
        into[top] = "unknown"
    for dist in dists:
        try:
            into[dist] = metadata.version(dist)
        except Exception:  # noqa: BLE001 - metadata without a version
            into[dist] = "unknown"


def _find(name: str, search: list[str] | None):
    """The spec Python's finders give for `name` (its parent package already found: `search` is its
    submodule_search_locations), without executing anything; None when none finds it."""
    for finder in sys.meta_path:
        if finder is machinery.PathFinder or isinstance(finder, type) and issubclass(finder, machinery.PathFinder):
            spec = machinery.PathFinder.find_spec(name, search)
        elif getattr(finder, "__module__", "").startswith("_distutils_hack"):
            continue  # it answers only for distutils/pip, and clears sys.modules when asked
        else:
            if search is not None and finder in (machinery.BuiltinImporter, machinery.FrozenImporter):
                continue
            find = getattr(finder, "find_spec", None)
            if find is None:
                continue
            try:
                spec = find(name, search) if search is not None else find(name, None)
            except Exception:  # noqa: BLE001 - a third-party finder's trouble: the next finder
                continue
        if spec is not None:
            return spec
    return None


def _resolve(parts: list[str], path: list[str], bases: list[Path],
             distributions: dict[str, str]) -> list[tuple[Path, str]]:
    """The project files importing `parts` runs (each package's __init__.py on the way, and the
    module), with their dotted names; an installed distribution on the way is noted, not followed."""
    out: list[tuple[Path, str]] = []
    search: list[str] | None = path
    for k in range(1, len(parts) + 1):
        name = ".".join(parts[:k])
        try:
            spec = _find(name, search)
        except (ImportError, ValueError, OSError):
            spec = None
        if spec is None:
            if k == 1:  # nowhere on the model's path: by file under the bases (a model extending sys.path)
                return _by_file(parts, bases)
            break  # an attribute (`from M import a`), or a missing submodule
        origin = Path(spec.origin) if spec.origin and spec.has_location else None
        locations = list(spec.submodule_search_locations or [])
        where = origin or (Path(locations[0]) if locations else None)
        if where is None:  # built in, frozen
            break
        kind = kind_of(where)
        if kind == "installed":
            _installed(parts[0], distributions)
            break
        if kind != "project":
            break
        if origin is not None:  # a compiled extension of the project's too: hashed, not parsed
            out.append((origin.resolve(), name))
        if not locations:
            break
        search = locations
    return out


def _by_file(parts: list[str], bases: list[Path]) -> list[tuple[Path, str]]:
    """The files importing `parts` runs under the first base that has it: each package's
    __init__.py on the way, and the module itself."""
    for base in bases:
        hit = base.joinpath(*parts)
        module = hit.with_suffix(".py") if not (hit / "__init__.py").is_file() else hit / "__init__.py"
        if module.is_file():
            inits = [(base.joinpath(*parts[:k], "__init__.py"), ".".join(parts[:k])) for k in range(1, len(parts))]
            return [(p.resolve(), n) for p, n in inits if p.is_file()] + [(module.resolve(), ".".join(parts))]
    return []
