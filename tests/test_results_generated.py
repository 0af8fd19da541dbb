"""benchmarks/results.md is generated: it is exactly what benchmarks/report.py
writes from the committed metrics/ (`spacy project run report`), so a hand
edit of results.md, or a metrics file changed without regenerating it, fails
here. Findings and the figures kept by hand go in benchmarks/NOTES.md."""
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results.md"


def generate(tmp_path: Path) -> bytes:
    """report.py's output from the committed metrics, written under tmp_path."""
    out = tmp_path / "results.md"
    subprocess.run([sys.executable, "-m", "benchmarks.report", "--metrics", "metrics", "--scale", "full",
                    "--output", str(out)], cwd=ROOT, check=True, capture_output=True)
    return out.read_bytes()


def test_results_md_is_what_report_py_writes_from_metrics(tmp_path):
    generated = generate(tmp_path)
    if generated != RESULTS.read_bytes():
        old, new = RESULTS.read_text().splitlines(), generated.decode().splitlines()
        first = next((i for i, (a, b) in enumerate(zip(old, new)) if a != b), min(len(old), len(new)))
        raise AssertionError(
            f"benchmarks/results.md differs from what benchmarks/report.py writes from metrics/ "
            f"(first at line {first + 1}: {old[first:first + 1]} vs {new[first:first + 1]}): "
            "run `spacy project run report` (or `python -m benchmarks.report`) and commit the "
            "result; findings go in benchmarks/NOTES.md, not in results.md")


def test_results_md_reads_neither_training_nor_the_quick_run(tmp_path):
    """The same bytes from a copy of metrics/ alone, in a directory with no
    training/ and no metrics/quick/ next to it (a fresh clone; the benchmarks
    package imported from the checkout)."""
    import shutil
    copy = tmp_path / "clone"
    shutil.copytree(ROOT / "metrics", copy / "metrics", ignore=shutil.ignore_patterns("quick"))
    out = tmp_path / "results.md"
    subprocess.run([sys.executable, "-m", "benchmarks.report", "--metrics", str(copy / "metrics"),
                    "--output", str(out)], cwd=copy, check=True, capture_output=True,
                   env={**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])})
    text = out.read_text()
    # the header names the metrics directory as given; the rest is the same
    assert text.replace(f"`{(copy / 'metrics').as_posix()}/`", "`metrics/`") == RESULTS.read_text()
