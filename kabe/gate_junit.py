"""A gate verdict as JUnit XML, the format CI systems (Jenkins, GitLab, GitHub test reporters)
render: one testcase per check, a failing check a <failure> carrying what was expected and what
was found, waivers and warnings as the suite's properties and system-out.

Written to a temp file beside the target and renamed, so CI never reads half a file.
"""

from __future__ import annotations

import os
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

from .gate import Verdict


def to_xml(verdict: Verdict, suite: str) -> str:
    cases = verdict.checks
    failed = [c for c in cases if not c["passed"]]
    root = ET.Element("testsuites", name="kabe gate", tests=str(len(cases)), failures=str(len(failed)))
    ts = ET.SubElement(root, "testsuite", name=suite, tests=str(len(cases)), failures=str(len(failed)),
                       errors="0", skipped="0")
    props = ET.SubElement(ts, "properties")
    ET.SubElement(props, "property", name="gate.passed", value=str(verdict.passed).lower())
    for key, reason in verdict.waivers.items():
        ET.SubElement(props, "property", name=f"waiver.{key}", value=reason)
    for c in cases:
        case = ET.SubElement(ts, "testcase", classname=f"kabe.gate.{suite}", name=c["name"])
        if not c["passed"]:
            msg = c.get("message") or f"{c['name']}: expected {c['expected']}, got {c['got']}"
            f = ET.SubElement(case, "failure", type="gate", message=msg)
            f.text = f"expected: {c['expected']}\ngot: {c['got']}"
    # failures with no check of their own (recorded at build time): one testcase each
    own = {c.get("message") for c in cases}
    for i, msg in enumerate((m for m in verdict.failures if m not in own), start=1):
        case = ET.SubElement(ts, "testcase", classname=f"kabe.gate.{suite}", name=f"recorded.{i}")
        ET.SubElement(case, "failure", type="gate", message=msg).text = msg
    if verdict.warnings:
        ET.SubElement(ts, "system-out").text = "\n".join(verdict.warnings)
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def write(verdict: Verdict, suite: str, path: Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(to_xml(verdict, suite))
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
