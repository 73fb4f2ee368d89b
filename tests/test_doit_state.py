"""doit's state file survives two doit runs at once in one checkout (kabe.doit_tasks: SQLite, not
doit's default dbm, whose files two writers corrupted: every later doit stopped in a traceback)."""

from __future__ import annotations

import json
import subprocess
import sys

from kabe.doit_tasks import DOIT_CONFIG

WRITER = r"""
import sys
from doit.dependency import JSONCodec, SqliteDB
path, me = sys.argv[1], sys.argv[2]
for i in range(300):
    db = SqliteDB(path, JSONCodec())
    db.set(f"build:{me}{i % 7}", "result:", {"round": i, "pad": "x" * 200})
    db.dump()  # one transaction per run, as doit writes at the end of each
"""

READER = r"""
import json, sys
from doit.dependency import JSONCodec, SqliteDB
db = SqliteDB(sys.argv[1], JSONCodec())
print(json.dumps({k: db.get(k, "result:")["round"] for k in [f"build:{w}{i}" for w in "ab" for i in range(7)]}))
"""


def test_the_state_file_is_sqlite_and_two_writers_at_once_leave_it_readable(tmp_path):
    assert DOIT_CONFIG["backend"] == "sqlite3"
    db = tmp_path / DOIT_CONFIG["dep_file"]
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(db), me]) for me in "ab"]
    assert [w.wait(timeout=300) for w in writers] == [0, 0]
    out = subprocess.run([sys.executable, "-c", READER, str(db)], capture_output=True, text=True, check=True).stdout
    rounds = json.loads(out)
    assert len(rounds) == 14 and all(r >= 293 for r in rounds.values()), rounds  # each key's last write kept
