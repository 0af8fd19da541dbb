"""The benchmark workflow, a package around one table: experiments.py (every
training run, speed comparison and step). run.py runs its rows (what
project.yml's commands call), report.py writes results.md from metrics/
alone and plots.py its figures; gold.py (the gold data, the task inputs and
scores), harness.py (how a measurement runs) and curves.py are shared; the
rest measure one thing each. Run them from the repository root as modules:
`python -m benchmarks.run stage GROUP`, `python -m benchmarks.speed ...`."""
