"""Scaling over cores: tokens/second of `nlp.pipe(texts, n_process=N)` with
the components decoding each batch on `n_threads` threads, on a large set of
raw texts, and the memory of each process.

    python benchmarks/scaling.py MODEL_DIR TEXTS.spacy [--n-process 1 2]
        [--n-threads 1 2] [--copies 4] [--batch-size 256] [--output metrics/scaling.json]

The texts are those of the docs in TEXTS.spacy (e.g. the EWT training set),
repeated `--copies` times; the pipeline tokenises them itself (raw text in,
as a user would run it), so the model must have a tokenizer. Each setting
runs in a fresh subprocess. Memory: the parent's peak RSS, and for N > 1 the
largest peak RSS of the worker processes (each loads the pipeline: the
components are pickled to them). A progress line is printed per setting.
"""
import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path


def kib_to_mb(v: int) -> float:
    return round(v / 1024, 1)


def worker(model: str, texts_path: str, copies: int, n_process: int, batch_size: int,
           n_threads: int) -> dict:
    import spacy
    from spacy.tokens import Doc, DocBin

    nlp = spacy.load(model)
    for _, pipe in nlp.pipeline:  # this project's components decode a batch on n_threads
        if "n_threads" in getattr(pipe, "cfg", {}):
            pipe.cfg["n_threads"] = n_threads
    texts = [d.text for d in DocBin().from_disk(texts_path).get_docs(nlp.vocab) if len(d)] * copies
    list(nlp.pipe(texts[:200]))  # warm-up
    start = time.perf_counter()
    docs = list(nlp.pipe(texts, n_process=n_process, batch_size=batch_size))
    seconds = time.perf_counter() - start
    n_tokens = sum(len(doc) for doc in docs)
    serialisation = {}
    if n_process == 1 and n_threads == 1:
        # With n_process > 1 spaCy sends every doc back to the parent as
        # Doc.to_bytes() and rebuilds it with Doc.from_bytes(): time both, as
        # they bound what extra processes can gain for a fast pipeline.
        start = time.perf_counter()
        blobs = [doc.to_bytes() for doc in docs]
        serialisation["doc_to_bytes_tokens_per_second"] = round(n_tokens / (time.perf_counter() - start))
        start = time.perf_counter()
        for blob in blobs:
            Doc(nlp.vocab).from_bytes(blob)
        serialisation["doc_from_bytes_tokens_per_second"] = round(n_tokens / (time.perf_counter() - start))
    return {**serialisation, "n_process": n_process, "n_threads": n_threads, "texts": len(texts),
            "tokens": n_tokens,
            "seconds": round(seconds, 2), "tokens_per_second": round(n_tokens / seconds),
            "parent_peak_rss_mb": kib_to_mb(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss),
            "worker_peak_rss_mb": (kib_to_mb(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
                                   if n_process > 1 else None)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model")
    ap.add_argument("texts")
    ap.add_argument("--n-process", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--n-threads", type=int, nargs="+", default=[1],
                    help="the components' n_threads, crossed with --n-process")
    ap.add_argument("--copies", type=int, default=4)
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--output", type=Path, default=Path("metrics/scaling.json"))
    ap.add_argument("--worker", type=int, nargs=2, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker is not None:
        print(json.dumps(worker(args.model, args.texts, args.copies, args.worker[0],
                                args.batch_size, args.worker[1])))
        return 0
    if not (Path(args.model) / "config.cfg").exists():
        sys.exit(f"scaling.py: no trained model at {args.model}")
    results = []
    settings = [(n, t) for t in args.n_threads for n in args.n_process]
    for i, (n, t) in enumerate(settings, 1):
        print(f"scaling.py [{i}/{len(settings)}] n_process={n} n_threads={t} ...", flush=True)
        out = subprocess.run([sys.executable, __file__, args.model, args.texts, "--copies",
                              str(args.copies), "--batch-size", str(args.batch_size),
                              "--worker", str(n), str(t)], capture_output=True, text=True)
        if out.returncode != 0:
            print(f"scaling.py: n_process={n} n_threads={t} failed:\n{out.stderr[-2000:]}",
                  file=sys.stderr)
            continue
        r = json.loads(out.stdout.strip().splitlines()[-1])
        results.append(r)
        print(f"  {r['tokens']:,} tokens in {r['seconds']} s: {r['tokens_per_second']:,} tokens/s; "
              f"peak RSS parent {r['parent_peak_rss_mb']} MB, worker {r['worker_peak_rss_mb']} MB",
              flush=True)
    base = next((r["tokens_per_second"] for r in results
                 if r["n_process"] == 1 and r["n_threads"] == 1), None)
    for r in results:
        r["speedup_vs_1"] = round(r["tokens_per_second"] / base, 2) if base else None
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps({"model": args.model, "texts": args.texts,
                                       "copies": args.copies, "batch_size": args.batch_size,
                                       "results": results}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
