"""Run one cocotb testbench with cocotb's own runner on Verilator (on GHDL for a VHDL design), in a process
of its own.

kabe.sim.cocotb_run starts this file as `python cocotb_child.py <job.json>` under kabe.base.tool_group
(so Verilator, make, g++ and the simulation die with the build). It imports nothing of kabe; its
only output kabe believes is the JUnit XML, which kabe.sim.cocotb_run reads as data.
"""

from __future__ import annotations

import json
import sys


def main(job_file: str) -> int:
    from cocotb_tools.runner import get_runner

    job = json.loads(open(job_file, encoding="utf-8").read())
    sys.path[:0] = job["pythonpath"]  # cocotb hands its own sys.path to the simulation as PYTHONPATH
    if job.get("simulator") == "ghdl":  # VHDL: each library analysed under its name, the top's library last
        from cocotb_tools.runner import VHDL

        runner = get_runner("ghdl")
        libraries = job["libraries"]
        for i, (lib, files) in enumerate(libraries):
            last = i == len(libraries) - 1
            runner.build(hdl_library=lib, sources=[VHDL(f) for f in files], build_args=job["build_args"],
                         hdl_toplevel=job["toplevel"] if last else None, build_dir=job["build_dir"], always=True)
        runner.test(test_module=job["module"], hdl_toplevel=job["toplevel"], hdl_toplevel_library=libraries[-1][0],
                    test_dir=job["test_dir"], build_dir=job["build_dir"], results_xml=job["results_xml"],
                    seed=job["seed"], parameters=job["parameters"],
                    # `ghdl -r` runs in test_dir: the libraries it elaborates from are in build_dir
                    test_args=[*job["build_args"], f"--workdir={job['build_dir']}", f"-P{job['build_dir']}"])
        return 0
    runner = get_runner("verilator")
    runner.build(sources=job["sources"], includes=job["includes"], defines=job["defines"],
                 parameters=job["parameters"], hdl_toplevel=job["toplevel"], build_dir=job["build_dir"],
                 build_args=job["build_args"], always=False)
    runner.test(test_module=job["module"], hdl_toplevel=job["toplevel"], test_dir=job["test_dir"],
                build_dir=job["build_dir"], results_xml=job["results_xml"], seed=job["seed"],
                plusargs=job.get("plusargs", []))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
