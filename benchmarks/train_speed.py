"""Training speed of the lookahead_tagger: seconds for one epoch over a corpus.

    python benchmarks/train_speed.py TRAIN.spacy [--depths 0 1 2] [--limit N]
        [--output metrics/tagger_train_speed.json]

For each depth, in its own subprocess (own peak memory): initialise a blank
English pipeline with the tagger, then time one pass of `nlp.update` over the
training docs (batches of about 1000 words, words-only predicted docs as
spacy.Corpus.v1 gives them). Reports seconds per epoch, training tokens/s and
peak RSS. Example construction and initialisation are not timed.
"""
import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path


def worker(train: str, depth: int, limit: int) -> dict:
    import spacy
    from spacy.tokens import Doc, DocBin
    from spacy.training import Example
    from spacy.util import minibatch

    nlp = spacy.blank("en")
    nlp.add_pipe("lookahead_tagger", config={"depth": depth})
    docs = list(DocBin().from_disk(train).get_docs(nlp.vocab))
    if limit:
        docs = docs[:limit]
    examples = [Example(Doc(nlp.vocab, words=[t.text for t in d],
                            spaces=[bool(t.whitespace_) for t in d]), d) for d in docs]
    nlp.initialize(lambda: examples)
    n_tokens = sum(len(d) for d in docs)
    batches = list(minibatch(examples, size=max(1, len(examples) * 1000 // max(1, n_tokens))))
    start = time.perf_counter()
    losses = {}
    for batch in batches:
        nlp.update(batch, losses=losses)
    seconds = time.perf_counter() - start
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"depth": depth, "epoch_seconds": round(seconds, 2), "tokens": n_tokens,
            "train_tokens_per_second": round(n_tokens / seconds),
            "mistakes": losses["lookahead_tagger"], "peak_rss_mb": round(rss, 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("train")
    ap.add_argument("--depths", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--output", type=Path, default=Path("metrics/tagger_train_speed.json"))
    ap.add_argument("--worker", type=int, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker is not None:
        print(json.dumps(worker(args.train, args.worker, args.limit)))
        return
    results = []
    for depth in args.depths:
        out = subprocess.run([sys.executable, __file__, args.train, "--limit", str(args.limit),
                              "--worker", str(depth)], capture_output=True, text=True)
        if out.returncode != 0:
            print(f"train_speed.py: depth {depth} failed:\n{out.stderr}", file=sys.stderr)
            continue
        results.append(json.loads(out.stdout.strip().splitlines()[-1]))
        r = results[-1]
        print(f"depth {depth}: one epoch {r['epoch_seconds']} s, "
              f"{r['train_tokens_per_second']:,} tokens/s, {r['mistakes']:.0f} mistakes, "
              f"peak RSS {r['peak_rss_mb']} MB", flush=True)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
