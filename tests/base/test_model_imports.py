"""The golden model's imports in the cache key, resolved as Python resolves them (red team 3b, repro 07):
the team's own package in a src/ layout (on PYTHONPATH, or an editable install's finder) is the team's
code, hashed and followed; the standard library and installed distributions (numpy) are not hashed,
the latter's versions are in the key; nothing is executed to find them."""

from __future__ import annotations

import importlib.util
import sys
from importlib import machinery
from pathlib import Path

import numpy as np

from kabe.project import designs
from kabe.base import python_imports
from kabe.cache import cache

CORE = "CAPI=2:\nname: user:design:d:0.1.0\n"


def _project(tmp_path: Path) -> Path:
    d = tmp_path / "cores" / "d"
    d.mkdir(parents=True)
    (d / "d.core").write_text(CORE)
    (d / "d.xdc").write_text("create_clock -period 7 [get_ports clk]\n")
    (d / "design.yaml").write_text('core: user:design:d:0.1.0\nconstraints: d.xdc\n'
                                   'verify: {model: "models.pt:stimulus"}\nstreams: {in: {s: 8}, out: {m: 8}}\n')
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "__init__.py").write_text("")
    (tmp_path / "models" / "pt.py").write_text(
        "import numpy as np\nimport json\nfrom teamlib import KEY\nfrom teamlib.sub import helper\n"
        "def stimulus(seed, size, context): return None\n")
    src = tmp_path / "src" / "teamlib"
    src.mkdir(parents=True)
    (src / "__init__.py").write_text("raise SystemExit('executed')\nKEY = 0\n")  # never run by the key
    (src / "sub.py").write_text("from . import deep\nhelper = 1\n")
    (src / "deep.py").write_text("D = 1\n")
    (src / "unused.py").write_text("U = 1\n")
    return d / "design.yaml"


def _key(tmp_path: Path, y: Path):
    return cache.compute(designs.load(y), "open", {}, sim_check_rows=None, tools={}, root=tmp_path)


def test_a_src_layout_package_on_pythonpath_is_the_teams_code(tmp_path, monkeypatch):
    y = _project(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path / "src"))  # PYTHONPATH=src, or an editable install's .pth
    k = _key(tmp_path, y)
    files = set(k.material["files"])
    for rel in ("models/pt.py", "models/__init__.py", "src/teamlib/__init__.py", "src/teamlib/sub.py",
                "src/teamlib/deep.py"):
        assert rel in files, (rel, files)
    assert "src/teamlib/unused.py" not in files
    # neither numpy nor the standard library (kabe's own modules, kabe/base/json_keys.py among them, are kabe's code)
    assert not [f for f in files if ("numpy" in f or "json" in f) and not f.startswith("kabe/")]
    assert k.material["model_packages"] == {"numpy": np.__version__}  # numpy by version, not by file
    assert "teamlib" not in sys.modules  # found, never imported
    before = k.key
    (tmp_path / "src" / "teamlib" / "__init__.py").write_text("KEY = 0x5A\n")
    assert _key(tmp_path, y).key != before
    before = _key(tmp_path, y).key
    (tmp_path / "src" / "teamlib" / "deep.py").write_text("D = 2\n")  # transitively, by a relative import
    assert _key(tmp_path, y).key != before
    before = _key(tmp_path, y).key
    (tmp_path / "src" / "teamlib" / "unused.py").write_text("U = 2\n")
    assert _key(tmp_path, y).key == before


def test_a_data_file_the_teams_helper_package_reads_is_in_the_key(tmp_path, monkeypatch):
    """src/teamlib/table.json, read by teamlib (not by the model): a changed table changes the values
    the model computes, so it must change the key (a stale pass otherwise)."""
    y = _project(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path / "src"))
    (tmp_path / "src" / "teamlib" / "table.json").write_text('{"scale": 3}')
    before = _key(tmp_path, y)
    assert "src/teamlib/table.json" in before.material["files"]
    (tmp_path / "src" / "teamlib" / "table.json").write_text('{"scale": 4}')
    assert _key(tmp_path, y).key != before.key


class _EditableFinder:
    """What `pip install -e .` of a src/ layout may install: a meta path finder mapping the package
    to its source folder (setuptools' __editable___*_finder)."""

    def __init__(self, mapping):
        self.mapping = mapping

    def find_spec(self, fullname, path=None, target=None):
        if fullname in self.mapping:
            return importlib.util.spec_from_file_location(
                fullname, Path(self.mapping[fullname]) / "__init__.py",
                submodule_search_locations=[self.mapping[fullname]])
        return None


def test_an_editable_install_found_by_its_finder_is_the_teams_code(tmp_path, monkeypatch):
    y = _project(tmp_path)
    monkeypatch.setattr(sys, "meta_path", sys.meta_path + [_EditableFinder({"teamlib": str(tmp_path / "src" / "teamlib")})])
    files = set(_key(tmp_path, y).material["files"])
    assert {"src/teamlib/__init__.py", "src/teamlib/sub.py", "src/teamlib/deep.py"} <= files


def test_an_installed_copy_in_site_packages_is_not_followed(tmp_path, monkeypatch):
    site = tmp_path / "venv" / "lib" / "python3.11" / "site-packages"
    (site / "teamlib").mkdir(parents=True)
    (site / "teamlib" / "__init__.py").write_text("from . import sub\n")
    (site / "teamlib" / "sub.py").write_text("helper = 1\n")
    model = tmp_path / "m.py"
    model.write_text("import teamlib\nimport os.path\nimport sys\n")
    found = python_imports.closure(model, "m", [str(tmp_path), str(site)])
    assert found.files == [model.resolve()]
    assert found.distributions == {"teamlib": "unknown"}  # no metadata: named, not hashed


def test_the_kinds_of_places_and_an_unresolvable_import_by_file(tmp_path):
    assert python_imports.kind_of(Path(np.__file__)) == "installed"
    assert python_imports.kind_of(Path(machinery.__file__)) == "stdlib"
    assert python_imports.kind_of(Path(python_imports.__file__)) == "kabe"
    assert python_imports.kind_of(tmp_path / "x.py") == "project"
    # a model that extends sys.path itself: a name on no path is looked for beside it
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "beside.py").write_text("B = 1\n")
    model = tmp_path / "models" / "m.py"
    model.write_text("import sys, os\nsys.path.insert(0, os.path.dirname(__file__))\nimport beside\n")
    assert (tmp_path / "models" / "beside.py").resolve() in python_imports.closure(model, "models.m", [str(tmp_path)]).files
