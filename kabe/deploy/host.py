"""`doit deploy:<design>`: push the archived bitstream and the runner to the board, run, archive the result.

Only a build whose gate passed is deployed, and only from its own archive: the .bit and .hwh are
the files whose sha256 the build's manifest recorded, and the runner refuses a bitstream whose
embedded commit differs from that archive's.
"""

from __future__ import annotations

import hashlib
import json
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console

from .. import designs, provenance
from ..records import cache, metrics
from ..records.archive import archive_dir, to_json, write_atomic
from ..model import frames
from ..paths import REPORTS, ROOT
from ..sim.runner import DEFAULT_INVALID_FRACTION, full_scale_rows
from . import ssh

RUNNER = Path(__file__).with_name("board_runner.py")
BITFILE = Path(__file__).with_name("bitfile.py")
MODEL_DIR = ROOT / "kabe" / "model"


@dataclass
class DeploySettings:
    """[tool.kabe.board] in pyproject.toml, overridable from the command line (board=user@host)."""

    board: str
    remote_dir: str = "/home/xilinx/kabe"
    sudo: bool = True  # pynq needs root to map the PL and CMA memory
    python: str = "python3"
    port: int | None = None
    identity: Path | None = None
    ssh_options: dict[str, str] = field(default_factory=dict)
    timeout_s: float = 1800
    transfer_mb: int = 32  # largest DMA transfer per port; longer runs go as several frames (frames.chunks)

    def target(self) -> ssh.Target:
        t = ssh.Target.parse(self.board, identity=self.identity, options=self.ssh_options)
        if self.port and not t.port:
            t = ssh.Target(t.host, t.user, self.port, t.identity, t.options, t.connect_timeout_s)
        return t


def _archived_build(design: designs.Design, flow: str, commit: provenance.Commit, reports_root: Path) -> tuple[dict, Path, Path, Path]:
    src = archive_dir(commit, design.name, flow, reports_root)
    record = metrics.load(src / "metrics.json")
    if not record["gate"]["passed"]:
        raise ssh.DeployError(f"{design.name} at {commit.short} failed its gate ({record['gate']['failures'][0]}); "
                              f"kabe does not deploy a build that failed timing or verification")
    manifest = json.loads((src / "manifest.json").read_text())
    artifacts = manifest.get("artifacts", {})
    if "bit" not in artifacts or "hwh" not in artifacts:
        raise ssh.DeployError(f"{src} has no bitstream: only the vivado flow makes one (doit build:{design.name} flow=vivado)")
    bits = sorted(src.glob("*.bit"))
    if len(bits) != 1:
        raise ssh.DeployError(f"{src}: expected one .bit file, found {len(bits)}")
    bit = bits[0]
    hwh = bit.with_suffix(".hwh")
    for name, path in (("bit", bit), ("hwh", hwh)):
        if not path.exists() or provenance.sha256_file(path) != artifacts[name]:
            raise ssh.DeployError(f"{path} does not match the sha256 its build recorded; the archive was altered, rebuild")
    return record, src, bit, hwh


def deploy(design_name: str, settings: DeploySettings, *, rows: int | None = None, seed: int = 1,
           backend: str = "pynq", sim_harness: Path | None = None, flow: str = "vivado",
           reports_root: Path = REPORTS, commit: provenance.Commit | None = None,
           console: Console | None = None) -> dict:
    design = designs.get(design_name)
    commit = commit or provenance.current_commit()
    record, src, bit, hwh = _archived_build(design, flow, commit, reports_root)
    if rows is None:  # the document's full scale: every row it checked, on the board
        rows = full_scale_rows(design)
    target = settings.target()
    remote = f"{settings.remote_dir.rstrip('/')}/{commit.sha[:12]}-{design.name}"
    model_files = sorted(MODEL_DIR.glob("*.py"))
    console = console or Console(stderr=True)
    with console.status(f"[bold]{design.name}[/]: pushing {bit.name}, {hwh.name} and the runner to {target.display}:{remote}"):
        ssh.push(target, [bit, hwh, RUNNER, BITFILE], remote, timeout_s=settings.timeout_s)
        ssh.push(target, model_files, f"{remote}/model", timeout_s=settings.timeout_s)

    # The vectors are regenerated on the board from the seed; their hash proves they are the host's.
    invalid_fraction = DEFAULT_INVALID_FRACTION if design.kind == "ternary" else 0.0
    with console.status(f"[bold]{design.name}[/]: drawing the {rows:,}-row test vectors to fingerprint them"):
        h = hashlib.sha256()
        for chunk in frames.port_chunks(design.kind, seed, design.ports, rows // design.ports, design.row_bytes,
                                        settings.transfer_mb << 20, invalid_fraction):
            frames.fingerprint_update(h, chunk)
        digest = h.hexdigest()
    # the commit inside the bitstream: the build that ran Vivado (a cache hit reuses its bitstream)
    stamped, stamped_dirty = cache.built_by(record)
    argv = [settings.python, f"{remote}/board_runner.py", "--kind", design.kind, "--ports", str(design.ports),
            "--rows", str(rows), "--row-bytes", str(design.row_bytes), "--seed", str(seed),
            "--invalid-fraction", repr(invalid_fraction),
            "--bit", f"{remote}/{bit.name}", "--expect-commit", stamped, "--expect-vectors", digest,
            "--backend", backend, "--transfer-mb", str(settings.transfer_mb), "--result", f"{remote}/result.json"]
    if stamped_dirty:
        argv.append("--expect-dirty")
    if sim_harness:
        argv += ["--sim-harness", str(sim_harness)]
    if settings.sudo:
        argv = ["sudo", "-n", *argv]
    with console.status(f"[bold]{design.name}[/]: on {target.display}: regenerating the vectors, streaming "
                        f"{rows:,} rows through the {'PL' if backend == 'pynq' else 'simulated PL (stand-in)'}, "
                        f"checking every row against numpy"):
        proc = ssh.run(target, argv, timeout_s=settings.timeout_s, check=False)
    if proc.returncode == 2:
        raise ssh.DeployError(f"{target.display}: {proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else 'the runner refused'}")
    if proc.returncode not in (0, 1):
        raise ssh.RemoteCommandFailed(f"{target.display}: the board runner exited {proc.returncode} "
                                      f"({' | '.join(proc.stderr.strip().splitlines()[-2:])}); no result was recorded")
    try:
        result = json.loads(proc.stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        raise ssh.RemoteCommandFailed(f"{target.display}: the board runner printed no result; nothing was recorded") from None
    result.update({"design": design.name, "commit": record["commit"], "dirty": record["dirty"], "board": target.display,
                   "bit_sha256": provenance.sha256_file(bit), "archive": str(src)})
    dest = write_atomic(archive_dir(commit, design.name, "board", reports_root),
                        {"result.json": to_json(result), "runner.log": proc.stderr,
                         "command.txt": " ".join(shlex.quote(a) for a in argv) + "\n"})
    result["_archive"] = str(dest)
    return result
