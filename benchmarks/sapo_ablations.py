"""SAPO on JNLPBA: why it trails the perceptron, found on held-out training
data (never on test). Every run is `spacy train configs/ner_jnlpba.cfg`
on the first 90% of the training file, scored each epoch on its last 10%
(the readers' held_out / part settings), with one setting changed from
Sun et al.'s (n = 5, gamma 0.1 decaying by 0.8, exact A* top-n, no
averaging, first-order features; lambda 1, the project's NER default).

    python benchmarks/sapo_ablations.py run [NAME ...] [--train F] [--epochs N]
    python benchmarks/sapo_ablations.py report [--plot F] [--output F]
    python benchmarks/sapo_ablations.py commands

`run` trains each named setting (all by default) that has no curve yet and
prints the `spacy train` command it runs; `report` writes the table (best
dev F1 and its epoch, last-epoch F1, fitted temperature, seconds) and the
per-epoch dev F1 plot, one panel per group."""
import argparse
import json
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Tuple

CONFIG = "configs/ner_jnlpba.cfg"
TRAIN = "assets/jnlpba/train.iob2"
OUT = Path("training/sapo_ablations")
CURVES = Path("metrics/sapo_ablations")
# batches per epoch on the 90% (batch_by_words, 1000 words): one evaluation per epoch
EVAL_FREQUENCY = 451
SAPO = {"learner": "sapo", "direction": "rtl", "l2": 1.0}

# name: (group, the settings changed from SAPO's base)
ABLATIONS: Dict[str, Tuple[str, Dict[str, object]]] = {
    "base": ("base", {}),
    "perceptron_d1": ("base", {"learner": "perceptron", "l2": None}),
    "n10": ("n", {"n": 10}),
    "n20": ("n", {"n": 20}),
    "n50": ("n", {"n": 50}),
    "l2_0.1": ("lambda", {"l2": 0.1}),
    "l2_0.5": ("lambda", {"l2": 0.5}),
    "l2_2": ("lambda", {"l2": 2.0}),
    "l2_5": ("lambda", {"l2": 5.0}),  # Sun et al.'s lambda for Bio-NER
    "gamma_0.05": ("schedule", {"learning_rate": 0.05}),
    "gamma_0.2": ("schedule", {"learning_rate": 0.2}),
    "decay_0.9": ("schedule", {"learning_rate_decay": 0.9}),
    "decay_1": ("schedule", {"learning_rate_decay": 1.0}),
    "ltr": ("direction", {"direction": "ltr"}),
    "beam50": ("search", {"search": "beam", "beam_width": 50, "update": "standard"}),
    "averaged": ("averaging", {"average": True}),
    "averaged_gamma_0.05": ("averaging", {"average": True, "learning_rate": 0.05}),
    "label_trigrams": ("features", {"label_trigrams": True}),
}


def settings_of(name: str) -> Dict[str, object]:
    return {k: v for k, v in {**SAPO, **ABLATIONS[name][1]}.items() if v is not None}


def command(name: str, train: str, epochs: int) -> List[str]:
    cmd = ["python", "-m", "spacy", "train", CONFIG, "--output", str(OUT / name),
           "--paths.train", train, "--paths.dev", train,
           "--corpora.train.held_out", "0.1", "--corpora.train.part", "rest",
           "--corpora.dev.held_out", "0.1", "--corpora.dev.part", "held_out",
           "--training.max_epochs", str(epochs), "--training.eval_frequency", str(EVAL_FREQUENCY),
           "--paths.curves", str(CURVES / f"{name}.jsonl")]
    for key, value in settings_of(name).items():
        cmd += [f"--components.lookahead_ner.{key}", json.dumps(value) if isinstance(value, bool)
                else str(value)]
    return cmd


def run(args) -> int:
    names = args.names or list(ABLATIONS)
    unknown = [n for n in names if n not in ABLATIONS]
    if unknown:
        sys.exit(f"unknown ablations {unknown}: choose from {list(ABLATIONS)}")
    for name in names:
        curve = CURVES / f"{name}.jsonl"
        if curve.exists() and curve.stat().st_size and not args.force:
            print(f"{name}: done ({curve})")
            continue
        cmd = command(name, args.train, args.epochs)
        print("$", shlex.join(cmd), flush=True)
        rc = subprocess.call([sys.executable, "benchmarks/timed.py", f"sapo_ablations/{name}", "--"]
                             + cmd)
        if rc != 0:
            return rc
    return 0


def read(name: str) -> List[dict]:
    path = CURVES / f"{name}.jsonl"
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
    r = sub.add_parser("run")
    r.add_argument("names", nargs="*")
    r.add_argument("--train", default=TRAIN)
    r.add_argument("--epochs", type=int, default=10)
    r.add_argument("--force", action="store_true", help="train again where a curve exists")
    p = sub.add_parser("report")
    p.add_argument("--plot", default=None)
    p.add_argument("--output", default=None)
    c = sub.add_parser("commands")
    c.add_argument("--train", default=TRAIN)
    c.add_argument("--epochs", type=int, default=10)
    args = parser.parse_args()
    if args.what == "commands":
        for name in ABLATIONS:
            print(f"{name}: {shlex.join(command(name, args.train, args.epochs))}")
        return 0
    return run(args) if args.what == "run" else report(args)


if __name__ == "__main__":
    sys.exit(main())
