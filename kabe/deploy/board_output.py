"""What a board sends back, read and shown safely: it can send anything, of any size.

A remote command's stdout and stderr are read as bytes, each bounded: only the last KEEP_BYTES are
kept (the runner's verdict is its last line), so a board that prints 600 MB costs this process a few
MB, not 1.8 GB. The bytes are decoded as UTF-8 with replacement, so a stray \\xff is a U+FFFD, never a
UnicodeDecodeError. Every string that came from the board is shown through one escaping, on every
path (the console, a CI log, an error line, the archived record): `shown` for one line, `log_text`
for a log kept in the archive. Both turn each character that is not printable (ESC, CR, BEL, the
C1 controls, bidirectional overrides) into its Python escape (`\\x1b`), so a board cannot draw a fake
green PASS, clear or reset the terminal, or hide text. Backslashes are left alone, so escaping twice
changes nothing.
"""

from __future__ import annotations

import subprocess
import threading
from dataclasses import dataclass

KEEP_BYTES = 4 << 20  # per stream: the last 4 MB (a runner's whole honest output is a few kB)
_CHUNK = 64 << 10
SHOWN_CHARS = 400  # one line of a message


@dataclass
class _Tail:
    """The last `keep` bytes of a stream, and how many came before them."""

    keep: int
    data: bytearray
    dropped: int = 0

    def add(self, chunk: bytes) -> None:
        self.data += chunk
        if len(self.data) > 2 * self.keep:  # trim in bulk: amortised O(1) per byte
            cut = len(self.data) - self.keep
            del self.data[:cut]
            self.dropped += cut

    def text(self) -> str:
        if len(self.data) > self.keep:
            cut = len(self.data) - self.keep
            del self.data[:cut]
            self.dropped += cut
        body = bytes(self.data).decode("utf-8", errors="replace")
        if self.dropped:
            return f"[kabe: the first {self.dropped:,} bytes were not kept; the last {len(self.data):,} follow]\n{body}"
        return body


def _drain(stream, tail: _Tail) -> None:
    with stream:
        while chunk := stream.read(_CHUNK):
            tail.add(chunk)


def run(cmd: list[str], timeout_s: float, keep: int = KEEP_BYTES) -> subprocess.CompletedProcess:
    """Run cmd (stdin closed); its stdout and stderr as text, each its last `keep` bytes, decoded with
    replacement. Raises subprocess.TimeoutExpired (the process killed) past timeout_s. The result has
    `dropped`: (stdout bytes, stderr bytes) not kept."""
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    tails = (_Tail(keep, bytearray()), _Tail(keep, bytearray()))
    readers = [threading.Thread(target=_drain, args=(s, t), daemon=True) for s, t in zip((proc.stdout, proc.stderr), tails)]
    for r in readers:
        r.start()
    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        for r in readers:
            r.join(timeout=5)
        raise
    for r in readers:
        r.join()
    done = subprocess.CompletedProcess(cmd, proc.returncode, tails[0].text(), tails[1].text())
    done.dropped = (tails[0].dropped, tails[1].dropped)
    return done


def _escape_char(c: str) -> str:
    return repr(c)[1:-1] if c not in ("'", '"') else c


def _escaped(text: str, keep: str = "") -> str:
    return "".join(c if c.isprintable() or c in keep else _escape_char(c) for c in text)


def shown(text: object, limit: int = SHOWN_CHARS) -> str:
    """A board-sent string for one line of output: every non-printable character (newlines too)
    escaped, cut to `limit` characters."""
    out = _escaped(str(text))
    return out if len(out) <= limit else out[:limit] + "..."


def last_line(text: str, limit: int = SHOWN_CHARS) -> str:
    """The last non-empty line of a board's output, shown (or '' when there is none)."""
    lines = [ln for ln in (text or "").splitlines() if ln.strip()]
    return shown(lines[-1], limit) if lines else ""


def log_text(text: str) -> str:
    """A board's output for a log file in the archive: line breaks and tabs kept, every other
    non-printable character escaped (a `cat` of the archived log cannot drive the terminal)."""
    return _escaped(text, keep="\n\t")
