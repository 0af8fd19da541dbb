"""UAS/LAS, with and without punctuation, of a trained parser (ours or
spaCy's; a tagger in front for words-only input) on a test set, to JSON:
the test score of every parser row of benchmarks/experiments.py, once per model.

    python -m benchmarks.parser_eval MODEL_DIR TEST.spacy OUTPUT.json [--gold-tags]
        [--gold-sents] [--tagger TAGGER_DIR] [--code FILE]

The parser gets the gold words; with --gold-tags the gold POS tags too (a
stand-alone parser's input), with --gold-sents the gold sentence starts
(respect_sent_starts), with --tagger that pipeline's tags. Without
--gold-tags the tags the pipeline wrote are scored (`tag_acc`); the
`token._.head_prob` of a SAPO parser or a calibrated beam perceptron is
checked against "head and label right" (`head_calibration`: calibration.py's
bins and ECE). Punctuation as in
benchmarks/gold.py's attachment_scores (spacy_lookahead.parser_scorer.v1's
`dep_*_nopunct` convention)."""
import argparse
import json
import time
from pathlib import Path

import spacy
from spacy.tokens import Doc, Token
from spacy.util import import_file

from benchmarks import gold as G


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model", type=Path)
    ap.add_argument("test", type=Path)
    ap.add_argument("output", type=Path)
    ap.add_argument("--gold-tags", action="store_true")
    ap.add_argument("--gold-sents", action="store_true")
    ap.add_argument("--tagger", type=Path, default=None)
    ap.add_argument("--code", type=Path, default=None)
    args = ap.parse_args(argv)
    if args.code:
        import_file("code", args.code)
    nlp = spacy.load(args.model)
    gold = G.read_gold(args.test, vocab=nlp.vocab)
    docs = [Doc(nlp.vocab, words=[t.text for t in d], spaces=[bool(t.whitespace_) for t in d],
                tags=[t.tag_ for t in d] if args.gold_tags else None,
                sent_starts=[bool(t.is_sent_start) for t in d] if args.gold_sents else None) for d in gold]
    if args.tagger:
        docs = list(spacy.load(args.tagger, vocab=nlp.vocab).pipe(docs, batch_size=256))
    t0 = time.process_time()
    predicted = list(nlp.pipe(docs, batch_size=256))
    scores = G.attachment_scores(predicted, gold)
    heads = [(t._.head_prob, t.head.i == g.head.i and t.dep_.lower() == g.dep_.lower())
             for pd, gd in zip(predicted, gold) for t, g in zip(pd, gd)] if Token.has_extension("head_prob") else []
    if heads and all(p is not None for p, _ in heads):  # SAPO's or a calibrated beam's (else None)
        scores["head_calibration"] = G.calibration(heads)
    if not args.gold_tags:  # the pipeline's (or --tagger's) own tags
        pairs = [(p.tag_, g.tag_) for pd, gd in zip(predicted, gold) for p, g in zip(pd, gd)]
        scores["tag_acc"] = sum(a == b for a, b in pairs) / max(1, len(pairs))
    scores.update({"model": str(args.model), "test": str(args.test), "gold_tags": args.gold_tags,
                   "gold_sents": args.gold_sents, "tagger": str(args.tagger) if args.tagger else None,
                   "parse_cpu_seconds": round(time.process_time() - t0, 2)})
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(scores, indent=2))
    print(json.dumps(scores))


if __name__ == "__main__":
    main()
