"""The rules a build is judged by: the gate (absolute limits), the one verdict every consumer
asks (kabe.rules.verdict), the regressions against a base commit, and what a verdict means to
whoever asked (kabe.rules.outcome: an exit code and one line)."""
