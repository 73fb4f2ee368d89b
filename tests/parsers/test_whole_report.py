"""Issue 37: the gate believes a timing report only when the whole file is one consistent report.

Each kind of damage the fuzz campaign found passing, built from the shared real reports and run
through `kabe gate` itself: FAIL (exit 1) or refused (exit 2), never PASS, and the message names
what it found (the two verdict lines, the slack line, the setting, the section)."""

import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from shared_reports import shared_file

from kabe import cli
from report_mutations import set_summary
import gate_fuzz as gf

PASSING = [("vivado-reports-more", "picarro-a100t-timing-routed.rpt"),  # 2025.2, both unconstrained tables
           ("vivado-versal", "ajit-vck190-timing-routed.rpt"),  # 2023.2 Versal, an empty User Ignored table
           ("vivado-routed-paths", "xapp1082_zc706.rpt")]  # 2014.2, the oldest layout
FAILING = [("vivado-reports", "lakeroad_xczu3eg_timing_summary_2021.2_violated.rpt"),
           ("vivado-reports-more", "mdc-ntt-timing-fail.rpt"),
           ("vivado-routed-paths", "gta-image-processor_nexys4ddr.rpt")]
IDS = [n for _, n in PASSING]
MET = "All user specified timing constraints are met."
NOT_MET = "Timing constraints are not met."


def _gate(text: str, tmp_path, capsys, name="timing_summary.rpt") -> tuple[int, str]:
    f = tmp_path / name
    f.write_text(text)
    rc = cli.main(["gate", str(f)])
    out = capsys.readouterr()
    return rc, out.out + out.err


def _text(folder, name) -> str:
    return shared_file(folder, name).read_text(errors="replace").replace("\r\n", "\n")


@pytest.mark.parametrize("folder,name", PASSING, ids=IDS)
def test_each_real_report_here_passes_as_it_is(folder, name, tmp_path, capsys):
    """The mutants below are made from reports that pass: their failure is the damage's doing."""
    rc, out = _gate(_text(folder, name), tmp_path, capsys)
    assert rc == 0, out


@pytest.mark.parametrize("folder,name", PASSING, ids=IDS)
@pytest.mark.parametrize("second", [NOT_MET, MET, MET.upper(), NOT_MET.replace(" ", "\u00a0")])
def test_a_second_verdict_line_fails_naming_both(folder, name, second, tmp_path, capsys):
    text = _text(folder, name)
    rc, out = _gate(text.replace(MET, MET + "\n" + second, 1), tmp_path, capsys)
    assert rc == 1, out
    assert "2 verdict lines" in out and MET in out and second.split()[0] in out, out


@pytest.mark.parametrize("front", FAILING, ids=[n for _, n in FAILING])
@pytest.mark.parametrize("damage", range(4))
def test_a_failing_run_with_damaged_titles_in_front_of_a_passing_one_is_refused(front, damage, tmp_path, capsys):
    failing = _text(*front).split("\n")
    passing = _text(*PASSING[0])
    joined = "\n".join(gf.damage_titles(failing, damage)) + "\n" + passing
    rc, out = _gate(joined, tmp_path, capsys)
    assert rc == 2, out
    assert "more than one report_timing_summary run" in out or "two reports in one file" in out, out
    assert len(out.strip().splitlines()) == 1, out  # one line, no traceback


@pytest.mark.parametrize("title", ["Intra Clock Table", "Other Path Groups Table", "Timing Details",
                                   "Inter Clock Table", "Clock Summary", "Timer Settings"])
@pytest.mark.parametrize("damaged", [False, True], ids=["exact", "damaged-title"])
def test_a_duplicated_section_is_refused(title, damaged, tmp_path, capsys):
    """A second copy of a section (with a negative slack in it, or the title damaged so the section
    reader does not see it) is refused: which copy is the report's cannot be told."""
    lines = _text(*PASSING[0]).split("\n")
    start = next(i for i, ln in enumerate(lines) if ln.rstrip() == f"| {title}") - 1
    end = next((i - 1 for i in range(start + 3, len(lines) - 1) if lines[i].startswith("| ") and
                lines[i + 1].startswith("| -")), len(lines) - 4)
    end = next((i for i in range(start + 3, end) if lines[i].strip() == "check_timing report"), end)
    copy = lines[start:end]
    copy = [re.sub(r"(\s)(\d+\.\d{3})(\s)", r"\1-\2\3", ln, count=1) for ln in copy]  # its slacks negative
    if damaged:
        copy[1] = "|\u00a0" + copy[1][2:]
    rc, out = _gate("\n".join(lines[:end] + copy + lines[end:]), tmp_path, capsys)
    assert rc == 2, out
    assert f"section '{title}'" in out and "twice" in out, out


@pytest.mark.parametrize("where", ["before the summary", "after the tables", "in Timing Details", "at the end"])
@pytest.mark.parametrize("line", ["Slack (VIOLATED) :        -0.333ns  (required time - arrival time)",
                                  "Slack (MET) :             -0.120ns  (required time - arrival time)",
                                  "Slack\u00a0(VIOLATED) : 0.000ns"])
def test_a_stray_negative_slack_line_fails_naming_it(where, line, tmp_path, capsys):
    lines = _text(*PASSING[0]).split("\n")
    at = {"before the summary": next(i for i, ln in enumerate(lines) if ln.startswith("| Design Timing Summary")) - 2,
          "after the tables": next(i for i, ln in enumerate(lines) if ln.startswith("| Timing Details")) - 2,
          "in Timing Details": next(i for i, ln in enumerate(lines) if ln.startswith("From Clock:")),
          "at the end": len(lines) - 3}[where]
    text = "\n".join(lines[:at] + [line] + lines[at:])
    rc, out = _gate(text, tmp_path, capsys)
    assert rc in (1, 2), out
    if rc == 1 and "FAIL timing.report" not in out:  # read (not refused as inconsistent): the line is named
        assert f"line {at + 1}: {' '.join(line.split())[:30]}" in out and "negative slack" in out, out


# (report, section): the 2014.2 report has Timer Settings only; the others every section named
DELETIONS = [(f, n, t) for f, n in PASSING for t in ("Timer Settings", "Unconstrained Path Table",
                                                     "User Ignored Path Table", "Report Methodology")
             if t == "Timer Settings" or not n.startswith("xapp1082")]


@pytest.mark.parametrize("folder,name,title", DELETIONS, ids=[f"{n}-{t}" for _, n, t in DELETIONS])
def test_a_section_its_version_always_prints_is_refused_when_deleted(folder, name, title, tmp_path, capsys):
    lines = _text(folder, name).split("\n")
    start = next(i for i, ln in enumerate(lines) if ln.rstrip() == f"| {title}") - 1
    end = next(i for i in range(start + 3, len(lines) - 1) if (lines[i].startswith("| ") and lines[i + 1].startswith("| -"))
               or lines[i].strip() == "check_timing report")
    end = end - 1 if lines[end].startswith("| ") else end
    rc, out = _gate("\n".join(lines[:start] + lines[end:]), tmp_path, capsys)
    assert rc in (1, 2), out
    assert rc == 2 and title in out, out


@pytest.mark.parametrize("folder,name", PASSING, ids=IDS)
def test_a_negative_pulse_width_row_fails_naming_it(folder, name, tmp_path, capsys):
    """A Pulse Width Checks row of Timing Details with its slack negative (the summary's WPWS and the
    PW line left as they were): the row is named."""
    lines = _text(folder, name).split("\n")
    i = next(i for i, ln in enumerate(lines) if ln.startswith(("Min Period", "Low Pulse Width")))
    cells = lines[i].split()
    k = next(k for k in range(len(cells) - 2) if all(re.fullmatch(r"\d+\.\d+", c) for c in cells[k:k + 3]))
    lines[i] = lines[i].replace(f" {cells[k + 2]}", f"-{cells[k + 2]}", 1)
    rc, out = _gate("\n".join(lines), tmp_path, capsys)
    assert rc == 1, out
    assert f"line {i + 1}: pulse width {cells[0]}" in out and f"-{cells[k + 2]}" in out, out


@pytest.mark.parametrize("folder,name", PASSING, ids=IDS)
@pytest.mark.parametrize("edit", ["slow setup", "slow hold", "fast setup", "fast hold", "multi corner"])
def test_a_corner_not_analysed_fails_naming_the_setting(folder, name, edit, tmp_path, capsys):
    lines = _text(folder, name).split("\n")
    if edit == "multi corner":
        i = next(i for i, ln in enumerate(lines) if "Enable Multi Corner Analysis" in ln)
        lines[i] = lines[i].replace("Yes", "No")
        said = "Enable Multi Corner Analysis : No"
    else:
        corner, check = edit.split()
        i = next(i for i, ln in enumerate(lines) if ln.split()[:1] == [corner.title()] and "Yes" in ln)
        cells = lines[i].split()
        cells[1 if check == "setup" else 2] = "No"
        lines[i] = "  " + "    ".join(cells)
        said = f"corner {corner.title()}: Analyze {'Max' if check == 'setup' else 'Min'} Paths No"
    rc, out = _gate("\n".join(lines), tmp_path, capsys)
    assert rc == 1, out
    assert said in out and "not analysed" in out, out


INF = Path(__file__).resolve().parents[1] / "fixtures" / "vivado" / "timing_summary_7a35t_2024.2_inf_idle_clock.rpt"


@pytest.mark.parametrize("endpoints", ["0", "2"])
def test_inf_and_its_na_twin_get_one_verdict_and_a_true_message(endpoints, tmp_path, capsys):
    """WNS/WHS inf over TNS/THS 0.000 and N endpoints, every check_timing count 0, and the same report
    with NA where it printed inf: one verdict. Over 0 endpoints nothing was there to time (pass); over 2
    Vivado has endpoints it timed no path to (fail), and check_timing, which counts 0 unconstrained
    endpoints, is never said to name them."""
    inf = set_summary(INF.read_text(), {"TNS Total Endpoints": endpoints, "THS Total Endpoints": endpoints})
    na = set_summary(inf, {"WNS(ns)": "NA", "WHS(ns)": "NA"})
    rc_inf, out_inf = _gate(inf, tmp_path, capsys, "inf.rpt")
    rc_na, out_na = _gate(na, tmp_path, capsys, "na.rpt")
    assert rc_inf == rc_na == (0 if endpoints == "0" else 1), (out_inf, out_na)
    if endpoints == "2":
        for out, printed in ((out_inf, "inf"), (out_na, "NA")):
            assert f"prints WNS {printed} (no number) but counts TNS Total Endpoints 2" in out, out
            assert "check_timing counts 0 unconstrained internal endpoints, so it does not name them" in out, out
            assert "check_timing names them" not in out, out


# --- only regular files, read up to the cap

def _run_gate(path: str, timeout: float = 20) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    return subprocess.run([sys.executable, "-m", "kabe", "gate", path], capture_output=True, text=True,
                          timeout=timeout, env=env)


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero on this system")
def test_dev_zero_is_refused_in_one_line_at_once():
    t0 = time.monotonic()
    r = _run_gate("/dev/zero")
    assert r.returncode == 2, r.stderr
    assert (r.stdout + r.stderr).strip().count("\n") == 0 and "not a regular file" in r.stderr, r.stderr
    assert time.monotonic() - t0 < 15


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")
def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path):
    fifo = tmp_path / "timing_summary.rpt"
    os.mkfifo(fifo)
    r = _run_gate(str(fifo))  # a reader that opened it would wait for a writer forever (timeout raises)
    assert r.returncode == 2, r.stderr
    assert "not a regular file (a FIFO)" in r.stderr and r.stderr.strip().count("\n") == 0, r.stderr


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")
def test_parse_refuses_a_fifo_too(tmp_path, capsys):
    fifo = tmp_path / "report.rpt"
    os.mkfifo(fifo)
    done = []
    t = threading.Thread(target=lambda: done.append(cli.main(["parse", str(fifo)])), daemon=True)
    t.start()
    t.join(15)
    assert done == [2], "kabe parse blocked on a FIFO"
    assert "not a regular file" in capsys.readouterr().err


def test_a_file_over_the_cap_is_refused_before_it_is_read(tmp_path, monkeypatch):
    from kabe.parsers import ReportError, report_file

    monkeypatch.setattr(report_file, "MAX_BYTES", 1000)
    f = tmp_path / "big.rpt"
    f.write_text("x" * 1001)
    with pytest.raises(ReportError, match="over kabe's bound of 1,000"):
        report_file.read(f)
