"""The flows as data (kabe.flows.registry): the facts other layers ask about a flow are there, and
what they say holds against the flow modules and the settings they name."""

from __future__ import annotations

import pytest

from kabe import config, designs, flows
from kabe.flows import registry
from kabe.records import cache, load


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
