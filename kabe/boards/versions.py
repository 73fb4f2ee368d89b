"""Version specifiers as a board profile writes them (">=3,<4"): the few PEP 440 comparisons a profile
needs, on dotted numbers, without a dependency on `packaging` (kabe's runtime does not have it)."""

from __future__ import annotations

import re

_CLAUSE = re.compile(r"^\s*(>=|<=|==|!=|<|>)\s*(\d+(?:\.\d+)*)\s*$")
_VERSION = re.compile(r"^\s*v?(\d+(?:\.\d+)*)")


def _key(v: str) -> tuple[int, ...]:
    parts = [int(x) for x in v.split(".")]
    while parts and parts[-1] == 0:
        parts.pop()
    return tuple(parts)


def check_spec(spec: str) -> list[tuple[str, str]]:
    """The clauses of a specifier; ValueError naming the clause that is not one."""
    out = []
    for clause in spec.split(","):
        m = _CLAUSE.match(clause)
        if not m:
            raise ValueError(f"{clause.strip()!r} is not a clause like >=3 or <4")
        out.append((m.group(1), m.group(2)))
    return out


def matches(version: str, spec: str) -> bool:
    """Whether a version ("3.0.1", "v3.1", "4.0.0.dev1") meets every clause of spec. Only its leading
    dotted number counts (a pre-release suffix is ignored)."""
    m = _VERSION.match(version)
    if not m:
        raise ValueError(f"{version!r} is not a version")
    have = _key(m.group(1))
    ops = {">=": lambda a, b: a >= b, "<=": lambda a, b: a <= b, "==": lambda a, b: a == b,
           "!=": lambda a, b: a != b, "<": lambda a, b: a < b, ">": lambda a, b: a > b}
    return all(ops[op](have, _key(v)) for op, v in check_spec(spec))
