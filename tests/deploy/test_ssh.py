"""The SSH layer against a real sshd on loopback: commands, copies, quoting and each failure's error."""

from __future__ import annotations

import pytest

from kabe.deploy import ssh

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
    from pathlib import Path

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
    import subprocess

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
