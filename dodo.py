"""kabe's verbs. Logic lives in the kabe package (kabe/tasks.py); this file only names tasks.

    doit build:stage4 [flow=open|vivado|auto]     verify, synthesize, gate, archive (cache=off: run every tool)
    doit sim:stage4 [rows=524278] [seed=1]        full-scale bit-exact verification
    doit sim:stage5 ctx=512                       the attention engine at one context length
    doit deploy:stage4 board=xilinx@pynq          verify on the board with the archived bitstream
    doit repro:stage4 [flow=open]                 build HEAD twice from clean checkouts, compare byte for byte
    doit list                                     every task, with what it does
"""

from doit import get_var

from kabe import designs, tasks

# `doit` alone builds every design expected to pass; stage3_naive (expect_gate: fail) is built only
# when asked for, since its gate failing is the point (scripts/ci_gates.py checks that it does).
DESIGNS = designs.all_designs()  # read once: every task group below iterates them
DOIT_CONFIG = {
    "default_tasks": [f"build:{d.name}" for d in DESIGNS.values() if d.expect_gate == "pass"],
    "verbosity": 2,
}


def _int_var(name):
    value = get_var(name)
    return None if value is None else int(value)


def task_build():
    """verify, synthesize, gate and archive a design (flow=open|vivado|auto; cache=off runs every tool)"""
    yield from tasks.build_tasks(get_var("flow"), DESIGNS, use_cache=get_var("cache", "on") != "off")


def task_sim():
    """bit-exact verification of a design against the numpy model (rows=N seed=S; stage5: ctx=N)"""
    for design in DESIGNS.values():
        yield tasks.sim_task(design, _int_var("rows"), _int_var("seed") or 1, _int_var("ctx"))


def task_deploy():
    """push the archived bitstream to the board and verify every row there (board=user@host rows=N)"""
    for design in DESIGNS.values():
        yield tasks.deploy_task(design, get_var("board"), _int_var("rows"), _int_var("seed") or 1)


def task_report():
    """reports/index.html: metrics over commits, the bandwidth wall, the token budget (self-contained)"""
    return tasks.report_task()


def task_repro():
    """build a design twice from clean checkouts of HEAD, without the cache, and compare every artifact"""
    for design in DESIGNS.values():
        yield tasks.repro_task(design, get_var("flow"))
