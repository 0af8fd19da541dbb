"""The SAPO section of results.md: SAPO (Sun et al.) against the averaged
perceptron per epoch (dev score, mean |w|, time in update()), and the
calibration of SAPO's probabilities on the test sets."""
import json
import shlex
import sys
from pathlib import Path
from typing import List

sys.path.insert(0, str(Path(__file__).parent))
from curves import SAPO_PAIRS, per_epoch, read_curve  # noqa: E402
import experiments as X  # noqa: E402
from plots import has_sapo_curves  # noqa: E402

CALIBRATION = [("tagger_sapo", "POS tags (token._.tag_prob), EWT test"),
               ("chunker_sapo", "chunks (doc.spans['chunks'].attrs['scores']), CoNLL-2000 test"),
               ("ner_rtl_sapo", "entities (doc.spans['ents'].attrs['scores']), JNLPBA test")]


def fmt(v, spec, scale=1.0):
    return "-" if v is None else format(v * scale, spec)


def section(metrics: Path, plots: Path, plots_rel: str = "plots") -> List[str]:
    """Markdown lines, from `metrics` alone; a figure is linked (as
    `plots_rel`/NAME.png from results.md) where the metrics hold its data:
    the curves (plots.py), calibration_NAME.json (calibration.py --plot), the
    ablations' table (sapo_ablations.py --plot). `plots`: unused, kept for
    callers."""
    lines = ["## SAPO against the averaged perceptron (Sun et al.)", "",
             "Same features, same data; SAPO with n = 5 (exact top-n by A*), learning rate "
             "0.1 decaying by 0.8 per epoch, L2 lambda 2 (POS) and 1 (chunking) as in Sun "
             "et al. Section 4.2, and 1 for NER (their 5 stalled at 65 F1 after 5 epochs here; "
             "1 beat 0.1 on a held-out tenth of the training set, 74.9 vs 74.4); the perceptron is the depth-1 lookahead "
             "perceptron with averaging. Per epoch: the score spaCy logs (dev set for "
             "EWT; the test set as a curve for CoNLL-2000 and JNLPBA, which have no dev "
             "set), the mean |w| of the training weights (Sun et al. Fig. 3: the raw "
             "perceptron weights, which the averaged model is the mean of), and the time "
             "spent in update() in that epoch. From metrics/curves/*.jsonl "
             "(spacy_lookahead.curves_logger.v1).", ""]
    if has_sapo_curves(metrics):
        lines += [f"![SAPO vs perceptron]({plots_rel}/sapo_vs_perceptron.png)", ""]
    for perc, sapo, title, key, component in SAPO_PAIRS:
        a = per_epoch(read_curve(metrics / "curves" / f"{perc}.jsonl"), key, component)
        b = per_epoch(read_curve(metrics / "curves" / f"{sapo}.jsonl"), key, component)
        if not (a or b):
            lines += [f"*{title}: no curves yet (run train-sapo and the depth-1 training).*", ""]
            continue
        lines += [f"### {title}", "",
                  "| epoch | perceptron score | perceptron mean abs w | perceptron s/epoch "
                  "| SAPO score | SAPO mean abs w | SAPO s/epoch |",
                  "| --- | --- | --- | --- | --- | --- | --- |"]
        for i in range(max(len(a), len(b))):
            pa = a[i] if i < len(a) else {}
            pb = b[i] if i < len(b) else {}
            lines.append("| " + " | ".join([
                str(i + 1), fmt(pa.get("score"), ".2f", 100), fmt(pa.get("w_mean_abs"), ".4f"),
                fmt(pa.get("update_seconds"), ".1f"), fmt(pb.get("score"), ".2f", 100),
                fmt(pb.get("w_mean_abs"), ".4f"), fmt(pb.get("update_seconds"), ".1f")]) + " |")
        lines.append("")
    lines += ["### Prediction speed: SAPO against the depth-1 perceptron (same run)", "",
              "benchmarks/speed.py, one process, the test sets as in the tables above; SAPO "
              "with its default probabilities (exact marginals for first-order models). "
              "Interleaved: the median over rounds of one pass of each, side by side "
              "(speed.py --pairs), the steadier figure on a shared machine.", "",
              "| task | perceptron depth 1 tokens/s | SAPO tokens/s | SAPO / perceptron | "
              "interleaved | SAPO peak RSS |", "| --- | --- | --- | --- | --- | --- |"]
    for task, perc, sapo in (("tag", "tagger_d1", "tagger_sapo"), ("chunk", "chunker_d1", "chunker_sapo"),
                             ("ner", "ner_rtl_d1", "ner_rtl_sapo")):
        try:
            models = json.loads((metrics / f"sapo_speed_{task}.json").read_text())["models"]
        except (OSError, ValueError, KeyError):
            continue
        a, b = models.get(perc, {}), models.get(sapo, {})
        lines.append(f"| {task} | {fmt(a.get('tokens_per_second'), ',.0f')} | "
                     f"{fmt(b.get('tokens_per_second'), ',.0f')} | {fmt(b.get('ratio_vs_reference'), '.2f')} "
                     f"| {fmt(b.get('ratio_interleaved'), '.2f')} | {fmt(b.get('peak_rss_mb'), '.0f')} MB |")
    lines.append("")
    lines += ["### Calibration of SAPO's probabilities (test sets)", "",
              "Each prediction in a probability bin; accuracy = fraction of the bin's "
              "predictions that are right (exact span and label, or the gold tag). "
              "ECE: count-weighted mean |mean probability - accuracy|. "
              "benchmarks/calibration.py.", "",
              "| predictions | bin | count | mean probability | accuracy |",
              "| --- | --- | --- | --- | --- |"]
    for name, label in CALIBRATION:
        try:
            cal = json.loads((metrics / f"calibration_{name}.json").read_text())
        except (OSError, ValueError):
            lines.append(f"| {label} | not run | - | - | - |")
            continue
        for b in cal["bins"]:
            if b["count"]:
                lines.append(f"| {label} | [{b['low']:.2f}, {b['high']:.2f}) | {b['count']:,} "
                             f"| {b['mean_probability']:.3f} | {b['accuracy']:.3f} |")
        lines.append(f"| {label} | all (ECE {cal['ece']:.4f}) | {cal['predictions']:,} | - "
                     f"| {cal['accuracy']:.3f} |")
    shown = [task for task, (name, _) in zip(("tag", "chunk", "ner"), CALIBRATION)
             if (metrics / f"calibration_{name}.json").exists()]
    if shown:
        lines += [""] + [f"![reliability, {task}]({plots_rel}/reliability_{task}.png)" for task in shown]
    ablations = metrics / "sapo_ablations.md"
    if ablations.exists():
        lines += ["", "### SAPO on JNLPBA: ablations on a held-out tenth of the training set", "",
                  "The `sapo-ablations` rows of benchmarks/experiments.py: one `spacy train` "
                  "per setting on the first 90% of train, scored each epoch on its last tenth "
                  "(never on test); one setting changed from Sun et al.'s (n = 5, gamma 0.1 "
                  "decaying by 0.8, A*, no averaging, first-order; lambda 1); the commands "
                  "are listed at the end of the section.", "",
                  ablations.read_text().strip(), ""]
        lines.append(f"![SAPO ablations]({plots_rel}/sapo_ablations.png)")
    return lines + [""] + commands()


def commands() -> List[str]:
    """The spacy train command of every SAPO row and ablation (the table's)."""
    rows = X.group("sapo") + X.group("sapo-ablations")
    return ["Commands of the SAPO rows and ablations (`python benchmarks/run.py commands sapo "
            "sapo-ablations`):", ""] + [f"* `{e.name}`: `{shlex.join(X.train_command(e))}`"
                                        for e in rows] + [""]
