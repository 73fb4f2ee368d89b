"""A real OpenSSH server on 127.0.0.1 playing the board in deploy tests.

It runs /usr/sbin/sshd (Debian's openssh-server, installed by .ci/run) with its own host key,
config and authorized_keys in a temp dir, on a free port, for the current user. The client side
gets its own identity and known_hosts file, so the tests never touch ~/.ssh.
"""

from __future__ import annotations

import getpass
import os
import shutil
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

SSHD = shutil.which("sshd") or "/usr/sbin/sshd"


def sshd_available() -> bool:
    return Path(SSHD).is_file() and shutil.which("ssh-keygen") is not None


def _free_port(address: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET6 if ":" in address else socket.AF_INET) as s:
        s.bind((address, 0))
        return s.getsockname()[1]


def _keygen(path: Path) -> None:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)], check=True)


@dataclass
class LoopbackHost:
    root: Path
    port: int
    proc: subprocess.Popen
    client_key: Path
    known_hosts: Path
    user: str

    def target_options(self) -> dict:
        return {"UserKnownHostsFile": str(self.known_hosts), "GlobalKnownHostsFile": "/dev/null",
                "LogLevel": "ERROR"}

    def deploy_settings(self, tmp_path: Path, **kw):
        """kabe's DeploySettings aimed at this host: its key, options and a remote folder under tmp_path.
        A run from a work tree with edits archives as <sha>-dirty; the dirty refusal has its own test."""
        from kabe.base import provenance
        from kabe.deploy.host import DeploySettings

        base = dict(board=f"{self.user}@127.0.0.1", port=self.port, identity=self.client_key,
                    ssh_options=self.target_options(), sudo=False, python=sys.executable,
                    remote_dir=str(tmp_path / "on-board"), timeout_s=300,
                    allow_dirty=provenance.current_commit().dirty)
        base.update(kw)
        return DeploySettings(**base)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def start(root: Path, address: str = "127.0.0.1", extra_config: str = "") -> LoopbackHost:
    """sshd on `address` (127.0.0.1, or ::1 for the IPv6 board spec's test); extra_config: more
    sshd_config lines (the V80 host's `SetEnv PATH=...`, so its ami_tool is the stand-in)."""
    root.mkdir(parents=True, exist_ok=True)
    host_key, client_key = root / "host_ed25519", root / "client_ed25519"
    _keygen(host_key)
    _keygen(client_key)
    (root / "authorized_keys").write_text((root / "client_ed25519.pub").read_text())
    os.chmod(root / "authorized_keys", 0o600)
    port = _free_port(address)
    user = getpass.getuser()
    config = root / "sshd_config"
    config.write_text(f"""# kabe test board: sshd on loopback only
ListenAddress {address}
Port {port}
HostKey {host_key}
PidFile {root / 'sshd.pid'}
AuthorizedKeysFile {root / 'authorized_keys'}
PasswordAuthentication no
KbdInteractiveAuthentication no
PubkeyAuthentication yes
PermitRootLogin prohibit-password
StrictModes no
UsePAM no
Subsystem sftp internal-sftp
LogLevel ERROR
{extra_config}""")
    Path("/run/sshd").mkdir(exist_ok=True)  # privilege-separation directory sshd insists on
    proc = subprocess.Popen([SSHD, "-D", "-e", "-f", str(config)], stderr=open(root / "sshd.log", "w"))
    known_hosts = root / "known_hosts"
    pub = (root / "host_ed25519.pub").read_text().split()
    known_hosts.write_text(f"[{address}]:{port} {pub[0]} {pub[1]}\n")
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"sshd exited: {(root / 'sshd.log').read_text()}")
        try:
            socket.create_connection((address, port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.05)
    return LoopbackHost(root, port, proc, client_key, known_hosts, user)
