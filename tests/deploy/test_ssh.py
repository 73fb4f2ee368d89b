"""The SSH layer against a real sshd on loopback: commands, copies, quoting and each failure's error."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from kabe.deploy import ssh
from kabe.base import ssh_policy
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
    v6 = ssh.Target.parse("xilinx@[::1]:22")
    assert (v6.user, v6.host, v6.port, v6.display) == ("xilinx", "::1", 22, "xilinx@[::1]:22")
    # ssh takes the address bare (it would look "[::1]" up as a name), scp in brackets (host:path)
    assert v6.destination() == "xilinx@::1" and v6.scp_destination("/d") == "xilinx@[::1]:/d/"
    assert ssh.Target.parse("xilinx@[::1]").port is None
    assert ssh.Target.parse("xilinx@[fe80::1%eth0]:2222").host == "fe80::1%eth0"


@pytest.mark.parametrize("spec,message", [
    ("xilinx@host:\u00b2", "board='xilinx@host:\u00b2': the port '\u00b2' is not a number (ASCII digits 0-9)"),
    ("xilinx@host:\u0662\u0662", "board='xilinx@host:\u0662\u0662': the port '\u0662\u0662' is not a number (ASCII digits 0-9)"),
    ("xilinx@host:0", "board='xilinx@host:0': the port '0' is not a port number (1-65535)"),
    ("xilinx@host:65536", "board='xilinx@host:65536': the port '65536' is not a port number (1-65535)"),
    ("xilinx@host:", "board='xilinx@host:': no port after ':' (leave the ':' out for port 22)"),
    ("xilinx@::1", "board='xilinx@::1': an IPv6 address goes in brackets, like xilinx@[::1]:22"),
    ("xilinx@[::1", "board='xilinx@[::1' is not user@[IPv6 address][:port], like xilinx@[::1]:22"),
    ("xilinx@[::1]22", "board='xilinx@[::1]22' is not user@[IPv6 address][:port], like xilinx@[::1]:22"),
    ("xilinx@[pynq]:22", "board='xilinx@[pynq]:22': 'pynq' in brackets is not an IPv6 address"),
    ("xilinx@[::1%a b]", "board='xilinx@[::1%a b]': '::1%a b' in brackets is not an IPv6 address"),
])
def test_a_bad_board_spec_is_one_line_naming_it(spec, message):
    with pytest.raises(ssh.BadTarget) as e:
        ssh.Target.parse(spec)
    assert str(e.value) == message


def test_ipv6_board_over_real_ssh_and_scp(tmp_path_factory, tmp_path):
    """board=user@[::1]:port reaches a real sshd on ::1 for both the command and the copy."""
    try:
        host = start(tmp_path_factory.mktemp("board6"), address="::1")
    except OSError as e:  # no IPv6 loopback on this machine
        pytest.skip(f"no IPv6 loopback: {e}")
    try:
        t = ssh.Target.parse(f"{host.user}@[::1]:{host.port}", identity=host.client_key,
                             options=host.target_options())
        src = tmp_path / "payload.txt"
        src.write_text("over v6")
        ssh.push(t, [src], str(tmp_path / "remote"))
        assert ssh.run(t, ["cat", str(tmp_path / "remote" / "payload.txt")]).stdout == "over v6"
    finally:
        host.stop()


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


# Every option the attack report found accepted, and a few more of each kind: one line naming it.
REFUSED_OPTIONS = {
    "PKCS11Provider": "loads a shared library into ssh on this machine",
    "SecurityKeyProvider": "loads a shared library into ssh on this machine",
    "ForwardAgent": "opens a channel between this machine and the board",
    "RemoteForward": "opens a channel between this machine and the board",
    "LocalForward": "opens a channel between this machine and the board",
    "DynamicForward": "opens a channel between this machine and the board",
    "ControlPath": "opens a channel between this machine and the board",
    "SendEnv": "sends this machine's environment to the board",
    "SetEnv": "sends this machine's environment to the board",
    "Hostname": "sends the connection to another host than the board",
    "ProxyJump": "sends the connection to another host than the board",
    "ProxyCommand": "runs a command on this machine",
    "LocalCommand": "runs a command on this machine",
    "PermitLocalCommand": "runs a command on this machine",
    "KnownHostsCommand": "runs a command on this machine",
    "Include": "reads more ssh configuration",
    "Match": "reads more ssh configuration",
    "IdentityFile": "name the key with [tool.kabe.board] identity",
    "CertificateFile": "name the key with [tool.kabe.board] identity",
    "Ciphers": "is not one of the ssh options kabe takes from its settings (docs/deploy.md lists them)",
    "NoSuchOption": "is not one of the ssh options kabe takes from its settings (docs/deploy.md lists them)",
}


@pytest.mark.parametrize("name", sorted(REFUSED_OPTIONS))
def test_an_ssh_option_off_the_allow_list_is_refused_in_one_line(name, tmp_path):
    for spelt in (name, name.lower()):  # ssh compares option names without case
        with pytest.raises(ssh.BadTarget) as e:
            DeploySettings(board="xilinx@pynq", ssh_options={spelt: "/tmp/x"})
        msg = str(e.value)
        assert msg.startswith(f"ssh option {spelt} ") and REFUSED_OPTIONS[name] in msg and "\n" not in msg, msg
    # the settings check says the same at load time, before any deploy code runs
    from kabe.project import config

    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(f'[tool.kabe.board]\nhost = "xilinx@pynq"\nssh_options = {{ {name} = "/tmp/x" }}\n')
    with pytest.raises(config.ConfigError) as e:
        config.load(pyproject)
    assert str(e.value).startswith(f"{pyproject} [tool.kabe.board] ssh_options: ssh option {name} ")
    assert REFUSED_OPTIONS[name] in str(e.value)


@pytest.mark.parametrize("name,bad", [
    ("ConnectTimeout", "\u00b2"), ("ConnectTimeout", "0"), ("ServerAliveInterval", "1e9"), ("Port", "\u0662\u0662"),
    ("Port", "70000"), ("User", "-oProxyCommand=x"), ("Compression", "maybe"), ("BatchMode", "no"),
    ("StrictHostKeyChecking", "accept-new"), ("UserKnownHostsFile", "/a /b"), ("LogLevel", "LOUD"),
])
def test_an_allowed_option_takes_only_its_own_values(name, bad):
    with pytest.raises(ssh.BadTarget, match=f"^ssh option {name} takes .*, not "):
        DeploySettings(board="xilinx@pynq", ssh_options={name: bad})


def test_allowed_options_reach_ssh_before_kabes_defaults():
    """ssh keeps the first value of an option: the user's ServerAliveInterval must come before kabe's
    default (after it, it was silently ignored), and BatchMode/StrictHostKeyChecking stay yes."""
    t = DeploySettings(board="xilinx@pynq", ssh_options={"ServerAliveInterval": "5", "ConnectTimeout": "30",
                                                         "BatchMode": "yes", "Compression": "yes"}).target()
    args = t._common("-p")
    opts = [args[i + 1] for i, a in enumerate(args) if a == "-o"]
    assert opts[:2] == ["BatchMode=yes", "StrictHostKeyChecking=yes"]
    assert "ServerAliveInterval=5" in opts and "ServerAliveInterval=15" not in opts
    assert "ConnectTimeout=30" in opts and "ConnectTimeout=10" not in opts
    assert opts.count("BatchMode=yes") == 1 and "Compression=yes" in opts
    with pytest.raises(ssh.BadTarget, match="port 2222 and ssh option Port=22 disagree"):
        DeploySettings(board="xilinx@pynq:2222", ssh_options={"Port": "22"})


def test_an_allowed_option_is_taken_by_real_ssh(board):
    """The allowed set is what a deploy needs: a real connection with several of them set works."""
    t = target(board, options={"ConnectTimeout": "5", "ServerAliveInterval": "10", "ServerAliveCountMax": "2",
                               "Compression": "yes", "IdentitiesOnly": "yes", "AddressFamily": "inet",
                               "ConnectionAttempts": "1", "TCPKeepAlive": "yes", "User": board.user})
    assert ssh.run(t, ["echo", "ok"]).stdout == "ok\n"


@pytest.mark.parametrize("value", [1e300, float("inf"), 0, -1, ssh_policy.MAX_TIMEOUT_S + 1])
def test_a_board_timeout_beyond_a_day_is_refused(value, tmp_path):
    with pytest.raises(ssh.BadTarget, match=r"^timeout_s=.* is not a number of seconds above 0 and at most 86400"):
        DeploySettings(board="xilinx@pynq", timeout_s=value)
    from kabe.project import config

    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(f'[tool.kabe.board]\nhost = "xilinx@pynq"\ntimeout_s = {value if value != float("inf") else "inf"}\n')
    with pytest.raises(config.ConfigError, match="timeout_s = .*: expected a positive number of seconds, at most 86400"):
        config.load(pyproject)
    assert DeploySettings(board="xilinx@pynq", timeout_s=ssh_policy.MAX_TIMEOUT_S).timeout_s == 86400


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


def test_docs_list_exactly_the_allowed_options():
    """docs/deploy.md's table is the allow-list: an option added to or removed from the code without the
    page (or the other way round) fails here."""
    import re

    page = (ROOT / "docs" / "deploy.md").read_text()
    table = page.split("## ssh options from settings: the allow-list", 1)[1].split("\n\n", 2)[2].split("\n\n")[0]
    documented = {name.lower() for row in table.splitlines()[2:] for name in re.findall(r"`(\w+)`", row.split("|")[1])}
    assert documented == set(ssh_policy.ALLOWED)
