"""The OpenSSH client, used the way users expect: their ~/.ssh/config, keys and jump hosts apply.

Every remote command is an argv list quoted with shlex.quote, never a string pasted together, so a
path or argument cannot inject shell syntax. BatchMode=yes means ssh never prompts (and so never
sees a password to leak); StrictHostKeyChecking=yes means an unknown host key is refused, never
silently accepted. Failures are classified into one clear error each.

A board spec comes from the command line (board=) or from pyproject.toml, which a pull request can
edit, so it is untrusted: a user, host or remote folder that starts with `-` (OpenSSH would read
`-oProxyCommand=...` as an option and run it here), or holds whitespace or control characters, is
refused before any process starts. The destination always follows `--`, so neither ssh nor scp can
read it as an option, and scp speaks SFTP (-s): the legacy protocol (`scp -O`, the default before
OpenSSH 9.0) hands the remote path to the board's shell. ssh options come from settings only
through an allow-list (kabe.base.ssh_policy, documented in docs/deploy.md); anything else, above
all the options that load or run code here (PKCS11Provider, ProxyCommand, ...), belongs in
~/.ssh/config. An IPv6 board is written in brackets, board=xilinx@[::1]:22, as scp writes it.
"""

from __future__ import annotations

import ipaddress
import re
import shlex
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from kabe.base.errors import UserError
from . import board_output
from kabe.base import ssh_policy


class DeployError(UserError, RuntimeError):
    """One sentence: what failed, on which host, and how to fix it."""


class HostUnreachable(DeployError):
    pass


class AuthenticationFailed(DeployError):
    pass


class UnknownHostKey(DeployError):
    pass


class RemoteCommandFailed(DeployError):
    pass


class BadTarget(DeployError):
    """A user, host, port, remote folder or ssh option that could be read as something else."""


# What a host or user may look like: letters, digits, `.`, `_`, `-`, never `-` first (an option),
# nothing that a shell, ssh's option parser or scp's `host:path` split could read another way.
_HOST_RE = re.compile(r"[A-Za-z0-9_.][A-Za-z0-9_.-]*")
_USER_RE = ssh_policy.USER_RE
_ZONE_RE = re.compile(r"[A-Za-z0-9_.-]+")  # an IPv6 scope (fe80::1%eth0): an interface name
# kabe's own options: the first two are fixed (never prompt, never accept an unknown host key); the
# others are defaults that ssh_options may change. ssh keeps the first value it is given for an
# option, so a default the user set is not passed at all (before the user's, it silently won).
_FIXED = {"BatchMode": "yes", "StrictHostKeyChecking": "yes"}
_DEFAULTS = {"ServerAliveInterval": "15", "ServerAliveCountMax": "4"}
_MAX_SHOWN = 60


def _is_ipv6(host: str) -> bool:
    address, _, zone = host.partition("%")
    if "%" in host and not _ZONE_RE.fullmatch(zone):
        return False
    try:
        ipaddress.IPv6Address(address)
    except ValueError:
        return False
    return True


def _shown(value: object) -> str:
    """A value quoted for an error message, cut short: settings can hold anything."""
    text = repr(str(value))
    return text if len(text) <= _MAX_SHOWN else text[:_MAX_SHOWN] + "...'"


def check_remote_dir(remote_dir: str) -> str:
    """A remote folder kabe may create and copy into: absolute (a quoted `~` would not expand), no
    whitespace or control characters. Returns it unchanged, raises BadTarget otherwise."""
    if (not isinstance(remote_dir, str) or not remote_dir or remote_dir.startswith("-")
            or re.search(r"[\s\x00-\x1f\x7f]", remote_dir) or not remote_dir.startswith("/")):
        raise BadTarget(f"remote_dir={_shown(remote_dir)} is not a plain absolute folder; set [tool.kabe.board] "
                        f"remote_dir to a path like /home/xilinx/kabe (no leading '-', spaces or control characters)")
    return remote_dir


@dataclass(frozen=True)
class Target:
    """user@host[:port]; extra_options are passed as -o NAME=VALUE (e.g. a test's known_hosts file)."""

    host: str
    user: str | None = None
    port: int | None = None
    identity: Path | None = None
    options: dict[str, str] = field(default_factory=dict, hash=False, compare=False)
    connect_timeout_s: int = 10

    def __post_init__(self) -> None:
        """Every Target is checked, however it was made: no field can reach ssh as an option."""
        if not isinstance(self.host, str) or not (_HOST_RE.fullmatch(self.host) or _is_ipv6(self.host)):
            raise BadTarget(f"board host {_shown(self.host)} is not a host name (letters, digits, '.', '_', '-', "
                            f"not starting with '-') or an IPv6 address; pass board=user@host or set "
                            f"[tool.kabe.board] host")
        if self.user is not None and (not isinstance(self.user, str) or not _USER_RE.fullmatch(self.user)):
            raise BadTarget(f"board user {_shown(self.user)} is not a user name (letters, digits, '.', '_', '-', "
                            f"not starting with '-'); pass board=user@host or set [tool.kabe.board] host")
        if self.port is not None and (isinstance(self.port, bool) or not isinstance(self.port, int)
                                      or not 0 < self.port < 65536):
            raise BadTarget(f"board port {_shown(self.port)} is not a port number (1-65535)")
        if isinstance(self.connect_timeout_s, bool) or not isinstance(self.connect_timeout_s, int) \
                or not 0 < self.connect_timeout_s <= 3600:
            raise BadTarget(f"ssh connect timeout {_shown(self.connect_timeout_s)} is not 1-3600 seconds")
        if not isinstance(self.options, dict):
            raise BadTarget(f"ssh_options {_shown(self.options)} is not a table; fix [tool.kabe.board] ssh_options")
        for k, v in self.options.items():
            why = ssh_policy.option_problem(k, v)
            if why:
                raise BadTarget(f"ssh option {_shown(k)}={_shown(v)} {why}; fix [tool.kabe.board] ssh_options"
                                if "NAME=VALUE" in why else f"ssh option {k} {why}")
        given = {k.lower(): v for k, v in self.options.items()}
        for name, mine in (("port", self.port), ("user", self.user)):
            if mine is not None and name in given and given[name] != str(mine):
                raise BadTarget(f"the board's {name} {mine} and ssh option {name.title()}={given[name]} disagree; "
                                f"keep one (fix [tool.kabe.board] ssh_options)")

    @classmethod
    def parse(cls, spec: str, **kw) -> "Target":
        """'user@host', 'host', 'user@host:2222'. Raises BadTarget on anything else."""
        if not isinstance(spec, str) or not spec:
            raise BadTarget(f"board={_shown(spec)} is not user@host[:port]")
        user, _, rest = spec.rpartition("@")
        if rest.startswith("["):  # an IPv6 literal, as scp and URLs write it: [::1] or [::1]:22
            host, bracket, after = rest[1:].partition("]")
            if not bracket or (after and not after.startswith(":")):
                raise BadTarget(f"board={_shown(spec)} is not user@[IPv6 address][:port], like xilinx@[::1]:22")
            if not _is_ipv6(host):
                raise BadTarget(f"board={_shown(spec)}: {_shown(host)} in brackets is not an IPv6 address")
            colon, port = after[:1], after[1:]
        elif rest.count(":") > 1:
            raise BadTarget(f"board={_shown(spec)}: an IPv6 address goes in brackets, like xilinx@[::1]:22")
        else:
            host, colon, port = rest.partition(":")
        if not host:
            raise BadTarget(f"board={_shown(spec)} is not user@host[:port]")
        number = ssh_policy.ascii_int(port, 1, 65535) if colon else None
        if colon and number is None:
            if not port:
                raise BadTarget(f"board={_shown(spec)}: no port after ':' (leave the ':' out for port 22)")
            if not re.fullmatch(r"[0-9]+", port):
                raise BadTarget(f"board={_shown(spec)}: the port {_shown(port)} is not a number (ASCII digits 0-9)")
            raise BadTarget(f"board={_shown(spec)}: the port {_shown(port)} is not a port number (1-65535)")
        return cls(host=host, user=user if "@" in spec else None, port=number, **kw)

    @property
    def display(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.user + '@' if self.user else ''}{host}{':' + str(self.port) if self.port else ''}"

    def _common(self, port_flag: str) -> list[str]:
        args = [a for k, v in _FIXED.items() for a in ("-o", f"{k}={v}")]
        for k, v in self.options.items():  # checked against the allow-list in __post_init__
            if k.lower() not in ("batchmode", "stricthostkeychecking"):  # those are _FIXED, to yes
                args += ["-o", f"{k}={v}"]
        given = {k.lower() for k in self.options}
        defaults = {"ConnectTimeout": str(self.connect_timeout_s), **_DEFAULTS}
        args += [a for k, v in defaults.items() if k.lower() not in given for a in ("-o", f"{k}={v}")]
        if self.port:
            args += [port_flag, str(self.port)]
        if self.identity:
            args += ["-i", str(self.identity)]
            if "identitiesonly" not in given:
                args += ["-o", "IdentitiesOnly=yes"]
        return args

    def destination(self) -> str:
        """For ssh: user@host, an IPv6 address bare (ssh would look up "[::1]" as a name)."""
        return f"{self.user}@{self.host}" if self.user else self.host

    def scp_destination(self, remote_dir: str) -> str:
        """For scp: user@host:dir/, an IPv6 address in brackets (scp splits host from path at a colon)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.user + '@' if self.user else ''}{host}:{remote_dir.rstrip('/')}/"


def _require(tool: str) -> str:
    path = shutil.which(tool)
    if not path:
        raise DeployError(f"the OpenSSH client `{tool}` is not installed; install openssh-client")
    return path


def _classify(target: Target, stderr: str, what: str) -> DeployError:
    s = stderr.lower()
    if "host key verification failed" in s or "no matching host key" in s or "remote host identification has changed" in s:
        return UnknownHostKey(
            f"{target.display}: the host key is unknown or changed, so kabe refused to connect; verify the board's key "
            f"and add it with `ssh-keyscan -p {target.port or 22} {target.host} >> ~/.ssh/known_hosts` (check its fingerprint first)")
    if "permission denied" in s or "too many authentication failures" in s:
        return AuthenticationFailed(
            f"{target.display}: authentication failed; install your public key on the board "
            f"(`ssh-copy-id {target.destination()}`) or name a key in ~/.ssh/config (kabe never uses passwords)")
    for marker in ("connection refused", "no route to host", "timed out", "could not resolve hostname",
                   "network is unreachable", "connection closed", "connection reset"):
        if marker in s:
            return HostUnreachable(f"{target.display}: cannot reach the board ({marker}); check that it is powered, "
                                   f"on the network, and that board= / [tool.kabe.board] host names the right host and port")
    return DeployError(f"{target.display}: {what} failed: {board_output.last_line(stderr) or 'no message'}")


def run(target: Target, argv: list[str], *, timeout_s: float = 600, check: bool = True) -> subprocess.CompletedProcess:
    """Run argv on the target; ssh's own failures (exit 255) are classified, a remote failure raises if check."""
    remote = " ".join(shlex.quote(a) for a in argv)
    # `--` first: whatever the destination looks like, ssh reads it as the destination
    cmd = [_require("ssh"), *target._common("-p"), "--", target.destination(), remote]
    try:
        # bytes, bounded, decoded with replacement: the board can print anything, of any size
        proc = board_output.run(cmd, timeout_s)
    except subprocess.TimeoutExpired:
        raise HostUnreachable(f"{target.display}: `{argv[0]}` did not finish within {timeout_s:.0f} s; "
                              f"the board may have hung (power-cycle it) or the run needs a longer timeout") from None
    if proc.returncode == 255:
        raise _classify(target, proc.stderr, f"`{argv[0]}`")
    if check and proc.returncode != 0:
        tail = (proc.stderr.strip() or proc.stdout.strip()).splitlines()[-3:]
        raise RemoteCommandFailed(f"{target.display}: `{' '.join(argv[:2])}` exited {proc.returncode}: "
                                  f"{board_output.shown(' | '.join(tail))}")
    return proc


def push(target: Target, files: list[Path], remote_dir: str, *, timeout_s: float = 600) -> None:
    """Copy files into remote_dir (created first). scp is forced to SFTP (-s), so the remote path reaches
    no shell on the board; `--` ends the options, so neither a file nor the destination is one."""
    if not remote_dir or remote_dir.startswith("-") or re.search(r"[\x00-\x1f\x7f]", remote_dir):
        raise BadTarget(f"remote folder {_shown(remote_dir)} starts with '-' or holds control characters")
    run(target, ["mkdir", "-p", "--", remote_dir], timeout_s=timeout_s)
    cmd = [_require("scp"), "-s", "-q", "-p", *target._common("-P"), "--", *[str(f) for f in files],
           target.scp_destination(remote_dir)]
    try:
        proc = board_output.run(cmd, timeout_s)  # scp relays the board's words too: bytes, bounded, replaced
    except subprocess.TimeoutExpired:
        raise HostUnreachable(f"{target.display}: copying to {remote_dir} did not finish within {timeout_s:.0f} s") from None
    if proc.returncode != 0:
        if re.search(r"(unknown|illegal|invalid) option -- s\b", proc.stderr):
            raise DeployError("this scp cannot speak SFTP (-s); kabe needs OpenSSH 8.8 or newer (the legacy "
                              "scp protocol would hand the remote path to the board's shell)")
        raise _classify(target, proc.stderr, f"copying to {remote_dir}")
