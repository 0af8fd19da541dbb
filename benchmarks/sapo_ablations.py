"""SAPO on JNLPBA: why it trails the perceptron, found on held-out training
data (never on test). Every run (the rows `sapo_ablations/NAME` of
benchmarks/experiments.py) is `spacy train configs/ner_jnlpba.cfg` on the
first 90% of the training file, scored each epoch on its last 10%, with one
setting changed from Sun et al.'s (n = 5, gamma 0.1 decaying by 0.8, exact
A* top-n, no averaging, first-order features; lambda 1, the project's NER default).

    python -m benchmarks.run stage sapo-ablations          # train
    python -m benchmarks.sapo_ablations report [--plot F] [--output F]

`report` writes the table (best dev F1 and its epoch, last-epoch F1,
fitted temperature, seconds) and the per-epoch dev F1, one panel per group."""
import argparse
import sys
from pathlib import Path

from benchmarks import experiments as X
from benchmarks.curves import read_curve
from benchmarks.report import read_json


def report(output=None, plot=None) -> int:
    rows = ["| setting | group | best dev F1 | at epoch | last F1 | epochs | fitted tau | seconds |",
            "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    curves = {}
    for name, (group, _) in X.SAPO_ABLATIONS.items():
        # spaCy also scores the untrained model (step 0)
        curve = [r for r in read_curve(Path("metrics/curves/sapo_ablations") / f"{name}.jsonl") if r["step"] > 0]
        if not curve:
            continue
        f1 = [r["scores"].get("ents_f", r["score"]) for r in curve]
        curves[name] = (group, f1)
        best = max(range(len(f1)), key=f1.__getitem__)
        tau = curve[best]["scores"].get("lookahead_ner_temperature")
        seconds = (read_json(Path("metrics/sapo_ablations") / f"time_{name}.json") or {}).get("wall_seconds")
        rows.append(f"| {name} | {group} | {100 * f1[best]:.2f} | {best + 1} | {100 * f1[-1]:.2f} | {len(f1)} | "
                    f"{'-' if tau is None else f'{tau:.3f}'} | {'-' if seconds is None else f'{seconds:.0f}'} |")
    text = "\n".join(rows) + "\n"
    print(text)
    if output:
        Path(output).write_text(text)
    if plot and curves:
        from benchmarks.plots import ablations
        ablations(curves, Path(plot))
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="what", required=True)
    p = sub.add_parser("report")
    p.add_argument("--plot", default=None)
    p.add_argument("--output", default=None)
    args = ap.parse_args(argv)
    return report(args.output, args.plot)


if __name__ == "__main__":
    sys.exit(main())
