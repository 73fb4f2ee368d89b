"""`kabe diff [A] [B]`: what one commit changed in every design's metrics, as a Markdown table
ready for a pull-request comment. A and B are git refs (HEAD~1, a branch, a tag, a sha). B defaults
to HEAD's build; A, per design, to the nearest ancestor of B with a clean archive, and the table
says which. A dirty build (uncommitted changes) is compared only when asked for: `<ref>-dirty`,
or `--dirty` for the working tree's build as B.

A unit `kabe archive pull` kept apart (reports/.unverified: unsigned, badly signed, ...) is never the
default of either side. It is shown only for a commit named on the command line (or HEAD as B) that
has no trusted build of that design and flow, and then every one of its cells says "(unverified)"
and its gate row "(unverified: <reason>)"; the lines under the table name each one with its reason."""

from __future__ import annotations

from pathlib import Path

from kabe.base import rtl_path
from kabe.base.errors import UserError
from kabe.base.paths import CORES, REPORTS, ROOT
from kabe.records import hls_rows, history, verdict_kind
from kabe.base import git
from kabe.records.numbers import delta as _delta, value as _fmt
from kabe.records.load import Invalid

_MAX_LISTED_INVALID = 20


def _ago(n: int) -> str:
    return "the working tree's base commit" if n == 0 else f"{n} commit{'s' if n > 1 else ''} before"


def _short(archive_name: str) -> str:
    """sha or sha-dirty, shortened; a dirty build is never shown as its clean commit."""
    return archive_name[:12] + ("-dirty" if archive_name.endswith("-dirty") else "")


class DiffError(UserError, ValueError):
    """Nothing to compare: no archives, or none for the commit asked for."""


def _md(text: str, limit: int = 200) -> str:
    """Text from disk (folder names, reasons) made safe for one Markdown table-free line."""
    text = "".join(c if c.isprintable() else "?" for c in text).replace("`", "'").replace("|", "\\|")
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _invalid_lines(invalid: list[Invalid], commits: set[str], reports_root: Path) -> list[str]:
    """The records of the compared commits that failed validation (never silently left out), and a
    count of the others."""
    shown = [i for i in invalid if not commits or i.path.relative_to(reports_root).parts[0] in commits]
    others = len(invalid) - len(shown)
    if not shown and not others:
        return []
    lines = ["", "Archived records that failed validation (not compared; the verdict of a record kabe cannot "
                 "check is never shown):"]
    lines += [f"- `{_md(str(i.path.relative_to(reports_root)))}`: {_md(i.reason, 300)}"
              for i in shown[:_MAX_LISTED_INVALID]]
    if len(shown) > _MAX_LISTED_INVALID:
        lines.append(f"- ... and {len(shown) - _MAX_LISTED_INVALID} more")
    if others:
        lines.append(f"- {others} record(s) of other commits failed validation too (`doit report` lists them)")
    return lines


def _pass_word(entry, expected: str = "pass") -> str:
    """The page's word for the recomputed verdict (kabe.records.verdict_kind): a pass with no simulation verdict
    behind it says why; a gate with no timing number (kabe.rules.gate: not estimated) is neither; a negative
    example's failing gate (design.yaml expect_gate: fail) is "FAIL (expected)", as pytest says xfail, and its
    passing gate a FAIL (the gate no longer catches its known problem)."""
    k = verdict_kind.kind(entry, expected)  # the page's kind of the recomputed verdict, asked of the Verdict
    if k == verdict_kind.UNVERIFIED:
        return f"pass (unverified: {_md(entry.verdict.unverified, 120)})"
    return verdict_kind.WORDS[k]


def _unverified_lines(shown: list[history.Unverified]) -> list[str]:
    """Every unverified unit the table shows, with why it is not trusted."""
    if not shown:
        return []
    lines = ["", "Unverified builds in this table (kept apart in reports/.unverified by `kabe archive pull`; "
                 "shown only where the commit has no trusted build; never a cache entry, a base or deployable):"]
    lines += [f"- `{_md(u.unit)}`: unverified: {_md(u.reason, 300)}" for u in shown[:_MAX_LISTED_INVALID]]
    if len(shown) > _MAX_LISTED_INVALID:
        lines.append(f"- ... and {len(shown) - _MAX_LISTED_INVALID} more")
    return lines


def _side(entries: list[history.Entry], unverified: list[history.Unverified], commit: str
          ) -> tuple[dict[tuple[str, str], history.Entry], dict[tuple[str, str], history.Unverified]]:
    """(trusted builds of commit by (design, flow), unverified ones of the keys it has no trusted build of)."""
    trusted = {(e.design, e.flow): e for e in entries if e.commit == commit}
    apart = {(u.entry.design, u.entry.flow): u for u in unverified
             if u.entry.commit == commit and (u.entry.design, u.entry.flow) not in trusted}
    return trusted, apart


def _cell(text: str, untrusted: bool) -> str:
    return f"{text} (unverified)" if untrusted and text != "-" else text


def _path_lines(key: tuple[str, str], new, old, untrusted: bool) -> list[str]:
    """One line per design and flow: its critical path in RTL terms (kabe.base.rtl_path), and the one
    before when it was another."""
    now = rtl_path.line(new.record["timing"].get("critical_path"))
    was = rtl_path.line(old.record["timing"].get("critical_path")) if old else None
    if now is None and was is None:
        return []
    line = f"- {key[0]} {key[1]}{' (unverified)' if untrusted else ''}: {_md(now or 'none', 400)}"
    if was is not None and was != now:
        line += f"; before: {_md(was, 400)}"
    return [line]


def pick(ref: str, archived: set[str], root: Path = ROOT, reports_root: Path = REPORTS) -> str:
    """The archive name (sha or sha-dirty) for a ref as typed: HEAD~1, a branch, a tag, a sha.
    A dirty build is only ever picked when asked for by name: `<ref>-dirty`."""
    want_dirty = ref.endswith("-dirty")
    base = ref.removesuffix("-dirty")
    sha = git.try_resolve(base, root)
    if sha is None:  # an archive of a commit this clone does not have (copied from elsewhere)
        found = sorted(n for n in archived if n.removesuffix("-dirty").startswith(base.lower()) and
                       n.endswith("-dirty") == want_dirty) if len(base) >= 4 else []
        if len(found) > 1:
            raise DiffError(f"{ref!r} is ambiguous: {', '.join(_short(n) for n in found)}; give more of the sha")
        if not found:
            git.resolve(base, root)  # raises RefError naming the ref
        return found[0]
    name = sha + ("-dirty" if want_dirty else "")
    if name not in archived:
        hint = (f"; only a dirty build exists: ask for it as {sha[:12]}-dirty"
                if not want_dirty and f"{sha}-dirty" in archived else "")
        raise DiffError(f"no archived builds for {ref} ({_short(name)}) under {reports_root}{hint}; build that "
                        f"commit first (`doit build`) or name one that was built")
    return name


def _default_b(archived: set[str], root: Path, dirty: bool, untrusted: set[str] = frozenset()) -> tuple[str, str]:
    """(archive, how it was chosen): HEAD's clean build, else the nearest built ancestor of HEAD. HEAD's
    unverified build is taken (labelled) only when HEAD has no trusted build at all."""
    head = git.head(root)
    if head is None:
        raise DiffError(f"{root} is not a git checkout with commits; name both builds: kabe diff <A> <B>")
    if dirty:
        if f"{head}-dirty" not in archived:
            raise DiffError(f"no build of the working tree ({head[:12]}-dirty) under reports/; run `doit build` "
                            f"with your changes first")
        return f"{head}-dirty", "the working tree's build (HEAD with uncommitted changes)"
    if head in archived:
        return head, "HEAD"
    if head in untrusted:
        return head, "HEAD, which has only unverified builds"
    for n, sha in enumerate(git.ancestors(head, root), start=1):
        if sha in archived:
            return sha, f"the nearest built commit, {n} before HEAD (HEAD itself has no clean archive)"
    raise DiffError(f"no clean archive for HEAD ({head[:12]}) or any commit before it; run `doit build` first"
                    + (" (only dirty builds exist: name one as <sha>-dirty)" if archived else ""))


def render(a: str | None, b: str | None, reports_root: Path = REPORTS, root: Path = ROOT,
           cores_root: Path = CORES, *, dirty: bool = False) -> str:
    """B defaults to HEAD's clean build (dirty=True: the working tree's build). A defaults, per design
    and flow, to the nearest ancestor of B with a clean archive of it, and the table says which.
    Every record is validated and its verdict recomputed (kabe.records.load); the invalid ones are listed.
    Raises DiffError / git.RefError (UserErrors) when there is nothing to compare."""
    scanned = history.scan(reports_root, root, cores_root)
    entries = scanned.entries
    expected = history.expected_gates({e.design for e in entries}, cores_root)
    unverified = [u for u in history.scan_unverified(reports_root, root, cores_root) if u.entry is not None]
    archived, untrusted = {e.commit for e in entries}, {u.entry.commit for u in unverified}
    if not archived and not untrusted:
        raise DiffError("\n".join([f"no valid archived builds under {reports_root} yet; run `doit build` first",
                                    *_invalid_lines(scanned.invalid, set(), Path(reports_root))]))
    if b is None:
        b, b_how = _default_b(archived, root, dirty, untrusted)
    else:
        b_how = b
        b = pick(b, archived | untrusted, root, reports_root)
    after, after_apart = _side(entries, unverified, b)
    before: dict[tuple[str, str], history.Entry] = {}
    before_apart: dict[tuple[str, str], history.Unverified] = {}
    distance: dict[tuple[str, str], int] = {}
    if a is not None:
        a = pick(a, archived | untrusted, root, reports_root)
        before, before_apart = _side(entries, unverified, a)
        title = _short(a)
    else:
        by_commit: dict[str, dict] = {}
        for e in entries:
            if not e.commit.endswith("-dirty"):  # never compared with a dirty build unless named
                by_commit.setdefault(e.commit, {})[(e.design, e.flow)] = e
        try:
            older = git.ancestors(b.removesuffix("-dirty"), root)
        except git.RefError:
            raise DiffError(f"{_short(b)} is not in this clone's history, so its ancestors are unknown; "
                            f"name the build to compare with: kabe diff <A> {_short(b)}") from None
        if b.endswith("-dirty"):  # the working tree's base commit is its nearest clean ancestor
            older.insert(0, b.removesuffix("-dirty"))
        for key in [*after, *after_apart]:  # the base is only ever a trusted build
            for n, sha in enumerate(older, start=0 if b.endswith("-dirty") else 1):
                if key in by_commit.get(sha, {}):
                    before[key], distance[key] = by_commit[sha][key], n
                    break
        title = "the nearest ancestor with a clean archive"
    lines = [f"### kabe: {_short(b)} vs {title}", "", f"After: {_short(b)} ({b_how}).", ""]
    lines += ["| design | flow | metric | before | after | delta | |", "|---|---|---|---|---|---|---|"]
    paths: list[str] = []
    for key in sorted({*after, *after_apart}):
        new_apart, old_apart = key not in after, key not in before and key in before_apart
        new = after[key] if not new_apart else after_apart[key].entry
        old = before.get(key) or (before_apart[key].entry if old_apart else None)
        failed_budgets = {c["name"].split(".", 1)[1] for c in new.verdict.checks  # recomputed, not recorded
                          if not c["passed"] and c["name"].startswith("budget.")}
        for metric, label in history.METRICS:
            nv, ov = new.value(metric), old.value(metric) if old else None
            flag = ""
            if metric in failed_budgets:
                flag = "**budget breached**"
            elif metric == "wns_ns" and nv is not None and nv < 0:
                flag = "**timing fails**"
            if metric == "wns_ns" and new.record["timing"].get("estimated"):
                label = "WNS ns (estimate)"
            cells = [key[0], key[1], label, _cell(_fmt(ov, metric), old_apart), _cell(_fmt(nv, metric), new_apart),
                     _delta(ov, nv, metric), flag]
            lines.append("| " + " | ".join(cells) + " |")
        for label, ov, nv, d in hls_rows.rows(new.record, old.record if old else None):  # an HLS build's own numbers
            lines.append("| " + " | ".join([key[0], key[1], label, _cell(ov, old_apart), _cell(nv, new_apart), d, ""]) + " |")
        verdict = _pass_word(new, expected.get(key[0], "pass"))
        was = _pass_word(old, expected.get(key[0], "pass")) if old else "-"
        if old_apart:
            was += f" (unverified: {_md(before_apart[key].reason, 120)})"
        if new_apart:
            verdict += f" (unverified: {_md(after_apart[key].reason, 120)})"
        lines.append(f"| {key[0]} | {key[1]} | gate | {was} | {verdict} |  | "
                     f"{'**gate fails**' if verdict.startswith('FAIL') and 'expected' not in verdict else ''} |")
        paths += _path_lines(key, new, old, new_apart)
    if paths:
        lines += ["", "Critical paths (RTL names and source lines; the raw netlist names are in each build's "
                      "timing report):", *paths]
    if a is None:
        lines.append("")
        if before:
            lines.append("Compared with the nearest ancestor that has a clean archive of each design: " + "; ".join(
                f"{k[0]} {k[1]} {_short(e.commit)} ({_ago(distance[k])})" for k, e in sorted(before.items())))
        unbuilt = sorted({*after, *after_apart} - set(before))
        if unbuilt:
            lines.append("No clean archive on any ancestor: " + ", ".join(f"{d} {f}" for d, f in unbuilt))
    compared = {b} | ({a} if a else set()) | {e.commit for e in before.values()}
    lines += _unverified_lines([*after_apart.values(), *(u for k, u in sorted(before_apart.items()) if k in after or k in after_apart)])
    lines += _invalid_lines(scanned.invalid, compared, Path(reports_root))
    return "\n".join(lines) + "\n"
