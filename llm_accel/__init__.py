"""llm_accel: this repository's project on kabe: its designs' golden models (model/), its study (perf/,
figures.py) and the study's report-page sections (page.py). Not part of the kabe wheel."""
