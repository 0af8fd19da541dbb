"""The lookahead-depth section of results.md (issue 15): prediction speed at
depth 0-3 next to spaCy's components (the depth speed rows), and the parser's
depth table on the full EWT training set (the parser_depth_d* rows of benchmarks/experiments.py).

    metrics/depth_speed_{tag,chunk,ner}.json   benchmarks/speed.py
    metrics/depth_speed_parse{,_d3}.json       benchmarks/speed.py --task parse
    metrics/parser_depth_d<D>.json             benchmarks/parser_eval.py
    metrics/time_parser_depth_d<D>.json        benchmarks/timed.py
    metrics/threads_{tag,chunk,ner,parse}.json benchmarks/speed.py (the speed stage)
"""
import json
from pathlib import Path
from typing import Dict, List, Optional

TASKS = [("tag", "POS tagging, EWT test (words in)", "spacy_tagger", "tagger"),
         ("chunk", "chunking, CoNLL-2000 test (words + POS in)", "spacy_ner_conll2000", "chunker"),
         ("ner", "bio-NER right-to-left, JNLPBA test (words in)", "spacy_ner_jnlpba", "ner_rtl")]


def _read(path: Path) -> Optional[dict]:
    return json.loads(path.read_text()) if path.exists() else None


def _rate(record: dict) -> Optional[float]:
    return record.get("tokens_per_second") if record else None


def _ratio(a: Optional[float], b: Optional[float], spec: str) -> str:
    return format(a / b, spec) if a and b else "-"


def _speed_rows(models: Dict[str, dict], reference: str, prefix: str) -> List[str]:
    ref = _rate(models.get(reference))
    d1 = _rate(models.get(f"{prefix}_d1"))
    rows = []
    for depth in range(4):
        r = models.get(f"{prefix}_d{depth}")
        rate = _rate(r)
        if not rate:
            continue
        check = r.get("tag_acc_check", r.get("f1_check", r.get("uas_check")))
        rows.append(f"| {depth} | {rate:,.0f} | {_ratio(rate, ref, '.2f')} | {_ratio(rate, d1, '.1%')} "
                    f"| {r.get('peak_rss_mb', '-')} | {'-' if check is None else format(check, '.4f')} |")
    if ref:
        rows.append(f"| {reference} | {ref:,.0f} | 1.00 | - | "
                    f"{models[reference].get('peak_rss_mb', '-')} | - |")
    return rows


def section(metrics: Path) -> List[str]:
    lines: List[str] = []
    header = ["| depth | tokens/s | x spaCy | x depth 1 | peak RSS MB | accuracy check |",
              "| --- | --- | --- | --- | --- | --- |"]
    tables = []
    for task, title, reference, prefix in TASKS:
        rec = _read(metrics / f"depth_speed_{task}.json")
        if rec:
            models = {name: r for name, r in rec.get("models", rec).items() if isinstance(r, dict)}
            tables += [f"{title}:", ""] + header + _speed_rows(models, reference, prefix) + [""]
    for name, title in (("parse", "arc-standard parsing, EWT test (words + gold POS in)"),
                        ("parse_d3", "arc-standard parsing, first 100 EWT test sentences")):
        rec = _read(metrics / f"depth_speed_{name}.json")
        if rec:
            tables += [f"{title}:", ""] + header + \
                _speed_rows(rec["models"], rec.get("reference") or "spacy_parser", "parser") + [""]
    if tables:
        lines += ["### Lookahead depth: prediction speed", "",
                  "Each task's depth-1 model timed at depth 0-3 (the depth set at load: "
                  "`MODEL@depth=D`, benchmarks/model_spec.py), one process, one thread, in the same "
                  "run as spaCy's component (ratios carry over between machines, absolute figures "
                  "do not). The search is exact at every depth (core/search.pyx): "
                  "branch-and-bound, with a Viterbi-style DP over the next D labels for the "
                  "first-order sequence models at depth 3. The accuracy check is that of the "
                  "depth-1 weights searched at depth D (not a model trained at D).", ""] + tables
    thread_rows = []
    for task, prefix in (("tag", "tagger"), ("chunk", "chunker"), ("ner", "ner"),
                         ("parse", "parser")):
        rec = _read(metrics / f"threads_{task}.json")
        if not rec:
            continue
        models = rec.get("models", {})
        one = _rate(models.get(f"{prefix}_t1"))
        two, procs = _rate(models.get(f"{prefix}_t2")), _rate(models.get(f"{prefix}_p2"))
        thread_rows.append(f"| {prefix} | {one:,.0f} | {_ratio(two, one, '.2f')} | "
                           f"{_ratio(procs, one, '.2f')} |" if one else f"| {prefix} | - | - | - |")
    if thread_rows:
        lines += ["### Threads against processes", "",
                  "Each depth-1 model on its gold-token test set, `nlp.pipe(batch_size=1000)`, "
                  "`n_threads = 2` (`MODEL@n_threads=2`) and spaCy's `n_process = 2` "
                  "(`MODEL@n_process=2`) against one thread, same run per task "
                  "(the `speed` stage of benchmarks/run.py). With threads, `pipe()` pipelines the "
                  "batches: while the threads search one batch without the GIL, the calling thread "
                  "reads the next batch's docs and writes the previous batch's annotations.", "",
                  "| component | tokens/s, 1 thread | x n_threads = 2 | x n_process = 2 |",
                  "| --- | --- | --- | --- |"] + thread_rows + [
                  "", "Threads shorten the search only; spaCy's Python per doc (reading the doc, "
                  "writing tags, spans or entities) holds the GIL. The parser's search dominates "
                  "its time; the sequence components' does not.", ""]
    rows = []
    for depth in range(4):
        rec = _read(metrics / f"parser_depth_d{depth}.json")
        if not rec:
            continue
        timing = _read(metrics / f"time_parser_depth_d{depth}.json") or {}
        cpu = timing.get("user_seconds")
        rows.append(f"| {depth} | {rec['uas']:.2%} | {rec['las']:.2%} | {rec['uas_nopunct']:.2%} | "
                    f"{rec['las_nopunct']:.2%} | {cpu if cpu is not None else '-'} |")
    if rows:
        lines += ["### Lookahead depth: the parser on the full EWT training set", "",
                  "Labelled arc-standard (109 actions), gold POS, margin C = 50, `spacy train` "
                  "(configs/parser_ewt.cfg; `python benchmarks/run.py train parser_depth_d0 parser_depth_d1 "
                  "parser_depth_d2`), about two evaluations per epoch on dev, the best dev model scored once on test:", "",
                  "| depth | UAS | LAS | UAS no punct | LAS no punct | training CPU s |",
                  "| --- | --- | --- | --- | --- | --- |"] + rows + [""]
    return lines
