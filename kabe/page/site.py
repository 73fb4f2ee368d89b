"""`kabe report --site DIR`: the report page as a static site to publish (GitHub Pages, GitLab Pages).

The site is index.html (kabe.page.report, built from the archive under reports/: after `kabe
archive pull`, the shared one) and the files the page links to (each build's raw reports, each
simulation's result.json), at the same relative paths, so every link of the published page resolves
and nothing else under reports/ is published (no cache, no bitstream the page does not name, no stray
file). The site is on the project's own origin, so what it serves must not run there: only trusted
units' files (never one under reports/.unverified/: those units appear by name, without links) and
only the kinds kabe writes that a browser shows as text or an image (reports, logs, JSON, plots;
_PUBLISHED), never an .html or .svg an archive unit carries. A link to a file not published is
taken out of the site's page (its name stays, as text). A link that leaves reports/, passes through a
symlink or names no file is refused, never copied. The folder is filled beside DIR and renamed into place, so a
publishing job never uploads a half-written site; an existing DIR is replaced only when kabe wrote it.
"""

from __future__ import annotations

import html
import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

from kabe.base.errors import UserError
from kabe.base.paths import CORES, REPORTS, ROOT
from kabe.store import safe_fs, store
from kabe.page.report import build_report

MARKER = ".kabe-site"  # in every site kabe writes: the only kind of folder --site replaces
# What kabe writes into a unit and a browser shows as text or as an image: reports, logs, JSON, plots,
# and the scripts and constraints kabe ran. Not .html/.svg/.xml (they run scripts on the site's origin).
_PUBLISHED = frozenset({".rpt", ".txt", ".log", ".json", ".png", ".ys", ".tcl", ".xdc", ".v", ".md", ".csv"})
_ANCHOR = re.compile(r'<a\b[^>]*?\bhref="([^"]*)"[^>]*>(.*?)</a>', re.S)


class SiteError(UserError):
    """The site could not be written (a folder in the way, a link the page must not publish)."""


@dataclass(frozen=True)
class Site:
    folder: Path
    files: tuple[str, ...]  # relative paths, index.html first

    def line(self) -> str:
        return (f"site: {self.folder} (index.html and the {len(self.files) - 1} raw file(s) it links to; "
                f"publish the folder as it is)")


class _Links(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.links: list[str] = []

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name in ("href", "src") and value:
                self.links.append(value)


def local_links(page: str) -> list[str]:
    """The page's links to files beside it: not data: URIs, not anchors, not other sites."""
    parser = _Links()
    parser.feed(page)
    out = []
    for link in parser.links:
        parts = urlsplit(link)
        if parts.scheme or parts.netloc or not parts.path:  # data:, https://, #anchor
            continue
        out.append(unquote(parts.path))
    return list(dict.fromkeys(out))


def _source(reports_root: Path, link: str) -> Path:
    """The file under reports/ a link names, refused when it would leave reports/ or follow a link."""
    if link.startswith("/") or ".." in Path(link).parts:
        raise SiteError(f"the page links {link!r}, which is not a path inside {reports_root}; not published")
    src = safe_fs.confined(reports_root / link, reports_root)  # raises on a symlink on the way
    if not src.is_file():
        raise SiteError(f"the page links {link!r}, but {src} is not a file; not published (rebuild the page)")
    return src


def published(link: str) -> bool:
    """Whether the site may serve the file a page link names: a trusted unit's (nothing under
    reports/.unverified/, nor any other dot folder), of a kind kabe writes that does not run in a browser."""
    parts = Path(link).parts
    return (bool(parts) and not any(part.startswith(".") for part in parts[:-1]) and parts[0] != store.UNVERIFIED
            and Path(link).suffix.lower() in _PUBLISHED)


def _unlink_unpublished(page: str) -> str:
    """The page with each link to a file the site does not publish made plain text (its name stays)."""
    def keep_or_unlink(m: re.Match) -> str:
        link = html.unescape(m.group(1))
        parts = urlsplit(link)
        if parts.scheme or parts.netloc or not parts.path or published(unquote(parts.path)):
            return m.group(0)
        return f'<span class="unpublished" title="not published on this site">{m.group(2)}</span>'

    return _ANCHOR.sub(keep_or_unlink, page)


def _replace(folder: Path, tmp: Path) -> None:
    if os.path.lexists(folder):
        if os.path.islink(folder) or not folder.is_dir() or not (folder / MARKER).is_file():
            raise SiteError(f"{folder} exists and is not a site kabe wrote (no {MARKER} in it); "
                            f"remove it or choose another --site folder")
        old = folder.parent / f".{folder.name}.old-{os.getpid()}"
        os.rename(folder, old)
        os.rename(tmp, folder)
        shutil.rmtree(old)
    else:
        os.rename(tmp, folder)


def build_site(folder: Path, reports_root: Path = REPORTS, root: Path = ROOT, cores_root: Path = CORES,
               sections=None) -> Site:
    """Build the page from reports_root and write the site to folder (replacing a site kabe wrote)."""
    folder = Path(os.path.abspath(folder))
    reports_root = Path(os.path.abspath(reports_root))
    if folder == reports_root or folder.is_relative_to(reports_root) or reports_root.is_relative_to(folder):
        raise SiteError(f"--site {folder} must lie outside {reports_root} (the site is copied out of it)")
    index = build_report(reports_root, root, cores_root, sections=sections)
    page = _unlink_unpublished(index.read_text())
    sources = {link: _source(reports_root, link) for link in local_links(page)}
    leaks = [link for link in sources if not published(link)]  # a link the regex missed: refuse, never publish
    if leaks:
        raise SiteError(f"the page links {leaks[0]!r}, which the site does not publish (a bug in kabe's page)")
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.tmp-", dir=folder.parent))
    try:
        (tmp / "index.html").write_text(page)
        for link, src in sources.items():
            target = safe_fs.confined(tmp / link, tmp)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, target)
        (tmp / MARKER).write_text("written by `kabe report --site`; replaced whole on each run\n")
        safe_fs.apply_umask(tmp, directory=True)
        _replace(folder, tmp)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return Site(folder, ("index.html", *sources))
