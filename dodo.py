"""kabe's verbs (`doit list` says each one); the tasks live in the package (kabe/doit_tasks.py), so a
project that pip-installed kabe has the same one-line dodo.py (`kabe init` writes it)."""

from kabe.doit_tasks import *  # noqa: F401,F403
