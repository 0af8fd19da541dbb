"""Write benchmarks/results.md from what the workflow left in metrics/.

    python benchmarks/report.py [--metrics metrics] [--scale full|quick]
                                [--output benchmarks/results.md]

The output is a function of the files in the one metrics directory it is
given (and of the benchmark's own code and configs): it reads no trained
model, no clock and nothing of the host, so the committed metrics/ give the
committed results.md byte for byte (tests/test_results_generated.py).
`full` reads metrics/ (committed), `quick` metrics/quick/ (ignored by git,
written to benchmarks/quick/results.md). Per system it reads
  <metrics>/<name>.json           spacy benchmark accuracy (tag_acc) or
                                  benchmarks/evaluate.py (span p, r, f)
  <metrics>/time_<name>.json      benchmarks/timed.py (training wall time, peak RSS)
  <metrics>/train_<name>.json     benchmarks/crf_baseline.py (CRF settings, iterations)
  <metrics>/model_<name>.json     benchmarks/run.py (`models`, and after scoring a model):
                                  stopping settings of the model's config.cfg, dev
                                  scores of model-best's and model-last's meta.json
  <metrics>/<task>_speed.json     benchmarks/speed.py (tokens/s, ratio, peak RSS)
  <metrics>/tagger_train_speed.json  benchmarks/train_speed.py (seconds per epoch)
  <metrics>/curves/<name>.jsonl   the curves logger (SAPO section, report_sapo.py)
  <metrics>/calibration_<name>.json  benchmarks/calibration.py
The dates and machines in the header are those the metrics files record.
Anything missing is shown as "-"; a system with nothing at all is listed as not run.
"""
import argparse
import json
import shlex
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import experiments as X  # noqa: E402
import plots as P  # noqa: E402
import report_depth  # noqa: E402
import report_distributed  # noqa: E402
import report_engine  # noqa: E402
import report_sapo  # noqa: E402
import report_phrases  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
# the archive of the tables and figures kept by hand here until 2026-11-27
KEPT = "Figures kept by hand in results.md until 2026-11-27"
# the paper's F1 (Tsuruoka et al. 2011, Tables 2-3) for the rows that have one
PAPER_F1 = {"chunker_d0": 93.53, "chunker_d1": 93.77, "chunker_d2": 93.81, "crf_conll2000": 93.66,
            "ner_rtl_d0": 70.17, "ner_rtl_d1": 72.28, "ner_rtl_d2": 72.00, "crf_jnlpba": 71.63}


def systems(*groups: str, task: str, paper: bool = False):
    """(name, label[, paper F1]) of the table's rows of these groups and task."""
    rows = [e for g in groups for e in X.group(g) if e.task == task]
    return [(e.name, e.label) + ((PAPER_F1.get(e.name),) if paper else ()) for e in rows]


def commands(names) -> list:
    """The command that trains each row (benchmarks/experiments.py), under a table."""
    return ["Commands (`python benchmarks/run.py commands`):", ""] + [
        f"* `{n}`: `{shlex.join(X.train_command(X.EXPERIMENTS[n]))}`" for n in names
        if n in X.EXPERIMENTS] + [""]
PAPER = "Tsuruoka et al. (2011)"
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
        "Test set: 2,077 sentences, 25,094 words (syntactic words; multiword tokens "
        "split as in UD). Accuracy from `spacy benchmark accuracy --gold-preproc`. "
        "**Not comparable to Table 1 of Tsuruoka et al. (2011)**, which tags WSJ "
        "(Penn Treebank, train sections 0-18, test 22-24): EWT is web text "
        "(blogs, newsgroups, e-mail, reviews, answers) with a smaller training set "
        "(12,544 sentences, 204,577 words) and a slightly different tag set, so "
        "only the differences between rows of this table carry over. The CRF has the "
        "lookahead_tagger's static feature templates (its previous-tag feature is the "
        "CRF's tag transition) and does not use the dev set: it is the model after a "
        "fixed iteration cap (model-last), so it has no best dev score."),
}, {
    "title": "Chunking: CoNLL-2000 test set (WSJ section 20), chunk F1, gold tokens and POS",
    "kind": "span",
    "model_dir": "model-last",
    "speed_file": "chunk_speed.json",
    "reference": "spacy_ner_conll2000",
    "paper_label": "paper F1 (Table 2)",
    "systems": systems("spans", "sapo", task="chunk", paper=True),
    "note": (
        "Test set: 2,012 sentences, 47,377 tokens, 23,852 chunks; training set "
        "8,936 sentences (WSJ 15-18), the data of the paper, so **the paper's figures "
        "(Table 2 of Tsuruoka et al. 2011) are directly comparable**. P/R/F1: "
        "benchmarks/evaluate.py, exact chunk match, micro-averaged over all chunks "
        "(conlleval's overall FB1), one scorer for every row "
        "(`spacy_lookahead.scoring.score_chunks`). Every system gets the gold words "
        "and the POS column of the data (Brill-tagger tags); spaCy's `ner` ignores "
        "the POS tags (its efficiency tok2vec embeds NORM, PREFIX, SUFFIX, SHAPE). "
        "No development set: every row is the last model of a fixed training budget "
        "(model-last; lookahead_chunker 10 epochs, spaCy ner a fixed number of epochs "
        "without early stopping, the CRF a fixed iteration cap); the test set given "
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
        "Test set: the original `Genia4EReval1.iob2`, 3,856 sentences, 101,039 tokens, "
        "8,662 entities. **The training set is an approximate reconstruction** of the "
        "JNLPBA training data from the standoff annotation (18,720 sentences, 492,942 "
        "tokens, all 51,301 entities; about 98% of the sentences tokenised as the "
        "original, see shared/data/README.md), so the paper's figures (Table 3 of "
        "Tsuruoka et al. 2011; their history-based models tag right to left) are "
        "**approximately comparable** only. P/R/F1: benchmarks/evaluate.py, exact "
        "entity match, micro-averaged (conlleval's overall FB1), "
        "`spacy_lookahead.scoring.score_entities` for every row. Input: the words only. "
        "No development set: model-last of a fixed training budget for every row, as "
        "for chunking."),
}]


def read_json(path: Path):
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def crf_settings(record):
    """Settings of a CRF run from its benchmarks/crf_baseline.py record."""
    params, bits = record.get("params", {}), []
    if record.get("limit"):
        bits.append(f"{record['limit']} train sents")
    reg = ", ".join(f"{k} {params[k]:g}" for k in ("c1", "c2") if params.get(k))
    bits.append(f"L-BFGS{' (' + reg + ')' if reg else ''}, {record.get('iterations')} of max "
                f"{params.get('max_iterations')} iterations")
    return ", ".join(bits)


def crf_note(label, setting, record):
    """Data, features and times of a CRF run, from its crf_baseline.py record."""
    return (f"{label} ({setting}): {record.get('sentences'):,} sentences, "
            f"{record.get('attributes_per_token')} attributes per token, "
            f"{record.get('active_features'):,} active features; feature extraction "
            f"{fmt_time(record.get('featurize_seconds'))}, L-BFGS "
            f"{fmt_time(record.get('train_seconds'))}")


def model_settings(metrics_dir: Path, name: str, model_dir: str):
    """Stopping criteria etc. of a trained model and the dev scores of its
    `model_dir` (model-best, model-last), from the model_<name>.json that
    benchmarks/run.py wrote from the model's config.cfg and meta.json."""
    record = read_json(metrics_dir / f"model_{name}.json")
    if record is None:
        return None, None
    training, bits = record.get("training", {}), []
    limit = record.get("train_limit", 0)
    if limit:
        bits.append(f"{limit} train sents")
    if training.get("max_epochs"):
        bits.append(f"max {training['max_epochs']} epochs")
    if training.get("max_steps") and not training.get("max_epochs"):
        bits.append(f"max {training['max_steps']} steps")
    if training.get("patience"):
        bits.append(f"patience {training['patience']}")
    if not record.get("spacy_train"):  # not trained by spacy train (the CRF): see its record
        bits = []
    return ", ".join(bits), record.get("performance", {}).get(model_dir, {})


def fmt(value, spec, scale=1.0):
    return "-" if value is None else format(value * scale, spec)


def speed_cells(spd, timing):
    """tokens/s, ratio to the reference, peak RSS when tagging and training."""
    mb = lambda v: fmt(v, ".0f") + (" MB" if v else "")
    return [fmt(spd.get("tokens_per_second"), ",.0f"), fmt(spd.get("ratio_vs_reference"), ".2f"),
            mb(spd.get("peak_rss_mb")), mb((timing or {}).get("peak_rss_mb"))]


def fmt_time(seconds):
    if seconds is None:
        return "-"
    minutes, secs = divmod(int(round(seconds)), 60)
    if seconds < 10:
        return f"{seconds:.1f} s"
    return f"{seconds:.0f} s" if seconds < 60 else f"{minutes}:{secs:02d} min ({seconds:.0f} s)"


def system_row(metrics_dir: Path, setting: str, speed: dict, name: str, label: str,
               model_dir: str, not_run: list, crf_notes: list):
    """A table row's metrics (accuracy, timing, speed, settings, dev scores),
    or None where the run left none (then listed as not run at full scale)."""
    acc = read_json(metrics_dir / f"{name}.json")
    timing = read_json(metrics_dir / f"time_{name}.json")
    record = read_json(metrics_dir / f"train_{name}.json")
    spd = speed.get("models", {}).get(name, {})
    detail, dev = model_settings(metrics_dir, name, model_dir)
    if record:
        detail = crf_settings(record)
        crf_notes.append(crf_note(label, setting, record))
    if not (acc or timing or "tokens_per_second" in spd or detail is not None):
        if setting == "full":  # quick runs a subset of the systems on purpose
            not_run.append(f"{label} ({setting})")
        return None
    return acc, timing, spd, detail, dev


def task_table(task, metrics_dir: Path, setting: str):
    key, score_label = task["score"]
    lines = [f"## {task['title']}", "",
             f"| system | setting | {score_label} | best dev | training time | 1 epoch "
             f"| tokens/s | x {task['reference']} | peak RSS tagging | peak RSS training |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    not_run, speed_notes, crf_notes = [], [], []
    speed = read_json(metrics_dir / task["speed_file"]) or {}
    epochs = {f"tagger_d{r['depth']}": r for r in
              read_json(metrics_dir / task.get("train_speed_file", "-")) or []}
    if speed:
        speed_notes.append(
            f"{setting}: batch size {speed.get('batch_size')}, median of "
            f"{speed.get('repeats')} runs after {speed.get('warmup_docs')} warm-up docs, "
            f"n_process={speed.get('n_process')}, "
            f"OMP/BLAS threads {speed.get('threads', {}).get('OMP_NUM_THREADS')}")
    for name, label in task["systems"]:
        row = system_row(metrics_dir, setting, speed, name, label, "model-best", not_run, crf_notes)
        if row is None:
            continue
        acc, timing, spd, detail, dev = row
        dev_score = (dev or {}).get(key)
        lines.append("| " + " | ".join([
            label,
            setting + (f" ({detail})" if detail else ""),
            fmt((acc or {}).get(key), ".2f", 100),
            fmt(dev_score, ".2f", 100),
            fmt_time((timing or {}).get("wall_seconds")),
            fmt_time(epochs.get(name, {}).get("epoch_seconds")),
            *speed_cells(spd, timing),
        ]) + " |")
    lines += ["", task["note"], ""]
    lines += [
        "Training time: wall time of `spacy train` (benchmarks/timed.py, including "
        "initialisation and the dev evaluations spaCy runs during training), for the "
        "CRF of benchmarks/crf_baseline.py (reading, feature extraction, L-BFGS, saving). "
        "1 epoch: one pass of `nlp.update` over the training set, nothing else "
        "(benchmarks/train_speed.py). "
        "Tokens/s: benchmarks/speed.py, `nlp.pipe` over the test docs rebuilt "
        "without annotation from the gold tokens, one subprocess per model; "
        "peak RSS tagging is that subprocess's ru_maxrss (Python + spaCy + data + "
        "model). x reference: tokens/s divided by those of the built-in tagger "
        "measured in the same run. The CRF's tokens/s include its feature extraction, "
        "written in Python (benchmarks/crf_spans.py).", ""]
    lines += [f"* CRF, {n}" for n in crf_notes]
    lines += [f"* speed run, {n}" for n in speed_notes]
    if not_run:
        lines += ["", "Not run (no metrics found): " + "; ".join(not_run) + "."]
    lines += [""] + commands([row[0] for row in task["systems"]])
    return lines


def span_table(task, metrics_dir: Path, setting: str):
    ref = task["reference"]
    lines = [f"## {task['title']}", "",
             f"| system | setting | F1 (test) | P | R | {task['paper_label']} | training time "
             f"| tokens/s | x {ref} | peak RSS tagging | peak RSS training |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    not_run, speed_notes, crf_notes = [], [], []
    speed = read_json(metrics_dir / task["speed_file"]) or {}
    if speed:
        limit = speed.get("limit_docs")
        speed_notes.append(
            f"{setting}: {speed.get('task')} inputs "
            f"({'first ' + str(limit) + ' test docs' if limit else 'whole test set'}), "
            f"batch size {speed.get('batch_size')}, median of "
            f"{speed.get('repeats')} runs after {speed.get('warmup_docs')} warm-up docs, "
            f"n_process=1, OMP/BLAS threads {speed.get('threads', {}).get('OMP_NUM_THREADS')}")
    for name, label, paper in task["systems"]:
        row = system_row(metrics_dir, setting, speed, name, label, task["model_dir"], not_run,
                         crf_notes)
        if row is None:
            continue
        acc, timing, spd, detail, _ = row
        acc = acc or {}
        crf_timing = acc.get("benchmark_crf_spans_timing")
        if crf_timing:
            crf_notes.append(
                f"{label} ({setting}), prediction in benchmarks/evaluate.py: "
                f"{crf_timing['featurize_share'] * 100:.0f}% of the time in the Python feature "
                f"extraction; crfsuite's tagging alone (attribute lookup + Viterbi): "
                f"{crf_timing['viterbi_tokens_per_second']:,} tokens/s")
        lines.append("| " + " | ".join([
            label,
            setting + (f" ({detail})" if detail else ""),
            fmt(acc.get("f"), ".2f", 100),
            fmt(acc.get("p"), ".2f", 100),
            fmt(acc.get("r"), ".2f", 100),
            "-" if paper is None or setting != "full" else f"{paper:.2f}",
            fmt_time((timing or {}).get("wall_seconds")),
            *speed_cells(spd, timing),
        ]) + " |")
    lines += ["", task["note"], ""]
    lines += [
        "Training time: wall time of `spacy train` (lookahead components, spaCy ner: "
        "including initialisation and the test-set evaluations spaCy logs during "
        "training) or of benchmarks/crf_baseline.py (CRF: reading, feature extraction, "
        "L-BFGS, saving), by benchmarks/timed.py with one BLAS thread. "
        "Tokens/s: benchmarks/speed.py, `nlp.pipe` over the test docs rebuilt from the "
        "gold tokens (plus the POS tags for chunking), one subprocess per model, one "
        "process, one thread; peak RSS tagging is that subprocess's ru_maxrss. "
        f"x {ref}: tokens/s divided by those of spaCy's ner measured in the same run. "
        "The CRF's tokens/s include its feature extraction, written in Python "
        "(benchmarks/crf_spans.py), which costs more than crfsuite's Viterbi. "
        f"The paper's training times (one core of a 3.33 GHz Xeon W5590) are in its tables.", ""]
    lines += [f"* CRF, {n}" for n in crf_notes]
    lines += [f"* speed run, {n}" for n in speed_notes]
    if not_run:
        lines += ["", "Not run (no metrics found): " + "; ".join(not_run) + "."]
    lines += [""] + commands([row[0] for row in task["systems"]])
    return lines


def scaling_section(metrics_dir: Path, setting: str):
    """nlp.pipe with n_process = 1 and 2 (benchmarks/scaling.py)."""
    lines = ["## Scaling over cores: `n_threads` and `nlp.pipe(texts, n_process=N)`", "",
             "| setting | model | texts | tokens | n_process | n_threads | tokens/s | speed-up | "
             "peak RSS parent | peak RSS per worker |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    serial = []
    record = read_json(metrics_dir / "scaling.json")
    if not record:
        return []
    for r in record["results"]:
        lines.append("| " + " | ".join([
            setting, record["model"], f"{r['texts']:,}", f"{r['tokens']:,}", str(r["n_process"]),
            str(r.get("n_threads", 1)), f"{r['tokens_per_second']:,}", fmt(r.get("speedup_vs_1"), ".2f"),
            f"{r['parent_peak_rss_mb']:.0f} MB",
            "-" if r["worker_peak_rss_mb"] is None else f"{r['worker_peak_rss_mb']:.0f} MB"]) + " |")
    one = next((r for r in record["results"] if "doc_to_bytes_tokens_per_second" in r), None)
    if one:
        serial.append(f"{setting}: Doc.to_bytes {one['doc_to_bytes_tokens_per_second']:,} tokens/s, "
                      f"Doc.from_bytes {one['doc_from_bytes_tokens_per_second']:,} tokens/s")
    if serial:
        lines += ["", "With n_process > 1, spaCy's workers send each doc back to the parent as "
                  "`Doc.to_bytes()` and the parent rebuilds it with `Doc.from_bytes()`; measured in "
                  "the same run (one process): " + "; ".join(serial) + ". For a pipeline that "
                  "annotates about as fast as spaCy (de)serialises docs, a second process on a "
                  "2-core machine cannot pay: the parent's Doc.from_bytes alone is no faster than the "
                  "whole single-process pipeline."]
    return lines + ["", "Raw texts in (the pipeline's tokenizer runs too), one subprocess per "
                    "setting; with n_process = 2 spaCy pickles the pipeline to two worker "
                    "processes, so the time includes their start-up. n_threads: each component "
                    "decodes the docs of a batch on that many threads in one process (the "
                    "tokenizer and spaCy's own steps stay on one). benchmarks/scaling.py.", ""]


def scale_section(metrics_root: Path):
    """Time and peak memory per 1k tokens on one long doc (benchmarks/scale_bench.py)."""
    record = read_json(metrics_root / "scale.json")
    if not record:
        return []
    lines = ["## Cost per token on long docs: 1k, 10k and 100k tokens in one doc", "",
             "| component | tokens | tokens/s | ms per 1k | peak MB per 1k | time x | memory x | "
             "score (the sentences as docs) |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in record["rows"]:
        if r["status"] != "ok":
            lines.append(f"| {r['row']} | {r['size']:,} | {r['status']} | | | | | |")
            continue
        key = next((k for k in r.get("check", {}) if k.endswith(("_f", "_acc", "uas"))), None)
        score = "-" if key is None else (f"{key} {r['check'][key]:.3f} "
                                          f"({r.get('check_sentence_docs', {}).get(key, 0):.3f})")
        lines.append(f"| {r['factory']} | {r['tokens']:,} | {r['tokens_per_second']:,.0f} | "
                     f"{1000 * r['seconds_per_1k']:.1f} | {r['peak_mb_per_1k']:.2f} | "
                     f"{r['time_ratio']:.2f} | {r['memory_ratio']:.2f} | {score} |")
    return lines + ["", "One doc of test sentences joined without sentence boundaries, small models "
                    "(default settings) trained by the script; x = per-1k figure / that of the 1k-token "
                    "doc (flat = bounded cost per token; timings on a shared machine move by about "
                    "±25%). Score: of the long doc against the gold, and (in brackets) of the same "
                    "sentences as separate docs. The clause finder needs sentence boundaries (it "
                    "warns when a long doc has none): a third of the gold clauses span a whole "
                    "sentence. benchmarks/scale_bench.py.", ""]


def shown(path: Path) -> str:
    """A directory as results.md names it: relative to the repository."""
    try:
        return path.resolve().relative_to(ROOT).as_posix()
    except ValueError:
        return path.as_posix()


def recorded(metrics_dir: Path):
    """(dates, {machine: [(file, date)]}) that the metrics files record:
    benchmarks/timed.py's `started`, the speed runs' `date` and `machine`."""
    dates, machines = [], {}
    for path in sorted(metrics_dir.glob("*.json")):
        record = read_json(path)
        if not isinstance(record, dict):
            continue
        date = record.get("date") or record.get("started")
        if isinstance(date, str):
            dates.append(date)
        m = record.get("machine")
        if isinstance(m, dict):
            desc = (f"{m.get('cpu')}, {m.get('cores')} cores, {m.get('platform')}, "
                    f"Python {m.get('python')}")
            machines.setdefault(desc, []).append(f"{path.stem} {date or 'undated'}")
    return sorted(dates), machines


def header(metrics_dir: Path, scale: str) -> list:
    where = shown(metrics_dir)
    if scale == "full":
        what = [f"Generated by `benchmarks/report.py` from the metrics files committed in `{where}/` "
                "(`spacy project run report`); nothing else goes in. Do not edit it by hand: "
                "tests/test_results_generated.py fails when this file differs from what report.py "
                f"writes from `{where}/`. What the runs taught us is in "
                f"[NOTES.md](NOTES.md), and so are the tables and figures this file carried until "
                f"2026-11-27, whose metrics files were not kept (\"{KEPT}\"); a figure of "
                "theirs comes back here once the workflow measures it again and its metrics "
                "files are committed."]
    else:
        what = [f"Generated by `benchmarks/report.py` from `{where}/`, the quick run's metrics "
                "(`spacy project run quick`: a smoke test on a subset, its numbers say nothing "
                "about the methods); ignored by git. The full run's tables are "
                "benchmarks/results.md."]
    dates, machines = recorded(metrics_dir)
    head = ["# spacy-lookahead benchmark results", ""] + what + [""]
    head.append(f"* Dates the metrics files record (benchmarks/timed.py's start, the speed runs' "
                f"date): {dates[0]} to {dates[-1]}." if dates else
                "* Dates: no metrics file here records one.")
    for desc, runs in machines.items():
        head.append(f"* Machine ({'; '.join(runs)}): {desc}.")
    if not machines:
        head.append("* Machine: no metrics file here records one (the speed runs record theirs).")
    head += [f"* Setting column: `{scale}` = `spacy project run "
             f"{'all' if scale == 'full' else 'quick'}` (`benchmarks/run.py --scale {scale}`).", ""]
    return head


FIGURES = [("depth.png", "Accuracy against lookahead depth, with microseconds per token "
            "(Tsuruoka et al. Tables 1-4)"),
           ("violation_fixing.png", "Parser dev LAS per epoch for each violation-fixing "
            "update (Huang et al. Fig. 6)"),
           ("fr_feedback.png", "Clause F1 on dev per epoch and the filters' F1 bound, "
            "recognition vs classification feedback (Carreras et al. Figs. 3, 5)")]


def render(metrics: Path, scale: str, plots: Path) -> str:
    """results.md's text from one scale's metrics directory; `plots` is where
    report_engine draws beam_pos.png (next to the output, as linked)."""
    body = []
    for task in TASKS:
        table = span_table if task["kind"] == "span" else task_table
        body += table(task, metrics, scale) + [""]
    body += scaling_section(metrics, scale)
    body += scale_section(metrics)
    drawable = P.drawable(metrics)  # the figures plots.py draws from these metrics
    present = [(f, t) for f, t in FIGURES if f in drawable]
    if present:
        body += ["## Figures", "", "Drawn by benchmarks/plots.py from the metrics above "
                 "(the SAPO curves are in the SAPO section).", ""]
        body += [f"* {t}: ![{f}](plots/{f})" for f, t in present] + [""]
    body += report_sapo.section(metrics, plots)
    from report_parser import parser_section  # the dependency-parsing section (issue 5)
    body += parser_section(metrics, scale) + [""]
    body += [report_phrases.phrases_section(metrics, ((scale, ""),))]
    body += [""] + report_engine.section(metrics, plots)
    body += [""] + report_depth.section(metrics)
    body += [""] + report_distributed.section(metrics)
    return "\n".join(header(metrics, scale) + body).rstrip() + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--metrics", type=Path, default=Path("metrics"),
                    help="one scale's metrics: metrics (full) or metrics/quick")
    ap.add_argument("--scale", choices=X.SCALES, default="full")
    ap.add_argument("--output", type=Path, default=Path("benchmarks/results.md"))
    args = ap.parse_args(argv)
    text = render(args.metrics, args.scale, args.output.parent / "plots")
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(text)
    print(f"report.py: wrote {args.output}", file=sys.stderr)


if __name__ == "__main__":
    main()
