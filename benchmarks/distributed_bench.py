"""Scale-out on Dask: annotation speed and training by parameter mixing,
through spacy_lookahead.distributed's `annotate` and `train`.

    python -m benchmarks.distributed_bench annotate NAME=MODEL=DATA.spacy [...]
        [--workers 1 2] [--threads 2] [--repeat 1] [--pairs 1] [--shard-size 0] [--output FILE]
    python -m benchmarks.distributed_bench train NAME=CONFIG=TASK:TEST [...] [NAME:--section.key=value ...]
        [--shards 2 4 8] [--oneshot 2 8] [--rounds R] [--timing-repeats N] [--output FILE]

annotate: DATA's texts (`--repeat` copies) as JSONL, through the whole
command (`python -m spacy_lookahead.distributed annotate`, in a process of
its own) on 1 and 2 workers of one thread (and one worker of `--threads`),
`--pairs` times alternately: the command's wall time, and the phases it
reports (reading; fixed costs: the cluster's start and stop, shipping and
loading the model on every worker; the annotate phase). train: `spacy train`, then iterative parameter
mixing on each `--shards` count (2 workers; 1 shard on 1 worker) and
one-shot mixing on each `--oneshot` count, R rounds (default: the config's
max_epochs) evaluated on dev, model-best scored once on TEST (tag accuracy
or chunk F1, benchmarks/gold.py). Times: `rounds` (the part parallelism
divides), `setup` (the rest of the call: reading, initialising, cutting the
shards, saving the models), `whole` (IPM: from starting the LocalCluster)
and `shards` (the slowest shard of each round: the critical path). Each
setting in a process of its own: the client's and the largest worker's peak memory.
The record (--output): {"date", "machine" (harness.stamp), "rows"}."""
import argparse
import json
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List

from benchmarks import gold as G
from benchmarks.harness import isolated, peak_rss_mb, stamp


def annotate_input(data: str, repeat: int, folder: Path) -> Path:
    """DATA's texts, `repeat` copies, as the JSONL annotate reads; made
    once per data file and count (corpus/ewt/test.spacy and
    corpus/jnlpba/test.spacy share a stem: the name carries the whole
    path's digest, or the second run would annotate the first's texts)."""
    import hashlib

    import spacy
    import srsly
    from spacy.tokens import DocBin

    which = hashlib.sha1(str(Path(data).resolve()).encode("utf8")).hexdigest()[:12]
    path = folder / f"input-{Path(data).stem}-{which}-x{repeat}.jsonl"
    if not path.exists():
        texts = [d.text for d in DocBin().from_disk(data).get_docs(spacy.blank("en").vocab)] * repeat
        srsly.write_jsonl(path, ({"text": t, "i": i} for i, t in enumerate(texts)))
    return path


def one_annotate(spec: Dict[str, Any]) -> Dict[str, Any]:
    """The whole command, `python -m spacy_lookahead.distributed annotate`,
    in a process of its own (imports, reading, the LocalCluster's start and
    stop, shipping and loading the model all counted), and the phases it
    reports in manifest.json's `timings`."""
    import shutil
    import subprocess

    out = Path(tempfile.mkdtemp(prefix="dist-annotate-"))
    cmd = [sys.executable, "-m", "spacy_lookahead.distributed", "annotate", spec["model"],
           spec["input"], str(out), "--workers", str(spec["workers"]), "--n-threads",
           str(spec["threads"]), "--batch-size", str(spec["batch_size"])]
    if spec["shard_size"]:
        cmd += ["--shard-size", str(spec["shard_size"])]
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    manifest = json.loads((out / "manifest.json").read_text())
    shutil.rmtree(out)
    t = manifest["timings"]
    tokens = sum(s["tokens"] for s in manifest["shards"].values())
    return {**spec, "docs_out": sum(s["docs"] for s in manifest["shards"].values()),
            "shards": len(manifest["shards"]), "shard_size_used": manifest["shard_size"],
            "tokens": tokens, "command_seconds": wall, "timings": t,
            # fixed: what does not grow with the input (the rest of the command
            # is Python's start and imports)
            "fixed_seconds": t["cluster"] + t["model"] + t["close"],
            "tokens_per_s": tokens / wall, "annotate_tokens_per_s": tokens / t["annotate"],
            "peak_rss_mb_children": peak_rss_mb(resource.RUSAGE_CHILDREN)}


def annotate_table(rows: List[Dict[str, Any]]) -> None:
    """Medians per (name, workers, threads) and the speed-ups over one
    worker: whole command, annotate phase; S = the whole command's speed-up
    at 2 workers, s = 2/S - 1 its serial fraction, 1/s Amdahl's ceiling."""
    groups: Dict[tuple, List[Dict[str, Any]]] = {}
    for row in rows:
        if "error" not in row:
            groups.setdefault((row["name"], row["workers"], row["threads"]), []).append(row)

    def med(key, group):
        return statistics.median(key(r) for r in group)

    for (name, workers, threads), group in groups.items():
        base = groups.get((name, 1, 1))
        whole, phase = med(lambda r: r["command_seconds"], group), med(lambda r: r["timings"]["annotate"], group)
        line = (f"{name:10s} workers {workers} threads {threads} ({len(group)} runs, {group[0]['tokens']:,} tokens, "
                f"{group[0]['shards']} shards): command {whole:.1f} s, annotate phase {phase:.1f} s, fixed "
                f"{med(lambda r: r['fixed_seconds'], group):.1f} s (cluster "
                f"{med(lambda r: r['timings']['cluster'], group):.1f}, model {med(lambda r: r['timings']['model'], group):.1f}, "
                f"close {med(lambda r: r['timings']['close'], group):.1f}), read {med(lambda r: r['timings']['read'], group):.1f} s")
        if all("shards_busy" in r["timings"] for r in group):
            # the workers' share of the phase spent in shards, and their speed meanwhile
            busy = med(lambda r: r["timings"]["shards_busy"]
                       / (r["timings"].get("workers", workers) * r["timings"]["annotate"]), group)
            speed = med(lambda r: r["tokens"] / r["timings"]["shards_busy"], group)
            line += (f"; workers busy {100 * busy:.0f}% of the phase, "
                     f"{speed:,.0f} tokens/s each while busy")
        if base and base is not group:
            S = med(lambda r: r["command_seconds"], base) / whole
            P = med(lambda r: r["timings"]["annotate"], base) / phase
            line += f"; x1 worker: command {S:.2f}, annotate phase {P:.2f}"
            if workers == 2 and threads == 1:
                for what, x in (("command", S), ("phase", P)):
                    s = max(2 / x - 1, 1e-9)
                    line += f"; {what}: s = {s:.3f}, ceiling {1 / s:.0f}x"
        print(line, flush=True)


def test_score(model: Path, test: str) -> float:
    """The model's score on the test set, once: tag accuracy (all tokens) or
    chunk F1, as benchmarks/evaluate.py computes it."""
    import spacy

    task, path = test.split(":", 1)
    nlp = spacy.load(model)
    gold = G.read_gold(path, vocab=nlp.vocab, task=task)
    docs = list(nlp.pipe(G.make_doc(nlp.vocab, G.inputs_of(d, task)) for d in gold))
    return G.check(docs, gold, task)["tag_acc_check"] if task == "tag" else G.score(docs, gold, task)["f"]


def one_train(spec: Dict[str, Any]) -> Dict[str, Any]:
    from spacy_lookahead.distributed.cluster import dask_client
    from spacy_lookahead.distributed.train import train

    out = Path(tempfile.mkdtemp(prefix="ipm-bench-"))
    if spec["mixing"] == "spacy train":
        return one_spacy_train(spec, out)
    began = time.perf_counter()
    with dask_client(None, spec["workers"]) as client:
        start = time.perf_counter()  # the cluster is up
        history = train(Path(spec["config"]), out, overrides=spec["overrides"], shards=spec["shards"],
                        mixing=spec["mixing"], rounds=spec["rounds"], client=client, stdout=sys.stderr)
        seconds = time.perf_counter() - start
        whole = time.perf_counter() - began  # (closing the cluster not included)
    rounds = sum(h["seconds"] for h in history)
    return {**spec, "score": history[-1]["score"], "best_score": max(h["score"] for h in history),
            "scores_per_round": [h["score"] for h in history], "test_score": test_score(out / "model-best", spec["test"]),
            "setup_seconds": seconds - rounds, "rounds_seconds": rounds,
            "train_seconds": sum(h["train_seconds"] for h in history),
            "shard_seconds": sum(max(h["shard_seconds"]) for h in history),  # the slowest shard of each round
            "seconds": seconds, "whole_seconds": whole, "cluster_seconds": start - began,
            "peak_rss_mb_client": peak_rss_mb(), "peak_rss_mb_worker": peak_rss_mb(resource.RUSAGE_CHILDREN)}


def one_spacy_train(spec: Dict[str, Any], out: Path) -> Dict[str, Any]:
    """`spacy train` itself, R epochs, dev-evaluated about once an epoch (as
    IPM after each round; spacy train's evaluations come one batch into the
    next epoch): the serial reference for time and accuracy."""
    import io

    import srsly
    from spacy.schemas import ConfigSchemaTraining
    from spacy.training.initialize import init_nlp
    from spacy.training.loop import train as spacy_train
    from spacy.util import load_config, registry, resolve_dot_names

    start = time.perf_counter()
    nlp = init_nlp(load_config(Path(spec["config"]), overrides=spec["overrides"], interpolate=False))
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
    performance = srsly.read_json(out / "model-best" / "meta.json").get("performance", {})
    best = sum(w * (performance.get(k) or 0.0) for k, w in T["score_weights"].items() if w)  # spacy train's score
    return {**spec, "eval_frequency": steps, "best_score": best,
            "test_score": test_score(out / "model-best", spec["test"]), "setup_seconds": setup,
            "rounds_seconds": rounds, "seconds": setup + rounds, "whole_seconds": setup + rounds,
            "peak_rss_mb_client": peak_rss_mb()}


def run_setting(fn, spec: Dict[str, Any]) -> Dict[str, Any]:
    try:
        return isolated(fn, spec)
    except RuntimeError as err:
        return {**spec, "error": str(err)}


def repeat_timing(rows: List[Dict[str, Any]], repeats: int) -> None:
    """Run the serial reference and IPM on 2 shards / 2 workers (the rows
    of the time goal, of `rows`' last task) `repeats` times in all,
    alternately; each row's rounds and whole seconds become the medians of
    its runs, and the IPM row gets the median of the pairs' ratios (`ratio`,
    `whole_ratio`). Training is deterministic: a repeat's score must not move."""
    if repeats <= 1:
        return
    name = rows[-1]["name"]
    serial = next((r for r in rows if r["name"] == name and r["mixing"] == "spacy train"), None)
    ipm = next((r for r in rows if r["name"] == name and r["mixing"] == "iterative"
                and r["shards"] == 2 and r["workers"] == 2), None)
    if serial is None or ipm is None or "error" in serial or "error" in ipm:
        return
    keys = ("name", "config", "test", "overrides", "shards", "workers", "mixing", "rounds")
    runs = {id(row): {k: [row[k]] for k in ("rounds_seconds", "whole_seconds")} for row in (serial, ipm)}
    for _ in range(repeats - 1):
        for row in (serial, ipm):
            again = run_setting(one_train, {k: row[k] for k in keys})
            if "error" in again:
                raise RuntimeError(f"timing repeat of {row['mixing']}: {again['error']}")
            if again["test_score"] != row["test_score"]:
                raise RuntimeError(f"{row['mixing']}: a repeat scored {again['test_score']} against "
                                   f"{row['test_score']}: training is not deterministic")
            for k, values in runs[id(row)].items():
                values.append(again[k])
    for row in (serial, ipm):
        for k, values in runs[id(row)].items():
            row[f"{k}_runs"], row[k] = values, statistics.median(values)
    for k, ratio in (("rounds_seconds", "ratio"), ("whole_seconds", "whole_ratio")):
        ipm[f"{ratio}_runs"] = [b / a for a, b in zip(serial[f"{k}_runs"], ipm[f"{k}_runs"])]
        ipm[ratio] = statistics.median(ipm[f"{ratio}_runs"])
    print(f"{name:6s} rounds, spacy train: " + ", ".join(f"{v:.0f}" for v in serial["rounds_seconds_runs"])
          + " s; IPM 2 shards 2 workers: " + ", ".join(f"{v:.0f}" for v in ipm["rounds_seconds_runs"])
          + f" s; median ratio {ipm['ratio']:.2f}; whole command, spacy train: "
          + ", ".join(f"{v:.0f}" for v in serial["whole_seconds_runs"]) + " s; IPM: "
          + ", ".join(f"{v:.0f}" for v in ipm["whole_seconds_runs"]) + f" s; median ratio {ipm['whole_ratio']:.2f}",
          flush=True)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    an = sub.add_parser("annotate")
    an.add_argument("runs", nargs="+", help="NAME=MODEL=DATA.spacy")
    an.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    an.add_argument("--threads", type=int, default=0, help="also one worker of T threads (0: no)")
    an.add_argument("--repeat", type=int, default=1)
    an.add_argument("--shard-size", type=int, default=0,
                    help="0: annotate's default (from the input and the workers)")
    an.add_argument("--pairs", type=int, default=1,
                    help="run the settings this many times, alternately (medians reported)")
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
                    help="run spacy train and IPM on 2 shards / 2 workers this many times, alternately: "
                         "the machine is shared, and one pair's ratio is noisy")
    tr.add_argument("--output", type=Path, default=Path("metrics/distributed_train.json"))
    args = ap.parse_args(argv)
    os.environ["OMP_NUM_THREADS"] = "1"
    rows = []
    if args.command == "annotate":
        folder = Path(tempfile.mkdtemp(prefix="dist-annotate-input-"))
        for run in args.runs:
            name, model, data = run.split("=")
            spec = {"name": name, "model": model, "data": data, "repeat": args.repeat,
                    "input": str(annotate_input(data, args.repeat, folder)),
                    "shard_size": args.shard_size, "batch_size": args.batch_size}
            settings = [(w, 1) for w in args.workers] + ([(1, args.threads)] if args.threads else [])
            for _ in range(args.pairs):  # alternately: the machine is shared
                for workers, threads in settings:
                    row = run_setting(one_annotate, {**spec, "workers": workers, "threads": threads})
                    rows.append(row)
                    print(f"{name:10s} workers {workers} threads {threads}: " + (row.get("error") or (
                        f"command {row['command_seconds']:.1f} s, annotate phase {row['timings']['annotate']:.1f} s "
                        f"({row['annotate_tokens_per_s']:,.0f} tokens/s), fixed {row['fixed_seconds']:.1f} s, "
                        f"{row['shards']} shards, docs out {row['docs_out']}")), flush=True)
        annotate_table(rows)
    else:
        configs, overrides = {}, {}
        for run in args.runs:
            if ":--" in run:
                name, setting = run.split(":--", 1)
                key, value = setting.split("=", 1)
                try:
                    value = json.loads(value)
                except ValueError:
                    pass
                overrides.setdefault(name, {})[key] = value
            else:
                name, config, test = run.split("=", 2)
                configs[name] = (config, test)
        for name, (config, test) in configs.items():
            for shards, workers, mixing in ([(1, 1, "spacy train")] + [(s, 1 if s == 1 else 2, "iterative")
                                                                        for s in args.shards]
                                            + [(s, 2, "oneshot") for s in args.oneshot]):
                row = run_setting(one_train, {"name": name, "config": config, "test": test,
                                              "overrides": overrides.get(name, {}), "shards": shards,
                                              "workers": workers, "mixing": mixing, "rounds": args.rounds})
                rows.append(row)
                print(f"{name:6s} {mixing:11s} shards {shards} workers {workers}: " + (row.get("error") or (
                    f"test {row['test_score']:.4f}"
                    + (f", dev {row['score']:.4f} (best {row['best_score']:.4f})" if "score" in row else "")
                    + f"; setup {row['setup_seconds']:.0f} s, rounds {row['rounds_seconds']:.0f} s"
                    + (f" (slowest shards' epochs {row['shard_seconds']:.0f} s)" if "shard_seconds" in row else "")
                    + f", peak RSS client {row['peak_rss_mb_client']:.0f} MB")), flush=True)
            repeat_timing(rows, args.timing_repeats)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps({**stamp(), "rows": rows}, indent=2))


if __name__ == "__main__":
    main()
