"""The dependency-parsing section of the benchmark report: the `parser`
rows of benchmarks/experiments.py (arc_standard_parser with gold POS on EWT
and on the unlabelled WSJ sample, each `spacy train` with the row's
settings, model-best by dev score), read from what the workflow left in the
metrics directory:

    <metrics>/NAME.json          benchmarks/parser_eval.py (test, scored once)
    <metrics>/curves/NAME.jsonl  the curves logger (dev scores per evaluation,
                                 time in update(), beam updates and invalid ones)
    <metrics>/time_NAME.json     benchmarks/timed.py (wall time, CPU, peak memory)
    <metrics>/parser_speed.json  benchmarks/speed.py (tokens/s against spaCy's parser)

`parser_section(metrics_dir, scale)` returns markdown lines; report.py appends
them. `parser_curves` gathers the per-epoch dev curves (plots.py draws them),
`write_curves` writes them into one JSON.

    python benchmarks/report_parser.py [--metrics metrics] [--scale full] [--output metrics/results_parser.md]
"""
import argparse
import json
import shlex
import sys
from pathlib import Path
from typing import Dict, List, Optional

sys.path.insert(0, str(Path(__file__).parent))
import experiments as X  # noqa: E402
from curves import per_epoch, read_curve  # noqa: E402

COMPONENT = "arc_standard_parser"


def _read(path: Path) -> Optional[dict]:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def _pct(x) -> str:
    return "-" if x is None else f"{100 * x:.2f}"


def rows(data: str) -> List[X.Experiment]:
    return [e for e in X.group("parser") if e.data == data and e.name != "spacy_parser"]


def score_key(e: X.Experiment) -> str:
    return "dep_uas_nopunct" if e.data == "wsj" else "dep_las_nopunct"


def curve_summary(metrics: Path, e: X.Experiment) -> Optional[Dict[str, object]]:
    """Best dev evaluation (its epoch), epochs run, seconds in update() per
    epoch, beam updates and invalid ones, from the run's logged curve."""
    logged = read_curve(metrics / "curves" / f"{e.name}.jsonl")
    logged = [r for r in logged if r["step"] > 0]
    if not logged:
        return None
    best = max(logged, key=lambda r: r["score"])
    last = logged[-1]["scores"]
    epochs = logged[-1]["epoch"] + 1
    return {"best_dev": best["scores"].get(score_key(e)), "best_epoch": best["epoch"] + 1,
            "epochs_run": epochs,
            "update_seconds_per_epoch": round(last.get(f"{COMPONENT}_update_seconds", 0.0) / epochs, 2),
            "updates": last.get(f"{COMPONENT}_beam_updates"),
            "invalid": last.get(f"{COMPONENT}_beam_invalid")}


def parser_curves(metrics: Path) -> dict:
    """Dev score per epoch (the last evaluation of each epoch) of every parser row."""
    curves = {}
    for e in rows("ewt") + rows("wsj"):
        points = per_epoch(read_curve(metrics / "curves" / f"{e.name}.jsonl"), score_key(e), COMPONENT)
        if points:
            curves[e.name] = points
    return curves


def write_curves(metrics: Path, out: Path) -> dict:
    """parser_curves(metrics), written to `out` as JSON."""
    curves = parser_curves(metrics)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(curves, indent=2))
    return curves


def epochs_to_reach(points: List[dict], target: float) -> Optional[int]:
    return next((p["epoch"] for p in points if p["score"] is not None and p["score"] >= target), None)


def early_vs_max_violation(curves: dict, mv: str, early: str, note: str) -> List[str]:
    """Huang et al.'s claim: max-violation reaches early update's best dev
    score in fewer epochs (per-epoch dev scores: the last evaluation of each)."""
    if mv not in curves or early not in curves:
        return []
    m, e = curves[mv], curves[early]
    best_e = max(e, key=lambda p: p["score"])
    best_m = max(m, key=lambda p: p["score"])
    k = epochs_to_reach(m, best_e["score"])
    return [f"Max-violation vs early update{note}: early's best dev score "
            f"{_pct(best_e['score'])} at epoch {best_e['epoch']} of {len(e)}; max-violation's best "
            f"{_pct(best_m['score'])} at epoch {best_m['epoch']} of {len(m)}; "
            + (f"max-violation reaches early's best at epoch {k}." if k else
               f"max-violation never reaches early's best within {len(m)} epochs."),
            "Epochs max-violation needs to reach early update's dev score of epoch k (k->epochs): "
            + ", ".join(f"{p['epoch']}->{epochs_to_reach(m, p['score']) or '-'}" for p in e) + ".", ""]


def parser_section(metrics: Path, scale: str = "full") -> List[str]:
    """From one scale's metrics directory (metrics/ or metrics/quick/; the
    quick run is a smoke test, and said so)."""
    quick = scale == "quick"
    lines = ["## Dependency parsing: arc_standard_parser (UD English EWT, WSJ sample)", ""]
    if quick:
        lines += ["Quick run (`--scale quick`: a training slice, 2 epochs; a smoke test, its figures "
                  "say nothing about the methods).", ""]
    lines += [
             "| system | setting | UAS | LAS | UAS no punct | LAS no punct | best dev epoch "
             "| epochs run | s in update() / epoch | invalid updates |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    runs = []
    for e in rows("ewt"):
        t, c = _read(metrics / f"{e.name}.json"), curve_summary(metrics, e)
        if not t:
            continue
        inv = "-"
        if c and c["updates"] is not None:
            inv = f"{c['invalid']:.0f}/{c['updates']:.0f} ({100 * c['invalid'] / max(1, c['updates']):.1f}%)"
        lines.append(f"| arc_standard_parser | {e.label}, gold POS | {_pct(t['uas'])} | {_pct(t['las'])} | "
                     f"{_pct(t['uas_nopunct'])} | {_pct(t['las_nopunct'])} | "
                     + (f"{c['best_epoch']} | {c['epochs_run']} | {c['update_seconds_per_epoch']} | "
                        if c else "- | - | - | ") + f"{inv} |")
        runs.append(e)
    base, timing = _read(metrics / "spacy_parser.json"), _read(metrics / "time_spacy_parser.json")
    if base:
        wall = f"{timing['wall_seconds']:.0f} s wall in total" if timing else "-"
        lines.append(f"| spaCy parser (arc-eager, CNN tok2vec, efficiency) | words only | "
                     f"{_pct(base['uas'])} | {_pct(base['las'])} | {_pct(base['uas_nopunct'])} | "
                     f"{_pct(base['las_nopunct'])} | - | - | {wall} | - |")
    lines += ["", "EWT test: 2,077 sentences, 25,094 words, gold tokenisation. Punctuation = gold "
              "label `punct`. Each row is `spacy train configs/parser_ewt.cfg` with its settings "
              "(commands below): about two dev evaluations per epoch, model-best by dev LAS without "
              "punctuation, scored once on test (benchmarks/parser_eval.py). s in update() / epoch: "
              "wall time inside the component's update(). Invalid updates: standard updates where "
              "the gold sequence scores above the predicted one (Huang et al. 2012, Fig. 5); the "
              "other methods make none by construction: the standard update alone depends on "
              "the order of the training docs (with most of its updates invalid, a run can stay "
              "near its first evaluation; Huang et al. give it no convergence guarantee under "
              "inexact search), so its row is one order, not the method's figure. The parser "
              "from words only (predicted tags) is the next section.", ""]
    curves = parser_curves(metrics)
    for suffix, note in (("", ""), ("_sents", " (gold sentence starts)")):
        lines += early_vs_max_violation(curves, f"parser_ewt_beam8_max_violation{suffix}",
                                        f"parser_ewt_beam8_early{suffix}", note)
    lines += early_vs_max_violation(curves, "parser_wsj_beam8_max_violation_long", "parser_wsj_beam8_early",
                                    " on the unlabelled WSJ sample (UAS no punct)")
    lines += ["WSJ sample (NLTK, PTB sections 00-01; 3,396 train / 245 test sentences; unlabelled, "
              "gold POS; punctuation = gold tags `` '' , . :; configs/parser_wsj.cfg, model-best by "
              "dev UAS without punctuation):", "",
              "| setting | UAS no punct (test) | UAS (test) | best dev epoch | s in update() / epoch |",
              "| --- | --- | --- | --- | --- |"]
    for e in rows("wsj"):
        t, c = _read(metrics / f"{e.name}.json"), curve_summary(metrics, e)
        if t:
            lines.append(f"| {e.label} | {_pct(t['uas_nopunct'])} | {_pct(t['uas'])} | "
                         f"{c['best_epoch'] if c else '-'} | {c['update_seconds_per_epoch'] if c else '-'} |")
            runs.append(e)
    speed = _read(metrics / "parser_speed.json")
    if speed:
        ref = speed.get("reference", "spacy_parser")
        lines += ["", "Speed (EWT test, gold words + gold tags, one process, benchmarks/speed.py "
                  "--task parse, same run):", "",
                  f"| model | tokens/s | x {ref} | peak RSS | UAS check |", "| --- | --- | --- | --- | --- |"]
        for name, r in speed["models"].items():
            if "tokens_per_second" not in r:
                lines.append(f"| {name} | skipped: {r.get('skipped', '?')} | - | - | - |")
                continue
            lines.append(f"| {name} | {r['tokens_per_second']:,.0f} | {r.get('ratio_vs_reference', '-')} | "
                         f"{r['peak_rss_mb']} MB | {_pct(r.get('uas_check'))} |")
    if runs:
        lines += ["", "Runs (`python benchmarks/run.py train NAME` runs the command; the curves are "
                  "in metrics/curves/NAME.jsonl):", ""]
        scale = "quick" if quick else "full"
        lines += [f"* `{e.name}`: `{shlex.join(X.train_command(e, scale))}`" for e in runs]
        if base:
            lines.append(f"* `spacy_parser`: "
                         f"`{shlex.join(X.train_command(X.EXPERIMENTS['spacy_parser'], scale))}`")
    return lines


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--metrics", type=Path, default=Path("metrics"))
    ap.add_argument("--scale", choices=X.SCALES, default="full")
    ap.add_argument("--output", type=Path, default=Path("metrics/results_parser.md"))
    args = ap.parse_args(argv)
    args.output.write_text("\n".join(parser_section(args.metrics, args.scale)) + "\n")


if __name__ == "__main__":
    main()
