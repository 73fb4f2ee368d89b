"""`kabe ci`: pull the shared archive, build and gate the designs, judge them against the base commit,
write the Markdown delta and JUnit XML, push the archive on the default branch. The same locally as in CI.

Exit status: 0 when every design did what it must (a negative example, expect_gate: fail, must
fail its gate), 1 when a gate or a regression failed, 2 when a build or the archive push could not
run. The last lines printed name each failing design and why.
"""

from __future__ import annotations

import errno
import json
import os
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from kabe.base.console import make_console
from kabe import build, flows
from kabe.project import config, designs
from kabe.base import provenance
from kabe.build import rederive, summary
from kabe.rules import gate, regressions
from kabe.base.errors import EXIT_COULD_NOT_RUN, EXIT_GATE_FAILED, EXIT_PASS, UserError
from kabe.base.paths import REPORTS, ROOT
from kabe.cache import cache, tracked_outputs
from kabe.records import junit, lineage
from kabe.store import signing, store, trusted_settings
from kabe.records import load as record_load
from kabe.store.archive import archive_dir, write_text_atomic

from . import base_build, base_signers, markdown
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
    if base_signers.change_pipeline(root, remote):
        return False
    branch = lineage.base_branch(root, remote)
    return branch is not None and lineage.current_branch(root) == branch


def _fetch_base_branch(root: Path, remote: str) -> None:
    """A CI checkout may hold only the branch it builds (GitLab fetches just that one): fetch the base
    branch so the merge-base can be found. Nothing is fetched when it is already here."""
    if lineage.git(root, "remote", "get-url", remote) is None:
        return  # a URL, not a configured remote: there are no remote-tracking branches to fill
    for branch in dict.fromkeys((lineage.base_branch(root, remote), lineage.default_branch(root, remote))):
        if branch and not lineage.resolve(f"refs/remotes/{remote}/{branch}", root):
            lineage.git(root, "fetch", "--quiet", "--no-tags", remote,
                        f"+refs/heads/{branch}:refs/remotes/{remote}/{branch}")


def checkout_key(design: str, flow: str) -> cache.CacheKey:
    """This checkout's cache key of design/flow (kabe.build.cache_key: every input, the tools' versions)."""
    return build.cache_key(designs.get(design), flow)


def _describes_this_checkout(unit: Path, record: dict, design: str, flow: str) -> str | None:
    """None when the unit's cache_key.json is this checkout's key, else why not: an archived unit is this
    commit's build only when it was built from this checkout's inputs (a signed unit of the right name
    with another key's numbers is someone else's build)."""
    key = checkout_key(design, flow)
    try:
        material = json.loads((unit / cache.KEY_FILE).read_text())
    except (OSError, ValueError) as e:
        return f"it has no readable {cache.KEY_FILE} ({type(e).__name__}), so nothing says it was built from this checkout"
    if cache.key_of_material(material) != key.key or record.get("cache_key") != key.key:
        what = cache.difference(material, key.material) if isinstance(material, dict) else None
        return (f"its {cache.KEY_FILE} is not this checkout's key {key.key[:12]}"
                + (f" ({escape(what)})" if what else "") + ": it was built from other inputs")
    return None


def _trusted(path: Path, commit: provenance.Commit, design: str, flow: str, root: Path = ROOT,
             this_build: bool = False, facts: designs.Design | None = None) -> record_load.Checked | str:
    """This archive's record validated and re-gated (kabe.records.load, so kabe.rules.verdict.judge), or why it
    cannot be used: a unit in reports/ is built here (no signature) or pulled and signed, and a signed
    one must still verify (kabe.store.signing) — an edit since the pull makes it untrusted — and say
    the numbers its raw reports give (kabe.build.rederive), as a cache hit must. this_build: the unit is
    to stand for this commit's build, so its cache_key.json must be this checkout's key."""
    unit = path.parent
    check = signing.check_if_signed(unit, f"{commit.archive_name}/{design}/{flow}", project=signing.this_project(root))
    signed = check is not None
    if signed and not check.ok:
        return f"its signature does not verify ({check.reason})"
    checked = record_load.checked(path, where=(commit.archive_name, design, flow), design=facts)
    if isinstance(checked, record_load.Invalid):
        return checked.reason
    if this_build:
        try:
            why = _describes_this_checkout(unit, checked.record, design, flow)
        except UserError as e:
            why = f"this checkout's key cannot be computed ({e})"
        if why:
            return why
    if signed:  # from elsewhere: its numbers must be what its raw reports say, as for a cache hit
        try:
            why = rederive.disagreement(cache.Entry(unit, checked.record, {}), designs.get(design), flow)
        except UserError as e:
            why = str(e)
        if why:
            return why
    return checked


def _base_record(base: str | None, design: str, flow: str, reports_root: Path,
                 root: Path = ROOT, facts: designs.Design | None = None) -> tuple[dict | None, list[str]]:
    if base is None:
        return None, []
    path = archive_dir(provenance.Commit(base, False), design, flow, reports_root) / "metrics.json"
    if not path.exists():
        return None, []
    checked = _trusted(path, provenance.Commit(base, False), design, flow, root, facts=facts)
    if isinstance(checked, str):
        return None, [f"{design} ({flow}): the base build cannot be used ({checked}); regressions not judged"]
    return checked.record, []


def _unjudged(base: str | None, name: str, flow: str, root: Path, reports_root: Path, notes: list[str],
              console: Console) -> dict | str | None:
    """No trusted base build of a design with regression rules: the base's record built here, or why the
    design fails (a reason), or None where "not judged" is the honest answer (no base commit outside a
    change's pipeline: the first commit of a branch has nothing to be compared with)."""
    if base is None:
        if base_signers.change_pipeline(root):
            return (f"{name} ({flow}): its regression rules cannot be judged: no base commit to build or compare with "
                    f"(fetch the base branch's history); a change whose regressions are not judged does not pass")
        return None
    if not base_build.design_at(root, base, name):  # a design this change adds: nothing to compare with
        notes.append(f"{name} ({flow}): the design does not exist at base {base[:12]} (this change adds it), so its "
                     f"regression rules have nothing to be judged against")
        return None
    for note in notes:  # why the archived base was not used, before it is replaced
        _say(console, f"[yellow]kabe ci: {escape(note)}[/]")
    record, why = base_build.build_base(root, base, name, flow, reports_root, console)
    if record is not None:
        _say(console, f"kabe ci: {name} ({flow}): judged against the base {base[:12]} built here")
        return record
    return (f"{name} ({flow}): its regression rules cannot be judged: no trusted build of the base {base[:12]} "
            f"and building it here failed ({why}); a change whose regressions are not judged does not pass")


def _one(name: str, flow: str, commit: provenance.Commit, base: str | None, opts: CiOptions,
         console: Console, reports_root: Path, root: Path = ROOT) -> DesignOutcome:
    try:
        design = designs.get(name)
    except UserError as e:
        return DesignOutcome(name, flow, error=str(e))
    out = DesignOutcome(name, flow, expect_gate=design.expect_gate)
    archived = archive_dir(commit, name, flow, reports_root) / "metrics.json"
    try:
        checked = _trusted(archived, commit, name, flow, root, this_build=True, facts=design) \
            if archived.exists() and not commit.dirty and not opts.rebuild else None
        if isinstance(checked, str):
            _say(console, f"[yellow]{name}: this commit's archived build is not used ({escape(checked)}); building[/]")
        if isinstance(checked, record_load.Checked):
            # judged on reading (kabe.records.load.checked: kabe.rules.verdict.judge under this checkout's facts
            # and settings): the archived gate.passed is never what CI believes
            out.record, out.reused, out.gate_verdict = checked.record, True, checked.verdict
            _say(console, f"[bold]{name}[/]: this commit's build is already archived ({escape(str(archived.parent))}); not rebuilt")
        else:
            out.record = build.build(design, flow, console=console, reports_root=reports_root, commit=commit)
            # a build made now was judged by the build itself (kabe.build.verdict.build_verdict, the same judge
            # under the same facts and settings): its gate is that verdict, read back, not judged again
            out.gate_verdict = gate.Verdict.from_dict(out.record["gate"])
    except UserError as e:
        out.error = f"{name}: the build could not run: {e}"
        return out
    out.record = {**out.record, "gate": out.gate_verdict.as_dict()}
    summary.render(out.record, console, design.expect_gate, out.gate_verdict)
    out.base_record, notes = _base_record(base, name, flow, reports_root, root, design)
    if design.regressions and out.base_record is None:
        # nothing unjudged passes: the base commit is built here, or the design fails saying why
        why = _unjudged(base, name, flow, root, reports_root, notes, console)
        if isinstance(why, dict):
            out.base_record, notes = why, []
        elif why is not None:
            out.error = why
            return out
    out.judgement = regressions.compare(name, regressions.rules_from_mapping(design.regressions), out.record,
                                        base, out.base_record)
    if base and out.base_record is None and not notes and not design.regressions:
        notes.append(f"{name} ({flow}): no archived build at base {base[:12]}, so there is nothing to compare with")
    out.judgement.notes[:0] = notes
    out.verdict = gate.Verdict.from_dict(regressions.combined_verdict(out.record["gate"], out.judgement))
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


def in_ci() -> bool:
    """Running in a CI service: $CI (set by GitHub, GitLab and most others), or a variable of one kabe reads."""
    return lineage.unknown_ci() or os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no") \
        or any(os.environ.get(v) for v in lineage.KNOWN_CI)


def _pull(opts: CiOptions, has_remote: bool, root: Path, reports_root: Path, console: Console) -> int:
    if not opts.pull:
        return EXIT_PASS
    if not has_remote:
        _say(console, f"kabe ci: no remote {opts.remote!r}: working from the local archive only")
        return EXIT_PASS
    try:
        for line in store.pull(opts.remote, root, reports_root, bitstreams=opts.bitstreams,
                               shared=flows.shared_caches()).lines():
            _say(console, escape(line))
    except UserError as e:
        if in_ci():  # a pull that fails in CI is an error (exit 2), not a warning: the builds still run and are shown
            _say(console, f"[red]kabe ci: the archive was not pulled: {escape(str(e))}[/]")
            return EXIT_COULD_NOT_RUN
        _say(console, f"[yellow]kabe ci: the archive was not pulled: {escape(str(e))} (outside CI: a warning; "
                      f"a base it cannot find is built here)[/]")
    return EXIT_PASS


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
        report = store.push(opts.remote, root, reports_root, commits=[commit.sha], bitstreams=opts.bitstreams,
                            shared=flows.shared_caches())
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
    if not base_signers.change_pipeline(root, opts.remote):
        return _run(opts, console, root, reports_root, has_remote)
    if lineage.unknown_ci():
        _say(console, "kabe ci: CI is set but no CI kabe recognises (GitHub, GitLab): run as a pipeline for a change "
                      "(the default branch's [tool.kabe] unknown_ci = \"default-branch\" makes a run at its tip "
                      "that branch's own)")
    # every setting that decides the base and whom to trust: the default branch's, never the change's
    trusted, default_ref, lines = base_signers.default_branch_settings(root, opts.remote)
    for line in lines:
        _say(console, f"kabe ci: a pipeline for a change: {escape(line)}")
    with tempfile.TemporaryDirectory(prefix="kabe-ci-signers-") as tmp, trusted_settings.pinned(trusted):
        allowed, note = base_signers.base_allowed_signers(root, opts.remote, Path(tmp) / "allowed_signers",
                                                          trusted, default_ref)
        _say(console, f"kabe ci: a pipeline for a change: {escape(note)}")
        with signing.pinned_allowed_signers(allowed):
            return _run(opts, console, root, reports_root, has_remote)


def _run(opts: CiOptions, console: Console, root: Path, reports_root: Path, has_remote: bool) -> int:
    clock = {"start": time.monotonic()}
    tracked_outputs.check(root)  # a base build or cache entry the change itself committed is never trusted
    pulled = _pull(opts, has_remote, root, reports_root, console)
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
        outcomes.append(_one(name, flow, commit, base.commit, opts, console, reports_root, root))
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
    if pulled != EXIT_PASS:
        _say(console, "[red]kabe ci: the archive pull failed (above): exit 2 whatever the designs did[/]")
    could_not = ("pulling the archive" if pulled != EXIT_PASS
                 else "pushing the archive" if status == EXIT_COULD_NOT_RUN else None)
    return max(status, pulled, _verdict_lines(outcomes, console, could_not))
