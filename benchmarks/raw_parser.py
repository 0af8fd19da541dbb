"""The parser from raw text (words in, no tags): the table of the
`raw-parser` rows of benchmarks/experiments.py. Each EWT row is `spacy
train configs/pipeline_ewt.cfg` (tagger and parser together, dev scored
from its words, model-best by dev LAS without punctuation); the
`raw_parser/wsj_*` rows are the unlabelled WSJ sample with gold POS
(configs/parser_wsj.cfg); each model-best scored once (benchmarks/parser_eval.py).

    python -m benchmarks.run stage raw-parser       # jackknife, train, score, time
    python -m benchmarks.raw_parser [--output F]    # the table, from metrics/"""
import argparse
import sys
from pathlib import Path

from benchmarks import experiments as X
from benchmarks.curves import read_curve
from benchmarks.report import commands, read_json


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--output", default=None)
    args = ap.parse_args(argv)
    lines = ["| setting | UAS | LAS | UAS no punct | LAS no punct | best dev (LAS no punct) | epoch |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    wsj = ["", "| WSJ sample, gold POS, unlabelled | UAS | UAS no punct |", "| --- | --- | --- |"]
    for e in X.group("raw-parser"):
        s = read_json(Path(X.metrics_file(e.name, "full")))
        if s is None:
            continue
        if e.data == "wsj":
            wsj.append(f"| {e.label} (`{e.name}`) | {100 * s['uas']:.2f} | {100 * s['uas_nopunct']:.2f} |")
            continue
        curve = read_curve(Path(f"metrics/curves/{e.name}.jsonl")) if e.curves else []
        best = max(curve, key=lambda r: r["score"]) if curve else None
        lines.append(f"| {e.label} (`{e.name}`) | {100 * s['uas']:.2f} | {100 * s['las']:.2f} | "
                     f"{100 * s['uas_nopunct']:.2f} | {100 * s['las_nopunct']:.2f} | "
                     f"{round(100 * best['score'], 2) if best else '-'} | {best['epoch'] + 1 if best else '-'} |")
    runs = ["", "Commands (`python -m benchmarks.run commands raw-parser`; the jackknifed corpus first, the "
            "`raw-parser` project command's first step):", ""] + commands(X.group("raw-parser"))
    text = "\n".join(lines + wsj + runs) + "\n"
    if args.output:
        Path(args.output).write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
