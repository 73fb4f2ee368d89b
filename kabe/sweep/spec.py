"""A sweep: `cores/<design>/sweep.yaml`, a grid or a list of variants, with command-line overrides.

    flow: open                               # optional; default: the project's flow
    grid:                                    # every combination of these settings
      generator.adder_tree.stages: [2, 3]
      clock_period_ns: [7.0, 8.0, 10.0]
    variants:                                # and/or a list, each item one variant's settings
      - {synth_options: [-nodsp]}

Setting keys (one namespace, so a variant is a flat mapping that hashes the same everywhere):

    param.<NAME>                 a core parameter (vlogparam/vlogdefine) of the design's core
    generator.<name>.<param>     a parameter of the core's `generate:` entry <name> (e.g. the adder tree)
    clock_period_ns              the XDC clock period
    synth_options                extra synthesis options (open flow: synth_xilinx options, e.g. -nodsp)
    vivado.<setting>             Vivado strategies and directives (vivado flow): synth_strategy,
                                 impl_strategy, synth_directive, opt_directive, place_directive,
                                 route_directive

A variant's id is a short hash of its settings (canonical JSON), so the same settings get the same
folder in every sweep and on every machine.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kabe.base.errors import UserError

SCALAR_KEYS = ("clock_period_ns",)
LIST_KEYS = ("synth_options",)
PREFIXES = ("param.", "generator.", "vivado.")
VIVADO_SETTINGS = ("synth_strategy", "impl_strategy", "synth_directive", "opt_directive", "place_directive",
                   "route_directive")
MAX_VARIANTS = 4096  # a typo in a grid should not queue a million builds
_ID_CHARS = 10


class SweepError(UserError):
    """A sweep.yaml or an override that cannot be used; the message names the file, key and fix."""


@dataclass(frozen=True)
class Variant:
    settings: dict[str, Any]

    @property
    def id(self) -> str:
        return variant_id(self.settings)

    def label(self) -> str:
        return ", ".join(f"{k}={_show(v)}" for k, v in sorted(self.settings.items())) or "(baseline)"


@dataclass(frozen=True)
class Sweep:
    design: str
    flow: str | None
    variants: tuple[Variant, ...]
    source: str  # the file (or "command line") the variants came from


def variant_id(settings: dict[str, Any]) -> str:
    canonical = json.dumps(settings, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:_ID_CHARS]


def _show(v: Any) -> str:
    return " ".join(map(str, v)) if isinstance(v, list) else str(v)


def check_setting(key: str, value: Any, where: str) -> Any:
    """One setting, validated; returns its normalised value."""
    if not isinstance(key, str):
        raise SweepError(f"{where}: setting names are strings, got {str(key)[:40]}")
    if key in SCALAR_KEYS:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
            raise SweepError(f"{where}: {key} must be a positive number of ns, got {str(value)[:40]}")
        return float(value)
    if key in LIST_KEYS:
        if isinstance(value, str):
            value = value.split()
        if not isinstance(value, list) or not all(isinstance(o, str) and o.startswith("-") for o in value):
            raise SweepError(f"{where}: {key} must be a list of options like [-nodsp], got {str(value)[:60]}")
        return list(value)
    if key.startswith("vivado."):
        name = key.split(".", 1)[1]
        if name not in VIVADO_SETTINGS:
            raise SweepError(f"{where}: unknown Vivado setting {name[:40]}; known: {', '.join(VIVADO_SETTINGS)}")
        if not isinstance(value, str) or not value.replace("_", "").replace("-", "").isalnum():
            raise SweepError(f"{where}: {key} must be a Vivado strategy or directive name, got {str(value)[:40]}")
        return value
    if key.startswith(("param.", "generator.")):
        parts = key.split(".")
        if (key.startswith("param.") and len(parts) != 2) or (key.startswith("generator.") and len(parts) != 3) \
                or not all(p.replace("_", "").isalnum() for p in parts[1:]):
            raise SweepError(f"{where}: {key[:60]} is not param.<NAME> or generator.<name>.<param>")
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            raise SweepError(f"{where}: {key} must be a number or a string, got {str(value)[:40]}")
        return value
    raise SweepError(f"{where}: unknown setting {key[:60]}; use {', '.join(SCALAR_KEYS + LIST_KEYS)} or "
                     f"a key starting with {', '.join(PREFIXES)}")


def _variant(mapping: Any, where: str) -> Variant:
    if not isinstance(mapping, dict):
        raise SweepError(f"{where}: a variant is a mapping of settings, got {type(mapping).__name__}")
    return Variant({k: check_setting(k, v, where) for k, v in mapping.items()})


def expand(grid: dict[str, list] | None, variants: list | None, where: str) -> tuple[Variant, ...]:
    """The grid's combinations, then the listed variants; duplicates (same id) kept once."""
    out: dict[str, Variant] = {}
    if grid:
        if not isinstance(grid, dict):
            raise SweepError(f"{where}: grid must map each setting to a list of values")
        keys = list(grid)
        values = []
        for k in keys:
            vs = grid[k] if isinstance(grid[k], list) else [grid[k]]
            if k in LIST_KEYS and vs and not isinstance(vs[0], list):
                vs = [vs]  # synth_options: [-nodsp] is one value, not two
            values.append([check_setting(k, v, f"{where}: grid") for v in vs])
        count = 1
        for vs in values:
            count *= len(vs)
        if count > MAX_VARIANTS:
            raise SweepError(f"{where}: the grid has {count} combinations, more than {MAX_VARIANTS}")
        for combo in itertools.product(*values):
            v = Variant(dict(zip(keys, combo)))
            out.setdefault(v.id, v)
    for i, item in enumerate(variants or []):
        v = _variant(item, f"{where}: variants[{i}]")
        out.setdefault(v.id, v)
    if not out:
        raise SweepError(f"{where}: no variants; give `grid:` or `variants:`")
    return tuple(out.values())


def parse_override(text: str) -> tuple[str, list]:
    """`clock_period_ns=7,8,10` -> ("clock_period_ns", [7.0, 8.0, 10.0]): one grid axis from the command line."""
    import yaml

    if "=" not in text:
        raise SweepError(f"override {text[:60]} is not key=value[,value...]")
    key, _, raw = text.partition("=")
    values = [yaml.safe_load(x) for x in raw.split(",")] if key not in LIST_KEYS else [raw.split()]
    return key.strip(), values


def load(design, path: Path | None = None, overrides: list[str] = ()) -> Sweep:
    """design: a kabe.project.designs.Design. The sweep file defaults to sweep.yaml beside design.yaml;
    overrides (key=v1,v2) replace or add grid axes."""
    import yaml

    path = Path(path) if path else design.directory / "sweep.yaml"
    data: dict = {}
    if path.is_file():
        if path.stat().st_size > 1 << 20:
            raise SweepError(f"{path}: larger than 1 MiB; a sweep file is a few lines")
        try:
            data = yaml.safe_load(path.read_text()) or {}
        except yaml.YAMLError as e:
            raise SweepError(f"{path}: not valid YAML ({str(e).splitlines()[0][:120]})") from None
        if not isinstance(data, dict):
            raise SweepError(f"{path}: must be a mapping with grid: and/or variants:")
        unknown = sorted(set(map(str, data)) - {"flow", "grid", "variants"})
        if unknown:
            raise SweepError(f"{path}: unknown key(s) {', '.join(unknown)[:80]}; known: flow, grid, variants")
    elif not overrides:
        raise SweepError(f"{path}: no sweep file; write one (see kabe/sweep/spec.py) or give key=values on the "
                         f"command line, e.g. clock_period_ns=7,8")
    grid = dict(data.get("grid") or {})
    for text in overrides:
        key, values = parse_override(text)
        grid[key] = values
    flow = data.get("flow")
    if flow is not None and not isinstance(flow, str):
        raise SweepError(f"{path}: flow must be a flow name, got {str(flow)[:40]}")
    where = str(path) if path.is_file() else "command line"
    return Sweep(design.name, flow, expand(grid, data.get("variants"), where), where)
