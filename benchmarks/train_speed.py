"""Training speed of the lookahead_tagger: seconds for one epoch over a corpus.

    python -m benchmarks.train_speed TRAIN.spacy [--depths 0 1 2] [--limit N]
        [--output metrics/tagger_train_speed.json]

Per depth, in a process of its own (its own peak memory): a blank English
pipeline with the tagger, initialised on the training docs, then one timed
pass of `nlp.update` over them (batches of about 1000 words, words-only
predicted docs as spacy.Corpus.v1 gives them); building the examples and
initialising are not timed."""
import argparse
import json
import sys
import time
from pathlib import Path

from benchmarks.harness import isolated, peak_rss_mb


def epoch(train: str, depth: int, limit: int) -> dict:
    import spacy
    from spacy.tokens import Doc
    from spacy.training import Example
    from spacy.util import minibatch

    from benchmarks.gold import read_gold

    nlp = spacy.blank("en")
    nlp.add_pipe("lookahead_tagger", config={"search": {"@search": "spacy_lookahead.Lookahead.v1", "depth": depth}})
    docs = read_gold(train, limit=limit, vocab=nlp.vocab)
    examples = [Example(Doc(nlp.vocab, words=[t.text for t in d], spaces=[bool(t.whitespace_) for t in d]), d)
                for d in docs]
    nlp.initialize(lambda: examples)
    n_tokens = sum(len(d) for d in docs)
    batches = list(minibatch(examples, size=max(1, len(examples) * 1000 // max(1, n_tokens))))
    start, losses = time.perf_counter(), {}
    for batch in batches:
        nlp.update(batch, losses=losses)
    seconds = time.perf_counter() - start
    return {"depth": depth, "epoch_seconds": round(seconds, 2), "tokens": n_tokens,
            "train_tokens_per_second": round(n_tokens / seconds),
            "mistakes": losses["lookahead_tagger"], "peak_rss_mb": peak_rss_mb()}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("train")
    ap.add_argument("--depths", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--output", type=Path, default=Path("metrics/tagger_train_speed.json"))
    args = ap.parse_args(argv)
    results = []
    for depth in args.depths:
        try:
            r = isolated(epoch, args.train, depth, args.limit)
        except RuntimeError as err:
            print(f"train_speed.py: depth {depth} failed: {err}", file=sys.stderr)
            continue
        results.append(r)
        print(f"depth {depth}: one epoch {r['epoch_seconds']} s, {r['train_tokens_per_second']:,} tokens/s, "
              f"{r['mistakes']:.0f} mistakes, peak RSS {r['peak_rss_mb']} MB", flush=True)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
