"""Signed archive units: who built what, checked before a pulled unit is believed.

A unit (reports/<commit>/<design>/<kind>/) pushed to the shared archive carries SIGNATURE_FILE: the
canonical statement (unit name and the sha256 of every raw file, bitstreams included) and an SSH
signature over it. A pull places a unit in reports/ only when the signature verifies for a key in
the project's allowed-signers file; everything else is kept apart in reports/.unverified/.

Why SSH signatures through `ssh-keygen -Y sign/verify` (and not ed25519 from a Python package): it
is the format and tooling git itself uses for SSH-signed commits and tags, so the allowed-signers
file is the one git reads for `gpg.ssh.allowedSignersFile` ("<principal> [options] <keytype> <key>"
per line), CI's secret is an ordinary OpenSSH private key, a reviewer can check a unit by hand with
the same ssh-keygen, and kabe needs no new dependency. Everything is handed to ssh-keygen through
pipes: no temp file is written, nothing from the archive is ever a command-line argument.

The signed bytes (statement()) are JSON with sorted keys and no spaces:
    {"files":{"<name>":"<sha256 of the raw bytes>",...},"format":2,"project":"<folder>","unit":"<commit>/<design>/<kind>"}
"project" is the project's folder in its repository ("" at the top, "fpga" in a monorepo's fpga/): a
unit signed for fpga/ does not verify as fpga2/'s build of the same commit and design (format 1 had no
project, so such a replay verified; its units no longer verify and are rebuilt).
SIGNATURE_FILE holds that statement on its first line, then the armored SSH signature.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import subprocess
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from kabe.project import config
from kabe.base import provenance
from kabe.base.errors import UserError, bounded
from kabe.base.paths import ROOT

SIGNATURE_FILE = "kabe-unit.sig"
NAMESPACE = "kabe-archive"
FORMAT = 2
DEFAULT_ALLOWED_SIGNERS = Path(".kabe") / "allowed_signers"
SIGNING_KEY_ENV = "KABE_SIGNING_KEY"
# Files a unit may list but not carry: they travel only with --bitstreams (store.py).
BITSTREAM_SUFFIXES = (".bit", ".bin", ".hwh", ".xsa", ".pdi")
MAX_SIGNATURE_BYTES = 64 * 1024  # a statement of a few hundred files plus a ~300-byte armored signature
SSH_KEYGEN_TIMEOUT_S = 30
_ARMOR_BEGIN = b"-----BEGIN SSH SIGNATURE-----"
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


class SigningError(UserError):
    """Signing could not run: no ssh-keygen, an unreadable key. The message names the file and the fix."""


@dataclass(frozen=True)
class SignatureCheck:
    ok: bool
    signer: str | None  # the principal from allowed_signers
    reason: str  # one line: why not ok, or who signed
    file_hashes: dict[str, str] = field(default_factory=dict)  # the signed statement's list (empty when unreadable)


def is_bitstream(name: str) -> bool:
    return name.endswith(BITSTREAM_SUFFIXES)


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def hash_dir(unit_dir: Path) -> dict[str, str]:
    """{relative name: sha256} of every regular file under unit_dir except SIGNATURE_FILE (links are not
    followed, and a name starting with a dot is kabe's own temp file, never part of a unit)."""
    out = {}
    for p in sorted(Path(unit_dir).rglob("*")):
        rel = p.relative_to(unit_dir).as_posix()
        if rel == SIGNATURE_FILE or p.is_symlink() or not p.is_file() or any(c.startswith(".") for c in rel.split("/")):
            continue
        out[rel] = provenance.sha256_file(p)
    return out


@functools.lru_cache(maxsize=None)
def _project_of(root: str) -> str:
    return (provenance.project_prefix(Path(root)) or "").strip("/")


def this_project(root: Path | None = None) -> str:
    """The project's folder in its repository as a signature names it ("" at the top, "hw/fpga")."""
    return _project_of(str(Path(root or ROOT).resolve()))


def statement(unit: str, file_hashes: Mapping[str, str], project: str | None = None) -> bytes:
    """The canonical bytes that are signed for a unit of the project (this one when None)."""
    files = {str(k): str(v) for k, v in file_hashes.items() if k != SIGNATURE_FILE}
    project = this_project() if project is None else project
    return json.dumps({"format": FORMAT, "project": project, "unit": unit, "files": files}, sort_keys=True,
                      separators=(",", ":")).encode()


def _ssh_keygen(args: list[str], data: bytes, sig: bytes | None = None) -> subprocess.CompletedProcess:
    """ssh-keygen with data on stdin and (for verify) the signature on a pipe named /dev/fd/N."""
    read_fd = write_fd = None
    try:
        if sig is not None:
            read_fd, write_fd = os.pipe()
            os.write(write_fd, sig)  # below the pipe's buffer (MAX_SIGNATURE_BYTES is checked first)
            os.close(write_fd)
            write_fd = None
            args = [a.replace("{sigfile}", f"/dev/fd/{read_fd}") for a in args]
        try:
            return subprocess.run(["ssh-keygen", *args], input=data, capture_output=True,
                                  pass_fds=(read_fd,) if read_fd is not None else (), timeout=SSH_KEYGEN_TIMEOUT_S)
        except FileNotFoundError:
            raise SigningError("ssh-keygen is not on PATH; archive signatures are OpenSSH signatures, "
                               "install OpenSSH (openssh-client)") from None
        except subprocess.TimeoutExpired:
            raise SigningError(f"ssh-keygen {args[0]} {args[1]} did not answer in {SSH_KEYGEN_TIMEOUT_S} s") from None
    finally:
        for fd in (read_fd, write_fd):
            if fd is not None:
                os.close(fd)


def _said(proc: subprocess.CompletedProcess) -> str:
    lines = [ln.strip() for ln in proc.stderr.decode(errors="replace").splitlines() if ln.strip()]
    return lines[-1] if lines else f"exit {proc.returncode}"


def sign_unit(unit: str, file_hashes: Mapping[str, str], key: Path, project: str | None = None) -> bytes:
    """SIGNATURE_FILE's content for this unit: the statement, a newline, the armored signature."""
    data = statement(unit, file_hashes, project)
    key = Path(key)
    if not key.is_file():
        raise SigningError(f"signing key {key} ({SIGNING_KEY_ENV}) is not a file; point {SIGNING_KEY_ENV} at an "
                           f"OpenSSH private key (ssh-keygen -t ed25519 -N '' -f <file>)")
    proc = _ssh_keygen(["-Y", "sign", "-q", "-n", NAMESPACE, "-f", str(key)], data)
    if proc.returncode != 0 or _ARMOR_BEGIN not in proc.stdout:
        raise SigningError(f"cannot sign with {key}: {_said(proc)} (the key must be an unencrypted OpenSSH private "
                           f"key readable only by you: chmod 600 {key})")
    return data + b"\n" + proc.stdout


def parse_signature(sig: bytes) -> tuple[dict, bytes] | str:
    """(the statement as a dict, the armored signature), or why SIGNATURE_FILE's content is unreadable."""
    if len(sig) > MAX_SIGNATURE_BYTES:
        return f"{SIGNATURE_FILE} is {len(sig)} bytes, more than {MAX_SIGNATURE_BYTES}"
    line, _, armor = sig.partition(b"\n")
    if not armor.lstrip().startswith(_ARMOR_BEGIN):
        return f"{SIGNATURE_FILE} holds no SSH signature after its statement line"
    try:
        stmt = json.loads(line)
    except (ValueError, UnicodeDecodeError):
        return f"{SIGNATURE_FILE}'s first line is not a JSON statement"
    if (not isinstance(stmt, dict) or stmt.get("format") != FORMAT or not isinstance(stmt.get("unit"), str)
            or not isinstance(stmt.get("project"), str)
            or not isinstance(stmt.get("files"), dict)
            or not all(isinstance(k, str) and isinstance(v, str) and _SHA256.match(v) for k, v in stmt["files"].items())):
        return f"{SIGNATURE_FILE}'s statement is not a format-{FORMAT} kabe statement"
    if statement(stmt["unit"], stmt["files"], stmt["project"]) != line:
        return f"{SIGNATURE_FILE}'s statement is not in canonical form"
    return stmt, armor


def _verify_signature(line: bytes, armor: bytes, allowed_signers: Path | None) -> tuple[str | None, str]:
    """(principal, '') when armor is a valid signature over line by a key in allowed_signers, else (None, why)."""
    if allowed_signers is None or not Path(allowed_signers).is_file():
        where = allowed_signers or DEFAULT_ALLOWED_SIGNERS
        return None, f"no allowed-signers file ({where}) to check the signature against"
    found = _ssh_keygen(["-Y", "find-principals", "-s", "{sigfile}", "-f", str(allowed_signers)], b"", armor)
    principals = [p for p in found.stdout.decode(errors="replace").splitlines() if p.strip()]
    if found.returncode != 0 or not principals:
        return None, f"signed by a key not in {allowed_signers}"
    principal = principals[0].strip()
    proc = _ssh_keygen(["-Y", "verify", "-f", str(allowed_signers), "-I", principal, "-n", NAMESPACE,
                        "-s", "{sigfile}"], line, armor)
    if proc.returncode != 0:
        return None, f"bad signature (key of {bounded(principal)} in {allowed_signers}): {_said(proc)}"
    return principal, ""


def verify_statement(unit: str, sig: bytes, file_hashes: Mapping[str, str],
                     allowed_signers: Path | None, project: str | None = None) -> SignatureCheck:
    """Does SIGNATURE_FILE's content `sig` sign exactly this unit and these file hashes, by an allowed key?"""
    parsed = parse_signature(sig)
    if isinstance(parsed, str):
        return SignatureCheck(False, None, parsed)
    stmt, armor = parsed
    line = sig.partition(b"\n")[0]
    signer, why = _verify_signature(line, armor, allowed_signers)
    if signer is None:
        return SignatureCheck(False, None, why, dict(stmt["files"]))
    if stmt["unit"] != unit:
        return SignatureCheck(False, signer, f"the signature is for {bounded(stmt['unit'])}, not {unit}", dict(stmt["files"]))
    why = _other_project(stmt, project)
    if why:
        return SignatureCheck(False, signer, why, dict(stmt["files"]))
    if statement(unit, file_hashes, stmt["project"]) != line:
        changed = sorted(set(stmt["files"]) ^ set(file_hashes)
                         | {n for n in set(stmt["files"]) & set(file_hashes) if stmt["files"][n] != file_hashes[n]})
        return SignatureCheck(False, signer, f"file {bounded(changed[0] if changed else '?')} changed since it was signed",
                              dict(stmt["files"]))
    return SignatureCheck(True, signer, f"signed by {signer}", dict(stmt["files"]))


def _other_project(stmt: Mapping, project: str | None) -> str | None:
    project = this_project() if project is None else project
    if stmt["project"] != project:
        return (f"the signature is for project folder {bounded(stmt['project'] or '(the top)')!s}, not "
                f"{project or '(the top)'}: a unit of another project of the repository")
    return None


def check_if_signed(unit_dir: Path, unit: str, allowed_signers: Path | None = None,
                    project: str | None = None) -> SignatureCheck | None:
    """None for a unit built on this machine (no SIGNATURE_FILE, not even a link by that name), else
    verify_dir's check: the one rule by which a cache hit, `kabe ci` and deploy tell the two apart."""
    sig_path = Path(unit_dir) / SIGNATURE_FILE
    if not sig_path.exists() and not sig_path.is_symlink():
        return None
    return verify_dir(unit_dir, unit, allowed_signers, project)


def verify_dir(unit_dir: Path, unit: str, allowed_signers: Path | None = None,
               project: str | None = None) -> SignatureCheck:
    """Re-hash the files in unit_dir and check them against its SIGNATURE_FILE: ok only when the signature
    verifies for an allowed signer, every present file's sha256 is the statement's, and every listed file
    that is absent is a bitstream (the kind a pull leaves behind unless asked)."""
    allowed_signers = allowed_signers_file() if allowed_signers is None else allowed_signers
    sig_path = Path(unit_dir) / SIGNATURE_FILE
    if sig_path.is_symlink() or not sig_path.is_file():
        return SignatureCheck(False, None, "unsigned")
    if sig_path.stat().st_size > MAX_SIGNATURE_BYTES:
        return SignatureCheck(False, None, f"{SIGNATURE_FILE} is larger than {MAX_SIGNATURE_BYTES} bytes")
    sig = sig_path.read_bytes()
    parsed = parse_signature(sig)
    if isinstance(parsed, str):
        return SignatureCheck(False, None, parsed)
    stmt, armor = parsed
    signer, why = _verify_signature(sig.partition(b"\n")[0], armor, allowed_signers)
    listed = dict(stmt["files"])
    if signer is None:
        return SignatureCheck(False, None, why, listed)
    if stmt["unit"] != unit:
        return SignatureCheck(False, signer, f"the signature is for {bounded(stmt['unit'])}, not {unit}", listed)
    why = _other_project(stmt, project)
    if why:
        return SignatureCheck(False, signer, why, listed)
    present = hash_dir(unit_dir)
    for name, digest in sorted(present.items()):
        if name not in listed:
            return SignatureCheck(False, signer, f"file {bounded(name)} is not in the signed list", listed)
        if listed[name] != digest:
            return SignatureCheck(False, signer, f"file {bounded(name)} changed since it was signed", listed)
    for name in sorted(set(listed) - set(present)):
        if not is_bitstream(name):
            return SignatureCheck(False, signer, f"file {bounded(name)} is signed but missing", listed)
    return SignatureCheck(True, signer, f"signed by {signer}", listed)


# A run that must not take its list of trusted keys from the commit it builds (kabe ci for a pull
# request: the change could add its author's key) pins the list for its duration (pinned_allowed_signers).
_pinned: list[Path | None] = []


@contextmanager
def pinned_allowed_signers(path: Path | None):
    """Within: every verification (pull, cache, kabe ci's archived builds) reads `path` as the allowed
    signers (None: no key is trusted, so no pulled unit verifies), whatever this checkout's file says."""
    _pinned.append(path)
    try:
        yield
    finally:
        _pinned.pop()


def is_pinned() -> bool:
    return bool(_pinned)


def allowed_signers_file(settings: Mapping | None = None) -> Path | None:
    """[tool.kabe] allowed_signers (relative to the project), default .kabe/allowed_signers; None when
    the file does not exist (then no pulled unit verifies). A pinned list (pinned_allowed_signers) wins."""
    if _pinned:
        path = _pinned[-1]
        return path if path is not None and path.is_file() else None
    settings = config.load() if settings is None else settings
    value = settings.get("allowed_signers") or str(DEFAULT_ALLOWED_SIGNERS)
    path = Path(value)
    path = path if path.is_absolute() else ROOT / path
    return path if path.is_file() else None


def signing_key(settings: Mapping | None = None) -> Path | None:
    """The private key CI signs with: the file named by $KABE_SIGNING_KEY (CI's secret), or None."""
    value = os.environ.get(SIGNING_KEY_ENV, "").strip()
    if not value:
        return None
    path = Path(value).expanduser()
    if not path.is_file():
        raise SigningError(f"{SIGNING_KEY_ENV}={bounded(value)} is not a file; set it to the path of the OpenSSH private "
                           f"key CI signs with (docs/archive.md, 'CI secret'), or unset it to push unsigned")
    return path
