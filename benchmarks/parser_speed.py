"""Parsing speed and peak memory of trained pipelines, one process each.

    python benchmarks/parser_speed.py TEST.spacy NAME=MODEL_DIR[@KEY=VALUE,...] [...]
        [--reference NAME] [--code FILE] [--batch-size 1000] [--repeats 3] [--limit N]
        [--output metrics/parser_speed.json]

Each model runs in a fresh subprocess (its own ru_maxrss), one BLAS thread,
n_process=1. The worker rebuilds the test docs from the gold words and gold
POS tags (the arc_standard_parser's input; spaCy's parser ignores them),
parses 200 docs to warm up, then times `list(nlp.pipe(docs))` `--repeats`
times (fresh docs each time, building them untimed) and reports the median
tokens/second, the peak RSS and the UAS of the parse (a check that it
parses). `@KEY=VALUE,...` changes settings at load (benchmarks/model_spec.py),
e.g. `parser_d2=training/parser_d1/model-best@depth=2`."""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from model_spec import parse_spec  # noqa: E402

THREADS = {v: "1" for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}


def worker(data, spec, batch_size, repeats, code, limit=0):
    import importlib.util

    from spacy.tokens import Doc, DocBin
    sys.path.insert(0, str(Path(__file__).parent))
    from model_spec import load, parse_spec
    if code:
        module = importlib.util.spec_from_file_location("code", code)
        module.loader.exec_module(importlib.util.module_from_spec(module))
    _, model, overrides = parse_spec(spec)
    n_process = int(overrides.pop("n_process", 1))  # an argument of nlp.pipe
    nlp = load(model, overrides)
    gold = list(DocBin().from_disk(data).get_docs(nlp.vocab))
    if limit:
        gold = gold[:limit]

    def fresh():
        return [Doc(nlp.vocab, words=[t.text for t in d], spaces=[bool(t.whitespace_) for t in d],
                    tags=[t.tag_ for t in d]) for d in gold]

    list(nlp.pipe(fresh()[:min(200, len(gold) // 5 or 1)], batch_size=batch_size, n_process=n_process))
    n_tokens = sum(len(d) for d in gold)
    rates = []
    out = None
    for _ in range(repeats):
        out = docs = None  # the last run's docs freed outside the timing
        docs = fresh()
        t0 = time.perf_counter()
        out = list(nlp.pipe(docs, batch_size=batch_size, n_process=n_process))
        rates.append(n_tokens / (time.perf_counter() - t0))
    correct = sum(p.head.i == g.head.i for pd, gd in zip(out, gold) for p, g in zip(pd, gd))
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"tokens_per_second": round(statistics.median(rates)), "runs": [round(r) for r in rates],
                      "peak_rss_mb": round(rss, 1), "uas_check": correct / n_tokens, "tokens": n_tokens}))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("data")
    ap.add_argument("models", nargs="+")
    ap.add_argument("--reference", default=None)
    ap.add_argument("--code", default="")
    ap.add_argument("--batch-size", type=int, default=1000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--limit", type=int, default=0, help="time the first N docs only (0: all)")
    ap.add_argument("--output", type=Path, default=Path("metrics/parser_speed.json"))
    args = ap.parse_args(argv)
    results = {}
    for spec in args.models:
        name, model, _ = parse_spec(spec)
        if not Path(model).exists():
            print(f"{name}: {model} not found, skipped", file=sys.stderr)
            continue
        cmd = [sys.executable, __file__, "--worker", args.data, spec, str(args.batch_size),
               str(args.repeats), args.code, str(args.limit)]
        proc = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, **THREADS})
        if proc.returncode != 0:
            print(f"{name}: worker failed\n{proc.stderr[-2000:]}", file=sys.stderr)
            continue
        results[name] = {"model": model, **json.loads(proc.stdout.strip().splitlines()[-1])}
        print(name, results[name], flush=True)
    if args.reference in results:
        ref = results[args.reference]["tokens_per_second"]
        for r in results.values():
            r["speed_vs_reference"] = round(r["tokens_per_second"] / ref, 2)
    record = {"data": args.data, "reference": args.reference, "batch_size": args.batch_size,
              "limit": args.limit,
              "command": " ".join(sys.argv), "models": results}
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(record, indent=2))


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), sys.argv[6],
               int(sys.argv[7]) if len(sys.argv) > 7 else 0)
    else:
        main()
