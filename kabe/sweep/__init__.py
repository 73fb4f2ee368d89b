"""Design-space sweeps: many builds of one design at once, on Dask.

A build is one function of (commit tree, design, flow, variant) that returns an archive
(ARCHITECTURE.md). The sweep ships the commit's tree to the workers (content-addressed, so a worker
needs no shared filesystem), each worker applies one variant to a scratch copy and runs the normal
build there (simulation check and gate included), and the archive comes back to the client, which
writes it atomically under reports/<commit>/<design>/sweep-<flow>/<variant-id>/.

    spec.py      sweep.yaml beside the design: a grid or a list of variants, and their ids
    variant.py   applying one variant's settings to a scratch copy of the tree
    source.py    the commit's tree as a tar (client) and its cached extraction (worker)
    worker.py    the task a Dask worker runs: one variant's build, its archive as bytes
    cluster.py   which Dask: a LocalCluster, a running scheduler, or dask-jobqueue (Slurm/LSF/SGE)
    run.py       the client: submit, follow, collect, write archives and sweep.json
    unit.py      a worker's answer as data, and the client's checks on it
    expected.py  this checkout's cache key of a variant, which a worker's unit must carry
    results.py   sweep.json's summary, the best passing variant, the Pareto plot
"""
