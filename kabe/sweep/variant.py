"""Applying one variant to a scratch copy of the commit's tree.

The variant becomes ordinary inputs (the core file's parameter defaults and generator parameters,
the XDC's period, the synth target's options, [tool.kabe] Vivado settings), so the build that runs
in the copy is the normal build: the same code path, the same gate, the same archive. Every edit is
checked (a parameter the core does not declare, an XDC with several clocks) and refused with the file
named, never applied half-way.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from kabe.sweep.spec import SweepError

_PERIOD = re.compile(r"(create_clock\b[^\n]*?-period\s+)([0-9.eE+-]+)")


def _load_core(path: Path) -> dict:
    data = yaml.safe_load(path.read_text())
    if not isinstance(data, dict):
        raise SweepError(f"{path}: not a CAPI2 core mapping")
    return data


def _write_core(path: Path, data: dict) -> None:
    # Generated into the scratch tree only. "CAPI=2:" reads as a key of its own; it goes back on line 1.
    body = {k: v for k, v in data.items() if k != "CAPI=2"}
    path.write_text("CAPI=2:\n# Written by kabe.sweep.variant for one sweep variant (scratch copy).\n"
                    + yaml.safe_dump(body, sort_keys=False))


def _set_param(core: dict, name: str, value: Any, core_file: Path) -> None:
    params = core.get("parameters") or {}
    if name not in params:
        raise SweepError(f"{core_file}: the core declares no parameter {name}; declared: "
                         f"{', '.join(params) or '(none)'}")
    params[name]["default"] = value


def _set_generator(core: dict, gen: str, param: str, value: Any, core_file: Path) -> None:
    generate = core.get("generate") or {}
    if gen not in generate:
        raise SweepError(f"{core_file}: the core has no generate entry {gen}; entries: {', '.join(generate) or '(none)'}")
    params = generate[gen].setdefault("parameters", {})
    if param not in params:
        raise SweepError(f"{core_file}: generator {gen} has no parameter {param}; parameters: "
                         f"{', '.join(params) or '(none)'}")
    params[param] = value


def _add_synth_options(core: dict, options: list[str], core_file: Path) -> None:
    synth = (core.get("targets") or {}).get("synth")
    if not isinstance(synth, dict):
        raise SweepError(f"{core_file}: no synth target to add synthesis options to")
    flow_options = synth.setdefault("flow_options", {})
    key = "yosys_synth_options" if "yosys_synth_options" in flow_options or "synth_options" not in flow_options \
        else "synth_options"
    flow_options[key] = list(flow_options.get(key) or []) + list(options)


def set_clock_period(xdc: Path, period_ns: float) -> None:
    text = xdc.read_text()
    found = _PERIOD.findall(text)
    if len(found) != 1:
        raise SweepError(f"{xdc}: clock_period_ns needs exactly one create_clock -period; found {len(found)}")
    xdc.write_text(_PERIOD.sub(lambda m: f"{m.group(1)}{period_ns:.3f}", text))


def set_kabe_settings(pyproject: Path, values: dict[str, str]) -> None:
    """Put `key = "value"` lines into pyproject.toml's [tool.kabe] table (replacing a key already set)."""
    lines = pyproject.read_text().splitlines()
    try:
        start = lines.index("[tool.kabe]")
    except ValueError:
        lines += ["", "[tool.kabe]"]
        start = len(lines) - 1
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("[")), len(lines))
    for key, value in values.items():
        line = f'{key} = "{value}"'
        at = next((i for i in range(start + 1, end) if re.match(rf"{re.escape(key)}\s*=", lines[i])), None)
        if at is None:
            lines.insert(start + 1, line)
            end += 1
        else:
            lines[at] = line
    pyproject.write_text("\n".join(lines) + "\n")


def apply(tree: Path, core_file: str, xdc_file: str, settings: dict[str, Any]) -> None:
    """Edit the scratch tree so that building the design there builds this variant. core_file and
    xdc_file are the design's core file and XDC, relative to the tree's root."""
    core_path, xdc_path = tree / core_file, tree / xdc_file
    core = _load_core(core_path)
    core_changed = False
    vivado: dict[str, str] = {}
    for key, value in settings.items():
        if key.startswith("param."):
            _set_param(core, key.split(".", 1)[1], value, Path(core_file))
            core_changed = True
        elif key.startswith("generator."):
            _, gen, param = key.split(".")
            _set_generator(core, gen, param, value, Path(core_file))
            core_changed = True
        elif key == "synth_options":
            _add_synth_options(core, value, Path(core_file))
            core_changed = True
        elif key == "clock_period_ns":
            set_clock_period(xdc_path, value)
        elif key.startswith("vivado."):
            vivado[f"vivado_{key.split('.', 1)[1]}"] = value
        else:  # spec.check_setting admits nothing else
            raise SweepError(f"unknown setting {key}")
    if core_changed:
        _write_core(core_path, core)
    if vivado:
        set_kabe_settings(tree / "pyproject.toml", vivado)
