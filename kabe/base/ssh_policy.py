"""What kabe's settings may tell ssh: an allow-list of `-o` options, and the bounds of a board's port and timeout.

`[tool.kabe.board]` lives in pyproject.toml, which a pull request can edit, so its ssh options are
input, not configuration. OpenSSH's own rule is that options which load or run code are
configuration (~/.ssh/config, which only the user writes); kabe takes from its settings only what a
board deploy needs, each with the values that option can sensibly have, and refuses everything
else by name. A deny-list was not enough: it refused ProxyCommand and still let PKCS11Provider load a
library of the settings' choosing into ssh before key exchange.

This module imports nothing of kabe, so both the settings check (kabe.project.config, at load time) and
kabe.deploy.ssh (every Target, however made) use the same list. docs/deploy.md documents it.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Mapping

# The board's login name, as kabe.deploy.ssh also checks it in a board spec.
USER_RE = re.compile(r"[A-Za-z0-9_.][A-Za-z0-9_.-]*")
_DIGITS = re.compile(r"[0-9]{1,6}")  # ASCII only: str.isdigit() also takes '²' and Arabic-Indic digits

# A board run is one design's rows on one board: even the largest, pushed over a slow link, is minutes.
# A day is far beyond any real run and still a number subprocess's timeout can take (1e300 passed the
# old check, then overflowed inside ssh.run); a longer wait is a hung board, not a long run.
MAX_TIMEOUT_S = 24 * 3600


def ascii_int(text: str, lo: int, hi: int) -> int | None:
    """text as an integer in [lo, hi] when it is ASCII digits only, else None."""
    if not isinstance(text, str) or not _DIGITS.fullmatch(text):
        return None
    n = int(text)
    return n if lo <= n <= hi else None


# A PCIe address as ami_tool's -d takes it (AVED's docs: "21:00.0"): [domain:]bus:device.function in hex.
# It goes on the card host's command line, so nothing else (an option, a space, a shell word) may pass.
BDF_RE = re.compile(r"(?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-1][0-9a-fA-F]\.[0-7]")


def bdf_ok(v: Any) -> bool:
    return isinstance(v, str) and BDF_RE.fullmatch(v) is not None


def command_ok(v: Any) -> bool:
    """One command name or absolute path for the host's command line (ami_tool): no option, no whitespace."""
    return isinstance(v, str) and re.fullmatch(r"[A-Za-z0-9_./][A-Za-z0-9_./+-]*", v) is not None


def timeout_ok(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and 0 < v <= MAX_TIMEOUT_S


def _int_in(lo: int, hi: int) -> Callable[[str], bool]:
    return lambda v: ascii_int(v, lo, hi) is not None


def _choice(*values: str) -> Callable[[str], bool]:
    return lambda v: v.lower() in values


def _one_path(v: str) -> bool:
    # ssh splits this value on whitespace into several files: one path (or "none"), read, never run
    return v != "" and not re.search(r"\s", v)


_YES_NO = _choice("yes", "no")

# name (lower case, as ssh compares them) -> (the name as documented, the values allowed, what they look like)
ALLOWED: dict[str, tuple[str, Callable[[str], bool], str]] = {o[0].lower(): o for o in (
    # how long to wait and when to give up on a board that stopped answering
    ("ConnectTimeout", _int_in(1, 3600), "a whole number of seconds, 1-3600"),
    ("ConnectionAttempts", _int_in(1, 100), "a whole number, 1-100"),  # a board still booting
    ("ServerAliveInterval", _int_in(0, 3600), "a whole number of seconds, 0-3600"),
    ("ServerAliveCountMax", _int_in(0, 1000), "a whole number, 0-1000"),
    ("TCPKeepAlive", _YES_NO, "yes or no"),
    # which key and login: the key file itself only through [tool.kabe.board] identity
    ("IdentitiesOnly", _YES_NO, "yes or no"),
    ("User", lambda v: USER_RE.fullmatch(v) is not None, "a user name (letters, digits, '.', '_', '-')"),
    ("Port", _int_in(1, 65535), "a port number, 1-65535"),
    ("AddressFamily", _choice("any", "inet", "inet6"), "any, inet or inet6"),  # a dual-stack board name
    ("Compression", _YES_NO, "yes or no"),  # a bitstream over a slow link
    # the host keys to check the board against (the deploy tests' own known_hosts): files read, not run
    ("UserKnownHostsFile", _one_path, "one file path, no spaces"),
    ("GlobalKnownHostsFile", _one_path, "one file path, no spaces"),
    ("LogLevel", _choice("quiet", "fatal", "error", "info", "verbose", "debug", "debug1", "debug2", "debug3"),
     "QUIET, FATAL, ERROR, INFO, VERBOSE or DEBUG1-3"),  # quiet in tests, verbose to debug a connect
    # kabe always sets these to yes (never prompt, never accept an unknown host key): only yes is taken
    ("BatchMode", _choice("yes"), "yes (kabe never lets ssh prompt)"),
    ("StrictHostKeyChecking", _choice("yes"), "yes (kabe never accepts an unknown or changed host key)"),
)}

# Why a known option is refused, where a reason says more than "not on the list".
_LOADS_CODE = "loads a shared library into ssh on this machine"
_RUNS_COMMAND = "runs a command on this machine"
_FORWARDS = "opens a channel between this machine and the board"
_ENVIRONMENT = "sends this machine's environment to the board"
_REDIRECTS = "sends the connection to another host than the board named by board= / host"
_MORE_CONFIG = "reads more ssh configuration"
_REFUSED: dict[str, str] = {
    **dict.fromkeys(("pkcs11provider", "securitykeyprovider"), _LOADS_CODE),
    **dict.fromkeys(("proxycommand", "localcommand", "permitlocalcommand", "knownhostscommand", "remotecommand",
                     "proxyusefdpass", "sessiontype"), _RUNS_COMMAND),
    **dict.fromkeys(("forwardagent", "forwardx11", "forwardx11trusted", "remoteforward", "localforward",
                     "dynamicforward", "tunnel", "tunneldevice", "streamlocalbindunlink", "controlmaster",
                     "controlpath", "controlpersist", "identityagent"), _FORWARDS),
    **dict.fromkeys(("sendenv", "setenv"), _ENVIRONMENT),
    **dict.fromkeys(("hostname", "proxyjump", "hostkeyalias", "canonicalizehostname"), _REDIRECTS),
    **dict.fromkeys(("include", "match", "host"), _MORE_CONFIG),
}
_IDENTITY_FILES = ("identityfile", "certificatefile")


def option_problem(name: Any, value: Any) -> str | None:
    """Why `-o name=value` may not come from kabe's settings, as the end of one sentence; None when it may."""
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z][A-Za-z0-9]*", name) \
            or not isinstance(value, str) or re.search(r"[\x00-\x1f\x7f]", value):
        return "is not NAME=VALUE on one line"
    key = name.lower()
    if key in ALLOWED:
        _, valid, expected = ALLOWED[key]
        return None if valid(value) else f"takes {expected}, not {value[:40]!r}; fix [tool.kabe.board] ssh_options"
    if key in _IDENTITY_FILES:
        return "is not taken from ssh_options; name the key with [tool.kabe.board] identity"
    reason = _REFUSED.get(key)
    if reason:
        return f"{reason}, so kabe does not take it from its settings; put it in ~/.ssh/config for this host"
    return ("is not one of the ssh options kabe takes from its settings (docs/deploy.md lists them); it takes "
            f"{', '.join(o[0] for o in ALLOWED.values())}; put any other in ~/.ssh/config for this host")


def options_problem(options: Mapping[str, Any]) -> str | None:
    """The first refused option of a table, as one sentence naming it; None when every one is allowed."""
    for name, value in options.items():
        why = option_problem(name, value)
        if why:
            return f"ssh option {str(name)[:40]} {why}"
    return None
