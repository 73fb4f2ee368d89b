"""One module per report kind. Each parser returns plain dicts in the shape of metrics.schema.json's
`timing` / `utilization` objects and raises ReportError when a report is missing, empty, truncated
or unparsable: a report kabe cannot read must fail the gate, never pass it."""

from kabe.base.errors import UserError


class ReportError(UserError, ValueError):
    """A tool report that cannot be trusted; the message names the file and what is wrong."""
