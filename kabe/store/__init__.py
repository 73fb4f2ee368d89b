"""The shared archive: the per-commit store, its paths, size, signing, fetching from git, safe
file writes and the trusted settings."""
