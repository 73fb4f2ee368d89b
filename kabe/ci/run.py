"""`kabe ci`: pull the shared archive, build and gate the designs, judge them against the base commit,
write the Markdown delta and JUnit XML, push the archive on the default branch. The same locally as in CI.

Exit status: 0 when every design did what it must (a negative example, expect_gate: fail, must
fail its gate), 1 when a gate or a regression failed, 2 when a build or the archive push could not
run. The last lines printed name each failing design and why.
"""

from __future__ import annotations

import errno
import os
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from kabe.console import make_console
from kabe import build, config, designs, provenance
from kabe.build import rederive, summary
from kabe.rules import regressions
from kabe.rules.verdict import DesignFacts, judge
from kabe.errors import EXIT_COULD_NOT_RUN, EXIT_GATE_FAILED, EXIT_PASS, UserError
from kabe.paths import REPORTS, ROOT
from kabe.records import cache, junit, lineage, signing, store, tracked_outputs
from kabe.records import load as record_load
from kabe.records.archive import archive_dir, write_text_atomic

from . import base_signers, markdown
from kabe.ci.design_result import DesignOutcome


@dataclass
class CiOptions:
    designs: list[str] = field(default_factory=list)  # empty: every design
    flow: str | None = None
    base: str | None = None  # --base REF; default: the merge-base with the base branch
    remote: str = "origin"
    pull: bool = True
    push: bool | None = None  # None: push on the default branch only
    rebuild: bool = False  # rebuild even when this commit's archive already holds the build
    bitstreams: bool = False
    summary: Path = REPORTS / "ci-summary.md"
    junit: Path = REPORTS / "ci-junit.xml"


def _say(console: Console, text: str) -> None:
    console.print(text, soft_wrap=True)  # one line per reason in a CI log, whatever its width


def _has_remote(remote: str, root: Path) -> bool:
    """A remote name configured here, or a URL/path given directly."""
    return lineage.git(root, "remote", "get-url", remote) is not None or "/" in remote or ":" in remote


def on_default_branch(root: Path = ROOT, remote: str = "origin") -> bool:
    if base_signers.change_pipeline():
        return False
    branch = lineage.base_branch(root, remote)
    return branch is not None and lineage.current_branch(root) == branch


def _fetch_base_branch(root: Path, remote: str) -> None:
    """A CI checkout may hold only the branch it builds (GitLab fetches just that one): fetch the base
    branch so the merge-base can be found. Nothing is fetched when it is already here."""
    if lineage.git(root, "remote", "get-url", remote) is None:
        return  # a URL, not a configured remote: there are no remote-tracking branches to fill
    branch = lineage.base_branch(root, remote)
    if branch and not lineage.resolve(f"refs/remotes/{remote}/{branch}", root):
        lineage.git(root, "fetch", "--quiet", "--no-tags", remote, f"+refs/heads/{branch}:refs/remotes/{remote}/{branch}")


def _trusted(path: Path, commit: provenance.Commit, design: str, flow: str) -> record_load.Checked | str:
    """This archive's record validated and re-gated (kabe.records.load, so kabe.rules.verdict.judge), or why it
    cannot be used: a unit in reports/ is built here (no signature) or pulled and signed, and a signed
    one must still verify (kabe.records.signing) — an edit since the pull makes it untrusted — and say
    the numbers its raw reports give (kabe.build.rederive), as a cache hit must."""
    unit = path.parent
    check = signing.check_if_signed(unit, f"{commit.archive_name}/{design}/{flow}")
    signed = check is not None
    if signed and not check.ok:
        return f"its signature does not verify ({check.reason})"
    checked = record_load.checked(path, where=(commit.archive_name, design, flow))
    if isinstance(checked, record_load.Invalid):
        return checked.reason
    if signed:  # from elsewhere: its numbers must be what its raw reports say, as for a cache hit
        try:
            why = rederive.disagreement(cache.Entry(unit, checked.record, {}), designs.get(design), flow)
        except UserError as e:
            why = str(e)
        if why:
            return why
    return checked


def _base_record(base: str | None, design: str, flow: str, reports_root: Path) -> tuple[dict | None, list[str]]:
    if base is None:
        return None, []
    path = archive_dir(provenance.Commit(base, False), design, flow, reports_root) / "metrics.json"
    if not path.exists():
        return None, []
    checked = _trusted(path, provenance.Commit(base, False), design, flow)
    if isinstance(checked, str):
        return None, [f"{design} ({flow}): the base build cannot be used ({checked}); regressions not judged"]
    return checked.record, []


def _one(name: str, flow: str, commit: provenance.Commit, base: str | None, opts: CiOptions,
         console: Console, reports_root: Path) -> DesignOutcome:
    try:
        design = designs.get(name)
    except UserError as e:
        return DesignOutcome(name, flow, error=str(e))
    out = DesignOutcome(name, flow, expect_gate=design.expect_gate)
    archived = archive_dir(commit, name, flow, reports_root) / "metrics.json"
    try:
        checked = _trusted(archived, commit, name, flow) if archived.exists() and not commit.dirty and not opts.rebuild \
            else None
        if isinstance(checked, str):
            _say(console, f"[yellow]{name}: this commit's archived build is not used ({escape(checked)}); building[/]")
        if isinstance(checked, record_load.Checked):
            out.record, out.reused = checked.record, True
            _say(console, f"[bold]{name}[/]: this commit's build is already archived ({escape(str(archived.parent))}); not rebuilt")
        else:
            out.record = build.build(name, flow, console=console, reports_root=reports_root)
    except UserError as e:
        out.error = f"{name}: the build could not run: {e}"
        return out
    # The one verdict (kabe.rules.verdict.judge) under this checkout's facts and settings, for a build made
    # now and for an archived one alike: the archived gate.passed is never what CI believes.
    verdict = judge(out.record, DesignFacts.of(design, flow))
    out.record = {**out.record, "gate": verdict.as_dict()}
    summary.render(out.record, console, design.expect_gate)
    out.base_record, notes = _base_record(base, name, flow, reports_root)
    out.judgement = regressions.judge(name, regressions.rules_from_mapping(design.regressions), out.record,
                                      base, out.base_record)
    if base and out.base_record is None and not notes and not design.regressions:
        notes.append(f"{name} ({flow}): no archived build at base {base[:12]}, so there is nothing to compare with")
    out.judgement.notes[:0] = notes
    out.verdict = regressions.combined_verdict(out.record["gate"], out.judgement)
    return out


def _write_reports(outcomes, commit, branch, base, opts: CiOptions, console: Console) -> None:
    md = markdown.render(outcomes, commit.archive_name, branch, base.commit, base.how)
    write_text_atomic(opts.summary, md)
    step_summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if step_summary:
        with open(step_summary, "a") as f:
            f.write(md)
    junit.write(opts.junit, [o.junit_suite() for o in outcomes], name=f"kabe ci {commit.short}")
    _say(console, escape(f"summary: {opts.summary}; junit: {opts.junit}" + (f"; also appended to {step_summary}" if step_summary else "")))


def _pull(opts: CiOptions, has_remote: bool, root: Path, reports_root: Path, console: Console) -> None:
    if not opts.pull:
        return
    if not has_remote:
        _say(console, f"kabe ci: no remote {opts.remote!r}: working from the local archive only")
        return
    try:
        for line in store.pull(opts.remote, root, reports_root, bitstreams=opts.bitstreams).lines():
            _say(console, escape(line))
    except UserError as e:  # the builds still run; a base it cannot find is then said plainly as a missing baseline
        _say(console, f"[yellow]kabe ci: the archive was not pulled: {escape(str(e))}[/]")


def _push(opts: CiOptions, has_remote: bool, commit: provenance.Commit, root: Path, reports_root: Path,
          console: Console) -> int:
    push = opts.push if opts.push is not None else on_default_branch(root, opts.remote)
    if not push:
        return EXIT_PASS
    if commit.dirty:
        _say(console, "[yellow]kabe ci: not pushing: the tree is dirty, so nobody else could reproduce these builds[/]")
        return EXIT_PASS
    if not has_remote and opts.push is None:  # a repository with no remote yet: as the pull, local only
        _say(console, f"kabe ci: no remote {opts.remote!r}: the archive stays local (`kabe archive push` "
                      f"shares it once the repository has one)")
        return EXIT_PASS
    if not has_remote:  # --push asked for it: a push that cannot happen is not a pass
        _say(console, f"[red]kabe ci: cannot push: no remote {opts.remote!r}[/]")
        return EXIT_COULD_NOT_RUN
    try:
        report = store.push(opts.remote, root, reports_root, commits=[commit.sha], bitstreams=opts.bitstreams)
    except UserError as e:
        _say(console, f"[red]kabe ci: the archive was not pushed: {escape(str(e))}[/]")
        return EXIT_COULD_NOT_RUN
    for line in report.lines():
        _say(console, escape(line))
    return EXIT_PASS


def _verdict_lines(outcomes: list[DesignOutcome], console: Console, could_not: str | None = None) -> int:
    """The last lines of the log: each failing design and why, then the count. could_not: a step after
    the builds that could not run (the summary, the push): then nothing is said to have passed."""
    failed = [o for o in outcomes if not o.ok]
    for o in outcomes:  # a rule not judged is neither pass nor fail: said where the verdict is read
        for note in o.judgement.notes:
            _say(console, f"[yellow]kabe ci: not judged: {escape(note)}[/]")
    for o in outcomes:
        if o.ok and o.expect_gate == "fail":
            _say(console, f"kabe ci: {o.design} ({o.flow}) failed its gate as it must (negative example): FAIL (expected)")
        elif o.ok and o.not_estimated:  # no timing number (a board kabe cannot time): neither pass nor fail
            _say(console, f"[yellow]kabe ci: {o.design} ({o.flow}) timing not estimated, as design.yaml expects: "
                          f"{escape(o.not_estimated)}[/]")
        elif o.ok and o.unverified:  # no simulation verdict behind its gate: said, never a bare pass
            _say(console, f"[yellow]kabe ci: {o.design} ({o.flow}) passed its gate, unverified: "
                          f"{escape(o.unverified)}[/]")
    for o in failed:
        wns = o.wns()
        _say(console, f"[red]kabe ci: FAIL {o.design} ({o.flow})"
                      + (f", WNS {wns:+.3f} ns" if wns is not None else "") + f": {escape('; '.join(o.reasons()))}[/]")
    if not failed and could_not:  # exit 2: the last line must not read as a pass
        _say(console, f"[red]kabe ci: {len(outcomes)} design(s) did what design.yaml expects, but {escape(could_not)} "
                      f"could not be done: exit 2[/]")
        return EXIT_COULD_NOT_RUN
    if not failed:
        unverified = [o.design for o in outcomes if o.unverified]
        expected = [o.design for o in outcomes if o.expect_gate == "fail"]  # counted apart, as pytest's xfailed
        not_estimated = [o.design for o in outcomes if o.not_estimated]  # neither pass nor fail: counted apart
        # "passed" is not said of a gate without a timing number (kabe.rules.gate: not estimated)
        _say(console, f"[green]kabe ci: all {len(outcomes)} design(s) "
                      f"{'did what design.yaml expects' if not_estimated else 'passed'}[/]"
                      + (f" [yellow]({len(not_estimated)} timing not estimated: {', '.join(not_estimated)})[/]"
                         if not_estimated else "")
                      + (f" [yellow]({len(unverified)} unverified: {', '.join(unverified)})[/]" if unverified else "")
                      + (f" ({len(expected)} of them FAIL (expected): {', '.join(expected)})" if expected else ""))
        return EXIT_PASS
    _say(console, f"[red]kabe ci: {len(failed)} of {len(outcomes)} design(s) failed: {', '.join(o.design for o in failed)}[/]")
    return EXIT_COULD_NOT_RUN if any(o.error for o in failed) else EXIT_GATE_FAILED


def run(opts: CiOptions, console: Console | None = None, root: Path = ROOT, reports_root: Path = REPORTS) -> int:
    console = console or make_console()
    has_remote = _has_remote(opts.remote, root)
    if has_remote:  # before the pull: a change's pipeline reads the allowed signers from the base branch
        _fetch_base_branch(root, opts.remote)
    if not base_signers.change_pipeline():
        return _run(opts, console, root, reports_root, has_remote)
    with tempfile.TemporaryDirectory(prefix="kabe-ci-signers-") as tmp:
        allowed, note = base_signers.base_allowed_signers(root, opts.remote, Path(tmp) / "allowed_signers")
        _say(console, f"kabe ci: a pipeline for a change: {escape(note)}")
        with signing.pinned_allowed_signers(allowed):
            return _run(opts, console, root, reports_root, has_remote)


def _run(opts: CiOptions, console: Console, root: Path, reports_root: Path, has_remote: bool) -> int:
    clock = {"start": time.monotonic()}
    tracked_outputs.check(root)  # a base build or cache entry the change itself committed is never trusted
    _pull(opts, has_remote, root, reports_root, console)
    clock["pulled"] = time.monotonic()

    flow = config.resolve_flow(opts.flow)
    commit = provenance.current_commit(root)
    base = lineage.base_commit(root, opts.base, opts.remote)
    _say(console, f"kabe ci: {commit.short}, {flow} flow; base: "
                  + (f"{base.commit[:12]} ({base.how})" if base.commit else f"none ({base.how})"))
    if commit.sha == "nogit":
        why = provenance.why_no_commit(root)
        if why:
            _say(console, f"[yellow]kabe ci: {escape(why)}[/]")
    outcomes, build_seconds = [], 0.0
    for name in opts.designs or designs.names():  # a broken design.yaml is its own could-not-run outcome
        t = time.monotonic()
        outcomes.append(_one(name, flow, commit, base.commit, opts, console, reports_root))
        build_seconds += time.monotonic() - t
    try:
        _write_reports(outcomes, commit, lineage.current_branch(root), base, opts, console)
    except OSError as e:  # a read-only or full disk: one line naming the file and the errno, exit 2
        why = str(e) if isinstance(e, UserError) else (f"{e.filename2 or e.filename or opts.summary}: "
                                                        f"{errno.errorcode.get(e.errno, e.errno)} ({e.strerror or e})")
        _say(console, f"[red]kabe ci: cannot write the summary: {escape(why)}[/]")
        return max(EXIT_COULD_NOT_RUN, _verdict_lines(outcomes, console, "writing the summary"))
    clock["reported"] = time.monotonic()
    status = _push(opts, has_remote, commit, root, reports_root, console)
    clock["pushed"] = time.monotonic()
    total = clock["pushed"] - clock["start"]
    pull, push = clock["pulled"] - clock["start"], clock["pushed"] - clock["reported"]
    # Printed for people and for scripts/bench_ci.py: what kabe ci costs beside the builds.
    _say(console, f"kabe ci: {total:.1f} s in all: builds {build_seconds:.1f} s, pull {pull:.2f} s, push {push:.2f} s, "
                  f"base, reports and the rest {total - build_seconds - pull - push:.2f} s")
    return max(status, _verdict_lines(outcomes, console, "pushing the archive" if status == EXIT_COULD_NOT_RUN else None))
