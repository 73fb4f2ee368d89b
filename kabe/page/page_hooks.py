"""The report page's sections a project adds: `[tool.kabe] page_sections` names callables
"package.module:function", imported from the project's root like a golden model, each called with
one PageContext and returning an HTML fragment (or "" to show nothing).

    def my_section(page):
        png = my_plot(page.work / "mine.png")
        return "<h2>Mine</h2>" + page.figure(png, "what it shows") + page.table(markdown_table)

page.records are the archived builds' records, already validated and re-gated by kabe.records.history;
the project's code is its own (the page is its own page), but nothing it returns reaches a verdict.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from kabe.base import project_callable
from kabe.base.errors import UserError



class PageSectionError(UserError, RuntimeError):
    """A page section named in [tool.kabe] page_sections cannot be imported or fails."""


@dataclass
class PageContext:
    work: Path  # a private temp folder for the section's figures
    records: list[dict[str, Any]]  # every archived build's metrics record (validated)
    figure: Callable[[Path, str], str]  # an image file -> inline <img>; the file is also published in reports/site/
    table: Callable[[str], str]  # a Markdown pipe table -> <table>
    files: dict = field(default_factory=dict)


def load(spec: str, root: Path) -> Callable[[PageContext], str]:
    return project_callable.load(spec, root, f"{root / 'pyproject.toml'}: [tool.kabe] page_sections {spec!r}",
                                 PageSectionError, "(page) -> str` (an HTML fragment)")


def render(specs, root: Path, page: PageContext) -> str:
    out = []
    for spec in specs:
        try:
            fragment = load(spec, root)(page)
        except PageSectionError:
            raise
        except Exception as e:  # noqa: BLE001 - the project's section: one line naming it
            raise PageSectionError(f"page section {spec} raised {type(e).__name__}: {str(e)[:300]}") from None
        if not isinstance(fragment, str):
            raise PageSectionError(f"page section {spec} returned {type(fragment).__name__}, not an HTML string")
        if fragment:
            out.append(fragment)
    return "\n".join(out)
