"""What a Xilinx .bit file says about itself: its header (design, part, UserID) and the commit word
kabe stores in USR_ACCESS / USERID (Hog's rule: a bitstream found on a board names its commit).

Self-contained (standard library only): it is copied to the board beside board_runner.py, and
the Vivado flow uses the same functions to write and check the word.
"""

from __future__ import annotations

import re

DIRTY_BIT = 0x8000_0000  # bit 31: the tree had uncommitted changes (or no git at all)
_SYNC = bytes.fromhex("aa995566")
_AXSS_WRITE = bytes.fromhex("3001a001")  # type-1 packet: write 1 word to the USR_ACCESS (AXSS) register


def commit_word(sha: str, dirty: bool) -> int:
    """32-bit word: bits 27..0 = the commit's first 7 hex digits, bit 31 = dirty.
    Outside git (sha "nogit") the digits are all F and the dirty bit is set."""
    digits = sha[:7] if re.fullmatch(r"[0-9a-f]{40}", sha) else "fffffff"
    return int(digits, 16) | (DIRTY_BIT if dirty or digits == "fffffff" else 0)


def describe_word(word: int) -> str:
    return f"{word & 0x0FFF_FFFF:07x}{'-dirty' if word & DIRTY_BIT else ''}"


def read_usr_access(data: bytes) -> int | None:
    """The USR_ACCESS word in a bitstream (the AXSS register write after the sync word), or None."""
    start = data.find(_SYNC)
    at = data.find(_AXSS_WRITE, max(start, 0))
    if start < 0 or at < 0 or at + 8 > len(data):
        return None
    return int.from_bytes(data[at + 4:at + 8], "big")


def parse_header(data: bytes) -> dict[str, str]:
    """The .bit header fields: design, part, date, time, and the design field's key=value items
    (UserID, Version). Raises ValueError when the bytes are not a .bit header."""
    try:
        n = int.from_bytes(data[0:2], "big")
        pos = 2 + n + 2  # the 9-byte magic, then the 0x0001 field
        fields: dict[str, str] = {}
        while pos < len(data) and len(fields) < 4:
            key = chr(data[pos])
            if key not in "abcd":
                break
            length = int.from_bytes(data[pos + 1:pos + 3], "big")
            fields[key] = data[pos + 3:pos + 3 + length].rstrip(b"\0").decode("ascii")
            pos += 3 + length
    except (IndexError, UnicodeDecodeError) as e:
        raise ValueError(f"not a Xilinx .bit header ({e})") from None
    if "a" not in fields or "b" not in fields:
        raise ValueError("not a Xilinx .bit header (no design/part fields)")
    design, *items = fields["a"].split(";")
    out = {"design": design, "part": fields["b"], "date": fields.get("c", ""), "time": fields.get("d", "")}
    for item in items:
        k, _, v = item.partition("=")
        out[k.strip()] = v.strip()
    return out


def header_bytes(design: str, part: str, userid: int, version: str, date: str, time: str, body_len: int) -> bytes:
    """The header Vivado's write_bitstream puts before the configuration data (used by test stand-ins)."""
    def field(key: str, text: str) -> bytes:
        raw = text.encode("ascii") + b"\0"
        return key.encode() + len(raw).to_bytes(2, "big") + raw

    magic = bytes.fromhex("0ff00ff00ff00ff000")
    return (len(magic).to_bytes(2, "big") + magic + (1).to_bytes(2, "big")
            + field("a", f"{design};UserID=0X{userid:08X};Version={version}") + field("b", part)
            + field("c", date) + field("d", time) + b"e" + body_len.to_bytes(4, "big"))
