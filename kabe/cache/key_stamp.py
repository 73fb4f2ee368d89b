"""The last content key of a design's build, kept with the content hash of everything it was computed
from, so that `doit build:<design>`'s up-to-date check and a cache hit decide without FuseSoC.

Computing a key resolves the design's targets, and a core tree that runs a project generator is set up
by FuseSoC again in every process (kabe.project.cores): two `fusesoc run --setup` were 1.3 s of a 1.6 s no-op
(issue 40). make and ninja decide "nothing to do" from file stamps without running the build's tools;
so does this stamp, by content (sha256), never by a file's time.

The stamp (build/cache/keys/<design>-<flow>.json; derived data, safe to delete) holds the key's
material (kabe.cache.cache) and:

* every file the material lists, as read: the last resolution's files (RTL, headers, core files,
  generated files), the generator scripts, the XDC, the model or testbench and their data, kabe's own
  code, by the hash the key was made from;
* design.yaml and every file that may change FuseSoC's answer (kabe.project.cores.resolve_inputs: the core
  files of every library FuseSoC reads, the generators and their data under cores/, scripts/,
  fusesoc.conf), hashed before the key was computed, and which files those are (a core file added to
  a library);
* the names in each folder that holds one of the project's inputs (a header added to an include
  folder, a data file beside a model, a Tcl file beside kabe's flow: each is an input found by
  listing), and the tool versions, settings, the model's installed packages, the interpreter and the
  time the site-packages folders last changed (a package installed or removed).

Anything different: the key is computed again, FuseSoC included, and the stamp written anew. What no
stamp sees: a project generator reading a file outside cores/ and scripts/ that no core file names;
FuseSoC runs such a generator again in every build that runs a tool (kabe.project.cores), and only the
up-to-date check and a cache hit trust the stamp.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path

from kabe.project import flows as flow_registry
from kabe.base.paths import BUILD

FORMAT = 2  # bump when the stamp's shape or meaning changes: every stamp is then computed again
# what a simulation, Python or an editor leaves in an input folder: outputs, never inputs (as
# kabe.cache.cache's data files beside a model leave them out)
_SKIP = ("__pycache__", "sim_build", "results.xml")
_SKIP_SUFFIXES = (".pyc", ".vcd", ".fst", ".ghw", ".log")


def _file(design_name: str, flow: str) -> Path:
    return BUILD / "cache" / "keys" / f"{design_name}-{flow}.json"


def _sha(path: str | Path) -> str | None:
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return None


def _listing(folder: str | Path) -> list[str] | None:
    try:
        return sorted(n for n in os.listdir(folder)
                      if not n.startswith(".") and n not in _SKIP and not n.endswith(_SKIP_SUFFIXES))
    except OSError:
        return None


def _watched_paths(design) -> list[Path]:
    from kabe.project import core_inputs  # not kabe.project.cores: the check loads no resolver

    return list(dict.fromkeys([Path(design.yaml_file), *core_inputs.resolve_inputs(Path(design.yaml_file).parent.parent)]))


def watched(design) -> dict[str, str | None]:
    """design.yaml and the files that may change FuseSoC's answer, by content hash: taken before the key is
    computed, so an edit while it is computed makes the stamp stale, never wrong."""
    return {str(p): _sha(p) for p in _watched_paths(design)}


def _context(design, flow: str) -> dict:
    from kabe.project import config
    from kabe.cache import cache

    keys = flow_registry.facts(flow).key_settings
    loaded = config.load() if keys else {}
    site = {p: os.stat(p).st_mtime_ns for p in sys.path
            if p.rstrip("/").endswith(("site-packages", "dist-packages")) and os.path.isdir(p)}
    # the design as kabe read it (design.yaml is hashed too; a Design made another way, a test's or a
    # variant's with another XDC, is another stamp's)
    facts = {"yaml": str(design.yaml_file), "core_file": str(design.core_file), "core": design.core,
             "constraints": str(design.constraints), "verify": design.verify.as_dict(),
             "streams": design.streams.as_dict(), "ports": design.ports, "row_bytes": design.row_bytes,
             "board": design.board.key, "part": design.board.part, "profile": str(design.board.profile_file)}
    context = {"python": sys.version, "pythonpath": os.environ.get("PYTHONPATH", ""), "site": site,
               "tools": cache.tool_versions(flow), "settings": {k: config.value(loaded, k) for k in keys},
               "design": facts}
    return json.loads(json.dumps(context, sort_keys=True, default=str))


def _packages_unchanged(material: dict) -> bool:
    from importlib import metadata

    for dist, version in (material.get("model_packages") or {}).items():
        if version == "unknown":
            continue
        try:
            if metadata.version(dist) != version:
                return False
        except metadata.PackageNotFoundError:
            return False
    return True


def load(design, flow: str, *, sim_check_rows):
    """The key of building `design` with `flow` when nothing it was computed from has changed since the
    stamp was written (a CacheKey, its material's sim_check_rows set to the one asked), else None."""
    from kabe.cache import cache

    try:
        stamp = json.loads(_file(design.name, flow).read_text())
        if (not isinstance(stamp, dict) or stamp.get("format") != FORMAT or stamp.get("design") != design.name
                or stamp.get("flow") != flow):
            return None
        material, files, folders = stamp["material"], stamp["files"], stamp["folders"]
        if sorted(stamp["watched"]) != sorted(str(p) for p in _watched_paths(design)):
            return None  # a core file added to (or gone from) a library, a generator script added
        if any(_sha(path) != sha for path, sha in files.items()):
            return None
        if any(_listing(folder) != names for folder, names in folders.items()):
            return None
        if stamp["context"] != _context(design, flow) or not _packages_unchanged(material):
            return None
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    if material.get("sim_check_rows") != sim_check_rows:
        material = {**material, "sim_check_rows": sim_check_rows}
    return cache.CacheKey(cache.key_of_material(material), material)


def save(design, flow: str, key, before: dict[str, str | None]) -> None:
    """Write the stamp of `key`, just computed (its paths: where each file was read); `before`: watched()
    taken before the key was computed. Nothing is written when a file changed in between."""
    from kabe.store.archive import write_json_atomic

    listed = key.material.get("files") or {}
    files = {str(p): listed[rel] for rel, p in key.paths.items() if rel in listed}
    if any(files.get(p, sha) != sha for p, sha in before.items()) or None in before.values():
        return  # edited while the key was computed, or gone: the next check computes it again
    files.update(before)
    build = BUILD.resolve()
    folders = {str(d): _listing(d) for d in sorted({Path(p).parent for p in key.paths.values()})
               if not d.resolve().is_relative_to(build)}  # FuseSoC's output: decided by the watched files
    stamp = {"format": FORMAT, "generated_by": "kabe.cache.key_stamp (derived; safe to delete)",
             "design": design.name, "flow": flow, "key": key.key, "material": key.material,
             "watched": sorted(before), "files": files, "folders": folders, "context": _context(design, flow)}
    try:
        write_json_atomic(_file(design.name, flow), stamp)
    except OSError:  # a read-only build/: the key is computed again next time, nothing else
        pass


def key_for(design, flow: str, *, sim_check_rows, synth=None):
    """cache.key_for, through the stamp: the stamp's key when nothing changed, else computed (FuseSoC
    included) and stamped. `synth`: a resolved synth target the caller has (then the key is computed)."""
    from kabe.cache import cache

    if synth is None:
        known = load(design, flow, sim_check_rows=sim_check_rows)
        if known is not None:
            return known
    before = watched(design)
    key = cache.key_for(design, flow, sim_check_rows=sim_check_rows, synth=synth)
    save(design, flow, key, before)
    return key
