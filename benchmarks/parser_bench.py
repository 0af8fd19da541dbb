"""Train and evaluate one arc_standard_parser setting; log the dev scores of
every epoch (the learning curves of Huang et al. 2012, Figure 6) to JSON.

    python benchmarks/parser_bench.py NAME --train T.spacy --dev D.spacy --test E.spacy
        [--search greedy|lookahead|beam] [--depth D] [--beam-width K]
        [--update max_violation] [--learner perceptron|sapo] [--n 5] [--l2 1.0]
        [--learning-rate 0.1] [--learning-rate-decay 0.8] [--epochs 10] [--patience 3] [--limit N]
        [--tagger MODEL_DIR] [--output metrics/parser_NAME.json] [--model-dir DIR]

Each epoch is one pass over the shuffled training docs (batches of 100 docs,
gold POS tags: taken from the gold docs by the component), timed in CPU
seconds (process time). After each epoch the averaged model parses dev;
the best dev epoch (by LAS without punctuation; UAS for unlabelled data) is
kept and parses test. `--tagger` tags dev/test with a trained
lookahead_tagger first (predicted POS) instead of giving the gold tags.
Scores: UAS/LAS with and without punctuation (punctuation = gold label
`punct` (UD) or gold PTB tag in `` '' , . : (WSJ, as Penn2Malt evaluations)),
plus spaCy's parser scorer (`dep_uas`/`dep_las` ignore `punct`/`p` labels).
With `--learner sapo`, the calibration of the head probabilities
(token._.head_prob against "head and label right", benchmarks/calibration.py's
bins and ECE) on dev and test.
Stops after `--patience` epochs without a better dev score.
"""
import argparse
import json
import random
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy
import spacy
from spacy.tokens import Doc, DocBin
from spacy.training import Example

import spacy_lookahead.pipes.parser  # noqa: F401 (registers the factory)
import spacy_lookahead.pipes.tagger  # noqa: F401

sys.path.insert(0, str(Path(__file__).parent))
from calibration import calibration  # noqa: E402

PUNCT_TAGS = {"``", "''", ",", ".", ":"}


def read(vocab, path, limit=0):
    docs = list(DocBin().from_disk(path).get_docs(vocab))
    return docs[:limit] if limit else docs


def words_only(vocab, doc, tags, sents=False):
    """The gold doc's words (and tags; and sentence starts, for
    respect_sent_starts) without the parse."""
    return Doc(vocab, words=[t.text for t in doc], spaces=[bool(t.whitespace_) for t in doc],
               tags=[t.tag_ for t in doc] if tags else None,
               sent_starts=[bool(t.is_sent_start) for t in doc] if sents else None)


def attachment_scores(predicted, gold):
    """UAS/LAS over all tokens and without punctuation (same tokens)."""
    n = c_u = c_l = n_np = c_u_np = c_l_np = 0
    for p, g in zip(predicted, gold):
        ph = numpy.array([t.head.i for t in p])
        gh = numpy.array([t.head.i for t in g])
        pl = numpy.array([t.dep_.lower() for t in p])
        gl = numpy.array([t.dep_.lower() for t in g])
        punct = numpy.array([t.dep_ == "punct" or t.tag_ in PUNCT_TAGS for t in g], dtype=bool)
        u = ph == gh
        lab = u & (pl == gl)
        n += len(g)
        c_u += u.sum()
        c_l += lab.sum()
        n_np += (~punct).sum()
        c_u_np += u[~punct].sum()
        c_l_np += lab[~punct].sum()
    return {"uas": c_u / n, "las": c_l / n, "uas_nopunct": c_u_np / n_np, "las_nopunct": c_l_np / n_np,
            "tokens": int(n)}


def evaluate(nlp, parser, gold, tagger=None):
    sents = parser.cfg["respect_sent_starts"]
    docs = [words_only(nlp.vocab, d, tags=tagger is None, sents=sents) for d in gold]
    if tagger is not None:
        docs = list(tagger.pipe(docs, batch_size=256))
    t0 = time.process_time()
    predicted = list(parser.pipe(docs, batch_size=256))
    seconds = time.process_time() - t0
    scores = attachment_scores(predicted, gold)
    spacy_scores = parser.scorer([Example(p, g) for p, g in zip(predicted, gold)])
    scores.update({"dep_uas": spacy_scores["dep_uas"], "dep_las": spacy_scores["dep_las"],
                   "sents_f": spacy_scores.get("sents_f"), "parse_seconds": round(seconds, 2)})
    if parser.cfg["learner"] == "sapo":
        scores["head_calibration"] = calibration(
            [(t._.head_prob, t.head.i == g.head.i and t.dep_.lower() == g.dep_.lower())
             for p, gd in zip(predicted, gold) for t, g in zip(p, gd)])
    return scores


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("name")
    ap.add_argument("--train", required=True)
    ap.add_argument("--dev", required=True)
    ap.add_argument("--test", required=True)
    ap.add_argument("--search", default="greedy", choices=("greedy", "lookahead", "beam"))
    ap.add_argument("--depth", type=int, default=1)
    ap.add_argument("--beam-width", type=int, default=8)
    ap.add_argument("--update", default="max_violation")
    ap.add_argument("--margin", type=float, default=1.0)
    ap.add_argument("--learner", default="perceptron", choices=("perceptron", "sapo"))
    ap.add_argument("--n", type=int, default=5)
    ap.add_argument("--learning-rate", type=float, default=0.1)
    ap.add_argument("--learning-rate-decay", type=float, default=0.8)
    ap.add_argument("--l2", type=float, default=1.0)
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--patience", type=int, default=3)
    ap.add_argument("--limit", type=int, default=0, help="first N training docs only")
    ap.add_argument("--dev-limit", type=int, default=0)
    ap.add_argument("--tagger", type=Path, default=None)
    ap.add_argument("--respect-sent-starts", action="store_true",
                    help="give the parser the gold sentence starts: one root per sentence, so "
                         "every derivation of a doc has the same length (as in Huang et al.)")
    ap.add_argument("--min-label-freq", type=int, default=20)
    ap.add_argument("--output", type=Path, default=None)
    ap.add_argument("--model-dir", type=Path, default=None)
    args = ap.parse_args(argv)
    config = {"search": args.search, "depth": args.depth, "beam_width": args.beam_width,
              "update": args.update, "margin": args.margin, "min_label_freq": args.min_label_freq,
              "respect_sent_starts": args.respect_sent_starts, "learner": args.learner,
              "n": args.n, "learning_rate": args.learning_rate,
              "learning_rate_decay": args.learning_rate_decay, "l2": args.l2}
    nlp = spacy.blank("en")
    parser = nlp.add_pipe("arc_standard_parser", config=config)
    tagger = spacy.load(args.tagger) if args.tagger else None
    train_gold = read(nlp.vocab, args.train, args.limit)
    dev_gold = read(nlp.vocab, args.dev, args.dev_limit)
    test_gold = read(nlp.vocab, args.test)
    train = [Example(words_only(nlp.vocab, d, tags=False, sents=args.respect_sent_starts), d)
             for d in train_gold]
    parser.initialize(lambda: train)
    labelled = len(parser.labels) > 1
    key = "las_nopunct" if labelled else "uas_nopunct"
    rng = random.Random(0)
    curve, best, best_bytes, since_best = [], -1.0, None, 0
    for epoch in range(1, args.epochs + 1):
        rng.shuffle(train)
        losses = {}
        before = dict(parser.update_stats)
        t0 = time.process_time()
        for i in range(0, len(train), 100):
            parser.update(train[i:i + 100], losses=losses)
        train_seconds = time.process_time() - t0
        dev = evaluate(nlp, parser, dev_gold, tagger)
        stats = {k: parser.update_stats[k] - before[k] for k in before}
        record = {"epoch": epoch, "train_cpu_seconds": round(train_seconds, 2),
                  "loss": losses.get(parser.name, 0.0), "dev": dev}
        if args.search == "beam" and args.learner == "perceptron":
            record["updates"] = stats["updates"]
            record["invalid_updates"] = stats["invalid"]
            record["invalid_fraction"] = stats["invalid"] / max(1, stats["updates"])
        curve.append(record)
        print(json.dumps(record), flush=True)
        if dev[key] > best:
            best, best_bytes, since_best = dev[key], parser.to_bytes(), 0
            best_epoch = epoch
        else:
            since_best += 1
            if since_best >= args.patience:
                break
    parser.from_bytes(best_bytes)
    test = evaluate(nlp, parser, test_gold, tagger)
    if args.model_dir:
        nlp.to_disk(args.model_dir)
    result = {"name": args.name, "command": " ".join(["python"] + sys.argv), "settings": config, "train": str(args.train), "limit": args.limit,
              "pos": "predicted by " + str(args.tagger) if tagger else "gold",
              "selection_key": key, "best_epoch": best_epoch, "best_dev": best,
              "epochs_run": len(curve), "curve": curve, "test": test,
              "mean_train_cpu_seconds_per_epoch": round(
                  sum(r["train_cpu_seconds"] for r in curve) / len(curve), 2),
              "finished": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    out = args.output or Path("metrics") / f"parser_{args.name}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2))
    print(json.dumps({"name": args.name, "best_epoch": best_epoch, "test": test}))


if __name__ == "__main__":
    main()
