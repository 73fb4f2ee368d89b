"""design.yaml's `verify:` (exactly one of model / cocotb / none) and `streams:` (the top's AXI-Stream
ports, 8..512 bits, and its status outputs): what loads, what is refused in one line, the deprecated
`kind:`, and that the cache key follows the verify declaration and the model's source (issue 23)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kabe.project import designs
from llm_accel.model import frames
from kabe.cache import cache

CORE = "CAPI=2:\nname: user:design:d:0.1.0\n"


def _write(tmp_path, body: str):
    d = tmp_path / "cores" / "d"
    d.mkdir(parents=True, exist_ok=True)
    (d / "d.core").write_text(CORE)
    (d / "d.xdc").write_text("create_clock -period 7 [get_ports clk]\n")
    (d / "design.yaml").write_text("core: user:design:d:0.1.0\nconstraints: d.xdc\n" + body)
    return d / "design.yaml"


def test_the_three_spellings_load(tmp_path):
    d = designs.load(_write(tmp_path, 'verify: {model: "pkg.mod:fn"}\nstreams: {in: {s_axis: 8}, out: {m_axis: 512}}\n'))
    assert d.verify == designs.Verify("model", "pkg.mod:fn")
    assert d.streams == designs.Streams({"s_axis": 8}, {"m_axis": 512}, {})
    assert d.verify.as_dict() == {"kind": "model", "model": "pkg.mod:fn"}
    d = designs.load(_write(tmp_path, 'verify: {cocotb: "test_d"}\n'))
    assert d.verify.as_dict() == {"kind": "cocotb", "cocotb": "test_d"}
    d = designs.load(_write(tmp_path, 'verify: {none: "  vendor IP, tested upstream "}\n'))
    assert d.verify.as_dict() == {"kind": "none", "reason": "vendor IP, tested upstream"}
    assert d.verify.label == "unverified: vendor IP, tested upstream"


@pytest.mark.parametrize("body, message", [
    ("ports: 1\n", r"missing `verify:`; say how the design is verified"),
    ('verify: {model: "a:b", none: "x"}\n', r"verify must be exactly one of"),
    ('verify: {golden: "a:b"}\n', r"verify must be exactly one of"),
    ('verify: "a:b"\n', r"verify must be exactly one of"),
    ('verify: {model: "just_a_module"}\n', r'verify.model must name a function as "package.module:function"'),
    ('verify: {model: "a;rm -rf:b"}\n', r"verify.model must name a function"),
    ('verify: {cocotb: "tests/test_d.py"}\n', r"verify.cocotb must name the testbench's Python module"),
    ('verify: {none: ""}\n', r"verify.none needs the written reason"),
    ('verify: {none: 3}\n', r"verify.none needs the written reason"),
    ('verify: {none: "two\\nlines"}\n', r"verify.none needs the written reason"),
    ('verify: {none: "x"}\nkind: probe\n', r"unknown key\(s\) kind"),
    ('verify: {model: "a:b"}\nstreams: {in: {s_axis: 4}, out: {m_axis: 8}}\n',
     r"streams.in.s_axis must be a width in bits, 8 to 512 and a multiple of 8, got 4"),
    ('verify: {model: "a:b"}\nstreams: {in: {s_axis: 8}, out: {m_axis: 1024}}\n', r"streams.out.m_axis must be a width"),
    ('verify: {model: "a:b"}\nstreams: {in: {s_axis: 12}, out: {m_axis: 8}}\n', r"multiple of 8, got 12"),
    ('verify: {model: "a:b"}\nstreams: {in: {"s-axis": 8}, out: {m_axis: 8}}\n', r"is not a port name"),
    ('verify: {model: "a:b"}\nstreams: {in: {s_axis: 8}}\n', r"at least one `in` and one `out`"),
    ('verify: {model: "a:b"}\nstreams: {in: {x: 8}, out: {x: 8}}\n', r"streams names x more than once"),
    ('verify: {model: "a:b"}\nstreams: {in: {s: 8}, out: {m: 8}, extra: {}}\n', r"keys in, out, status"),
    ('verify: {model: "a:b"}\nstreams: {in: {s: 8}, out: {m: 8}, status: {n: 65}}\n', r"streams.status.n"),
])
def test_a_bad_verify_or_streams_is_one_line(tmp_path, body, message):
    with pytest.raises(designs.DesignError, match=message) as e:
        designs.load(_write(tmp_path, body))
    assert str(e.value).startswith(str(tmp_path)) and "\n" not in str(e.value)


def test_the_old_kind_is_refused_in_one_line(tmp_path):
    """`kind:` named one of the tool's own models; the tool has none now, so it is an unknown key."""
    with pytest.raises(designs.DesignError, match=r"unknown key\(s\) kind") as e:
        designs.load(_write(tmp_path, "kind: ternary\nports: 2\n"))
    assert "\n" not in str(e.value)


def test_this_projects_designs_name_their_models_in_design_yaml():
    """This project's designs come through the user's door: a model of the project's own package."""
    for name, d in designs.all_designs().items():
        assert d.verify.kind == "model", name
        assert "kind:" not in d.yaml_file.read_text(), f"{name}: the old kind: is still written"
        module = d.verify.value.split(":")[0]
        assert module.startswith("llm_accel.model."), name
        assert designs.verify_sources(d) == [Path(frames.__file__).with_name(module.split(".")[-1] + ".py").resolve()], name


def test_the_cache_key_follows_the_verify_declaration_and_the_models_source(tmp_path):
    proj = tmp_path
    (proj / "pkg").mkdir()
    (proj / "pkg" / "__init__.py").write_text("")
    model = proj / "pkg" / "golden.py"
    model.write_text("def fn(seed, size, context): ...\n")
    y = _write(tmp_path, 'verify: {model: "pkg.golden:fn"}\nstreams: {in: {s: 8}, out: {m: 8}}\n')

    def key(design):
        return cache.compute(design, "open", {}, sim_check_rows=None, tools={}, root=proj)

    d = designs.load(y)
    assert designs.verify_sources(d, proj) == [model.resolve()]
    k1 = key(d)
    assert k1.material["design"]["verify"] == {"kind": "model", "model": "pkg.golden:fn"}
    assert "pkg/golden.py" in k1.material["files"]
    model.write_text("def fn(seed, size, context): return None  # changed\n")
    k2 = key(d)
    assert k2.key != k1.key  # the model's source is part of the key
    y.write_text(y.read_text().replace('verify: {model: "pkg.golden:fn"}', 'verify: {none: "not yet"}'))
    k3 = key(designs.load(y))
    assert k3.key not in (k1.key, k2.key) and k3.material["design"]["verify"] == {"kind": "none", "reason": "not yet"}


def test_the_cache_key_holds_the_project_modules_the_model_imports(tmp_path):
    """A model that keeps its arithmetic in helper modules: an edit to any of them is a new key (a cached
    verification made against the old helper is not reused), an edit elsewhere is not."""
    proj = tmp_path
    pkg = proj / "golden"
    (pkg / "fixed").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "fixed" / "__init__.py").write_text("from .round import rne\n")
    (pkg / "fixed" / "round.py").write_text("def rne(x): return x\n")
    (pkg / "quant.py").write_text("import numpy as np\nSCALE = 3\n")
    (pkg / "unused.py").write_text("X = 1\n")
    (proj / "tables.py").write_text("T = [1, 2]\n")
    (pkg / "model.py").write_text(
        "import os\nimport numpy as np\nfrom . import quant\nfrom .fixed import rne\n"
        "def fn(seed, size, context):\n    import tables  # a function-level import runs too\n    return None\n")
    y = _write(tmp_path, 'verify: {model: "golden.model:fn"}\nstreams: {in: {s: 8}, out: {m: 8}}\n')
    d = designs.load(y)

    def key():
        return cache.compute(d, "open", {}, sim_check_rows=None, tools={}, root=proj)

    k = key()
    files = set(k.material["files"])
    for rel in ("golden/__init__.py", "golden/model.py", "golden/quant.py", "golden/fixed/__init__.py",
                "golden/fixed/round.py", "tables.py"):
        assert rel in files, rel
    assert "golden/unused.py" not in files  # imported by nothing: not the model's
    assert not any("numpy" in f or f.startswith("os") for f in files)  # not the project's: tools, not files
    for helper in (pkg / "fixed" / "round.py", pkg / "quant.py", proj / "tables.py"):
        before = key().key
        helper.write_text(helper.read_text() + "# changed\n")
        assert key().key != before, helper
    before = key().key
    (pkg / "unused.py").write_text("X = 2\n")
    assert key().key == before


def test_a_model_that_does_not_parse_is_still_keyed_and_not_followed(tmp_path):
    (tmp_path / "broken.py").write_text("def fn(seed, size, context:\n")
    y = _write(tmp_path, 'verify: {model: "broken:fn"}\nstreams: {in: {s: 8}, out: {m: 8}}\n')
    k = cache.compute(designs.load(y), "open", {}, sim_check_rows=None, tools={}, root=tmp_path)
    assert "broken.py" in k.material["files"]
