"""Figures for results.md (matplotlib, PNG) from the curves in metrics/curves/.

    python benchmarks/plots.py [--metrics metrics] [--output benchmarks/plots]

sapo_vs_perceptron.png: per task, the logged score and the mean |w| per
epoch of SAPO and of the averaged perceptron (Sun et al. Figs. 2 and 3).
"""
import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from curves import SAPO_PAIRS, per_epoch, read_curve  # noqa: E402


def sapo_vs_perceptron(metrics: Path, output: Path) -> bool:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(2, len(SAPO_PAIRS), figsize=(4.2 * len(SAPO_PAIRS), 6.5), squeeze=False)
    drew = False
    for col, (perc, sapo, title, key, component) in enumerate(SAPO_PAIRS):
        for name, label, style in ((perc, "averaged perceptron (depth 1)", "o-"),
                                   (sapo, "SAPO (n = 5)", "s-")):
            points = per_epoch(read_curve(metrics / "curves" / f"{name}.jsonl"), key, component)
            if not points:
                continue
            drew = True
            epochs = [p["epoch"] for p in points]
            axes[0][col].plot(epochs, [100 * (p["score"] or 0) for p in points], style, label=label)
            axes[1][col].plot(epochs, [p["w_mean_abs"] for p in points], style, label=label)
        axes[0][col].set_title(title, fontsize=9)
        axes[0][col].set_ylabel(key)
        axes[1][col].set_ylabel("mean |w| (training weights)")
        axes[1][col].set_xlabel("epoch")
        axes[0][col].legend(fontsize=8)
    if drew:
        fig.tight_layout()
        output.mkdir(parents=True, exist_ok=True)
        fig.savefig(output / "sapo_vs_perceptron.png", dpi=110)
    plt.close(fig)
    return drew


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--metrics", type=Path, default=Path("metrics"))
    ap.add_argument("--output", type=Path, default=Path("benchmarks/plots"))
    args = ap.parse_args(argv)
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        sys.exit("plots.py: matplotlib is missing: run `spacy project run install-benchmark-requirements`")
    for name, draw in (("sapo_vs_perceptron.png", sapo_vs_perceptron),):
        print(f"plots.py: {name}: " + ("written" if draw(args.metrics, args.output) else "no data"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
