"""Scaling over cores: tokens/second of `nlp.pipe(texts, n_process=N)` with
the components decoding each batch on `n_threads` threads, on many raw
texts, and the memory of each process.

    python -m benchmarks.scaling MODEL_DIR TEXTS.spacy [--n-process 1 2] [--n-threads 1 2]
        [--copies 4] [--batch-size 256] [--output metrics/scaling.json]

The texts of the docs in TEXTS.spacy (e.g. the EWT training set), `--copies`
times; the pipeline tokenises them itself (raw text in, as a user runs it).
Each setting runs in a fresh process; memory: its peak RSS, and for N > 1
the largest of its workers' (each loads the pipeline: spaCy pickles it to them)."""
import argparse
import json
import resource
import sys
import time
from pathlib import Path

from benchmarks.harness import isolated, peak_rss_mb


def setting(model: str, texts_path: str, copies: int, n_process: int, batch_size: int, n_threads: int) -> dict:
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
    out = {}
    if n_process == 1 and n_threads == 1:
        # With n_process > 1 spaCy's workers send each doc back as Doc.to_bytes()
        # and the parent rebuilds it with Doc.from_bytes(): both bound what more
        # processes can gain for a fast pipeline
        start = time.perf_counter()
        blobs = [doc.to_bytes() for doc in docs]
        out["doc_to_bytes_tokens_per_second"] = round(n_tokens / (time.perf_counter() - start))
        start = time.perf_counter()
        for blob in blobs:
            Doc(nlp.vocab).from_bytes(blob)
        out["doc_from_bytes_tokens_per_second"] = round(n_tokens / (time.perf_counter() - start))
    return {**out, "n_process": n_process, "n_threads": n_threads, "texts": len(texts), "tokens": n_tokens,
            "seconds": round(seconds, 2), "tokens_per_second": round(n_tokens / seconds),
            "parent_peak_rss_mb": peak_rss_mb(),
            "worker_peak_rss_mb": peak_rss_mb(resource.RUSAGE_CHILDREN) if n_process > 1 else None}


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
    args = ap.parse_args(argv)
    if not (Path(args.model) / "config.cfg").exists():
        sys.exit(f"scaling.py: no trained model at {args.model}")
    results = []
    settings = [(n, t) for t in args.n_threads for n in args.n_process]
    for i, (n, t) in enumerate(settings, 1):
        print(f"scaling.py [{i}/{len(settings)}] n_process={n} n_threads={t} ...", flush=True)
        try:
            r = isolated(setting, args.model, args.texts, args.copies, n, args.batch_size, t)
        except RuntimeError as err:
            print(f"scaling.py: n_process={n} n_threads={t} failed: {err}", file=sys.stderr)
            continue
        results.append(r)
        print(f"  {r['tokens']:,} tokens in {r['seconds']} s: {r['tokens_per_second']:,} tokens/s; "
              f"peak RSS parent {r['parent_peak_rss_mb']} MB, worker {r['worker_peak_rss_mb']} MB", flush=True)
    base = next((r["tokens_per_second"] for r in results if r["n_process"] == 1 and r["n_threads"] == 1), None)
    for r in results:
        r["speedup_vs_1"] = round(r["tokens_per_second"] / base, 2) if base else None
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps({"model": args.model, "texts": args.texts, "copies": args.copies,
                                       "batch_size": args.batch_size, "results": results}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
