"""Benchmark: what the sweep's security costs, without a build. Prints

- the start of a one-worker LocalCluster with TLS (kabe's, Security.temporary()) and without (plain
  TCP, as before), median of N;
- a worker's answer of a Vivado-sized unit (a 4 MB bitstream, 12 MB of reports) carried back through
  that cluster as msgpack (kabe's) and as Dask's default serialisation, median of N;
- the client's checks on that unit (kabe.sweep.unit.accept: tar members, layout, schema, re-gate),
  median of N.

    python scripts/bench_sweep_security.py [N]      (default N = 5)
"""

from __future__ import annotations

import hashlib
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "sweep"))

import forged_worker as forge  # noqa: E402  (its unit builders; importing it patches nothing)

from kabe.sweep import cluster, unit  # noqa: E402

IDENT = {"commit": "a" * 40, "tree": "b" * 40, "sha256": "c" * 64}
VID, SETTINGS = "0123456789", {"clock_period_ns": 7.0}


def vivado_sized_unit() -> bytes:
    bit = os.urandom(4 << 20)
    record = forge._record(IDENT, VID, SETTINGS, lut=300, wns=0.5, passed=True)
    record["artifacts"] = {"bit": hashlib.sha256(bit).hexdigest()}
    files = forge._tar_files(record, {"timing_summary.rpt": b"x" * (12 << 20)})
    manifest = json.loads(files["manifest.json"])
    manifest.update(artifacts=record["artifacts"], raw_files=["yosys.log", "timing_summary.rpt"])
    files["manifest.json"] = json.dumps(manifest).encode()
    return forge._tar({**files, "top.bit": bit})


def _answer(tar: bytes):
    return unit.answer(tar, IDENT, VID, 0, ["ok"], 1.0)


def timed(fn, n: int) -> float:
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> int:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    from distributed import Client, LocalCluster

    def start(tls: bool):
        if tls:
            c = cluster.local_cluster("open", 1)
        else:
            c = LocalCluster(n_workers=1, threads_per_worker=1, processes=True, host="127.0.0.1",
                             dashboard_address=None)
        c.close()

    t_tls, t_tcp = timed(lambda: start(True), n), timed(lambda: start(False), n)
    tar = vivado_sized_unit()
    with cluster.local_cluster("open", 1) as c, Client(c, deserializers=list(cluster.RESULT_DESERIALIZERS)) as safe, \
            Client(c) as default:
        remote = safe.scatter(tar, broadcast=False)

        def carry(client):
            client.submit(_answer, remote, pure=False).result()

        t_safe, t_default = timed(lambda: carry(safe), n), timed(lambda: carry(default), n)
    value = _answer(tar)
    keys = dict(job=unit.Job(IDENT, "stage2", "cores/stage2.core", "constraints/stage2.xdc", "open", VID, SETTINGS),
                archive_name="a" * 40)
    assert unit.accept(value, **keys)[1] is not None
    t_check = timed(lambda: unit.accept(value, **keys), n)
    print(f"sweep security costs, median of {n}, {os.cpu_count()} cores")
    print(f"  LocalCluster start, 1 worker, TLS (Security.temporary): {t_tls:6.2f} s")
    print(f"  LocalCluster start, 1 worker, plain TCP:                {t_tcp:6.2f} s")
    print(f"  a {len(tar) / 2**20:.1f} MiB unit back through TLS, msgpack only:  {t_safe * 1000:7.1f} ms")
    print(f"  the same, Dask's default serialisation (pickle):   {t_default * 1000:7.1f} ms")
    print(f"  the client's checks on it (unit.accept):           {t_check * 1000:7.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
