"""The build cache: the key, its index and stamp, what the tools read, kabe's own code in the key,
the tracked outputs."""
