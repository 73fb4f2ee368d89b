"""Any design deploys: a design made from scratch in a fresh repository (`kabe init`, `kabe new`), with a
golden model of its own package (which imports a helper module of the same package), is built on the
vivado flow with the STAND-IN vivado, pushed to the loopback board (a real sshd) and verified there by
kabe's board runner streaming the model's own frames, its simulated PL standing in for the PYNQ-Z1's
(the runner's `--backend sim`). The verdict is re-derived on the host from the board's rows; a PL that
adds one to every sum is reported, not hidden. Nothing of this repository's designs or models is used."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .loopback_host import sshd_available

pytestmark = [pytest.mark.e2e, pytest.mark.skipif(not sshd_available(), reason="OpenSSH server not installed (.ci/run installs openssh-server)")]

REPO = Path(__file__).resolve().parents[2]
STANDIN = REPO / "tests" / "standin"
GIT_ID = ["-c", "user.name=kabe test", "-c", "user.email=test@kabe.invalid", "-c", "commit.gpgsign=false"]
WORDS = 600_000  # 2.4 MB of 32-bit words: three transfers of at most 1 MiB a port (transfer_mb=1)

SUMS = '''"""The counter's arithmetic: a frame of 32-bit words and its sum, mod 2**32."""
import numpy as np


def frame(rng, n):
    return rng.integers(0, 2**32, size=n, dtype=np.uint64)


def total(words):
    return np.array([int(words.sum()) % 2**32], dtype=np.uint64)
'''

GOLDEN = '''"""The counter's golden model: each frame's sum. On a board: one frame per DMA transfer."""
import numpy as np

from kabe.verify import Stimulus, declare

from . import sums


def _chunks(seed, size, context, max_bytes):
    per = max(1, max_bytes // 4)  # 32-bit beats
    size = size or 1000
    for c, start in enumerate(range(0, size, per)):
        words = sums.frame(np.random.default_rng([seed, c]), min(per, size - start))
        yield Stimulus(inputs={"s_axis": words}, expected={"m_axis": sums.total(words)}, checked=int(words.size))


@declare(check_size=1000, full_size=%(words)d, size_name="words", board_chunks=_chunks, label="counter")
def stimulus(seed, size, context):
    words = sums.frame(np.random.default_rng([seed, 0]), size or 1000)
    return Stimulus(inputs={"s_axis": words}, expected={"m_axis": sums.total(words)}, checked=int(words.size))
''' % {"words": WORDS}

DEPLOY = '''import json, sys
from pathlib import Path
from kabe.project import designs
from kabe.deploy.host import DeployRun, DeploySettings, deploy
from kabe.project.design_context import DesignContext
from kabe.sim import verilator_build
a = json.loads(sys.argv[1])
s = DeploySettings(board=a["board"], port=a["port"], identity=Path(a["identity"]), ssh_options=a["options"],
                   sudo=False, python=sys.executable, remote_dir=a["remote_dir"], timeout_s=600, transfer_mb=1)
harness = Path(a["harness"]) if a["harness"] else verilator_build.build(DesignContext(designs.get("counter"))).exe
r = deploy("counter", s, DeployRun(backend="sim", sim_harness=harness))
print(json.dumps({k: r.get(k) for k in ("passed", "failures", "rows_checked", "mismatches", "first_mismatches",
                                         "model", "seconds", "expected", "_archive", "backend")}))
'''


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO), "PATH": f"{STANDIN}{os.pathsep}{os.environ['PATH']}",
            "KABE_STANDIN_SCENARIO": "met"}


def _run(argv, cwd: Path, timeout: float = 900) -> subprocess.CompletedProcess:
    p = subprocess.run(argv, cwd=cwd, env=_env(), capture_output=True, text=True, timeout=timeout)
    assert p.returncode == 0, f"{argv}: exit {p.returncode}\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}"
    return p


def _project(root: Path) -> Path:
    """A fresh git repository with kabe's skeleton, a design `counter` and its model in usermodel/."""
    root.mkdir(parents=True)
    _run(["git", "init", "-q"], root)
    _run([sys.executable, "-m", "kabe", "init"], root)
    _run([sys.executable, "-m", "kabe", "new", "counter"], root)
    (root / "usermodel").mkdir()
    (root / "usermodel" / "__init__.py").write_text("")
    (root / "usermodel" / "sums.py").write_text(SUMS)
    (root / "usermodel" / "golden.py").write_text(GOLDEN)
    design = root / "cores" / "counter" / "design.yaml"
    design.write_text(design.read_text().replace('verify: {none: "add a golden model: see docs/your_design.md"}',
                                                 'verify: {model: "usermodel.golden:stimulus"}'))
    # the block design's PL clock is the PS7's FCLK0, clk_fpga_0: the name the XDC must give it
    xdc = root / "cores" / "counter" / "counter.xdc"
    xdc.write_text(xdc.read_text().replace("-name clk [get_ports clk]", "-name clk_fpga_0 [get_ports clk]"))
    _run(["git", "add", "-A"], root)
    _run(["git", *GIT_ID, "commit", "-qm", "a design of my own, with its own model"], root)
    return root


def _deploy(project: Path, board, tmp_path: Path, harness: str = "") -> dict:
    args = {"board": f"{board.user}@127.0.0.1", "port": board.port, "identity": str(board.client_key),
            "options": board.target_options(), "remote_dir": str(tmp_path / "on-board"), "harness": harness}
    p = _run([sys.executable, "-c", DEPLOY, json.dumps(args)], project)
    return json.loads(p.stdout.strip().splitlines()[-1])


def test_a_design_made_from_scratch_deploys_with_its_own_model(board, tmp_path):
    project = _project(tmp_path / "mine")
    build = _run([sys.executable, "-m", "doit", "build:counter", "flow=vivado"], project)
    assert "gate PASS" in build.stdout + build.stderr

    result = _deploy(project, board, tmp_path)
    print(f"user design on the loopback board: {result['rows_checked']:,} words, {result['mismatches']} mismatches, "
          f"{result['seconds']:.2f} s in the simulated PL")
    assert result["passed"] and result["failures"] == [], result["failures"]
    assert result["model"] == "usermodel.golden:stimulus" and result["backend"] == "sim"
    assert result["rows_checked"] == WORDS == result["expected"]["rows_checked"]  # the model's full scale
    archived = json.loads((Path(result["_archive"]) / "result.json").read_text())
    assert archived["passed"] and archived["mismatches"] == 0
    # the model's package went to the board, with the helper module it imports
    pushed = sorted(p.relative_to(tmp_path / "on-board").as_posix() for p in (tmp_path / "on-board").rglob("*.py"))
    assert any(p.endswith("project/usermodel/sums.py") for p in pushed), pushed
    assert any(p.endswith("project/kabe/verify.py") for p in pushed), pushed
    assert not any("llm_accel" in p for p in pushed), pushed

    # a PL that adds one to each sum: the board's rows disagree with the model, and the host says so
    broken = tmp_path / "broken"
    _run(["git", "clone", "-q", str(project), str(broken)], tmp_path)
    top = broken / "cores" / "counter" / "rtl" / "counter_top.v"
    top.write_text(top.read_text().replace("m_axis_tdata <= sum + s_axis_tdata;", "m_axis_tdata <= sum + s_axis_tdata + 32'd1;"))
    exe = _run([sys.executable, "-c", "from kabe.project import designs; from kabe.project.design_context import DesignContext; from kabe.sim import verilator_build; "
                "print(verilator_build.build(DesignContext(designs.get('counter'))).exe)"],
               broken).stdout.strip().splitlines()[-1]
    bad = _deploy(project, board, tmp_path, harness=exe)
    assert not bad["passed"] and bad["mismatches"] == 3, bad  # one sum per transfer, each one off
    assert any("mismatches: the board reports 3 beats that differ" in f for f in bad["failures"]), bad["failures"]
    assert bad["first_mismatches"][0]["got"] == (bad["first_mismatches"][0]["expected"] + 1) % 2**32
