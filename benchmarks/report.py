"""results.md from what the workflow left in one metrics directory (and the
experiment table): no trained model, no clock, nothing of the host, so the
committed metrics/ give the committed results.md byte for byte
(tests/test_results_generated.py); `quick`: metrics/quick/ into
benchmarks/quick/results.md. A section per group of the table, from the
files its rows' scripts write; anything missing is "-", a row with nothing
is listed as not run; a figure is linked where the metrics hold its data
(plots.py draws it from the same functions).

    python -m benchmarks.report [--metrics metrics] [--scale full|quick] [--output benchmarks/results.md]"""
import argparse
import json
import shlex
import statistics
import sys
from pathlib import Path
from typing import Dict, List, Optional

from benchmarks import experiments as X
from benchmarks.curves import best_evaluation, epoch_points, per_epoch, read_curve
from benchmarks.harness import model_name

ROOT = Path(__file__).resolve().parents[1]
# the archive of the tables and figures kept by hand here until 2026-11-27
KEPT = "Figures kept by hand in results.md until 2026-11-27"
# the paper's F1 (Tsuruoka et al. 2011, Tables 2-3) for the rows that have one
PAPER_F1 = {"chunker_d0": 93.53, "chunker_d1": 93.77, "chunker_d2": 93.81, "crf_conll2000": 93.66,
            "ner_rtl_d0": 70.17, "ner_rtl_d1": 72.28, "ner_rtl_d2": 72.00, "crf_jnlpba": 71.63}
# (perceptron run, SAPO run, task title, score key, component)
SAPO_PAIRS = [
    ("tagger_d1", "tagger_sapo", "POS tagging, EWT (dev tag accuracy)", "tag_acc", "lookahead_tagger"),
    ("chunker_d1", "chunker_sapo", "Chunking, CoNLL-2000 (test F1, logged curve)", "spans_chunks_f",
     "lookahead_chunker"),
    ("ner_rtl_d1", "ner_rtl_sapo", "Bio-NER, JNLPBA right-to-left (test F1, logged curve)", "ents_f",
     "lookahead_ner")]


def read_json(path: Path):
    try:
        return json.loads(path.read_text(encoding="utf8"))
    except (OSError, ValueError):
        return None


def fmt(value, spec: str, scale: float = 1.0) -> str:
    return "-" if value is None else format(value * scale, spec)


def pct(value) -> str:
    return fmt(value, ".2f", 100)


def row(*cells) -> str:
    return "| " + " | ".join(str(c) for c in cells) + " |"


def table(*head: str) -> List[str]:
    return [row(*head), row(*["---"] * len(head))]


def commands(rows, scale: str = "full") -> List[str]:
    return [f"* `{e.name}`: `{shlex.join(X.train_command(e, scale))}`" for e in rows]


def systems(*groups: str, task: str, paper: bool = False):
    """(name, label[, paper F1]) of the table's rows of these groups and task."""
    rows = [e for g in groups for e in X.group(g) if e.task == task]
    return [(e.name, e.label) + ((PAPER_F1.get(e.name),) if paper else ()) for e in rows]


TASKS = [{
    "title": "POS tagging: UD English EWT test set, XPOS (PTB tags), gold tokens",
    "kind": "tag",
    "score": ("tag_acc", "tag acc (test)"),
    "model_dir": "model-best",
    "speed_file": "tagger_speed.json",
    "train_speed_file": "tagger_train_speed.json",  # benchmarks/train_speed.py
    "reference": "spacy_tagger",
    "systems": systems("tagging", "sapo", task="tag"),
    "note": (
        "Test set: 2,077 sentences, 25,094 words (syntactic words; multiword tokens split as in UD). Accuracy "
        "from `spacy benchmark accuracy --gold-preproc`. **Not comparable to Table 1 of Tsuruoka et al. "
        "(2011)**, which tags WSJ (Penn Treebank, train sections 0-18, test 22-24): EWT is web text (blogs, "
        "newsgroups, e-mail, reviews, answers) with a smaller training set (12,544 sentences, 204,577 words) "
        "and a slightly different tag set, so only the differences between rows of this table carry over. The "
        "CRF has the lookahead_tagger's static feature templates (its previous-tag feature is the CRF's tag "
        "transition) and does not use the dev set: it is the model after a fixed iteration cap (model-last), "
        "so it has no best dev score."),
}, {
    "title": "Chunking: CoNLL-2000 test set (WSJ section 20), chunk F1, gold tokens and POS",
    "kind": "span",
    "model_dir": "model-last",
    "speed_file": "chunk_speed.json",
    "reference": "spacy_ner_conll2000",
    "paper_label": "paper F1 (Table 2)",
    "systems": systems("spans", "sapo", task="chunk", paper=True),
    "note": (
        "Test set: 2,012 sentences, 47,377 tokens, 23,852 chunks; training set 8,936 sentences (WSJ 15-18), "
        "the data of the paper, so **the paper's figures (Table 2 of Tsuruoka et al. 2011) are directly "
        "comparable**. P/R/F1: benchmarks/evaluate.py, exact chunk match, micro-averaged over all chunks "
        "(conlleval's overall FB1), one scorer for every row (`spacy_lookahead.scoring.score_chunks`). Every "
        "system gets the gold words and the POS column of the data (Brill-tagger tags); spaCy's `ner` ignores "
        "the POS tags (its efficiency tok2vec embeds NORM, PREFIX, SUFFIX, SHAPE). No development set: every "
        "row is the last model of a fixed training budget (model-last; lookahead_chunker 10 epochs, spaCy ner "
        "a fixed number of epochs without early stopping, the CRF a fixed iteration cap); the test set given "
        "to `spacy train` as dev only logs a curve."),
}, {
    "title": "Bio-NER: JNLPBA 2004 test set, entity F1 (5 types), gold tokens",
    "kind": "span",
    "model_dir": "model-last",
    "speed_file": "ner_speed.json",
    "reference": "spacy_ner_jnlpba",
    "paper_label": "paper F1 (Table 3, ~)",
    "systems": systems("spans", "sapo", task="ner", paper=True),
    "note": (
        "Test set: the original `Genia4EReval1.iob2`, 3,856 sentences, 101,039 tokens, 8,662 entities. **The "
        "training set is an approximate reconstruction** of the JNLPBA training data from the standoff "
        "annotation (18,720 sentences, 492,942 tokens, all 51,301 entities; about 98% of the sentences "
        "tokenised as the original, see shared/data/README.md), so the paper's figures (Table 3 of Tsuruoka et "
        "al. 2011; their history-based models tag right to left) are **approximately comparable** only. "
        "P/R/F1: benchmarks/evaluate.py, exact entity match, micro-averaged (conlleval's overall FB1), "
        "`spacy_lookahead.scoring.score_entities` for every row. Input: the words only. No development set: "
        "model-last of a fixed training budget for every row, as for chunking."),
}]


# --- the tagging, chunking and NER tables -------------------------------------------
def fmt_time(seconds) -> str:
    if seconds is None:
        return "-"
    minutes, secs = divmod(int(round(seconds)), 60)
    if seconds < 10:
        return f"{seconds:.1f} s"
    return f"{seconds:.0f} s" if seconds < 60 else f"{minutes}:{secs:02d} min ({seconds:.0f} s)"


def crf_settings(record) -> str:
    """Settings of a CRF run from its crf_baseline.py record."""
    params, bits = record.get("params", {}), []
    if record.get("limit"):
        bits.append(f"{record['limit']} train sents")
    reg = ", ".join(f"{k} {params[k]:g}" for k in ("c1", "c2") if params.get(k))
    bits.append(f"L-BFGS{' (' + reg + ')' if reg else ''}, {record.get('iterations')} of max "
                f"{params.get('max_iterations')} iterations")
    return ", ".join(bits)


def crf_note(label, setting, record) -> str:
    return (f"{label} ({setting}): {record.get('sentences'):,} sentences, {record.get('attributes_per_token')} "
            f"attributes per token, {record.get('active_features'):,} active features; feature extraction "
            f"{fmt_time(record.get('featurize_seconds'))}, L-BFGS {fmt_time(record.get('train_seconds'))}")


def model_settings(metrics: Path, name: str, model_dir: str):
    """The stopping settings of a trained model and the dev scores of its
    model_dir, from the model_NAME.json run.py wrote (None, None: none)."""
    record = read_json(metrics / f"model_{name}.json")
    if record is None:
        return None, None
    training, bits = record.get("training", {}), []
    if record.get("train_limit", 0):
        bits.append(f"{record['train_limit']} train sents")
    if training.get("max_epochs"):
        bits.append(f"max {training['max_epochs']} epochs")
    if training.get("max_steps") and not training.get("max_epochs"):
        bits.append(f"max {training['max_steps']} steps")
    if training.get("patience"):
        bits.append(f"patience {training['patience']}")
    if not record.get("spacy_train"):  # not trained by spacy train (the CRF): see its record
        bits = []
    return ", ".join(bits), record.get("performance", {}).get(model_dir, {})


def speed_cells(spd, timing) -> List[str]:
    """tokens/s, ratio to the reference, peak RSS when tagging and training."""
    def mb(v):
        return fmt(v, ".0f") + (" MB" if v else "")
    return [fmt(spd.get("tokens_per_second"), ",.0f"), fmt(spd.get("ratio_vs_reference"), ".2f"),
            mb(spd.get("peak_rss_mb")), mb((timing or {}).get("peak_rss_mb"))]


def system_row(metrics: Path, setting: str, speed: dict, name: str, label: str, model_dir: str,
               not_run: list, crf_notes: list):
    """A row's metrics (accuracy, timing, speed, settings, dev scores), or
    None where the run left none (then listed as not run at full scale)."""
    acc, timing = read_json(metrics / f"{name}.json"), read_json(metrics / f"time_{name}.json")
    record = read_json(metrics / f"train_{name}.json")
    spd = speed.get("models", {}).get(name, {})
    detail, dev = model_settings(metrics, name, model_dir)
    if record:
        detail = crf_settings(record)
        crf_notes.append(crf_note(label, setting, record))
    if not (acc or timing or "tokens_per_second" in spd or detail is not None):
        if setting == "full":  # quick runs a subset of the systems on purpose
            not_run.append(f"{label} ({setting})")
        return None
    return acc or {}, timing, spd, detail, dev


def score_table(task, metrics: Path, setting: str) -> List[str]:
    """One task's table: a row per system, the task's note, how it was
    measured, the CRF and speed-run notes, the rows not run, the commands."""
    span = task["kind"] == "span"
    ref, not_run, crf_notes, speed_notes = task["reference"], [], [], []
    speed = read_json(metrics / task["speed_file"]) or {}
    threads = f"OMP/BLAS threads {speed.get('threads', {}).get('OMP_NUM_THREADS')}"
    runs = (f"median of {speed.get('repeats')} runs after {speed.get('warmup_docs')} warm-up docs")
    if speed and span:
        limit = speed.get("limit_docs")
        speed_notes.append(f"{setting}: {speed.get('task')} inputs "
                           f"({'first ' + str(limit) + ' test docs' if limit else 'whole test set'}), batch "
                           f"size {speed.get('batch_size')}, {runs}, n_process=1, {threads}")
    elif speed:
        speed_notes.append(f"{setting}: batch size {speed.get('batch_size')}, {runs}, "
                           f"n_process={speed.get('n_process')}, {threads}")
    if span:
        lines = [f"## {task['title']}", ""] + table(
            "system", "setting", "F1 (test)", "P", "R", task["paper_label"], "training time",
            "tokens/s", f"x {ref}", "peak RSS tagging", "peak RSS training")
    else:
        key, score_label = task["score"]
        epochs = {f"tagger_d{r['depth']}": r for r in read_json(metrics / task["train_speed_file"]) or []}
        lines = [f"## {task['title']}", ""] + table(
            "system", "setting", score_label, "best dev", "training time", "1 epoch", "tokens/s",
            f"x {ref}", "peak RSS tagging", "peak RSS training")
    for name, label, *paper in task["systems"]:
        found = system_row(metrics, setting, speed, name, label, task["model_dir"] if span else "model-best",
                           not_run, crf_notes)
        if found is None:
            continue
        acc, timing, spd, detail, dev = found
        shown_setting = setting + (f" ({detail})" if detail else "")
        wall = fmt_time((timing or {}).get("wall_seconds"))
        if not span:
            lines.append(row(label, shown_setting, pct(acc.get(key)), pct((dev or {}).get(key)), wall,
                             fmt_time(epochs.get(name, {}).get("epoch_seconds")), *speed_cells(spd, timing)))
            continue
        crf_timing = acc.get("benchmark_crf_spans_timing")
        if crf_timing:
            crf_notes.append(
                f"{label} ({setting}), prediction in benchmarks/evaluate.py: "
                f"{crf_timing['featurize_share'] * 100:.0f}% of the time in the Python feature extraction; "
                f"crfsuite's tagging alone (attribute lookup + Viterbi): "
                f"{crf_timing['viterbi_tokens_per_second']:,} tokens/s")
        lines.append(row(label, shown_setting, pct(acc.get("f")), pct(acc.get("p")), pct(acc.get("r")),
                         "-" if paper[0] is None or setting != "full" else f"{paper[0]:.2f}", wall,
                         *speed_cells(spd, timing)))
    lines += ["", task["note"], ""]
    if span:
        lines += [
            "Training time: wall time of `spacy train` (lookahead components, spaCy ner: including "
            "initialisation and the test-set evaluations spaCy logs during training) or of "
            "benchmarks/crf_baseline.py (CRF: reading, feature extraction, L-BFGS, saving), by "
            "benchmarks/timed.py with one BLAS thread. Tokens/s: benchmarks/speed.py, `nlp.pipe` over "
            "the test docs rebuilt from the gold tokens (plus the POS tags for chunking), one "
            "subprocess per model, one process, one thread; peak RSS tagging is that subprocess's "
            f"ru_maxrss. x {ref}: tokens/s divided by those of spaCy's ner measured in the same run. "
            "The CRF's tokens/s include its feature extraction, written in Python "
            "(benchmarks/crf_spans.py), which costs more than crfsuite's Viterbi. The paper's "
            "training times (one core of a 3.33 GHz Xeon W5590) are in its tables.", ""]
    else:
        lines += [
            "Training time: wall time of `spacy train` (benchmarks/timed.py, including initialisation and the "
            "dev evaluations spaCy runs during training), for the CRF of benchmarks/crf_baseline.py (reading, "
            "feature extraction, L-BFGS, saving). 1 epoch: one pass of `nlp.update` over the training set, "
            "nothing else (benchmarks/train_speed.py). Tokens/s: benchmarks/speed.py, `nlp.pipe` over the test "
            "docs rebuilt without annotation from the gold tokens, one subprocess per model; peak RSS tagging "
            "is that subprocess's ru_maxrss (Python + spaCy + data + model). x reference: tokens/s divided by "
            "those of the built-in tagger measured in the same run. The CRF's tokens/s include its feature "
            "extraction, written in Python (benchmarks/crf_spans.py).", ""]
    lines += [f"* CRF, {n}" for n in crf_notes] + [f"* speed run, {n}" for n in speed_notes]
    if not_run:
        lines += ["", "Not run (no metrics found): " + "; ".join(not_run) + "."]
    return lines + ["", "Commands (`python -m benchmarks.run commands`):", ""] + commands(
        X.EXPERIMENTS[r[0]] for r in task["systems"] if r[0] in X.EXPERIMENTS) + [""]


# --- the new features' cost: each component with and without them ---------------
FEATURE_SPEEDS = (
    ("lexicon_speed_tag", "POS tagging, EWT test (words in)"),
    ("lexicon_speed_chunk", "chunking, CoNLL-2000 test (words + POS in)"),
    ("lexicon_speed_ner", "bio-NER right-to-left, JNLPBA test (words in)"),
    ("affixes_speed_ner", "bio-NER right-to-left, JNLPBA test tagged by the EWT tagger"),
    ("stacked_speed_ner", "bio-NER, two stages against one, JNLPBA test (words in; both behind the "
                          "EWT tagger)"))


def feature_speed_section(metrics: Path) -> List[str]:
    """The speed runs that time a component with the templates and schemes
    the knowledge work added against the same component with fewer of them
    (the first model of each run), as ratios of the same run. No accuracy
    column: the speed harness's check is a test score, and the models are
    rows chosen on dev or the held-out tenth."""
    tables = []
    for name, title in FEATURE_SPEEDS:
        rec = read_json(metrics / f"{name}.json")
        if not rec:
            continue
        models = rec.get("models", {})
        ref = rec.get("reference")
        # over whole rotations (speed.py's ratio_rotations, which a model's
        # place in the round does not tilt): runs since 2026-12-06 have it
        rotations = any("ratio_rotations" in r for r in models.values())
        lines = [f"{title} (`{name}`, {rec.get('interleaved_rounds') or '-'} interleaved rounds; "
                 f"against `{ref}`):", ""] + table(
            "model", "what", "tokens/s", "x without, one after the other", "x without, interleaved",
            *(["x without, over rotations"] if rotations else []), "peak RSS MB")
        for model, r in models.items():
            e = X.EXPERIMENTS.get(model)
            lines.append(row(f"`{model}`", e.label if e else "-", fmt(rate(r), ",.0f"),
                             fmt(r.get("ratio_vs_reference"), ".2f"),
                             fmt(r.get("ratio_interleaved"), ".2f"),
                             *([fmt(r.get("ratio_rotations"), ".2f")] if rotations else []),
                             fmt(r.get("peak_rss_mb"), ".0f")))
        tables += lines + [""]
    if not tables:
        return []
    return ["## The new features' cost in speed", "",
            "Each component with the templates that read the lexicon (clusters, probability bins), the "
            "wider templates and BILUO, against the same component without them (the NER's affixes: "
            "against the same NER without the affix templates), timed in one run "
            "(benchmarks/speed.py: one process per model, then the models side by side, "
            "`--pairs` rounds, whose median ratio is the steadier figure on a shared machine). "
            "Which setting each pipeline ships, and why, is in NOTES.md.", ""] + tables


# --- scaling over cores, long docs -------------------------------------------------
def scaling_section(metrics: Path, setting: str) -> List[str]:
    """nlp.pipe with n_process = 1 and 2 (benchmarks/scaling.py)."""
    record = read_json(metrics / "scaling.json")
    if not record:
        return []
    lines = ["## Scaling over cores: `n_threads` and `nlp.pipe(texts, n_process=N)`", ""] + table(
        "setting", "model", "texts", "tokens", "n_process", "n_threads", "tokens/s", "speed-up",
        "peak RSS parent", "peak RSS per worker")
    for r in record["results"]:
        worker = r["worker_peak_rss_mb"]
        lines.append(row(setting, record["model"], f"{r['texts']:,}", f"{r['tokens']:,}", r["n_process"],
                         r.get("n_threads", 1), f"{r['tokens_per_second']:,}",
                         fmt(r.get("speedup_vs_1"), ".2f"), f"{r['parent_peak_rss_mb']:.0f} MB",
                         "-" if worker is None else f"{worker:.0f} MB"))
    one = next((r for r in record["results"] if "doc_to_bytes_tokens_per_second" in r), None)
    if one:
        lines += ["", "With n_process > 1, spaCy's workers send each doc back to the parent as "
                  "`Doc.to_bytes()` and the parent rebuilds it with `Doc.from_bytes()`; measured in "
                  f"the same run (one process): {setting}: Doc.to_bytes "
                  f"{one['doc_to_bytes_tokens_per_second']:,} tokens/s, Doc.from_bytes "
                  f"{one['doc_from_bytes_tokens_per_second']:,} tokens/s. For a pipeline that annotates "
                  "about as fast as spaCy (de)serialises docs, a second process on a 2-core machine "
                  "cannot pay: the parent's Doc.from_bytes alone is no faster than the whole "
                  "single-process pipeline."]
    return lines + ["", "Raw texts in (the pipeline's tokenizer runs too), one subprocess per setting; with "
                        "n_process = 2 spaCy pickles the pipeline to two worker processes, so the time "
                        "includes their start-up. n_threads: each component decodes the docs of a batch on "
                        "that many threads in one process (the tokenizer and spaCy's own steps stay on one). "
                        "benchmarks/scaling.py.", ""]


def scale_section(metrics: Path) -> List[str]:
    """Time and peak memory per 1k tokens on one long doc (benchmarks/scale_bench.py)."""
    record = read_json(metrics / "scale.json")
    if not record:
        return []
    lines = ["## Cost per token on long docs: 1k, 10k and 100k tokens in one doc", ""] + table(
        "component", "tokens", "tokens/s", "ms per 1k", "peak MB per 1k", "time x", "memory x",
        "score (the sentences as docs)")
    for r in record["rows"]:
        if r["status"] != "ok":
            lines.append(f"| {r['row']} | {r['size']:,} | {r['status']} | | | | | |")
            continue
        key = next((k for k in r.get("check", {}) if k.endswith(("_f", "_acc", "uas", "_check"))), None)
        score = "-" if key is None else (f"{key} {r['check'][key]:.3f} "
                                         f"({r.get('check_sentence_docs', {}).get(key, 0):.3f})")
        lines.append(row(r["factory"], f"{r['tokens']:,}", f"{r['tokens_per_second']:,.0f}",
                         f"{1000 * r['seconds_per_1k']:.1f}", f"{r['peak_mb_per_1k']:.2f}",
                         f"{r['time_ratio']:.2f}", f"{r['memory_ratio']:.2f}", score))
    return lines + ["", "One doc of test sentences joined without sentence boundaries, small models (default "
                        "settings) trained by the script; x = per-1k figure / that of the 1k-token doc (flat = "
                        "bounded cost per token; timings on a shared machine move by about ±25%). Score: of "
                        "the long doc against the gold, and (in brackets) of the same sentences as separate "
                        "docs. The clause finder needs sentence boundaries (it warns when a long doc has "
                        "none): a third of the gold clauses span a whole sentence. "
                        "benchmarks/scale_bench.py.", ""]


# --- figures: what plots.py draws, where the metrics hold its data ------------------
DEPTH_TASKS = [  # (title, accuracy key, speed file, [(depth, metrics name)])
    ("POS tagging (EWT test)", "tag_acc", "tagger_speed.json", [(d, f"tagger_d{d}") for d in range(3)]),
    ("Chunking (CoNLL-2000 test F1)", "f", "chunk_speed.json", [(d, f"chunker_d{d}") for d in range(3)]),
    ("Bio-NER rtl (JNLPBA test F1)", "f", "ner_speed.json", [(d, f"ner_rtl_d{d}") for d in range(3)])]
PARSER = "arc_standard_parser"


def depth_scores(metrics: Path) -> bool:
    return any((read_json(metrics / f"{name}.json") or {}).get(key) is not None
               for _, key, _, runs in DEPTH_TASKS for _, name in runs)


def sapo_points(metrics: Path, name: str, key: str, component: str) -> list:
    return per_epoch(read_curve(metrics / "curves" / f"{name}.jsonl"), key, component)


def sapo_curves(metrics: Path) -> bool:
    return any(sapo_points(metrics, name, key, component)
               for perc, sapo, _, key, component in SAPO_PAIRS for name in (perc, sapo))


def parser_rows(data: str) -> List[X.Experiment]:
    return [e for e in X.group("parser") if e.data == data and e.name != "spacy_parser"]


def parser_key(e: X.Experiment) -> str:
    return "dep_uas_nopunct" if e.data == "wsj" else "dep_las_nopunct"


def parser_curves(metrics: Path) -> dict:
    """Dev score per epoch (the last evaluation of each epoch) of every parser row."""
    curves = {e.name: per_epoch(read_curve(metrics / "curves" / f"{e.name}.jsonl"), parser_key(e), PARSER)
              for e in parser_rows("ewt") + parser_rows("wsj")}
    return {name: points for name, points in curves.items() if points}


def violation_runs(metrics: Path) -> dict:
    return {k.replace("parser_ewt_", ""): v for k, v in parser_curves(metrics).items()
            if k.startswith("parser_ewt_beam8")}  # one data set


def feedback_runs(metrics: Path) -> list:
    runs = [(feedback, epoch_points(read_curve(metrics / "curves" / f"{name}.jsonl")))
            for name, feedback in (("clauses_fr", "recognition"), ("clauses_co", "classification"))]
    return [(n, points) for n, points in runs if points]


FIGURES = [("depth.png", "Accuracy against lookahead depth, with microseconds per token (Tsuruoka et al. "
                         "Tables 1-4)", depth_scores),
           ("sapo_vs_perceptron.png", "", sapo_curves),
           ("violation_fixing.png", "Parser dev LAS per epoch for each violation-fixing update (Huang et al. "
                                    "Fig. 6)", lambda m: bool(violation_runs(m))),
           ("fr_feedback.png", "Clause F1 on dev per epoch and the filters' F1 bound, recognition vs "
                               "classification feedback (Carreras et al. Figs. 3, "
                               "5)", lambda m: bool(feedback_runs(m))),
           ("beam_pos.png", "", lambda m: any(r["curve"] for r in tagger_beam_rows(m)))]


def drawable(metrics: Path) -> List[str]:
    """The figures of FIGURES that these metrics hold the data of."""
    return [name for name, _, has_data in FIGURES if has_data(metrics)]


def figures_section(metrics: Path) -> List[str]:
    present = [(f, t) for f, t, has_data in FIGURES if t and has_data(metrics)]
    if not present:
        return []
    return (["## Figures", "", "Drawn by benchmarks/plots.py from the metrics above (the SAPO curves are in "
                               "the SAPO "
                               "section).", ""] + [f"* {t}: ![{f}](plots/{f})" for f, t in present] + [""])


# --- SAPO ----------------------------------------------------------------------------
CALIBRATION = [("tagger_sapo", "POS tags (token._.tag_prob), EWT test"),
               ("chunker_sapo", "chunks (doc.spans['chunks'].attrs['scores']), CoNLL-2000 test"),
               ("ner_rtl_sapo", "entities (doc.spans['ents'].attrs['scores']), JNLPBA test")]


def sapo_section(metrics: Path) -> List[str]:
    lines = ["## SAPO against the averaged perceptron (Sun et al.)", "",
             "Same features, same data; SAPO with n = 5 (exact top-n by A*), learning rate 0.1 decaying by 0.8 "
             "per epoch, L2 lambda 2 (POS) and 1 (chunking) as in Sun et al. Section 4.2, and 1 for NER (their "
             "5 stalled at 65 F1 after 5 epochs here; 1 beat 0.1 on a held-out tenth of the training set, 74.9 "
             "vs 74.4); the perceptron is the depth-1 lookahead perceptron with averaging. Per epoch: the "
             "score spaCy logs (dev set for EWT; the test set as a curve for CoNLL-2000 and JNLPBA, which have "
             "no dev set), the mean |w| of the training weights (Sun et al. Fig. 3: the raw perceptron "
             "weights, which the averaged model is the mean of), and the time spent in update() in that epoch. "
             "From metrics/curves/*.jsonl (spacy_lookahead.curves_logger.v1).", ""]
    if sapo_curves(metrics):
        lines += ["![SAPO vs perceptron](plots/sapo_vs_perceptron.png)", ""]
    for perc, sapo, title, key, component in SAPO_PAIRS:
        a, b = sapo_points(metrics, perc, key, component), sapo_points(metrics, sapo, key, component)
        if not (a or b):
            lines += [f"*{title}: no curves yet (run train-sapo and the depth-1 training).*", ""]
            continue
        lines += [f"### {title}", ""] + table(
            "epoch", "perceptron score", "perceptron mean abs w", "perceptron s/epoch", "SAPO score",
            "SAPO mean abs w", "SAPO s/epoch")
        for i in range(max(len(a), len(b))):
            pa, pb = a[i] if i < len(a) else {}, b[i] if i < len(b) else {}
            lines.append(row(i + 1, *(cell for p in (pa, pb) for cell in (
                pct(p.get("score")), fmt(p.get("w_mean_abs"), ".4f"), fmt(p.get("update_seconds"), ".1f")))))
        lines.append("")
    lines += ["### Prediction speed: SAPO against the depth-1 perceptron (same run)", "",
              "benchmarks/speed.py, one process, the test sets as in the tables above; SAPO with its default "
              "probabilities (exact marginals for first-order models). Interleaved: the median over rounds of "
              "one pass of each, side by side (speed.py --pairs), the steadier figure on a shared "
              "machine.", ""] + table(
        "task", "perceptron depth 1 tokens/s", "SAPO tokens/s", "SAPO / perceptron", "interleaved",
        "SAPO peak RSS")
    for task, perc, sapo in (("tag", "tagger_d1", "tagger_sapo"), ("chunk", "chunker_d1", "chunker_sapo"),
                             ("ner", "ner_rtl_d1", "ner_rtl_sapo")):
        models = (read_json(metrics / f"sapo_speed_{task}.json") or {}).get("models")
        if models is None:
            continue
        a, b = models.get(perc, {}), models.get(sapo, {})
        lines.append(row(task, fmt(a.get("tokens_per_second"), ",.0f"), fmt(b.get("tokens_per_second"), ",.0f"),
                         fmt(b.get("ratio_vs_reference"), ".2f"), fmt(b.get("ratio_interleaved"), ".2f"),
                         f"{fmt(b.get('peak_rss_mb'), '.0f')} MB"))
    lines += ["", "### Calibration of SAPO's probabilities (test sets)", "",
              "Each prediction in a probability bin; accuracy = fraction of the bin's predictions that are "
              "right (exact span and label, or the gold tag). ECE: count-weighted mean |mean probability - "
              "accuracy|. benchmarks/calibration.py.", ""] + table(
        "predictions", "bin", "count", "mean probability", "accuracy")
    for name, label in CALIBRATION:
        cal = read_json(metrics / f"calibration_{name}.json")
        if cal is None:
            lines.append(f"| {label} | not run | - | - | - |")
            continue
        lines += [row(label, f"[{b['low']:.2f}, {b['high']:.2f})", f"{b['count']:,}",
                      f"{b['mean_probability']:.3f}", f"{b['accuracy']:.3f}") for b in cal["bins"] if b["count"]]
        lines.append(row(label, f"all (ECE {cal['ece']:.4f})", f"{cal['predictions']:,}", "-",
                         f"{cal['accuracy']:.3f}"))
    shown = [task for task, (name, _) in zip(("tag", "chunk", "ner"), CALIBRATION)
             if (metrics / f"calibration_{name}.json").exists()]
    if shown:
        lines += [""] + [f"![reliability, {task}](plots/reliability_{task}.png)" for task in shown]
    ablations = metrics / "sapo_ablations.md"
    if ablations.exists():
        lines += ["", "### SAPO on JNLPBA: ablations on a held-out tenth of the training set", "",
                  "The `sapo-ablations` rows of benchmarks/experiments.py: one `spacy train` per setting on "
                  "the first 90% of train, scored each epoch on its last tenth (never on test); one setting "
                  "changed from Sun et al.'s (n = 5, gamma 0.1 decaying by 0.8, A*, no averaging, first-order; "
                  "lambda 1); the commands are listed at the end of the "
                  "section.", "", ablations.read_text().strip(), "",
                  "![SAPO ablations](plots/sapo_ablations.png)"]
    return lines + ["", "Commands of the SAPO rows and ablations (`python -m benchmarks.run commands sapo "
                        "sapo-ablations`):", ""] + commands(X.group("sapo") + X.group("sapo-ablations")) + [""]


# --- dependency parsing -------------------------------------------------------------
def curve_summary(metrics: Path, e: X.Experiment) -> Optional[Dict[str, object]]:
    """Best dev evaluation (its epoch), epochs run, seconds in update() per
    epoch, beam updates and invalid ones, from the run's logged curve."""
    logged = [r for r in read_curve(metrics / "curves" / f"{e.name}.jsonl") if r["step"] > 0]
    if not logged:
        return None
    best, last, epochs = max(logged, key=lambda r: r["score"]), logged[-1]["scores"], logged[-1]["epoch"] + 1
    return {"best_dev": best["scores"].get(parser_key(e)), "best_epoch": best["epoch"] + 1,
            "epochs_run": epochs,
            "update_seconds_per_epoch": round(last.get(f"{PARSER}_update_seconds", 0.0) / epochs, 2),
            "updates": last.get(f"{PARSER}_beam_updates"), "invalid": last.get(f"{PARSER}_beam_invalid")}


def epochs_to_reach(points: List[dict], target: float) -> Optional[int]:
    return next((p["epoch"] for p in points if p["score"] is not None and p["score"] >= target), None)


def early_vs_max_violation(curves: dict, mv: str, early: str, note: str) -> List[str]:
    """Huang et al.'s claim: max-violation reaches early update's best dev
    score in fewer epochs (per-epoch dev scores: the last evaluation of each)."""
    if mv not in curves or early not in curves:
        return []
    m, e = curves[mv], curves[early]
    best_e, best_m = max(e, key=lambda p: p["score"]), max(m, key=lambda p: p["score"])
    k = epochs_to_reach(m, best_e["score"])
    return [f"Max-violation vs early update{note}: early's best dev score {pct(best_e['score'])} at epoch "
            f"{best_e['epoch']} of {len(e)}; max-violation's best {pct(best_m['score'])} at epoch "
            f"{best_m['epoch']} of {len(m)}; "
            + (f"max-violation reaches early's best at epoch {k}." if k else
               f"max-violation never reaches early's best within {len(m)} epochs."),
            "Epochs max-violation needs to reach early update's dev score of epoch k (k->epochs): "
            + ", ".join(f"{p['epoch']}->{epochs_to_reach(m, p['score']) or '-'}" for p in e) + ".", ""]


def parser_section(metrics: Path, scale: str) -> List[str]:
    lines = ["## Dependency parsing: arc_standard_parser (UD English EWT, WSJ sample)", ""]
    if scale == "quick":
        lines += ["Quick run (`--scale quick`: a training slice, 2 epochs; a smoke test, its figures say "
                  "nothing about the methods).", ""]
    lines += table("system", "setting", "UAS", "LAS", "UAS no punct", "LAS no punct", "best dev epoch",
                   "epochs run", "s in update() / epoch", "invalid updates")
    runs = []
    for e in parser_rows("ewt"):
        t, c = read_json(metrics / f"{e.name}.json"), curve_summary(metrics, e)
        if not t:
            continue
        inv = "-"
        if c and c["updates"] is not None:
            inv = f"{c['invalid']:.0f}/{c['updates']:.0f} ({100 * c['invalid'] / max(1, c['updates']):.1f}%)"
        lines.append(row("arc_standard_parser", f"{e.label}, gold POS", pct(t["uas"]), pct(t["las"]),
                         pct(t["uas_nopunct"]), pct(t["las_nopunct"]),
                         *((c["best_epoch"], c["epochs_run"], c["update_seconds_per_epoch"]) if c else ("-",) * 3),
                         inv))
        runs.append(e)
    base, timing = read_json(metrics / "spacy_parser.json"), read_json(metrics / "time_spacy_parser.json")
    if base:
        lines.append(row("spaCy parser (arc-eager, CNN tok2vec, efficiency)", "words only", pct(base["uas"]),
                         pct(base["las"]), pct(base["uas_nopunct"]), pct(base["las_nopunct"]), "-", "-",
                         f"{timing['wall_seconds']:.0f} s wall in total" if timing else "-", "-"))
    lines += ["", "EWT test: 2,077 sentences, 25,094 words, gold tokenisation. Punctuation = gold label "
                  "`punct`. Each row is `spacy train configs/parser_ewt.cfg` with its settings (commands "
                  "below): about two dev evaluations per epoch, model-best by dev LAS without punctuation, "
                  "scored once on test (benchmarks/parser_eval.py). s in update() / epoch: wall time inside "
                  "the component's update(). Invalid updates: standard updates where the gold sequence scores "
                  "above the predicted one (Huang et al. 2012, Fig. 5); the other methods make none by "
                  "construction: the standard update alone depends on the order of the training docs (with "
                  "most of its updates invalid, a run can stay near its first evaluation; Huang et al. give it "
                  "no convergence guarantee under inexact search), so its row is one order, not the method's "
                  "figure. The parser from words only (predicted tags) is the next section.", ""]
    curves = parser_curves(metrics)
    for suffix, note in (("", ""), ("_sents", " (gold sentence starts)")):
        lines += early_vs_max_violation(curves, f"parser_ewt_beam8_max_violation{suffix}",
                                        f"parser_ewt_beam8_early{suffix}", note)
    lines += early_vs_max_violation(curves, "parser_wsj_beam8_max_violation_long", "parser_wsj_beam8_early",
                                    " on the unlabelled WSJ sample (UAS no punct)")
    lines += ["WSJ sample (NLTK, PTB sections 00-01; 3,396 train / 245 test sentences; unlabelled, gold POS; "
              "punctuation = gold tags `` '' , . :; configs/parser_wsj.cfg, model-best by dev UAS without "
              "punctuation):", ""] + table(
        "setting", "UAS no punct (test)", "UAS (test)", "best dev epoch", "s in update() / epoch")
    for e in parser_rows("wsj"):
        t, c = read_json(metrics / f"{e.name}.json"), curve_summary(metrics, e)
        if t:
            lines.append(row(e.label, pct(t["uas_nopunct"]), pct(t["uas"]), c["best_epoch"] if c else "-",
                             c["update_seconds_per_epoch"] if c else "-"))
            runs.append(e)
    speed = read_json(metrics / "parser_speed.json")
    if speed:
        ref = speed.get("reference", "spacy_parser")
        lines += ["", "Speed (EWT test, gold words + gold tags, one process, benchmarks/speed.py --task parse, "
                      "same run):", ""] + table("model", "tokens/s", f"x {ref}", "peak RSS", "UAS check")
        for name, r in speed["models"].items():
            lines.append(f"| {name} | skipped: {r.get('skipped', '?')} | - | - | - |"
                         if "tokens_per_second" not in r else
                         row(name, f"{r['tokens_per_second']:,.0f}", r.get("ratio_vs_reference", "-"),
                             f"{r['peak_rss_mb']} MB", pct(r.get("uas_check"))))
    if runs:
        lines += ["", "Runs (`python -m benchmarks.run train NAME` runs the command; the curves are in "
                      "metrics/curves/NAME.jsonl):", ""] + commands(runs, scale)
        if base:
            lines += commands([X.EXPERIMENTS["spacy_parser"]], scale)
    return lines


def raw_parser_section(metrics: Path, scale: str) -> List[str]:
    """The parser from words only (tagger + parser trained together,
    configs/pipeline_ewt.cfg): the rows of the raw-parser group scored on
    test; the rows without a test score are the ones that lost on dev."""
    rows = [e for e in X.group("raw-parser", scale) if e.task == "pipeline"]
    lines = ["## The parser from words only: tagger + arc_standard_parser (UD English EWT)", ""]
    lines += table("setting", "LAS no punct", "UAS no punct", "tags", "best dev LAS no punct",
                   "best dev epoch", "epochs run", "training")
    runs = []
    for e in rows:
        t, c = read_json(metrics / f"{e.name}.json"), curve_summary(metrics, e)
        timing = read_json(metrics / f"time_{e.name}.json")
        if not t and not c:
            continue
        lines.append(row(e.label, *((pct(t["las_nopunct"]), pct(t["uas_nopunct"]), pct(t["tag_acc"]))
                                    if t else ("- (not scored: lost on dev)", "-", "-")),
                         *((pct(c["best_dev"]), c["best_epoch"], c["epochs_run"]) if c else ("-",) * 3),
                         f"{timing['wall_seconds']:.0f} s wall" if timing else "-"))
        runs.append(e)
    lines += ["", "EWT test from its words (gold tokenisation, no tags): the tagger tags, the parser "
                  "parses its tags (benchmarks/parser_eval.py); model-best by dev LAS without "
                  "punctuation, dev scored the same way.", ""]
    if runs:
        lines += ["Runs:", ""] + commands(runs, scale)
    else:
        lines += ["No row at this scale: these runs have no quick budget (the full workflow's "
                  "`raw-parser` command trains them).", ""]
    return lines + pipeline_speed_table(metrics)


def pipeline_speed_table(metrics: Path) -> List[str]:
    """raw_parser_speed: the pipelines from words against spaCy's parser in
    one run (benchmarks/speed.py --task pipeline), one after the other and,
    where the run has rounds, interleaved (the steadier ratio on a shared
    machine); a model the run did not find is listed as skipped."""
    rec = read_json(metrics / "raw_parser_speed.json")
    if not rec:
        return []
    ref, models = rec.get("reference", "spacy_parser"), rec.get("models", {})
    rounds = rec.get("interleaved_rounds")
    out = ["", f"Speed from words (EWT test, gold tokens, no tags: the sentencizer and tagger run too; "
               f"benchmarks/speed.py --task pipeline, one process per model, same run"
               + (f", then {rounds} interleaved rounds" if rounds else "") + f"; `raw_parser_speed`):", ""]
    out += table("model", "tokens/s", f"x {ref}, one after the other", f"x {ref}, interleaved",
                 f"x {ref}, over rotations", "peak RSS MB", "UAS check")
    for name, r in models.items():
        if "skipped" in r:
            out.append(f"| {name} | skipped: {' '.join(str(r['skipped']).split())} | - | - | - | - | - |")
            continue
        out.append(row(name, fmt(rate(r), ",.0f"), fmt(r.get("ratio_vs_reference"), ".2f"),
                       fmt(r.get("ratio_interleaved"), ".2f"), fmt(r.get("ratio_rotations"), ".2f"),
                       fmt(r.get("peak_rss_mb"), ".0f"), fmt(r.get("uas_check"), ".4f")))
    return out + [""]


# --- FR phrase recognisers ------------------------------------------------------------
SHORT = {"clauses_fr": "FR", "clauses_co": "CO"}  # column prefixes of the filtering table


def phrase_rows(task: str, scale: str) -> List[X.Experiment]:
    return [e for e in X.group("phrases", scale) if e.task == task]


def max_epochs(e: X.Experiment, scale: str) -> Optional[int]:
    """The row's training.max_epochs (its override, else its config's)."""
    epochs = e.overrides(scale).get("training.max_epochs")
    if epochs is None:
        from spacy.util import load_config
        try:
            epochs = load_config(ROOT / e.config, interpolate=False)["training"]["max_epochs"]
        except (OSError, KeyError):
            return None
    return int(epochs)


def phrases_section(metrics: Path, setting: str) -> List[str]:
    """Clauses (FR vs CO-VP feedback), the filtering layer per epoch
    (Figure 5), the FR chunker next to the lookahead_chunker, their speed;
    empty when nothing was measured."""
    clauses, chunks, speed, runs = [], [], [], []
    for e in phrase_rows("clauses", setting):
        curve, test = read_curve(metrics / "curves" / f"{e.name}.jsonl"), read_json(metrics / f"{e.name}.json")
        if epoch_points(curve):
            runs.append((SHORT.get(e.name, e.name), epoch_points(curve)))
        if not curve and not test:
            continue
        best = best_evaluation(curve)
        when = f"{best['epoch']} of {max(r['epoch'] for r in curve) + 1}" if best else "-"
        dev = best["scores"] if best else {}
        clauses.append(row(e.label, setting, when, *(pct(dev.get(f"spans_clauses_{m}")) for m in "prf"),
                           *(f"{test[m]:.2f}" if test else "-" for m in "prf")))
    for e in phrase_rows("fr_chunk", setting):
        curve, test = read_curve(metrics / "curves" / f"{e.name}.jsonl"), read_json(metrics / f"{e.name}.json")
        if curve or test:
            best = best_evaluation(curve)
            when = f"{best['epoch']} of {max(r['epoch'] for r in curve) + 1}" if best else "-"
            dev = " (dev: held-out 10% of train)" if e.dev_is_train else ""
            chunks.append(row(e.label, setting, f"best {when}{dev}",
                              *(f"{test[m]:.2f}" if test else "-" for m in "prf")))
    look = X.EXPERIMENTS["chunker_d1"]
    result = read_json(metrics / f"{look.name}.json")
    if result and "p" in result and X.in_scale(look, setting):
        scale = 100 if result["p"] <= 1 else 1
        chunks.append(row(look.label, setting, f"{max_epochs(look, setting) or '-'} (fixed, {look.model})",
                          *(f"{scale * result[m]:.2f}" for m in "prf")))
    for name in ("clauses_speed", "fr_chunker_speed"):
        for model, r in (read_json(metrics / f"{name}.json") or {}).get("models", {}).items():
            if "tokens_per_second" not in r:
                speed.append(f"| {model} | {setting} | skipped: {r.get('skipped', '?')} | | | | |")
                continue
            speed.append(row(model, setting, f"{r['n_tokens']:,}", f"{r['tokens_per_second']:,.0f}",
                             fmt(r.get("ratio_vs_reference"), ".2f"), f"{r['peak_rss_mb']:.0f} MB",
                             pct(r.get("f1_check"))))
    if not (clauses or chunks or speed):
        return []
    epochs = {e.name: max_epochs(e, "full") for e in X.group("phrases")}
    out = ["## FR phrase recognisers (Carreras et al. 2005)", ""]
    if clauses:
        out += ["Clause identification on wsj_clauses (the NLTK WSJ sample in the CoNLL-2001 format, gold "
                "POS and approximate chunks as input; NOT the CoNLL-2001 data of the paper's Table 3). "
                "Exact clause spans, micro-averaged. Each row is one `spacy train` run (commands below; "
                f"up to {epochs.get('clauses_fr')} epochs, one evaluation on dev per epoch); dev: the "
                "evaluation spaCy kept as model-best (best dev F1); test: that model, scored once "
                "(`benchmarks/fr_eval.py`).", ""] + table(
            "model", "setting", "best dev epoch", "dev P", "dev R", "dev F1", "test P", "test R",
            "test F1") + clauses + [""]
    if runs:  # per epoch (its last evaluation): candidates, their recall, the F1 bound, dev F1
        head = ["epoch"] + [f"{s}: {c}" for s, _ in runs
                            for c in ("candidates", "gold among them", "F1 bound", "dev F1")]
        by_epoch = [{p["epoch"]: p["scores"] for p in points} for _, points in runs]
        out += ["The filtering layer on dev after each epoch (the paper's Figure 5; the last evaluation of "
                "each epoch in the runs' curves, keys spans_clauses_candidates, _candidates_recall, _f_bound): "
                "candidates (s, e) generated by the start/end filters, the share of gold clauses among them, "
                "and the F1 a perfect ranker could reach on them"
                + (" (quick run: a smoke test)." if setting == "quick" else "."), ""] + table(*head)
        for epoch in sorted(set().union(*by_epoch)):
            cells = [epoch]
            for scores in by_epoch:
                s = scores.get(epoch)
                if s is None or "spans_clauses_candidates" not in s:
                    cells += ["-"] * 3 + [pct(s and s.get("spans_clauses_f"))]
                else:
                    cells += [f"{s['spans_clauses_candidates']:,.0f}",
                              f"{100 * s['spans_clauses_candidates_recall']:.1f}%",
                              pct(s["spans_clauses_f_bound"]), pct(s.get("spans_clauses_f"))]
            out.append(row(*cells))
        out.append("")
    if chunks:
        out += ["Chunking on CoNLL-2000 test (the paper's Table 6: FR-Perceptron 93.71).", ""] + table(
            "model", "setting", "epochs", "P", "R", "F1") + chunks + [""]
    if speed:
        out += ["Prediction speed (`benchmarks/speed.py`, one process per model: nlp.pipe on the test docs "
                "with the inputs only, words + POS tags (+ chunks for clauses), median of the repeats), peak "
                "memory of the process, and the F1 of the timed output.", ""] + table(
            "model", "setting", "tokens timed", "tokens/s", "x reference", "peak memory", "F1 check") \
            + speed + [""]
    return out + ["Runs (`python -m benchmarks.run train NAME` runs the command; the curve is "
                  "metrics/curves/NAME.jsonl; `python -m benchmarks.run evaluate NAME` scores it):",
                  ""] + commands(X.group("phrases"))


# --- one engine: every learner with every system --------------------------------------
WIDTHS, UPDATES = (1, 2, 4, 8), ("early", "max_violation", "standard")


def beam_epochs(metrics: Path, name: str, component: str) -> List[Dict]:
    """Per epoch (its last logged row): the score, and the seconds in
    update(), beam updates and invalid ones in it (the logs are cumulative)."""
    rows = read_curve(metrics / "curves" / f"{name}.jsonl")
    last: Dict[int, Dict] = {row["epoch"]: row for row in rows}
    out, prev = [], {"seconds": 0.0, "updates": 0.0, "invalid": 0.0}
    for epoch in sorted(last):
        s = last[epoch]["scores"]
        now = {k: s.get(f"{component}_{key}", 0.0) for k, key in
               (("seconds", "update_seconds"), ("updates", "beam_updates"), ("invalid", "beam_invalid"))}
        out.append({"epoch": epoch + 1, "score": last[epoch]["score"], **{k: now[k] - prev[k] for k in now}})
        prev = now
    return out


def tagger_beam_rows(metrics: Path) -> List[Dict]:
    """Huang et al.'s POS experiment: each beam row and the depth-1 tagger."""
    rows = []
    for name, label in ([(f"tagger_beam{k}_{u}", f"beam k={k}, {u.replace('_', '-')} update")
                         for k in WIDTHS for u in UPDATES] + [("tagger_d1", "lookahead depth 1 (margin perceptron)")]):
        test, curve = read_json(metrics / f"{name}.json"), beam_epochs(metrics, name, "lookahead_tagger")
        best = max(curve, key=lambda r: r["score"]) if curve else None
        updates, invalid = sum(r["updates"] for r in curve), sum(r["invalid"] for r in curve)
        rows.append({"name": name, "label": label, "test": test and test.get("tag_acc"),
                     "best_dev": best and best["score"], "best_epoch": best and best["epoch"],
                     "epochs": len(curve), "seconds": sum(r["seconds"] for r in curve) / len(curve) if curve else None,
                     "invalid": f"{int(invalid)}/{int(updates)} ({100 * invalid / updates:.1f}%)"
                     if updates and name.endswith("standard") else "-", "curve": curve})
    return rows


def engine_section(metrics: Path) -> List[str]:
    rows = tagger_beam_rows(metrics)
    spacy_tagger = read_json(metrics / "spacy_tagger.json")
    out = ["## One engine: every learner with every system", "",
           "The learners live once in `core/learners.pyx` and run on every transition system, so the sequence "
           "labellers can use beam search with the violation-fixing updates and the parser SAPO. Project "
           "command `engine`; the `spacy train` command of each row is listed at the end of the "
           "section.", "", "### Huang et al. (2012)'s POS experiment on UD English EWT", "",
           "lookahead_tagger with beam search (same features: the previous tag is the only history feature), "
           "configs/tagger_ewt.cfg (12 epochs, the best dev model is scored on test). Test accuracy of the "
           "lookahead tagger at depth 1 and of spaCy's tagger from the same run. Invalid updates: standard "
           "updates where the gold sequence scores above the predicted one (Huang et al. Fig. "
           "5).", ""] + table("setting", "tag acc (test)", "best dev", "best dev epoch", "epochs",
                                      "update s / epoch", "invalid updates")
    out += [row(r["label"], pct(r["test"]), pct(r["best_dev"]), r["best_epoch"] or "-", r["epochs"] or "-",
                fmt(r["seconds"], ".1f"), r["invalid"]) for r in rows]
    out.append(row("spaCy tagger (CNN, efficiency)", pct(spacy_tagger and spacy_tagger.get("tag_acc")),
                   *["-"] * 5))
    by, reached = {r["name"]: r["curve"] for r in rows}, []
    for k in WIDTHS:
        early, mv = by[f"tagger_beam{k}_early"], by[f"tagger_beam{k}_max_violation"]
        if early and mv:
            target = max(r["score"] for r in early) - 0.001
            reached.append(f"k={k}: early reaches its best - 0.1 at epoch "
                           f"{epochs_to_reach(early, target) or '-'}, max-violation at epoch "
                           f"{epochs_to_reach(mv, target) or 'never'}")
    if reached:
        out += ["", "Epochs to reach early update's best dev accuracy minus 0.1: " + "; ".join(reached) + "."]
    if any(r["curve"] for r in rows):
        out += ["", "![beam POS](plots/beam_pos.png)"]
    out += ["", "### Beam search for chunking and NER", ""] + table(
        "task", "setting", "F1 (test)", "training wall time")
    for name, task, label in (("chunker_d1", "CoNLL-2000 chunking", "lookahead depth 1"),
                              ("chunker_beam8_max_violation", "CoNLL-2000 chunking", "beam k=8, max-violation"),
                              ("ner_rtl_d1", "JNLPBA NER (rtl)", "lookahead depth 1"),
                              ("ner_rtl_beam8_max_violation", "JNLPBA NER (rtl)", "beam k=8, max-violation")):
        m, t = read_json(metrics / f"{name}.json"), read_json(metrics / f"time_{name}.json")
        out.append(row(task, label, pct(m and m.get("f")), f"{fmt(t and t.get('wall_seconds'), '.0f')} s"))
    out += ["", "### SAPO for the parser (EWT, gold POS)", "",
            "Head probability: the summed probability of the n best parses that give the token the same head "
            "and label (`token._.head_prob`); ECE over all test tokens, in the bins of "
            "benchmarks/calibration.py.", ""] + table(
        "setting", "LAS no punct", "UAS no punct", "best dev epoch", "CPU s / epoch (training)", "head-prob ECE")
    for name, label in (("parser_ewt_greedy", "perceptron, greedy, margin C = 1"),
                        ("parser_depth_d1", "perceptron, lookahead depth 1, margin C = 50"),
                        ("parser_ewt_beam8_early", "perceptron, beam k=8, early update"),
                        ("parser_ewt_sapo", "SAPO, n = 5 of a beam k=8, max-violation prefixes"),
                        ("parser_ewt_sapo_early", "SAPO, n = 5 of a beam k=8, early-update prefixes")):
        m = read_json(metrics / f"{name}.json")
        if m is None:
            out.append(row(label, *["-"] * 5))
            continue
        curve, t = read_curve(metrics / "curves" / f"{name}.jsonl"), read_json(metrics / f"time_{name}.json")
        epochs = curve[-1]["epoch"] + 1 if curve else None
        out.append(row(label, pct(m["las_nopunct"]), pct(m["uas_nopunct"]),
                       max(curve, key=lambda r: r["score"])["epoch"] + 1 if curve else "-",
                       fmt(t["user_seconds"] / epochs if t and epochs else None, ".1f"),
                       fmt((m.get("head_calibration") or {}).get("ece"), ".3f")))
    out += ["", "A row with \"-\" was not run into this metrics directory (the parser rows are rows of the "
                "`parser` command).", "", "Commands:", ""]
    runs = X.group("engine")  # the parser's SAPO rows once (they joined the group)
    runs += [X.EXPERIMENTS[n] for n in ("parser_ewt_sapo", "parser_ewt_sapo_early")
             if n in X.EXPERIMENTS and X.EXPERIMENTS[n] not in runs]
    return out + commands(runs) + [""]


# --- lookahead depth: speed, threads, the parser's depth table ------------------------
def rate(record: Optional[dict]) -> Optional[float]:
    return record.get("tokens_per_second") if record else None


def ratio(a: Optional[float], b: Optional[float], spec: str) -> str:
    return format(a / b, spec) if a and b else "-"


def depth_speed_rows(models: Dict[str, dict], reference: str, prefix: str) -> List[str]:
    ref, d1, rows = rate(models.get(reference)), rate(models.get(f"{prefix}_d1")), []
    for depth in range(4):
        r = models.get(f"{prefix}_d{depth}")
        if not rate(r):
            continue
        check = r.get("tag_acc_check", r.get("f1_check", r.get("uas_check")))
        rows.append(row(depth, f"{rate(r):,.0f}", ratio(rate(r), ref, ".2f"), ratio(rate(r), d1, ".1%"),
                        r.get("peak_rss_mb", "-"), fmt(check, ".4f")))
    if ref:
        rows.append(row(reference, f"{ref:,.0f}", "1.00", "-", models[reference].get("peak_rss_mb", "-"), "-"))
    return rows


def depth_section(metrics: Path) -> List[str]:
    lines, tables = [], []
    head = table("depth", "tokens/s", "x spaCy", "x depth 1", "peak RSS MB", "accuracy check")
    for task, title, reference, prefix in (
            ("tag", "POS tagging, EWT test (words in)", "spacy_tagger", "tagger"),
            ("chunk", "chunking, CoNLL-2000 test (words + POS in)", "spacy_ner_conll2000", "chunker"),
            ("ner", "bio-NER right-to-left, JNLPBA test (words in)", "spacy_ner_jnlpba", "ner_rtl"),
            ("parse", "arc-standard parsing, EWT test (words + gold POS in)", None, "parser"),
            ("parse_d3", "arc-standard parsing, first 100 EWT test sentences", None, "parser")):
        rec = read_json(metrics / f"depth_speed_{task}.json")
        if rec:
            models = {name: r for name, r in rec.get("models", rec).items() if isinstance(r, dict)}
            reference = reference or rec.get("reference") or "spacy_parser"
            tables += [f"{title}:", ""] + head + depth_speed_rows(models, reference, prefix) + [""]
    if tables:
        lines += ["### Lookahead depth: prediction speed", "",
                  "Each task's depth-1 model timed at depth 0-3 (the depth set at load: `MODEL@depth=D`, "
                  "benchmarks/harness.py), one process, one thread, in the same run as spaCy's component "
                  "(ratios carry over between machines, absolute figures do not). The search is exact at every "
                  "depth (core/search.pyx): branch-and-bound, with a Viterbi-style DP over the next D labels "
                  "for the first-order sequence models at depth 3. The accuracy check is that of the depth-1 "
                  "weights searched at depth D (not a model trained at D).", ""] + tables
    thread_rows = []
    for task, prefix in (("tag", "tagger"), ("chunk", "chunker"), ("ner", "ner"), ("parse", "parser")):
        rec = read_json(metrics / f"threads_{task}.json")
        if rec:
            models = rec.get("models", {})
            one, two, procs = (rate(models.get(f"{prefix}_{k}")) for k in ("t1", "t2", "p2"))
            thread_rows.append(row(prefix, f"{one:,.0f}", ratio(two, one, ".2f"), ratio(procs, one, ".2f"))
                               if one else row(prefix, "-", "-", "-"))
    if thread_rows:
        lines += ["### Threads against processes", "",
                  "Each depth-1 model on its gold-token test set, `nlp.pipe(batch_size=1000)`, `n_threads = 2` "
                  "(`MODEL@n_threads=2`) and spaCy's `n_process = 2` (`MODEL@n_process=2`) against one thread, "
                  "same run per task (the `speed` stage of benchmarks/run.py). With threads, `pipe()` "
                  "pipelines the batches: while the threads search one batch without the GIL, the calling "
                  "thread reads the next batch's docs and writes the previous batch's "
                  "annotations.", ""] + table("component", "tokens/s, 1 thread", "x n_threads = 2",
                                               "x n_process = 2") + thread_rows + [
                  "", "A pass here is one `nlp.pipe` call over the test set, two to four batches of 1,000 docs, "
                      "and a call's first and last batches have no neighbour to overlap with; the section "
                      "\"The GIL-held share\" below times one call of about a second per pass "
                      "(benchmarks/NOTES.md, 2026-12-06, compares the two).", ""]
    rows = []
    for depth in range(4):
        rec = read_json(metrics / f"parser_depth_d{depth}.json")
        if rec:
            cpu = (read_json(metrics / f"time_parser_depth_d{depth}.json") or {}).get("user_seconds")
            rows.append(row(depth, *(f"{rec[k]:.2%}" for k in ("uas", "las", "uas_nopunct", "las_nopunct")),
                            "-" if cpu is None else cpu))
    if rows:
        lines += ["### Lookahead depth: the parser on the full EWT training set", "",
                  "Labelled arc-standard (109 actions), gold POS, margin C = 50, `spacy train` "
                  "(configs/parser_ewt.cfg; `python -m benchmarks.run train parser_depth_d0 parser_depth_d1 "
                  "parser_depth_d2`), about two evaluations per epoch on dev, the best dev model scored once "
                  "on test:", ""] + table("depth", "UAS", "LAS", "UAS no punct", "LAS no punct",
                                          "training CPU s") + rows + [""]
    return lines


# --- the GIL-held share and the serial fraction (issue 38) ----------------------------
def amdahl(serial: float, threads: int) -> float:
    """Amdahl's speed-up at `threads` for a serial fraction (none below 0)."""
    serial = max(serial, 0.0)
    return 1 / (serial + (1 - serial) / threads)


def gil_section(metrics: Path, fresh: bool = False) -> List[str]:
    """benchmarks.gil's record: each component's GIL-held share g of its
    pipe() on one thread, its speed-up at the most threads timed and where
    the rest went (the cores waiting, or more CPU a token), the serial
    fraction s of the waiting and what s allows at 8 and 16 threads
    (Amdahl), the calling thread's share and the ceiling it sets, the
    engine's speed-up alone, and whether the outputs at every thread count
    were one thread's. A record without CPU times (before 2026-12-06) gives
    s from the speed-up itself. fresh: the record of fresh text
    (gil_cold.json: benchmarks.gil --cold)."""
    record = read_json(metrics / ("gil_cold.json" if fresh else "gil.json"))
    rows = record.get("rows") if isinstance(record, dict) else None
    if not rows:
        return []
    counts = sorted({int(k.rsplit("_", 1)[1]) for r in rows for k in r if k.startswith("tokens_per_second_")})
    one, t = counts[0], counts[-1]
    cpu_times = any(f"busy_{t}" in r for r in rows)
    out = table("component", "model", "inputs", f"GIL-held g, {one} thread", f"tokens/s, {one} thread",
                f"s a pass, {one} thread", f"x {t} threads", f"cores busy, {t} threads",
                f"CPU a token, x {one} thread's", "serial fraction s", "Amdahl at 8 threads",
                "Amdahl at 16 threads", f"calling thread's share, {t} threads", "ceiling 1 / that share",
                f"engine alone x {t}", "outputs identical")
    seconds = record.get("min_seconds")
    passes = "" if not seconds else (
        f"; the inputs copied as many times as make one thread's pass last about {seconds:g} s (a shorter "
        "pass gives a thread's start and end, and the machine's noise, the weight of the search)")
    for r in rows:
        s = r.get(f"idle_serial_fraction_{t}" if cpu_times else f"serial_fraction_{t}")
        share = r["gil_share"]  # NaN: a record of code without the engine's clock
        out.append(row(r["component"], model_name(r["model"]), r.get("inputs", "gold"),
                       "-" if share != share else f"{100 * share:.1f}%",
                       fmt(r.get(f"tokens_per_second_{one}"), ",.0f"), fmt(r.get("seconds_per_pass"), ".2f"),
                       fmt(r.get(f"speedup_{t}"), ".2f"), fmt(r.get(f"busy_{t}"), ".0%"),
                       fmt(r.get(f"cpu_ratio_{t}"), ".2f"), fmt(s, ".3f"),
                       "-" if s is None else f"{amdahl(s, 8):.1f}x",
                       "-" if s is None else f"{amdahl(s, 16):.1f}x",
                       fmt(r.get(f"calling_share_{t}"), ".1%"),
                       "-" if not r.get(f"calling_share_{t}") else f"{1 / r[f'calling_share_{t}']:.1f}x",
                       fmt(r.get(f"engine_speedup_{t}"), ".2f"), "yes" if r["identical"] else "NO"))
    serial = (
        f"Where a speed-up S below {t} goes (the process's CPU time, every thread's): the cores busy "
        f"(CPU / ({t} x wall); below 100%, threads waited, as a serial part makes them) and the CPU a token "
        f"took against {one} thread's (above 1, each token cost more, e.g. its inputs read cold on another "
        f"core than the one that made them); S = {t} x busy / (busy at {one} thread x that ratio). s: the "
        f"serial fraction of the waiting alone (Amdahl: {t} x busy / busy at {one} thread = 1 / (s + "
        f"(1 - s) / {t})); the "
        "Amdahl columns are what that serial part allows on 8 and 16 cores, with the CPU a token as on "
        "this machine (what it becomes on a larger one, only a run there can say)"
        if cpu_times else
        f"s: the serial fraction that the speed-up S at {t} threads implies (Amdahl: S = 1 / (s + (1 - s) "
        f"/ {t})); the Amdahl columns are what s would allow on 8 and 16 cores if nothing else limited them")
    if fresh:
        return ["### The same on fresh text", "",
                "As the table above, but each pass goes over a training split once (`benchmarks.gil "
                "--cold`), with the component's word cache emptied before it: every word is new to the "
                "component, as a stream's first words are (a new word type's features are made once; "
                "with threads, by the thread that first meets it where a sample of the batch says "
                "it has many). Warm text is the table above.", ""] + out + [""]
    return ["### The GIL-held share of `pipe()` and the serial fraction", "",
            "Each of the project's components in each model (benchmarks/gil.py): its task's input docs "
            "(gold words, and the gold tags or chunk inputs the task reads; \"pipeline\": the words through "
            "the components before it, for a parser that reads its tagger's alternative tags), `pipe()` "
            f"alone timed at {', '.join(map(str, counts))} threads (`n_threads`), interleaved repeats, "
            f"medians{passes}. GIL-held g: 1 - the wall time of the engine's nogil sections (core/clock.pyx) "
            f"/ the wall time of `pipe()` on {one} thread. {serial}: ceilings from the record's machine (the "
            "header lists it), not measurements on 8 or 16 cores. The calling thread's share: with threads, "
            "`pipe()` makes the next batch's inputs and writes the last one's outputs on the calling thread "
            "while the threads search (its GIL-held work and its own nogil reading and writing of the docs; "
            "the tagging systems' tags, entities and span-group spans are written by the searching threads, "
            "the groups made on the calling thread, and the phrase recognisers' rows made by the threads "
            "that decode each unit), "
            f"and that thread's CPU a token at {t} threads, over {one} thread's whole CPU a token, caps the "
            "speed-up at any thread count at 1 / that share. "
            "Engine alone: the decoder over the same batches on the C threads, their inputs made before "
            "the clock (but for the rows that the tagging systems' searching threads copy per doc), "
            "nothing written. "
            "Outputs identical: the digests of the annotations and probabilities at every thread count "
            f"equal {one} thread's.", ""] + out + [""]


# --- scale-out on Dask ----------------------------------------------------------------
DISTRIBUTED = (
    ("EWT POS tagging (lookahead_tagger, depth 1), tag accuracy", "distributed_train_pos.json"),
    ("EWT POS tagging, 32 rounds: 8 shards against spacy train's 32 epochs", "distributed_train_pos_long.json"),
    ("CoNLL-2000 chunking (lookahead_chunker), chunk F1; dev = the held-out tenth of train",
     "distributed_train_chunk.json"),
    ("CoNLL-2000 chunking, 32 rounds: 4 and 8 shards against spacy train's 32 epochs",
     "distributed_train_chunk_long.json"))


def median_of(value: float, runs: List[float]) -> str:
    return f"{value:.2f} (median of {len(runs)}: " + ", ".join(f"{x:.2f}" for x in runs) + ")"


def train_rows(rows: List[Dict]) -> List[str]:
    """One line per setting: test of model-best, best dev, difference to
    spacy train on test, times (rounds: the part parallelism divides)."""
    serial = next((r for r in rows if "error" not in r and r["mixing"] == "spacy train"), None)
    out = table("setting", "shards", "workers", "test (model-best)", "vs spacy train", "best dev", "setup s",
                "rounds s", "x spacy train (rounds)", "whole command s", "x spacy train (whole)",
                "slowest shards' epochs s")
    for r in rows:
        if "error" in r:
            out.append(f"| {r['mixing']} | {r['shards']} | {r['workers']} | {r['error']} | | | | | | | | |")
            continue
        other = serial is not None and r is not serial
        diff = f"{100 * (r['test_score'] - serial['test_score']):+.2f}" if other else ""
        times = f"{r['rounds_seconds'] / serial['rounds_seconds']:.2f}" if other else ""
        if "ratio" in r:  # the median of repeated pairs (distributed_bench.py --timing-repeats)
            times = median_of(r["ratio"], r["ratio_runs"])
        whole = r.get("whole_seconds")
        whole_times = f"{whole / serial['whole_seconds']:.2f}" if other and whole is not None \
            and serial.get("whole_seconds") is not None else ""
        if "whole_ratio" in r:
            whole_times = median_of(r["whole_ratio"], r["whole_ratio_runs"])
        out.append(row(r["mixing"], r["shards"], r["workers"], pct(r["test_score"]), diff,
                       pct(r.get("best_score")), f"{r['setup_seconds']:.1f}", f"{r['rounds_seconds']:.1f}",
                       times, fmt(whole, ".1f"), whole_times, fmt(r.get("shard_seconds"), ".1f")))
    return out


def annotate_rows(rows: List[Dict]) -> List[str]:
    """benchmarks.distributed_bench annotate's runs, medians per (model,
    workers, threads): the whole command and its annotate phase, each
    against the model's one worker, the fixed costs (cluster, model on the
    workers, close) and the workers' busy share of the phase."""
    groups: Dict[tuple, List[Dict]] = {}
    for r in rows:
        groups.setdefault((r["name"], r["workers"], r["threads"]), []).append(r)

    def med(group: List[Dict], get) -> float:
        return statistics.median(get(r) for r in group)

    def whole(r):
        return r["command_seconds"]

    def phase(r):
        return r["timings"]["annotate"]

    def busy(r):
        return r["timings"]["shards_busy"] / (r["timings"].get("workers", r["workers"]) * phase(r))

    out = table("model", "data", "workers", "threads", "tokens", "shards", "whole command s", "x 1 worker",
                "annotate phase s", "x 1 worker (phase)", "fixed s", "workers busy", "peak RSS, largest process MB")
    for (name, workers, threads), group in groups.items():
        ok = [r for r in group if "error" not in r]
        if not ok:
            out.append(f"| {name} | {group[0].get('data', '-')} | {workers} | {threads} | {group[0]['error']} |"
                       + " |" * 8)
            continue
        one = [r for r in groups.get((name, 1, 1), []) if "error" not in r]
        runs = f" ({len(ok)} runs)" if len(ok) > 1 else ""
        out.append(row(name, ok[0]["data"], workers, threads, f"{ok[0]['tokens']:,}", ok[0]["shards"],
                       f"{med(ok, whole):.1f}{runs}", ratio(one and med(one, whole), med(ok, whole), ".2f"),
                       f"{med(ok, phase):.1f}", ratio(one and med(one, phase), med(ok, phase), ".2f"),
                       f"{med(ok, lambda r: r['fixed_seconds']):.1f}",
                       f"{100 * med(ok, busy):.0f}%" if all("shards_busy" in r["timings"] for r in ok) else "-",
                       fmt(max(r.get("peak_rss_mb_children", 0) for r in ok) or None, ".0f")))
    return out


def distributed_rows(metrics: Path, name: str) -> Optional[List[Dict]]:
    """The rows of a benchmarks.distributed_bench record: {"date",
    "machine", "rows"} (the header lists its date and machine), or a bare
    list of rows as it wrote them before 2026-12-06."""
    record = read_json(metrics / name)
    return record.get("rows") if isinstance(record, dict) else record


def distributed_section(metrics: Path) -> List[str]:
    annotate = distributed_rows(metrics, "distributed_annotate.json")
    trained = [(title, distributed_rows(metrics, f)) for title, f in DISTRIBUTED]
    if not annotate and not any(rows for _, rows in trained):
        return []
    lines = ["## Scale-out on Dask (spacy_lookahead.distributed)", ""]
    if annotate:
        lines += ["### annotate: raw text to DocBin shards", "",
                  "Test texts (`doc.text`, the pipeline's tokenizer included, copies as `--repeat` says) as "
                  "JSONL, annotated on a LocalCluster of worker processes of one thread each, or one worker "
                  "whose components run `n_threads` threads. Whole command: `python -m "
                  "spacy_lookahead.distributed annotate` in a process of its own (imports, reading, the "
                  "cluster's start and stop, shipping and loading the model, writing the shards); annotate "
                  "phase: from the first shard sent to the last written (manifest.json's timings); fixed: "
                  "the cluster's start, the model on the workers and the close; workers busy: their time in "
                  "shards over workers x the phase. On 2 cores the client (and the scheduler in it) shares "
                  "the cores with the 2 workers.", ""] + annotate_rows(annotate) + [""]
    first = True
    for title, rows in trained:
        if not rows:
            continue
        rounds = next((r.get("rounds") for r in rows if r.get("rounds")), None)
        lines += [f"### train: {title}", "", "Every setting trains " + (
            f"{rounds} rounds" if rounds else "the config's max_epochs rounds (epochs)") + ", evaluates on dev "
                                                                                           "after each, and "
                                                                                           "its model-best (by "
                                                                                           "dev) is scored "
                                                                                           "once on test."]
        if first:
            lines[-1] += (
                " `spacy train` runs as many epochs and evaluates about once an epoch (eval_frequency = the "
                "batches of one epoch). IPM: each round trains every shard one epoch from the mixed weights "
                "(uniform mixing); one-shot: every shard trains alone, mixed only to evaluate. setup: reading "
                "the config and corpus, initialising, cutting the shards (IPM: and saving the models); rounds: "
                "the rounds with their dev evaluations (the part workers divide; for IPM from shipping the "
                "data to the cluster on); whole command: IPM's wall time from starting the LocalCluster (about "
                "1 s) to the last round, against spacy train's setup and rounds; slowest shards' epochs: the "
                "critical path in the workers. 4 and 8 shards on 2 workers simulate 4 and 8 machines: their "
                "accuracy is what those would give, their time is not. (`--shards 1` adds IPM with 1 shard on "
                "1 worker: the same training as spacy train, tests/test_distributed.py.) Where spacy train and "
                "IPM on 2 shards / 2 workers ran several times, alternately (`--timing-repeats`: the machine "
                "is shared), their rounds s and whole command s are medians and each ratio is the median of "
                "the pairs' ratios. Rows without a whole command s come from runs before it was timed.")
            first = False
        lines += [""] + train_rows(rows) + [""]
    steps = [s for s in X.STEPS if s.group == "distributed"]
    if steps:
        lines += ["Commands (`python -m benchmarks.run stage distributed`):", ""]
        lines += [f"* `{shlex.join(s.command)}`" for s in steps] + [""]
    return lines


# --- the whole report ------------------------------------------------------------------
def shown(path: Path) -> str:
    """A directory as results.md names it: relative to the repository."""
    try:
        return path.resolve().relative_to(ROOT).as_posix()
    except ValueError:
        return path.as_posix()


def recorded(metrics: Path):
    """(dates, {machine: [file and date]}) that the metrics files record:
    benchmarks/timed.py's `started`, the speed runs' `date` and `machine`."""
    dates, machines = [], {}
    for path in sorted(metrics.glob("*.json")):
        record = read_json(path)
        if not isinstance(record, dict):
            continue
        date = record.get("date") or record.get("started")
        if isinstance(date, str):
            dates.append(date)
        m = record.get("machine")
        if isinstance(m, dict):
            desc = f"{m.get('cpu')}, {m.get('cores')} cores, {m.get('platform')}, Python {m.get('python')}"
            machines.setdefault(desc, []).append(f"{path.stem} {date or 'undated'}")
    return sorted(dates), machines


def header(metrics: Path, scale: str) -> List[str]:
    where = shown(metrics)
    if scale == "full":
        what = (f"Generated by `benchmarks/report.py` from the metrics files committed in `{where}/` "
                "(`spacy project run report`); nothing else goes in. Do not edit it by hand: "
                "tests/test_results_generated.py fails when this file differs from what report.py "
                f"writes from `{where}/`. What the runs taught us is in [NOTES.md](NOTES.md), and so "
                "are the tables and figures this file carried until 2026-11-27, whose metrics files "
                f"were not kept (\"{KEPT}\"); a figure of theirs comes back here once the workflow "
                "measures it again and its metrics files are committed.")
    else:
        what = (f"Generated by `benchmarks/report.py` from `{where}/`, the quick run's metrics (`spacy "
                "project run quick`: a smoke test on a subset, its numbers say nothing about the "
                "methods); ignored by git. The full run's tables are benchmarks/results.md.")
    dates, machines = recorded(metrics)
    head = ["# spacy-lookahead benchmark results", "", what, "",
            f"* Dates the metrics files record (benchmarks/timed.py's start, the speed runs' date): {dates[0]} "
            f"to {dates[-1]}." if dates else "* Dates: no metrics file here records one."]
    head += [f"* Machine ({'; '.join(runs)}): {desc}." for desc, runs in machines.items()] or [
        "* Machine: no metrics file here records one (the speed runs record theirs)."]
    return head + [f"* Setting column: `{scale}` = `spacy project run {'all' if scale == 'full' else 'quick'}` "
                   f"(`benchmarks/run.py --scale {scale}`).", ""]


def render(metrics: Path, scale: str) -> str:
    """results.md's text from one scale's metrics directory."""
    body = []
    for task in TASKS:
        body += score_table(task, metrics, scale) + [""]
    body += feature_speed_section(metrics)
    body += scaling_section(metrics, scale) + scale_section(metrics) + figures_section(metrics)
    body += sapo_section(metrics) + parser_section(metrics, scale) + [""]
    body += raw_parser_section(metrics, scale) + [""]
    body += phrases_section(metrics, scale) + ["", ""] + engine_section(metrics)
    body += ([""] + depth_section(metrics) + gil_section(metrics) + gil_section(metrics, fresh=True)
             + [""] + distributed_section(metrics))
    return "\n".join(header(metrics, scale) + body).rstrip() + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--metrics", type=Path, default=Path("metrics"),
                    help="one scale's metrics: metrics (full) or metrics/quick")
    ap.add_argument("--scale", choices=X.SCALES, default="full")
    ap.add_argument("--output", type=Path, default=Path("benchmarks/results.md"))
    args = ap.parse_args(argv)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(render(args.metrics, args.scale))
    print(f"report.py: wrote {args.output}", file=sys.stderr)


if __name__ == "__main__":
    main()
