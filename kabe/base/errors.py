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
EXIT_BROKEN_PIPE = 141  # stdout's reader went away (`kabe parse r | head`), as a tool killed by SIGPIPE


def bounded(value: object, limit: int = 80) -> str:
    """A value as an error message may show it: scalars as their repr, cut to `limit` characters;
    a list or mapping by its kind and size only, since its repr can be as large as the input (or,
    from a YAML alias, far larger). Messages built from untrusted input use this, never `!r`."""
    if isinstance(value, dict):
        return f"a mapping of {len(value)} key(s)"
    if isinstance(value, (list, tuple, set)):
        return f"a list of {len(value)} item(s)"
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
        return f"an integer of {value.bit_length()} bits"
    if value is None or isinstance(value, (bool, int, float)):
        text = repr(value)
    elif isinstance(value, str):
        text = repr(value[: limit + 1])
    else:
        text = f"a {type(value).__name__}"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def bug_message() -> str:
    """What to say under the traceback of an exception that is not a UserError."""
    return ("internal error: this is a bug in kabe, not in your design or setup; the traceback above "
            "says where (please report it with that traceback)")
