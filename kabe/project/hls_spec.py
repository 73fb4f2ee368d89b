"""design.yaml's `hls:` and `vitis:` sections: what makes a design an HLS kernel or a v++ link.

    hls:                          # the design is C++ (its core file's synth target lists the sources)
      top: stage3_hls             # the top function
      args:                       # its arguments in order (default: streams.in, then streams.out)
        - {stream: s0_axis}       # an hls::stream<ap_uint<W>>& of the stream of that name (W: its bits)
        - {scalar: rows, type: "ap_uint<32>", value: "beats:m0_axis"}   # a scalar, from the model's run
      testbench: [tb/tb.cpp]      # optional: the user's own C++ testbench (its main), run too
      export: ip_catalog          # ip_catalog (Vivado IP) or xo (a Vitis kernel)
      cosim: false                # C/RTL co-simulation after synthesis (needs Vitis HLS)

    vitis:                        # the design is a v++ link (flow=vitis)
      platform: xilinx_u250.xpfm  # the platform file (.xpfm), relative to the design's folder
      kernels: [stage3_hls]       # .xo files (relative paths) or HLS designs whose export is an .xo
      connectivity: link.cfg      # the v++ config file with [connectivity] (nk=, sp=, stream_connect=)
      accept_clock_mhz: 250       # optional: the lowest kernel clock a scaled link may land on

The kernel clock of both is the design's XDC clock, as for every design (one place for a clock).
A scalar's value is an integer, `beats:<input stream>` (the beats the model offers there) or
`expected:<output stream>` (the beats the model expects there): the model's run decides it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kabe.base.errors import UserError, bounded

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")
# a C++ type as a scalar argument's: ap_uint<32>, int, unsigned int, ap_fixed<16, 6>
_CTYPE = re.compile(r"[A-Za-z_][A-Za-z0-9_:]*(?:\s+[A-Za-z_][A-Za-z0-9_]*)*(?:\s*<\s*[0-9A-Za-z_, ]+\s*>)?")
_SCALAR_VALUE = re.compile(r"(beats|expected):([A-Za-z_][A-Za-z0-9_]*)")
EXPORT_FORMATS = ("ip_catalog", "xo")
HLS_KEYS = ("top", "args", "testbench", "export", "cosim")
VITIS_KEYS = ("platform", "kernels", "connectivity", "accept_clock_mhz")


class SpecError(UserError, ValueError):
    """design.yaml's hls: or vitis: section is malformed."""


@dataclass(frozen=True)
class HlsArg:
    name: str
    kind: str  # in | out | scalar
    ctype: str  # the C++ element type of a stream, the type of a scalar
    value: int | str | None = None  # a scalar's: an integer, "beats:<in>" or "expected:<out>"


@dataclass(frozen=True)
class HlsSpec:
    top: str
    args: tuple[HlsArg, ...]
    testbench: tuple[Path, ...]
    export: str
    cosim: bool

    def as_dict(self) -> dict[str, Any]:
        return {"top": self.top, "export": self.export, "cosim": self.cosim,
                "args": [{"name": a.name, "kind": a.kind, "type": a.ctype, "value": a.value} for a in self.args],
                "testbench": [p.name for p in self.testbench]}


@dataclass(frozen=True)
class VitisSpec:
    platform: Path
    kernels: tuple[str, ...]  # .xo paths (absolute) or design names
    connectivity: Path
    accept_clock_mhz: float | None


def _fail(path: Path, msg: str) -> SpecError:
    return SpecError(f"{path}: {msg}")


def _unknown(path: Path, spec: dict, section: str, keys: tuple[str, ...]) -> None:
    bad = [str(k) for k in spec if k not in keys]
    if bad:
        raise _fail(path, f"{section}: unknown key(s) {bounded(', '.join(bad))}; known: {', '.join(keys)}")


def _file(path: Path, name: Any, what: str) -> Path:
    if not isinstance(name, str) or not name or "\0" in name:
        raise _fail(path, f"{what} must be a file name relative to the design's folder, got {bounded(name)}")
    f = (path.parent / name).resolve()
    if not f.is_file():
        raise _fail(path, f"{what} {bounded(name)}: no such file ({f}); add it or correct the name")
    return f


def parse_hls(path: Path, spec: Any, inputs: dict[str, int], outputs: dict[str, int]) -> HlsSpec:
    if not isinstance(spec, dict):
        raise _fail(path, f"hls must be a mapping like {{top: my_kernel}}, got {bounded(spec)}")
    _unknown(path, spec, "hls", HLS_KEYS)
    top = spec.get("top")
    if not isinstance(top, str) or not _IDENT.fullmatch(top):
        raise _fail(path, f"hls.top must name the kernel's top function (a C++ identifier), got {bounded(top)}")
    raw_args = spec.get("args")
    if raw_args is None:
        raw_args = [{"stream": n} for n in (*inputs, *outputs)]
    if not isinstance(raw_args, list) or not raw_args:
        raise _fail(path, "hls.args must be a list of {stream: <name>} and {scalar: <name>, type: ..., value: ...}")
    args: list[HlsArg] = []
    for i, a in enumerate(raw_args):
        where = f"hls.args[{i}]"
        if not isinstance(a, dict) or len({"stream", "scalar"} & set(a)) != 1:
            raise _fail(path, f"{where} must be {{stream: <a streams.in/out name>}} or {{scalar: <name>, type: "
                              f"<C++ type>, value: <int | beats:<in> | expected:<out>>}}, got {bounded(a)}")
        if "stream" in a:
            _unknown(path, a, where, ("stream", "type"))
            name = a["stream"]
            if name in inputs:
                kind, bits = "in", inputs[name]
            elif name in outputs:
                kind, bits = "out", outputs[name]
            else:
                raise _fail(path, f"{where}: stream {bounded(name)} is not in streams.in or streams.out "
                                  f"({', '.join([*inputs, *outputs])})")
            ctype = a.get("type", f"ap_uint<{bits}>")
            if not isinstance(ctype, str) or not _CTYPE.fullmatch(ctype.strip()):
                raise _fail(path, f"{where}: type {bounded(ctype)} is not a C++ type name")
            args.append(HlsArg(name, kind, ctype.strip()))
            continue
        _unknown(path, a, where, ("scalar", "type", "value"))
        name, ctype, value = a["scalar"], a.get("type"), a.get("value")
        if not isinstance(name, str) or not _IDENT.fullmatch(name):
            raise _fail(path, f"{where}: scalar {bounded(name)} is not a C++ identifier")
        if not isinstance(ctype, str) or not _CTYPE.fullmatch(ctype.strip()):
            raise _fail(path, f"{where}: scalar {name} needs `type:` (a C++ type such as ap_uint<32>), got {bounded(ctype)}")
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            raise _fail(path, f"{where}: scalar {name} needs `value:` (an integer, beats:<input> or expected:<output>)")
        if isinstance(value, str):
            m = _SCALAR_VALUE.fullmatch(value)
            table = inputs if m and m.group(1) == "beats" else outputs
            if not m or m.group(2) not in table:
                raise _fail(path, f"{where}: scalar {name}'s value {bounded(value)} must be an integer, beats:<one of "
                                  f"{', '.join(inputs)}> or expected:<one of {', '.join(outputs)}>")
        args.append(HlsArg(name, "scalar", ctype.strip(), value))
    names = [a.name for a in args]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise _fail(path, f"hls.args names {', '.join(twice)} more than once")
    missing = [n for n in (*inputs, *outputs) if n not in names]
    if missing:
        raise _fail(path, f"hls.args has no argument for stream(s) {', '.join(missing)} that streams declares")
    tb = spec.get("testbench", [])
    tb = [tb] if isinstance(tb, str) else tb
    if not isinstance(tb, list):
        raise _fail(path, "hls.testbench must be a file or a list of files (C++ with a main)")
    export = spec.get("export", "ip_catalog")
    if export not in EXPORT_FORMATS:
        raise _fail(path, f"hls.export must be one of {', '.join(EXPORT_FORMATS)}, got {bounded(export)}")
    cosim = spec.get("cosim", False)
    if not isinstance(cosim, bool):
        raise _fail(path, f"hls.cosim must be true or false, got {bounded(cosim)}")
    return HlsSpec(top, tuple(args), tuple(_file(path, t, "hls.testbench") for t in tb), export, cosim)


def parse_vitis(path: Path, spec: Any) -> VitisSpec:
    if not isinstance(spec, dict):
        raise _fail(path, f"vitis must be a mapping with {', '.join(VITIS_KEYS)}, got {bounded(spec)}")
    _unknown(path, spec, "vitis", VITIS_KEYS)
    platform = _file(path, spec.get("platform"), "vitis.platform")
    if platform.suffix != ".xpfm":
        raise _fail(path, f"vitis.platform must be a platform file (.xpfm), got {platform.name}")
    kernels = spec.get("kernels")
    if not isinstance(kernels, list) or not kernels:
        raise _fail(path, "vitis.kernels must list .xo files or HLS designs exported as .xo")
    out = []
    for k in kernels:
        if not isinstance(k, str) or not k:
            raise _fail(path, f"vitis.kernels: {bounded(k)} is neither an .xo file nor a design name")
        out.append(str(_file(path, k, "vitis.kernels")) if k.endswith(".xo") else k)
    conn = _file(path, spec.get("connectivity"), "vitis.connectivity")
    accept = spec.get("accept_clock_mhz")
    if accept is not None and (isinstance(accept, bool) or not isinstance(accept, (int, float)) or accept <= 0):
        raise _fail(path, f"vitis.accept_clock_mhz must be a positive frequency in MHz, got {bounded(accept)}")
    return VitisSpec(platform, tuple(out), conn, float(accept) if accept is not None else None)
