"""This project's study: the bandwidth wall, the token budget, the V80 what-if, and their plots. Board
facts come from kabe's board profiles (kabe.boards), outside figures from llm_accel.figures; nothing
here runs a build. The report page shows them through llm_accel/page.py ([tool.kabe] page_sections).
"""
