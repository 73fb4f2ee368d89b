"""The IP cache in the shared archive: each IP's cache unit (kabe.flows.vivado.ip_cache) travels as a signed
unit ip/vivado/<key>/ beside the builds that used it (kabe.store.store.SharedCache), so a clone or CI runner
that never generated an IP takes the one another built.

Push: the IP units a pushed build used, as its ip_cache.json names them (each key's folder in this machine's
IP cache, when whole). Pull: the archive verifies the signature (an allowed key, this project) and hands the
staged unit here; it is added to the IP cache only when whole and its key is the hash of its own material
(ip_cache.import_unit), so a signed unit is still used only for the (configuration, part, Vivado) it says.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from kabe.flows.vivado import ip_cache
from kabe.flows.vivado.ip_source import IpError
from kabe.store.store import SharedCache

FLOW = "vivado"
RECORD = "ip_cache.json"  # a build's record of its IPs' keys (kabe.flows.vivado._run_own_top archives it)
_KEY = re.compile(r"[0-9a-f]{64}")
MAX_RECORD_BYTES = 1 << 20


def keys_used(build_dir: Path) -> list[str]:
    """The IP cache keys a build's ip_cache.json names (none when it has none or it is not one)."""
    f = Path(build_dir) / RECORD
    try:
        if not f.is_file() or f.is_symlink() or f.stat().st_size > MAX_RECORD_BYTES:
            return []
        rows = json.loads(f.read_text())
    except (OSError, ValueError):
        return []
    if not isinstance(rows, list):
        return []
    return [r["key"] for r in rows if isinstance(r, dict) and isinstance(r.get("key"), str) and _KEY.fullmatch(r["key"])]


def shared_cache(root: Path | None = None) -> SharedCache:
    """The Vivado IP cache (root: default ip_cache.default_root()) as the archive carries it."""
    store = ip_cache.Store(Path(root) if root else ip_cache.default_root())

    def used_by(build_units: dict[str, Path]) -> dict[str, Path]:
        out = {}
        for _unit, d in sorted(build_units.items()):
            for key in keys_used(d):
                folder = store.get(key)
                if folder is not None:
                    out[key] = folder
        return out

    def have(key: str) -> bool:
        return store.get(key) is not None

    def accept(folder: Path, key: str) -> str | None:
        try:
            ip_cache.import_unit(folder, store.root, key=key)
        except IpError as e:
            return str(e)
        return None

    return SharedCache(flow=FLOW, used_by=used_by, have=have, accept=accept)
