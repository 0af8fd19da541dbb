"""Scale-out on Dask (spacy_lookahead.distributed): annotation speed and
training by parameter mixing.

    python benchmarks/distributed_bench.py annotate NAME=MODEL=DATA.spacy [...]
        [--workers 1 2] [--threads 2] [--repeat 1] [--shard-size 500]
        [--output metrics/distributed_annotate.json]
    python benchmarks/distributed_bench.py train NAME=CONFIG [...] [--shards 1 2 4 8]
        [--oneshot 2 4 8] [--rounds R] [--output metrics/distributed_train.json]
        [-- spaCy-style overrides per name: NAME:--paths.train=X ...]

annotate: the texts of DATA (doc.text: raw text, the pipeline's tokenizer
included; `--repeat` copies) as a JSONL file, annotated by MODEL with 1 and
2 worker processes (one thread each) and, with `--threads T`, one worker of
T threads (the components' n_threads). The workers load the pipeline before
the clock starts; tokens/s is output tokens over the wall time of the
annotate call (reading, partitioning, shipping, writing the shards
included). Docs in = docs out is checked.

train: iterative parameter mixing of CONFIG with 1, 2, 4, 8 shards on 2
workers, one-shot mixing for the `--oneshot` shard counts, and 1 shard on 1
worker (the serial reference: one shard reproduces `spacy train`, see
tests/test_distributed.py) and 2 shards on 1 worker (the same work as 2
shards on 2 workers, without the parallelism). Accuracy is the config's main
dev score after the last round (and the best round's).

Each setting runs in a fresh subprocess of its own, so its peak memory is its
own: the client's ru_maxrss and the largest worker's (RUSAGE_CHILDREN after
the cluster closed).
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List


def peak_rss_mb(who: int = resource.RUSAGE_SELF) -> float:
    return resource.getrusage(who).ru_maxrss / 1024  # KiB on Linux


# --- one setting, in its own process -----------------------------------------
def one_annotate(spec: Dict[str, Any]) -> Dict[str, Any]:
    import spacy
    import srsly
    from spacy.tokens import DocBin

    from spacy_lookahead.distributed.annotate import _pipeline, annotate
    from spacy_lookahead.distributed.cluster import dask_client
    from spacy_lookahead.distributed.manifest import model_checksum

    tmp = Path(tempfile.mkdtemp(prefix="dask-bench-"))
    docs = DocBin().from_disk(spec["data"]).get_docs(spacy.blank("en").vocab)
    texts = [d.text for d in docs] * spec["repeat"]
    srsly.write_jsonl(tmp / "input.jsonl", ({"text": t, "i": i} for i, t in enumerate(texts)))
    checksum = model_checksum(Path(spec["model"]))
    model = str(Path(spec["model"]).resolve())
    with dask_client(None, spec["workers"]) as client:
        client.run(_pipeline, model, checksum, spec["threads"])  # load before the clock
        start = time.perf_counter()
        manifest = annotate(Path(model), tmp / "input.jsonl", tmp / "out", client=client,
                            n_threads=spec["threads"], shard_size=spec["shard_size"],
                            batch_size=spec["batch_size"], stdout=open(os.devnull, "w"))
        seconds = time.perf_counter() - start
    tokens = sum(s["tokens"] for s in manifest["shards"].values())
    docs_out = sum(s["docs"] for s in manifest["shards"].values())
    return {**spec, "docs_in": len(texts), "docs_out": docs_out, "tokens": tokens,
            "seconds": seconds, "tokens_per_s": tokens / seconds,
            "peak_rss_mb_client": peak_rss_mb(), "peak_rss_mb_worker": peak_rss_mb(resource.RUSAGE_CHILDREN)}


def one_train(spec: Dict[str, Any]) -> Dict[str, Any]:
    from spacy_lookahead.distributed.cluster import dask_client
    from spacy_lookahead.distributed.train import train

    start = time.perf_counter()
    with dask_client(None, spec["workers"]) as client:
        history = train(Path(spec["config"]), None, overrides=spec["overrides"], client=client,
                        shards=spec["shards"], mixing=spec["mixing"], rounds=spec["rounds"],
                        stdout=sys.stderr)
    seconds = time.perf_counter() - start
    return {**spec, "score": history[-1]["score"], "best_score": max(h["score"] for h in history),
            "scores_per_round": [h["score"] for h in history],
            "train_seconds": sum(h["train_seconds"] for h in history),
            # the rounds' critical path in the workers (the slowest shard of each round)
            "shard_seconds": sum(max(h["shard_seconds"]) for h in history),
            "seconds": seconds, "peak_rss_mb_client": peak_rss_mb(),
            "peak_rss_mb_worker": peak_rss_mb(resource.RUSAGE_CHILDREN)}


def run_setting(kind: str, spec: Dict[str, Any]) -> Dict[str, Any]:
    proc = subprocess.run([sys.executable, __file__, f"_{kind}", json.dumps(spec)],
                          stdout=subprocess.PIPE, text=True, env={**os.environ, "OMP_NUM_THREADS": "1"})
    if proc.returncode != 0:
        return {**spec, "error": f"exit status {proc.returncode}"}
    return json.loads(proc.stdout.strip().splitlines()[-1])


# --- the runs ------------------------------------------------------------------
def main(argv: List[str]) -> None:
    if argv and argv[0] in ("_annotate", "_train"):
        one = one_annotate if argv[0] == "_annotate" else one_train
        print(json.dumps(one(json.loads(argv[1]))))
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    an = sub.add_parser("annotate")
    an.add_argument("runs", nargs="+", help="NAME=MODEL=DATA.spacy")
    an.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    an.add_argument("--threads", type=int, default=0, help="also one worker of T threads (0: no)")
    an.add_argument("--repeat", type=int, default=1)
    an.add_argument("--shard-size", type=int, default=500)
    an.add_argument("--batch-size", type=int, default=256)
    an.add_argument("--output", type=Path, default=Path("metrics/distributed_annotate.json"))
    tr = sub.add_parser("train")
    tr.add_argument("runs", nargs="+", help="NAME=CONFIG; overrides: NAME:--section.key=value")
    tr.add_argument("--shards", type=int, nargs="+", default=[1, 2, 4, 8])
    tr.add_argument("--oneshot", type=int, nargs="*", default=[2, 4, 8])
    tr.add_argument("--rounds", type=int, default=None, help="default: the config's max_epochs")
    tr.add_argument("--output", type=Path, default=Path("metrics/distributed_train.json"))
    args = ap.parse_args(argv)
    rows = []
    if args.command == "annotate":
        for run in args.runs:
            name, model, data = run.split("=")
            settings = [(w, 1) for w in args.workers] + ([(1, args.threads)] if args.threads else [])
            for workers, threads in settings:
                spec = {"name": name, "model": model, "data": data, "workers": workers,
                        "threads": threads, "repeat": args.repeat, "shard_size": args.shard_size,
                        "batch_size": args.batch_size}
                row = run_setting("annotate", spec)
                rows.append(row)
                print(f"{name:10s} workers {workers} threads {threads}: "
                      + (row.get("error") or f"{row['tokens_per_s']:,.0f} tokens/s, docs in "
                         f"{row['docs_in']} out {row['docs_out']}, peak RSS client "
                         f"{row['peak_rss_mb_client']:.0f} MB worker {row['peak_rss_mb_worker']:.0f} MB"),
                      flush=True)
    else:
        configs, overrides = {}, {}
        for run in args.runs:
            if ":--" in run:
                name, setting = run.split(":--", 1)
                key, value = setting.split("=", 1)
                overrides.setdefault(name, {})[key] = json.loads(value) if _is_json(value) else value
            else:
                name, config = run.split("=", 1)
                configs[name] = config
        for name, config in configs.items():
            settings = [(1, 1, "iterative")] + [(s, 2, "iterative") for s in args.shards] \
                + [(2, 1, "iterative")] + [(s, 2, "oneshot") for s in args.oneshot]
            for shards, workers, mixing in settings:
                spec = {"name": name, "config": config, "overrides": overrides.get(name, {}),
                        "shards": shards, "workers": workers, "mixing": mixing, "rounds": args.rounds}
                row = run_setting("train", spec)
                rows.append(row)
                print(f"{name:8s} {mixing:9s} shards {shards} workers {workers}: "
                      + (row.get("error") or f"score {row['score']:.4f} (best {row['best_score']:.4f}), "
                         f"{row['seconds']:.0f} s wall ({row['shard_seconds']:.0f} s the slowest shards' "
                         f"epochs), peak RSS client {row['peak_rss_mb_client']:.0f} MB "
                         f"worker {row['peak_rss_mb_worker']:.0f} MB"), flush=True)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(rows, indent=2))


def _is_json(value: str) -> bool:
    try:
        json.loads(value)
        return True
    except ValueError:
        return False


if __name__ == "__main__":
    main(sys.argv[1:])
