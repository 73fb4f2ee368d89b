"""A function of the project's own Python named as `module:function` in a project's settings (design.yaml's
verify.model, [tool.kabe] page_sections), imported with the project root first on sys.path; a module that
does not import or has no such function is the caller's one-line error naming the setting and the fix."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any, Callable


def one_line(e: BaseException, limit: int) -> str:
    """An exception's text on one line, bounded (the user's message, shown as written)."""
    text = " ".join(str(e).split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def load(spec: str, root: Path, where: str, error: type[Exception], define: str) -> Callable[..., Any]:
    """The function `spec` names. where: the setting, as the error names it; define: the signature the
    error asks for when the module has no such function (`(seed, size, context) -> ...`)."""
    module_name, func_name = spec.split(":")
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    try:
        module = importlib.import_module(module_name)
    except Exception as e:  # noqa: BLE001 - the project's module: any failure is said in one line
        raise error(f"{where}: cannot import {module_name} ({type(e).__name__}: {one_line(e, 200)}); "
                    f"it must be importable from the project root {root}") from None
    fn = getattr(module, func_name, None)
    if not callable(fn):
        raise error(f"{where}: {module_name} has no function {func_name}; define `def {func_name}{define}")
    return fn
