"""This project's study on kabe's report page: the bandwidth wall, the token budget and the V80
what-if, named in pyproject.toml's `[tool.kabe] page_sections` (kabe.page.page_hooks calls them)."""

from __future__ import annotations

from kabe import boards


def wall(page) -> str:
    from llm_accel.perf import plots, wall as wl

    png = plots.plot_wall(page.work / "wall.png")
    return (f"<h2>The bandwidth wall (Figure 1)</h2>{page.figure(png, 'bandwidth wall per stage')}\n"
            f"{page.table(wl.render_markdown(wl.figure1()))}")


def token_budget(page) -> str:
    from llm_accel.perf import plots, token_budget as tb

    png = plots.plot_token_budget(page.work / "token_budget.png")
    return (f"<h2>Token budget, SmolLM2-135M (Figure 6)</h2>{page.figure(png, 'token budget per context')}\n"
            f"{page.table(tb.render_markdown())}")


def _v80_engine(page) -> str:
    """The what-if fed by the newest archived V80 build with a simulation; none yet: say what would fill it."""
    from llm_accel.perf import v80_engine

    built = [r for r in page.records if r.get("part") == boards.get("v80").part and isinstance(r.get("sim"), dict)]
    if not built:
        return ("<p class=\"note\">No V80 design is archived with a simulation yet: `doit build:v80_ternary` "
                "puts its measured channels, beats/clk and clock here.</p>")
    newest = max(built, key=lambda r: str(r.get("finished") or ""))
    try:
        facts = v80_engine.facts_from_record(newest)
    except v80_engine.EngineRecordError as e:
        import html
        return f"<p class=\"note\">{html.escape(str(e))}</p>"
    return "<h3>Fed through the engine kabe built</h3>" + page.table(v80_engine.render_markdown(facts))


def v80(page) -> str:
    from llm_accel.perf import whatif_v80

    return (f"<h2>Alveo V80 what-if (the forum post's arithmetic)</h2>"
            f"{page.table(whatif_v80.render_markdown())}{_v80_engine(page)}")
