"""Settings are typed and validated in one place (kabe.project.config; issue 18): a wrong type is one line naming
the key, the value and what was expected, and every verb exits 2 on it."""

from __future__ import annotations

from pathlib import Path

import pytest

from kabe import cli, tasks
from kabe.project import config
from kabe.rules import gate
from kabe.deploy import cli as deploy_cli
from kabe.flows.vivado import tool

BASE = """[tool.kabe]
flow = "auto"
vivado_version = "2023.2"
fail_on_unconstrained = false
"""

# The cases of issue 18, each with the line it must produce.
CASES = [
    ('vivado_version = []', 'pyproject.toml [tool.kabe] vivado_version = []: expected a Vivado version as a string'),
    ('fail_on_unconstrained = "false"',
     'pyproject.toml [tool.kabe] fail_on_unconstrained = "false": expected true or false (a TOML boolean, not a string)'),
    ('[tool.kabe.board]\nsudo = "no"',
     'pyproject.toml [tool.kabe.board] sudo = "no": expected true or false (a TOML boolean, not a string)'),
    ('vivado_jobs = "x"', 'pyproject.toml [tool.kabe] vivado_jobs = "x": expected a positive integer'),
    ('board = "pynq"', 'pyproject.toml [tool.kabe] board = "pynq": expected a table'),
    ('flow = 3', 'pyproject.toml [tool.kabe] flow = 3: expected one of "open", "vivado", "vitis_hls", "vitis", "auto"'),
    ('archive_fetch_max_mb = 0', 'pyproject.toml [tool.kabe] archive_fetch_max_mb = 0: expected a positive integer of MB'),
]


def _pyproject(tmp_path: Path, extra: str) -> Path:
    keys = {ln.split("=")[0].strip() for ln in extra.splitlines() if "=" in ln}
    lines = [ln for ln in BASE.splitlines() if ln.split("=")[0].strip() not in keys]  # the case replaces its keys
    path = tmp_path / "pyproject.toml"
    path.write_text("\n".join(lines) + "\n" + extra + "\n")
    return path


@pytest.mark.parametrize("extra, line", CASES)
def test_wrong_types_are_one_line_naming_key_value_and_type(tmp_path, extra, line):
    with pytest.raises(config.ConfigError) as e:
        config.load(_pyproject(tmp_path, extra))
    assert str(e.value).startswith(f"{tmp_path}/{line}") and "\n" not in str(e.value)


def test_the_good_settings_load_with_their_types(tmp_path):
    s = config.load(_pyproject(tmp_path, '[tool.kabe.board]\nhost = "xilinx@pynq"\nsudo = false\nport = 22'))
    assert s["fail_on_unconstrained"] is False and s["board"]["sudo"] is False
    assert config.value(s, "vivado_jobs") == 2 and config.value(s, "vivado_version") == "2023.2"


def test_an_unknown_key_is_refused(tmp_path):
    with pytest.raises(config.ConfigError, match="unknown key 'fail_on_unconstraned'"):
        config.load(_pyproject(tmp_path, "fail_on_unconstraned = true"))


def test_the_real_pyproject_is_valid():
    config.load()


@pytest.fixture()
def bad_settings(monkeypatch, tmp_path):
    """config.load() reads a pyproject with a wrong setting, wherever it is called from."""
    real = config.load

    def use(extra: str):
        path = _pyproject(tmp_path, extra)
        monkeypatch.setattr(config, "load", lambda pyproject=path: real(pyproject))
    return use


@pytest.mark.parametrize("extra, line", CASES)
def test_doit_exits_2_before_building_a_task(bad_settings, capsys, extra, line):
    bad_settings(extra)
    with pytest.raises(SystemExit) as e:
        tasks.preflight(None)
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("kabe: ") and line in err and err.count("\n") == 1


def test_kabe_gate_exits_2_on_a_bad_setting(bad_settings, capsys):
    bad_settings('fail_on_unconstrained = "false"')
    report = Path(__file__).parents[1] / "fixtures" / "vivado" / "timing_summary_7z020_2023.2_met.rpt"
    assert cli.main(["gate", str(report)]) == 2
    assert 'fail_on_unconstrained = "false"' in capsys.readouterr().err


def test_deploy_exits_2_on_a_bad_board_setting(bad_settings, capsys):
    bad_settings('[tool.kabe.board]\nsudo = "no"')
    assert deploy_cli.main("stage4", "xilinx@pynq", 16, 1) == 2
    assert 'sudo = "no"' in " ".join(capsys.readouterr().out.split())


def test_the_vivado_flow_and_the_gate_read_typed_values(bad_settings):
    bad_settings('vivado_jobs = 4\nvivado_timeout_s = 90\nfail_on_unconstrained = true')
    assert tool.settings()["vivado_jobs"] == 4 and tool.settings()["vivado_timeout_s"] == 90
    assert gate.TimingRules.from_config().fail_on_unconstrained is True
    with pytest.raises(config.ConfigError, match='vivado_jobs = "x"'):
        tool.settings({"vivado_jobs": "x"})
