"""The results.md section of the FR phrase recognisers (Carreras et al. 2005):
clause identification (FR-Perceptron vs classification feedback), the
filtering layer per epoch (Figure 5), the FR chunker next to the
lookahead_chunker, prediction speed, and the `spacy train` command of each
row. The rows are the `phrases` group of benchmarks/experiments.py; per
scale (metrics/ for the full run, metrics/quick/ for the quick one) it reads:

    NAME.json              benchmarks/fr_eval.py (test P/R/F1 of the row's model, scored once)
    curves/NAME.jsonl      the curves logger of `spacy train` (per evaluation: dev P/R/F1
                           and the filtering layer, spans_<key>_candidates, ...)
    clauses_speed.json, fr_chunker_speed.json   benchmarks/speed.py (tokens/s, peak memory)
    chunker_d1.json        benchmarks/evaluate.py (the lookahead_chunker, for comparison)

Missing files leave a row out. `phrases_section(metrics_root)` returns
markdown (report.py appends it to results.md);

    python benchmarks/report_phrases.py [--metrics metrics] [--output FILE]

prints it (or writes FILE) from metrics/ and metrics/quick/."""
import argparse
import json
import shlex
import sys
from pathlib import Path
from typing import Dict, List, Optional, Tuple

sys.path.insert(0, str(Path(__file__).parent))
import experiments as X  # noqa: E402
from curves import best_evaluation, epoch_points, read_curve  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SCALES = (("full", ""), ("quick", "quick"))  # setting, directory under the metrics root
SHORT = {"clauses_fr": "FR", "clauses_co": "CO"}  # column prefixes of the filtering table
SPEEDS = ("clauses_speed", "fr_chunker_speed")


def _read(path: Path) -> Optional[Dict]:
    try:
        return json.loads(path.read_text(encoding="utf8"))
    except (OSError, ValueError):
        return None


def _pct(x: Optional[float]) -> str:
    return "-" if x is None else f"{100 * x:.2f}"


def _rows(task: str, scale: str) -> List[X.Experiment]:
    return [e for e in X.group("phrases", scale) if e.task == task]


def _curve(root: Path, e: X.Experiment) -> List[dict]:
    return read_curve(root / "curves" / f"{e.name}.jsonl")


def _best(rows: List[dict]) -> Tuple[Optional[dict], str]:
    """model-best's evaluation and "EPOCH of N" (N: the epochs logged)."""
    best = best_evaluation(rows)
    if best is None:
        return None, "-"
    return best, f"{best['epoch']} of {max(r['epoch'] for r in rows) + 1}"


def _clause_rows(root: Path, setting: str) -> List[str]:
    rows = []
    for e in _rows("clauses", setting):
        curve, test = _curve(root, e), _read(root / f"{e.name}.json")
        if not curve and not test:
            continue
        best, when = _best(curve)
        dev = best["scores"] if best else {}
        rows.append(f"| {e.label} | {setting} | {when} | "
                    + " | ".join(_pct(dev.get(f"spans_clauses_{m}")) for m in "prf") + " | "
                    + " | ".join(f"{test[m]:.2f}" if test else "-" for m in "prf") + " |")
    return rows


def _filter_table(root: Path, setting: str) -> List[str]:
    """Per epoch (the last evaluation in it), for each clause row with a curve:
    candidates, their recall, the F1 bound, dev F1."""
    runs = [(SHORT.get(e.name, e.name), epoch_points(_curve(root, e)))
            for e in _rows("clauses", setting)]
    runs = [(short, points) for short, points in runs if points]
    if not runs:
        return []
    head = ["epoch"] + [f"{s}: {c}" for s, _ in runs
                        for c in ("candidates", "gold among them", "F1 bound", "dev F1")]
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    by_epoch = [{p["epoch"]: p["scores"] for p in points} for _, points in runs]
    for epoch in sorted(set().union(*by_epoch)):
        cells = [str(epoch)]
        for scores in by_epoch:
            s = scores.get(epoch)
            if s is None or "spans_clauses_candidates" not in s:
                cells += ["-"] * 3 + [_pct(s and s.get("spans_clauses_f"))]
                continue
            cells += [f"{s['spans_clauses_candidates']:,.0f}",
                      f"{100 * s['spans_clauses_candidates_recall']:.1f}%",
                      _pct(s["spans_clauses_f_bound"]), _pct(s.get("spans_clauses_f"))]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _max_epochs(e: X.Experiment, scale: str) -> Optional[int]:
    """The row's training.max_epochs (its override, else its config's)."""
    epochs = e.overrides(scale).get("training.max_epochs")
    if epochs is None:
        from spacy.util import load_config
        try:
            epochs = load_config(ROOT / e.config, interpolate=False)["training"]["max_epochs"]
        except (OSError, KeyError):
            return None
    return int(epochs)


def _chunk_rows(root: Path, setting: str) -> List[str]:
    rows = []
    for e in _rows("fr_chunk", setting):
        curve, test = _curve(root, e), _read(root / f"{e.name}.json")
        if curve or test:
            _, when = _best(curve)
            dev = " (dev: held-out 10% of train)" if e.dev_is_train else ""
            rows.append(f"| {e.label} | {setting} | best {when}{dev} | "
                        + " | ".join(f"{test[m]:.2f}" if test else "-" for m in "prf") + " |")
    look = X.EXPERIMENTS["chunker_d1"]
    result = _read(root / f"{look.name}.json")
    if result and "p" in result and X.in_scale(look, setting):
        scale = 100 if result["p"] <= 1 else 1
        rows.append(f"| {look.label} | {setting} | {_max_epochs(look, setting) or '-'} (fixed, "
                    f"{look.model}) | " + " | ".join(f"{scale * result[m]:.2f}" for m in "prf") + " |")
    return rows


def _speed_rows(root: Path, setting: str) -> List[str]:
    rows = []
    for name in SPEEDS:
        record = _read(root / f"{name}.json")
        if not record:
            continue
        for model, r in record.get("models", {}).items():
            if "tokens_per_second" not in r:
                rows.append(f"| {model} | {setting} | skipped: {r.get('skipped', '?')} | | | | |")
                continue
            ratio = r.get("ratio_vs_reference")
            rows.append(f"| {model} | {setting} | {r['n_tokens']:,} | {r['tokens_per_second']:,.0f} | "
                        f"{'-' if ratio is None else f'{ratio:.2f}'} | {r['peak_rss_mb']:.0f} MB | "
                        f"{_pct(r.get('f1_check'))} |")
    return rows


def phrases_section(metrics_root: Path, scales=SCALES) -> str:
    """Markdown for results.md; empty when nothing was measured. `scales`:
    (setting, directory under metrics_root) pairs read; report.py passes one
    scale's directory alone, (("full", ""),) or (("quick", ""),)."""
    metrics_root = Path(metrics_root)
    settings = [(s, metrics_root / sub if sub else metrics_root) for s, sub in scales]
    clauses = [r for s, root in settings for r in _clause_rows(root, s)]
    chunks = [r for s, root in settings for r in _chunk_rows(root, s)]
    speed = [r for s, root in settings for r in _speed_rows(root, s)]
    filters, filter_setting = [], ""
    for s, root in settings:  # the full run's, else the quick run's
        filters, filter_setting = _filter_table(root, s), s
        if filters:
            break
    if not (clauses or chunks or speed):
        return ""
    epochs = {e.name: _max_epochs(e, "full") for e in X.group("phrases")}
    out = ["## FR phrase recognisers (Carreras et al. 2005)", ""]
    if clauses:
        out += [("Clause identification on wsj_clauses (the NLTK WSJ sample in the CoNLL-2001 format, "
                 "gold POS and approximate chunks as input; NOT the CoNLL-2001 data of the paper's "
                 "Table 3). Exact clause spans, micro-averaged. Each row is one `spacy train` run "
                 f"(commands below; up to {epochs.get('clauses_fr')} epochs, one evaluation on dev "
                 "per epoch); dev: the evaluation spaCy kept as model-best (best dev F1); test: that "
                 "model, scored once (`benchmarks/fr_eval.py`)."), "",
                "| model | setting | best dev epoch | dev P | dev R | dev F1 | test P | test R | test F1 |",
                "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"] + clauses + [""]
    if filters:
        out += [("The filtering layer on dev after each epoch (the paper's Figure 5; the last "
                 "evaluation of each epoch in the runs' curves, keys spans_clauses_candidates, "
                 "_candidates_recall, _f_bound): candidates (s, e) generated by the start/end "
                 "filters, the share of gold clauses among them, and the F1 a perfect ranker could "
                 "reach on them" + (" (quick run: a smoke test)." if filter_setting == "quick" else ".")),
                ""] + filters + [""]
    if chunks:
        out += ["Chunking on CoNLL-2000 test (the paper's Table 6: FR-Perceptron 93.71).", "",
                "| model | setting | epochs | P | R | F1 |", "| --- | --- | --- | --- | --- | --- |"]
        out += chunks + [""]
    if speed:
        out += [("Prediction speed (`benchmarks/speed.py`, one process per model: nlp.pipe on the "
                 "test docs with the inputs only, words + POS tags (+ chunks for clauses), median "
                 "of the repeats), peak memory of the process, and the F1 of the timed output."), "",
                "| model | setting | tokens timed | tokens/s | x reference | peak memory | F1 check |",
                "| --- | --- | --- | --- | --- | --- | --- |"] + speed + [""]
    out += [("Runs (`python benchmarks/run.py train NAME` runs the command; the curve is "
             "metrics/curves/NAME.jsonl; `python benchmarks/run.py evaluate NAME` scores it):"), ""]
    out += [f"* `{e.name}`: `{shlex.join(X.train_command(e, 'full'))}`" for e in X.group("phrases")]
    return "\n".join(out + [""])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--metrics", type=Path, default=Path("metrics"),
                    help="the full run's metrics (the quick run's are in its quick/)")
    ap.add_argument("--output", type=Path, default=None, help="markdown file to write (default: print)")
    args = ap.parse_args(argv)
    text = phrases_section(args.metrics) or "(no FR phrase results under {})\n".format(args.metrics)
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(text, encoding="utf8")
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
