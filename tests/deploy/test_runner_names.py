"""The board runner asks the PYNQ overlay only for the cells the block design named (issue 17).

The archive comes from a build with the STAND-IN vivado, whose .hwh lists the cells ip/kabe_bd.tcl
created; the runner is the pushed copy (tests/deploy/runner_copy.py). `pynq` itself cannot be
installed beside numpy 2 (pynq 4.0 pins numpy < 2), so a STAND-IN `pynq` module plays its Overlay:
it parses the .hwh with pynq's own parser (pynqmetadata, what pynq.Overlay calls) and, like pynq,
answers an attribute only for an IP of that parse.
"""

from __future__ import annotations

import json
import shutil
import sys
import types
from pathlib import Path

import pytest
from pynqmetadata.frontends import Metadata
from pynqmetadata.views.runtime import RuntimeMetadataParser

from kabe.base import provenance

from . import runner_copy


class StandinPynq(types.ModuleType):
    """STAND-IN for the `pynq` package: Overlay only (parse + attribute lookup). Each GPIO channel
    reads a number naming its cell (its index among the IPs), so a test sees which cell was read."""

    def __init__(self):
        super().__init__("pynq")
        self.asked: list[str] = []
        module = self

        class Overlay:
            def __init__(self, bit):
                self.ip_dict = RuntimeMetadataParser(Metadata(input=Path(bit).with_suffix(".hwh"))).ip_dict

            def __getattr__(self, key):
                module.asked.append(key)
                if key not in self.ip_dict:
                    raise AttributeError(f"Could not find IP or hierarchy {key} in overlay")
                value = sorted(self.ip_dict).index(key)
                channel = types.SimpleNamespace(read=lambda: value)
                return types.SimpleNamespace(channel1=channel, channel2=channel, ip_type=self.ip_dict[key]["type"])

        self.Overlay = Overlay


@pytest.fixture()
def on_board(reports, tmp_path, monkeypatch):
    """The runner and stage4's archived .bit/.hwh/.cells.json in one folder, a STAND-IN pynq importable."""
    src = reports / provenance.current_commit().archive_name / "stage4" / "vivado"
    folder = tmp_path / "board"
    runner = runner_copy.load(folder)
    for f in ("kabe_stage4.bit", "kabe_stage4.hwh", "kabe_stage4.cells.json"):
        shutil.copy(src / f, folder / f)
    pynq = StandinPynq()
    monkeypatch.setitem(sys.modules, "pynq", pynq)
    return runner, folder / "kabe_stage4.bit", pynq


def test_the_runner_asks_the_overlay_for_the_block_designs_names_only(on_board):
    runner, bit, pynq = on_board
    names = runner.load_names(bit, 2)
    backend = runner.PynqBackend(bit, 2, names)
    assert pynq.asked == ["dma0", "dma1", "stat0", "stat1", "usr_access"]  # as kabe_bd.tcl wrote them, nothing else
    assert backend.dmas[0].ip_type.startswith("xilinx.com:ip:axi_dma:")
    ips = sorted(RuntimeMetadataParser(Metadata(input=bit.with_suffix(".hwh"))).ip_dict)
    assert backend.read_usr_access() == ips.index("usr_access")
    # every status output the cell list wires to a GPIO, by its design.yaml name
    assert backend.status() == {"stat0_invalid": ips.index("stat0"), "stat0_overflow": ips.index("stat0"),
                                "stat1_invalid": ips.index("stat1"), "stat1_overflow": ips.index("stat1")}


def test_a_cell_list_that_disagrees_with_the_hwh_is_refused_before_programming(on_board):
    """A renamed cell (the list says one name, the .hwh another) is one clear refusal on the board,
    before Overlay() programs anything, instead of an AttributeError halfway."""
    runner, bit, pynq = on_board
    cells = bit.with_name("kabe_stage4.cells.json")
    data = json.loads(cells.read_text())
    data["cells"][0]["cell"] = "axi_dma_0"
    cells.write_text(json.dumps(data))
    with pytest.raises(runner.Refused, match="cell axi_dma_0 \\(dma\\) is not in kabe_stage4.hwh"):
        runner.load_names(bit, 2)
    assert pynq.asked == []


def test_a_missing_cell_list_is_refused(on_board):
    runner, bit, _ = on_board
    bit.with_name("kabe_stage4.cells.json").unlink()
    with pytest.raises(runner.Refused, match="kabe_stage4.cells.json is missing beside the bitstream.*flow=vivado"):
        runner.load_names(bit, 2)


def test_a_cell_of_the_wrong_ip_is_refused(on_board):
    runner, bit, _ = on_board
    cells = bit.with_name("kabe_stage4.cells.json")
    data = json.loads(cells.read_text())
    data["cells"][0]["cell"] = "stat1"  # a GPIO where a DMA belongs
    cells.write_text(json.dumps(data))
    with pytest.raises(runner.Refused, match="names stat1 for more than one role"):
        runner.load_names(bit, 2)
    data["cells"][0]["cell"] = "usr_access_src"  # in the .hwh, but a module reference, not an AXI DMA
    cells.write_text(json.dumps(data))
    with pytest.raises(runner.Refused, match="cell usr_access_src \\(dma\\) is xilinx.com:module_ref:kabe_usr_access:1.0 "
                                             "in kabe_stage4.hwh, expected xilinx.com:ip:axi_dma"):
        runner.load_names(bit, 2)
