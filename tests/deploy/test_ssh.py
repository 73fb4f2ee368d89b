"""The SSH layer against a real sshd on loopback: commands, copies, quoting and each failure's error."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from kabe.deploy import ssh
from kabe.deploy.host import DeploySettings

from .loopback_host import sshd_available, start

pytestmark = pytest.mark.skipif(not sshd_available(), reason="OpenSSH server not installed (.ci/run installs openssh-server)")


@pytest.fixture(scope="module")
def board(tmp_path_factory):
    host = start(tmp_path_factory.mktemp("board"))
    yield host
    host.stop()


def target(board, **kw):
    opts = {**board.target_options(), **kw.pop("options", {})}
    return ssh.Target("127.0.0.1", user=board.user, port=board.port, identity=board.client_key, options=opts, **kw)


def test_run_and_push_with_hostile_names(board, tmp_path):
    t = target(board)
    name = "it's $(touch pwned); a `file`.txt"
    src = tmp_path / name
    src.write_text("payload")
    remote = str(tmp_path / "remote dir; rm -rf x")
    ssh.push(t, [src], remote)
    out = ssh.run(t, ["cat", f"{remote}/{name}"]).stdout
    assert out == "payload"
    # the remote shell starts in the user's home: an injected `touch` would land there
    assert not (Path.home() / "pwned").exists() and not list(tmp_path.glob("**/pwned"))


def test_remote_failure_is_reported(board):
    with pytest.raises(ssh.RemoteCommandFailed, match="exited 3"):
        ssh.run(target(board), ["sh", "-c", "echo broken >&2; exit 3"])


def test_unknown_host_key_is_refused(board, tmp_path):
    empty = tmp_path / "known_hosts"
    empty.write_text("")
    with pytest.raises(ssh.UnknownHostKey, match="host key is unknown"):
        ssh.run(target(board, options={"UserKnownHostsFile": str(empty)}), ["true"])


def test_authentication_failure(board, tmp_path):
    stranger = tmp_path / "stranger"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(stranger)], check=True)
    t = ssh.Target("127.0.0.1", user=board.user, port=board.port, identity=stranger, options=board.target_options())
    with pytest.raises(ssh.AuthenticationFailed, match="authentication failed"):
        ssh.run(t, ["true"])


def test_unreachable_host(board):
    from .loopback_host import _free_port

    t = ssh.Target("127.0.0.1", user=board.user, port=_free_port(), identity=board.client_key,
                   options=board.target_options(), connect_timeout_s=3)
    with pytest.raises(ssh.HostUnreachable, match="cannot reach the board"):
        ssh.run(t, ["true"])


def test_target_parse():
    t = ssh.Target.parse("xilinx@pynq:2222")
    assert (t.user, t.host, t.port) == ("xilinx", "pynq", 2222)
    assert ssh.Target.parse("pynq").user is None


# ------------------------------------------------------------------------------------------------
# board= and [tool.kabe.board] are untrusted: nothing in them may reach ssh or scp as an option

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture()
def stub_ssh(tmp_path, monkeypatch):
    """`ssh` and `scp` on PATH that only record that they were started: proves no command ran."""
    bindir, record = tmp_path / "stub-bin", tmp_path / "ssh-started"
    bindir.mkdir()
    for tool in ("ssh", "scp"):
        (bindir / tool).write_text(f"#!/bin/sh\necho {tool} \"$@\" >> '{record}'\nexit 0\n")
        (bindir / tool).chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    return record


@pytest.mark.parametrize("spec,what", [
    ("-oProxyCommand=touch pwned", "is not a host name"),
    ("xilinx@-oProxyCommand=touch pwned", "is not a host name"),
    ("-oProxyCommand=x@pynq", "is not a user name"),
    ("xilinx@py nq", "is not a host name"),
    ("xilinx@pynq\n-oProxyCommand=x", "is not a host name"),
    ("xilinx@pynq:22x", "is not a number"),
    ("xilinx@pynq:70000", "is not a port number"),
    ("@pynq", "is not a user name"),
])
def test_a_board_spec_that_could_be_an_option_is_refused(spec, what, stub_ssh, tmp_path):
    with pytest.raises(ssh.BadTarget, match=what):
        DeploySettings(board=spec)
    with pytest.raises(ssh.BadTarget, match=what):
        ssh.Target.parse(spec)
    assert not stub_ssh.exists()


def test_a_remote_dir_that_could_be_an_option_is_refused(stub_ssh, board):
    for bad in ("-oProxyCommand=touch pwned", "/home/xilinx/ka be", "relative/dir", "/x\n-o", ""):
        with pytest.raises(ssh.BadTarget, match="remote_dir"):
            DeploySettings(board="xilinx@pynq", remote_dir=bad)
    # scp's own guard, for callers that pass a folder directly
    with pytest.raises(ssh.BadTarget, match="starts with '-'"):
        ssh.push(target(board), [Path(__file__)], "-oProxyCommand=touch pwned")
    assert not stub_ssh.exists()


def test_ssh_options_that_run_local_commands_are_refused():
    for name in ("ProxyCommand", "proxycommand", "LocalCommand", "PermitLocalCommand", "KnownHostsCommand"):
        with pytest.raises(ssh.BadTarget, match="runs a command on this machine"):
            DeploySettings(board="xilinx@pynq", ssh_options={name: "touch pwned"})
    with pytest.raises(ssh.BadTarget, match="NAME=VALUE"):
        DeploySettings(board="xilinx@pynq", ssh_options={"User": "x\n-oProxyCommand=touch pwned"})


def test_the_destination_follows_double_dash(board, tmp_path):
    """Even a Target that skipped its checks cannot smuggle an option past `--`: real OpenSSH
    takes `-oProxyCommand=...` as a (bad) host name, and the command never runs."""
    witness = tmp_path / "pwned"
    t = object.__new__(ssh.Target)
    for k, v in dict(host=f"-oProxyCommand=touch {witness}", user=None, port=board.port, identity=board.client_key,
                     options=board.target_options(), connect_timeout_s=3).items():
        object.__setattr__(t, k, v)
    with pytest.raises(ssh.DeployError):
        ssh.run(t, ["true"], timeout_s=20)
    with pytest.raises(ssh.DeployError):
        ssh.push(t, [Path(__file__)], str(tmp_path / "remote"), timeout_s=20)
    assert not witness.exists()


def test_doit_deploy_refuses_a_proxycommand_board_before_ssh_runs(stub_ssh, tmp_path):
    """The whole verb: `doit deploy:stage4 board=-oProxyCommand=...` stops with one line, and neither
    ssh nor scp is started (the stubs on PATH would record it), nor does the command run."""
    witness = tmp_path / "pwned"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-m", "doit", "-f", str(ROOT / "dodo.py"), "--dir", str(ROOT),
                           "deploy:stage4", f"board=-oProxyCommand=touch {witness}"],
                          capture_output=True, text=True, env=env, timeout=300)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out
    assert "is not a host name" in out and "Traceback" not in out, out
    assert not stub_ssh.exists(), stub_ssh.read_text()
    assert not witness.exists()
