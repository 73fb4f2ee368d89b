"""Every message that refuses an unknown value lists the values it would take: design.yaml's keys and
values, flow names, verify kinds, board names, settings in [tool.kabe], report kinds, regression and
budget operators, waivers, CLI choices. One table, each row the real entry point a user reaches, and
every allowed value must be in the one line it prints."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from kabe import boards, flows
from kabe.project import config, designs
from kabe.rules import gate, regressions
from kabe.base.ssh_policy import ALLOWED, option_problem
from kabe.parsers.detect import detect_report
from kabe.parsers.report_file import from_text
from kabe.records import junit

CORE = "CAPI=2:\nname: user:design:d:0.1.0\n"
BASE = 'core: user:design:d:0.1.0\nconstraints: d.xdc\nverify: {none: "a test design"}\n'


def _design_message(tmp_path: Path, body: str) -> str:
    d = tmp_path / "cores" / "d"
    d.mkdir(parents=True, exist_ok=True)
    (d / "d.core").write_text(CORE)
    (d / "d.xdc").write_text("create_clock -period 7 [get_ports clk]\n")
    (d / "design.yaml").write_text(BASE + body)
    with pytest.raises(designs.DesignError) as caught:
        designs.load(d / "design.yaml")
    return str(caught.value)


DESIGN_YAML = [
    ("unknown key", "colour: red\n", designs._FIELDS),
    ("expect_gate", "expect_gate: maybe\n", designs.GATE_EXPECTATIONS),
    ("budget operator", "budgets: {lut: {below: 3}}\n", designs.BUDGET_OPS),
    ("regression rule", "regressions: {lut: {grows: 3}}\n", designs.REGRESSION_OPS),
    ("waiver", 'waivers: {everything: "why not"}\n', designs.WAIVABLE),
    ("board", "board: zedboard\n", tuple(boards.known())),
]


@pytest.mark.parametrize("what, body, allowed", DESIGN_YAML, ids=[c[0] for c in DESIGN_YAML])
def test_design_yaml_lists_the_allowed_values(tmp_path, what, body, allowed):
    message = _design_message(tmp_path, body)
    assert "\n" not in message
    assert [v for v in allowed if v not in message] == [], message


def _raises(fn, *args) -> str:
    with pytest.raises(Exception) as caught:
        fn(*args)
    return str(caught.value)


def test_every_other_refusal_lists_the_allowed_values(tmp_path):
    d = tmp_path / "cores" / "d"
    d.mkdir(parents=True)
    (d / "d.core").write_text(CORE)
    (d / "d.xdc").write_text("x\n")
    cases = {
        "verify kind": (_verify_message(tmp_path, 'verify: {golden: "a:b"}\n'), designs.VERIFY_KINDS),
        "old kind key": (_verify_message(tmp_path, "kind: spiking\n"), ("verify",)),
        "missing verify": (_verify_message(tmp_path, ""), designs.VERIFY_KINDS),
        "flow (kabe.flows)": (_raises(flows.get, "quartus"), tuple(f for f in config.FLOWS if f != "auto")),
        "flow (command line)": (_raises(config.resolve_flow, "quartus"), config.FLOWS),
        "design name": (_raises(designs.get, "nosuch", tmp_path / "cores"), ("d",)),
        "board name": (_raises(boards.get, "zedboard"), tuple(boards.known())),
        "[tool.kabe] key": (_config_message(tmp_path, 'colour = "red"\n'), ("flow", "vivado_version", "page_sections")),
        "[tool.kabe] flow": (_config_message(tmp_path, 'flow = "quartus"\n'), config.FLOWS),
        "[tool.kabe] page_sections": (_config_message(tmp_path, 'page_sections = ["weather"]\n'), ("mypkg.page:latency",)),
        "budget op (rules)": (_raises(gate.Budget, "lut", "below", 3), gate._OPS),
        "regression rule (rules)": (_raises(regressions.Regression, "lut", "grows", 3), designs.REGRESSION_OPS),
        "report kind": (_raises(detect_report, from_text("| Command      : report_power\n\nx\n", "power.rpt")),
                        ("report_utilization", "report_timing_summary", "report_timing")),
        "junit status": (_raises(junit.Case, "x", "flaky"), junit.STATUSES),
        "ssh option": ("ssh option Ciphers " + option_problem("Ciphers", "aes128-ctr"), tuple(o[0] for o in ALLOWED.values())),
    }
    missing = {what: [v for v in allowed if v not in message] for what, (message, allowed) in cases.items()}
    assert {what: m for what, m in missing.items() if m} == {}, {w: cases[w][0] for w, m in missing.items() if m}


def _verify_message(tmp_path: Path, body: str) -> str:
    d = tmp_path / "cores" / "d"
    (d / "design.yaml").write_text("core: user:design:d:0.1.0\nconstraints: d.xdc\n" + body)
    with pytest.raises(designs.DesignError) as caught:
        designs.load(d / "design.yaml")
    return str(caught.value)


def _config_message(tmp_path: Path, body: str) -> str:
    f = tmp_path / "pyproject.toml"
    f.write_text("[tool.kabe]\n" + body)
    with pytest.raises(config.ConfigError) as caught:
        config.load(f)
    return str(caught.value)


@pytest.mark.parametrize("argv, allowed", [
    (["build", "d", "--flow", "quartus"], config.FLOWS),
    (["archive", "sync"], ("push", "pull", "du")),
    (["doctor", "--flow", "quartus"], config.FLOWS),
])
def test_cli_choices_are_listed_and_exit_2(argv, allowed):
    proc = subprocess.run([sys.executable, "-c", "import sys; from kabe import cli; sys.exit(cli.main(sys.argv[1:]))",
                           *argv], capture_output=True, text=True)
    assert proc.returncode == 2
    line = proc.stderr.strip().splitlines()[-1]
    assert "invalid choice" in line and all(repr(v) in line for v in allowed), line
