"""Write benchmarks/results.md from what the workflow left in metrics/.

    python benchmarks/report.py [--metrics metrics] [--training training]
                                [--output benchmarks/results.md]

Settings: `full` reads metrics/ and training/, `quick` reads metrics/quick/
and training/quick/. Per system it reads
  <metrics>/<name>.json           spacy benchmark accuracy (tag_acc)
  <metrics>/time_<name>.json      benchmarks/timed.py (training wall time, peak RSS)
  <metrics>/tagger_speed.json     benchmarks/speed.py (tokens/s, ratio, peak RSS)
  <metrics>/tagger_train_speed.json  benchmarks/train_speed.py (seconds per epoch)
  <training>/<name>/model-best/   config.cfg (stopping, limit, depth), meta.json (dev score)
Anything missing is shown as "-"; a system with nothing at all is listed as not run.
"""
import argparse
import json
import platform
import sys
from datetime import datetime, timezone
from pathlib import Path

SETTINGS = {"full": "", "quick": "quick"}
TASKS = [{
    "title": "POS tagging: UD English EWT test set, XPOS (PTB tags), gold tokens",
    "score": ("tag_acc", "tag acc (test)"),
    "speed_file": "tagger_speed.json",
    "train_speed_file": "tagger_train_speed.json",  # benchmarks/train_speed.py
    "reference": "spacy_tagger",
    "systems": [
        ("tagger_d0", "lookahead_tagger, depth 0 (no lookahead)"),
        ("tagger_d1", "lookahead_tagger, depth 1"),
        ("tagger_d2", "lookahead_tagger, depth 2"),
        ("spacy_tagger", "spaCy built-in tagger (CNN tok2vec, efficiency)"),
    ],
    "note": (
        "Test set: 2,077 sentences, 25,094 words (syntactic words; multiword tokens "
        "split as in UD). Accuracy from `spacy benchmark accuracy --gold-preproc`. "
        "**Not comparable to Table 1 of Tsuruoka et al. (2011)**, which tags WSJ "
        "(Penn Treebank, train sections 0-18, test 22-24): EWT is web text "
        "(blogs, newsgroups, e-mail, reviews, answers) with a smaller training set "
        "(12,544 sentences, 204,577 words) and a slightly different tag set, so "
        "only the differences between rows of this table carry over."),
}]


def read_json(path: Path):
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def model_settings(model_dir: Path):
    """Stopping criteria etc. from the config.cfg saved with a trained model."""
    cfg_path = model_dir / "config.cfg"
    if not cfg_path.exists():
        return None, None
    from spacy.util import load_config
    cfg = load_config(cfg_path, interpolate=False)
    training, bits = cfg.get("training", {}), []
    limit = cfg.get("corpora", {}).get("train", {}).get("limit", 0)
    if limit:
        bits.append(f"{limit} train sents")
    if training.get("max_epochs"):
        bits.append(f"max {training['max_epochs']} epochs")
    if training.get("max_steps") and not training.get("max_epochs"):
        bits.append(f"max {training['max_steps']} steps")
    if training.get("patience"):
        bits.append(f"patience {training['patience']}")
    meta = read_json(model_dir / "meta.json") or {}
    return ", ".join(bits), meta.get("performance", {})


def fmt(value, spec, scale=1.0):
    return "-" if value is None else format(value * scale, spec)


def fmt_time(seconds):
    if seconds is None:
        return "-"
    minutes, secs = divmod(int(round(seconds)), 60)
    if seconds < 10:
        return f"{seconds:.1f} s"
    return f"{seconds:.0f} s" if seconds < 60 else f"{minutes}:{secs:02d} min ({seconds:.0f} s)"


def task_table(task, metrics_root: Path, training_root: Path):
    key, score_label = task["score"]
    lines = [f"## {task['title']}", "",
             f"| system | setting | {score_label} | best dev | training time | 1 epoch "
             f"| tokens/s | x {task['reference']} | peak RSS tagging | peak RSS training |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    not_run, machines, speed_notes = [], [], []
    for setting, sub in SETTINGS.items():
        metrics_dir, training_dir = metrics_root / sub, training_root / sub
        speed = read_json(metrics_dir / task["speed_file"]) or {}
        epochs = {f"tagger_d{r['depth']}": r for r in
                  read_json(metrics_dir / task.get("train_speed_file", "-")) or []}
        if speed:
            machines.append((setting, speed.get("date"), speed.get("machine", {})))
            speed_notes.append(
                f"{setting}: batch size {speed.get('batch_size')}, median of "
                f"{speed.get('repeats')} runs after {speed.get('warmup_docs')} warm-up docs, "
                f"n_process={speed.get('n_process')}, "
                f"OMP/BLAS threads {speed.get('threads', {}).get('OMP_NUM_THREADS')}")
        for name, label in task["systems"]:
            acc = read_json(metrics_dir / f"{name}.json")
            timing = read_json(metrics_dir / f"time_{name}.json")
            spd = speed.get("models", {}).get(name, {})
            detail, dev = model_settings(training_dir / name / "model-best")
            if not (acc or timing or "tokens_per_second" in spd or detail is not None):
                not_run.append(f"{label} ({setting})")
                continue
            dev_score = (dev or {}).get(key)
            lines.append("| " + " | ".join([
                label,
                setting + (f" ({detail})" if detail else ""),
                fmt((acc or {}).get(key), ".2f", 100),
                fmt(dev_score, ".2f", 100),
                fmt_time((timing or {}).get("wall_seconds")),
                fmt_time(epochs.get(name, {}).get("epoch_seconds")),
                fmt(spd.get("tokens_per_second"), ",.0f"),
                fmt(spd.get("ratio_vs_reference"), ".2f"),
                fmt(spd.get("peak_rss_mb"), ".0f") + (" MB" if spd.get("peak_rss_mb") else ""),
                fmt((timing or {}).get("peak_rss_mb"), ".0f")
                + (" MB" if (timing or {}).get("peak_rss_mb") else ""),
            ]) + " |")
    lines += ["", task["note"], ""]
    lines += [
        "Training time: wall time of `spacy train` (benchmarks/timed.py, including "
        "initialisation and the dev evaluations spaCy runs during training). "
        "1 epoch: one pass of `nlp.update` over the training set, nothing else "
        "(benchmarks/train_speed.py). "
        "Tokens/s: benchmarks/speed.py, `nlp.pipe` over the test docs rebuilt "
        "without annotation from the gold tokens, one subprocess per model; "
        "peak RSS tagging is that subprocess's ru_maxrss (Python + spaCy + data + "
        "model). x reference: tokens/s divided by those of the built-in tagger "
        "measured in the same run.", ""]
    lines += [f"* speed run, {n}" for n in speed_notes]
    if not_run:
        lines += ["", "Not run (no metrics found): " + "; ".join(not_run) + "."]
    return lines, machines


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--metrics", type=Path, default=Path("metrics"))
    ap.add_argument("--training", type=Path, default=Path("training"))
    ap.add_argument("--output", type=Path, default=Path("benchmarks/results.md"))
    args = ap.parse_args(argv)
    now = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    body, machines = [], []
    for task in TASKS:
        lines, found = task_table(task, args.metrics, args.training)
        body += lines + [""]
        machines += found
    head = ["# spacy-lookahead benchmark results", "",
            f"Generated by `benchmarks/report.py` on {now} from `{args.metrics}/`.", ""]
    if machines:
        for setting, date, m in machines:
            head.append(f"* Machine ({setting} speed run, {date}): {m.get('cpu')}, "
                        f"{m.get('cores')} cores, {m.get('platform')}, Python {m.get('python')}.")
    else:
        head.append(f"* Machine (no speed run yet; this host): {platform.processor() or platform.machine()}.")
    head += ["* Settings: `full` = `spacy project run all`, `quick` = `spacy project run quick` "
             "(a smoke test on a subset: its numbers say nothing about the methods).", ""]
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text("\n".join(head + body).rstrip() + "\n")
    print(f"report.py: wrote {args.output}", file=sys.stderr)


if __name__ == "__main__":
    main()
