"""A variant's build crossing from a worker to the client as data, and the client's checks on it.

A worker answers with two values and nothing else: the unit it built (its archive folder as an
uncompressed tar, b"" when the build wrote none) and a JSON string saying what it knows of the run
(identity, variant_id, rc, log_tail, seconds). The client asks Dask for msgpack only
(cluster.RESULT_DESERIALIZERS), so no pickle from a worker is loaded, and it calls no method of
anything a worker made: it reads bytes and a str, and what it parses from them is plain JSON.

Nothing a worker says is believed. Before anything is written the client checks:
- the shape: exactly (bytes, str); the report's keys and types (log_tail a list of short strings);
- the tar's members, before any is read: regular files only (no symbolic or hard links, devices,
  folders), plain file names (no paths), sizes and count bounded, no name twice;
- the layout: metrics.json and manifest.json, and besides them only what the manifest accounts for
  (its raw files by name, its artifacts by sha256, cache_key.json); none of those missing;
- metrics.json as any untrusted archive is read (kabe.records.load.checked): strict JSON, the schema,
  the commit, design and flow it must belong to, and its verdict recomputed from its numbers with
  this checkout's budgets and rules;
- a record that says its gate passed where its numbers fail is forged (the worker runs the same
  commit's kabe, so an honest one cannot disagree) and refused;
- cache_key.json is there, hashes to the key metrics.json names, and that key is the one the client
  computed itself for the variant (kabe.sweep.expected): a unit built from other inputs (another
  tree, another tool version, a forger's) is not this commit's build;
- its numbers are what its own raw reports say.
A refusal is a Rejected with one line saying why: the sweep shows a failed row and archives nothing.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import re
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from kabe.rules import gate
from kabe.base.errors import bounded
from kabe.base.paths import CORES
from kabe.records import load, metrics

if TYPE_CHECKING:
    from kabe.cache.cache import CacheKey

MAX_UNIT_BYTES = 256 << 20  # a Vivado unit (bitstream, .hwh, verbose reports) is tens of MB
MAX_FILE_BYTES = 128 << 20
MAX_FILES = 64  # an archive holds about a dozen files
MAX_REPORT_CHARS = 1 << 20
MAX_LOG_LINES = 40
MAX_LOG_LINE_CHARS = 2000
REPORT_KEYS = ("identity", "variant_id", "rc", "log_tail", "seconds")
_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,99}")  # one plain file name: an archive folder is flat
_HEX = re.compile(r"[0-9a-f]{40,64}")
_OWN = ("metrics.json", "manifest.json")
_KEY_FILE = "cache_key.json"


@dataclass(frozen=True)
class Job:
    """One variant's build as the client asks for it: the tree it must be built from (identity), the design
    and its files (paths in that tree), the flow, the variant and its settings. The worker builds it; the
    client holds the worker's answer against the same Job (accept), so the two cannot disagree on a field."""

    identity: dict
    design: str
    core_file: str
    xdc_file: str
    flow: str
    variant_id: str
    settings: dict


class Rejected(Exception):
    """A worker's result kabe refuses; str() is the one-line reason."""


@dataclass(frozen=True)
class Accepted:
    """A unit that passed every check: its files, its record and the verdict recomputed here."""

    files: dict[str, bytes]
    record: dict
    verdict: gate.Verdict


# --- worker side -----------------------------------------------------------------------------------

def pack(directory: Path) -> bytes:
    """The archive folder's files as an uncompressed tar: names, sizes and bytes, nothing else (no
    modes, owners or times to believe or to get wrong)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path in sorted(Path(directory).iterdir()):
            if path.is_file() and not path.is_symlink():
                data = path.read_bytes()
                info = tarfile.TarInfo(path.name)
                info.size, info.mode = len(data), 0o644
                tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def answer(unit: bytes, identity: dict, variant_id: str, rc: int | None, log_tail: list[str],
           seconds: float) -> tuple[bytes, str]:
    """What a worker's task returns: (tar, report as a JSON string)."""
    report = {"identity": identity, "variant_id": variant_id, "rc": rc,
              "log_tail": [str(line)[:MAX_LOG_LINE_CHARS] for line in log_tail][-MAX_LOG_LINES:],
              "seconds": round(float(seconds), 3)}
    return bytes(unit), json.dumps(report)


# --- client side -----------------------------------------------------------------------------------

def split(value: Any) -> tuple[bytes, dict]:
    """The task's value as (tar, report), or Rejected. Only exact bytes and str are taken: the value
    came through msgpack, so anything else is a worker that answered in another shape."""
    if type(value) not in (tuple, list) or len(value) != 2:
        raise Rejected(f"rejected: the worker answered with {_shape(value)}, not (bytes, str)")
    unit, text = value
    if type(unit) is not bytes or type(text) is not str:
        raise Rejected(f"rejected: the worker answered with ({_shape(unit)}, {_shape(text)}), not (bytes, str)")
    if len(unit) > MAX_UNIT_BYTES:
        raise Rejected(f"rejected: the unit is {len(unit)} bytes, more than {MAX_UNIT_BYTES >> 20} MiB")
    return unit, read_report(text)


def _shape(value: Any) -> str:
    return type(value).__name__  # the type's name only: never repr() or str() of what a worker sent


def read_report(text: str) -> dict:
    """The worker's JSON report, every key and type checked."""
    if len(text) > MAX_REPORT_CHARS:
        raise Rejected(f"rejected: the worker's report is {len(text)} characters, more than {MAX_REPORT_CHARS}")
    try:
        report = metrics.parse(text)
    except (ValueError, RecursionError) as e:
        raise Rejected(f"rejected: the worker's report is not JSON ({bounded(str(e), 120)})") from None
    if not isinstance(report, dict):
        raise Rejected(f"rejected: the worker's report is a JSON {type(report).__name__}, not an object")
    missing = [k for k in REPORT_KEYS if k not in report]
    extra = [bounded(k, 30) for k in report if k not in REPORT_KEYS]
    if missing or extra:
        raise Rejected("rejected: the worker's report " + "; ".join(
            ([f"lacks {', '.join(missing)}"] if missing else []) + ([f"has unknown key(s) {', '.join(extra[:3])}"]
                                                                   if extra else [])))
    ident = report["identity"]
    if not isinstance(ident, dict) or sorted(ident) != ["commit", "sha256", "tree"] \
            or not all(isinstance(v, str) and _HEX.fullmatch(v) for v in ident.values()):
        raise Rejected("rejected: the worker's report has no identity {commit, tree, sha256} of hex strings")
    if not isinstance(report["variant_id"], str):
        raise Rejected("rejected: the worker's report has a variant_id that is not a string")
    rc = report["rc"]
    if rc is not None and (type(rc) is not int or not -255 <= rc <= 255):
        raise Rejected(f"rejected: the worker's report has rc {bounded(rc, 40)}, not an exit code")
    tail = report["log_tail"]
    if not isinstance(tail, list) or len(tail) > MAX_LOG_LINES \
            or not all(isinstance(line, str) and len(line) <= MAX_LOG_LINE_CHARS for line in tail):
        raise Rejected(f"rejected: the worker's log_tail is not a list of at most {MAX_LOG_LINES} strings "
                       f"(of at most {MAX_LOG_LINE_CHARS} characters)")
    sec = report["seconds"]
    if type(sec) not in (int, float) or not math.isfinite(sec) or sec < 0:
        raise Rejected(f"rejected: the worker's report has seconds {bounded(sec, 40)}, not a duration")
    return report


def members(unit: bytes) -> dict[str, bytes]:
    """The tar's files, name -> bytes, each member checked before it is read."""
    files: dict[str, bytes] = {}
    total = 0
    try:
        with tarfile.open(fileobj=io.BytesIO(unit), mode="r:") as tar:  # "r:": no decompression (no bombs)
            while True:
                m = tar.next()
                if m is None:
                    break
                if len(files) >= MAX_FILES:
                    raise Rejected(f"rejected: the unit holds more than {MAX_FILES} files")
                name = m.name
                if not _NAME.fullmatch(name) or name in (".", ".."):
                    raise Rejected(f"rejected: the unit holds {bounded(name, 80)}, not a plain file name "
                                   f"(an archive folder is flat)")
                if m.type not in (tarfile.REGTYPE, tarfile.AREGTYPE):
                    raise Rejected(f"rejected: the unit's {name} is {_kind(m)}; a unit holds regular files only")
                if name in files:
                    raise Rejected(f"rejected: the unit holds {name} twice")
                if m.size > MAX_FILE_BYTES or total + m.size > MAX_UNIT_BYTES:
                    raise Rejected(f"rejected: the unit's {name} is {m.size} bytes, over the limit")
                data = tar.extractfile(m).read(m.size + 1)
                if len(data) != m.size:
                    raise Rejected(f"rejected: the unit's {name} is cut short ({len(data)} of {m.size} bytes)")
                total += m.size
                files[name] = data
    except (tarfile.TarError, EOFError, OSError, ValueError) as e:
        raise Rejected(f"rejected: the unit is not an uncompressed tar ({bounded(str(e), 120)})") from None
    return files


def _kind(m: tarfile.TarInfo) -> str:
    if m.issym():
        return f"a symbolic link (to {bounded(m.linkname, 60)})"
    if m.islnk():
        return f"a hard link (to {bounded(m.linkname, 60)})"
    if m.isdev():
        return "a device or FIFO"
    if m.isdir():
        return "a folder"
    return f"a tar member of type {m.type!r}"


def _manifest(files: dict[str, bytes]) -> dict:
    for name in _OWN:
        if name not in files:
            raise Rejected(f"rejected: the unit has no {name}")
    try:
        manifest = metrics.parse(files["manifest.json"].decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise Rejected(f"rejected: manifest.json is not JSON ({bounded(str(e), 120)})") from None
    raw, artifacts = (manifest.get("raw_files"), manifest.get("artifacts")) if isinstance(manifest, dict) else (0, 0)
    if not isinstance(raw, list) or not all(isinstance(n, str) and _NAME.fullmatch(n) for n in raw) \
            or not isinstance(artifacts, dict) \
            or not all(isinstance(h, str) and re.fullmatch(r"[0-9a-f]{64}", h) for h in artifacts.values()):
        raise Rejected("rejected: manifest.json does not list raw_files (file names) and artifacts (sha256 hashes)")
    return manifest


def check_layout(files: dict[str, bytes], record: dict) -> None:
    """Every file is one the manifest accounts for, and every file it lists is there."""
    manifest = _manifest(files)
    for key in ("commit", "dirty", "design", "flow", "artifacts"):
        if manifest.get(key) != record.get(key):
            raise Rejected(f"rejected: manifest.json's {key} is not metrics.json's")
    raw = set(manifest["raw_files"])
    hashes = sorted(manifest["artifacts"].values())
    found = []
    for name, data in sorted(files.items()):
        if name in _OWN or name in raw or (name == _KEY_FILE and "cache_key" in record):
            continue
        digest = hashlib.sha256(data).hexdigest()
        if digest not in hashes:
            raise Rejected(f"rejected: the unit holds {name}, which its manifest does not list")
        found.append(digest)
    missing = sorted(raw - set(files))
    if missing or sorted(found) != hashes:
        what = ", ".join(missing[:3]) or "artifact with a sha256 its manifest lists"  # plain names (_NAME)
        raise Rejected(f"rejected: the unit is incomplete: no {what}")


def _check_key_and_reports(files: dict[str, bytes], record: dict, design: str, flow: str, cores_root: Path,
                           expected_key: Callable[[], CacheKey | str]) -> None:
    """The unit's numbers are what its own raw reports say (kabe.build.rederive, as for a cache hit: a
    worker's metrics.json saying 0 DSP beside a yosys_stat.txt listing three is refused), and it was built
    from this checkout's inputs: its cache_key.json hashes to the key its record names, and that key is the
    one `expected_key` returns, computed by the client for the variant itself (kabe.sweep.expected; issue
    36, item 4: a unit that agrees only with itself is someone else's build)."""
    from kabe.project import designs
    from kabe.build import rederive
    from kabe.cache import cache

    material = None
    if _KEY_FILE in files:
        try:
            material = json.loads(files[_KEY_FILE])
        except ValueError:
            raise Rejected(f"rejected: {_KEY_FILE} is not JSON") from None
        if cache.key_of_material(material) != record.get("cache_key"):
            raise Rejected(f"rejected: {_KEY_FILE} hashes to another key than metrics.json names")
    with tempfile.TemporaryDirectory(prefix="kabe-unit-") as tmp:
        for name, data in files.items():  # plain names (members() refused any other)
            (Path(tmp) / name).write_bytes(data)
        why = rederive.disagreement(cache.Entry(Path(tmp), record, _manifest(files)),
                                    designs.get(design, cores_root=cores_root), flow)
    if why:
        raise Rejected(f"rejected: the unit's numbers are not what its raw reports say: {why[:300]}")
    # last, as it takes seconds the first time: this checkout's own key of the variant
    want = expected_key()
    if isinstance(want, str):
        raise Rejected(f"rejected: this checkout's key for the variant is unknown ({want[:300]}), so nothing "
                       f"says the unit was built from this checkout's inputs")
    if material is None:
        raise Rejected(f"rejected: the unit has no {_KEY_FILE}, so nothing says it was built from this checkout's "
                       f"inputs (key {want.key[:12]})")
    if record.get("cache_key") != want.key:
        what = cache.difference(material, want.material) if isinstance(material, dict) else None
        raise Rejected(f"rejected: its {_KEY_FILE} is not this checkout's key {want.key[:12]} for the variant"
                       + (f" ({bounded(what, 200)})" if what else "") + ": it was built from other inputs")


def accept(value: Any, job: Job, *, archive_name: str, expected_key: Callable[[], CacheKey | str],
           cores_root: Path = CORES, rules: gate.TimingRules | None = None) -> tuple[dict, Accepted | None]:
    """(report, Accepted) for a unit that passed every check; (report, None) when the worker built no
    unit (the report's rc and log tail say why). Rejected otherwise. job: what was asked of the worker.
    expected_key: returns this checkout's key for the variant (kabe.sweep.expected.variant_key) or why it
    is unknown; called only for a unit that reaches the key check (computing it takes seconds); required,
    never guessed."""
    identity, variant_id, design, flow = job.identity, job.variant_id, job.design, job.flow
    unit, report = split(value)
    if report["identity"] != identity:
        raise Rejected(f"rejected: built from tree {bounded(report['identity'].get('tree'), 14)}, "
                       f"not {identity['tree'][:12]}")
    if report["variant_id"] != variant_id:
        raise Rejected(f"rejected: result of variant {bounded(report['variant_id'], 20)}, not {variant_id}")
    if not unit:
        return report, None
    files = members(unit)
    if "metrics.json" not in files:
        raise Rejected("rejected: the unit has no metrics.json")
    # The record is read the way every untrusted archive is (kabe.records.load): from a file, here a
    # private temporary one, since that is the form the one reader takes.
    with tempfile.TemporaryDirectory(prefix="kabe-unit-") as tmp:
        staged = Path(tmp) / "metrics.json"
        staged.write_bytes(files["metrics.json"])
        checked = load.checked(staged, cores_root=cores_root, rules=rules, where=(archive_name, design, flow))
    if isinstance(checked, load.Invalid):
        raise Rejected(f"rejected: metrics.json: {checked.reason}")
    record, verdict = checked.record, checked.verdict
    if record.get("variant") != {"id": variant_id, "settings": job.settings}:
        raise Rejected(f"rejected: metrics.json is not the record of variant {variant_id} and its settings")
    check_layout(files, record)
    if record["gate"]["passed"] is True and not verdict.passed:
        raise Rejected(f"rejected: metrics.json says its gate passed, but its numbers fail it here: "
                       f"{verdict.why_not_passed()[:300]}")  # the verdict's own words (no timing number is no pass)
    _check_key_and_reports(files, record, design, flow, cores_root, expected_key)
    return report, Accepted(files, record, verdict)
