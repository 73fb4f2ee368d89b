"""Records and history: the metrics schema, the per-commit archive, history, diff and the report page.

Everything here reads or writes records (metrics.json, manifest.json, result.json); nothing here
runs a tool or knows a flow.
"""
