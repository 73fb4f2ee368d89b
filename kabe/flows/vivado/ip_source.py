"""An IP as source: what one `.xci` or IP Tcl (`create_ip` + `set_property ... [get_ips ...]`) configures,
read without Vivado, so the IP cache (kabe.flows.vivado.ip_cache) can key it by content before any tool runs.

Both .xci layouts Vivado writes are read: JSON (2020.2 and later: `ip_inst`) and IP-XACT XML (`spirit:`,
earlier). The configuration is every component parameter the file records (CONFIG.<name> -> value); the
version that wrote an .xci (SWVERSION) is kept so the flow can name a mismatch instead of letting Vivado
upgrade the IP silently. An IP Tcl is read command by command: create_ip and set_property on get_ips make
the IP; project scaffolding (create_project, set_part, generate_target, `set`) is skipped because kabe
chooses the part and the output folder; any other command is refused, since kabe does not run the script
itself (it runs exactly the configuration it keyed).
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from kabe.flows.base import FlowError


class IpError(FlowError):
    """An IP source kabe cannot read: one sentence naming the file and the fix."""


@dataclass(frozen=True)
class IpSpec:
    name: str  # the IP's module name (its instance name in the RTL)
    vlnv: str  # vendor:library:name:version
    config: dict[str, str] = field(hash=False)  # CONFIG.<param> -> value
    source: Path = field(hash=False)
    kind: str = "xci"  # xci | tcl
    made_with: str | None = None  # the Vivado version that wrote the .xci (None: an IP Tcl, made by the running one)


# ------------------------------------------------------------------------------------------------ .xci

def _xci_json(path: Path, text: str) -> IpSpec:
    try:
        inst = json.loads(text)["ip_inst"]
        params = inst.get("parameters") or {}
        comp = params.get("component_parameters") or {}
        config = {f"CONFIG.{k}": str(v[0].get("value", "")) if isinstance(v, list) and v else str(v)
                  for k, v in comp.items()}
        runtime = params.get("runtime_parameters") or {}
        sw = runtime.get("SWVERSION")
        sw = str(sw[0].get("value")) if isinstance(sw, list) and sw else None
        return IpSpec(name=str(inst["xci_name"]), vlnv=str(inst["component_reference"]), config=config,
                      source=path, kind="xci", made_with=sw)
    except (ValueError, KeyError, TypeError, AttributeError, IndexError) as e:
        raise IpError(f"{path}: not a Vivado JSON .xci (no ip_inst with xci_name and component_reference: {e}); "
                      f"regenerate it in Vivado (the IP's Re-customize + Generate) or list the IP as IP Tcl") from None


_XML_NAME = re.compile(r"<spirit:instanceName>\s*([^<\s]+)\s*<")
_XML_REF = re.compile(r"<spirit:componentRef\s+([^>]*?)/?>")
_XML_ATTR = re.compile(r'spirit:(vendor|library|name|version)="([^"]*)"')
_XML_VALUE = re.compile(r'<spirit:configurableElementValue\s+spirit:referenceId="([A-Z_]+)\.([^"]+)"\s*>([^<]*)<')


def _xci_xml(path: Path, text: str) -> IpSpec:
    name = _XML_NAME.search(text)
    ref = _XML_REF.search(text)
    attrs = dict(_XML_ATTR.findall(ref.group(1))) if ref else {}
    if not name or any(k not in attrs for k in ("vendor", "library", "name", "version")):
        raise IpError(f"{path}: not a Vivado IP-XACT .xci (no spirit:instanceName or spirit:componentRef); "
                      f"regenerate it in Vivado or list the IP as IP Tcl")
    config, sw = {}, None
    for kind, key, value in _XML_VALUE.findall(text):
        if kind == "PARAM_VALUE":
            config[f"CONFIG.{key}"] = html.unescape(value)
        elif kind == "RUNTIME_PARAM" and key == "SWVERSION":
            sw = value.strip()
    vlnv = ":".join(attrs[k] for k in ("vendor", "library", "name", "version"))
    return IpSpec(name=name.group(1), vlnv=vlnv, config=config, source=path, kind="xci", made_with=sw)


def read_xci(path: Path) -> IpSpec:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig", errors="replace")
    except OSError as e:
        raise IpError(f"{path}: cannot read the .xci ({e.strerror})") from None
    return _xci_json(path, text) if text.lstrip().startswith("{") else _xci_xml(path, text)


# ------------------------------------------------------------------------------------------------ IP Tcl

def tcl_commands(text: str) -> list[tuple[int, list[str]]]:
    """(line, words) of each top-level command: braces and quotes group, [..] stays one word,
    backslash-newline joins lines, # at a command's start is a comment. No substitution is done."""
    out: list[tuple[int, list[str]]] = []
    i, n, line = 0, len(text), 1
    words: list[str] = []
    start = 1
    while i < n:
        c = text[i]
        if c == "\\" and i + 1 < n and text[i + 1] == "\n":
            i, line = i + 2, line + 1
            continue
        if c in " \t\r":
            i += 1
            continue
        if c in "\n;":
            if words:
                out.append((start, words))
                words = []
            line += c == "\n"
            i += 1
            continue
        if c == "#" and not words:
            while i < n and text[i] != "\n":
                i += 1
            continue
        if not words:
            start = line
        if c in "{[\"":
            close = {"{": "}", "[": "]", '"': '"'}[c]
            depth, j = 1, i + 1
            while j < n and depth:
                if text[j] == "\\":
                    j += 2
                    continue
                if c != '"' and text[j] == c:
                    depth += 1
                elif text[j] == close:
                    depth -= 1
                j += 1
            if depth:
                raise IpError(f"line {line}: unbalanced {c}")
            word = text[i:j]
            line += word.count("\n")
            words.append(word[1:-1] if c in "{\"" else word)
            i = j
            continue
        j = i
        while j < n and text[j] not in " \t\r\n;":
            if text[j] == "\\" and j + 1 < n:
                j += 1
            j += 1
        words.append(text[i:j])
        i = j
    if words:
        out.append((start, words))
    return out


# project scaffolding an exported IP script carries: kabe chooses the project, part and output folder
_SKIPPED = {"create_project", "set_part", "set", "generate_target", "synth_ip", "puts", "export_ip_user_files",
            "create_ip_run", "launch_runs", "wait_on_run", "update_compile_order", "current_project", "close_project",
            "file", "set_property"}
_VALUE = re.compile(r"[^$\[\]]*")  # a literal: no variable, no command substitution


def _literal(word: str, path: Path, line: int) -> str:
    if not _VALUE.fullmatch(word):
        raise IpError(f"{path}:{line}: the IP property value {word!r} is computed (a $variable or [command]); "
                      f"kabe keys an IP by its literal configuration. Fix: write the value itself")
    return word


def read_ip_tcl(path: Path) -> list[IpSpec]:
    """The IPs an IP Tcl creates, each with the properties set on it."""
    path = Path(path)
    try:
        cmds = tcl_commands(path.read_text(errors="replace"))
    except IpError as e:
        raise IpError(f"{path}: {e}") from None
    except OSError as e:
        raise IpError(f"{path}: cannot read the IP Tcl ({e.strerror})") from None
    ips: dict[str, dict] = {}
    for line, w in cmds:
        cmd = w[0]
        if cmd == "create_ip":
            opts = {w[k]: w[k + 1] for k in range(1, len(w) - 1) if w[k].startswith("-")}
            vlnv = opts.get("-vlnv") or ":".join(opts.get(k, "") for k in ("-vendor", "-library", "-name", "-version"))
            name = opts.get("-module_name")
            if not name or vlnv.count(":") != 3 or "" in vlnv.split(":"):
                raise IpError(f"{path}:{line}: create_ip needs -module_name and -vlnv (or -vendor -library -name "
                              f"-version); got {' '.join(w)}")
            ips[name] = {"vlnv": vlnv, "config": {}}
        elif cmd == "set_property":
            target = w[-1]
            m = re.fullmatch(r"\[\s*get_ips\s+([A-Za-z0-9_]+)\s*\]", target)
            if not m:
                continue  # a project property (part, target_language): kabe sets those itself
            name = m.group(1)
            if name not in ips:
                raise IpError(f"{path}:{line}: set_property on IP {name} before its create_ip")
            if w[1] == "-dict":
                inner = w[2].strip()
                if inner.startswith("[") and inner.endswith("]"):
                    inner_words = [x for _, ws in tcl_commands(inner[1:-1]) for x in ws]
                    if not inner_words or inner_words[0] != "list":
                        raise IpError(f"{path}:{line}: set_property -dict takes [list key value ...]")
                    pairs = inner_words[1:]
                else:
                    pairs = [x for _, ws in tcl_commands(inner) for x in ws]
                if len(pairs) % 2:
                    raise IpError(f"{path}:{line}: set_property -dict has an odd number of words")
                for k in range(0, len(pairs), 2):
                    ips[name]["config"][pairs[k].upper()] = _literal(pairs[k + 1], path, line)
            else:
                ips[name]["config"][w[1].upper()] = _literal(w[2], path, line)
        elif cmd not in _SKIPPED:
            raise IpError(f"{path}:{line}: `{cmd}` is not an IP command; an IP Tcl holds create_ip and set_property "
                          f"... [get_ips <name>] (kabe runs the IP's configuration, not the script). Fix: move "
                          f"other commands to a tclSource or a hook")
    if not ips:
        raise IpError(f"{path}: no create_ip in this IP Tcl")
    return [IpSpec(name=n, vlnv=v["vlnv"], config=v["config"], source=path, kind="tcl") for n, v in ips.items()]


def is_ip_tcl(path: Path) -> bool:
    """A tclSource is an IP Tcl when it calls create_ip (a block-design script uses create_bd_cell instead)."""
    try:
        text = Path(path).read_text(errors="replace")
    except OSError:
        return False
    return bool(re.search(r"^\s*create_ip\s", text, re.M)) and not re.search(r"^\s*create_bd_design\s", text, re.M)
