"""`doit deploy:<design>`: push the archived bitstream and the runner to the board, run, archive the result.

Only a build whose gate passed is deployed, and only from its own archive: the .bit, .hwh and the
block design's cell list are the files whose sha256 the build's manifest recorded; the runner
refuses a bitstream whose embedded commit differs from that archive's, and a PL whose running
commit (USR_ACCESS read back after programming) does. The board's result is evidence: the verdict
is re-derived here (kabe.deploy.verdict) and archived, failed runs included.
"""

from __future__ import annotations

import errno
import hashlib
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console

from kabe.base.console import make_console
from kabe.base.errors import UserError
from kabe.project import designs
from kabe.base import provenance
from kabe.cache import cache, tracked_outputs
from ..records import metrics
from kabe.store import signing
from ..records import load as record_load
from kabe.store.archive import archive_dir, to_json, write_atomic
from kabe.base.paths import REPORTS, ROOT
from ..verify import declared
from kabe.base import bitfile, ssh_policy
from . import board_frames, board_output, model_push, pl_names, ssh, verdict

RUNNER = Path(__file__).with_name("board_runner.py")
BITFILE = Path(__file__).parent.parent / "base" / "bitfile.py"
PL_NAMES = Path(__file__).with_name("pl_names.py")
BOARD_FRAMES = Path(__file__).with_name("board_frames.py")


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
    allow_dirty: bool = False  # deploy a build from a tree with uncommitted changes (its commit names no code)
    bdf: str | None = None  # an ami_tool board (the V80): the card's PCIe address on its host, like "21:00.0"
    ami_tool: str = "ami_tool"  # an ami_tool board: the command on the card's host (kabe.deploy.ami)
    # which board the host is ([tool.kabe.board] profile: a profile's key, "kv260"); None: not said. A design
    # built for another board is refused before anything is pushed (kabe doctor --deploy reads it too)
    profile: str | None = None

    def __post_init__(self) -> None:
        # checked when the settings are made, before any archive is read or any process starts
        self.target()
        ssh.check_remote_dir(self.remote_dir)
        if self.bdf is not None and not ssh_policy.bdf_ok(self.bdf):
            raise ssh.BadTarget(f"bdf={ssh._shown(self.bdf)} is not a PCIe address like \"21:00.0\" "
                                f"([domain:]bus:device.function, hex); fix [tool.kabe.board] bdf")
        if not ssh_policy.command_ok(self.ami_tool):
            raise ssh.BadTarget(f"ami_tool={ssh._shown(self.ami_tool)} is not one command name or path; fix "
                                f"[tool.kabe.board] ami_tool")
        if not ssh_policy.timeout_ok(self.timeout_s):
            raise ssh.BadTarget(f"timeout_s={ssh._shown(self.timeout_s)} is not a number of seconds above 0 and at "
                                f"most {ssh_policy.MAX_TIMEOUT_S} (a day); fix [tool.kabe.board] timeout_s")

    def target(self) -> ssh.Target:
        t = ssh.Target.parse(self.board, identity=self.identity, options=self.ssh_options)
        if self.port and not t.port:
            t = ssh.Target(t.host, t.user, self.port, t.identity, t.options, t.connect_timeout_s)
        return t


def _manifest_artifacts(path: Path) -> dict[str, str]:
    """manifest.json's artifact hashes, each a sha256 in hex; anything else is an altered archive."""
    try:
        manifest = metrics.parse(path.read_text())
    except (OSError, ValueError, RecursionError) as e:
        raise ssh.DeployError(f"{path}: cannot be read as JSON ({str(e)[:200]}); rebuild the design") from None
    artifacts = manifest.get("artifacts", {}) if isinstance(manifest, dict) else None
    if not isinstance(artifacts, dict) or not all(
            isinstance(v, str) and len(v) == 64 and all(c in "0123456789abcdef" for c in v) for v in artifacts.values()):
        raise ssh.DeployError(f"{path}: its artifacts are not a table of sha256 hashes; the archive was altered, rebuild")
    return artifacts


def _archived_build(design: designs.Design, flow: str, commit: provenance.Commit, reports_root: Path) -> tuple[dict, Path, Path, Path]:
    src = archive_dir(commit, design.name, flow, reports_root)
    # The archive may come from elsewhere: validated, and the gate recomputed from its numbers under
    # this checkout's budgets (kabe.records.load); its own `passed` field is never the verdict.
    checked = record_load.checked(src / "metrics.json", cores_root=design.yaml_file.parent.parent,
                                  where=(commit.archive_name, design.name, flow))
    if isinstance(checked, record_load.Invalid):
        raise ssh.DeployError(f"{checked.path}: {checked.reason}; kabe does not deploy a build it cannot check")
    record = checked.record
    if not checked.passed:  # a failure, or no timing number at all (kabe.rules.gate: not estimated): no pass
        raise ssh.DeployError(f"{design.name} at {commit.short} did not pass its gate "
                              f"({checked.verdict.why_not_passed()[:300]}); "
                              f"kabe does not deploy a build that failed timing or verification")
    artifacts = _manifest_artifacts(src / "manifest.json")
    if "bit" not in artifacts or "hwh" not in artifacts:
        raise ssh.DeployError(f"{src} has no bitstream: only the vivado flow makes one (doit build:{design.name} flow=vivado)")
    bits = sorted(src.glob("*.bit"))
    if len(bits) != 1:
        raise ssh.DeployError(f"{src}: expected one .bit file, found {len(bits)}")
    bit = bits[0]
    hwh = bit.with_suffix(".hwh")
    cells = pl_names.cells_file(bit)
    if "cells" not in artifacts:
        raise ssh.DeployError(f"{src} has no {cells.name} (the block design's cell names the board runner looks up); "
                              f"it predates them: rebuild with `doit build:{design.name} flow=vivado`")
    for name, path in (("bit", bit), ("hwh", hwh), ("cells", cells)):
        if not path.exists() or provenance.sha256_file(path) != artifacts[name]:
            raise ssh.DeployError(f"{path} does not match the sha256 its build recorded; the archive was altered, rebuild")
    _check_provenance(src, f"{commit.archive_name}/{design.name}/{flow}", record, (bit, hwh, cells))
    try:  # the runner checks them again on the board, against the .hwh; here a broken list stops before any push
        pl_names.load(cells, design.ports)
    except ValueError as e:
        raise ssh.DeployError(f"{src}: {e}") from None
    return record, src, bit, hwh


def _check_provenance(src: Path, unit: str, record: dict, files: tuple[Path, ...]) -> None:
    """Only a bitstream built on this machine (a unit without a signature) or one a trusted key signed:
    a signed unit must verify (kabe.store.signing.verify_dir, the project's allowed signers) and list
    each deployed file with the sha256 it has now, so a manifest and metrics rewritten together cannot
    vouch for a bitstream. The commit the board must show is the record's, or its `reused_from` (`synth_reused_from`) — which
    a signed unit's signature covers (metrics.json is signed) and which must name a commit that exists."""
    check = signing.check_if_signed(src, unit)
    if check is not None:
        if not check.ok:
            raise ssh.DeployError(f"{src}: its signature does not verify ({check.reason}); kabe deploys only bitstreams "
                                  f"built here or signed by a key in the allowed signers")
        for path in files:
            if check.file_hashes.get(path.name) != provenance.sha256_file(path):
                raise ssh.DeployError(f"{path}: its sha256 is not the one the signed unit lists; the archive was "
                                      f"altered, pull it again or rebuild")
    origin = record.get("reused_from") or record.get("synth_reused_from")
    if origin and not cache.commit_exists(origin["commit"], ROOT):
        raise ssh.DeployError(f"{src}: it says its bitstream was built at {origin['commit'][:12]}, a commit not in this "
                              f"repository, so nothing says what the board must run; rebuild")


def _missing_build(design: designs.Design, flow: str, commit: provenance.Commit, reports_root: Path) -> str:
    """The hint for a deploy with nothing to deploy: the command that makes it, and what is there instead."""
    here = archive_dir(commit, design.name, flow, reports_root).parent
    others = sorted(d.name for d in here.iterdir() if (d / "metrics.json").is_file()) if here.is_dir() else []
    others = [o for o in others if o not in (flow, "sim", "board")]
    there = f" ({here} holds only the {' and '.join(others)}-flow build, which makes no bitstream)" if others else ""
    return (f"no {flow}-flow build of {design.name} is archived for {commit.short}{there}; run "
            f"`doit build:{design.name} flow={flow}` first: deploy needs the .bit and .hwh only the vivado flow makes")


def _check_profile(design: designs.Design, profile: str) -> None:
    """[tool.kabe.board] profile names the board the host is: a design built for another board is not pushed
    (a KV260 bitstream on a PYNQ-Z1 would be refused on the board by its part, minutes later)."""
    from .. import boards

    try:
        host_board = boards.get(profile)
    except boards.BoardError as e:
        raise ssh.DeployError(f"[tool.kabe.board] profile: {e}") from None
    if host_board.key != design.board.key:
        raise ssh.DeployError(f"the board is a {host_board.name} ([tool.kabe.board] profile = {profile!r}), but "
                              f"{design.name} is built for the {design.board.name} ({design.board.key}, its "
                              f"design.yaml's board:); deploy a design built for {host_board.name}, or name the "
                              f"host of a {design.board.name} with board=user@host and its profile")


def _check_rows(design: designs.Design, rows: int, per_port: bool) -> None:
    """rows: the model's size; a model whose size is a total over the ports (its Declares.per_port) needs a
    multiple of them, said here before anything is pushed."""
    if isinstance(rows, bool) or not isinstance(rows, int) or rows <= 0 or (per_port and rows % design.ports):
        what = f"a positive multiple of {design.name}'s {design.ports} port(s)" if per_port else "a positive integer"
        raise ssh.DeployError(f"rows={rows} must be {what}")


@dataclass(frozen=True)
class DeployRun:
    """One deploy's options (the verb's, beside the board's DeploySettings): what is run and from which archive."""

    rows: int | None = None  # the model's size; None: its declared full size
    seed: int = 1  # the test vectors are drawn from it, on the host and again on the board
    backend: str = "pynq"  # "sim": the board runner streams through a simulated PL (tests, the loopback board)
    sim_harness: Path | None = None  # the Verilator harness the "sim" backend runs
    sim_pl_usr_access: int | None = None  # tests: the simulated PL runs a bitstream other than the pushed one
    flow: str = "vivado"  # whose archive is deployed (only the vivado flow makes a bitstream)
    reports_root: Path = REPORTS
    commit: provenance.Commit | None = None  # None: the checkout's commit


def deploy(design_name: str, settings: DeploySettings, run: DeployRun = DeployRun(), *,
           console: Console | None = None) -> dict:
    rows, seed, backend, flow = run.rows, run.seed, run.backend, run.flow
    sim_harness, sim_pl_usr_access, reports_root, commit = run.sim_harness, run.sim_pl_usr_access, run.reports_root, run.commit
    tracked_outputs.check()  # a bitstream committed under reports/ is not a build of this machine's or a signed one
    design = designs.get(design_name)
    if design.board.program != "pynq":  # the V80: ami_tool writes the image to the card's flash (kabe.deploy.ami)
        raise ssh.DeployError(f"{design.name} runs on {design.board.name}, which is programmed with "
                              f"{design.board.program}, not pynq: kabe.deploy.ami deploys it (doit deploy:{design.name})")
    if design.verify.kind != "model":  # the board runner streams a golden model's beats and compares them
        raise ssh.DeployError(f"{design.name} is verified by {design.verify.label}; deploy streams a golden "
                              f"model's beats through the board and compares them, so it needs "
                              f"`verify: {{model: \"package.module:function\"}}` in {design.yaml_file}")
    if settings is not None and settings.profile is not None:  # None: a caller asking only what is refused first
        _check_profile(design, settings.profile)
    commit = commit or provenance.current_commit()
    if not (archive_dir(commit, design.name, flow, reports_root) / "metrics.json").is_file():
        raise ssh.DeployError(_missing_build(design, flow, commit, reports_root))
    record, src, bit, hwh = _archived_build(design, flow, commit, reports_root)
    if record["dirty"] and settings.allow_dirty is not True:
        raise ssh.DeployError(f"{design.name} at {commit.short} was built from a tree with uncommitted changes, so no "
                              f"commit names what runs on the board; commit and rebuild, or set "
                              f"[tool.kabe.board] allow_dirty = true to deploy it anyway")
    from ..sim import golden, runner  # numpy and the model: only once a deploy is under way

    fn = golden.load(design)
    declares = declared(fn)
    context = runner.context_for(design)
    if rows is None:  # the model's full scale, when it declares one (else size None: its own choice)
        rows = declares.size("full_size", context)
    if rows is not None:
        _check_rows(design, rows, declares.per_port)
    target = settings.target()
    remote = f"{settings.remote_dir.rstrip('/')}/{commit.sha[:12]}-{design.name}"
    pushed = model_push.files(design, ROOT)
    console = console or make_console(stderr=True)
    with console.status(f"[bold]{design.name}[/]: pushing {bit.name}, {hwh.name}, the runner and the model "
                        f"to {target.display}:{remote}"):
        ssh.push(target, [bit, hwh, pl_names.cells_file(bit), RUNNER, BITFILE, PL_NAMES, BOARD_FRAMES], remote,
                 timeout_s=settings.timeout_s)
        with model_push.staged(pushed, context) as (folders, context_file):
            for rel, files in folders.items():
                ssh.push(target, files, f"{remote}/project/{rel}".rstrip("/"), timeout_s=settings.timeout_s)
            ssh.push(target, [context_file], remote, timeout_s=settings.timeout_s)

    # The vectors are drawn again on the board from the seed; their hash proves they are the host's.
    with console.status(f"[bold]{design.name}[/]: drawing the test vectors to fingerprint them"):
        h = hashlib.sha256()
        model_status: dict[str, int] = {}  # the host's own count, to hold the board's status outputs against
        checked = 0
        for words_in, _, status, n in board_frames.draw(fn, declares, seed, rows, context, settings.transfer_mb << 20):
            board_frames.fingerprint_update(h, words_in)
            checked += n
            for k, v in status.items():
                model_status[k] = model_status.get(k, 0) + v
        digest = h.hexdigest()
    # the commit inside the bitstream: the build that ran Vivado (a cache hit reuses its bitstream)
    stamped, stamped_dirty = cache.built_by(record)
    expect_commit = bitfile.describe_word(bitfile.commit_word(stamped, stamped_dirty))
    argv = [settings.python, f"{remote}/board_runner.py", "--model", design.verify.value,
            "--context", f"{remote}/{model_push.CONTEXT_FILE}", "--seed", str(seed),
            "--bit", f"{remote}/{bit.name}", "--expect-part", design.board.part, "--expect-commit", stamped,
            "--expect-vectors", digest,
            "--backend", backend, "--transfer-mb", str(settings.transfer_mb), "--result", f"{remote}/result.json"]
    if rows is not None:
        argv += ["--size", str(rows)]
    if stamped_dirty:
        argv += ["--expect-dirty", "--allow-dirty"]  # refused above unless allowed
    if sim_harness:
        argv += ["--sim-harness", str(sim_harness)]
    if sim_pl_usr_access is not None:  # tests: the simulated PL runs a bitstream other than the pushed one
        argv += ["--sim-pl-usr-access", f"0x{sim_pl_usr_access:08X}"]
    if settings.sudo:
        argv = ["sudo", "-n", *argv]
    with console.status(f"[bold]{design.name}[/]: on {target.display}: drawing the vectors again, streaming "
                        f"{checked:,} rows through the {'PL' if backend == 'pynq' else 'simulated PL (stand-in)'}, "
                        f"comparing every beat with the model"):
        proc = ssh.run(target, argv, timeout_s=settings.timeout_s, check=False)
    if proc.returncode == 2:
        said = board_output.last_line(proc.stderr) or "the runner refused"
        raise ssh.DeployError(f"{target.display}: {said}")
    if proc.returncode not in (0, 1):
        raise ssh.RemoteCommandFailed(f"{target.display}: the board runner exited {proc.returncode} "
                                      f"({board_output.shown(' | '.join(proc.stderr.strip().splitlines()[-2:]))}); no result was recorded")
    # The board's result is evidence: the verdict is the host's (kabe.deploy.verdict).
    board, unreadable = verdict.parse_stdout(proc.stdout)
    need = design.board.pynq if backend == "pynq" else None  # the simulated PL runs no pynq
    expected = verdict.Expected(model=design.verify.value, rows=checked, seed=seed,
                                vectors_sha256=digest, commit=expect_commit, model_status=model_status,
                                pynq_versions=need.versions if need else None,
                                machine=(need.machine or None) if need else None)
    failures = [unreadable] if unreadable else verdict.board_failures(proc.returncode, board, expected)
    result = dict(board) if isinstance(board, dict) else {}
    result.update({
        "passed": not failures, "failures": failures,
        "board_passed": result.get("passed"), "exit_code": proc.returncode,
        "expected": {"rows_checked": checked, "vectors_sha256": digest, "bit_commit": expect_commit,
                     "pl_commit": expect_commit, "seed": seed, "model_status": model_status},
        "design": design.name, "commit": record["commit"], "dirty": record["dirty"], "board": target.display,
        "bit_sha256": provenance.sha256_file(bit), "archive": str(src),
    })
    return archive_board_result(commit, design.name, reports_root, result, argv,
                                {"runner.log": board_output.log_text(proc.stderr),
                                 "runner.stdout": board_output.log_text(proc.stdout)}, "passed")


def archive_board_result(commit: provenance.Commit, design_name: str, reports_root: Path, result: dict,
                         argv: list[str], logs: dict[str, str], outcome_word: str) -> dict:
    """reports/<commit>/<design>/board/: result.json, the remote tool's output and the command, written
    atomically; the board ran, so a result that cannot be kept is one line (path, errno), exit 2."""
    try:
        dest = write_atomic(archive_dir(commit, design_name, "board", reports_root),
                            {"result.json": to_json(result), **logs,
                             "command.txt": " ".join(shlex.quote(a) for a in argv) + "\n"})
    except OSError as e:
        if isinstance(e, UserError):
            raise
        raise ssh.DeployError(f"{e.filename2 or e.filename or reports_root}: {errno.errorcode.get(e.errno, e.errno)} "
                              f"({e.strerror or e}): the board's result cannot be archived "
                              f"({outcome_word}: {result['passed']}); free space or fix permissions and deploy again") from None
    result["_archive"] = str(dest)
    return result
