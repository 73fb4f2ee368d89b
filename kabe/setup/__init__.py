"""Setting a project up: `kabe init`/`kabe new` (project_init, its templates) and `kabe doctor`."""
