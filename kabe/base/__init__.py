"""The foundation: console, errors, paths, git, the board's bitfile encoding, the ssh policy;
imports nothing of kabe above it."""
