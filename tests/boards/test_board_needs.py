"""What a board profile says a board needs beyond its part (issue 43): the vendor base design's release
and the Vivado it needs (the V80 on AVED amd_v80_gen5x8_25.1: Vivado 2025.1), and the PYNQ its image must
run (the PYNQ-Z1: >=3,<4, PYNQ 4.0 dropped it). Each is read from kabe's own profiles, and a profile that
states one badly is one error line naming the file and the key."""

from __future__ import annotations

import pytest

from kabe import boards
from kabe.boards import profile, versions


def test_the_v80_names_its_aved_release_and_that_releases_vivado():
    base = boards.get("v80").base_design
    assert (base.name, base.release, base.vivado) == ("AVED", "amd_v80_gen5x8_25.1", "2025.1")
    assert base.release.endswith(base.vivado[2:])  # AVED names a release after its Vivado (25.1 = 2025.1)


def test_the_pynq_z1_needs_a_pynq_3_image():
    need = boards.get("pynq-z1").pynq
    assert need.versions == ">=3,<4" and "#1549" in need.source
    assert versions.matches("3.0.1", need.versions) and versions.matches("v3.1", need.versions)
    assert not versions.matches("4.0.0", need.versions) and not versions.matches("2.7.0", need.versions)
    assert boards.get("v80").pynq is None  # ami_tool, no PYNQ


@pytest.mark.parametrize("spec, version, ok", [(">=4", "4.0", True), (">=4", "3.9.9", False), ("==3.1", "3.1.0", True),
                                               ("!=3.0,<4", "3.0", False), (">3", "3", False), ("<=3", "3.0.0", True)])
def test_specifiers(spec, version, ok):
    assert versions.matches(version, spec) is ok


def _profile(tmp_path, text: str):
    base = (profile.PROFILE_DIR / "pynq-z1.yaml").read_text()
    path = tmp_path / "board.yaml"
    path.write_text(base + text)
    return path


@pytest.mark.parametrize("text, message", [
    ("base_design: {name: AVED, release: r, vivado: 2025.1, source: s}\n", "`base_design.vivado` must be a Vivado version like \"2025.1\" (quoted)"),
    ("base_design: {name: AVED, release: r, vivado: \"25\", source: s}\n", "`base_design.vivado` must be a Vivado version"),
    ("base_design: {name: AVED, vivado: \"2025.1\", source: s}\n", "`base_design.release` must be a non-empty string"),
    ("base_design: AVED\n", "`base_design:` must be a mapping"),
])
def test_a_bad_base_design_is_one_line(tmp_path, text, message):
    with pytest.raises(profile.BoardError) as e:
        profile.load_profile(_profile(tmp_path, text))
    assert message in str(e.value) and "board.yaml" in str(e.value) and "\n" not in str(e.value)


def test_a_bad_pynq_need_is_one_line(tmp_path):
    path = _profile(tmp_path, "")
    path.write_text(path.read_text().replace('versions: ">=3,<4"', 'versions: "3.x"'))
    with pytest.raises(profile.BoardError, match=r"`deploy.pynq.versions`: .*3.x.* is not a version specifier"):
        profile.load_profile(path)


def test_the_kv260_needs_pynq_4_on_aarch64():
    need = boards.get("kv260").pynq
    assert (need.versions, need.machine) == (">=4", "aarch64") and "#1549" in need.source
    assert versions.matches("4.0.0", need.versions) and not versions.matches("3.1", need.versions)
    assert boards.get("pynq-z1").pynq.machine == ""  # any machine the v3.x image runs on (armv7l)


@pytest.mark.parametrize("old, new, message", [
    ("dma: {length_width: 26, burst: 16, addr_width: 64}", "dma: {length_width: 26, burst: 16, addr_width: 128}",
     "`dma.addr_width` must be an integer from 32 to 64"),
    ("    machine: aarch64", "    machine: ''", "`deploy.pynq.machine` must be a non-empty string"),
    ("    machine: aarch64", "    arch: aarch64", "`deploy.pynq` has unknown key(s) arch"),
    ('  board_part: "xilinx.com:kv260_som:part0:1.4"', "  board_part: [1, 4]", "`vivado.board_part` must be a non-empty string"),
])
def test_a_bad_kv260_key_is_one_line(tmp_path, old, new, message):
    text = (profile.PROFILE_DIR / "kv260.yaml").read_text()
    assert old in text
    path = tmp_path / "kv260.yaml"
    path.write_text(text.replace(old, new))
    with pytest.raises(profile.BoardError) as e:
        profile.load_profile(path)
    assert message in str(e.value) and "kv260.yaml" in str(e.value) and "\n" not in str(e.value)


def test_a_board_constraints_file_that_is_nowhere_is_one_line(tmp_path):
    text = (profile.PROFILE_DIR / "kv260.yaml").read_text().replace("board_constraints: kv260_carrier.xdc",
                                                                     "board_constraints: nowhere.xdc")
    path = tmp_path / "kv260.yaml"
    path.write_text(text)
    with pytest.raises(profile.BoardError, match=r"vivado.board_constraints: 'nowhere.xdc' is neither beside the profile"):
        profile.load_profile(path).board_constraints_xdc()
