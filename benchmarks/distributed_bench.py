"""Scale-out on Dask (spacy_lookahead.distributed): annotation speed and
training by parameter mixing.

    python benchmarks/distributed_bench.py annotate NAME=MODEL=DATA.spacy [...]
        [--workers 1 2] [--threads 2] [--repeat 1] [--shard-size 500]
        [--output metrics/distributed_annotate.json]
    python benchmarks/distributed_bench.py train NAME=CONFIG=TASK:TEST [...]
        [--shards 2 4 8] [--oneshot 2 8] [--rounds R] [--output metrics/distributed_train.json]
        [NAME:--section.key=value ...]   (spaCy-style overrides of NAME's config)

annotate: the texts of DATA (doc.text: raw text, the pipeline's tokenizer
included; `--repeat` copies) as a JSONL file, annotated by MODEL with 1 and
2 worker processes (one thread each) and, with `--threads T`, one worker of
T threads (the components' n_threads). The workers load the pipeline before
the clock starts; tokens/s is output tokens over the wall time of the
annotate call (reading, partitioning, shipping, writing the shards
included). Docs in = docs out is checked.

train: the serial reference, `spacy train` (its loop, one process), then
iterative parameter mixing with each `--shards` count on 2 workers (1
shard: on 1 worker, the same training as spacy train:
tests/test_distributed.py) and one-shot mixing with each `--oneshot` count (8 shards on 2
cores simulate 8 machines: the accuracy is what 8 machines would give, the
time is not). Every setting trains R rounds (epochs; default: the config's
max_epochs), evaluates on the config's dev set after each round (model
selection on dev only) and scores its model-best once on TEST (TASK tag:
accuracy over all tokens; chunk: span F1, spanbench.py, as
benchmarks/evaluate.py). Times: `setup` (reading the config and corpus,
initialising, cutting the shards: the same work as spacy train's
initialisation), `rounds` (the R rounds with their dev evaluations: the
part parallelism divides; for IPM from shipping the data to the cluster on),
`whole` (the command's wall time: for IPM, starting the LocalCluster, setup
and rounds; for spacy train, setup and rounds) and `shards` (the slowest
shard's epoch in each round, summed: the critical path in the workers).

Each setting runs in a fresh subprocess of its own, so its peak memory is its
own: the client's ru_maxrss and the largest worker's (RUSAGE_CHILDREN after
the cluster closed).
"""
import argparse
import json
import os
import resource
import statistics
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

    from spacy_lookahead.distributed.annotate import annotate, model_files, worker_pipeline
    from spacy_lookahead.distributed.cluster import dask_client
    from spacy_lookahead.distributed.manifest import model_checksum

    tmp = Path(tempfile.mkdtemp(prefix="dask-bench-"))
    docs = DocBin().from_disk(spec["data"]).get_docs(spacy.blank("en").vocab)
    texts = [d.text for d in docs] * spec["repeat"]
    srsly.write_jsonl(tmp / "input.jsonl", ({"text": t, "i": i} for i, t in enumerate(texts)))
    checksum = model_checksum(Path(spec["model"]))
    model = str(Path(spec["model"]).resolve())
    with dask_client(None, spec["workers"]) as client:
        client.run(worker_pipeline, model_files(Path(model)), checksum, spec["threads"])  # load before the clock
        start = time.perf_counter()
        manifest = annotate(Path(model), tmp / "input.jsonl", tmp / "out", client=client,
                            n_threads=spec["threads"], shard_size=spec["shard_size"] or None,
                            batch_size=spec["batch_size"], stdout=open(os.devnull, "w"))
        seconds = time.perf_counter() - start
    tokens = sum(s["tokens"] for s in manifest["shards"].values())
    docs_out = sum(s["docs"] for s in manifest["shards"].values())
    return {**spec, "docs_in": len(texts), "docs_out": docs_out, "tokens": tokens,
            "seconds": seconds, "tokens_per_s": tokens / seconds,
            "peak_rss_mb_client": peak_rss_mb(), "peak_rss_mb_worker": peak_rss_mb(resource.RUSAGE_CHILDREN)}


def test_score(model: Path, test: str) -> float:
    """The model's score on the test set, once: tag accuracy (all tokens) or
    chunk F1, as benchmarks/evaluate.py computes it."""
    import spacy

    sys.path.insert(0, str(Path(__file__).parent))
    import spanbench

    task, path = test.split(":", 1)
    nlp = spacy.load(model)
    gold = spanbench.read_gold(path, vocab=nlp.vocab, task=task)
    docs = list(nlp.pipe(spanbench.make_doc(nlp.vocab, spanbench.inputs_of(d, task)) for d in gold))
    if task == "tag":
        return spanbench.check(docs, gold, task)["tag_acc_check"]
    return spanbench.score(docs, gold, task)["f"]


def one_train(spec: Dict[str, Any]) -> Dict[str, Any]:
    from spacy_lookahead.distributed.cluster import dask_client
    from spacy_lookahead.distributed.train import Job

    out = Path(tempfile.mkdtemp(prefix="ipm-bench-"))
    if spec["mixing"] == "spacy train":
        return one_spacy_train(spec, out)
    began = time.perf_counter()
    with dask_client(None, spec["workers"]) as client:
        start = time.perf_counter()  # the cluster is up: setup is the job's own
        job = Job.create(Path(spec["config"]), spec["overrides"], spec["shards"], spec["rounds"],
                          sys.stderr)
        setup = time.perf_counter() - start
        history = job.run(client, out, spec["mixing"], "uniform", None, sys.stderr)
        whole = time.perf_counter() - began  # (closing the cluster not included)
    seconds = time.perf_counter() - start
    return {**spec, "score": history[-1]["score"], "best_score": max(h["score"] for h in history),
            "scores_per_round": [h["score"] for h in history],
            "test_score": test_score(out / "model-best", spec["test"]),
            "setup_seconds": setup, "rounds_seconds": sum(h["seconds"] for h in history),
            "train_seconds": sum(h["train_seconds"] for h in history),
            # the rounds' critical path in the workers (the slowest shard of each round)
            "shard_seconds": sum(max(h["shard_seconds"]) for h in history),
            "seconds": seconds, "whole_seconds": whole, "cluster_seconds": start - began,
            "peak_rss_mb_client": peak_rss_mb(),
            "peak_rss_mb_worker": peak_rss_mb(resource.RUSAGE_CHILDREN)}


def one_spacy_train(spec: Dict[str, Any], out: Path) -> Dict[str, Any]:
    """`spacy train` itself, R epochs, dev-evaluated about once an epoch (as
    IPM after each round; spacy train's evaluations come one batch into the
    next epoch): the serial reference for time and accuracy."""
    import io

    from spacy.schemas import ConfigSchemaTraining
    from spacy.training.initialize import init_nlp
    from spacy.training.loop import train as spacy_train
    from spacy.util import load_config, registry, resolve_dot_names

    start = time.perf_counter()
    config = load_config(Path(spec["config"]), overrides=spec["overrides"], interpolate=False)
    nlp = init_nlp(config)
    setup = time.perf_counter() - start
    T = registry.resolve(nlp.config.interpolate()["training"], schema=ConfigSchemaTraining)
    corpus, = resolve_dot_names(nlp.config.interpolate(), [T["train_corpus"]])
    steps = sum(1 for _ in T["batcher"](list(corpus(nlp))))  # batches in one epoch (unshuffled)
    # spacy train evaluates after the update of step k * steps, the first batch
    # of epoch k + 1: so one epoch more, stopped at the last evaluation
    epochs = spec["rounds"] or T["max_epochs"]
    nlp.config["training"].update({"max_epochs": epochs + 1, "max_steps": epochs * steps,
                                   "eval_frequency": steps, "patience": 0})
    began = time.perf_counter()
    spacy_train(nlp, out, stdout=io.StringIO(), stderr=io.StringIO())
    rounds = time.perf_counter() - began
    import srsly
    weights = {k: v for k, v in T["score_weights"].items() if v}
    performance = srsly.read_json(out / "model-best" / "meta.json").get("performance", {})
    best = sum(w * (performance.get(k) or 0.0) for k, w in weights.items())  # spacy train's score
    return {**spec, "eval_frequency": steps, "best_score": best,
            "test_score": test_score(out / "model-best", spec["test"]),
            "setup_seconds": setup, "rounds_seconds": rounds, "seconds": setup + rounds,
            "whole_seconds": setup + rounds,
            "peak_rss_mb_client": peak_rss_mb()}


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
    an.add_argument("--shard-size", type=int, default=500, help="0: annotate's default (from the input and the workers)")
    an.add_argument("--batch-size", type=int, default=256)
    an.add_argument("--output", type=Path, default=Path("metrics/distributed_annotate.json"))
    tr = sub.add_parser("train")
    tr.add_argument("runs", nargs="+", help="NAME=CONFIG=TASK:TEST (TASK: tag or chunk); "
                    "overrides: NAME:--section.key=value")
    tr.add_argument("--shards", type=int, nargs="+", default=[1, 2, 4, 8],
                    help="IPM shard counts (1: on 1 worker, the others on 2)")
    tr.add_argument("--oneshot", type=int, nargs="*", default=[2, 8])
    tr.add_argument("--rounds", type=int, default=None, help="default: the config's max_epochs")
    tr.add_argument("--timing-repeats", type=int, default=1,
                    help="run spacy train and IPM on 2 shards / 2 workers this many times, "
                         "alternately: the machine is shared, and one pair's ratio is noisy")
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
                name, config, test = run.split("=", 2)
                configs[name] = (config, test)
        for name, (config, test) in configs.items():
            settings = [(1, 1, "spacy train")] + [(s, 1 if s == 1 else 2, "iterative") for s in args.shards] \
                + [(s, 2, "oneshot") for s in args.oneshot]
            for shards, workers, mixing in settings:
                spec = {"name": name, "config": config, "test": test,
                        "overrides": overrides.get(name, {}), "shards": shards, "workers": workers,
                        "mixing": mixing, "rounds": args.rounds}
                row = run_setting("train", spec)
                rows.append(row)
                print(f"{name:6s} {mixing:11s} shards {shards} workers {workers}: "
                      + (row.get("error") or f"test {row['test_score']:.4f}"
                         + (f", dev {row['score']:.4f} (best {row['best_score']:.4f})" if "score" in row else "")
                         + f"; setup {row['setup_seconds']:.0f} s, rounds {row['rounds_seconds']:.0f} s"
                         + (f" (slowest shards' epochs {row['shard_seconds']:.0f} s)" if "shard_seconds" in row else "")
                         + f", peak RSS client {row['peak_rss_mb_client']:.0f} MB"), flush=True)
            repeat_timing(rows, args.timing_repeats)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(rows, indent=2))


def repeat_timing(rows: List[Dict[str, Any]], repeats: int) -> None:
    """Run the serial reference and IPM on 2 shards / 2 workers (the rows
    of the time goal, at the end of `rows`' last task) `repeats` times in
    all, alternately; each row's rounds_seconds becomes the median of its
    runs, and the IPM row gets the median of the pairs' ratios (of the
    rounds' times, and of the whole command's: `whole_ratio`). The scores
    are the same in every run (training is deterministic: checked)."""
    if repeats <= 1:
        return
    name = rows[-1]["name"]
    serial = next((r for r in rows if r["name"] == name and r["mixing"] == "spacy train"), None)
    ipm = next((r for r in rows if r["name"] == name and r["mixing"] == "iterative"
                and r["shards"] == 2 and r["workers"] == 2), None)
    if serial is None or ipm is None or "error" in serial or "error" in ipm:
        return
    keys = ("name", "config", "test", "overrides", "shards", "workers", "mixing", "rounds")
    for row in (serial, ipm):
        row["rounds_seconds_runs"] = [row["rounds_seconds"]]
        row["whole_seconds_runs"] = [row["whole_seconds"]]
    for _ in range(repeats - 1):
        for row in (serial, ipm):
            again = run_setting("train", {k: row[k] for k in keys})
            if "error" in again:
                raise RuntimeError(f"timing repeat of {row['mixing']}: {again['error']}")
            if again["test_score"] != row["test_score"]:
                raise RuntimeError(f"{row['mixing']}: a repeat scored {again['test_score']} "
                                   f"against {row['test_score']}: training is not deterministic")
            row["rounds_seconds_runs"].append(again["rounds_seconds"])
            row["whole_seconds_runs"].append(again["whole_seconds"])
    ratios = [b / a for a, b in zip(serial["rounds_seconds_runs"], ipm["rounds_seconds_runs"])]
    for row in (serial, ipm):
        row["rounds_seconds"] = statistics.median(row["rounds_seconds_runs"])
        row["whole_seconds"] = statistics.median(row["whole_seconds_runs"])
    ipm["ratio_runs"] = ratios
    ipm["ratio"] = statistics.median(ratios)
    ipm["whole_ratio_runs"] = [b / a for a, b in zip(serial["whole_seconds_runs"],
                                                     ipm["whole_seconds_runs"])]
    ipm["whole_ratio"] = statistics.median(ipm["whole_ratio_runs"])
    print(f"{name:6s} rounds, spacy train: " + ", ".join(f"{v:.0f}" for v in serial["rounds_seconds_runs"])
          + " s; IPM 2 shards 2 workers: " + ", ".join(f"{v:.0f}" for v in ipm["rounds_seconds_runs"])
          + f" s; median ratio {ipm['ratio']:.2f}; whole command, spacy train: "
          + ", ".join(f"{v:.0f}" for v in serial["whole_seconds_runs"]) + " s; IPM: "
          + ", ".join(f"{v:.0f}" for v in ipm["whole_seconds_runs"])
          + f" s; median ratio {ipm['whole_ratio']:.2f}", flush=True)


def _is_json(value: str) -> bool:
    try:
        json.loads(value)
        return True
    except ValueError:
        return False


if __name__ == "__main__":
    main(sys.argv[1:])
