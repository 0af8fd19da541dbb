"""Parse a test set with a trained pipeline (any dependency parser: ours or
spaCy's `parser`) and write UAS/LAS with and without punctuation to JSON.

    python benchmarks/parser_eval.py MODEL_DIR TEST.spacy OUTPUT.json [--gold-tags]
        [--tagger TAGGER_DIR] [--code FILE]

Input docs are the gold words (gold tokenisation); with --gold-tags also the
gold POS tags (our parser's input); with --tagger a trained tagger pipeline
predicts the tags first (the parser's "predicted POS" setting).
"""
import argparse
import importlib.util
import json
import time
from pathlib import Path

import spacy

from parser_bench import attachment_scores, read, words_only


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model", type=Path)
    ap.add_argument("test", type=Path)
    ap.add_argument("output", type=Path)
    ap.add_argument("--gold-tags", action="store_true")
    ap.add_argument("--tagger", type=Path, default=None)
    ap.add_argument("--code", type=Path, default=None)
    args = ap.parse_args(argv)
    if args.code:
        spec = importlib.util.spec_from_file_location("code", args.code)
        spec.loader.exec_module(importlib.util.module_from_spec(spec))
    nlp = spacy.load(args.model)
    gold = read(nlp.vocab, args.test)
    docs = [words_only(nlp.vocab, d, tags=args.gold_tags) for d in gold]
    if args.tagger:
        docs = list(spacy.load(args.tagger, vocab=nlp.vocab).pipe(docs, batch_size=256))
    t0 = time.process_time()
    predicted = list(nlp.pipe(docs, batch_size=256))
    scores = attachment_scores(predicted, gold)
    scores.update({"model": str(args.model), "test": str(args.test), "gold_tags": args.gold_tags,
                   "tagger": str(args.tagger) if args.tagger else None,
                   "parse_cpu_seconds": round(time.process_time() - t0, 2)})
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(scores, indent=2))
    print(json.dumps(scores))


if __name__ == "__main__":
    main()
