"""The one-engine section of results.md (the `engine` rows of benchmarks/experiments.py):
beam search for the tagger (Huang et al. 2012's POS experiment on EWT),
chunker and NER; SAPO for the parser. Also draws plots/beam_pos.png (linked
only where the metrics hold a curve it draws: the beam rows', tagger_d1's).

    python benchmarks/report_engine.py [--metrics metrics] [--plots benchmarks/plots]
"""
import argparse
import json
import shlex
import sys
from pathlib import Path
from typing import Dict, List, Optional

sys.path.insert(0, str(Path(__file__).parent))
import experiments as X  # noqa: E402

WIDTHS = (1, 2, 4, 8)
UPDATES = ("early", "max_violation", "standard")


def read_json(path: Path):
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def epochs(curve_file: Path, component: str) -> List[Dict]:
    """The last logged row of each epoch (the curves logger evaluates every
    eval_frequency steps), with per-epoch update seconds and beam updates."""
    if not curve_file.exists():
        return []
    rows = [json.loads(line) for line in curve_file.read_text().splitlines() if line.strip()]
    last: Dict[int, Dict] = {}
    for row in rows:
        last[row["epoch"]] = row
    out, prev = [], {"seconds": 0.0, "updates": 0.0, "invalid": 0.0}
    for epoch in sorted(last):
        s = last[epoch]["scores"]
        now = {"seconds": s.get(f"{component}_update_seconds", 0.0),
               "updates": s.get(f"{component}_beam_updates", 0.0),
               "invalid": s.get(f"{component}_beam_invalid", 0.0)}
        out.append({"epoch": epoch + 1, "score": last[epoch]["score"],
                    "seconds": now["seconds"] - prev["seconds"],
                    "updates": now["updates"] - prev["updates"],
                    "invalid": now["invalid"] - prev["invalid"]})
        prev = now
    # spaCy logs epoch e while in it: a row at the start of epoch e+1 belongs to
    # epoch e's end only approximately; the per-epoch figures are per logged epoch.
    return out


def fmt(value, spec=".2f", scale=100.0) -> str:
    return "-" if value is None else format(value * scale, spec)


def tagger_rows(metrics: Path):
    rows = []
    for name, label in ([(f"tagger_beam{k}_{u}", f"beam k={k}, {u.replace('_', '-')} update")
                         for k in WIDTHS for u in UPDATES]
                        + [("tagger_d1", "lookahead depth 1 (margin perceptron)")]):
        test = read_json(metrics / f"{name}.json")
        curve = epochs(metrics / "curves" / f"{name}.jsonl", "lookahead_tagger")
        best = max(curve, key=lambda r: r["score"]) if curve else None
        updates = sum(r["updates"] for r in curve)
        invalid = sum(r["invalid"] for r in curve)
        rows.append({"name": name, "label": label, "test": test and test.get("tag_acc"),
                     "best_dev": best and best["score"], "best_epoch": best and best["epoch"],
                     "epochs": len(curve),
                     "seconds": (sum(r["seconds"] for r in curve) / len(curve)) if curve else None,
                     "invalid": f"{int(invalid)}/{int(updates)} ({100 * invalid / updates:.1f}%)"
                     if updates and name.endswith("standard") else "-",
                     "curve": curve})
    return rows


def epochs_to_reach(curve: List[Dict], target: float) -> Optional[int]:
    for r in curve:
        if r["score"] >= target:
            return r["epoch"]
    return None


def plot(rows, out: Path) -> None:
    if not any(r["curve"] for r in rows):
        return  # nothing run (e.g. the quick workflow): keep the figure there is
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    by = {r["name"]: r for r in rows}
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
    for u, style in zip(UPDATES, ("-", "--", ":")):
        for k, color in zip(WIDTHS, ("C0", "C1", "C2", "C3")):
            c = by.get(f"tagger_beam{k}_{u}", {}).get("curve") or []
            if c and u != "standard":
                axes[0 if u == "early" else 1].plot([r["epoch"] for r in c],
                                                    [100 * r["score"] for r in c], style,
                                                    color=color, label=f"k={k}")
    d1 = by.get("tagger_d1", {}).get("curve") or []
    for ax, title in zip(axes[:2], ("early update", "max-violation update")):
        if d1:
            ax.plot([r["epoch"] for r in d1], [100 * r["score"] for r in d1], color="k",
                    alpha=0.5, label="lookahead D=1")
        ax.set_title(f"EWT dev accuracy, {title}")
        ax.set_xlabel("epoch")
        ax.set_ylabel("tag accuracy (dev)")
        ax.legend()
    fracs = []
    for k in WIDTHS:
        c = by.get(f"tagger_beam{k}_standard", {}).get("curve") or []
        n = sum(r["updates"] for r in c)
        fracs.append(100 * sum(r["invalid"] for r in c) / n if n else 0.0)
    axes[2].bar([str(k) for k in WIDTHS], fracs)
    axes[2].set_title("standard update: invalid updates (Huang et al. Fig. 5)")
    axes[2].set_xlabel("beam width")
    axes[2].set_ylabel("% of updates that are not violations")
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=90)
    plt.close(fig)


def span_rows(metrics: Path):
    rows = []
    for name, task, label in (("chunker_d1", "CoNLL-2000 chunking", "lookahead depth 1"),
                              ("chunker_beam8_max_violation", "CoNLL-2000 chunking",
                               "beam k=8, max-violation"),
                              ("ner_rtl_d1", "JNLPBA NER (rtl)", "lookahead depth 1"),
                              ("ner_rtl_beam8_max_violation", "JNLPBA NER (rtl)",
                               "beam k=8, max-violation")):
        m = read_json(metrics / f"{name}.json")
        t = read_json(metrics / f"time_{name}.json")
        rows.append((task, label, m and m.get("f"), t and t.get("wall_seconds"), name))
    return rows


def parser_rows(metrics: Path):
    rows = []
    for name, label in (("parser_ewt_greedy", "perceptron, greedy, margin C = 1"),
                        ("parser_depth_d1", "perceptron, lookahead depth 1, margin C = 50"),
                        ("parser_ewt_beam8_early", "perceptron, beam k=8, early update"),
                        ("parser_ewt_sapo", "SAPO, n = 5 of a beam k=8, max-violation prefixes"),
                        ("parser_ewt_sapo_early", "SAPO, n = 5 of a beam k=8, early-update prefixes")):
        m = read_json(metrics / f"{name}.json")
        if m is None:
            rows.append((label, None, None, None, None, None, name))
            continue
        curve = [json.loads(line) for line in (metrics / "curves" / f"{name}.jsonl").read_text()
                 .splitlines() if line.strip()] if (metrics / "curves" / f"{name}.jsonl").exists() else []
        best = max(curve, key=lambda r: r["score"])["epoch"] + 1 if curve else None
        t = read_json(metrics / f"time_{name}.json")
        n_epochs = curve[-1]["epoch"] + 1 if curve else None
        per_epoch = t["user_seconds"] / n_epochs if t and n_epochs else None
        cal = m.get("head_calibration") or {}
        rows.append((label, m["las_nopunct"], m["uas_nopunct"], best, per_epoch, cal.get("ece"), name))
    return rows


def section(metrics: Path, plots: Path) -> List[str]:
    rows = tagger_rows(metrics)
    plot(rows, plots / "beam_pos.png")
    spacy_tagger = read_json(metrics / "spacy_tagger.json")
    out = ["## One engine: every learner with every system", "",
           "The learners live once in `core/learners.pyx` and run on every transition "
           "system, so the sequence labellers can use beam search with the violation-fixing "
           "updates and the parser SAPO. Project command `engine`; the `spacy train` command "
           "of each row is listed at the end of the section.", "",
           "### Huang et al. (2012)'s POS experiment on UD English EWT", "",
           "lookahead_tagger with beam search (same features: the previous tag is the only "
           "history feature), configs/tagger_ewt.cfg (12 epochs, the best dev model is scored "
           "on test). Test accuracy of the lookahead tagger at depth 1 and of spaCy's tagger "
           "from the same run. Invalid updates: standard updates where the gold sequence "
           "scores above the predicted one (Huang et al. Fig. 5).", "",
           "| setting | tag acc (test) | best dev | best dev epoch | epochs | update s / epoch | invalid updates |",
           "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        out.append(f"| {r['label']} | {fmt(r['test'])} | {fmt(r['best_dev'])} | "
                   f"{r['best_epoch'] or '-'} | {r['epochs'] or '-'} | "
                   f"{fmt(r['seconds'], '.1f', 1.0)} | {r['invalid']} |")
    out.append(f"| spaCy tagger (CNN, efficiency) | "
               f"{fmt(spacy_tagger and spacy_tagger.get('tag_acc'))} | - | - | - | - | - |")
    by = {r["name"]: r for r in rows}
    lines = []
    for k in WIDTHS:
        early = by[f"tagger_beam{k}_early"]["curve"]
        mv = by[f"tagger_beam{k}_max_violation"]["curve"]
        if early and mv:
            target = max(r["score"] for r in early) - 0.001
            lines.append(f"k={k}: early reaches its best - 0.1 at epoch "
                         f"{epochs_to_reach(early, target) or '-'}, max-violation at epoch "
                         f"{epochs_to_reach(mv, target) or 'never'}")
    if lines:
        out += ["", "Epochs to reach early update's best dev accuracy minus 0.1: " +
                "; ".join(lines) + "."]
    if any(r["curve"] for r in rows):
        out += ["", "![beam POS](plots/beam_pos.png)"]
    out += ["", "### Beam search for chunking and NER", "",
            "| task | setting | F1 (test) | training wall time |", "| --- | --- | --- | --- |"]
    for task, label, f, secs, _ in span_rows(metrics):
        out.append(f"| {task} | {label} | {fmt(f)} | {fmt(secs, '.0f', 1.0)} s |")
    out += ["", "### SAPO for the parser (EWT, gold POS)", "",
            "Head probability: the summed probability of the n best parses that give the "
            "token the same head and label (`token._.head_prob`); ECE over all test tokens, "
            "in the bins of benchmarks/calibration.py.", "",
            "| setting | LAS no punct | UAS no punct | best dev epoch | CPU s / epoch (training) | head-prob ECE |",
            "| --- | --- | --- | --- | --- | --- |"]
    for label, las, uas, best, secs, ece, _ in parser_rows(metrics):
        out.append(f"| {label} | {fmt(las)} | {fmt(uas)} | {best or '-'} | "
                   f"{fmt(secs, '.1f', 1.0)} | {fmt(ece, '.3f', 1.0)} |")
    out += ["", "A row with \"-\" was not run into this metrics directory (the parser rows "
            "are rows of the `parser` command).", "", "Commands:", ""]
    out += [f"* `{e.name}`: `{shlex.join(X.train_command(e))}`"
            for e in X.group("engine") + [X.EXPERIMENTS[n] for n in
                                          ("parser_ewt_sapo", "parser_ewt_sapo_early")
                                          if n in X.EXPERIMENTS]]
    return out + [""]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--metrics", type=Path, default=Path("metrics"))
    ap.add_argument("--plots", type=Path, default=Path("benchmarks/plots"))
    args = ap.parse_args(argv)
    print("\n".join(section(args.metrics, args.plots)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
