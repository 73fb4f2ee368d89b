"""The flows as data (kabe.project.flows): the facts other layers ask about a flow are there, and
what they say holds against the flow modules and the settings they name."""

from __future__ import annotations

import pytest

from kabe.project import config, designs
from kabe import flows
from kabe.project import flows as registry
from kabe.cache import cache
from kabe.records import load


def test_every_flow_module_agrees_with_its_facts():
    for name, facts in registry.FLOWS.items():
        module = flows.get(name)
        assert module.NAME == name and module.ESTIMATED == facts.estimated, name
        assert load.ESTIMATED_BY_FLOW[name] == facts.estimated


def test_the_settings_a_flow_keys_on_are_kabe_settings():
    vivado = registry.facts("vivado").key_settings
    assert vivado == ("vivado_jobs", *(f"vivado_{k}" for k in config.VIVADO_STRATEGY_KEYS))
    assert all(k in config.SETTINGS for k in vivado)
    assert config.FLOWS == (*registry.FLOWS, "auto")


def test_the_vivado_flows_scripts_are_in_its_key_and_not_the_open_flows():
    assert cache.flow_scripts("open") == []
    tcl = {p.name for p in cache.flow_scripts("vivado")}
    assert {"kabe_bd.tcl", "timing_verdict.tcl"} <= tcl


def test_a_flows_budgets_table_replaces_the_open_flows_budget_it_names():
    d = designs.get("stage4")
    assert d.budgets_for("open")["lut"] == {"lt": 4500}
    assert d.budgets_for("vivado")["lut"] == {"lt": 11500} and d.budgets_for("vivado")["dsp"] == {"eq": 0}


def test_an_unknown_flow_is_named_with_the_known_ones():
    with pytest.raises(KeyError, match="known flows: open, vivado"):
        registry.facts("quartus")


def test_a_flow_is_a_plugin_found_through_its_entry_point():
    """A project adds a flow with an entry point (group kabe.flows) holding its FlowFacts; one that does
    not load, is not a FlowFacts or would replace kabe's own is left out and said, never half-registered."""
    from types import SimpleNamespace

    quartus = registry.FlowFacts(
        name="quartus", module="acme.quartus", estimated=False, tools=("quartus",), executable="quartus_sh",
        stamps_commit=False, budgets_key=None, key_settings=(), key_script_dirs=(), board_profile_files=False,
        sweep_resource="quartus", build_bytes=8 * registry.GIB, description="Intel Quartus (a plugin)")

    def ep(name, obj):
        def load():
            if isinstance(obj, Exception):
                raise obj
            return obj
        return SimpleNamespace(name=name, value=f"acme:{name}", load=load)

    found = registry.discover([ep("quartus", quartus), ep("broken", ImportError("no acme")),
                               ep("vivado", registry.FLOWS["vivado"]), ep("odd", object())])
    assert found == {"quartus": quartus}
    assert "did not load" in registry.PLUGIN_ERRORS["broken"]
    assert "would replace kabe's own flow vivado" in registry.PLUGIN_ERRORS["vivado"]
    assert "not a kabe.project.flows.FlowFacts" in registry.PLUGIN_ERRORS["odd"]


def test_every_flows_doctor_checks_and_settings_resolve():
    import importlib

    for facts in registry.FLOWS.values():
        assert all(k in config.SETTINGS for k in facts.settings), facts.name
        for ref in facts.doctor_checks:
            module, func = ref.split(":")
            assert callable(getattr(importlib.import_module(module), func)), ref


def test_kabe_doctor_runs_a_plugin_flows_checks_and_names_a_broken_plugin(monkeypatch):
    from kabe.setup import doctor

    facts = registry.FlowFacts(
        name="quartus", module="acme.quartus", estimated=False, tools=("quartus",), executable="quartus_sh",
        stamps_commit=False, budgets_key=None, key_settings=(), key_script_dirs=(), board_profile_files=False,
        sweep_resource=None, build_bytes=registry.GIB, description="a plugin",
        doctor_checks=("kabe.flows.vivado.tool:doctor_check",))
    monkeypatch.setitem(registry.FLOWS, "quartus", facts)
    monkeypatch.setitem(registry.PLUGIN_ERRORS, "broken", "entry point broken = acme:x did not load: ImportError")
    monkeypatch.setenv("PATH", "/nonexistent")
    checks = {c.name: c for c in doctor.check_flow_plugins()}
    assert not checks["flow quartus"].ok and "not on PATH" in checks["flow quartus"].fix
    assert checks["flow quartus"].status({"quartus"}) == "MISSING"
    assert checks["flow plugin broken"].status({"open"}) == "warn"


def test_a_flows_design_yaml_table_is_in_its_key_only(tmp_path):
    """design.yaml's `vivado:` table (hooks, strategies) keys vivado builds, not open-flow builds."""
    import dataclasses

    from kabe.project.designs import VivadoSettings

    hook = tmp_path / "post_route.tcl"
    hook.write_text("puts a\n")
    base = designs.get("stage2")
    d = dataclasses.replace(base, vivado=VivadoSettings(top="shell", declared=True,
                                                        hooks={"route_design": {"post": hook}}))

    def key(design, flow):
        return cache.compute(design, flow, {}, sim_check_rows=None, tools={}, settings={})

    assert key(d, "vivado").material["design"]["vivado"]["hooks"] == {"route_design": {"post": "post_route.tcl"}}
    before = key(d, "vivado").key
    hook.write_text("puts b\n")
    assert key(d, "vivado").key != before
    assert key(d, "open").key == key(base, "open").key and "vivado" not in key(d, "open").material["design"]
