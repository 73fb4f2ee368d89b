"""`doit deploy:<design>` for a board programmed with AMD's ami_tool (the Alveo V80 on AVED): push the
archived boot image to the card's host over SSH and write it to the card's flash.

    sudo ami_tool cfgmem_program -d <bdf> -t primary -i <design>_nofpt.pdi -p 0 -y

(AVED docs, "AVED Updating Design PDI in Flash"; the options as AVED's sw/AMI/app/cmd_handlers/
cmd_cfgmem_program.c reads them: -y skips its confirmation prompt, which over SSH has no terminal.)
The image deployed is the one whose sha256 the build's manifest recorded, from a build whose gate
passed (recomputed here), signed or built here (kabe.deploy.host's rules); on the host its sha256 is
taken again before ami_tool sees it, so a file changed in between is never programmed.

ami_tool's exit status is not its verdict: it exits 0 after "Aborting..." too. Programming counts
only when its output says the image was programmed and the hot reset into the partition was done.
Nothing runs on the card afterwards yet: numpy verification of the engine on the V80 is a later
step, and the report says so (ON_CARD_VERIFICATION).
"""

from __future__ import annotations

import re

from rich.console import Console

from kabe.base.console import make_console
from kabe.project import designs
from kabe.base import provenance
from ..records import load as record_load
from kabe.store.archive import archive_dir
from . import board_output, ssh
from .host import DeploySettings, _check_provenance, _manifest_artifacts, archive_board_result

ON_CARD_VERIFICATION = "programmed; on-card verification not implemented for the V80 yet"
BOOT_DEVICE = "primary"  # the card's OSPI flash (AMR docs, "Device Programming")
PARTITION = 0  # AVED's first PDI_BOOT partition, the one the docs program
IMAGE_KEY = "pdi_nofpt"  # manifest artifact: the design image + AMC firmware (bootgen), what ami_tool writes
# What cmd_cfgmem_program.c prints when the image is written and the card rebooted into it
PROGRAMMED = "OK. Image has been programmed successfully."
HOT_RESET = re.compile(r"Hot reset has been performed into partition (\d+)\.")
INCOMING_UUID = re.compile(r"Incoming Configuration\s*-+\s*UUID\s*\|\s*(\S+)")


def _archived_image(design: designs.Design, flow: str, commit: provenance.Commit, reports_root) -> tuple[dict, object]:
    src = archive_dir(commit, design.name, flow, reports_root)
    if not (src / "metrics.json").is_file():
        raise ssh.DeployError(f"no {flow}-flow build of {design.name} is archived for {commit.short}; run "
                              f"`doit build:{design.name} flow={flow}` first: ami_tool programs the .pdi only the "
                              f"vivado flow makes")
    checked = record_load.checked(src / "metrics.json", cores_root=design.yaml_file.parent.parent,
                                  where=(commit.archive_name, design.name, flow))
    if isinstance(checked, record_load.Invalid):
        raise ssh.DeployError(f"{checked.path}: {checked.reason}; kabe does not deploy a build it cannot check")
    if not checked.passed:
        raise ssh.DeployError(f"{design.name} at {commit.short} did not pass its gate ({checked.verdict.why_not_passed()[:300]}); "
                              f"kabe does not deploy a build that failed timing or verification")
    artifacts = _manifest_artifacts(src / "manifest.json")
    if IMAGE_KEY not in artifacts:
        raise ssh.DeployError(f"{src} has no boot image ({IMAGE_KEY}: the .pdi with AVED's management firmware); "
                              f"rebuild with `doit build:{design.name} flow=vivado`")
    images = sorted(src.glob("*_nofpt.pdi"))
    if len(images) != 1:
        raise ssh.DeployError(f"{src}: expected one *_nofpt.pdi, found {len(images)}")
    image = images[0]
    if provenance.sha256_file(image) != artifacts[IMAGE_KEY]:
        raise ssh.DeployError(f"{image} does not match the sha256 its build recorded; the archive was altered, rebuild")
    _check_provenance(src, f"{commit.archive_name}/{design.name}/{flow}", checked.record, (image,))
    return checked.record, image


def _remote_sha256(target: ssh.Target, path: str, timeout_s: float) -> str:
    proc = ssh.run(target, ["sha256sum", "--", path], timeout_s=timeout_s, check=False)
    digest = proc.stdout.split(" ", 1)[0].strip() if proc.returncode == 0 else ""
    if not re.fullmatch(r"[0-9a-f]{64}", digest):
        raise ssh.RemoteCommandFailed(f"{target.display}: `sha256sum {path}` gave no sha256 (exit {proc.returncode}: "
                                      f"{board_output.shown(proc.stderr.strip()[-200:])}); nothing was programmed")
    return digest


def programming_failures(returncode: int, stdout: str, partition: int = PARTITION) -> list[str]:
    """What went wrong, from ami_tool's own words (an empty list: programmed and booted into it)."""
    failures = []
    if returncode != 0:
        failures.append(f"ami_tool exited {returncode}")
    if PROGRAMMED not in stdout:
        said = "it aborted" if "Aborting..." in stdout else "it did not say the image was programmed"
        failures.append(f"ami_tool did not program the card: {said} ('{PROGRAMMED}' missing)")
    reset = HOT_RESET.search(stdout)
    if reset is None or int(reset.group(1)) != partition:
        failures.append(f"ami_tool did not say it hot-reset the card into partition {partition}, so the card may "
                        f"still run its previous image")
    return failures


def deploy(design: designs.Design, settings: DeploySettings, *, flow: str = "vivado", reports_root=None,
           commit: provenance.Commit | None = None, console: Console | None = None) -> dict:
    from kabe.base.paths import REPORTS

    reports_root = REPORTS if reports_root is None else reports_root
    if not settings.bdf:
        raise ssh.DeployError(f"{design.name} is programmed with ami_tool, which needs the card's PCIe address: set "
                              f"[tool.kabe.board] bdf = \"<bus>:<device>.<function>\" (like \"21:00.0\": `lspci -d 10ee:` "
                              f"on the card's host lists it)")
    commit = commit or provenance.current_commit()
    record, image = _archived_image(design, flow, commit, reports_root)
    if record["dirty"] and settings.allow_dirty is not True:
        raise ssh.DeployError(f"{design.name} at {commit.short} was built from a tree with uncommitted changes, so no "
                              f"commit names what runs on the card; commit and rebuild, or set "
                              f"[tool.kabe.board] allow_dirty = true to deploy it anyway")
    target = settings.target()
    remote = f"{settings.remote_dir.rstrip('/')}/{commit.sha[:12]}-{design.name}"
    remote_image = f"{remote}/{image.name}"
    want = provenance.sha256_file(image)
    console = console or make_console(stderr=True)
    with console.status(f"[bold]{design.name}[/]: pushing {image.name} to {target.display}:{remote}"):
        ssh.push(target, [image], remote, timeout_s=settings.timeout_s)
    have = _remote_sha256(target, remote_image, settings.timeout_s)
    if have != want:
        raise ssh.DeployError(f"{target.display}:{remote_image} has sha256 {have[:16]}..., not the archived image's "
                              f"{want[:16]}...; nothing was programmed (the copy changed on the way or on the host)")
    argv = [settings.ami_tool, "cfgmem_program", "-d", settings.bdf, "-t", BOOT_DEVICE, "-i", remote_image,
            "-p", str(PARTITION), "-y"]
    if settings.sudo:
        argv = ["sudo", "-n", *argv]
    with console.status(f"[bold]{design.name}[/]: on {target.display}: ami_tool writing {image.name} to card "
                        f"{settings.bdf}'s flash (partition {PARTITION}) and hot-resetting it"):
        proc = ssh.run(target, argv, timeout_s=settings.timeout_s, check=False)
    failures = programming_failures(proc.returncode, proc.stdout)
    uuid = INCOMING_UUID.search(proc.stdout)
    result = {
        "programmer": "ami_tool", "passed": not failures, "failures": failures,
        "verification": ON_CARD_VERIFICATION if not failures else "not programmed",
        "design": design.name, "commit": record["commit"], "dirty": record["dirty"], "board": target.display,
        "bdf": settings.bdf, "partition": PARTITION, "image": image.name, "image_sha256": want,
        "remote_image_sha256": have, "logic_uuid": uuid.group(1) if uuid else None,
        "exit_code": proc.returncode, "archive": str(image.parent),
    }
    return archive_board_result(commit, design.name, reports_root, result, argv,
                                {"ami_tool.stdout": board_output.log_text(proc.stdout),
                                 "ami_tool.stderr": board_output.log_text(proc.stderr)}, "programmed")
