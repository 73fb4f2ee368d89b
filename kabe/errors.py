"""The one error kind a user can fix: bad input, a missing tool, a broken file.

Every verb (doit tasks, `kabe ...`) prints a UserError as one line naming the file or value and the
fix, with no traceback, and exits 2. Any other exception is a bug in kabe and keeps its traceback.
"""

from __future__ import annotations


class UserError(Exception):
    """Could not run: the message says what went wrong, where, and how to fix it."""


EXIT_PASS = 0  # everything checked passed
EXIT_GATE_FAILED = 1  # the gate failed: timing, budget, regression or verification
EXIT_COULD_NOT_RUN = 2  # a missing tool, bad input, a wrong report kind
EXIT_INTERRUPTED = 130  # Ctrl-C


def bug_message() -> str:
    """What to say under the traceback of an exception that is not a UserError."""
    return ("internal error: this is a bug in kabe, not in your design or setup; the traceback above "
            "says where (please report it with that traceback)")
