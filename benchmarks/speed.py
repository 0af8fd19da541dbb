"""Prediction speed and peak memory of trained spaCy pipelines on gold tokens.

The one speed harness of the benchmarks (taggers, chunkers, NER, parsers,
FR phrase recognisers):

    python benchmarks/speed.py DATA NAME=MODEL_DIR[@KEY=VALUE,...] [...]
        [--task tag|chunk|ner|clauses|parse|pipeline] [--code FILE] [--limit N]
        [--reference NAME] [--batch-size 1000] [--repeats 3] [--warmup 200]
        [--min-seconds 1.0] [--output metrics/tagger_speed.json]

DATA is a .spacy file of gold docs, or a column file read with the package's
readers (CoNLL-2001 for `--task clauses`, CoNLL-2000 for `--task chunk`).
Each model is timed in a fresh subprocess of its own (so that its peak memory,
ru_maxrss, is its own), with one thread for numpy/BLAS unless the environment
says otherwise, and n_process=1 (or `@n_process=N`). The worker reads the docs
of DATA and rebuilds them as Doc(nlp.vocab, words=..., spaces=...) (gold
tokenisation) with the task's inputs only (benchmarks/spanbench.py): words
for tag and pipeline (a tagger + parser pipeline from words); words, and the
POS tags where the data has them, for ner; words and
the gold POS tags for chunk and parse (a stand-alone parser's input; spaCy's
parser ignores them); words, POS tags and the gold chunks
(doc.spans["chunks"]) for clauses. It annotates `--warmup` docs once and the
whole set once more, then
times `list(nlp.pipe(docs, batch_size=...))` `--repeats` times (fresh docs each
time; building them is not timed) and reports the median tokens/second. A fast
model tags the set in milliseconds, so a run covers the set as many times
(`passes_per_run`, timed pass by pass) as it takes to last at least
`--min-seconds`. It also checks the output against the gold annotation, to
catch a model that does not really annotate: `tag_acc_check` (token.tag_) for
`--task tag`; `f1_check` (span F1 with the package's scorer) for chunk
(predictions from doc.spans["chunks"], e.g. lookahead_chunker or fr_chunker,
else doc.ents), ner (doc.ents) and clauses (doc.spans["clauses"], nested);
`uas_check` (unlabelled attachment over all tokens, token.head) for parse
and pipeline.
`@KEY=VALUE,...` after a model changes settings at load
(benchmarks/model_spec.py), e.g. `tagger_d2=training/tagger_d1/model-best@depth=2`.
`--code FILE` is imported in each worker before loading (custom factories,
e.g. benchmarks/crf_spans.py for the CRF baseline); `--limit N` times the
first N docs only.
`--pairs N` also times the models interleaved, in one more subprocess that
loads them all: N rounds, each one pass of every model (the order rotated
from round to round), and `ratio_interleaved` is the median over the rounds
of the reference's pass time over the model's. On a shared machine whose
speed drifts within a minute, the ratios of whole runs timed one model after
the other can swing by a third between reruns; passes side by side share
the drift (models with `@n_process` are left out of it).
A model directory that does not exist, or a worker that fails (e.g. a
component that is not installed), is reported and skipped, not fatal.
"""
import argparse
import json
import math
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Dict, List

sys.path.insert(0, str(Path(__file__).parent))
import spanbench  # noqa: E402

THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
               "BLIS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")


def peak_rss_mb() -> float:
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB (Linux), bytes (macOS)
    return round(rss / (1024 * 1024 if sys.platform == "darwin" else 1024), 1)


def machine_info() -> dict:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    return {"cpu": cpu, "cores": os.cpu_count(), "usable_cores": usable,
            "platform": platform.platform(), "python": platform.python_version()}


# ---------------------------------------------------------------- worker --
def worker(name: str, model: str, data: str, batch_size: int, repeats: int,
           warmup: int, min_seconds: float, out: str, task: str = "tag",
           code: str = "", limit: int = 0) -> None:
    import spacy
    from spacy.util import import_file
    from tqdm import tqdm

    if code:
        import_file("code", code)
    gold = [spanbench.inputs_of(d, task) for d in spanbench.read_gold(data, limit=limit, task=task)]
    n_tokens = sum(len(g.words) for g in gold)
    base_rss = peak_rss_mb()
    from model_spec import load, parse_spec
    _, model_dir, overrides = parse_spec(f"{name}={model}")
    n_process = int(overrides.pop("n_process", 1))  # an argument of nlp.pipe
    t0 = time.perf_counter()
    nlp = load(model_dir, overrides)
    load_seconds = time.perf_counter() - t0

    def fresh_docs():
        return [spanbench.make_doc(nlp.vocab, g) for g in gold]

    list(nlp.pipe(fresh_docs()[:warmup], batch_size=batch_size, n_process=n_process))
    # one untimed-for-the-result pass sets how many passes make a run last
    # at least min_seconds (a fast model tags the test set in a few ms)
    t0 = time.perf_counter()
    predicted = list(nlp.pipe(fresh_docs(), batch_size=batch_size, n_process=n_process))
    passes = max(1, math.ceil(min_seconds / max(time.perf_counter() - t0, 1e-6)))
    times = []
    for _ in tqdm(range(repeats), desc=f"{name} ({passes} x {n_tokens} tokens)",
                  unit="run", file=sys.stderr, leave=False):
        elapsed = 0.0
        for _ in range(passes):  # one pass of docs in memory at a time
            predicted = docs = None  # the last pass's docs freed outside the timing
            docs = fresh_docs()
            t0 = time.perf_counter()
            predicted = list(nlp.pipe(docs, batch_size=batch_size, n_process=n_process))
            elapsed += time.perf_counter() - t0
        times.append(elapsed)
    peak_rss = peak_rss_mb()  # before the gold docs are read again for the check
    check = spanbench.check(predicted, spanbench.read_gold(data, limit=limit, task=task), task)
    median = statistics.median(times)
    result = {
        "name": name, "model": model, "pipeline": nlp.pipe_names,
        "n_docs": len(gold), "n_tokens": n_tokens,
        "batch_size": batch_size, "repeats": repeats, "warmup_docs": warmup,
        "passes_per_run": passes,
        "seconds": [round(t, 4) for t in times], "median_seconds": round(median, 4),
        "tokens_per_second": round(passes * n_tokens / median, 1),
        "load_seconds": round(load_seconds, 2),
        "base_rss_mb": base_rss,  # interpreter + spaCy + data, before the model
        "peak_rss_mb": peak_rss,
        "task": task, "inputs": spanbench.INPUTS[task],
        **check,
        "spacy": spacy.__version__,
    }
    Path(out).write_text(json.dumps(result, indent=2))


def interleaved_worker(specs: List[str], data: str, batch_size: int, rounds: int, out: str,
                       task: str = "tag", code: str = "", limit: int = 0) -> None:
    """Pass times of every model in `rounds` rounds, one pass of each per
    round, the order rotated each round: {name: [seconds per round]}."""
    from spacy.util import import_file
    from model_spec import load, parse_spec

    if code:
        import_file("code", code)
    gold = [spanbench.inputs_of(d, task) for d in spanbench.read_gold(data, limit=limit, task=task)]
    nlps = {}
    for spec in specs:
        name, model_dir, overrides = parse_spec(spec)
        nlps[name] = load(model_dir, overrides)

    def one_pass(nlp) -> float:
        docs = [spanbench.make_doc(nlp.vocab, g) for g in gold]
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
    Path(out).write_text(json.dumps(times))


def run_interleaved(specs: List[str], args, env) -> Dict[str, List[float]]:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "times.json"
        cmd = [sys.executable, __file__, "--interleaved-worker", str(args.data),
               str(args.batch_size), str(args.pairs), str(out), args.task,
               str(args.code or ""), str(args.limit), *specs]
        print(f"speed.py: timing {len(specs)} models interleaved, {args.pairs} rounds ...",
              file=sys.stderr)
        proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=None, text=True)
        if proc.returncode != 0 or not out.exists():
            print(f"speed.py: the interleaved timing failed (exit code {proc.returncode})",
                  file=sys.stderr)
            return {}
        return json.loads(out.read_text())


# ---------------------------------------------------------------- parent --
def run_model(name, model, args, env):
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "result.json"
        cmd = [sys.executable, __file__, "--worker", name, model, str(args.data),
               str(args.batch_size), str(args.repeats), str(args.warmup),
               str(args.min_seconds), str(out), args.task, str(args.code or ""),
               str(args.limit)]
        proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE,
                              stderr=None, text=True)
        result = json.loads(out.read_text()) if out.exists() else {}
        if proc.returncode != 0 or "error" in result:
            why = result.get("error", f"exit code {proc.returncode}")
            return {"name": name, "model": model, "skipped": f"worker failed: {why}"}
        return result


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("data", type=Path, help=".spacy file with the gold docs (or a column file: "
                                            "CoNLL-2001 for clauses, CoNLL-2000 for chunk)")
    ap.add_argument("models", nargs="+", help="NAME=MODEL_DIR")
    ap.add_argument("--task", choices=spanbench.SPEED_TASKS, default="tag",
                    help="inputs and output check: tag (words; tag_ accuracy), chunk (words + "
                         "POS; chunk F1), ner (words; entity F1), clauses (words + POS + chunks; "
                         "clause F1), parse (words + POS; UAS), pipeline (words; UAS)")
    ap.add_argument("--code", type=Path, default=None,
                    help="Python file each worker imports first (custom factories)")
    ap.add_argument("--limit", type=int, default=0, help="time the first N docs only (0: all)")
    ap.add_argument("--reference", default=None, help="NAME that ratios are relative to")
    ap.add_argument("--batch-size", type=int, default=1000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=200, help="docs tagged before timing")
    ap.add_argument("--min-seconds", type=float, default=1.0,
                    help="a run tags the data as many times as needed to last this long")
    ap.add_argument("--pairs", type=int, default=0,
                    help="also time the models interleaved in N rounds (ratio_interleaved)")
    ap.add_argument("--output", type=Path, default=None, help="JSON file to write")
    args = ap.parse_args(argv)
    if not args.data.exists():
        sys.exit(f"speed.py: data file not found: {args.data}")
    env = dict(os.environ)
    for var in THREAD_VARS:
        env.setdefault(var, "1")

    results = {}
    from model_spec import parse_spec
    for spec in args.models:
        name, model, _ = parse_spec(spec)
        if not (Path(model) / "config.cfg").exists():
            print(f"speed.py: skipping {name}: no trained model at {model}", file=sys.stderr)
            results[name] = {"name": name, "model": model, "skipped": "model not found"}
            continue
        print(f"speed.py: timing {name} ({model}) in a subprocess ...", file=sys.stderr)
        results[name] = run_model(name, spec.partition("=")[2] or spec, args, env)
        if "skipped" in results[name]:
            print(f"speed.py: skipping {name}: {results[name]['skipped']}", file=sys.stderr)

    ref = results.get(args.reference, {}).get("tokens_per_second")
    if args.reference and not ref:
        print(f"speed.py: reference {args.reference} was not measured; no ratios",
              file=sys.stderr)
    for r in results.values():
        if "tokens_per_second" in r:
            r["ratio_vs_reference"] = round(r["tokens_per_second"] / ref, 3) if ref else None
    interleaved = {}
    if args.pairs > 0 and ref:
        specs = {name: spec for name, spec in ((parse_spec(x)[0], x) for x in args.models)
                 if "tokens_per_second" in results.get(name, {}) and "@n_process" not in spec
                 and ",n_process" not in spec}
        if args.reference in specs:
            interleaved = run_interleaved(list(specs.values()), args, env)
        for name, times in interleaved.items():
            base = interleaved[args.reference]
            results[name]["interleaved_seconds"] = times
            results[name]["ratio_interleaved"] = round(
                statistics.median(b / t for b, t in zip(base, times)), 3)

    check_key = spanbench.CHECK_KEYS[args.task]
    rows = [("model", "tokens/s", f"x {args.reference or '-'}", "x interleaved", "peak RSS MB",
             {"tag_acc_check": "tag acc", "f1_check": "F1", "uas_check": "UAS"}[check_key], "runs (s)")]
    for name, r in results.items():
        if "skipped" in r:
            rows.append((name, "skipped", "", "", "", "", " ".join(r["skipped"].split())[:70]))
        else:
            ratio = r["ratio_vs_reference"]
            rows.append((name, f"{r['tokens_per_second']:,.0f}",
                         "-" if ratio is None else f"{ratio:.2f}",
                         f"{r['ratio_interleaved']:.2f}" if "ratio_interleaved" in r else "-",
                         f"{r['peak_rss_mb']:.0f}", "-" if r.get(check_key) is None else f"{r[check_key]:.4f}",
                         " ".join(f"{t:.2f}" for t in r["seconds"])))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip())

    report = {
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "machine": machine_info(),
        "threads": {v: env[v] for v in THREAD_VARS},
        "data": str(args.data), "task": args.task, "limit_docs": args.limit,
        "code": str(args.code) if args.code else None, "batch_size": args.batch_size,
        "repeats": args.repeats, "warmup_docs": args.warmup,
        "min_seconds_per_run": args.min_seconds, "interleaved_rounds": args.pairs,
        "reference": args.reference, "models": results,
    }
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(json.dumps(report, indent=2) + "\n")
        print(f"speed.py: wrote {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--interleaved-worker":
        data, bs, rounds, out, task, code, limit = sys.argv[2:9]
        interleaved_worker(sys.argv[9:], data, int(bs), int(rounds), out, task, code, int(limit))
    elif len(sys.argv) > 1 and sys.argv[1] == "--worker":
        name, model, data, bs, reps, warm, min_s, out = sys.argv[2:10]
        task, code, limit = (sys.argv[10:13] + ["tag", "", "0"][len(sys.argv[10:13]):])
        try:
            worker(name, model, data, int(bs), int(reps), int(warm), float(min_s), out,
                   task, code, int(limit))
        except Exception as err:  # tell the parent why, then fail loudly
            Path(out).write_text(json.dumps({"error": f"{type(err).__name__}: {err}"[:300]}))
            raise
    else:
        sys.exit(main())
