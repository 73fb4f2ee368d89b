"""`doit deploy:<design> board=user@host`: settings from [tool.kabe.board], one clear error per failure."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.text import Text

from kabe.base.console import make_console
from kabe.project import config, designs
from ..records import metrics
from . import ami, board_output, ssh, verdict
from .host import DeployRun, DeploySettings, deploy


_LINE = 1000  # one line of kabe's own words, with what it quotes from the board


def settings_from_config(board: str | None) -> DeploySettings:
    cfg = dict(config.load().get("board", {}))
    board = board or cfg.pop("host", None)
    cfg.pop("host", None)
    if not board:
        raise ssh.DeployError("no board given: pass board=user@host or set [tool.kabe.board] host in pyproject.toml")
    # config.load() has checked every key and type against config.BOARD_SETTINGS
    if "identity" in cfg:
        cfg["identity"] = Path(cfg["identity"]).expanduser()
    return DeploySettings(board=board, **cfg)


def _board_value(value, number: bool = False) -> str:
    """A value the board sent, for one line of output: it may be of any type and hold anything
    (Rich markup included), so it is printed as plain text, cut short."""
    if number and isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    if not number and isinstance(value, str) and value.isprintable() and len(value) <= 60:
        return value
    return verdict.shown(value)  # repr: control characters (a terminal escape) show as \x1b, not as themselves


def main(design: str, board: str | None, rows: int | None, seed: int, console: Console | None = None,
         **deploy_kw) -> int:
    """Exit status: 0 the host's verdict is a pass; 1 it is a failure (archived as failed); 2 could not run."""
    console = console or make_console()
    try:
        if designs.get(design).board.program == "ami_tool":  # the V80: programmed by ami_tool (kabe.deploy.ami)
            result = ami.deploy(designs.get(design), settings_from_config(board), console=console, **deploy_kw)
        else:
            result = deploy(design, settings_from_config(board), DeployRun(rows=rows, seed=seed, **deploy_kw),
                            console=console)
    except (ssh.DeployError, designs.DesignError, metrics.MetricsError, config.ConfigError) as e:
        # the message may quote the board (its stderr, a value it sent): Text, never markup, and escaped
        console.print(Text(f"kabe deploy {design}: {board_output.shown(e, _LINE)}", style="red"))
        return 2
    ok = result["passed"]
    if result.get("programmer") == "ami_tool":  # the V80 (kabe.deploy.ami): programmed, not yet verified on the card
        console.print(Text.assemble(("PROGRAMMED" if ok else "FAIL", "green" if ok else "red"),
                                    f" {design} on {result['board']} (card {result['bdf']}): {result['image']} "
                                    f"sha256 {result['image_sha256'][:16]}..., logic UUID "
                                    f"{_board_value(result.get('logic_uuid'))}; {result['verification']}"))
        for failure in result["failures"]:
            console.print(Text(f"  {board_output.shown(failure, _LINE)}", style="red"))
        console.print(Text(f"archived: {result['_archive']}"))
        return 0 if ok else 1
    # Everything after the verdict word came from the board: Text, never markup.
    line = Text.assemble(("PASS" if ok else "FAIL", "green" if ok else "red"),
                         f" {design} on {result['board']}: {_board_value(result.get('rows_checked'), True)} rows, "
                         f"{_board_value(result.get('mismatches'), True)} mismatches, "
                         f"{_board_value(result.get('gb_per_s'))} GB/s, bitstream commit "
                         f"{_board_value(result.get('bit_commit'))}, running PL {_board_value(result.get('pl_commit'))}")
    console.print(line)
    for failure in result["failures"]:
        console.print(Text(f"  {board_output.shown(failure, _LINE)}", style="red"))
    console.print(Text(f"archived: {result['_archive']}"))
    return 0 if ok else 1
