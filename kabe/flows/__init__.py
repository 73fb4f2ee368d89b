"""The flows, behind one interface (kabe.flows.base) and one registry.

A new flow is one module that offers NAME, ESTIMATED, check_tools() and run_build(), plus one line
in FLOWS. Modules are imported only when asked for: `doit list` never pays for edalize.
"""

from __future__ import annotations

import importlib

from kabe.flows.base import Flow, FlowError

FLOWS = {
    "open": "kabe.flows.open",  # Yosys + kabe's pre-route timing estimate (everything from PyPI)
    "vivado": "kabe.flows.vivado",  # AMD Vivado: block design, place and route, bitstream + .hwh
}


def get(name: str) -> Flow:
    """The flow module registered under `name`; an unknown name says which exist."""
    try:
        module = FLOWS[name]
    except KeyError:
        raise FlowError(f"unknown flow {name!r}; known flows: {', '.join(FLOWS)}") from None
    return importlib.import_module(module)  # type: ignore[return-value]
