"""The designs kabe knows: one `cores/<design>/design.yaml` each, loaded into a `Design` record.

design.yaml says what a design *is* (its core, its golden-model kind, how many HP ports, its
budgets); the file list stays in the core file (see kabe.cores).

    core: kabe:design:stage4:0.1.0
    kind: ternary        # a frame builder in kabe.model.frames: probe | int8 | ternary | ...
    ports: 2
    row_bytes: 512
    constraints: pynq_z1.xdc   # looked up in the design's folder, then in the project's constraints/
    expect_gate: pass
    budgets: {dsp: {eq: 0}, lut: {lt: 12000}, logic_levels: {le: 9}}
    regressions: {lut: {max_increase_pct: 5}, wns_ns: {max_decrease: 0.2}}   # vs the base commit (kabe ci)
    waivers: {no_clock: "the PS7's EMIO pins are clocked by the PS, outside the PL's timing"}
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from kabe.errors import UserError, bounded
from .paths import CONSTRAINTS, CORES

# One golden model + frame builder per kind (kabe.model.frames.BUILDERS; a test keeps the two equal).
# Named here rather than imported so that reading the designs (every `doit` start) loads no numpy.
KINDS = ("probe", "int8", "ternary", "attention")
GATE_EXPECTATIONS = ("pass", "fail")
BUDGET_OPS = ("eq", "lt", "le", "gt", "ge")
# Regressions are relative to the base commit's archived build (kabe.regressions judges them).
REGRESSION_OPS = ("max_increase", "max_increase_pct", "max_decrease", "max_decrease_pct")
BEAT_BYTES = 8
_VLNV = re.compile(r"^[A-Za-z0-9_.-]+:[A-Za-z0-9_.-]+:[A-Za-z0-9_.-]+:[A-Za-z0-9_.-]+$")
# libyaml's safe loader when PyYAML was built with it (10x faster; every `doit` start reads these
# files), else the pure-Python one: both accept the same safe subset.
YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
# A design's name is its folder under cores/, and it reaches a shell (Verilator's make), a C #define,
# Tcl and plot titles: letters, digits, '_' and '-', not starting with '-' (it would read as an option).
NAME_PATTERN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_-]{0,63}")
# design.yaml is a few hundred bytes; the cap bounds the time and memory any input can cost.
MAX_YAML_BYTES = 64 * 1024
_FIELDS = ("core", "kind", "ports", "row_bytes", "constraints", "expect_gate", "budgets", "budgets_vivado",
           "regressions", "waivers")
_REQUIRED = ("core", "kind", "ports")
# Gate rules a design may waive in `waivers:`, each only with a written reason (kabe.gate applies them)
WAIVABLE = {"no_clock": "register/latch pins with no clock (check_timing no_clock)"}


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
    # Limits on the change against the base commit, e.g. {lut: {max_increase_pct: 5}}; budgets stay absolute.
    regressions: dict[str, dict[str, float]] = field(default_factory=dict, hash=False, compare=False)
    # Gate rules this design may break on purpose, each with the written reason (WAIVABLE);
    # the reason is printed in the build summary and archived in metrics.json's gate section.
    waivers: dict[str, str] = field(default_factory=dict, hash=False, compare=False)

    def budgets_for(self, flow: str) -> dict[str, dict[str, float]]:
        return {**self.budgets, **self.budgets_vivado} if flow == "vivado" else dict(self.budgets)

    @property
    def directory(self) -> Path:
        return self.yaml_file.parent


def _fail(path: Path, msg: str) -> DesignError:
    return DesignError(f"{path}: {msg}")


def check_name(name: str, where: str = "design name") -> str:
    """name, if it is a valid design name; else DesignError (the name shown bounded, never echoed whole)."""
    if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name):
        raise DesignError(f"{where} {bounded(name)} is not a valid design name (letters, digits, '_' and '-', at "
                          f"most 64, not starting with '-'; a design is a folder of that name under cores/)")
    return name


class _AliasRefused(Exception):
    def __init__(self, line: int):
        self.line = line


def _refuse_aliases(text: str) -> None:
    """No aliases: an anchor and a few nested aliases expand a 500-byte file into billions of nodes
    for whoever walks the result (the 'billion laughs'); no design.yaml needs one. The event stream
    is read without composing anything, so the check costs one fast pass whatever the input."""
    for event in yaml.parse(text, Loader=YAML_LOADER):
        if isinstance(event, yaml.AliasEvent):
            raise _AliasRefused(event.start_mark.line + 1)


def _read_yaml(yaml_file: Path) -> Any:
    try:
        with open(yaml_file, "rb") as f:
            raw = f.read(MAX_YAML_BYTES + 1)
    except OSError as e:
        raise _fail(yaml_file, f"cannot read: {e.strerror}") from None
    if len(raw) > MAX_YAML_BYTES:
        raise _fail(yaml_file, f"is larger than {MAX_YAML_BYTES // 1024} KiB; a design.yaml is a few lines")
    try:
        text = raw.decode("utf-8")
        _refuse_aliases(text)
        return yaml.load(text, Loader=YAML_LOADER)  # noqa: S506 - a safe loader (libyaml's when built with it)
    except UnicodeDecodeError:
        raise _fail(yaml_file, "is not UTF-8 text") from None
    except _AliasRefused as e:
        raise _fail(yaml_file, f"line {e.line} uses a YAML alias (*name), which design.yaml does not allow; "
                               f"write the value out instead") from None
    except yaml.YAMLError as e:
        text = " ".join(str(e).split())
        raise _fail(yaml_file, f"is not valid YAML: {text[:300]}") from None
    except RecursionError:
        raise _fail(yaml_file, "nests too deep to be a design.yaml") from None


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
    raise _fail(yaml_file, f"core {bounded(vlnv)} is not declared by any .core file in {directory} ({found}); "
                           f"make `core:` match the core file's `name:`")


def _key(key: Any) -> str:
    """A mapping key as written (budget names are short words), or bounded when it is anything else."""
    return key if isinstance(key, str) and len(key) <= 40 and key.isprintable() else bounded(key)


def _check_limits(path: Path, spec: Any, *, what: str, ops: tuple[str, ...], op_word: str, example: str,
                  non_negative: bool = False) -> dict[str, dict[str, float]]:
    """A design.yaml table of metric -> {op: number} (budgets and regressions share the shape)."""
    if spec is None:
        return {}
    if not isinstance(spec, dict):
        raise _fail(path, f"{what}s must be a mapping like {example}, got {bounded(spec)}")
    out: dict[str, dict[str, float]] = {}
    for metric, rules in spec.items():
        if not isinstance(rules, dict) or not rules:
            raise _fail(path, f"{what} {bounded(metric)} must map {'an' if op_word[0] in 'aeiou' else 'a'} "
                              f"{op_word} ({'/'.join(ops)}) to a number, got {bounded(rules)}")
        for op, value in rules.items():
            if op not in ops:
                raise _fail(path, f"{what} {bounded(metric)} uses unknown {op_word} {bounded(op)}; "
                                  f"use one of {', '.join(ops)}")
            if isinstance(value, bool) or not isinstance(value, (int, float)) or (non_negative and value < 0):
                raise _fail(path, f"{what} {_key(metric)}.{_key(op)} must be a number"
                                  f"{' >= 0' if non_negative else ''}, got {bounded(value)}")
        out[str(metric)] = dict(rules)
    return out


def _check_budgets(path: Path, budgets: Any) -> dict[str, dict[str, float]]:
    return _check_limits(path, budgets, what="budget", ops=BUDGET_OPS, op_word="operator",
                         example="{dsp: {eq: 0}, lut: {lt: 12000}}")


def _check_regressions(path: Path, spec: Any) -> dict[str, dict[str, float]]:
    return _check_limits(path, spec, what="regression", ops=REGRESSION_OPS, op_word="rule",
                         example="{lut: {max_increase_pct: 5}, wns_ns: {max_decrease: 0.2}}", non_negative=True)


def _check_waivers(path: Path, waivers: Any) -> dict[str, str]:
    if waivers is None:
        return {}
    if not isinstance(waivers, dict):
        raise _fail(path, 'waivers must be a mapping like {no_clock: "why it is safe"}')
    out = {}
    for key, reason in waivers.items():
        if key not in WAIVABLE:
            raise _fail(path, f"waiver {str(key)[:40]!r} is not one kabe knows; waivable: {', '.join(WAIVABLE)}")
        if not isinstance(reason, str) or not reason.strip():
            raise _fail(path, f"waiver {key} needs a written reason (a non-empty string saying why it is safe)")
        out[key] = reason.strip()
    return out


def search_path(yaml_file: Path, name: str) -> list[Path]:
    """Where a file named in design.yaml is looked for: the design's own folder first, then the
    project's constraints/ (an absolute path is only itself)."""
    p = Path(name)
    if p.is_absolute():
        return [p]
    return [(yaml_file.parent / p).resolve(), (CONSTRAINTS / p).resolve()]


def find_file(yaml_file: Path, name: str, key: str) -> Path:
    """The first existing file of search_path(); DesignError naming every place looked in, else."""
    places = search_path(yaml_file, name)
    for p in places:
        if p.is_file():
            return p
    if len(places) == 1:
        raise _fail(yaml_file, f"{key}: {bounded(name)}: no such file; correct `{key}:` or create it")
    raise _fail(yaml_file, f"{key}: {bounded(name)} is in neither the design's folder ({places[0]}) nor the "
                           f"project's constraints/ ({places[1]}); put the file in one of them or correct `{key}:`")


def load(yaml_file: Path) -> Design:
    """Load and validate one design.yaml; raises DesignError naming the file and the fix."""
    yaml_file = Path(yaml_file).resolve()
    check_name(yaml_file.parent.name, f"design folder in {yaml_file.parent.parent}:")
    data = _read_yaml(yaml_file)
    if not isinstance(data, dict):
        raise _fail(yaml_file, "must be a YAML mapping with keys " + ", ".join(_FIELDS))
    unknown = [_key(k) for k in data if k not in _FIELDS]
    if unknown:
        raise _fail(yaml_file, f"unknown key(s) {', '.join(unknown[:5])}; known keys: {', '.join(_FIELDS)}")
    missing = [k for k in _REQUIRED if k not in data]
    if missing:
        raise _fail(yaml_file, f"missing required key(s) {', '.join(missing)}")

    core = data["core"]
    if not isinstance(core, str) or not _VLNV.match(core):
        raise _fail(yaml_file, f"core must be a VLNV vendor:library:name:version, got {bounded(core)}")
    kind = data["kind"]
    if kind not in KINDS:
        raise _fail(yaml_file, f"kind {bounded(kind)} is not one of {', '.join(KINDS)} (the golden models in kabe.model)")
    ports = data["ports"]
    if isinstance(ports, bool) or not isinstance(ports, int) or ports not in (1, 2):
        raise _fail(yaml_file, f"ports must be 1 or 2 (HP ports used), got {bounded(ports)}")
    row_bytes = data.get("row_bytes", 512)
    if isinstance(row_bytes, bool) or not isinstance(row_bytes, int) or row_bytes <= 0 or row_bytes % BEAT_BYTES:
        raise _fail(yaml_file, f"row_bytes must be a positive multiple of {BEAT_BYTES}, got {bounded(row_bytes)}")
    expect_gate = data.get("expect_gate", "pass")
    if expect_gate not in GATE_EXPECTATIONS:
        raise _fail(yaml_file, f"expect_gate must be one of {', '.join(GATE_EXPECTATIONS)}, got {bounded(expect_gate)}")
    constraints_name = data.get("constraints", "pynq_z1.xdc")
    if not isinstance(constraints_name, str) or not constraints_name or "\0" in constraints_name:
        raise _fail(yaml_file, f"constraints must be a file name (in the design's folder or the project's "
                               f"constraints/), got {bounded(constraints_name)}")
    constraints = find_file(yaml_file, constraints_name, "constraints")
    budgets = _check_budgets(yaml_file, data.get("budgets"))
    budgets_vivado = _check_budgets(yaml_file, data.get("budgets_vivado"))
    regressions = _check_regressions(yaml_file, data.get("regressions"))
    waivers = _check_waivers(yaml_file, data.get("waivers"))
    core_file = _find_core_file(yaml_file.parent, core, yaml_file)
    return Design(
        name=yaml_file.parent.name, core=core, kind=kind, ports=ports, row_bytes=row_bytes,
        constraints=constraints, expect_gate=expect_gate, budgets=budgets, core_file=core_file,
        yaml_file=yaml_file, budgets_vivado=budgets_vivado, regressions=regressions, waivers=waivers,
    )


def all_designs(cores_root: Path = CORES) -> dict[str, Design]:
    """Every design under cores_root, by name, sorted. Any invalid design.yaml raises."""
    return {p.parent.name: load(p) for p in sorted(Path(cores_root).glob("*/design.yaml"))}


def names(cores_root: Path = CORES) -> list[str]:
    """The design folders under cores_root (each with a design.yaml), sorted, without reading any."""
    return sorted(p.parent.name for p in Path(cores_root).glob("*/design.yaml"))


def scan(cores_root: Path = CORES) -> tuple[dict[str, Design], dict[str, DesignError]]:
    """Every design under cores_root, split into those that load and those that do not (name -> the
    one-line error): one broken design.yaml stops only its own tasks, not `doit list` or the others."""
    good: dict[str, Design] = {}
    broken: dict[str, DesignError] = {}
    for p in sorted(Path(cores_root).glob("*/design.yaml")):
        try:
            good[p.parent.name] = load(p)
        except DesignError as e:
            broken[p.parent.name] = e
    return good, broken


def get(name: str | Design, cores_root: Path = CORES) -> Design:
    """One design by name (a Design passes through); unknown names raise listing the known ones."""
    if isinstance(name, Design):
        return name
    check_name(name)  # before it becomes a path: "../../x/evil" names no design of this checkout
    yaml_file = Path(cores_root) / name / "design.yaml"
    if not yaml_file.is_file():
        known = sorted(p.parent.name for p in Path(cores_root).glob("*/design.yaml"))
        raise DesignError(
            f"unknown design {bounded(name)}: no {yaml_file}; known designs: {', '.join(known) or '(none)'}"
        )
    return load(yaml_file)
