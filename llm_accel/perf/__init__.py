"""The document's performance arithmetic: the bandwidth wall, the token budget, the V80 what-if,
and their plots. Pure numbers from the board profile (kabe.boards); nothing here runs a build.
"""
