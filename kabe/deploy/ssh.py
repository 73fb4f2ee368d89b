"""The OpenSSH client, used the way users expect: their ~/.ssh/config, keys and jump hosts apply.

Every remote command is an argv list quoted with shlex.quote, never a string pasted together, so a
path or argument cannot inject shell syntax. BatchMode=yes means ssh never prompts (and so never
sees a password to leak); StrictHostKeyChecking=yes means an unknown host key is refused, never
silently accepted. Failures are classified into one clear error each.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from kabe.errors import UserError


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


@dataclass(frozen=True)
class Target:
    """user@host[:port]; extra_options are passed as -o NAME=VALUE (e.g. a test's known_hosts file)."""

    host: str
    user: str | None = None
    port: int | None = None
    identity: Path | None = None
    options: dict[str, str] = field(default_factory=dict, hash=False, compare=False)
    connect_timeout_s: int = 10

    @classmethod
    def parse(cls, spec: str, **kw) -> "Target":
        """'user@host', 'host', 'user@host:2222'."""
        user, _, rest = spec.rpartition("@")
        host, _, port = rest.partition(":")
        if not host:
            raise DeployError(f"board={spec!r} is not user@host[:port]")
        return cls(host=host, user=user or None, port=int(port) if port else None, **kw)

    @property
    def display(self) -> str:
        return f"{self.user + '@' if self.user else ''}{self.host}{':' + str(self.port) if self.port else ''}"

    def _common(self, port_flag: str) -> list[str]:
        args = ["-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes",
                "-o", f"ConnectTimeout={self.connect_timeout_s}", "-o", "ServerAliveInterval=15",
                "-o", "ServerAliveCountMax=4"]
        if self.port:
            args += [port_flag, str(self.port)]
        if self.identity:
            args += ["-i", str(self.identity), "-o", "IdentitiesOnly=yes"]
        for k, v in self.options.items():
            args += ["-o", f"{k}={v}"]
        return args

    def destination(self) -> str:
        return f"{self.user}@{self.host}" if self.user else self.host


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
                                   f"on the network, and that board= / [tool.kabe] board names the right host and port")
    return DeployError(f"{target.display}: {what} failed: {stderr.strip().splitlines()[-1] if stderr.strip() else 'no message'}")


def run(target: Target, argv: list[str], *, timeout_s: float = 600, check: bool = True) -> subprocess.CompletedProcess:
    """Run argv on the target; ssh's own failures (exit 255) are classified, a remote failure raises if check."""
    remote = " ".join(shlex.quote(a) for a in argv)
    cmd = [_require("ssh"), *target._common("-p"), target.destination(), "--", remote]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise HostUnreachable(f"{target.display}: `{argv[0]}` did not finish within {timeout_s:.0f} s; "
                              f"the board may have hung (power-cycle it) or the run needs a longer timeout") from None
    if proc.returncode == 255:
        raise _classify(target, proc.stderr, f"`{argv[0]}`")
    if check and proc.returncode != 0:
        tail = (proc.stderr.strip() or proc.stdout.strip()).splitlines()[-3:]
        raise RemoteCommandFailed(f"{target.display}: `{' '.join(argv[:2])}` exited {proc.returncode}: {' | '.join(tail)}")
    return proc


def push(target: Target, files: list[Path], remote_dir: str, *, timeout_s: float = 600) -> None:
    """Copy files into remote_dir (created first). scp speaks SFTP, so remote paths are not shell-expanded."""
    run(target, ["mkdir", "-p", "--", remote_dir], timeout_s=timeout_s)
    cmd = [_require("scp"), "-q", "-p", *target._common("-P"), *[str(f) for f in files],
           f"{target.destination()}:{remote_dir.rstrip('/')}/"]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise HostUnreachable(f"{target.display}: copying to {remote_dir} did not finish within {timeout_s:.0f} s") from None
    if proc.returncode != 0:
        raise _classify(target, proc.stderr, f"copying to {remote_dir}")
