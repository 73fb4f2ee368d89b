"""The Metrics record (metrics.json): one design, one flow, one commit. Shape: metrics.schema.json."""

from __future__ import annotations

import json
import math
from functools import lru_cache
from pathlib import Path
from typing import Any

from kabe.base import regular_file
from kabe.base.errors import UserError, bounded
from kabe.base.json_keys import DuplicateKey, one_value_per_key

SCHEMA_ID = "kabe.metrics/1"
SCHEMA_PATH = Path(__file__).with_name("metrics.schema.json")


class MetricsError(UserError, ValueError):
    pass


# A metrics.json is a few kB; the cap bounds what a damaged or hostile file can cost to read.
MAX_RECORD_BYTES = 16 << 20
# Integers longer than this many digits are no count a build produces (and > 2**53 is not exact in
# the browser or in a float): refused, as are NaN and +-Infinity, which JSON itself does not allow.
_MAX_INT_DIGITS = 16
_MESSAGE_CHARS = 300


@lru_cache(maxsize=1)
def schema() -> dict:
    return json.loads(SCHEMA_PATH.read_text())


@lru_cache(maxsize=1)
def _validator():
    import jsonschema  # imported here: only writers and checkers pay for it

    return jsonschema.Draft202012Validator(schema())


def _cut(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _MESSAGE_CHARS else text[: _MESSAGE_CHARS - 3] + "..."


def validate(record: dict) -> None:
    """Raise MetricsError naming the first field that does not follow the schema (the message is cut
    to a line: the schema library quotes the offending value, which may be the whole input)."""
    errors = sorted(_validator().iter_errors(record), key=lambda e: [str(p) for p in e.path])
    if errors:
        e = errors[0]
        where = "/".join(str(p)[:40] for p in e.path) or "(top level)"
        raise MetricsError(_cut(f"metrics record invalid at {where}: {_what(e)}"))


def _what(error) -> str:
    """The schema error in words, the offending value bounded (jsonschema's own message quotes it whole)."""
    got = bounded(error.instance, 60)
    if error.validator == "type":
        want = error.validator_value if isinstance(error.validator_value, list) else [error.validator_value]
        return f"expected {' or '.join(want)}, got {got}"
    if error.validator == "required":
        return error.message  # names the missing key, from the schema
    if error.validator in ("enum", "const"):
        want = error.validator_value if error.validator == "enum" else [error.validator_value]
        return f"expected one of {', '.join(map(str, want))}, got {got}"
    return f"{got} fails {error.validator} {bounded(error.validator_value, 60)}"


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"number {text[:20]} is out of range")
    return value


def _count(text: str) -> int:
    if len(text.lstrip("-")) > _MAX_INT_DIGITS:
        raise ValueError(f"integer of {len(text)} digits is out of range")
    return int(text)


def _no_constant(name: str):
    raise ValueError(f"{name} is not a JSON number")


def parse(text: str) -> Any:
    """json.loads, strict: no NaN/Infinity, no float that overflows, no integer beyond 16 digits,
    no key repeated within an object (DuplicateKey)."""
    return json.loads(text, parse_float=_finite, parse_int=_count, parse_constant=_no_constant,
                      object_pairs_hook=one_value_per_key)


def load(path: Path) -> dict[str, Any]:
    """Read and schema-validate one metrics.json. Raises MetricsError naming the file and the fix."""
    path = Path(path)
    try:  # a regular file only (a FIFO named metrics.json would block a plain open), read up to the cap
        raw = regular_file.read(path, MAX_RECORD_BYTES)
    except regular_file.NotReadable as e:
        raise MetricsError({
            "missing": f"{path}: no such metrics file; run `doit build:<design>` first",
            "special": f"{path}: is not a regular file (a {e.detail}); a metrics record is a file a build wrote",
            "too_big": f"{path}: larger than {MAX_RECORD_BYTES >> 20} MiB; not a metrics record kabe wrote",
            "grew": f"{path}: larger than {MAX_RECORD_BYTES >> 20} MiB; not a metrics record kabe wrote",
            "directory": f"{path}: is a directory, not a metrics record",
        }.get(e.why, f"{path}: cannot read ({e.detail})")) from None
    try:
        record = parse(raw.decode("utf-8"))
    except DuplicateKey as e:
        raise MetricsError(f"{path}: {_cut(str(e))}: which value counts is a guess, so the record is refused; "
                           f"rebuild it") from None
    except (UnicodeDecodeError, ValueError, RecursionError) as e:  # JSONDecodeError is a ValueError
        raise MetricsError(f"{path}: not valid JSON ({_cut(str(e))}); the file is damaged, rebuild it") from None
    if isinstance(record, dict) and "schema" not in record:
        other = other_kabe_file(record)
        what = f"this is {other}, not a metrics record" if other else \
            f"not a metrics record (it has no \"schema\": \"{SCHEMA_ID}\")"
        raise MetricsError(f"{path}: {what}; give a build's reports/<commit>/<design>/<flow>/metrics.json "
                           f"(kabe gate also takes a timing report)")
    digest = _digest(raw)
    if digest not in _validated():  # the same bytes under the same schema validated before: the same answer
        try:
            validate(record)
        except MetricsError as e:
            raise MetricsError(f"{path}: {e}") from None
        _remember(digest)
    return record


# Records this checkout has validated, by sha256 of the schema and the record's bytes: the up-to-date line
# of `doit build:<design>` re-reads its archive on every no-op, and importing the schema library alone cost
# a third of that no-op (derived data under build/: safe to delete; only successes are kept).
_MEMO_NAME = "validated_metrics.json"
_MEMO_KEEP = 512


def _digest(raw: bytes) -> str:
    import hashlib

    return hashlib.sha256(_schema_bytes() + b"\0" + raw).hexdigest()


@lru_cache(maxsize=1)
def _schema_bytes() -> bytes:
    return SCHEMA_PATH.read_bytes()


def _memo_path() -> Path:
    from kabe.base.paths import BUILD

    return BUILD / "cache" / _MEMO_NAME


def _validated() -> list[str]:
    try:
        seen = json.loads(_memo_path().read_text()).get("sha256", [])
        return [d for d in seen if isinstance(d, str)] if isinstance(seen, list) else []
    except (OSError, ValueError, AttributeError):
        return []


def _remember(digest: str) -> None:
    from kabe.store.archive import write_json_atomic

    seen = [d for d in _validated() if d != digest][-(_MEMO_KEEP - 1):] + [digest]
    try:
        write_json_atomic(_memo_path(), {"generated_by": "kabe.records.metrics (derived; safe to delete)",
                                         "sha256": seen})
    except OSError:  # a read-only build/: validated again next time
        pass


# The other JSON files an archive folder holds, told apart by the keys only they carry, so that
# `kabe gate manifest.json` says which file it was given instead of a schema error about 'schema'.
_OTHER_FILES = (
    ({"raw_files", "artifacts", "inputs"}, "an archive's manifest.json (the list of its files and their hashes)"),
    ({"format", "files", "targets", "tools"}, "an archive's cache_key.json (the inputs its cache key hashes)"),
    ({"beats", "beats_per_cycle", "first_mismatches"}, "a simulation result.json (reports/<commit>/<design>/sim/)"),
    ({"variants", "pareto", "best"}, "a sweep's sweep.json"),
)


def other_kabe_file(record: Any) -> str | None:
    """What a JSON document that is not a metrics record is, when it is one of kabe's own files."""
    if not isinstance(record, dict):
        return None
    return next((what for keys, what in _OTHER_FILES if keys <= record.keys()), None)
