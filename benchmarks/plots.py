"""Figures for results.md (matplotlib, PNG) from what the workflow left in metrics/.

    python benchmarks/plots.py [--metrics metrics] [--output benchmarks/plots]

* depth.png: accuracy against lookahead depth, with the time per token
  (Tsuruoka et al. Tables 1-4 as a picture): tagger, chunker, NER, parser.
* sapo_vs_perceptron.png: per task, the logged score and the mean |w| per
  epoch of SAPO and of the averaged perceptron (Sun et al. Figs. 2 and 3).
* violation_fixing.png: parser dev score per epoch for each beam update
  method (Huang et al. Fig. 6), from the runs' logged curves (metrics/curves/).
* fr_feedback.png: clause F1 on dev per epoch with recognition (FR) and
  classification (CO-VP) feedback, and the filters' F1 upper bound
  (Carreras et al. Figs. 3 and 5), from the clauses rows' logged curves
  (metrics/curves/clauses_fr.jsonl, clauses_co.jsonl).
A figure whose data is missing is skipped: the file there is left as it is.
`drawable(metrics)` names the figures the metrics have data for (report.py
links those). --metrics is one scale's directory: metrics/ for the full run
(into benchmarks/plots/), metrics/quick/ for the quick run (into
benchmarks/quick/plots/); the full run's figures never come from the quick
run's metrics.
"""
import argparse
import importlib.util
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from curves import SAPO_PAIRS, epoch_points, per_epoch, read_curve  # noqa: E402


def _sapo_points(metrics: Path, name: str, key: str, component: str) -> list:
    return per_epoch(read_curve(metrics / "curves" / f"{name}.jsonl"), key, component)


def has_sapo_curves(metrics: Path) -> bool:
    return any(_sapo_points(metrics, name, key, component)
               for perc, sapo, _, key, component in SAPO_PAIRS for name in (perc, sapo))


def sapo_vs_perceptron(metrics: Path, output: Path, note: str = "") -> bool:
    if not has_sapo_curves(metrics):
        return False
    plt = _plt()
    fig, axes = plt.subplots(2, len(SAPO_PAIRS), figsize=(4.2 * len(SAPO_PAIRS), 6.5), squeeze=False)
    drew = False
    for col, (perc, sapo, title, key, component) in enumerate(SAPO_PAIRS):
        for name, label, style in ((perc, "averaged perceptron (depth 1)", "o-"),
                                   (sapo, "SAPO (n = 5)", "s-")):
            points = _sapo_points(metrics, name, key, component)
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
        if axes[0][col].lines:
            axes[0][col].legend(fontsize=8)
    if drew:
        _save(fig, output / "sapo_vs_perceptron.png", note)
    plt.close(fig)
    return drew


def _json(path: Path):
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def _save(fig, path: Path, note: str) -> None:
    if note:
        fig.suptitle(note, fontsize=9, color="gray")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)


def _plt():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


# (title, accuracy key, speed file, [(depth, metrics name)], parser?)
DEPTH_TASKS = [
    ("POS tagging (EWT test)", "tag_acc", "tagger_speed.json",
     [(0, "tagger_d0"), (1, "tagger_d1"), (2, "tagger_d2")]),
    ("Chunking (CoNLL-2000 test F1)", "f", "chunk_speed.json",
     [(0, "chunker_d0"), (1, "chunker_d1"), (2, "chunker_d2")]),
    ("Bio-NER rtl (JNLPBA test F1)", "f", "ner_speed.json",
     [(0, "ner_rtl_d0"), (1, "ner_rtl_d1"), (2, "ner_rtl_d2")]),
]


def has_depth_scores(metrics: Path) -> bool:
    return any((_json(metrics / f"{name}.json") or {}).get(key) is not None
               for _, key, _, runs in DEPTH_TASKS for _, name in runs)


def depth(metrics: Path, output: Path, note: str = "") -> bool:
    if not has_depth_scores(metrics):
        return False
    plt = _plt()
    fig, axes = plt.subplots(1, len(DEPTH_TASKS), figsize=(4.2 * len(DEPTH_TASKS), 3.6), squeeze=False)
    drew = False
    for ax, (title, key, speed_file, runs) in zip(axes[0], DEPTH_TASKS):
        speed = (_json(metrics / speed_file) or {}).get("models", {})
        xs, accs, usec = [], [], []
        for d, name in runs:
            acc = (_json(metrics / f"{name}.json") or {}).get(key)
            if acc is None:
                continue
            tps = speed.get(name, {}).get("tokens_per_second")
            xs.append(d)
            accs.append(100 * acc)
            usec.append(1e6 / tps if tps else None)
        if not xs:
            continue
        drew = True
        ax.plot(xs, accs, "o-", color="tab:blue")
        ax.set_xlabel("lookahead depth D")
        ax.set_ylabel("accuracy / F1", color="tab:blue")
        ax.set_xticks(xs)
        ax.set_title(title, fontsize=9)
        if any(u is not None for u in usec):
            ax2 = ax.twinx()
            ax2.plot([x for x, u in zip(xs, usec) if u], [u for u in usec if u], "s--", color="tab:red")
            ax2.set_yscale("log")
            ax2.set_ylabel("microseconds per token (log)", color="tab:red")
    if drew:
        _save(fig, output / "depth.png", note)
    plt.close(fig)
    return drew


def _violation_runs(metrics: Path) -> dict:
    from report_parser import parser_curves  # the parser rows' logged curves, per epoch
    return {k.replace("parser_ewt_", ""): v for k, v in parser_curves(metrics).items()
            if k.startswith("parser_ewt_beam8")}  # one data set


def violation_fixing(metrics: Path, output: Path, note: str = "") -> bool:
    runs = _violation_runs(metrics)
    if not runs:
        return False
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6, 4))
    for name, points in sorted(runs.items()):
        ax.plot([p["epoch"] for p in points], [100 * p["score"] for p in points], "o-",
                label=name)
    ax.set_xlabel("epoch")
    ax.set_ylabel("dev LAS, no punctuation")
    ax.set_title("EWT, beam 8: violation-fixing updates (Huang et al. Fig. 6)", fontsize=9)
    ax.legend(fontsize=8)
    _save(fig, output / "violation_fixing.png", note)
    plt.close(fig)
    return True


def _feedback_runs(metrics: Path) -> list:
    runs = [(feedback, epoch_points(read_curve(metrics / "curves" / f"{name}.jsonl")))
            for name, feedback in (("clauses_fr", "recognition"), ("clauses_co", "classification"))]
    return [(n, points) for n, points in runs if points]


def fr_feedback(metrics: Path, output: Path, note: str = "") -> bool:
    """Dev clause F1 and the filters' F1 bound per epoch (the last evaluation
    of each epoch) of the clauses rows, from their `spacy train` curves."""
    runs = _feedback_runs(metrics)
    if not runs:
        return False
    plt = _plt()
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    for name, points in runs:
        epochs = [p["epoch"] for p in points]
        ax.plot(epochs, [100 * (p["scores"].get("spans_clauses_f") or 0) for p in points], "o-",
                label=f"{name} feedback")
        bound = [(p["epoch"], 100 * p["scores"]["spans_clauses_f_bound"]) for p in points
                 if "spans_clauses_f_bound" in p["scores"]]
        if bound:
            ax2.plot(*zip(*bound), "o-", label=f"{name} feedback")
    ax.set_title("Clause F1 on dev (Carreras et al. Fig. 3)", fontsize=9)
    ax2.set_title("F1 upper bound of the filters' candidates (Fig. 5)", fontsize=9)
    for a in (ax, ax2):
        a.set_xlabel("epoch")
        a.legend(fontsize=8)
    _save(fig, output / "fr_feedback.png", note)
    plt.close(fig)
    return True


FIGURES = (("depth.png", depth), ("sapo_vs_perceptron.png", sapo_vs_perceptron),
           ("violation_fixing.png", violation_fixing), ("fr_feedback.png", fr_feedback))


def drawable(metrics: Path) -> set:
    """The figures of FIGURES that these metrics have data for (what main draws)."""
    checks = {"depth.png": has_depth_scores, "sapo_vs_perceptron.png": has_sapo_curves,
              "violation_fixing.png": lambda m: bool(_violation_runs(m)),
              "fr_feedback.png": lambda m: bool(_feedback_runs(m))}
    return {name for name, _ in FIGURES if checks[name](metrics)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--metrics", type=Path, default=Path("metrics"),
                    help="one scale's metrics: metrics (full) or metrics/quick")
    ap.add_argument("--output", type=Path, default=Path("benchmarks/plots"))
    args = ap.parse_args(argv)
    if not drawable(args.metrics):
        print(f"plots.py: no figure has data in {args.metrics}: nothing written")
        return 0
    if importlib.util.find_spec("matplotlib") is None:
        sys.exit("plots.py: matplotlib is missing: run `spacy project run install-benchmark-requirements`")
    quick = args.metrics.name == "quick"
    note = "quick run (a smoke test on small slices: says nothing about the methods)" if quick else ""
    for name, draw in FIGURES:
        if draw(args.metrics, args.output, note):
            print(f"plots.py: {name}: written")
        else:
            print(f"plots.py: {name}: no data (left as it is)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
