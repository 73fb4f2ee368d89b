"""`doit deploy:<design> board=user@host`: settings from [tool.kabe.board], one clear error per failure."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.markup import escape

from .. import config, designs
from ..records import metrics
from . import ssh
from .host import DeploySettings, deploy


def settings_from_config(board: str | None) -> DeploySettings:
    cfg = dict(config.load().get("board", {}))
    board = board or cfg.pop("host", None)
    cfg.pop("host", None)
    if not board:
        raise ssh.DeployError("no board given: pass board=user@host or set [tool.kabe.board] host in pyproject.toml")
    known = {"remote_dir", "sudo", "python", "port", "identity", "ssh_options", "timeout_s", "transfer_mb"}
    unknown = set(cfg) - known
    if unknown:
        raise config.ConfigError(f"[tool.kabe.board] has unknown keys {sorted(unknown)}; known: {sorted(known)}")
    if "identity" in cfg:
        cfg["identity"] = Path(cfg["identity"]).expanduser()
    return DeploySettings(board=board, **cfg)


def main(design: str, board: str | None, rows: int | None, seed: int, console: Console | None = None) -> int:
    console = console or Console()
    try:
        result = deploy(design, settings_from_config(board), rows=rows, seed=seed, console=console)
    except (ssh.DeployError, designs.DesignError, metrics.MetricsError, config.ConfigError) as e:
        console.print(f"[red]kabe deploy {design}: {escape(str(e))}[/]")
        return 2
    ok = result["passed"]
    console.print(f"{'[green]PASS' if ok else '[red]FAIL'}[/] {design} on {result['board']}: {result['rows_checked']:,} rows, "
                  f"{result['mismatches']} mismatches, {result['gb_per_s']} GB/s, bitstream commit {result['bit_commit']}")
    for problem in result["problems"]:
        console.print(f"  [red]{escape(problem)}[/]")
    console.print(f"archived: {result['_archive']}")
    return 0 if ok else 1
