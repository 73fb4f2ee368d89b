"""The Metrics record (metrics.json): one design, one flow, one commit. Shape: metrics.schema.json."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from kabe.errors import UserError

SCHEMA_ID = "kabe.metrics/1"
SCHEMA_PATH = Path(__file__).with_name("metrics.schema.json")


class MetricsError(UserError, ValueError):
    pass


@lru_cache(maxsize=1)
def schema() -> dict:
    return json.loads(SCHEMA_PATH.read_text())


def validate(record: dict) -> None:
    """Raise MetricsError naming the first field that does not follow the schema."""
    import jsonschema  # imported here: only writers and checkers pay for it

    errors = sorted(jsonschema.Draft202012Validator(schema()).iter_errors(record), key=lambda e: list(e.path))
    if errors:
        e = errors[0]
        where = "/".join(str(p) for p in e.path) or "(top level)"
        raise MetricsError(f"metrics record invalid at {where}: {e.message}")


def load(path: Path) -> dict[str, Any]:
    path = Path(path)
    try:
        record = json.loads(path.read_text())
    except FileNotFoundError:
        raise MetricsError(f"{path}: no such metrics file; run `doit build:<design>` first") from None
    except json.JSONDecodeError as e:
        raise MetricsError(f"{path}: not valid JSON ({e}); the file is damaged, rebuild it") from None
    try:
        validate(record)
    except MetricsError as e:
        raise MetricsError(f"{path}: {e}") from None
    return record
