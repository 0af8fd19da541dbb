"""The parser from raw text (words in, no tags): the table of results.md.
Its runs are the `raw-parser` rows of benchmarks/experiments.py: each EWT
row is `spacy train configs/pipeline_ewt.cfg` (tagger and parser trained
together; the dev set scored from its words, model-best by dev LAS without
punctuation) with its settings; the `raw_parser/wsj_*` rows are the
unlabelled WSJ sample with gold POS (configs/parser_wsj.cfg), the paper's
setting. Each model-best is scored on test once (benchmarks/parser_eval.py).

    python benchmarks/run.py stage raw-parser        # jackknife, train, score, time
    python benchmarks/raw_parser.py [--output F]     # the table
    python benchmarks/run.py commands raw-parser     # the spacy train commands"""
import argparse
import json
import shlex
import sys
from pathlib import Path
from typing import Optional, Tuple

sys.path.insert(0, str(Path(__file__).parent))
import experiments as X  # noqa: E402


def read(path: Path) -> Optional[dict]:
    return json.loads(path.read_text()) if path.exists() else None


def best_dev(name: str) -> Tuple[object, object]:
    """(best dev score, its epoch) from the run's curve, if it has one."""
    path = Path(f"metrics/curves/{name}.jsonl")
    if not path.exists():
        return None, None
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    best = max(rows, key=lambda r: r["score"])
    return round(100 * best["score"], 2), best["epoch"] + 1


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--output", default=None)
    args = ap.parse_args(argv)
    lines = ["| setting | UAS | LAS | UAS no punct | LAS no punct | best dev (LAS no punct) | epoch |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    wsj = ["", "| WSJ sample, gold POS, unlabelled | UAS | UAS no punct |", "| --- | --- | --- |"]
    for e in X.group("raw-parser"):
        s = read(Path(X.metrics_file(e.name, "full")))
        if s is None:
            continue
        if e.data == "wsj":
            wsj.append(f"| {e.label} (`{e.name}`) | {100 * s['uas']:.2f} | {100 * s['uas_nopunct']:.2f} |")
            continue
        dev, epoch = best_dev(e.name) if e.curves else (None, None)
        lines.append(f"| {e.label} (`{e.name}`) | {100 * s['uas']:.2f} | {100 * s['las']:.2f} | "
                     f"{100 * s['uas_nopunct']:.2f} | {100 * s['las_nopunct']:.2f} | "
                     f"{'-' if dev is None else dev} | {'-' if epoch is None else epoch} |")
    runs = ["", "Commands (`python benchmarks/run.py commands raw-parser`; the jackknifed corpus "
            "first, the `raw-parser` project command's first step):", ""]
    runs += [f"* `{e.name}`: `{shlex.join(X.train_command(e))}`" for e in X.group("raw-parser")]
    text = "\n".join(lines + wsj + runs) + "\n"
    if args.output:
        Path(args.output).write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
