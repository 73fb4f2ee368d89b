"""The software a board's own image must run for kabe's deploy, asked on the board over ssh.

kabe's deploy runs the board's own pynq (kabe.deploy.board_runner), so the wrong image fails there,
minutes in; `kabe doctor --deploy` asks first. What a board needs is its profile's deploy.pynq (the
PYNQ-Z1: a v3.x image, since PYNQ 4.0 dropped the 32-bit boards; a 64-bit board PYNQ 4)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kabe import boards
from kabe.project import config
from kabe.boards import versions
from kabe.base.errors import UserError
from . import ssh


@dataclass(frozen=True)
class Finding:
    name: str  # the doctor row
    have: str
    want: str
    ok: bool
    fix: str


PYNQ_VERSION_CMD = "import pynq; print(pynq.__version__)"


def check(host: str, cfg: dict) -> Finding | None:
    """The PYNQ on the board against the one its profile needs (deploy.pynq: the PYNQ-Z1 needs a v3.x
    image, PYNQ 4.0 dropped it; the KV260 PYNQ 4). kabe's deploy runs the board's own pynq, so the wrong
    image fails there, minutes in: asked here over ssh (the host key is known by now), as deploy asks."""
    if cfg.get("bdf"):  # an ami_tool card's host (the V80): no PYNQ
        return None
    key = cfg.get("profile") or config.value(config.load(), "default_board")  # else the project's default board
    if key is None:
        return Finding("board PYNQ", "no board profile named", "[tool.kabe.board] profile naming a board", False,
                       "set profile = \"<board>\" under [tool.kabe.board], or [tool.kabe] default_board")
    try:
        board = boards.get(key)
    except UserError as e:
        return Finding("board PYNQ", f"profile {key!r}: {e}", "[tool.kabe.board] profile naming a board", False,
                       "set profile = \"<board>\" under [tool.kabe.board] (kabe's: " + ", ".join(boards.known()) + ")")
    need = board.pynq
    if need is None or board.program != "pynq":
        return None
    wanted = f"pynq {need.versions} ({need.image}) for {board.name}"
    try:
        target = ssh.Target.parse(host, options=dict(cfg.get("ssh_options") or {}),
                                  identity=Path(cfg["identity"]).expanduser() if cfg.get("identity") else None)
        if cfg.get("port"):
            target = ssh.Target(target.host, target.user, int(cfg["port"]), target.identity, target.options,
                                target.connect_timeout_s)
        proc = ssh.run(target, [cfg.get("python", "python3"), "-c", PYNQ_VERSION_CMD], timeout_s=60, check=False)
    except ssh.DeployError as e:
        return Finding("board PYNQ", f"not asked: {e}", wanted, False, "make the board reachable over ssh by key")
    got = proc.stdout.strip().splitlines()[-1].strip() if proc.returncode == 0 and proc.stdout.strip() else ""
    if not got:
        return Finding("board PYNQ", "pynq does not import on the board", wanted, False,
                       f"flash the board's SD card with {need.image} ({need.source})")
    try:
        fits = versions.matches(got, need.versions)
    except ValueError:
        fits = False
    return Finding("board PYNQ", f"pynq {got}", wanted, fits,
                   f"flash the board's SD card with {need.image} ({need.source})")
