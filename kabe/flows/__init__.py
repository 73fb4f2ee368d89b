"""The flows, behind one interface (kabe.flows.base) and one registry (kabe.project.flows).

A new flow is one module that offers NAME, ESTIMATED, check_tools() and run_build(), plus its facts
(a kabe.project.flows.FlowFacts: name, estimated, tools, settings, key inputs, doctor checks) in the
registry, or, for a flow kabe does not ship, in an entry point of the group `kabe.flows` (a project's
own package). Modules are imported only when asked for: `doit list` never pays for edalize, and the
layers below that read a flow's facts import only the registry (which imports nothing of kabe).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from kabe.project.flows import FLOWS as _FACTS

if TYPE_CHECKING:
    from kabe.flows.base import Flow

FLOWS = {name: f.module for name, f in _FACTS.items()}  # name -> module


def get(name: str) -> Flow:
    """The flow module registered under `name`; an unknown name says which exist."""
    from kabe.flows.base import FlowError

    try:
        module = FLOWS[name]
    except KeyError:
        raise FlowError(f"unknown flow {name!r}; known flows: {', '.join(FLOWS)}") from None
    return importlib.import_module(module)  # type: ignore[return-value]


def shared_caches() -> list:
    """The content-keyed caches of the flows that have one (kabe.store.store.SharedCache: the Vivado IP
    cache), for `kabe archive push|pull` and `kabe ci` to carry beside the builds."""
    out = []
    for f in _FACTS.values():
        if f.shared_cache:
            module, _, fn = f.shared_cache.partition(":")
            out.append(getattr(importlib.import_module(module), fn)())
    return out
