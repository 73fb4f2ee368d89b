"""kabe's settings: [tool.kabe] in pyproject.toml, overridden by doit command-line variables.

Every key kabe reads is declared once, here: SETTINGS for [tool.kabe], BOARD_SETTINGS for
[tool.kabe.board], SWEEP_SETTINGS for [tool.kabe.sweep], each with the type and values it allows and
its default. load() checks the whole section against these tables, so a wrong type is one line naming
the key, the value and what was expected (ConfigError, exit 2), never a value taken as it comes
(`fail_on_unconstrained = "false"` read as true, `vivado_version = []` silently unpinning) or a
traceback deep inside a flow. An unknown key is refused as well: a misspelt key would otherwise be a
setting silently not applied.
"""

from __future__ import annotations

import json
import math
import re
import shutil
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

from kabe.base.errors import UserError, bounded
from kabe.base import ssh_policy
from kabe.base.paths import DIR_KEYS, ROOT
from kabe.project import flows as flow_registry

FLOWS = (*flow_registry.FLOWS, "auto")
_CALLABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*")
VERSION_POLICIES = ("warn", "fail")


class ConfigError(UserError, ValueError):
    pass


@dataclass(frozen=True)
class Setting:
    key: str
    expected: str  # what a valid value looks like, as the error message says it
    valid: Callable[[Any], bool]
    default: Any = None  # None: the reader keeps its own default (the board's are in DeploySettings)
    problem: Callable[[Any], str | None] | None = None  # a valid-typed value's own refusal, as one sentence


def _one_of(*choices: str) -> Callable[[Any], bool]:
    return lambda v: isinstance(v, str) and v in choices


def _text(v: Any) -> bool:
    """A non-empty single-line string: these end up on command lines and in Tcl."""
    return isinstance(v, str) and v.strip() != "" and not any(c in v for c in "\n\r\0")


def _boolean(v: Any) -> bool:
    return isinstance(v, bool)


def _positive_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v > 0


def _positive_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v > 0


def _port(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= 65535


def _project_folder(v: Any) -> bool:
    return _text(v) and not Path(v).is_absolute() and ".." not in Path(v).parts


def _string_table(v: Any) -> bool:
    return isinstance(v, dict) and all(_text(k) and _text(x) for k, x in v.items())


# Vivado strategies and directives (vivado_<key>), e.g. from a sweep variant; "" is Vivado's default.
VIVADO_STRATEGY_KEYS = ("synth_strategy", "impl_strategy", "synth_directive", "opt_directive", "place_directive",
                        "route_directive")
_VIVADO_NAME = re.compile(r"[A-Za-z0-9_-]*")
_VIVADO_VERSION = re.compile(r"(\d{4}\.\d+(?:\.\d+)?)?")  # "" pins nothing
_BOOL = "true or false (a TOML boolean, not a string)"

SETTINGS: dict[str, Setting] = {s.key: s for s in (
    # the board of a design.yaml that names none (`kabe init` writes it; kabe itself has no default board)
    Setting("default_board", 'a board profile\'s name, like "pynq-z1" (kabe/boards/profiles, or boards/)',
            lambda v: isinstance(v, str) and re.fullmatch(r"[A-Za-z0-9_ -]{1,64}", v) is not None, None),
    Setting("flow", "one of " + ", ".join(f'"{f}"' for f in FLOWS), _one_of(*FLOWS), "auto"),
    Setting("vivado_version", 'a Vivado version as a string, like "2023.2" ("" pins nothing)',
            lambda v: isinstance(v, str) and _VIVADO_VERSION.fullmatch(v) is not None, ""),
    Setting("vivado_version_mismatch", " or ".join(f'"{p}"' for p in VERSION_POLICIES),
            _one_of(*VERSION_POLICIES), "warn"),
    Setting("vivado_timeout_s", "a positive number of seconds", _positive_number, 6 * 3600),
    Setting("vivado_jobs", "a positive integer (parallel Vivado jobs)", _positive_int, 2),
    Setting("fail_on_unconstrained", _BOOL, _boolean, False),
    # the Vivado IP cache's folder (kabe/flows/vivado/ip_cache.py); "" is the project's build/ip_cache.
    # Where it is changes no output (units are content-addressed): not in any build's key
    Setting("vivado_ip_cache", 'a folder path, like "/shared/kabe_ip_cache" ("": build/ip_cache)',
            lambda v: v == "" or _text(v), ""),
    # the V80's base design: an AVED checkout's hardware folder (kabe/flows/vivado/versal.py, docs/v80.md)
    Setting("vivado_aved_dir", 'the path of an AVED checkout\'s hardware folder, like "../AVED/hw/amd_v80_gen5x8_25.1"',
            lambda v: v == "" or _text(v), ""),
    # the open flow's band: the share of a new design's paths it is calibrated to hold (design-level
    # conformal, scripts/calibrate_timing.py --write; docs/timing_model.md)
    Setting("timing_band_coverage", "a share between 0.5 and 0.95, like 0.8",
            lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and 0.5 <= v <= 0.95, 0.8),
    *(Setting(f"vivado_{k}", "a Vivado strategy or directive name (letters, digits, _ and -)",
              lambda v: isinstance(v, str) and _VIVADO_NAME.fullmatch(v) is not None, "")
      for k in VIVADO_STRATEGY_KEYS),
    Setting("archive_ref", 'a git ref for the shared archive, like "refs/kabe/archive" (kabe/store/store.py)',
            lambda v: isinstance(v, str) and re.fullmatch(r"refs/[A-Za-z0-9._/-]+", v) is not None and ".." not in v,
            "refs/kabe/archive"),
    # the most one archive fetch may store (kabe/store/git_fetch.py); the disk floor applies as well
    Setting("archive_fetch_max_mb", "a positive integer of MB (8192: 8 GiB)", _positive_int, 8192),
    Setting("allowed_signers", 'the path of the allowed-signers file for archive signatures, like ".kabe/allowed_signers" '
            '(git\'s gpg.ssh.allowedSignersFile format; docs/archive.md)', _text, ".kabe/allowed_signers"),
    Setting("default_branch", 'the base branch\'s name, like "main" (kabe ci judges regressions against it)',
            lambda v: _text(v) and re.fullmatch(r"[A-Za-z0-9._/-]+", v) is not None and not v.startswith("-"), None),
    # who a change's pipeline trusts besides the default branch (kabe/store/trusted_settings.py): only ever
    # read from the default branch's commit, never from the change
    Setting("trusted_branches", 'a list of branch names, like ["release"], whose allowed signers a change '
            'targeting them trusts', lambda v: isinstance(v, list) and all(
                _text(b) and re.fullmatch(r"[A-Za-z0-9._/-]+", b) and not b.startswith("-") for b in v), []),
    Setting("archive_root", "the full commit id of the archive ref's first commit, which every pull checks",
            lambda v: isinstance(v, str) and re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", v) is not None, None),
    Setting("unknown_ci", '"change" (a CI kabe does not recognise runs for a change) or "default-branch" (its run '
            'at the default branch\'s tip is that branch\'s own)', _one_of("change", "default-branch"), "change"),
    Setting("sweep", "a table: [tool.kabe.sweep] with cluster = \"local\" | \"slurm\" | \"lsf\" | \"sge\" "
            "(kabe/sweep/cluster.py)", lambda v: isinstance(v, dict), {}),
    Setting("board", 'a table: a [tool.kabe.board] section with host = "user@host"',
            lambda v: isinstance(v, dict), {}),
    # the report page's sections the project adds: its own functions (kabe.page.page_hooks); none by default
    Setting("page_sections", 'a list of the project\'s page-section functions, like ["mypkg.page:latency"] '
            '(kabe/page/page_hooks.py)',
            lambda v: isinstance(v, list) and all(isinstance(x, str) and _CALLABLE.fullmatch(x) for x in v), []),
    # the project's folders (kabe.base.paths reads them when kabe starts): relative to the project's root
    *(Setting(key, f'a folder inside the project, relative to its root, like "{default}"', _project_folder, default)
      for key, default in DIR_KEYS.items()),
)}

BOARD_SETTINGS: dict[str, Setting] = {s.key: s for s in (
    Setting("host", 'a string "user@host"', _text),
    Setting("remote_dir", "a folder on the board, as a string", _text),
    Setting("sudo", _BOOL, _boolean),
    Setting("python", "the board's Python command, as a string", _text),
    # which board profile the host is (kabe doctor --deploy checks its PYNQ against the profile's deploy.pynq)
    Setting("profile", 'a board profile\'s name, like "pynq-z1" or "kv260"', _text),
    Setting("port", "a port number from 1 to 65535", _port),
    Setting("identity", "the path of an SSH private key, as a string", _text),
    Setting("ssh_options", "a table of ssh -o options, each a string", _string_table,
            problem=ssh_policy.options_problem),  # an allow-list: docs/deploy.md
    Setting("timeout_s", f"a positive number of seconds, at most {ssh_policy.MAX_TIMEOUT_S} (a day)",
            ssh_policy.timeout_ok),  # why the bound: kabe/base/ssh_policy.py
    Setting("transfer_mb", "a positive integer (MB per DMA transfer)", _positive_int),
    Setting("allow_dirty", _BOOL, _boolean),
    # an ami_tool board (the V80, kabe/deploy/ami.py): the card's PCIe address, and the command
    Setting("bdf", 'the card\'s PCIe address as ami_tool takes it, like "21:00.0"', ssh_policy.bdf_ok),
    Setting("ami_tool", "one command name or path, like \"ami_tool\"", ssh_policy.command_ok),
)}

# [tool.kabe.sweep] (kabe/sweep/cluster.py, docs/sweeps.md). A farm table is passed to dask-jobqueue as
# it is; the tls_* files are the farm scheduler's certificates (one CA, one cert/key for every role).
SWEEP_SETTINGS: dict[str, Setting] = {s.key: s for s in (
    Setting("cluster", '"local", "slurm", "lsf" or "sge"', _one_of("local", "slurm", "lsf", "sge")),
    Setting("jobs", "a positive integer (farm jobs, one worker each)", _positive_int),
    *(Setting(kind, f"a table: [tool.kabe.sweep.{kind}], passed to dask-jobqueue", lambda v: isinstance(v, dict))
      for kind in ("slurm", "lsf", "sge")),
    Setting("tls_ca_file", "the path of the CA certificate (PEM) that signed the cluster's certificates", _text),
    Setting("tls_cert", "the path of this cluster's TLS certificate (PEM)", _text),
    Setting("tls_key", "the path of the private key (PEM) of tls_cert", _text),
)}


def _shown(value: Any) -> str:
    """A TOML value as the user wrote it (true, "no", [], 3), cut to a line."""
    try:
        text = json.dumps(value, default=str)
    except (TypeError, ValueError):
        text = bounded(value)
    return text if len(text) <= 60 else text[:57] + "..."


def validate(values: Mapping[str, Any], *, table: Mapping[str, Setting] = SETTINGS,
             section: str = "[tool.kabe]", source: str = "pyproject.toml") -> dict[str, Any]:
    """The settings as given, once every key is known and every value has its type; else ConfigError."""
    if not isinstance(values, Mapping):
        raise ConfigError(f"{source} {section} = {_shown(values)}: expected a table of settings")
    for key, value in values.items():
        setting = table.get(key)
        if setting is None:
            raise ConfigError(f"{source} {section} has an unknown key {bounded(key)}; known keys: {', '.join(table)}")
        if not setting.valid(value):
            raise ConfigError(f"{source} {section} {key} = {_shown(value)}: expected {setting.expected}")
        why = setting.problem(value) if setting.problem else None
        if why:
            raise ConfigError(f"{source} {section} {key}: {why}")
    if table is SETTINGS and "board" in values:
        validate(values["board"], table=BOARD_SETTINGS, section="[tool.kabe.board]", source=source)
    if table is SETTINGS and "sweep" in values:
        validate(values["sweep"], table=SWEEP_SETTINGS, section="[tool.kabe.sweep]", source=source)
    return dict(values)


def load(pyproject: Path = ROOT / "pyproject.toml") -> dict[str, Any]:
    """[tool.kabe], validated against SETTINGS (keys not set are absent: ask value() for defaults)."""
    try:
        with open(pyproject, "rb") as f:
            data = tomllib.load(f)
    except FileNotFoundError:
        return {}
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{pyproject}: not valid TOML ({e}); fix the file") from None
    tool = data.get("tool", {})
    section = tool.get("kabe", {}) if isinstance(tool, dict) else {}
    return validate(section, source=str(pyproject))


def value(settings: Mapping[str, Any], key: str) -> Any:
    """One [tool.kabe] setting, or its declared default."""
    return settings.get(key, SETTINGS[key].default)


def resolve_flow(requested: str | None, settings: dict[str, Any] | None = None) -> str:
    """open | vivado. auto (the default) means vivado when `vivado` is on PATH, else open."""
    settings = load() if settings is None else validate(settings)
    if requested and requested not in FLOWS:
        raise ConfigError(f"flow={bounded(requested)} (command line) is not a kabe flow; use one of {', '.join(FLOWS)}")
    flow = requested or value(settings, "flow")
    if flow == "auto":  # the first flow whose tool is on PATH (Vivado before the open flow)
        return next((f for f in flow_registry.AUTO_ORDER if shutil.which(flow_registry.FLOWS[f].executable)),
                    flow_registry.DEFAULT)
    return flow
