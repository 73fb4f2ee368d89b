"""The IP cache: each IP's output products (its .xci, generated HDL, the out-of-context synthesis
checkpoint) built once per (configuration, part, exact Vivado version) and reused by every build, design,
commit and clone that asks for the same key.

Why kabe's own store and not Vivado's `config_ip_cache`: Vivado's cache keys entries by a hash it computes
inside Vivado and never tells, so kabe could not say before a run which IP would hit, could not put the key
in a build's record, and could not hand one IP's entry to the archive as a unit to sign and pull (the cache
folder is one opaque tree, per Vivado version). Here the key is computed from the IP source in Python
(kabe.flows.vivado.ip_source), the unit is one folder with a manifest of hashes, and Vivado only generates
what is missing. A unit is validated against its manifest every time it is used, so a truncated or edited
unit is regenerated, never read.

Layout: <root>/<key[:2]>/<key>/unit.json + <module name>/... (the IP's folder as Vivado wrote it).
The root is KABE_VIVADO_IP_CACHE, else [tool.kabe] vivado_ip_cache, else <project>/build/ip_cache (a
folder several clones or CI runners on one machine share is what makes the second build free).

For the archive (kabe.store.store, through kabe.flows.vivado.ip_archive): a unit folder is pushed as it is,
signed; import_unit() checks a pulled unit (manifest, hashes, key recomputed from its own material) and
adds it, after the archive has checked that an allowed key signed it.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from kabe.flows.vivado.ip_source import IpError, IpSpec
from kabe.store.signing import SIGNATURE_FILE

KEY_FORMAT = 1
UNIT_FILE = "unit.json"


def default_root() -> Path:
    """KABE_VIVADO_IP_CACHE, else [tool.kabe] vivado_ip_cache (relative: to the project), else build/ip_cache."""
    env = os.environ.get("KABE_VIVADO_IP_CACHE")
    if env:
        return Path(env)
    from kabe.project import config
    from kabe.base.paths import BUILD, ROOT

    setting = config.value(config.load(), "vivado_ip_cache")
    return ROOT / setting if setting else BUILD / "ip_cache"


def block_design_cache(part: str, vivado: str, root: Path | None = None) -> Path:
    """The folder Vivado's own IP cache (config_ip_cache) uses for the IPs inside block designs, one per
    (part, exact Vivado): Vivado generates those with their block design, so kabe cannot key them one by one."""
    tag = hashlib.sha256(json.dumps([part, vivado]).encode()).hexdigest()[:16]
    return (root or default_root()) / "vivado_bd" / tag


def material(spec: IpSpec, part: str, vivado: str) -> dict[str, Any]:
    """What an IP's products depend on: its type and configuration, the part, the exact Vivado (its
    `vivado -version` line: a patch release can change an IP's output)."""
    return {"format": KEY_FORMAT, "name": spec.name, "vlnv": spec.vlnv, "config": dict(sorted(spec.config.items())),
            "part": part, "vivado": vivado}


def key_of(m: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(m, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def _sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def _hashes(folder: Path) -> dict[str, str]:
    """Every file of a unit but its manifest and the archive's signature (a unit pulled through the archive
    keeps the signature it verified with: pushed again, it is the same unit)."""
    return {p.relative_to(folder).as_posix(): _sha(p) for p in sorted(folder.rglob("*"))
            if p.is_file() and p.relative_to(folder).as_posix() not in (UNIT_FILE, SIGNATURE_FILE)}


def check_unit(folder: Path, key: str | None = None) -> dict[str, Any] | None:
    """The unit's manifest when the folder is a whole, untouched unit whose key matches its material (and
    is `key`, else the folder's name); else None."""
    try:
        unit = json.loads((folder / UNIT_FILE).read_text())
        if key_of(unit["material"]) != unit["key"] or (key or folder.name) != unit["key"]:
            return None
        if _hashes(folder) != unit["files"] or not unit["files"]:
            return None
        return unit
    except (OSError, ValueError, KeyError, TypeError):
        return None


@dataclass
class Store:
    root: Path

    def unit_dir(self, key: str) -> Path:
        return self.root / key[:2] / key

    def get(self, key: str) -> Path | None:
        d = self.unit_dir(key)
        return d if d.is_dir() and check_unit(d) is not None else None

    def put(self, key: str, m: dict[str, Any], products: Path) -> Path:
        """Move a generated IP folder in as unit `key` (atomically: a rename inside the root)."""
        self.root.mkdir(parents=True, exist_ok=True)
        stage = Path(tempfile.mkdtemp(prefix=".unit-", dir=self.root))
        shutil.copytree(products, stage / products.name)
        files = _hashes(stage)
        (stage / UNIT_FILE).write_text(json.dumps({"key": key, "material": m, "files": files}, indent=1,
                                                  sort_keys=True) + "\n")
        dest = self.unit_dir(key)
        dest.parent.mkdir(parents=True, exist_ok=True)
        if dest.exists():
            shutil.rmtree(dest)
        os.replace(stage, dest)
        return dest


def export_unit(key: str, dest: Path, root: Path | None = None) -> Path:
    """Copy unit `key` to dest/<key>/ (for the archive to sign and push); IpError when it is not whole."""
    src = Store(root or default_root()).get(key)
    if src is None:
        raise IpError(f"IP cache unit {key} is not in {root or default_root()} (or is damaged)")
    out = Path(dest) / key
    shutil.copytree(src, out, dirs_exist_ok=True)
    return out


def import_unit(src: Path, root: Path | None = None, key: str | None = None) -> str:
    """Add a pulled unit (a folder named after its key, or the unit of `key`) after checking it; returns the
    key. The caller has already checked who signed it: this checks only that the unit is whole and is what
    its key says."""
    unit = check_unit(Path(src), key)
    if unit is None:
        raise IpError(f"{src}: not a whole IP cache unit (its unit.json, file hashes or key do not agree); not used")
    store = Store(root or default_root())
    if store.get(unit["key"]) is None:  # in whole, by a rename (a damaged folder of that key is replaced)
        store.root.mkdir(parents=True, exist_ok=True)
        stage = Path(tempfile.mkdtemp(prefix=".unit-", dir=store.root)) / unit["key"]
        shutil.copytree(src, stage)
        dest = store.unit_dir(unit["key"])
        dest.parent.mkdir(parents=True, exist_ok=True)
        if dest.exists():
            shutil.rmtree(dest)
        os.replace(stage, dest)
        stage.parent.rmdir()
    return unit["key"]


@dataclass(frozen=True)
class Unit:
    spec: IpSpec
    key: str
    hit: bool  # taken from the cache (True) or generated by this build (False)
    xci: Path  # the IP's .xci in the build's project folder (its products beside it)


def version_problem(spec: IpSpec, running: str, upgrade: bool) -> str | None:
    """The sentence naming an .xci made by another Vivado than the running one (None when it matches or
    design.yaml allows the upgrade, which is then said on the console)."""
    if spec.kind != "xci" or not spec.made_with or spec.made_with == running or upgrade:
        return None
    return (f"{spec.source}: IP {spec.name} ({spec.vlnv}) was made with Vivado {spec.made_with}, and this build runs "
            f"Vivado {running}; kabe does not upgrade an IP silently. Fix: upgrade it (Vivado: upgrade_ip, then "
            f"commit the new .xci, or set `vivado: {{ip_upgrade: true}}` in design.yaml to upgrade at every build), "
            f"or pin Vivado {spec.made_with} (put it on PATH; [tool.kabe] vivado_version = \"{spec.made_with}\")")


def settings_tcl(part: str, ips: list[tuple[IpSpec, Path, bool]]) -> str:
    """::kabe_ip(...) for tcl/ip_generate.tcl: the part and one {name kind vlnv source dir config upgrade} per IP."""
    def q(s: Any) -> str:
        return "{" + str(s).replace("\\", "/") + "}"
    lines = ["# Generated by kabe.flows.vivado.ip_cache: the IPs this build generates (cache misses).",
             f"set ::kabe_ip(part) {q(part)}", "set ::kabe_ip(ips) {}"]
    for spec, out, upgrade in ips:
        config = " ".join(f"{q(k)} {q(v)}" for k, v in sorted(spec.config.items()))
        lines.append(f"lappend ::kabe_ip(ips) [list {q(spec.name)} {spec.kind} {q(spec.vlnv)} {q(spec.source)} "
                     f"{q(out)} [list {config}] {int(upgrade)}]")
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class IpTarget:
    """What one build's IPs are made for and where they go: the part and the running Vivado (both in each
    IP's key), the build folder, and whether design.yaml allows upgrading an .xci from another Vivado."""

    part: str
    vivado_line: str  # the running Vivado's full version line: part of the key
    vivado_short: str  # its release ("2023.2"): an .xci made with another is refused unless upgrade
    work_root: Path
    upgrade: bool = False  # design.yaml vivado.ip_upgrade


def prepare(specs: list[IpSpec], target: IpTarget, *, generate: Callable[[Path], None], store: Store | None = None,
            say: Callable[[str], None] = print) -> list[Unit]:
    """Every IP of the build from the cache, generating the misses in one Vivado batch run
    (`generate(script)` runs tcl/ip_generate.tcl with the settings written beside it), then copied into
    target.work_root/ip/<name>/ for the project to read."""
    from kabe.flows.vivado.project import TCL_DIR

    part, vivado_line, vivado_short = target.part, target.vivado_line, target.vivado_short
    work_root, upgrade = target.work_root, target.upgrade
    store = store or Store(default_root())
    seen: dict[str, IpSpec] = {}
    for s in specs:
        if s.name in seen:
            raise IpError(f"{s.source}: IP {s.name} is also made by {seen[s.name].source}; each IP module name once")
        seen[s.name] = s
        problem = version_problem(s, vivado_short, upgrade)
        if problem:
            raise IpError(problem)
    keyed = [(s, material(s, part, vivado_line)) for s in specs]
    misses = [(s, m) for s, m in keyed if store.get(key_of(m)) is None]
    if misses:
        gen = work_root / "ip_generate"
        gen.mkdir(parents=True, exist_ok=True)
        (gen / "kabe_ip_settings.tcl").write_text(settings_tcl(
            part, [(s, gen / "out" / s.name, upgrade and s.kind == "xci" and s.made_with not in (None, vivado_short))
                   for s, _ in misses]))
        script = gen / "kabe_ip_generate.tcl"
        script.write_text(f"# Generated by kabe.flows.vivado.ip_cache\nsource {{{gen / 'kabe_ip_settings.tcl'}}}\n"
                          f"source {{{TCL_DIR / 'ip_generate.tcl'}}}\n")
        for s, _ in misses:
            say(f"IP {s.name} ({s.vlnv}): not in the IP cache, generating")
        generate(script)
        for s, m in misses:
            out = gen / "out" / s.name
            if not (out / f"{s.name}.xci").is_file():
                raise IpError(f"Vivado generated no {s.name}.xci in {out} (IP {s.name} from {s.source}); see "
                              f"{gen / 'vivado_ip.log'}")
            store.put(key_of(m), m, out)
    units = []
    miss_names = {s.name for s, _ in misses}
    dest_root = work_root / "ip"
    for s, m in keyed:
        k = key_of(m)
        src = store.get(k)
        if src is None:
            raise IpError(f"IP {s.name}: the cache unit {k} was not whole after generation ({store.unit_dir(k)})")
        dest = dest_root / s.name
        if dest.exists():
            shutil.rmtree(dest)
        shutil.copytree(src / s.name, dest)
        units.append(Unit(spec=s, key=k, hit=s.name not in miss_names, xci=dest / f"{s.name}.xci"))
        if s.name not in miss_names:
            say(f"IP {s.name} ({s.vlnv}): from the IP cache ({k[:12]})")
    return units
