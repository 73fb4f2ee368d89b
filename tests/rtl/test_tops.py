"""Every design's top against the port contract (docs/streams.md): all ports bit-exact against the
numpy model at once, output overflow per port, reset mid-frame. The file list comes from the
design's core file through FuseSoC (kabe.project.cores), the design's facts from its design.yaml.

Stage 4 and stage 5 have their own top tests (test_kabe_stage4_top.py, test_kabe_stage5_top.py)
with checks only they need; the designs here are the ones these shared checks cover completely.
"""

from __future__ import annotations

import os

import pytest

from cocotb_util import run_cocotb

pytestmark = pytest.mark.e2e  # end to end: real tools, minutes (the fast tier leaves it out: -m 'not e2e')

ROW_BYTES = 32  # small rows keep the per-cycle simulation short; the engines are also tested at 512
FIFO_DEPTH = {"probe": 16, "int8": 32}

try:
    import cocotb
except ImportError:
    cocotb = None

if cocotb is not None:
    import top_checks

    def _design():
        return os.environ["KABE_KIND"], int(os.environ["KABE_PORTS"]), int(os.environ["KABE_ROW_BYTES"])

    @cocotb.test()
    async def all_ports_match_model(dut):
        await top_checks.all_ports_match_model(dut, *_design())

    @cocotb.test()
    async def overflow_is_per_port(dut):
        await top_checks.overflow_is_per_port(dut, *_design(), int(os.environ["KABE_PARAM_FIFO_DEPTH"]))

    @cocotb.test()
    async def reset_mid_frame_then_clean_frames(dut):
        await top_checks.reset_mid_frame_then_clean_frames(dut, *_design())


# the engine each top streams to, which top_checks builds frames for (this project's models: llm_accel.model)
@pytest.mark.parametrize("name, kind", [("stage2", "probe"), ("stage2_2hp", "probe"), ("stage3", "int8"),
                                        ("stage3_naive", "int8")])
def test_top(name, kind):
    from kabe.project import cores, designs

    design = designs.get(name)
    assert kind in design.verify.value  # llm_accel.model.frames:<kind>_stimulus, the model design.yaml names
    edam = cores.resolve(name, "sim")
    parameters = {"FIFO_DEPTH": FIFO_DEPTH[kind]}
    if "ROW_BYTES" in edam.parameters:
        parameters["ROW_BYTES"] = ROW_BYTES
    run_cocotb(
        toplevel=edam.toplevel,
        sources=edam.sources,
        test_module="test_tops",
        parameters=parameters,
        build_args=["-Wall", "-Wno-PINCONNECTEMPTY"],
        extra_env={"KABE_KIND": kind, "KABE_PORTS": str(design.ports), "KABE_ROW_BYTES": str(ROW_BYTES)},
    )
