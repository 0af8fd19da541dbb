"""IPM round times and where they go, at several worker counts: `train`
(configs/tagger_ewt.cfg by default) on S shards on S LocalCluster workers
of one thread, `--evaluate workers`, with Dask's task stream summed by
kind of task (training a shard, the mixing tree's leaves and nodes, the
next start, the running model, the dev parts), and the workers' rhythm: the
time from one round's first shard to the next's (what a round costs the
workers, whether or not the driver, which scores and saves, keeps up).

    python -m benchmarks.device.ipm_stages TRAIN.spacy DEV.spacy [--workers 1 2 4 8]
        [--rounds 4] [--config configs/tagger_ewt.cfg] [--output FILE]

Made for a many-core machine (benchmarks/device/README.md); on 2 cores the
workers compete with the driver and the scheduler."""
import argparse
import collections
import io
import json
import statistics
import time
from pathlib import Path


def task_kind(key: str) -> str:
    parts = key.split("-")
    if not key.startswith("ipm-"):
        return parts[0]
    if len(parts[1]) == 16:  # ipm-<run>-<round>-<shard>: a shard's epoch
        return "train_shard"
    return parts[1] + ("-leaf" if "-leaf-" in key else "")


def one(config: Path, train_path: Path, dev_path: Path, workers: int, rounds: int) -> dict:
    import distributed

    from spacy_lookahead.distributed.cluster import dask_client
    from spacy_lookahead.distributed.train import train

    overrides = {"paths.train": str(train_path), "paths.dev": str(dev_path),
                 "training.max_epochs": rounds, "paths.curves": None}
    began = time.perf_counter()
    with dask_client(None, workers) as client:  # the cluster `train` starts itself
        started = time.perf_counter()
        with distributed.get_task_stream(client) as stream:
            history = train(config, None, client=client, shards=workers, overrides=overrides,
                            evaluate="workers", stdout=io.StringIO())
        trained = time.perf_counter()
    kinds = collections.defaultdict(lambda: {"n": 0, "compute": 0.0, "transfer": 0.0})
    spans: dict = {}  # round -> [first shard's start, last shard's stop] on the workers
    fetching: dict = collections.defaultdict(float)  # round -> its shards' time fetching inputs
    for record in stream.data:
        kind = task_kind(record["key"])
        k = kinds[kind]
        k["n"] += 1
        for s in record["startstops"]:
            if s["action"] in ("compute", "transfer"):
                k[s["action"]] += s["stop"] - s["start"]
            if kind == "train_shard" and s["action"] == "transfer":
                fetching[int(record["key"].split("-")[2])] += s["stop"] - s["start"]
            if kind == "train_shard" and s["action"] == "compute":
                r = int(record["key"].split("-")[2])
                span = spans.setdefault(r, [s["start"], s["stop"]])
                span[0], span[1] = min(span[0], s["start"]), max(span[1], s["stop"])
    return {"workers": workers, "rounds": rounds, "cluster_seconds": started - began,
            "train_seconds": trained - started,
            "round_seconds": [r["seconds"] for r in history],
            "shard_seconds": [r["shard_seconds"] for r in history],
            "model_seconds": [r["model_seconds"] for r in history],
            "evaluate_seconds": [r["evaluate_seconds"] for r in history],
            "driver_cpu_seconds": [r["driver_cpu_seconds"] for r in history],
            "scores": [r["score"] for r in history], "tasks": dict(kinds),
            # the workers' rhythm: round r's shards start this long after round r-1's
            "worker_round_seconds": [spans[r][0] - spans[r - 1][0] for r in sorted(spans)[1:]],
            "shard_span_seconds": [spans[r][1] - spans[r][0] for r in sorted(spans)],
            "shard_fetch_seconds": [fetching[r] for r in sorted(spans)]}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("train", type=Path)
    ap.add_argument("dev", type=Path)
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4, 8])
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--config", type=Path, default=Path("configs/tagger_ewt.cfg"))
    ap.add_argument("--output", type=Path, default=None)
    args = ap.parse_args(argv)
    rows = []
    for workers in args.workers:
        row = one(args.config, args.train, args.dev, workers, args.rounds)
        rows.append(row)
        slowest = [max(s) for s in row["shard_seconds"]]
        print(f"workers {workers}: train {row['train_seconds']:.1f} s for {args.rounds} rounds "
              f"({row['train_seconds'] / args.rounds:.2f} s a round); slowest shard per round "
              + " ".join(f"{s:.2f}" for s in slowest)
              + f"; driver CPU {statistics.mean(row['driver_cpu_seconds']):.2f} s a round; "
              f"final score {row['scores'][-1]:.4f}", flush=True)
        print("    the workers' rounds (first shard to first shard): "
              + " ".join(f"{x:.2f}" for x in row["worker_round_seconds"])
              + " s; the driver's rounds: " + " ".join(f"{x:.2f}" for x in row["round_seconds"])
              + " s", flush=True)
        print("    the shards' spans (first start to last end): "
              + " ".join(f"{x:.2f}" for x in row["shard_span_seconds"])
              + " s; their inputs' fetching, summed: "
              + " ".join(f"{x:.2f}" for x in row["shard_fetch_seconds"]) + " s", flush=True)
        for kind, k in sorted(row["tasks"].items(), key=lambda kv: -kv[1]["compute"]):
            print(f"    {kind:14s} {k['n']:4d} tasks, compute {k['compute']:7.2f} s, "
                  f"transfer {k['transfer']:6.2f} s", flush=True)
    base = rows[0]["train_seconds"]
    middle = [statistics.median(r["worker_round_seconds"] or [float("nan")]) for r in rows]
    for row, m in zip(rows, middle):
        print(f"speed-up of train() at {row['workers']} workers: {base / row['train_seconds']:.2f}x; "
              f"of the workers' median round: {middle[0] / m:.2f}x ({m:.2f} s)")
    if args.output:
        args.output.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
