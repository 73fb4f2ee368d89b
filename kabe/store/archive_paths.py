"""What a stored path of the shared archive may be, and how large a pulled unit may grow.

A pulled archive is someone else's tree: git stores '..' components, 4,595-character names, symlinks
and gitlinks as readily as reports. So every entry is judged here from `git ls-tree --long` alone,
before a byte of it is read or written:

    <commit>/<design>/<kind>/<file>          kind: a flow (open, vivado), sim, board, repro
    <commit>/<design>/sweep-<flow>/<...>     a sweep: sweep.json and <variant-id>/<file>

    ip/<flow>/<key>/<file>                   a flow's content-keyed cache entry (a Vivado IP's products)

commit: 40 (or 64) lowercase hex digits, never '-dirty'; design: a design name (kabe.project.designs'
rule); every component of the file part is a plain name (letters, digits, '_', '-', '.', '+', '=',
',', '@'; starting with a letter, digit or '_': no '.', '..', hidden or empty name); bounded lengths
and depth; a regular file (mode 100644/100755), never a link (120000), a gitlink (160000) or a tree.

The caps (see docs/archive.md for the numbers behind them): the largest real Vivado report among
the shared fixtures is 2.7 MB, a Zynq-7020 bitstream is 4 MB, a large UltraScale+ one about 100
MB. A file may be at most MAX_FILE_BYTES once decompressed, a unit MAX_UNIT_BYTES and MAX_UNIT_FILES
files (a sweep of a few hundred variants is one unit); what git stores for a unit is capped as well
(MAX_UNIT_STORED_BYTES), checked from ls-tree sizes before reading. Decompression is streamed and
stops at the cap, so a bomb costs at most the cap in disk and a chunk in memory.
"""

from __future__ import annotations

import re

from kabe.project import config
from kabe.project.designs import NAME_PATTERN
from kabe.base.errors import bounded
from kabe.base.git import Entry  # noqa: F401 (one line of git ls-tree; ap.Entry to the store)
from kabe.store.signing import MAX_SIGNATURE_BYTES, SIGNATURE_FILE

MAX_FILE_BYTES = 256 * 2**20  # decompressed, per file: 60x the 7020's bitstream, room for a large part's
MAX_UNIT_BYTES = 512 * 2**20  # decompressed, per unit (bitstream + .hwh + reports)
MAX_UNIT_STORED_BYTES = 256 * 2**20  # what git stores for one unit (gzip of the above)
MAX_UNIT_FILES = 5000  # a sweep unit: variants x ~10 files
MAX_COMPONENT = 128  # characters of one name
MAX_PATH = 400  # characters of the whole stored path (a commit, a design, a kind and a file of 4 levels)
MAX_FILE_DEPTH = 4  # components of the file part: <variant>/raw/<file> and one more

FLOW_KINDS = tuple(f for f in config.FLOWS if f != "auto")  # kabe.flows.FLOWS (a test keeps them equal)
ARCHIVE_KINDS = FLOW_KINDS + ("sim", "board", "repro")
_COMMIT = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+=,@-]*")
_FILE_MODES = ("100644", "100755")


def shown(path: str) -> str:
    """A stored path as a message may show it: cut, quoted where needed, no control characters."""
    return bounded(path, 120)


# A unit shared beside one that pre-empted its path (kabe.store.store: a later push never replaces a unit):
# <commit>/<design>/<kind>~<tag>, tag 16 hex digits of the honest unit's own statement, which nobody can
# know before the build exists, so no one can pre-empt that path too. It lands in reports/ at the unit
# it stands beside when it verifies and the other does not.
_BESIDE = re.compile(r"~[0-9a-f]{16}$")


def base_unit(unit: str) -> str:
    """'<commit>/<design>/<kind>' of a unit name, without the '~<tag>' of one shared beside another."""
    return _BESIDE.sub("", unit)


def is_beside(unit: str) -> bool:
    return _BESIDE.search(unit) is not None


# A shared cache unit (kabe.store.store.SharedCache): ip/<flow>/<64 hex digits: the entry's content key>, or
# one shared beside it (~<tag>, as above). Its file part may be deeper than a build's: Vivado writes an IP's
# products as <module>/<module>/user_design/rtl/<group>/<file> (a MIG), so MAX_SHARED_FILE_DEPTH.
SHARED_PREFIX = "ip/"
MAX_SHARED_FILE_DEPTH = 8
_SHARED_UNIT = re.compile(r"ip/([a-z][a-z0-9_]{0,30})/([0-9a-f]{64})(~[0-9a-f]{16})?")


def is_shared(path: str) -> bool:
    """Is this stored path (or unit name) a shared cache unit's, not a build's?"""
    return path.startswith(SHARED_PREFIX)


def split_shared(path: str) -> tuple[str, str] | None:
    """('ip/<flow>/<key>[~tag]', '<file>') when the first three components make a shared unit name, else None."""
    parts = path.split("/", 3)
    if len(parts) < 4 or not _SHARED_UNIT.fullmatch("/".join(parts[:3])):
        return None
    return "/".join(parts[:3]), parts[3]


def shared_key(unit: str) -> tuple[str, str]:
    """(flow, content key) of a shared unit name (its '~tag' dropped)."""
    _ip, flow, key = base_unit(unit).split("/")
    return flow, key


def is_kind(kind: str) -> bool:
    kind = _BESIDE.sub("", kind)
    if kind.startswith("sweep-"):
        return kind[len("sweep-"):] in FLOW_KINDS
    return kind in ARCHIVE_KINDS


def split_unit(path: str) -> tuple[str, str] | None:
    """('<commit>/<design>/<kind>', '<file>') when the first three components make a unit name (each
    checked), else None: the file part is judged by path_problem."""
    parts = path.split("/", 3)
    if len(parts) < 4 or not _COMMIT.fullmatch(parts[0]) or not NAME_PATTERN.fullmatch(parts[1]) \
            or not is_kind(parts[2]):
        return None
    return "/".join(parts[:3]), parts[3]


def unit_problem(path: str) -> str | None:
    """Why the unit part of a stored path is refused, else None."""
    parts = path.split("/")
    if len(parts) < 4:
        return "not <commit>/<design>/<kind>/<file>"
    commit, design, kind = parts[:3]
    if commit.endswith("-dirty"):
        return f"commit {shown(commit)} is a dirty tree's build (never shared)"
    if not _COMMIT.fullmatch(commit):
        return f"{shown(commit)} is not a commit id (40 or 64 lowercase hex digits)"
    if not NAME_PATTERN.fullmatch(design):
        return f"{shown(design)} is not a design name"
    if not is_kind(kind):
        return f"{shown(kind)} is not an archive kind ({', '.join(ARCHIVE_KINDS)}, sweep-<flow>)"
    return None


def path_problem(entry: Entry) -> str | None:
    """Why a stored entry is refused (its mode, its path's shape, its length), else None."""
    if entry.mode == "120000":
        return "a symbolic link (kabe stores only regular files)"
    if entry.mode == "160000" or entry.kind == "commit":
        return "a gitlink (submodule) entry"
    if entry.kind != "blob" or entry.mode not in _FILE_MODES:
        return f"mode {shown(entry.mode)} {shown(entry.kind)} is not a regular file"
    if len(entry.path) > MAX_PATH:
        return f"a path of {len(entry.path)} characters (at most {MAX_PATH})"
    parts = entry.path.split("/")
    for part in parts:
        if part in ("", ".", ".."):
            return f"a {shown(part) if part else 'empty'} component"
        if len(part) > MAX_COMPONENT:
            return f"a name of {len(part)} characters (at most {MAX_COMPONENT})"
    if is_shared(entry.path):
        if split_shared(entry.path) is None:
            return "not ip/<flow>/<64 hex digits: its content key>/<file>"
        depth = MAX_SHARED_FILE_DEPTH
    else:
        why = unit_problem(entry.path)
        if why:
            return why
        depth = MAX_FILE_DEPTH
    files = parts[3:]
    if len(files) > depth:
        return f"{len(files)} folder levels inside the unit (at most {depth})"
    for part in files:
        if not _NAME.fullmatch(part):
            return f"the name {shown(part)} (a unit's names are letters, digits and _ - . + = , @, not starting with a dot)"
    return None


def unit_size_problem(entries: list[Entry]) -> str | None:
    """Why a unit is too large to read, from ls-tree sizes alone (before any read), else None."""
    if len(entries) > MAX_UNIT_FILES:
        return f"{len(entries)} files (at most {MAX_UNIT_FILES})"
    stored = sum(e.size for e in entries)
    if stored > MAX_UNIT_STORED_BYTES:
        return f"{stored} bytes stored (at most {MAX_UNIT_STORED_BYTES})"
    for e in entries:
        if not e.path.endswith(".gz") and e.size > MAX_FILE_BYTES:
            return f"{e.path.rsplit('/', 1)[-1]}: {e.size} bytes (at most {MAX_FILE_BYTES})"
        if e.path.endswith("/" + SIGNATURE_FILE) and e.size > MAX_SIGNATURE_BYTES:
            return f"{SIGNATURE_FILE}: {e.size} bytes (at most {MAX_SIGNATURE_BYTES})"
    return None
