"""SAPO on JNLPBA: why it trails the perceptron, found on held-out training
data (never on test). Every run is `spacy train configs/ner_jnlpba.cfg`
on the first 90% of the training file, scored each epoch on its last 10%
(the readers' held_out / part settings), with one setting changed from
Sun et al.'s (n = 5, gamma 0.1 decaying by 0.8, exact A* top-n, no
averaging, first-order features; lambda 1, the project's NER default).

    python benchmarks/run.py stage sapo-ablations       # train (rows sapo_ablations/*)
    python benchmarks/sapo_ablations.py report [--plot F] [--output F]
    python benchmarks/run.py commands sapo-ablations    # their spacy train commands

The runs are the rows `sapo_ablations/NAME` of benchmarks/experiments.py;
`report` writes the table (best dev F1 and its epoch, last-epoch F1, fitted
temperature, seconds) and the per-epoch dev F1 plot, one panel per group."""
import argparse
import json
import sys
from pathlib import Path
from typing import List

sys.path.insert(0, str(Path(__file__).parent))
import experiments as X  # noqa: E402

ABLATIONS = X.SAPO_ABLATIONS  # the runs are rows of the experiment table


def read(name: str) -> List[dict]:
    path = Path("metrics/curves/sapo_ablations") / f"{name}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] \
        if path.exists() else []


def report(args) -> int:
    rows = ["| setting | group | best dev F1 | at epoch | last F1 | epochs | fitted tau | seconds |",
            "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    curves = {}
    for name, (group, _) in ABLATIONS.items():
        curve = read(name)
        if not curve:
            continue
        curve = [r for r in curve if r["step"] > 0]  # spaCy also scores the untrained model
        f1 = [r["scores"].get("ents_f", r["score"]) for r in curve]
        curves[name] = (group, f1)
        best = max(range(len(f1)), key=f1.__getitem__)
        tau = curve[best]["scores"].get("lookahead_ner_temperature")
        timing = Path("metrics") / "sapo_ablations" / f"time_{name}.json"
        seconds = json.loads(timing.read_text())["wall_seconds"] if timing.exists() else None
        rows.append(f"| {name} | {group} | {100 * f1[best]:.2f} | {best + 1} | {100 * f1[-1]:.2f} | "
                    f"{len(f1)} | {'-' if tau is None else f'{tau:.3f}'} | "
                    f"{'-' if seconds is None else f'{seconds:.0f}'} |")
    text = "\n".join(rows) + "\n"
    print(text)
    if args.output:
        Path(args.output).write_text(text)
    if args.plot and curves:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        groups = sorted({g for g, _ in curves.values()} - {"base"})
        fig, axes = plt.subplots(2, (len(groups) + 1) // 2, figsize=(4 * ((len(groups) + 1) // 2), 7),
                                 sharey=True, squeeze=False)
        for ax, group in zip(axes.flat, groups):
            for name, (g, f1) in curves.items():
                if g in (group, "base"):
                    ax.plot(range(1, len(f1) + 1), [100 * v for v in f1], marker=".", label=name,
                            linestyle="--" if g == "base" else "-")
            ax.set_title(group)
            ax.set_xlabel("epoch")
            ax.legend(fontsize=7)
        axes.flat[0].set_ylabel("dev F1 (last 10% of train)")
        fig.tight_layout()
        Path(args.plot).parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(args.plot, dpi=100)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="what", required=True)
    p = sub.add_parser("report")
    p.add_argument("--plot", default=None)
    p.add_argument("--output", default=None)
    return report(parser.parse_args())


if __name__ == "__main__":
    sys.exit(main())
