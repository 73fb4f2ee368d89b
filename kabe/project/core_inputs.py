"""The files whose change may change FuseSoC's answer for a design: the project's fusesoc.conf, the core
files of the libraries it names, and the generators and their data (kabe's generators, every non-HDL
file under the project's cores/, the scripts under scripts/). kabe.project.cores re-resolves when one changed;
kabe.cache.key_stamp watches the same list for the up-to-date check. Kept apart from kabe.project.cores so
that the check reads it without loading the resolver.
"""

from __future__ import annotations

import configparser
from pathlib import Path

from kabe.base.paths import GENERATORS, ROOT, SCRIPTS

# Files whose change cannot alter FuseSoC's answer (only their content, which the flows hash themselves).
_HDL_SUFFIXES = {".v", ".sv", ".vh", ".svh", ".vhd", ".vhdl", ".xdc", ".sdc", ".mem", ".hex"}


def project_fusesoc_conf() -> Path | None:
    """The project's own FuseSoC configuration (what `fusesoc library add` writes in the project's
    folder): its libraries are searched beside the project's cores/. The user's and the system's
    configuration are never read, so a build means the same on every machine."""
    conf = ROOT / "fusesoc.conf"
    return conf if conf.is_file() else None


def _library_roots() -> list[Path]:
    """The library locations the project's fusesoc.conf names (relative ones from the file's folder,
    as FuseSoC reads them)."""
    conf = project_fusesoc_conf()
    if conf is None:
        return []
    parser = configparser.ConfigParser()
    try:
        parser.read(conf)
    except configparser.Error as e:
        from kabe.project.core_files import CoreError

        raise CoreError(f"{conf}: not a FuseSoC configuration ({' '.join(str(e).split())}). "
                        f"Fix: the file `fusesoc library add` writes, [library.<name>] sections") from None
    out = []
    for section in parser.sections():
        if section.startswith("library."):
            location = parser.get(section, "location", fallback=str(Path("fusesoc_libraries") / section[8:]))
            out.append((conf.parent / Path(location).expanduser()).resolve())
    return out


def _resolve_inputs(cores_root: Path) -> list[Path]:
    """Files whose change may change FuseSoC's answer: core files and generator scripts/data, the
    project's fusesoc.conf and the core files of the libraries it names."""
    conf = project_fusesoc_conf()
    out = [conf] if conf else []
    for lib in _library_roots():
        out += sorted(p for p in lib.rglob("*.core") if p.is_file() and ".git" not in p.parts)
    for root in (GENERATORS, Path(cores_root), SCRIPTS):
        if not root.is_dir():
            continue
        for p in sorted(root.rglob("*")):
            if not p.is_file() or "__pycache__" in p.parts or p.name.startswith("."):
                continue
            if root == SCRIPTS and p.suffix != ".py":
                continue
            if p.suffix.lower() in _HDL_SUFFIXES:
                continue
            out.append(p)
    return out


def resolve_inputs(cores_root: Path) -> list[Path]:
    """Files whose change may change FuseSoC's answer (kabe.cache.key_stamp watches them too)."""
    return _resolve_inputs(cores_root)
