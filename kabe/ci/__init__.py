"""`kabe ci`: the one command a CI job runs (kabe.ci.run); the Markdown it writes for a pull
request (kabe.ci.markdown); one design's result and its JUnit form (kabe.ci.design_result)."""

from .run import CiOptions, run

__all__ = ["CiOptions", "run"]
