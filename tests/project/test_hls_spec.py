"""design.yaml's hls: and vitis: sections (kabe.project.hls_spec): the HLS top and its arguments, the link's platform,
kernels and accepted clock; every mistake is one line naming design.yaml and the fix."""

from __future__ import annotations

import pytest

from kabe.project import designs
from kabe.project.designs import DesignError
from test_designs import CORE, make

BASE = """\
core: kabe:design:demo:0.1.0
verify: {model: "m:f"}
streams: {in: {s_axis: 64}, out: {m_axis: 32}}
constraints: pynq_z1.xdc
"""


def test_default_arguments_are_the_streams_in_order(tmp_path):
    make(tmp_path, BASE + "hls: {top: k}\n", CORE)
    d = designs.get("demo", tmp_path)
    assert [(a.name, a.kind, a.ctype) for a in d.hls.args] == [("s_axis", "in", "ap_uint<64>"),
                                                               ("m_axis", "out", "ap_uint<32>")]
    assert d.hls.export == "ip_catalog" and d.hls.cosim is False and d.own_flow == "vitis_hls"


@pytest.mark.parametrize("hls, pattern", [
    ("{top: 3k}", r"hls.top must name the kernel's top function"),
    ("{top: k, flavour: x}", r"hls: unknown key\(s\) 'flavour'"),
    ("{top: k, args: [{stream: s_axis}]}", r"no argument for stream\(s\) m_axis"),
    ("{top: k, args: [{stream: s_axis}, {stream: m_axis}, {stream: x_axis}]}", r"stream 'x_axis' is not in streams"),
    ("{top: k, args: [{stream: s_axis}, {stream: m_axis}, {scalar: n, type: int}]}", r"scalar n needs `value:`"),
    ("{top: k, args: [{stream: s_axis}, {stream: m_axis}, {scalar: n, type: int, value: 'rows:m_axis'}]}",
     r"must be an integer, beats:<one of s_axis> or expected:<one of m_axis>"),
    ("{top: k, export: bitstream}", r"hls.export must be one of ip_catalog, xo"),
    ("{top: k, testbench: [tb.cpp]}", r"hls.testbench 'tb.cpp': no such file"),
])
def test_a_bad_hls_section_is_one_line(tmp_path, hls, pattern):
    path = make(tmp_path, BASE + f"hls: {hls}\n", CORE)
    with pytest.raises(DesignError, match=pattern) as e:
        designs.get("demo", tmp_path)
    assert str(e.value).startswith(str(path)) and "\n" not in str(e.value)


def test_a_link_names_an_existing_platform_and_config(tmp_path):
    path = make(tmp_path, BASE + "vitis: {platform: p.xpfm, kernels: [k.xo], connectivity: link.cfg, "
                                 "accept_clock_mhz: 250}\n", CORE)
    with pytest.raises(DesignError, match=r"vitis.platform 'p.xpfm': no such file"):
        designs.get("demo", tmp_path)
    for name in ("p.xpfm", "k.xo", "link.cfg"):
        (path.parent / name).write_text("x")
    d = designs.get("demo", tmp_path)
    assert d.vitis.accept_clock_mhz == 250.0 and d.own_flow == "vitis"
    path.write_text(path.read_text().replace("accept_clock_mhz: 250", "accept_clock_mhz: -1"))
    with pytest.raises(DesignError, match=r"accept_clock_mhz must be a positive frequency in MHz"):
        designs.get("demo", tmp_path)
