"""kabe's settings: [tool.kabe] in pyproject.toml, overridden by doit command-line variables."""

from __future__ import annotations

import shutil
import tomllib
from pathlib import Path
from typing import Any

from kabe.errors import UserError
from .paths import ROOT

FLOWS = ("open", "vivado", "auto")


class ConfigError(UserError, ValueError):
    pass


def load(pyproject: Path = ROOT / "pyproject.toml") -> dict[str, Any]:
    try:
        with open(pyproject, "rb") as f:
            data = tomllib.load(f)
    except FileNotFoundError:
        return {}
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{pyproject}: not valid TOML ({e}); fix the file") from None
    return dict(data.get("tool", {}).get("kabe", {}))


def resolve_flow(requested: str | None, settings: dict[str, Any] | None = None) -> str:
    """open | vivado. auto (the default) means vivado when `vivado` is on PATH, else open."""
    settings = load() if settings is None else settings
    flow = requested or settings.get("flow") or "auto"
    if flow not in FLOWS:
        raise ConfigError(f"flow={flow!r} is not a kabe flow; use one of {', '.join(FLOWS)}")
    if flow == "auto":
        return "vivado" if shutil.which("vivado") else "open"
    return flow
