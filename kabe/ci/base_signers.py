"""Whose signatures a pipeline for a change trusts: the base branch's allowed signers, never the
change's own.

A pulled unit is believed when a key in the project's allowed-signers file signed it
(kabe.records.signing). A pull request's checkout is the change itself, so a change that adds a key
to .kabe/allowed_signers (or points [tool.kabe] allowed_signers elsewhere) would have its own
pipeline trust units signed with that key: reused as its base build, as a cache hit, as this commit's
archived build. kabe ci for a change therefore reads the list from the base branch (what was
reviewed and merged); the change's edit to it takes effect once it is merged.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from kabe.records import lineage, signing
from kabe.records.archive import write_text_atomic


def change_pipeline() -> bool:
    """A CI run for a change (kabe.records.lineage.change_pipeline): a pull or merge request, a merge queue's
    run, a push to a branch other than the default one."""
    return lineage.change_pipeline()


def base_allowed_signers(root: Path, remote: str, dest: Path) -> tuple[Path | None, str]:
    """(the base branch's allowed-signers list copied to `dest`, or None when it has none; one line
    saying which list is trusted). None trusts no key: pulled units stay unverified and are rebuilt."""
    # the target branch as the CI names it first: [tool.kabe] default_branch is the change's own word
    branch = lineage.ci_target_branch() or lineage.ci_default_branch() or lineage.base_branch(root, remote)
    ref = lineage.base_branch_ref(root, remote, branch)
    if ref is None:
        return None, ("no base branch here to read the allowed signers from, so no pulled unit is trusted "
                      "(fetch the base branch, or set [tool.kabe] default_branch)")
    setting = _base_setting(root, ref)
    if Path(setting).is_absolute():  # a file of the CI machine, not of the change
        return Path(setting), f"trusting the signers in {setting} (named by {ref}'s pyproject.toml)"
    # "<ref>:./<path>": git reads the path relative to the working directory, the project's folder, so a
    # project below its repository's top (a monorepo's fpga/) reads its own file; at the top it is "<ref>:<path>"
    text = lineage.git(root, "show", f"{ref}:./{setting}")
    if text is None:
        return None, f"{ref} has no {setting}, so no pulled unit is trusted"
    write_text_atomic(dest, text + "\n")
    note = f"trusting the signers of {setting} on {ref}, not this change's"
    own = root / setting
    if not own.is_file() or own.read_text(errors="replace").strip() != text.strip():
        note += f" (this change edits {setting}: its keys are trusted once it is merged)"
    return dest, note


def _base_setting(root: Path, ref: str) -> str:
    """[tool.kabe] allowed_signers as the base branch's pyproject.toml says, else the default."""
    text = lineage.git(root, "show", f"{ref}:./pyproject.toml")  # the project's own, wherever it sits in the repository
    try:
        value = (tomllib.loads(text or "").get("tool", {}).get("kabe", {}).get("allowed_signers"))
    except (tomllib.TOMLDecodeError, AttributeError):
        value = None
    return str(value) if isinstance(value, str) and value.strip() else str(signing.DEFAULT_ALLOWED_SIGNERS)
