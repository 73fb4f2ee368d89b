"""kabe as a newcomer gets it: a wheel built from this repository, installed into a fresh venv, used
in a git repository made from scratch (not a copy of this checkout) with the real tools.

The venv holds only the wheel; kabe's dependencies are reached through one .pth line naming the test
venv's site-packages, where kabe itself is an editable install whose finder that line does not run, so
`import kabe` can only find the wheel's copy (asserted). The user's repository has nothing of this
checkout: `kabe init`, `kabe new counter`, a FuseSoC library of its own added with `fusesoc library
add`, one commit, then `doit build:counter`; then a design whose top the wheel's own generator
(kabe:gen:top) writes through FuseSoC. Anything the packaging forgot (a Tcl file, a template,
the harness, a path that assumed kabe's checkout) fails here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e  # end to end: real tools, minutes (the fast tier leaves it out: -m 'not e2e')

REPO = Path(__file__).resolve().parent.parent
GIT_ID = ["-c", "user.name=kabe test", "-c", "user.email=test@kabe.invalid", "-c", "commit.gpgsign=false"]

# The library the user's design depends on, resolved by FuseSoC from its own .core file.
LIB_CORE = """CAPI=2:
name: user:lib:adder:1.0.0
description: a registered 32-bit adder (a FuseSoC library of the user's own)
filesets:
  rtl:
    files: [lib_adder.v]
    file_type: verilogSource
targets:
  default:
    filesets: [rtl]
"""
LIB_RTL = """`default_nettype none
module lib_adder (input wire [31:0] a, input wire [31:0] b, output wire [31:0] y);
    assign y = a + b;
endmodule
`default_nettype wire
"""

# The counter's golden model: the whole input is one frame, its sum (mod 2**32) the one output word.
MODEL = """import numpy as np

from kabe.verify import Stimulus


def stimulus(seed, size, context):
    words = np.random.default_rng(seed).integers(0, 2**32, size=size or 20_000, dtype=np.uint64)
    return Stimulus(inputs={"s_axis": words}, expected={"m_axis": np.array([int(words.sum()) % 2**32], dtype=np.uint64)})
"""


# A design whose top kabe's own generator writes (kabe:gen:top, package data): one engine on one HP port.
WRAPPED_CORE = """CAPI=2:
name: user:design:wrapped:0.1.0
filesets:
  rtl:
    files: [engine.v]
    file_type: verilogSource
    depend: [kabe:gen:top:0.1.0]
generate:
  top:
    generator: kabe_top
    parameters: {name: wrapped_top, engine: my_engine, ports: 1, invalid_port: none}
targets:
  default: &default
    filesets: [rtl]
    generate: [top]
    toplevel: wrapped_top
  synth:
    <<: *default
    flow: generic
    flow_options: {tool: yosys, arch: xilinx, output_format: json}
"""
RESOLVE_WRAPPED = ("from kabe.project import cores; e = cores.resolve('wrapped', 'synth'); "
                   "print(*[f.path for f in e.files if f.generated], sep='\\n')")


def _run(cmd, cwd, env, timeout=1500) -> subprocess.CompletedProcess:
    return subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def _ok(p: subprocess.CompletedProcess) -> str:
    assert p.returncode == 0, f"{p.args}: exit {p.returncode}\n{p.stdout[-4000:]}\n{p.stderr[-4000:]}"
    return p.stdout


def _source_tree(dest: Path) -> Path:
    """What the wheel is built from: the files git knows (committed or new) of pyproject, README, kabe/;
    never a stale build/ folder of this checkout."""
    listed = _ok(_run(["git", "ls-files", "-co", "--exclude-standard"], REPO, os.environ)).splitlines()
    for rel in listed:
        if rel in ("pyproject.toml", "README.md") or rel.startswith("kabe/"):
            src = REPO / rel
            if src.is_file():
                (dest / rel).parent.mkdir(parents=True, exist_ok=True)
                (dest / rel).write_bytes(src.read_bytes())
    return dest


def _fresh_venv(tmp: Path) -> tuple[Path, dict[str, str]]:
    import importlib.util

    assert importlib.util.find_spec("wheel"), "the wheel package is missing: pip install -e '.[test]' (test extra)"
    dist = tmp / "dist"
    _ok(_run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", dist,
              _source_tree(tmp / "src")], tmp, os.environ))
    wheel = next(dist.glob("kabe-*.whl"))
    venv = tmp / "venv"
    _ok(_run([sys.executable, "-m", "venv", "--without-pip", venv], tmp, os.environ))
    py = venv / "bin" / "python"
    _ok(_run([sys.executable, "-m", "pip", "--python", py, "install", "-q", "--no-deps", "--no-index", wheel],
             tmp, os.environ))
    site = Path(_ok(_run([py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], tmp,
                         os.environ)).strip())
    (site / "kabe_test_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")  # the dependencies only
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "KABE_PROJECT", "VIRTUAL_ENV", "COLUMNS")}
    env["PATH"] = os.pathsep.join([str(venv / "bin"), "/usr/local/bin", "/usr/bin", "/bin"])
    return venv, env


def test_a_wheel_in_a_fresh_venv_builds_a_design_of_a_project_made_from_scratch(tmp_path):
    venv, env = _fresh_venv(tmp_path)
    py = venv / "bin" / "python"
    where = _ok(_run([py, "-c", "import kabe, kabe.flows.vivado.project as p; print(kabe.__file__); "
                               "print(p.TCL_DIR)"], tmp_path, env)).split()
    assert all(Path(w).is_relative_to(venv) for w in where), where  # the wheel's kabe and its Tcl
    assert (Path(where[1]) / "kabe_bd.tcl").is_file()
    # every file kabe's own board profiles name for the vivado flow ships with it (the KV260's PS8 and its fan XDC)
    assert all((Path(where[1]) / f).is_file() for f in ("kabe_ps7.tcl", "kabe_ps8.tcl", "pynq_z1_ps7.tcl",
                                                        "kv260_ps8.tcl", "kv260_carrier.xdc", "v80_aved_bd.tcl"))
    generators = Path(where[0]).parent / "generators"  # kabe:gen:top, the top generator, as package data
    assert all((generators / f).is_file() for f in ("kabe_gen_top.core", "gen_top.py", "fusesoc_generator.py"))

    lib = tmp_path / "adder_lib"
    lib.mkdir()
    (lib / "adder.core").write_text(LIB_CORE)
    (lib / "lib_adder.v").write_text(LIB_RTL)

    user = tmp_path / "my_fpga"
    user.mkdir()
    _ok(_run(["git", "init", "-q", "-b", "main"], user, env))
    init = _ok(_run([venv / "bin" / "kabe", "init"], user, env))
    assert f"wrote {user / 'pyproject.toml'}" in init and f"wrote {user / 'dodo.py'}" in init
    # the CI files of a kabe installed from a local wheel (PEP 610: a file:// URL CI cannot reach): an EDIT
    # line that fails saying what to put there, the trigger on the branch detected, both linters passing
    from tests.ci.test_templates import actionlint, gitlab_schema

    assert "the CI files run on main (the branch checked out)" in init and "EDIT the lines marked EDIT" in init
    workflow = (user / ".github" / "workflows" / "kabe.yml").read_text()
    assert "branches: [\"main\"]" in workflow and "pip install kabe" not in workflow and "this line must install kabe" in workflow
    assert actionlint(user / ".github" / "workflows" / "kabe.yml").returncode == 0
    assert gitlab_schema(user / ".gitlab-ci.yml").returncode == 0
    (user / ".venv" / "lib").mkdir(parents=True)  # the README's venv, made in the project
    (user / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    new = _ok(_run([venv / "bin" / "kabe", "new", "counter"], user, env))
    assert f"wrote {user / 'cores' / 'counter' / 'design.yaml'}" in new
    # the design's sum goes through the library's adder, found by FuseSoC through the project's fusesoc.conf
    _ok(_run([py, "-m", "fusesoc.main", "--config", user / "fusesoc.conf", "library", "add", "adder_lib", lib,
              "--sync-type", "local"], user, env))
    assert "adder_lib" in (user / "fusesoc.conf").read_text()
    core = user / "cores" / "counter" / "counter.core"
    core.write_text(core.read_text().replace("    file_type: verilogSource\n",
                                             "    file_type: verilogSource\n    depend: [user:lib:adder:1.0.0]\n", 1))
    top = user / "cores" / "counter" / "rtl" / "counter_top.v"
    text = top.read_text()
    assert text.count("sum + s_axis_tdata") == 2
    top.write_text(text.replace("    reg [31:0] sum;\n", "    reg [31:0] sum;\n    wire [31:0] next_sum;\n"
                                "    lib_adder add (.a(sum), .b(s_axis_tdata), .y(next_sum));\n")
                   .replace("sum + s_axis_tdata", "next_sum"))
    _ok(_run(["git", *GIT_ID, "add", "-A"], user, env))
    staged = _ok(_run(["git", "diff", "--cached", "--name-only"], user, env)).split()
    assert staged and not [f for f in staged if f.startswith(".venv/")], staged  # `git add -A` stages no venv
    _ok(_run(["git", *GIT_ID, "commit", "-qm", "a counter"], user, env))
    sha = _ok(_run(["git", "rev-parse", "HEAD"], user, env)).strip()

    listed = _run([py, "-m", "doit", "list"], user, env)
    assert listed.returncode == 0 and "build" in listed.stdout, listed.stderr
    built = _run([py, "-m", "doit", "build:counter", "flow=open"], user, env)
    out = built.stdout + built.stderr
    assert built.returncode == 0, out[-6000:]
    archive = user / "reports" / sha / "counter" / "open"
    metrics = json.loads((archive / "metrics.json").read_text())
    assert metrics["commit"] == sha and metrics["dirty"] is False  # named after the user's own commit
    assert metrics["utilization"]["lut"] > 0 and metrics["timing"]["wns_ns"] is not None
    assert any(k.endswith("adder_lib/lib_adder.v") for k in metrics["inputs"]), sorted(metrics["inputs"])
    # nothing of this checkout took part (its dependencies' venv aside): no design, constraint, Tcl, report
    seen = out + json.dumps(metrics) + (archive / "manifest.json").read_text()
    for mine in ("kabe", "cores", "constraints", "scripts", "reports", "build", "ip"):
        assert str(REPO / mine) + "/" not in seen, f"{REPO / mine} used by the installed kabe"
    assert "unverified: add a golden model" in out  # verify: none is said, never a bare pass
    # no project folder was written into the installed package (kabe/build/ is kabe's own Python package)
    assert not [p for p in venv.rglob("*") if p.is_dir() and p.name in ("reports", "build", "cores")
                and not (p / "__init__.py").is_file()]

    # The same design given a golden model of the project's own: the wheel's harness is compiled by
    # Verilator and every beat compared; the model is imported from the project, not from kabe.
    (user / "models").mkdir()
    (user / "models" / "__init__.py").write_text("")
    (user / "models" / "counter_model.py").write_text(MODEL)
    yaml_file = user / "cores" / "counter" / "design.yaml"
    yaml_file.write_text(yaml_file.read_text().replace(
        'verify: {none: "add a golden model: see docs/your_design.md"}', 'verify: {model: "models.counter_model:stimulus"}'))
    _ok(_run(["git", *GIT_ID, "add", "-A"], user, env))
    _ok(_run(["git", *GIT_ID, "commit", "-qm", "the counter's golden model"], user, env))
    sha2 = _ok(_run(["git", "rev-parse", "HEAD"], user, env)).strip()
    built = _run([py, "-m", "doit", "build:counter", "flow=open"], user, env)
    out = built.stdout + built.stderr
    assert built.returncode == 0, out[-6000:]
    metrics = json.loads((user / "reports" / sha2 / "counter" / "open" / "metrics.json").read_text())
    assert metrics["sim"]["passed"] and metrics["sim"]["mismatches"] == 0, metrics["sim"]
    assert metrics["gate"]["passed"] and not metrics["gate"].get("unverified"), metrics["gate"]
    sim = metrics["sim"]
    assert sim["beats"] == 20_000 and sim["words_checked"] == 1 and sim["compiled"]  # the harness built here
    print(f"wheel smoke, model: {sim['beats']} beats in, {sim['words_checked']} word checked, "
          f"{sim['mismatches']} mismatches ({sim['verification']['model']})")
    print(f"wheel smoke: {archive.relative_to(user)}: LUT {metrics['utilization']['lut']}, "
          f"WNS {metrics['timing']['wns_ns']} ns")

    # kabe's top generator ships in the wheel and is a FuseSoC library of every project: a core of the
    # user's own depends on kabe:gen:top and FuseSoC runs the wheel's gen_top.py to write its top.
    wrapped = user / "cores" / "wrapped"
    wrapped.mkdir()
    (wrapped / "wrapped.core").write_text(WRAPPED_CORE)
    (wrapped / "engine.v").write_text("module my_engine; endmodule\n")
    (wrapped / "design.yaml").write_text('core: user:design:wrapped:0.1.0\nverify: {none: "resolved only"}\n'
                                         "constraints: wrapped.xdc\n")
    (wrapped / "wrapped.xdc").write_text("create_clock -period 7.000 -name clk [get_ports clk]\n")
    generated = [Path(p) for p in _ok(_run([py, "-c", RESOLVE_WRAPPED], user, env)).split()]
    assert [p.name for p in generated] == ["wrapped_top.v"], generated
    top_text = generated[0].read_text()
    assert top_text.startswith("// Generated by kabe/generators/gen_top.py for user:design:wrapped-top:0.1.0")
    assert "my_engine" in top_text and "s0_axis_tdata" in top_text
