"""What a pipeline for a change trusts: the default branch's settings and signers, never the change's.

A pulled unit is believed when a key in the project's allowed-signers file signed it
(kabe.store.signing); the archive is the ref [tool.kabe] archive_ref names; the base is found on
[tool.kabe] default_branch. A pull request's checkout is the change itself, so a change that adds a
key to .kabe/allowed_signers, points archive_ref at an empty ref or names its own default branch
would choose what its own pipeline trusts and compares against. kabe ci for a change therefore reads
every such setting (kabe.store.trusted_settings.TRUST_KEYS) from the default branch's commit, and
the signers from the default branch's file, or from the target branch's when the default branch's
settings name it in `trusted_branches` (a protected release branch); the change's edits take effect
once it is merged. Each line printed says where each came from.
"""

from __future__ import annotations

from pathlib import Path

from kabe.project import config
from kabe.records import lineage
from kabe.store import signing, trusted_settings
from kabe.store.archive import write_text_atomic


def change_pipeline(root: Path | None = None, remote: str = "origin") -> bool:
    """A CI run for a change (kabe.records.lineage.change_pipeline): a pull or merge request, a merge queue's
    run, a push to a branch other than the default one, a CI kabe does not recognise."""
    return lineage.change_pipeline(*((root, remote) if root is not None else ()))


def default_branch_settings(root: Path, remote: str) -> tuple[trusted_settings.Trusted, str | None, list[str]]:
    """(the default branch's trust settings, the ref they were read from or None, lines to say)."""
    branch = lineage.default_branch(root, remote)
    ref = lineage.base_branch_ref(root, remote, branch)
    if ref is None:
        return (trusted_settings.Trusted(f"nowhere (no default branch {branch or 'main/master'} here)"), None,
                [f"no default branch ({branch or 'main/master'}) here to read the trust settings from: their "
                 f"defaults are used, not this change's, and no pulled unit is trusted (fetch the default branch)"])
    source = f"{ref}'s pyproject.toml"
    settings, why = trusted_settings.parse(lineage.git(root, "show", f"{ref}:./pyproject.toml"), source)
    trusted = trusted_settings.Trusted(source, settings)
    try:
        own = config.load(root / "pyproject.toml")
    except config.ConfigError:
        own = {}
    return trusted, ref, ([why] if why else []) + [trusted_settings.described(trusted, own)]


def base_allowed_signers(root: Path, remote: str, dest: Path,
                         trusted: trusted_settings.Trusted | None = None,
                         default_ref: str | None = None) -> tuple[Path | None, str]:
    """(the trusted allowed-signers list copied to `dest`, or None when there is none; one line saying
    which list is trusted). None trusts no key: pulled units stay unverified and are rebuilt."""
    if trusted is None:
        trusted, default_ref, _ = default_branch_settings(root, remote)
    if default_ref is None:
        return None, ("no base branch here to read the allowed signers from, so no pulled unit is trusted "
                      "(fetch the default branch)")
    ref = default_ref
    target = lineage.ci_target_branch()
    if target and target in (trusted.settings.get("trusted_branches") or []):
        target_ref = lineage.base_branch_ref(root, remote, target)
        if target_ref:
            ref = target_ref  # a protected branch the default branch names: its own list
    setting = str(trusted.settings.get("allowed_signers") or signing.DEFAULT_ALLOWED_SIGNERS)
    if Path(setting).is_absolute():  # a file of the CI machine, not of the change
        return Path(setting), f"trusting the signers in {setting} (named by {default_ref}'s pyproject.toml)"
    # "<ref>:./<path>": git reads the path relative to the working directory, the project's folder, so a
    # project below its repository's top (a monorepo's fpga/) reads its own file; at the top it is "<ref>:<path>"
    text = lineage.git(root, "show", f"{ref}:./{setting}")
    if text is None:
        return None, f"{ref} has no {setting}, so no pulled unit is trusted"
    write_text_atomic(dest, text + "\n")
    why = "" if ref == default_ref else f", a branch {default_ref}'s trusted_branches names"
    note = f"trusting the signers of {setting} on {ref}{why}, not this change's"
    own = root / setting
    if not own.is_file() or own.read_text(errors="replace").strip() != text.strip():
        note += f" (this change edits {setting}: its keys are trusted once it is merged)"
    return dest, note
