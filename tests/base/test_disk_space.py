"""A full TMPDIR is named as such: the free-space check before a tool run, and a tool's "No space left
on device" (or Yosys's missing sandbox file) mapped to one line naming the full file system. With
real Yosys on a real 4 KB tmpfs where this machine lets the test mount one (root)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from kabe.base import disk_space
from kabe.flows import open as open_flow
from kabe.flows.base import ToolError

TINY_DESIGN = "module t(input [7:0] a, b, output [8:0] y); assign y = a * b; endmodule\n"


@pytest.fixture()
def tiny_tmpfs(tmp_path):
    """A real 4 KB tmpfs: ABC's first temporary netlist does not fit."""
    mnt = tmp_path / "tiny"
    mnt.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4k", "tmpfs", str(mnt)], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here ({done.stderr.strip()[:80]})")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", str(mnt)], check=False)


def _yosys_in(out: Path) -> None:
    out.mkdir(exist_ok=True)
    (out / "t.v").write_text(TINY_DESIGN)
    open_flow.run_yosys("read_verilog t.v\nsynth -top t\n", out)


def test_yosys_on_a_full_tmpdir_says_tmpdir_is_full(tiny_tmpfs, tmp_path, monkeypatch):
    """The check before the run is off (threshold 0), so Yosys really runs out of room in its sandbox."""
    monkeypatch.setenv("TMPDIR", str(tiny_tmpfs))
    monkeypatch.setenv(disk_space.MIN_FREE_ENV, "0")
    with pytest.raises(ToolError) as e:
        _yosys_in(tmp_path / "out")
    msg = str(e.value)
    print(msg)
    assert msg.startswith("Yosys could not read back its temporary file /tmp/yosys-abc-"), msg
    assert f"TMPDIR ({tiny_tmpfs}) is full" in msg and "point TMPDIR at a file system with room" in msg
    assert "4.0 KB free when it started" in msg and "\n" not in msg


def test_the_check_refuses_a_full_tmpdir_before_yosys_starts(tiny_tmpfs, tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tiny_tmpfs))
    monkeypatch.delenv(disk_space.MIN_FREE_ENV, raising=False)
    with pytest.raises(disk_space.DiskFull) as e:
        _yosys_in(tmp_path / "out")
    assert str(e.value) == (
        f"TMPDIR ({tiny_tmpfs}) has 4.0 KB free, less than the 256.0 MB kabe wants before running Yosys; free "
        f"space there or point TMPDIR at a file system with room (e.g. `export TMPDIR=/var/tmp`, then run again) "
        f"(KABE_MIN_FREE_MB sets the threshold)")
    assert not (tmp_path / "out" / "yosys.log").exists()  # refused before Yosys started


def test_kabe_build_with_a_full_tmpdir_is_one_line_exit_2(tiny_tmpfs, tmp_path):
    """The whole verb, in a copy of the checkout: refused at its first long tool (Verilator), exit 2."""
    import repo_copy

    copy = repo_copy.make(tmp_path / "repo")
    env = {**repo_copy.env(copy), "TMPDIR": str(tiny_tmpfs)}
    done = subprocess.run([sys.executable, "-m", "kabe.cli", "build", "stage2", "--flow", "open"], cwd=copy,
                          env=env, capture_output=True, text=True, timeout=600)
    out = done.stdout + done.stderr
    assert done.returncode == 2, out
    assert f"TMPDIR ({tiny_tmpfs}) has 4.0 KB free" in out and "Traceback" not in out, out


# ---- the same rules on ordinary folders: no mount needed --------------------------------------

@pytest.fixture()
def places(tmp_path, monkeypatch):
    tmp, build = tmp_path / "tmp", tmp_path / "build"
    tmp.mkdir()
    build.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp))
    return [disk_space.tmp_place(), disk_space.build_place(build)]


def test_the_threshold_comes_from_the_environment(places, monkeypatch):
    free = disk_space.free_bytes(places[0].path)
    monkeypatch.setenv(disk_space.MIN_FREE_ENV, str(free // 2**20 + 1))  # just more than there is
    with pytest.raises(disk_space.DiskFull, match=r"^TMPDIR \(.*/tmp\) has .* free, less than the .* kabe wants "
                                                  r"before running Verilator; .*point TMPDIR at"):
        disk_space.check_free("Verilator", places)
    monkeypatch.setenv(disk_space.MIN_FREE_ENV, "0")
    assert set(disk_space.check_free("Verilator", places)) == {"TMPDIR", "the build folder"}
    monkeypatch.setenv(disk_space.MIN_FREE_ENV, "lots")
    with pytest.raises(disk_space.DiskFull, match="KABE_MIN_FREE_MB='lots' is not a whole number of MB"):
        disk_space.check_free("Verilator", places)


def test_a_compilers_enospc_names_the_file_system_of_the_file(places):
    tmp, build = places[0].path, places[1].path
    gxx = f"cc1plus: fatal error: error writing to {tmp}/ccQx1.s: No space left on device\ncompilation terminated."
    msg = disk_space.full_message("Verilator's compile of stage4", gxx, places)
    assert msg.startswith(f"Verilator's compile of stage4 stopped because TMPDIR ({tmp}) is full"), msg
    assert "point TMPDIR at" in msg and "\n" not in msg
    sim = f"OSError: [Errno 28] No space left on device: '{build}/runs/seed1-x/out0.bin'"
    msg = disk_space.full_message("the stage4 simulation", sim, places)
    assert msg.startswith(f"the stage4 simulation stopped because the build folder ({build}) is full"), msg


def test_yosys_names_a_sandbox_file_which_is_in_tmpdir(places):
    log = "ERROR: Can't open ABC output file `/tmp/yosys-abc-000000/output.blif' for writing: No space left on device"
    msg = disk_space.full_message("Yosys", log, places, sandboxed=True)
    assert msg.startswith(f"Yosys stopped because TMPDIR ({places[0].path}) is full"), msg
    assert "inside Yosys's WebAssembly sandbox, whose /tmp is TMPDIR" in msg
    missing = "ERROR: File `/tmp/yosys-abc-000000/output.aig' not found or is a directory"
    msg = disk_space.full_message("Yosys", missing, places, sandboxed=True, free_before={"TMPDIR": 1234})
    assert f"TMPDIR ({places[0].path}) is full or filled up while it ran (1.2 KB free when it started)" in msg


def test_no_sign_of_a_full_disk_is_no_message(places):
    assert disk_space.full_message("Yosys", "ERROR: syntax error in t.v:3", places, sandboxed=True) is None
    # a sandbox path outside an ERROR line, or from a tool without a sandbox, is not evidence
    assert disk_space.full_message("Yosys", "Running ABC: /tmp/yosys-abc-000000/abc.script", places,
                                   sandboxed=True) is None
    assert disk_space.full_message("make", "ERROR: File `/tmp/yosys-abc-1/x' not found", places) is None


def test_a_short_write_of_the_simulation_streams_names_the_full_folder(tiny_tmpfs):
    """numpy's tofile on a full disk says only "N requested and M written": the folder is named anyway."""
    import numpy as np

    place = disk_space.build_place(tiny_tmpfs)
    target = tiny_tmpfs / "in0.bin"
    with pytest.raises(OSError) as e:
        np.zeros(100_000, dtype="<u8").tofile(target)
    msg = disk_space.os_error_message("the stage4 simulation", e.value, place, target)
    assert msg and msg.startswith(f"the stage4 simulation stopped because the build folder ({tiny_tmpfs}) is full"), msg
    assert f"writing {target} failed" in msg


def test_an_enospc_os_error_is_a_full_folder_and_others_are_not(places):
    target = places[1].path / "in0.bin"
    full = disk_space.os_error_message("sim", OSError(28, "No space left on device"), places[1], target)
    assert full and "the build folder" in full and "No space left on device" in full
    assert disk_space.os_error_message("sim", OSError(13, "Permission denied"), places[1], target) is None
    assert disk_space.os_error_message("sim", OSError("5 requested and 4 written"), places[1], target) is None
