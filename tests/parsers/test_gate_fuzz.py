"""The gate fuzzed in the suite: one-line structured damage (gate_fuzz.py) to every shared
report_timing_summary; no mutant of a failing report passes, nothing raises but the parser's own
refusal. Whole-report damage (issue 37: verdict lines added, sections deleted or duplicated, runs
joined with damaged titles, Unicode spaces in structural lines, Timer Settings edits, stray slack
lines): no such mutant passes at all. Bounded and derandomised (the same examples on every run, here and in CI); the longer run
is scripts/bench_gate_fuzz.py.

The pinned mutants below are ones this fuzzer found against the parser before issue 22's fix
(false passes through a damaged check_timing section, IndexError through a pasted rule line): each
must keep failing or being refused."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from shared_reports import SHARED

import gate_fuzz as gf

_CACHE: dict[str, gf.Subject] = {}
PATHS = gf.timing_summaries(SHARED)
EXAMPLES = 1000


def subject(path) -> gf.Subject:
    key = str(path.relative_to(SHARED / "fixtures"))
    if key not in _CACHE:
        _CACHE[key] = gf.Subject.load(path, key)
    return _CACHE[key]


@pytest.fixture(scope="module")
def subjects() -> list[gf.Subject]:
    if not PATHS:
        pytest.skip(f"shared fixtures not available: no report_timing_summary under {SHARED / 'fixtures'}")
    return [subject(p) for p in PATHS]


@settings(derandomize=True, max_examples=EXAMPLES, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(which=st.integers(0, 1 << 16), prefer_failing=st.booleans(), op=st.sampled_from(gf.OPS),
       hot=st.integers(0, 3).map(bool), pick=st.integers(0, 1 << 30), arg=st.integers(0, 1 << 16))
def test_no_mutant_of_a_failing_report_passes_and_nothing_crashes(subjects, which, prefer_failing, op, hot, pick,
                                                                  arg):
    failing = [s for s in subjects if not s.passed]
    pool = failing if prefer_failing and failing else subjects  # half the draws on the reports that fail
    s = pool[which % len(pool)]
    m = gf.Mutation(op, gf.line_for(s, op, hot, pick), arg)
    out = gf.judge(s, m)
    assert out.kind not in ("false_pass", "crash"), out.detail


WHOLE_EXAMPLES = 300  # issue 37's whole-report kinds: each mutant parses a whole report or two


@settings(derandomize=True, max_examples=WHOLE_EXAMPLES, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(which=st.integers(0, 1 << 16), op=st.sampled_from(gf.WHOLE_OPS), pick=st.integers(0, 1 << 30),
       arg=st.integers(0, 1 << 16))
def test_no_whole_report_mutant_passes_and_nothing_crashes(subjects, which, op, pick, arg):
    """A second verdict line, a section deleted or pasted twice, a failing run joined on with its titles
    damaged, a corner switched off, a stray negative slack line: never a pass, whatever the report's
    own verdict; Unicode spaces in a structural line: no false pass (gate_fuzz.must_never_pass)."""
    s = subjects[which % len(subjects)]
    out = gf.judge_whole(s, gf.WholeMutation(op, arg, pick), subjects)
    assert out.kind not in ("false_pass", "crash"), out.detail


PINNED = [  # (report, mutation, what the old parser did)
    ("vivado-reports-more/edalize-arty-timing-datasheet.rpt", gf.Mutation("header", 37, 4429), "passed"),
    ("vivado-reports-more/edalize-arty-timing-datasheet.rpt", gf.Mutation("header", 54, 1434), "passed"),
    ("vivado-routed-paths/qrcode-reader_urbana-s7.rpt", gf.Mutation("delete", 63, 57570), "passed"),
    ("vivado-routed-paths/qrcode-reader_urbana-s7.rpt", gf.Mutation("upper", 46, 62177), "passed"),
    ("vivado-routed-paths/spartan7-p3_post-route.rpt", gf.Mutation("upper", 54, 10025), "passed"),
    ("vivado-reports/lakeroad_xczu3eg_timing_summary_2021.2_violated.rpt", gf.Mutation("separator", 170, 1),
     "IndexError"),
    ("vivado-reports/lakeroad_xczu3eg_timing_summary_2021.2_violated.rpt", gf.Mutation("separator", 179, 0),
     "IndexError"),
    ("vivado-reports/wendy5755_LAB6_7z020_ps7_timing_summary_2022.1_met.txt", gf.Mutation("separator", 5851, 0),
     "IndexError"),
]


@pytest.mark.parametrize("name,mutation,before", [pytest.param(*p, id=f"{p[0].split('/')[-1]}-{p[1].op}-{p[1].line}")
                                                  for p in PINNED])
def test_mutants_the_fuzzer_found_before_the_fix(name, mutation, before):
    path = SHARED / "fixtures" / name
    if not path.is_file():
        pytest.skip(f"shared fixtures not available: {path} does not exist")
    s = subject(path)
    out = gf.judge(s, mutation)
    assert out.kind in ("refused", "failed"), out.detail
    if before == "passed":  # a check_timing the gate now cannot read: refused as a cut report
        assert out.kind == "refused" and "check_timing" in out.detail, out.detail
