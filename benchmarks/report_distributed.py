"""The scale-out section of results.md: benchmarks/distributed_bench.py's
annotation speed (1 and 2 Dask workers, threads in one worker) and
training by parameter mixing (McDonald et al. 2010) against spacy train.

    python benchmarks/report_distributed.py [--metrics metrics]
"""
import argparse
import json
import shlex
import sys
from pathlib import Path
from typing import Dict, List, Optional

sys.path.insert(0, str(Path(__file__).parent))
import experiments as X  # noqa: E402

TRAIN = (("pos", "EWT POS tagging (lookahead_tagger, depth 1), tag accuracy", "distributed_train_pos.json"),
         ("pos_long", "EWT POS tagging, 32 rounds: 8 shards against spacy train's 32 epochs",
          "distributed_train_pos_long.json"),
         ("chunk", "CoNLL-2000 chunking (lookahead_chunker), chunk F1; dev = the held-out tenth "
          "of train", "distributed_train_chunk.json"),
         ("chunk_long", "CoNLL-2000 chunking, 32 rounds: 4 and 8 shards against spacy train's 32 "
          "epochs", "distributed_train_chunk_long.json"))


def _read(path: Path) -> Optional[list]:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def _pct(x: Optional[float]) -> str:
    return "-" if x is None else f"{100 * x:.2f}"


def train_rows(rows: List[Dict]) -> List[str]:
    """One line per setting: test of model-best, best dev, difference to
    spacy train on test, times (rounds: the part parallelism divides)."""
    ok = [r for r in rows if "error" not in r]
    serial = next((r for r in ok if r["mixing"] == "spacy train"), None)
    out = ["| setting | shards | workers | test (model-best) | vs spacy train | best dev | setup s "
           "| rounds s | x spacy train (rounds) | whole command s | x spacy train (whole) "
           "| slowest shards' epochs s |",
           "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        if "error" in r:
            out.append(f"| {r['mixing']} | {r['shards']} | {r['workers']} | {r['error']} "
                       "| | | | | | | | |")
            continue
        diff = "" if serial is None or r is serial else f"{100 * (r['test_score'] - serial['test_score']):+.2f}"
        ratio = "" if serial is None or r is serial else f"{r['rounds_seconds'] / serial['rounds_seconds']:.2f}"
        if "ratio" in r:  # the median of repeated pairs (distributed_bench.py --timing-repeats)
            ratio = f"{r['ratio']:.2f} (median of {len(r['ratio_runs'])}: " \
                + ", ".join(f"{x:.2f}" for x in r["ratio_runs"]) + ")"
        whole = r.get("whole_seconds")
        whole_ratio = "" if serial is None or r is serial or whole is None \
            or serial.get("whole_seconds") is None else f"{whole / serial['whole_seconds']:.2f}"
        if "whole_ratio" in r:
            whole_ratio = f"{r['whole_ratio']:.2f} (median of {len(r['whole_ratio_runs'])}: " \
                + ", ".join(f"{x:.2f}" for x in r["whole_ratio_runs"]) + ")"
        shard = f"{r['shard_seconds']:.1f}" if "shard_seconds" in r else "-"
        dev = _pct(r.get("best_score"))
        out.append(f"| {r['mixing']} | {r['shards']} | {r['workers']} | {_pct(r['test_score'])} | {diff} "
                   f"| {dev} | {r['setup_seconds']:.1f} | {r['rounds_seconds']:.1f} | {ratio} "
                   f"| {'-' if whole is None else f'{whole:.1f}'} | {whole_ratio} | {shard} |")
    return out


def annotate_rows(rows: List[Dict]) -> List[str]:
    out = ["| model | workers | threads | docs in / out | tokens/s | x 1 worker | peak RSS client MB "
           "| peak RSS worker MB |", "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    one = {r["name"]: r for r in rows if r.get("workers") == 1 and r.get("threads") == 1 and "error" not in r}
    for r in rows:
        if "error" in r:
            out.append(f"| {r['name']} | {r['workers']} | {r['threads']} | {r['error']} | | | | |")
            continue
        ref = one.get(r["name"])
        ratio = f"{r['tokens_per_s'] / ref['tokens_per_s']:.2f}" if ref else "-"
        out.append(f"| {r['name']} | {r['workers']} | {r['threads']} | {r['docs_in']:,} / "
                   f"{r['docs_out']:,} | {r['tokens_per_s']:,.0f} | {ratio} "
                   f"| {r['peak_rss_mb_client']:.0f} | {r['peak_rss_mb_worker']:.0f} |")
    return out


def section(metrics: Path) -> List[str]:
    lines: List[str] = []
    annotate = _read(metrics / "distributed_annotate.json")
    trained = [(t, _read(metrics / f)) for _, t, f in TRAIN]
    if not annotate and not any(rows for _, rows in trained):
        return lines
    lines += ["## Scale-out on Dask (spacy_lookahead.distributed)", ""]
    if annotate:
        lines += ["### annotate: raw text to DocBin shards", "",
                  "Test texts (`doc.text`, the pipeline's tokenizer included, copies as "
                  "`--repeat` says) as JSONL, annotated on a LocalCluster of worker processes of "
                  "one thread each, or one worker whose components run `n_threads` threads. "
                  "tokens/s: output tokens over the wall time of the `annotate` call (reading, "
                  "shipping, writing the shards included; the workers load the model before the "
                  "clock starts). On 2 cores the client (and the scheduler in it) shares the cores "
                  "with the 2 workers.", ""] + annotate_rows(annotate) + [""]
    first = True
    for title, rows in trained:
        if not rows:
            continue
        rounds = next((r.get("rounds") for r in rows if r.get("rounds")), None)
        lines += [f"### train: {title}", ""]
        lines += ["Every setting trains " + (f"{rounds} rounds" if rounds else "the config's "
                  "max_epochs rounds (epochs)") + ", evaluates on dev after each, and its "
                  "model-best (by dev) is scored once on test."]
        if first:
            lines[-1] += (" `spacy train` runs as many epochs and evaluates about once an epoch "
                          "(eval_frequency = the batches of one epoch). IPM: each round trains "
                          "every shard one epoch from the mixed weights (uniform mixing); "
                          "one-shot: every shard trains alone, mixed only to evaluate. setup: "
                          "reading the config and corpus, initialising, cutting the shards; "
                          "rounds: the rounds with their dev evaluations (the part workers "
                          "divide; for IPM from shipping the data to the cluster on); whole "
                          "command: IPM's wall time from starting the LocalCluster (about 1 s) "
                          "to the last round, against spacy train's setup and rounds; slowest "
                          "shards' epochs: the critical path in the workers. "
                          "4 and 8 shards on 2 workers simulate 4 and 8 machines: their accuracy "
                          "is what those would give, their time is not. (`--shards 1` adds IPM "
                          "with 1 shard on 1 worker: the same training as spacy train, "
                          "tests/test_distributed.py.) Where spacy train and IPM on 2 "
                          "shards / 2 workers ran several times, alternately (`--timing-repeats`: "
                          "the machine is shared), their rounds s and whole command s are "
                          "medians and each ratio is the median of the pairs' ratios. Rows "
                          "without a whole command s come from runs before it was timed.")
            first = False
        lines += [""] + train_rows(rows) + [""]
    steps = [s for s in X.STEPS if s.group == "distributed"]
    if steps:
        lines += ["Commands (`python benchmarks/run.py stage distributed`):", ""]
        lines += [f"* `{shlex.join(s.command)}`" for s in steps] + [""]
    return lines


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--metrics", type=Path, default=Path("metrics"))
    args = ap.parse_args(argv)
    print("\n".join(section(args.metrics)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
