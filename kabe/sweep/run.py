"""`doit sweep:<design>` / `kabe sweep <design>`: the client side of a sweep.

Ships the commit's tree once, submits one build per variant (one worker slot each), follows them live,
takes every result as data and checks it (kabe.sweep.unit: its shape, the tar's members, the record's
schema and keys, its cache_key.json against the key computed here for the variant, its verdict recomputed
here) before writing it atomically, once, under
reports/<commit>/<design>/sweep-<flow>/<variant-id>/, then sweep.json and the Pareto plot beside them.
A refused unit is a failed row with the reason and nothing archived. Variants sit beside the plain
build's archive, not inside it: a plain build replaces its folder as a whole, which would delete them.
"""

from __future__ import annotations

import time
import uuid
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.live import Live
from rich.markup import escape
from rich.table import Table

from kabe.base.console import make_console
from kabe.project import config, designs
from kabe.base import provenance
from kabe.base.errors import EXIT_COULD_NOT_RUN, EXIT_GATE_FAILED, EXIT_INTERRUPTED, EXIT_PASS, UserError
from kabe.base.paths import REPORTS, ROOT
from kabe.store.archive import to_json, write_atomic, write_text_atomic
from kabe.sweep import cluster, expected, results, source, spec, unit, worker
from kabe.sweep.spec import SweepError

REFRESH_S = 0.5


def sweep_dir(commit: provenance.Commit, design: str, flow: str, root: Path = REPORTS) -> Path:
    return Path(root) / commit.archive_name / design / f"sweep-{flow}"


def _rel(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


def _live_table(order: list[spec.Variant], state: dict[str, str], started: dict[str, float],
                finished: dict[str, float]) -> Table:
    t = Table(show_header=True, header_style="bold")
    for col in ("variant", "settings", "state", "elapsed"):
        t.add_column(col)
    now = time.monotonic()
    colour = {"queued": "dim", "running": "yellow", "done": "green", "failed": "red", "error": "red"}
    for v in order:
        st = state[v.id]
        el = (finished.get(v.id, now) - started[v.id]) if v.id in started else None
        t.add_row(v.id, escape(v.label()), f"[{colour[st]}]{st}[/]", "" if el is None else f"{el:.0f} s")
    return t


@dataclass(frozen=True)
class SweepOptions:
    """The sweep verb's options (`kabe sweep`, `doit sweep:<design>`), one typed object below the verb."""

    flow: str | None = None  # None: the sweep file's flow, else the project's
    sweep_file: Path | None = None  # None: the design's own sweep.yaml
    overrides: tuple[str, ...] = ()  # name=v1,v2 from the command line, over the sweep file's axes
    scheduler: str | None = None  # a Dask scheduler's address, or a [tool.kabe.sweep] cluster; None: local
    workers: int | None = None
    reports_root: Path = REPORTS
    retries: int = 1  # Dask's retries of a task whose worker died
    insecure_scheduler: bool = False  # a scheduler reached without TLS (kabe.sweep.cluster says the risk)


def run_sweep(design_name: str, options: SweepOptions = SweepOptions(), *, console: Console | None = None) -> dict:
    """Run the sweep; returns sweep.json's content. Raises UserError (bad sweep, dirty tree,
    unreachable scheduler) and KeyboardInterrupt (after stopping every build)."""
    from distributed import Event, wait

    console = console or make_console()
    design = designs.get(design_name)
    sw = spec.load(design, options.sweep_file, list(options.overrides))
    flow = config.resolve_flow(options.flow or sw.flow)
    commit = provenance.current_commit()
    if commit.dirty or commit.sha == "nogit":
        raise SweepError("a sweep builds a commit, and this tree has uncommitted changes (or is not a git "
                         "checkout); commit them first, so every variant's archive names what it was built from")
    shipped = source.pack(ROOT, commit.sha)
    core_rel, xdc_rel = _rel(design.core_file), _rel(design.constraints)
    out_dir = sweep_dir(commit, design.name, flow, options.reports_root)
    into = _Into(shipped, out_dir, commit, design.name, flow, core_rel, xdc_rel)
    conn = cluster.connect(flow, options.scheduler, options.workers, config.load().get("sweep") or {},
                           insecure_scheduler=options.insecure_scheduler)
    for warning in conn.warnings:
        console.print(f"[bold red]{escape(warning)}[/]")
    console.print(f"[bold]{design.name}[/]: {len(sw.variants)} variants from {escape(sw.source)}, {flow} flow, "
                  f"on {escape(conn.description)}" + (f"; dashboard {conn.dashboard}" if conn.dashboard else ""))
    client = conn.client
    cancel = f"kabe-sweep-cancel-{uuid.uuid4().hex}"
    by_key: dict[str, spec.Variant] = {}
    state = {v.id: "queued" for v in sw.variants}
    started: dict[str, float] = {}
    finished: dict[str, float] = {}
    rows: dict[str, dict] = {}
    t0 = time.monotonic()
    try:
        archive = client.scatter(shipped.archive, broadcast=False)
        futures = {}
        for v in sw.variants:
            key = f"kabe-build-{design.name}-{flow}-{v.id}-{shipped.tree[:10]}"
            futures[key] = client.submit(worker.build_variant, into.job(v), archive, cancel_event=cancel, key=key,
                                         resources=cluster.task_resources(flow), retries=options.retries, pure=False)
            by_key[key] = v
        pending = set(futures.values())
        # this checkout's key of each variant, made here while the workers build (seconds each, one at a
        # time): a unit is taken only when its cache_key.json is that key (kabe.sweep.expected)
        key_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kabe-sweep-keys")
        expected_keys = {v.id: _KeyOf(key_pool, shipped, design.name, core_rel, xdc_rel, flow, v.settings)
                         for v in sw.variants}
        with Live(_live_table(list(sw.variants), state, started, finished), console=console,
                  refresh_per_second=2, transient=False) as live:
            while pending:
                try:
                    done, pending = wait(pending, timeout=REFRESH_S, return_when="FIRST_COMPLETED")
                except TimeoutError:  # nothing finished within REFRESH_S: refresh the table
                    done = set()
                running = {k for keys in client.processing().values() for k in keys}
                for key, v in by_key.items():
                    if key in running and state[v.id] == "queued":
                        state[v.id] = "running"
                        started[v.id] = time.monotonic()
                holders = client.who_has(list(done)) if done else {}  # the scheduler's word, not the worker's
                for fut in done:
                    v = by_key[fut.key]
                    started.setdefault(v.id, t0)
                    finished[v.id] = time.monotonic()
                    held_by = sorted(holders.get(fut.key) or ())
                    rows[v.id] = _collect(fut, v, into,
                                          expected_keys[v.id], held_by[0] if held_by else None)
                    state[v.id] = "done" if rows[v.id]["status"] == "passed" else "failed"
                live.update(_live_table(list(sw.variants), state, started, finished))
    except KeyboardInterrupt:
        if "key_pool" in locals():
            key_pool.shutdown(wait=False, cancel_futures=True)
        Event(cancel, client=client).set()  # running builds stop themselves (and their tools)
        client.cancel(list(futures.values()) if "futures" in locals() else [], force=True)
        time.sleep(2 * worker.POLL_S)
        raise
    finally:
        if "key_pool" in locals():
            key_pool.shutdown(wait=False, cancel_futures=True)
        conn.close()

    ordered = [rows[v.id] for v in sw.variants]
    top = results.best(ordered)
    front = results.pareto_ids(ordered)
    summary = {"design": design.name, "flow": flow, "commit": commit.sha, "tree": shipped.tree, "source": sw.source,
               "cluster": conn.description, "seconds": round(time.monotonic() - t0, 1),
               "best": top["id"] if top else None, "pareto": sorted(front), "variants": ordered}
    out_dir.mkdir(parents=True, exist_ok=True)
    png = results.plot_pareto(ordered, f"{design.name} sweep at {commit.sha[:12]} ({flow} flow): LUT vs WNS",
                              out_dir / f".tmp-{results.PARETO_PNG}")
    png.replace(out_dir / results.PARETO_PNG)
    write_text_atomic(out_dir / results.SWEEP_FILE, to_json(summary))
    console.print(results.table(ordered, summary["best"], front))
    for r in ordered:
        if r.get("rejected"):
            console.print(f"[red]{r['id']}: {escape(r['failures'][0])}[/]")
    if top:
        path = top.get("critical_path_ns")
        console.print(f"best passing variant: [bold]{top['id']}[/] ({escape(top['label'])}): minimum period "
                      f"{results.min_period_ns(top):.3f} ns (WNS {top['wns_ns']:+.3f} ns at {top['period_ns']:.3f} ns), "
                      + (f"critical path {path:.3f} ns, " if path is not None else "")
                      + f"{top['lut']} LUT")
    else:
        console.print("[red]no variant passed the gate[/]")
    console.print(f"sweep.json and {results.PARETO_PNG}: {out_dir}")
    return summary


class _KeyOf:
    """This checkout's key of one variant (kabe.sweep.expected.variant_key), computed in the background and
    waited for only when a unit reaches the key check (kabe.sweep.unit calls it); one not yet started
    then is computed at once rather than behind the others."""

    def __init__(self, pool: ThreadPoolExecutor, shipped: source.ShippedTree, design: str, core_rel: str,
                 xdc_rel: str, flow: str, settings: dict) -> None:
        self._args = (shipped.identity(), shipped.archive, design, core_rel, xdc_rel, flow, settings)
        self._future: Future = pool.submit(expected.variant_key, *self._args)
        self._value = None

    def __call__(self):
        if self._value is None:
            self._value = expected.variant_key(*self._args) if self._future.cancel() else self._future.result()
        return self._value


@dataclass(frozen=True)
class _Into:
    """What a worker's unit must be of (this tree, commit, design and flow) and where an accepted one goes."""

    shipped: source.ShippedTree
    out_dir: Path
    commit: provenance.Commit
    design: str
    flow: str
    core_file: str  # the design's core file and constraints, as paths in the shipped tree
    xdc_file: str

    def job(self, v: spec.Variant) -> unit.Job:
        """What the worker is asked to build for variant v, and what its answer is held against."""
        return unit.Job(self.shipped.identity(), self.design, self.core_file, self.xdc_file, self.flow, v.id,
                        v.settings)


def _collect(fut, v: spec.Variant, into: _Into, expected_key: "_KeyOf", worker_address: str | None) -> dict:
    if fut.status == "error":  # the task itself failed (after retries): a failed result, not a lost one
        e = fut.exception()
        return results.row(v, worker=worker_address, error=f"{type(e).__name__}: {str(e)[:300]}")
    if fut.status != "finished":
        return results.row(v, worker=worker_address, error=f"the task was {fut.status}")
    try:
        value = fut.result()  # msgpack only (cluster.RESULT_DESERIALIZERS): bytes and str, or a refusal
    except Exception as e:  # noqa: BLE001 - whatever Dask could not read as data is refused, not run
        why = (str(e).strip().splitlines() or [""])[0][:200]  # Dask's first line; not the worker's traceback
        return results.row(v, worker=worker_address, rejected=True,
                           error=f"rejected: the worker's result is not data kabe reads ({type(e).__name__}: {why})")
    try:
        report, accepted = unit.accept(value, into.job(v), archive_name=into.commit.archive_name,
                                       expected_key=expected_key)
    except unit.Rejected as e:
        return results.row(v, worker=worker_address, rejected=True, error=str(e))
    if accepted is None:
        tail = " | ".join(report["log_tail"][-3:])
        return results.row(v, report=report, worker=worker_address,
                           error=f"no archive (exit {report['rc']}): {tail[:300]}")
    dest = write_atomic(into.out_dir / v.id, accepted.files)  # written once, complete, by the client only
    return results.row(v, report=report, worker=worker_address, record=accepted.record, verdict=accepted.verdict,
                       archive=_rel(dest))


def main(design: str, flow: str | None = None, overrides: list[str] = (), scheduler: str | None = None,
         workers: int | None = None, sweep_file: str | None = None, diff: list[str] | None = None,
         insecure_scheduler: bool = False) -> int:
    console = make_console()  # no 80-column folding of ids and settings in a log
    if diff:
        from kabe.sweep import compare

        try:
            print(compare.render(design, diff[0], diff[1], config.resolve_flow(flow)), end="")
        except UserError as e:
            console.print(f"[red]kabe sweep {escape(design)} --diff: {escape(str(e))}[/]")
            return EXIT_COULD_NOT_RUN
        return EXIT_PASS
    try:
        options = SweepOptions(flow=flow, sweep_file=Path(sweep_file) if sweep_file else None,
                               overrides=tuple(overrides), scheduler=scheduler, workers=workers,
                               insecure_scheduler=insecure_scheduler)
        summary = run_sweep(design, options, console=console)
    except UserError as e:
        console.print(f"[red]kabe sweep {escape(design)}: {escape(str(e))}[/]")
        return EXIT_COULD_NOT_RUN
    except KeyboardInterrupt:
        console.print("[red]interrupted: every running build was stopped; nothing half-written was archived[/]")
        return EXIT_INTERRUPTED
    return EXIT_PASS if summary["best"] else EXIT_GATE_FAILED
