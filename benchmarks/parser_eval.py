"""Parse a test set with a trained pipeline (any dependency parser: ours or
spaCy's `parser`; a tagger in front for words-only input) and write UAS/LAS
with and without punctuation to JSON: the test score of every parser row of
benchmarks/experiments.py, computed once per trained model.

    python benchmarks/parser_eval.py MODEL_DIR TEST.spacy OUTPUT.json [--gold-tags]
        [--gold-sents] [--tagger TAGGER_DIR] [--code FILE]

Input docs are the gold words (gold tokenisation); with --gold-tags also the
gold POS tags (a stand-alone parser's input); with --gold-sents also the gold
sentence starts (for respect_sent_starts); with --tagger a trained tagger
pipeline predicts the tags first. Without --gold-tags the tags the pipeline
wrote are scored too (`tag_acc`); a SAPO parser's head probabilities
(`token._.head_prob`) are checked against "head and label right"
(`head_calibration`: benchmarks/calibration.py's bins and ECE). Punctuation: gold label `punct` (UD) or a
gold PTB punctuation tag (WSJ, as Penn2Malt evaluations), the convention of
spacy_lookahead.parser_scorer.v1's `dep_*_nopunct` keys.
"""
import argparse
import importlib.util
import json
import time
from pathlib import Path

import spacy
from spacy.tokens import Doc, DocBin, Token

from calibration import calibration
from spanbench import attachment_scores


def read(vocab, path, limit=0):
    docs = list(DocBin().from_disk(path).get_docs(vocab))
    return docs[:limit] if limit else docs


def words_only(vocab, doc, tags, sents=False):
    """The gold doc's words (and tags; and sentence starts) without the parse."""
    return Doc(vocab, words=[t.text for t in doc], spaces=[bool(t.whitespace_) for t in doc],
               tags=[t.tag_ for t in doc] if tags else None,
               sent_starts=[bool(t.is_sent_start) for t in doc] if sents else None)


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
        spec = importlib.util.spec_from_file_location("code", args.code)
        spec.loader.exec_module(importlib.util.module_from_spec(spec))
    nlp = spacy.load(args.model)
    gold = read(nlp.vocab, args.test)
    docs = [words_only(nlp.vocab, d, tags=args.gold_tags, sents=args.gold_sents) for d in gold]
    if args.tagger:
        docs = list(spacy.load(args.tagger, vocab=nlp.vocab).pipe(docs, batch_size=256))
    t0 = time.process_time()
    predicted = list(nlp.pipe(docs, batch_size=256))
    scores = attachment_scores(predicted, gold)
    sapo = any(getattr(pipe, "cfg", {}).get("learner") == "sapo" for _, pipe in nlp.pipeline)
    if sapo and Token.has_extension("head_prob"):  # SAPO's head probabilities against the gold
        scores["head_calibration"] = calibration(
            [(t._.head_prob, t.head.i == g.head.i and t.dep_.lower() == g.dep_.lower())
             for pd, gd in zip(predicted, gold) for t, g in zip(pd, gd)])
    if not args.gold_tags:  # the pipeline's (or --tagger's) own tags
        pairs = [(p.tag_, g.tag_) for pd, gd in zip(predicted, gold) for p, g in zip(pd, gd)]
        scores["tag_acc"] = sum(a == b for a, b in pairs) / max(1, len(pairs))
    scores.update({"model": str(args.model), "test": str(args.test), "gold_tags": args.gold_tags,
                   "gold_sents": args.gold_sents,
                   "tagger": str(args.tagger) if args.tagger else None,
                   "parse_cpu_seconds": round(time.process_time() - t0, 2)})
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(scores, indent=2))
    print(json.dumps(scores))


if __name__ == "__main__":
    main()
