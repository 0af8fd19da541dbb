"""The figures of results.md (matplotlib, PNG), from the data the report reads.

    python -m benchmarks.plots [--metrics metrics] [--output benchmarks/plots]

From one scale's metrics (metrics/ into benchmarks/plots/, metrics/quick/
into benchmarks/quick/plots/): depth.png (accuracy against lookahead depth,
with the time per token: Tsuruoka et al. Tables 1-4), sapo_vs_perceptron.png
(score and mean |w| per epoch: Sun et al. Figs. 2-3), violation_fixing.png
(parser dev score per epoch of each beam update: Huang et al. Fig. 6),
fr_feedback.png (clause F1 and the filters' F1 bound per epoch: Carreras et
al. Figs. 3, 5), beam_pos.png (Huang et al.'s POS experiment). A figure
whose data is missing is skipped, its file left as it is. calibration.py
(reliability diagrams) and sapo_ablations.py draw theirs with the functions
here."""
import argparse
import importlib.util
import sys
from pathlib import Path

from benchmarks import report as R


def _plt():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def _save(fig, path: Path, note: str = "", dpi: int = 110) -> None:
    if note:
        fig.suptitle(note, fontsize=9, color="gray")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=dpi)
    _plt().close(fig)


def depth(metrics: Path, out: Path, note: str) -> None:
    fig, axes = _plt().subplots(1, len(R.DEPTH_TASKS), figsize=(4.2 * len(R.DEPTH_TASKS), 3.6), squeeze=False)
    for ax, (title, key, speed_file, runs) in zip(axes[0], R.DEPTH_TASKS):
        speed = (R.read_json(metrics / speed_file) or {}).get("models", {})
        points = [(d, 100 * acc, speed.get(name, {}).get("tokens_per_second")) for d, name in runs
                  if (acc := (R.read_json(metrics / f"{name}.json") or {}).get(key)) is not None]
        if not points:
            continue
        xs = [d for d, _, _ in points]
        ax.plot(xs, [a for _, a, _ in points], "o-", color="tab:blue")
        ax.set(xlabel="lookahead depth D", xticks=xs)
        ax.set_ylabel("accuracy / F1", color="tab:blue")
        ax.set_title(title, fontsize=9)
        timed = [(d, 1e6 / tps) for d, _, tps in points if tps]
        if timed:
            ax2 = ax.twinx()
            ax2.plot(*zip(*timed), "s--", color="tab:red")
            ax2.set_yscale("log")
            ax2.set_ylabel("microseconds per token (log)", color="tab:red")
    _save(fig, out, note)


def sapo_vs_perceptron(metrics: Path, out: Path, note: str) -> None:
    pairs = R.SAPO_PAIRS
    fig, axes = _plt().subplots(2, len(pairs), figsize=(4.2 * len(pairs), 6.5), squeeze=False)
    for col, (perc, sapo, title, key, component) in enumerate(pairs):
        for name, label, style in ((perc, "averaged perceptron (depth 1)", "o-"), (sapo, "SAPO (n = 5)", "s-")):
            points = R.sapo_points(metrics, name, key, component)
            if not points:
                continue
            epochs = [p["epoch"] for p in points]
            axes[0][col].plot(epochs, [100 * (p["score"] or 0) for p in points], style, label=label)
            axes[1][col].plot(epochs, [p["w_mean_abs"] for p in points], style, label=label)
        axes[0][col].set_title(title, fontsize=9)
        axes[0][col].set_ylabel(key)
        axes[1][col].set(ylabel="mean |w| (training weights)", xlabel="epoch")
        if axes[0][col].lines:
            axes[0][col].legend(fontsize=8)
    _save(fig, out, note)


def violation_fixing(metrics: Path, out: Path, note: str) -> None:
    fig, ax = _plt().subplots(figsize=(6, 4))
    for name, points in sorted(R.violation_runs(metrics).items()):
        ax.plot([p["epoch"] for p in points], [100 * p["score"] for p in points], "o-", label=name)
    ax.set(xlabel="epoch", ylabel="dev LAS, no punctuation")
    ax.set_title("EWT, beam 8: violation-fixing updates (Huang et al. Fig. 6)", fontsize=9)
    ax.legend(fontsize=8)
    _save(fig, out, note)


def fr_feedback(metrics: Path, out: Path, note: str) -> None:
    fig, (ax, ax2) = _plt().subplots(1, 2, figsize=(10, 4))
    for name, points in R.feedback_runs(metrics):
        ax.plot([p["epoch"] for p in points], [100 * (p["scores"].get("spans_clauses_f") or 0) for p in points],
                "o-", label=f"{name} feedback")
        bound = [(p["epoch"], 100 * p["scores"]["spans_clauses_f_bound"]) for p in points
                 if "spans_clauses_f_bound" in p["scores"]]
        if bound:
            ax2.plot(*zip(*bound), "o-", label=f"{name} feedback")
    ax.set_title("Clause F1 on dev (Carreras et al. Fig. 3)", fontsize=9)
    ax2.set_title("F1 upper bound of the filters' candidates (Fig. 5)", fontsize=9)
    for a in (ax, ax2):
        a.set_xlabel("epoch")
        a.legend(fontsize=8)
    _save(fig, out, note)


def beam_pos(metrics: Path, out: Path, note: str) -> None:
    """Dev accuracy per epoch of the early and max-violation beam taggers,
    and the share of invalid standard updates per width (Huang et al. Fig. 5)."""
    by = {r["name"]: r["curve"] for r in R.tagger_beam_rows(metrics)}
    fig, axes = _plt().subplots(1, 3, figsize=(15, 4.2))
    for ax, update, title in ((axes[0], "early", "early update"), (axes[1], "max_violation", "max-violation update")):
        for k, color in zip(R.WIDTHS, ("C0", "C1", "C2", "C3")):
            c = by[f"tagger_beam{k}_{update}"]
            if c:
                ax.plot([r["epoch"] for r in c], [100 * r["score"] for r in c], color=color, label=f"k={k}",
                        linestyle="-" if update == "early" else "--")
        if by["tagger_d1"]:
            ax.plot([r["epoch"] for r in by["tagger_d1"]], [100 * r["score"] for r in by["tagger_d1"]],
                    color="k", alpha=0.5, label="lookahead D=1")
        ax.set(title=f"EWT dev accuracy, {title}", xlabel="epoch", ylabel="tag accuracy (dev)")
        ax.legend()
    fracs = []
    for k in R.WIDTHS:
        c = by[f"tagger_beam{k}_standard"]
        n = sum(r["updates"] for r in c)
        fracs.append(100 * sum(r["invalid"] for r in c) / n if n else 0.0)
    axes[2].bar([str(k) for k in R.WIDTHS], fracs)
    axes[2].set(title="standard update: invalid updates (Huang et al. Fig. 5)", xlabel="beam width",
                ylabel="% of updates that are not violations")
    _save(fig, out, note, dpi=90)


def reliability(result: dict, out: Path) -> None:
    """calibration.py's reliability diagram: accuracy per bin against its mean probability."""
    bins = [b for b in result["bins"] if b["count"]]
    fig, ax = _plt().subplots(figsize=(4.5, 4.5))
    ax.plot([0, 1], [0, 1], color="grey", linestyle="--", linewidth=1)
    ax.plot([b["mean_probability"] for b in bins], [b["accuracy"] for b in bins], marker="o")
    for b in bins:
        ax.annotate(f"{b['count']:,}", (b["mean_probability"], b["accuracy"]), fontsize=7,
                    textcoords="offset points", xytext=(4, -10))
    ax.set(xlim=(0, 1.02), ylim=(0, 1.02), xlabel="predicted probability (bin mean)",
           ylabel="observed accuracy")
    ax.set_title(f"{result['task']}: ECE {result['ece']:.3f}", fontsize=10)
    _save(fig, out, dpi=100)


def ablations(curves: dict, out: Path) -> None:
    """sapo_ablations.py's dev F1 per epoch, one panel per group with the base run."""
    groups = sorted({g for g, _ in curves.values()} - {"base"})
    cols = (len(groups) + 1) // 2
    fig, axes = _plt().subplots(2, cols, figsize=(4 * cols, 7), sharey=True, squeeze=False)
    for ax, group in zip(axes.flat, groups):
        for name, (g, f1) in curves.items():
            if g in (group, "base"):
                ax.plot(range(1, len(f1) + 1), [100 * v for v in f1], marker=".", label=name,
                        linestyle="--" if g == "base" else "-")
        ax.set(title=group, xlabel="epoch")
        ax.legend(fontsize=7)
    axes.flat[0].set_ylabel("dev F1 (last 10% of train)")
    _save(fig, out, dpi=100)


FIGURES = {"depth.png": depth, "sapo_vs_perceptron.png": sapo_vs_perceptron,
           "violation_fixing.png": violation_fixing, "fr_feedback.png": fr_feedback, "beam_pos.png": beam_pos}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--metrics", type=Path, default=Path("metrics"),
                    help="one scale's metrics: metrics (full) or metrics/quick")
    ap.add_argument("--output", type=Path, default=Path("benchmarks/plots"))
    args = ap.parse_args(argv)
    drawn = R.drawable(args.metrics)
    if not drawn:
        print(f"plots.py: no figure has data in {args.metrics}: nothing written")
        return 0
    if importlib.util.find_spec("matplotlib") is None:
        sys.exit("plots.py: matplotlib is missing: run `spacy project run install-benchmark-requirements`")
    quick = args.metrics.name == "quick"
    note = "quick run (a smoke test on small slices: says nothing about the methods)" if quick else ""
    for name, draw in FIGURES.items():
        if name in drawn:
            draw(args.metrics, args.output / name, note)
        print(f"plots.py: {name}: " + ("written" if name in drawn else "no data (left as it is)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
