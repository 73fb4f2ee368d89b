"""Where things live in a kabe checkout. Everything else asks here instead of guessing."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORES = ROOT / "cores"
CONSTRAINTS = ROOT / "constraints"
IP = ROOT / "ip"
SCRIPTS = ROOT / "scripts"
REPORTS = ROOT / "reports"
BUILD = ROOT / "build"
