"""The RTL names and source lines of a critical path's registers, read from the Yosys JSON netlist.

Yosys names the cells it maps after the pass that made them (`$auto$ff.cc:337:slice$2384`,
`$abc$59365$lut$...`), which tells a person nothing. What it keeps for them:

* `netnames`: the RTL's wires and regs, flattened (`port0_inst.naive.lane[7].p_reg`), each with
  the `src` of its declaration; Yosys's own wires are `hide_name` (names starting with `$`);
* a `src` attribute on cells and nets: "file.v:137.9-139.12", several joined by '|' when cells were
  merged or techmapped; Yosys's techmap library (`/share/xilinx/ff_map.v:68.41-68.95`, or
  `.../share/yosys/...` for a native Yosys) is no RTL line and is skipped.

Yosys 0.70 counts two lines too many for every `resetall before a line (measured, not read from its
source: tests/timing/test_rtl_names.py runs it; likely the text its preprocessor has emitted for the
directive since YosysHQ/yosys pull request 6123, `default_nettype wire): a file that opens with
`resetall, as every kabe RTL file does, is placed two lines late. When the source file can be read
(its `src` path is relative to the folder Yosys ran in, the netlist's), the line is moved back by
what the file's `resetall lines before it added, unless the file itself says Yosys counted right
(SourceLines.check: the nets' names sit on Yosys's own line numbers).

A register is named by the RTL net its output drives (Q for a flip-flop) and placed at that net's
declaration; when the declaration lies in another file than the register's own `src` (its always
block), Yosys kept only another module's name for the net, and the always block is the place. When
that block assigns another register than the kept name says, and the source leaves one answer, a
note names it (`_renamed`): the kept name is never replaced by a reading of the source. A cell with
no such net (a block RAM, a DSP, a LUTRAM) is named by its own name when Yosys kept it visible. A
flip-flop Yosys made itself (memory_libmap splitting a memory's read-address register back out,
with the enable folded into D) drives only Yosys's nets: when its D is a LUT that holds the value of
one RTL register whenever that register's enable is low, with the same clock and reset, it is named
as that register's copy (the LUT's INIT is checked, not guessed from names); otherwise it stays
unnamed (its Yosys name is still in the report).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

# Yosys's techmap library: the WebAssembly build's /share/..., a native install's .../share/yosys/...
_LIBRARY = re.compile(r"^/share/|/share/yosys/|^techlibs/")
_FLATTEN = "$flatten\\"


@dataclass(frozen=True)
class RtlName:
    name: str | None  # port0_inst.naive.lane[7].p_reg[15]; None: no RTL net or visible name
    source: str | None  # kabe_int8_engine.v:133 (basename:line); None: only Yosys's library lines
    note: str | None = None  # how the name was found when it is not the cell's own net

    def as_dict(self) -> dict:
        out = {"name": self.name, "source": self.source}
        if self.note:
            out["note"] = self.note
        return out


COPY_NOTE = "a copy Yosys made of this register (its enable folded into D)"


class SourceLines:
    """Yosys's line numbers -> the file's own, per source file (the `resetall miscount above), and the
    file's lines. `root`: the folder Yosys ran in; None, or a file it cannot read: the line as Yosys
    gives it, and no text."""

    def __init__(self, root: Path | None = None):
        self.root = root
        self._files: dict[str, tuple[dict[int, int], list[str]] | None] = {}
        self._as_written: set[str] = set()  # files whose lines Yosys counted right (see check)

    def check(self, netnames: dict, per_file: int = 20) -> None:
        """Whether each file's `src` lines really are shifted, asked of the file itself: a net's
        declaration (`src` "f.v:135.27-135.32") spells the net's name at those columns of the line
        it stands for. A file whose names sit on Yosys's own line numbers (a Yosys that counts
        `resetall right) keeps them; one whose names sit on the shifted lines, or with no evidence
        either way, is corrected."""
        votes: dict[str, list[int]] = {}
        for name, info in netnames.items():
            src = (info.get("attributes") or {}).get("src")
            m = re.fullmatch(r"(.+):(\d+)\.(\d+)-(\d+)\.(\d+)", src.split("|")[0].strip()) \
                if isinstance(src, str) and not info.get("hide_name") else None
            if m is None or m.group(2) != m.group(4) or _LIBRARY.search(m.group(1)):
                continue
            path, line, c0, c1 = m.group(1), int(m.group(2)), int(m.group(3)), int(m.group(5))
            f = self._file(path)
            v = votes.setdefault(path, [0, 0, 0])
            if f is None or v[2] >= per_file or f[0].get(line, line) == line:
                continue
            leaf = plain(name).rsplit(".", 1)[-1]
            text = f[1]
            at = lambda n: text[n - 1][c0 - 1:c1 - 1] if 1 <= n <= len(text) else None  # noqa: E731
            v[0] += at(f[0][line]) == leaf
            v[1] += at(line) == leaf
            v[2] += 1
        self._as_written |= {path for path, (shifted, raw, _) in votes.items() if raw > shifted}

    def _file(self, path: str) -> tuple[dict[int, int], list[str]] | None:
        if path not in self._files:
            self._files[path] = self._read(path)
        return self._files[path]

    def real(self, path: str, line: int) -> int:
        f = self._file(path)
        return f[0].get(line, line) if f and path not in self._as_written else line

    def text(self, path: str, first: int, last: int) -> list[str]:
        """The file's own lines first..last (1-based, inclusive); [] without the file."""
        f = self._file(path)
        return f[1][max(0, first - 1):last] if f else []

    def _read(self, path: str) -> tuple[dict[int, int], list[str]] | None:
        if self.root is None:
            return None
        try:
            text = (self.root / path).read_text(errors="replace")
        except OSError:
            return None
        out, extra, lines = {}, 0, text.splitlines()
        for n, ln in enumerate(lines, 1):
            out[n + extra] = n
            extra += 2 * ln.split("//", 1)[0].count("`resetall")
        return out, lines


# a nonblocking assignment's target at the start of a statement (`x_q <= ...;`, `else p[i] <= ...`,
# `if (en) q <= d;`); in `if (a <= b)` the `a` follows an opening parenthesis: a comparison, not matched
_ASSIGNED = re.compile(r"(?:^|;|\)|\bbegin\b|\belse\b)\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?:\[[^\]]*\]\s*)*<=")


def _src_range(src, lines: SourceLines) -> tuple[str, int, int] | None:
    """(path, first line, last line) of the first RTL place of a `src` attribute, in the file's own lines."""
    if not isinstance(src, str):
        return None
    for part in src.split("|"):
        m = re.fullmatch(r"(.+):(\d+)\.\d+-(\d+)\.\d+", part.strip())
        if m and not _LIBRARY.search(m.group(1)):
            return m.group(1), lines.real(m.group(1), int(m.group(2))), lines.real(m.group(1), int(m.group(3)))
    return None


def _assigned(src, lines: SourceLines) -> tuple[set[str], str] | None:
    """The registers a cell's always block assigns (its `src` range read from the file), and where."""
    where = _src_range(src, lines)
    if where is None:
        return None
    path, first, last = where
    body = " ".join(ln.split("//", 1)[0] for ln in lines.text(path, first, last))
    if not body:
        return None
    return set(_ASSIGNED.findall(body)), f"{PurePosixPath(path).name}:{first}"


def rtl_source(src, lines: SourceLines | None = None) -> str | None:
    """The first RTL place of a `src` attribute ("a.v:137.9-139.12|/share/xilinx/ff_map.v:68.41-68.95"
    -> "a.v:137"); None when every place is in Yosys's own library or the attribute is absent."""
    if not isinstance(src, str):
        return None
    for part in src.split("|"):
        path, _, pos = part.strip().rpartition(":")
        line = pos.split(".", 1)[0]
        if not path or not line.isdigit() or _LIBRARY.search(path):
            continue
        return f"{PurePosixPath(path).name}:{(lines or SourceLines()).real(path, int(line))}"
    return None


def plain(name: str) -> str:
    """A netlist name without Yosys's decoration: `$flatten\\` prefixes and escaped-name backslashes."""
    return name.replace(_FLATTEN, "").lstrip("\\")


def _bits(conn) -> list:
    return [b if isinstance(b, int) else None for b in conn or []]


class _Nets:
    """bit -> (RTL net name of that bit, its declaration's source), the shortest visible name first."""

    def __init__(self, netnames: dict, lines: SourceLines):
        self.of_bit: dict[int, tuple[str, str | None]] = {}
        for name, info in sorted(netnames.items(), key=lambda kv: (len(kv[0]), kv[0])):
            if info.get("hide_name") or name.startswith("$"):
                continue
            bits = _bits(info.get("bits"))
            src = rtl_source((info.get("attributes") or {}).get("src"), lines)
            for i, b in enumerate(bits):
                if b is not None and b not in self.of_bit:
                    label = plain(name) if len(bits) == 1 else f"{plain(name)}[{_index(info, i, len(bits))}]"
                    self.of_bit[b] = (label, src)


def _index(info: dict, i: int, width: int) -> int:
    """The RTL index of a net's bit i (bits are listed LSB first): a net declared [15:8] has Yosys's
    offset 8; one declared [0:7] is `upto`, its first listed bit being index 7."""
    off = info.get("offset", 0)
    off = off if isinstance(off, int) else 0
    return off + (width - 1 - i if info.get("upto") else i)


def _output_bit(cell: dict, pins: tuple[str, ...] = ("Q",)) -> int | None:
    conns = cell.get("connections") or {}
    dirs = cell.get("port_directions") or {}
    for pin in pins:
        b = next((x for x in _bits(conns.get(pin)) if x is not None), None)
        if b is not None:
            return b
    for pin, conn in sorted(conns.items()):
        if dirs.get(pin) == "output":
            b = next((x for x in _bits(conn) if x is not None), None)
            if b is not None:
                return b
    return None


def _is_ff(cell: dict) -> bool:
    return str(cell.get("type", "")).startswith("FD")


def _pin(cell: dict, pin: str):
    conn = (cell.get("connections") or {}).get(pin)
    return conn[0] if conn else None


def _lut_holds(lut: dict, q_bit: int, ce_bit: int) -> bool:
    """Whether a LUT's output equals input `q_bit` whenever input `ce_bit` is 0 (its INIT, every row)."""
    conns = lut.get("connections") or {}
    ins = [(p, (conns.get(p) or [None])[0]) for p in sorted(conns) if re.fullmatch(r"I\d", p)]
    init = (lut.get("parameters") or {}).get("INIT")
    if not ins or not isinstance(init, str) or not set(init) <= {"0", "1"}:
        return False
    bits = [b for _, b in ins]
    if q_bit not in bits or ce_bit not in bits:
        return False
    qi, ci = bits.index(q_bit), bits.index(ce_bit)
    n = len(bits)
    table = init[::-1].ljust(1 << n, "0")  # INIT's bit k is row k (I0 the least significant input)
    rows = [k for k in range(1 << n) if not (k >> ci) & 1]
    return all(table[k] == str((k >> qi) & 1) for k in rows)


def _copy_of(cname: str, cells: dict, driver: dict[int, str], nets: _Nets, lines: SourceLines) -> RtlName | None:
    """An unnamed flip-flop that is an RTL register's copy (same clock, same reset, D = the register's
    next value with its enable folded in), named as that register."""
    me = cells[cname]
    d = _pin(me, "D")
    lut = cells.get(driver.get(d, "")) if isinstance(d, int) else None
    if lut is None or not str(lut.get("type", "")).startswith("LUT"):
        return None
    for b in _bits(sum(((lut.get("connections") or {}).get(p) or [] for p in sorted(lut.get("connections") or {})
                        if re.fullmatch(r"I\d", p)), [])):
        other = cells.get(driver.get(b, "")) if b is not None else None
        if other is None or other is me or not _is_ff(other) or b not in nets.of_bit:
            continue
        if _pin(other, "Q") != b or _pin(other, "C") != _pin(me, "C"):
            continue
        reset = next((p for p in ("R", "S", "CLR", "PRE") if p in (other.get("connections") or {})), None)
        if reset is None or _pin(other, reset) != _pin(me, reset) or _pin(me, "CE") not in ("1", 1):
            continue
        ce = _pin(other, "CE")
        if isinstance(ce, int) and _lut_holds(lut, b, ce):
            name, decl = nets.of_bit[b]
            return RtlName(name, decl or rtl_source((other.get("attributes") or {}).get("src"), lines), COPY_NOTE)
    return None


def names(wanted, cells: dict, netnames: dict, source_root: Path | None = None) -> dict[str, RtlName]:
    """RtlName of each wanted cell (a critical path's start- and endpoints); `source_root`: the folder
    Yosys ran in, to read the source files' own line numbers (SourceLines)."""
    lines = SourceLines(source_root)
    lines.check(netnames)
    nets = _Nets(netnames, lines)
    driver: dict[int, str] = {}
    for cname, c in cells.items():
        dirs = c.get("port_directions") or {}
        for pin, conn in (c.get("connections") or {}).items():
            if dirs.get(pin) == "output":
                for b in _bits(conn):
                    if b is not None:
                        driver[b] = cname
    out: dict[str, RtlName] = {}
    for cname in sorted(wanted):
        c = cells.get(cname)
        if c is None:
            continue
        own_src = rtl_source((c.get("attributes") or {}).get("src"), lines)
        b = _output_bit(c)
        if b is not None and b in nets.of_bit and (_is_ff(c) or c.get("hide_name")):
            name, decl = nets.of_bit[b]
            elsewhere = _elsewhere(own_src, decl)
            renamed = _renamed(name, (c.get("attributes") or {}).get("src"), lines)
            note = (f"{renamed} (declared at {decl})" if renamed and elsewhere else renamed) or elsewhere
            out[cname] = RtlName(name, own_src if elsewhere else decl or own_src, note)
        elif not c.get("hide_name") and not cname.startswith("$"):  # a cell Yosys kept visible (RAM, DSP)
            out[cname] = RtlName(plain(cname), own_src)
        elif _is_ff(c) and (copy := _copy_of(cname, cells, driver, nets, lines)) is not None:
            out[cname] = copy
        else:
            out[cname] = RtlName(None, own_src)
    return out


_ELSEWHERE = "the register's own name is not in the netlist"


_REG_DECL = re.compile(r"\breg\b\s*(?:signed\b\s*)?(?:\[\s*(\d+)\s*:\s*(\d+)\s*\]|\[([^\]]*)\])?([^;]*);")


def _widths(regs: set[str], path: str, lines: SourceLines) -> dict[str, int] | None:
    """Each register's width from its `reg` declarations in the file; None when one is not a number
    (a parameter's range), is declared twice with two widths, or is not found."""
    f = lines._file(path)
    if f is None:
        return None
    text = " ".join(ln.split("//", 1)[0] for ln in f[1])
    found: dict[str, set[int | None]] = {}
    for m in _REG_DECL.finditer(text):
        width = abs(int(m.group(1)) - int(m.group(2))) + 1 if m.group(1) else None if m.group(3) else 1
        for part in m.group(4).split(","):
            ident = part.split("=", 1)[0].strip().split("[", 1)[0].strip()
            if ident in regs:
                found.setdefault(ident, set()).add(width)
    if set(found) != regs or any(len(w) != 1 or None in w for w in found.values()):
        return None
    return {r: next(iter(w)) for r, w in found.items()}


def _elsewhere(own: str | None, decl: str | None) -> str | None:
    """A note when the register (its always block, `own`) and the net naming it lie in different
    files: Yosys kept only another module's name for that net (a port the register drives)."""
    if own and decl and own.rpartition(":")[0] != decl.rpartition(":")[0]:  # file:line, the file any name
        return f"{_ELSEWHERE}; named by the net it drives, declared at {decl}"
    return None


def _renamed(name: str, src, lines: SourceLines) -> str | None:
    """A note when the always block the register comes from assigns another register than the net's
    name says (`assign stat_invalid = stat_invalid_reg;` kept only the port's name): the register's
    own name, read from its source, beside the name the netlist kept (never instead of it). Said only
    when the block leaves one answer: it assigns one register; or one whose name extends the net's
    (stat_invalid -> stat_invalid_reg); or one wide enough for the net's bit, every register's width
    being a number in its declaration (out_word [31:0] for bit 25, beside two 1-bit flags)."""
    found = _assigned(src, lines)
    leaf = re.sub(r"\[\d+\]$", "", name).rsplit(".", 1)[-1]
    if found is None or leaf in found[0]:
        return None
    regs = found[0] if len(found[0]) == 1 else {r for r in found[0] if r.startswith(leaf + "_")}
    if not regs:
        widths = _widths(found[0], _src_range(src, lines)[0], lines)
        bit = re.search(r"\[(\d+)\]$", name)
        if widths is not None:
            regs = {r for r, w in widths.items() if w > (int(bit.group(1)) if bit else 0)}
    if len(regs) != 1:
        return None
    (reg,) = regs
    return (f"the register is {reg}, assigned in the always block at {found[1]}; the netlist keeps only "
            f"the name of the net it drives")
