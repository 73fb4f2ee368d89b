"""design.yaml `waivers:`: a rule a design may break on purpose, only with a written reason,
which the build prints and archives (kabe.rules.gate.WAIVABLE lists what can be waived)."""

import pytest

from kabe.project import designs

CORE = "CAPI=2:\nname: kabe:design:w:0.1.0\n"


def design(tmp_path, extra: str):
    d = tmp_path / "w"
    d.mkdir()
    (d / "w.core").write_text(CORE)
    (d / "design.yaml").write_text("core: kabe:design:w:0.1.0\nverify: {model: 'llm_accel.model.frames:probe_stimulus'}\nports: 1\n" + extra)
    return designs.load(d / "design.yaml")


def test_a_waiver_with_its_reason_is_loaded(tmp_path):
    d = design(tmp_path, 'waivers: {no_clock: "  EMIO pins, clocked by the PS  "}\n')
    assert d.waivers == {"no_clock": "EMIO pins, clocked by the PS"}
    (tmp_path / "x").mkdir()
    assert design(tmp_path / "x", "").waivers == {}


@pytest.mark.parametrize("extra,why", [
    ("waivers: {no_clock: ''}\n", "needs a written reason"),
    ("waivers: {no_clock: 3}\n", "needs a written reason"),
    ("waivers: {wns: 'trust me'}\n", "not one kabe knows"),
    ("waivers: [no_clock]\n", "must be a mapping"),
])
def test_a_waiver_without_a_reason_or_of_an_unknown_rule_is_refused(tmp_path, extra, why):
    with pytest.raises(designs.DesignError, match=why):
        design(tmp_path, extra)
