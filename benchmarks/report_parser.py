"""The dependency-parsing section of the benchmark report (arc_standard_parser,
issue 5), from the JSON files of parser_bench.py, parser_eval.py and
parser_speed.py. `parser_section(metrics_dir)` returns markdown lines;
report.py appends them. Also writes the dev curves of the beam update methods
to one JSON file for a plot script.

    python benchmarks/report_parser.py [--metrics metrics] [--output metrics/results_parser.md]
"""
import argparse
import json
from pathlib import Path
from typing import List, Optional

UPDATES = ("early", "max_violation", "standard", "hybrid", "latest")
EWT_SETTINGS = [("ewt_greedy", "greedy (depth 0)"), ("ewt_greedy_m50", "greedy (depth 0)"),
                ("ewt_d1", "lookahead, depth 1"), ("ewt_d1_m50", "lookahead, depth 1"),
                ("ewt_d1_m200", "lookahead, depth 1"), ("ewt_d2", "lookahead, depth 2"),
                ("ewt_d2_m200", "lookahead, depth 2, 2 epochs only (dev: first 300 sentences)")] + \
               [(f"ewt_beam8_{u}", f"beam k=8, {u.replace('_', '-')} update") for u in UPDATES] + \
               [(f"ewt_beam8_{u}_sents", f"beam k=8, {u.replace('_', '-')} update, gold sentence starts "
                 "(one root per sentence: all derivations of a doc have the same length)")
                for u in ("early", "max_violation")]
WSJ_SETTINGS = [("wsj_greedy", "greedy (depth 0)"), ("wsj_d1", "lookahead, depth 1"),
                ("wsj_d2", "lookahead, depth 2"), ("wsj_beam8_max_violation", "beam k=8, max-violation"),
                ("wsj_beam8_max_violation_long", "beam k=8, max-violation (30 epochs max, patience 5)"),
                ("wsj_beam8_early", "beam k=8, early update (30 epochs max, patience 5)")]


def _read(path: Path) -> Optional[dict]:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def _pct(x) -> str:
    return "-" if x is None else f"{100 * x:.2f}"


def epochs_to_reach(curve: List[dict], key: str, target: float) -> Optional[int]:
    for r in curve:
        if r["dev"][key] >= target:
            return r["epoch"]
    return None


def write_curves(metrics: Path, out: Path) -> dict:
    """Dev score per epoch of each beam update method (and greedy/lookahead)."""
    curves = {}
    for name, _ in EWT_SETTINGS + WSJ_SETTINGS:
        rec = _read(metrics / f"parser_{name}.json")
        if rec:
            curves[name] = [{"epoch": r["epoch"], "dev_las_nopunct": r["dev"]["las_nopunct"],
                             "dev_uas_nopunct": r["dev"]["uas_nopunct"],
                             "train_cpu_seconds": r["train_cpu_seconds"],
                             "invalid_fraction": r.get("invalid_fraction")} for r in rec["curve"]]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(curves, indent=2))
    return curves


def _early_vs_max_violation(mv: Optional[dict], early: Optional[dict], note: str) -> List[str]:
    """Huang et al.'s claim: max-violation reaches early update's best dev
    score in fewer epochs."""
    if not (mv and early):
        return []
    lines = []
    target = early["best_dev"]
    k = epochs_to_reach(mv["curve"], "las_nopunct", target)
    lines.append(f"Max-violation vs early update{note}: early's best dev LAS (no punct) "
                 f"{_pct(target)} at epoch {early['best_epoch']} of {early['epochs_run']}; max-violation's "
                 f"best {_pct(mv['best_dev'])} at epoch {mv['best_epoch']} of {mv['epochs_run']}; "
                 + (f"max-violation reaches early's best at epoch {k}." if k else
                    f"max-violation never reaches early's best within {mv['epochs_run']} epochs."))
    pairs = [f"{r['epoch']}->{epochs_to_reach(mv['curve'], 'las_nopunct', r['dev']['las_nopunct']) or '-'}"
             for r in early["curve"]]
    lines.append(f"Epochs max-violation needs to reach early update's dev LAS of epoch k (k->epochs): "
                 f"{', '.join(pairs)}.")
    lines.append("")
    return lines


def parser_section(metrics: Path) -> List[str]:
    lines = ["## Dependency parsing: arc_standard_parser (UD English EWT, WSJ sample)", ""]
    lines += ["| system | setting | UAS | LAS | UAS no punct | LAS no punct | best dev epoch "
              "| epochs run | CPU s / epoch | invalid updates |",
              "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    found = {}
    for name, label in EWT_SETTINGS:
        rec = _read(metrics / f"parser_{name}.json")
        if not rec:
            continue
        found[name] = rec
        t = rec["test"]
        inv = "-"
        if name.startswith("ewt_beam8"):
            ups = sum(r.get("updates", 0) for r in rec["curve"])
            bad = sum(r.get("invalid_updates", 0) for r in rec["curve"])
            inv = f"{bad}/{ups} ({100 * bad / max(1, ups):.1f}%)"
        st = rec.get("settings", {})
        if st.get("search") in ("greedy", "lookahead"):
            label = f"{label}, margin C = {st['margin']:g}"
        lines.append(f"| arc_standard_parser | {label}, gold POS | {_pct(t['uas'])} | {_pct(t['las'])} | "
                     f"{_pct(t['uas_nopunct'])} | {_pct(t['las_nopunct'])} | {rec['best_epoch']} | "
                     f"{rec['epochs_run']} | {rec['mean_train_cpu_seconds_per_epoch']} | {inv} |")
    for name, label in (("greedy", "greedy"), ("d1", "lookahead, depth 1"),
                        ("beam8_max_violation", "beam k=8, max-violation"),
                        ("beam8_early", "beam k=8, early update")):
        t = _read(metrics / f"parser_test_{name}_tagger.json")
        if t:
            lines.append(f"| arc_standard_parser | {label}, POS from lookahead_tagger (depth 1) | "
                         f"{_pct(t['uas'])} | {_pct(t['las'])} | {_pct(t['uas_nopunct'])} | "
                         f"{_pct(t['las_nopunct'])} | - | - | - | - |")
    base = _read(metrics / "parser_test_spacy_parser.json")
    timing = _read(metrics / "time_spacy_parser.json")
    if base:
        wall = f"{timing['wall_seconds']:.0f} s wall in total" if timing else "-"
        lines.append(f"| spaCy parser (arc-eager, CNN tok2vec, efficiency) | words only, max 12 epochs | "
                     f"{_pct(base['uas'])} | {_pct(base['las'])} | {_pct(base['uas_nopunct'])} | "
                     f"{_pct(base['las_nopunct'])} | - | - | {wall} | - |")
    lines += ["", "EWT test: 2,077 sentences, 25,094 words, gold tokenisation. Punctuation = gold "
              "label `punct`. Each epoch is one shuffled pass (benchmarks/parser_bench.py); the "
              "model of the best dev epoch (LAS without punctuation) is scored on test. CPU s / "
              "epoch: process time of the update passes only. Invalid updates: standard updates "
              "where the gold sequence scores above the predicted one (Huang et al. 2012, Fig. 5); "
              "the other methods make none by construction.", ""]
    for suffix in ("", "_sents"):
        lines += _early_vs_max_violation(found.get(f"ewt_beam8_max_violation{suffix}"),
                                         found.get(f"ewt_beam8_early{suffix}"),
                                         " (gold sentence starts)" if suffix else "")
    lines += _early_vs_max_violation(_read(metrics / "parser_wsj_beam8_max_violation_long.json"),
                                     _read(metrics / "parser_wsj_beam8_early.json"),
                                     " on the unlabelled WSJ sample (UAS = LAS)")
    lines += ["WSJ sample (NLTK, PTB sections 00-01; 3,396 train / 245 test sentences; unlabelled, "
              "gold POS; punctuation = gold tags `` '' , . :):", "",
              "| setting | UAS no punct (test) | UAS (test) | best dev epoch | CPU s / epoch |",
              "| --- | --- | --- | --- | --- |"]
    for name, label in WSJ_SETTINGS:
        rec = _read(metrics / f"parser_{name}.json")
        if rec:
            t = rec["test"]
            lines.append(f"| {label} | {_pct(t['uas_nopunct'])} | {_pct(t['uas'])} | {rec['best_epoch']} | "
                         f"{rec['mean_train_cpu_seconds_per_epoch']} |")
    speed = _read(metrics / "parser_speed.json")
    if speed:
        lines += ["", "Speed (EWT test, gold words + gold tags, one process, benchmarks/parser_speed.py):", "",
                  "| model | tokens/s | x spacy_parser | peak RSS | UAS check |", "| --- | --- | --- | --- | --- |"]
        for name, r in speed["models"].items():
            lines.append(f"| {name} | {r['tokens_per_second']:,} | {r.get('speed_vs_reference', '-')} | "
                         f"{r['peak_rss_mb']} MB | {_pct(r['uas_check'])} |")
    runs = []
    for name, _ in EWT_SETTINGS + WSJ_SETTINGS:
        rec = _read(metrics / f"parser_{name}.json")
        if rec:
            cmd = rec.get("command") or (f"python benchmarks/parser_bench.py {name} --train {rec['train']} "
                                         + " ".join(f"--{k.replace('_', '-')} {v}"
                                                    for k, v in rec["settings"].items()))
            runs.append(f"* `{name}`: `{cmd}` ({rec['epochs_run']} epochs run)")
    if timing:
        runs.append(f"* `spacy_parser`: `{' '.join(timing['command'])}`, then "
                    "`python benchmarks/parser_eval.py training/spacy_parser/model-best corpus/ewt/test.spacy ...`")
    if runs:
        lines += ["", "Runs (metrics/parser_*.json hold every epoch's dev scores; "
                  "metrics/parser_curves.json gathers them):", ""] + runs
    return lines


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--metrics", type=Path, default=Path("metrics"))
    ap.add_argument("--output", type=Path, default=Path("metrics/results_parser.md"))
    args = ap.parse_args(argv)
    write_curves(args.metrics, args.metrics / "parser_curves.json")
    args.output.write_text("\n".join(parser_section(args.metrics)) + "\n")


if __name__ == "__main__":
    main()
