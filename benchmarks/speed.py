"""Prediction speed and peak memory of trained pipelines on gold tokens: the
one speed harness (taggers, chunkers, NER, parsers, FR).

    python -m benchmarks.speed DATA NAME=MODEL_DIR[@KEY=VALUE,...] [...]
        [--task tag|chunk|ner|clauses|parse|pipeline] [--code FILE] [--limit N]
        [--reference NAME] [--batch-size 1000] [--repeats 3] [--warmup 200]
        [--min-seconds 1.0] [--pairs N] [--output metrics/tagger_speed.json]

Each model in a process of its own (its peak memory is its own), one BLAS
thread, on docs rebuilt from DATA's gold tokens with the task's inputs only
(benchmarks/gold.py): `--warmup` docs and one pass, then the median of
`--repeats` timed runs of `list(nlp.pipe(docs))` (docs built outside the
clock; a run repeats the set until it lasts `--min-seconds`), gold.py's
check of the output, and the digests of what it wrote ("outputs":
annotations / probabilities, as benchmarks.gil's). `--pairs N` also times
the models side by side in one process, N rounds of one pass each (N
rounded up to whole rotations: the order turns by one each round), steadier
on a shared machine: `ratio_interleaved`, the median over rounds of the
reference's pass time over the model's, and `ratio_rotations`, the median
over rotations of their summed times, which a model's pass being slower
after another's (its place in the round) does not tilt.
A model that is missing or fails is reported and skipped."""
import argparse
import json
import math
import statistics
import sys
import time
from pathlib import Path
from typing import Dict, List

from benchmarks import gold as G
from benchmarks.harness import (digest, isolated, load, one_thread, parse_spec, peak_rss_mb,
                                probabilities_digest, stamp, versions_line)


def _gold_inputs(data: str, task: str, code: str, limit: int) -> List[G.Gold]:
    if code:
        from spacy.util import import_file
        import_file("code", code)
    return [G.inputs_of(d, task) for d in G.read_gold(data, limit=limit, task=task)]


def worker(spec: str, data: str, batch_size: int, repeats: int, warmup: int, min_seconds: float,
           task: str, code: str, limit: int) -> dict:
    import spacy
    from tqdm import tqdm

    gold = _gold_inputs(data, task, code, limit)
    n_tokens, base_rss = sum(len(g.words) for g in gold), peak_rss_mb()
    name, model_dir, overrides = parse_spec(spec)
    n_process = int(overrides.pop("n_process", 1))  # an argument of nlp.pipe
    t0 = time.perf_counter()
    nlp = load(model_dir, overrides)
    load_seconds = time.perf_counter() - t0

    def fresh_docs():
        return [G.make_doc(nlp.vocab, g) for g in gold]

    list(nlp.pipe(fresh_docs()[:warmup], batch_size=batch_size, n_process=n_process))
    # one pass sets how many make a run last min_seconds (a fast model tags the set in ms)
    t0 = time.perf_counter()
    predicted = list(nlp.pipe(fresh_docs(), batch_size=batch_size, n_process=n_process))
    passes = max(1, math.ceil(min_seconds / max(time.perf_counter() - t0, 1e-6)))
    times = []
    for _ in tqdm(range(repeats), desc=f"{name} ({passes} x {n_tokens} tokens)", unit="run",
                  file=sys.stderr, leave=False):
        elapsed = 0.0
        for _ in range(passes):  # one pass of docs in memory at a time
            predicted = docs = None  # the last pass's docs freed outside the timing
            docs = fresh_docs()
            t0 = time.perf_counter()
            predicted = list(nlp.pipe(docs, batch_size=batch_size, n_process=n_process))
            elapsed += time.perf_counter() - t0
        times.append(elapsed)
    peak_rss = peak_rss_mb()  # before the gold docs are read again for the check
    check = G.check(predicted, G.read_gold(data, limit=limit, task=task), task)
    # what the last pass wrote (benchmarks.gil's digests): the same outputs
    # from run to run, build to build and machine to machine
    outputs = {"digest": digest(predicted), "probabilities_digest": probabilities_digest(predicted)}
    median = statistics.median(times)
    return {"name": name, "model": spec.partition("=")[2] or spec, "pipeline": nlp.pipe_names,
            "n_docs": len(gold), "n_tokens": n_tokens, "batch_size": batch_size, "repeats": repeats,
            "warmup_docs": warmup, "passes_per_run": passes, "seconds": [round(t, 4) for t in times],
            "median_seconds": round(median, 4), "tokens_per_second": round(passes * n_tokens / median, 1),
            "load_seconds": round(load_seconds, 2),
            "base_rss_mb": base_rss,  # interpreter + spaCy + data, before the model
            "peak_rss_mb": peak_rss, "task": task, "inputs": G.INPUTS[task], **check, **outputs,
            "spacy": spacy.__version__}


def interleaved(specs: List[str], data: str, batch_size: int, rounds: int, task: str, code: str,
                limit: int) -> Dict[str, List[float]]:
    """Pass times of every model in `rounds` rounds, one pass of each per
    round, the order rotated each round: {name: [seconds per round]}."""
    gold = _gold_inputs(data, task, code, limit)
    nlps = {name: load(model, overrides) for name, model, overrides in map(parse_spec, specs)}

    def one_pass(nlp) -> float:
        docs = [G.make_doc(nlp.vocab, g) for g in gold]
        t0 = time.perf_counter()
        list(nlp.pipe(docs, batch_size=batch_size))
        return time.perf_counter() - t0

    names = list(nlps)
    for name in names:  # warm up
        one_pass(nlps[name])
    times: Dict[str, List[float]] = {name: [] for name in names}
    for r in range(rounds):
        for name in names[r % len(names):] + names[:r % len(names)]:
            times[name].append(round(one_pass(nlps[name]), 4))
    return times


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("data", type=Path, help=".spacy file with the gold docs (or a column file: "
                                            "CoNLL-2001 for clauses, CoNLL-2000 for chunk)")
    ap.add_argument("models", nargs="+", help="NAME=MODEL_DIR")
    ap.add_argument("--task", choices=G.SPEED_TASKS, default="tag",
                    help="inputs and output check: tag (words; tag_ accuracy), chunk (words + POS; chunk "
                         "F1), ner (words; entity F1), clauses (words + POS + chunks; clause F1), parse "
                         "(words + POS; UAS), pipeline (words; UAS)")
    ap.add_argument("--code", type=Path, default=None, help="Python file each process imports first")
    ap.add_argument("--limit", type=int, default=0, help="time the first N docs only (0: all)")
    ap.add_argument("--reference", default=None, help="NAME that ratios are relative to")
    ap.add_argument("--batch-size", type=int, default=1000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=200, help="docs tagged before timing")
    ap.add_argument("--min-seconds", type=float, default=1.0,
                    help="a run tags the data as many times as needed to last this long")
    ap.add_argument("--pairs", type=int, default=0,
                    help="also time the models interleaved in N rounds, rounded up to whole "
                         "rotations (ratio_interleaved, ratio_rotations)")
    ap.add_argument("--output", type=Path, default=None, help="JSON file to write")
    args = ap.parse_args(argv)
    if not args.data.exists():
        sys.exit(f"speed.py: data file not found: {args.data}")
    threads, code, data = one_thread(), str(args.code or ""), str(args.data)
    results = {}
    for spec in args.models:
        name, model, _ = parse_spec(spec)
        if not (Path(model) / "config.cfg").exists():
            results[name] = {"name": name, "model": model, "skipped": "model not found"}
        else:
            print(f"speed.py: timing {name} ({model}) in a process of its own ...", file=sys.stderr)
            try:
                results[name] = isolated(worker, spec, data, args.batch_size, args.repeats, args.warmup,
                                         args.min_seconds, args.task, code, args.limit)
            except RuntimeError as err:
                results[name] = {"name": name, "model": model, "skipped": f"worker failed: {err}"}
        if "skipped" in results[name]:
            print(f"speed.py: skipping {name}: {results[name]['skipped']}", file=sys.stderr)
    ref = results.get(args.reference, {}).get("tokens_per_second")
    if args.reference and not ref:
        print(f"speed.py: reference {args.reference} was not measured; no ratios", file=sys.stderr)
    for r in results.values():
        if "tokens_per_second" in r:
            r["ratio_vs_reference"] = round(r["tokens_per_second"] / ref, 3) if ref else None
    specs = {parse_spec(x)[0]: x for x in args.models if "n_process" not in x.partition("@")[2]}
    specs = {name: spec for name, spec in specs.items() if "tokens_per_second" in results.get(name, {})}
    rounds = 0
    if args.pairs > 0 and ref and args.reference in specs:
        # whole rotations: each model as often in each place of a round (a pass
        # can be slower after another model's: spaCy's parser's by 25-30%
        # after the shipped pipeline's, on the 2-core Xeon of 2026-12-06)
        k = len(specs)
        rounds = -(-args.pairs // k) * k
        print(f"speed.py: timing {k} models interleaved, {rounds} rounds ...", file=sys.stderr)
        try:
            times = isolated(interleaved, list(specs.values()), data, args.batch_size, rounds, args.task,
                             code, args.limit)
        except RuntimeError as err:
            print(f"speed.py: the interleaved timing failed ({err})", file=sys.stderr)
            times = {}
        base = times.get(args.reference, [])
        for name, seconds in times.items():
            results[name]["interleaved_seconds"] = seconds
            results[name]["ratio_interleaved"] = round(
                statistics.median(b / t for b, t in zip(base, seconds)), 3)
            results[name]["ratio_rotations"] = round(statistics.median(
                sum(base[i:i + k]) / sum(seconds[i:i + k]) for i in range(0, rounds, k)), 3)
    check_key = G.CHECK_KEYS[args.task]
    rows = [("model", "tokens/s", f"x {args.reference or '-'}", "x interleaved", "x rotations", "peak RSS MB",
             {"tag_acc_check": "tag acc", "f1_check": "F1", "uas_check": "UAS"}[check_key], "outputs",
             "runs (s)")]
    for name, r in results.items():
        if "skipped" in r:
            rows.append((name, "skipped", "", "", "", "", "", "", " ".join(r["skipped"].split())[:70]))
        else:
            rows.append((name, f"{r['tokens_per_second']:,.0f}", "-" if r["ratio_vs_reference"] is None
                         else f"{r['ratio_vs_reference']:.2f}",
                         f"{r['ratio_interleaved']:.2f}" if "ratio_interleaved" in r else "-",
                         f"{r['ratio_rotations']:.2f}" if "ratio_rotations" in r else "-",
                         f"{r['peak_rss_mb']:.0f}", "-" if r.get(check_key) is None else f"{r[check_key]:.4f}",
                         f"{r['digest'][:8]}/{r['probabilities_digest'][:8]}",
                         " ".join(f"{t:.2f}" for t in r["seconds"])))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    print(versions_line())  # spaCy's components' speed depends on them
    for row in rows:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip())
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(json.dumps({
            **stamp(), "threads": threads, "data": data, "task": args.task, "limit_docs": args.limit,
            "code": code or None, "batch_size": args.batch_size, "repeats": args.repeats,
            "warmup_docs": args.warmup, "min_seconds_per_run": args.min_seconds,
            "interleaved_rounds": rounds, "reference": args.reference, "models": results},
            indent=2) + "\n")
        print(f"speed.py: wrote {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
