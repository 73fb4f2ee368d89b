"""STAND-IN (kabe tests): the loopback board's Python says it runs on the machine a KV260's PYNQ 4 image
runs on (KABE_STANDIN_MACHINE, aarch64), since this test machine is not one. Nothing else is changed."""

import os
import platform

_machine = os.environ.get("KABE_STANDIN_MACHINE")
if _machine:
    platform.machine = lambda: _machine
