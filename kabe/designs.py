"""The designs kabe knows: one `cores/<design>/design.yaml` each, loaded into a `Design` record.

design.yaml says what a design *is* (its core, its golden-model kind, how many HP ports, its
budgets); the file list stays in the core file (see kabe.cores).

    core: kabe:design:stage4:0.1.0
    kind: ternary        # a frame builder in kabe.model.frames: probe | int8 | ternary | ...
    ports: 2
    row_bytes: 512
    constraints: pynq_z1.xdc
    expect_gate: pass
    budgets: {dsp: {eq: 0}, lut: {lt: 12000}}
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from kabe.errors import UserError
from .paths import CONSTRAINTS, CORES

# One golden model + frame builder per kind (kabe.model.frames.BUILDERS; a test keeps the two equal).
# Named here rather than imported so that reading the designs (every `doit` start) loads no numpy.
KINDS = ("probe", "int8", "ternary", "attention")
GATE_EXPECTATIONS = ("pass", "fail")
BUDGET_OPS = ("eq", "lt", "le", "gt", "ge")
BEAT_BYTES = 8
_VLNV = re.compile(r"^[A-Za-z0-9_.-]+:[A-Za-z0-9_.-]+:[A-Za-z0-9_.-]+:[A-Za-z0-9_.-]+$")
# libyaml's safe loader when PyYAML was built with it (10x faster; every `doit` start reads these
# files), else the pure-Python one: both accept the same safe subset.
YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_FIELDS = ("core", "kind", "ports", "row_bytes", "constraints", "expect_gate", "budgets", "budgets_vivado")
_REQUIRED = ("core", "kind", "ports")


class DesignError(UserError, ValueError):
    """A design.yaml is missing, malformed, or names an unknown design."""


@dataclass(frozen=True)
class Design:
    name: str  # the directory name under cores/
    core: str  # VLNV, e.g. kabe:design:stage4:0.1.0
    kind: str  # probe | int8 | ternary
    ports: int  # 1 or 2 HP ports
    row_bytes: int
    constraints: Path  # absolute path of the XDC
    expect_gate: str  # pass | fail: what the gate is expected to say (a negative example says fail)
    budgets: dict[str, dict[str, float]] = field(hash=False, compare=False)
    core_file: Path  # cores/<name>/<name>.core (the file that declares `core`)
    yaml_file: Path
    # The vivado flow measures the whole block design (engine + DMA + interconnect + PS glue), the
    # open flow the engine alone: a metric named here replaces its open-flow budget for vivado builds.
    budgets_vivado: dict[str, dict[str, float]] = field(default_factory=dict, hash=False, compare=False)

    def budgets_for(self, flow: str) -> dict[str, dict[str, float]]:
        return {**self.budgets, **self.budgets_vivado} if flow == "vivado" else dict(self.budgets)

    @property
    def directory(self) -> Path:
        return self.yaml_file.parent


def _fail(path: Path, msg: str) -> DesignError:
    return DesignError(f"{path}: {msg}")


_NAME_LINE = re.compile(r"^name\s*:\s*['\"]?([^'\"\s#]+)", re.MULTILINE)


def _core_name(path: Path) -> str | None:
    """The top-level `name:` of a CAPI2 core file, read by pattern so a core with a YAML error elsewhere
    still maps to its design (FuseSoC then reports that error against the right file)."""
    try:
        m = _NAME_LINE.search(path.read_text(errors="replace"))
    except OSError:
        return None
    return m.group(1) if m else None


def _find_core_file(directory: Path, vlnv: str, yaml_file: Path) -> Path:
    preferred = directory / f"{directory.name}.core"
    candidates = [preferred] + sorted(p for p in directory.glob("*.core") if p != preferred)
    for cand in candidates:
        if cand.is_file() and _core_name(cand) == vlnv:
            return cand
    names = {str(c.name): _core_name(c) for c in candidates if c.is_file()}
    if not names:
        raise _fail(yaml_file, f"no .core file beside it; expected {preferred.name} declaring name: {vlnv}")
    found = ", ".join(f"{k} -> {v}" for k, v in names.items())
    raise _fail(yaml_file, f"core {vlnv!r} is not declared by any .core file in {directory} ({found}); "
                           f"make `core:` match the core file's `name:`")


def _check_budgets(path: Path, budgets: Any) -> dict[str, dict[str, float]]:
    if budgets is None:
        return {}
    if not isinstance(budgets, dict):
        raise _fail(path, f"budgets must be a mapping like {{dsp: {{eq: 0}}, lut: {{lt: 12000}}}}, got {budgets!r}")
    out: dict[str, dict[str, float]] = {}
    for resource, checks in budgets.items():
        if not isinstance(checks, dict) or not checks:
            raise _fail(path, f"budget {resource!r} must map an operator ({'/'.join(BUDGET_OPS)}) to a number, "
                              f"got {checks!r}")
        for op, value in checks.items():
            if op not in BUDGET_OPS:
                raise _fail(path, f"budget {resource!r} uses unknown operator {op!r}; use one of {', '.join(BUDGET_OPS)}")
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise _fail(path, f"budget {resource}.{op} must be a number, got {value!r}")
        out[str(resource)] = dict(checks)
    return out


def load(yaml_file: Path) -> Design:
    """Load and validate one design.yaml; raises DesignError naming the file and the fix."""
    yaml_file = Path(yaml_file).resolve()
    try:
        data = yaml.load(yaml_file.read_text(), Loader=YAML_LOADER)
    except OSError as e:
        raise _fail(yaml_file, f"cannot read: {e.strerror}") from None
    except yaml.YAMLError as e:
        raise _fail(yaml_file, f"is not valid YAML: {e}") from None
    if not isinstance(data, dict):
        raise _fail(yaml_file, "must be a YAML mapping with keys " + ", ".join(_FIELDS))
    unknown = sorted(set(data) - set(_FIELDS))
    if unknown:
        raise _fail(yaml_file, f"unknown key(s) {', '.join(unknown)}; known keys: {', '.join(_FIELDS)}")
    missing = [k for k in _REQUIRED if k not in data]
    if missing:
        raise _fail(yaml_file, f"missing required key(s) {', '.join(missing)}")

    core = data["core"]
    if not isinstance(core, str) or not _VLNV.match(core):
        raise _fail(yaml_file, f"core must be a VLNV vendor:library:name:version, got {core!r}")
    kind = data["kind"]
    if kind not in KINDS:
        raise _fail(yaml_file, f"kind {kind!r} is not one of {', '.join(KINDS)} (the golden models in kabe.model)")
    ports = data["ports"]
    if isinstance(ports, bool) or not isinstance(ports, int) or ports not in (1, 2):
        raise _fail(yaml_file, f"ports must be 1 or 2 (HP ports used), got {ports!r}")
    row_bytes = data.get("row_bytes", 512)
    if isinstance(row_bytes, bool) or not isinstance(row_bytes, int) or row_bytes <= 0 or row_bytes % BEAT_BYTES:
        raise _fail(yaml_file, f"row_bytes must be a positive multiple of {BEAT_BYTES}, got {row_bytes!r}")
    expect_gate = data.get("expect_gate", "pass")
    if expect_gate not in GATE_EXPECTATIONS:
        raise _fail(yaml_file, f"expect_gate must be one of {', '.join(GATE_EXPECTATIONS)}, got {expect_gate!r}")
    constraints_name = data.get("constraints", "pynq_z1.xdc")
    if not isinstance(constraints_name, str) or not constraints_name:
        raise _fail(yaml_file, f"constraints must be a file name under constraints/, got {constraints_name!r}")
    # A bare name lives in constraints/; a relative path with a directory is relative to the design.
    cpath = Path(constraints_name)
    constraints = cpath if cpath.is_absolute() else (
        CONSTRAINTS / cpath if len(cpath.parts) == 1 else (yaml_file.parent / cpath).resolve())
    budgets = _check_budgets(yaml_file, data.get("budgets"))
    budgets_vivado = _check_budgets(yaml_file, data.get("budgets_vivado"))
    core_file = _find_core_file(yaml_file.parent, core, yaml_file)
    return Design(
        name=yaml_file.parent.name, core=core, kind=kind, ports=ports, row_bytes=row_bytes,
        constraints=constraints, expect_gate=expect_gate, budgets=budgets, core_file=core_file,
        yaml_file=yaml_file, budgets_vivado=budgets_vivado,
    )


def all_designs(cores_root: Path = CORES) -> dict[str, Design]:
    """Every design under cores_root, by name, sorted. Any invalid design.yaml raises."""
    return {p.parent.name: load(p) for p in sorted(Path(cores_root).glob("*/design.yaml"))}


def get(name: str | Design, cores_root: Path = CORES) -> Design:
    """One design by name (a Design passes through); unknown names raise listing the known ones."""
    if isinstance(name, Design):
        return name
    yaml_file = Path(cores_root) / name / "design.yaml"
    if not yaml_file.is_file():
        known = sorted(p.parent.name for p in Path(cores_root).glob("*/design.yaml"))
        raise DesignError(
            f"unknown design {name!r}: no {yaml_file}; known designs: {', '.join(known) or '(none)'}"
        )
    return load(yaml_file)
