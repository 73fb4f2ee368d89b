"""A machine without a C++ compiler: Verilator's make says `make: c++: No such file or directory`; kabe
says it in one line with the package to install (the fix `kabe doctor` gives), and `kabe sim` exits 2.
Real Verilator and real make, on a PATH that has everything of this machine but its compilers."""

from __future__ import annotations

from kabe.project.design_context import DesignContext
import os
import re
import shutil
from pathlib import Path

import pytest

from kabe.project import designs
from kabe.setup import doctor
from kabe.sim import verilator_build

from . import user_designs as u

_COMPILER = re.compile(r"(^|-)(c\+\+|g\+\+|gcc|cc|clang\+\+|clang)(-[\d.]+)?$")


def _path_without_compilers(where: Path) -> str:
    """A folder of links to every program on PATH except C++/C compilers (make and perl stay)."""
    where.mkdir()
    for folder in os.environ["PATH"].split(os.pathsep):
        if not os.path.isdir(folder):
            continue
        for name in os.listdir(folder):
            target = Path(folder) / name
            if _COMPILER.search(name) or (where / name).exists() or not os.access(target, os.X_OK):
                continue
            (where / name).symlink_to(target)
    return str(where)


@pytest.fixture()
def no_compiler(tmp_path, monkeypatch):
    bin_dir = _path_without_compilers(tmp_path / "bin")
    assert shutil.which("make", path=bin_dir) and not shutil.which("c++", path=bin_dir)
    monkeypatch.setenv("PATH", bin_dir)
    monkeypatch.delenv("CXX", raising=False)
    return bin_dir


def test_a_missing_compiler_names_the_package_in_one_line(tmp_path, no_compiler):
    design = designs.load(u.write_width(tmp_path / "project"))
    with pytest.raises(verilator_build.SimBuildError) as caught:
        verilator_build.build(DesignContext(designs.get(design)), build_root=tmp_path / "build")
    message = str(caught.value)
    assert "\n" not in message
    assert "needs a C++ compiler and found none (make: c++: No such file or directory)" in message, message
    assert "apt-get install g++ make, or build-essential" in message and "kabe doctor" in message
    # kabe doctor's row for the same machine names the same fix
    check = doctor.check_compiler()
    assert not check.ok and check.fix == verilator_build.COMPILER_FIX


def test_kabe_sim_on_a_machine_without_a_compiler_exits_2(tmp_path, no_compiler):
    project = tmp_path / "project"
    proc = u.kabe_sim_width(project)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    said = [ln for ln in (proc.stdout + proc.stderr).splitlines() if "C++ compiler" in ln]
    assert len(said) == 1 and "apt-get install g++ make, or build-essential" in said[0], proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr
