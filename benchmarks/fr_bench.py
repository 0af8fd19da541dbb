"""Benchmarks of the FR phrase recognisers (Carreras et al. 2005): learning
curves, evaluation of a trained model, prediction speed.

    python benchmarks/fr_bench.py curve {clauses,chunker} --train F [--dev F | --heldout 0.1] [--test F]
        --feedback {recognition,classification} --epochs N [--limit N]
        --output metrics/clauses_curve_recognition.json
    python benchmarks/fr_bench.py evaluate {clauses,chunker} MODEL_DIR TEST_FILE --output metrics/X.json
    python benchmarks/fr_bench.py speed {clauses,chunker} MODEL_DIR TEST_FILE [--repeats 3]
        --output metrics/X_speed.json

`curve` trains a fresh component online (one example at a time, shuffled
per epoch with a fixed seed, as `spacy train` would with batches) and after
every epoch records, with the averaged weights: P/R/F1 on dev (and test),
and the filtering layer on dev (the paper's Figure 5): candidates generated,
recall of the candidate set and the F1 upper bound it leaves a perfect
ranker. `best_epoch` is chosen on dev F1; `test_at_best` is the test score
at that epoch (what Table 3 of the paper reports). Files are read with the
package's readers: CoNLL-2001 (`WORD POS CHUNK CLAUSE`) for clauses,
CoNLL-2000 for chunking; POS tags and chunks of the files are the inputs.
`speed` times `nlp.pipe` on fresh docs carrying only the inputs (words,
POS tags, and chunks for clauses) and prints tokens/s and peak memory.
"""
import argparse
import json
import random
import resource
import statistics
import sys
import time
from pathlib import Path

import spacy
from spacy.tokens import Doc, Span, SpanGroup

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import spacy_lookahead.pipes.phrases  # noqa: E402,F401  (factories)
import spacy_lookahead.scoring  # noqa: E402,F401
from spacy_lookahead.readers.clauses import ClauseCorpus  # noqa: E402
from spacy_lookahead.readers.columns import create_conll2000_reader  # noqa: E402

# (factory, spaCy's score-key prefix of its span group)
TASKS = {"clauses": ("fr_clause_finder", "spans_clauses"), "chunker": ("fr_chunker", "spans_chunks")}


def read(task, path, vocab, limit=0):
    nlp = spacy.blank("en", vocab=vocab)
    corpus = ClauseCorpus(path, limit=limit) if task == "clauses" else create_conll2000_reader(path, limit=limit)
    return list(corpus(nlp))


def prf(scores, key):
    return {m: round(100 * (scores.get(f"{key}_{m}") or 0.0), 2) for m in ("p", "r", "f")}


def curve(args):
    factory, key = TASKS[args.task]
    nlp = spacy.blank("en")
    config = {"feedback": args.feedback}
    if args.max_length is not None:  # else the component's default
        config["max_length"] = args.max_length
    if args.task == "clauses":
        config["chunk_boundaries"] = args.chunk_boundaries
    pipe = nlp.add_pipe(factory, config=config)
    train = read(args.task, args.train, nlp.vocab, args.limit)
    if args.dev is not None:
        dev = read(args.task, args.dev, nlp.vocab)
    else:  # no development set (CoNLL-2000): hold out the end of train
        cut = round(len(train) * (1 - args.heldout))
        train, dev = train[:cut], train[cut:]
    test = read(args.task, args.test, nlp.vocab) if args.test else None
    pipe.initialize(lambda: train, nlp=nlp)
    rng = random.Random(args.seed)
    record = {"task": args.task, "feedback": args.feedback, "train": str(args.train), "dev": str(args.dev) if args.dev else f"last {args.heldout:.0%} of train",
              "test": str(args.test) if args.test else None, "train_sentences": len(train),
              "max_length": pipe.cfg["max_length"], "chunk_boundaries": args.task == "clauses" and args.chunk_boundaries,
              "epochs": []}
    for epoch in range(1, args.epochs + 1):
        rng.shuffle(train)
        start = time.perf_counter()
        losses = {}
        for i in range(0, len(train), args.batch):
            pipe.update(train[i:i + args.batch], losses=losses)
        seconds = time.perf_counter() - start
        row = {"epoch": epoch, "mistakes": int(losses[factory]), "train_seconds": round(seconds, 2),
               "dev": prf(nlp.evaluate(dev), key), "dev_filters": pipe.filter_stats(dev)}
        if test is not None:
            row["test"] = prf(nlp.evaluate(test), key)
        record["epochs"].append(row)
        print(json.dumps(row), flush=True)
    best = max(record["epochs"], key=lambda r: (r["dev"]["f"], -r["epoch"]))
    record["best_epoch"] = best["epoch"]
    record["dev_at_best"] = best["dev"]
    record["test_at_best"] = best.get("test")
    write(args.output, record)
    print(f"best epoch on dev: {best['epoch']} dev {best['dev']} test {best.get('test')}")


def evaluate(args):
    _, key = TASKS[args.task]
    nlp = spacy.load(args.model)
    scores = nlp.evaluate(read(args.task, args.data, nlp.vocab))
    record = {"task": args.task, "model": str(args.model), "data": str(args.data), **prf(scores, key),
              f"{key}_f": scores.get(f"{key}_f"), "per_type": scores.get(f"{key}_per_type")}
    write(args.output, record)
    print(json.dumps({k: record[k] for k in ("p", "r", "f")}))


def input_docs(task, examples, vocab):
    """Fresh docs with the inputs only: words, POS tags (and chunks)."""
    docs = []
    for eg in examples:
        ref = eg.reference
        doc = Doc(vocab, words=[t.text for t in ref], spaces=[bool(t.whitespace_) for t in ref],
                  tags=[t.tag_ for t in ref])
        if task == "clauses":
            doc.spans["chunks"] = SpanGroup(doc, name="chunks", spans=[
                Span(doc, s.start, s.end, label=s.label_) for s in ref.spans["chunks"]])
        docs.append(doc)
    return docs


def speed(args):
    nlp = spacy.load(args.model)
    examples = read(args.task, args.data, nlp.vocab)
    n_tokens = sum(len(eg.reference) for eg in examples)
    list(nlp.pipe(input_docs(args.task, examples[:200], nlp.vocab)))  # warm-up
    rates = []
    for _ in range(args.repeats):
        docs = input_docs(args.task, examples, nlp.vocab)
        start = time.perf_counter()
        list(nlp.pipe(docs, batch_size=args.batch_size))
        rates.append(n_tokens / (time.perf_counter() - start))
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    record = {"task": args.task, "model": str(args.model), "data": str(args.data), "tokens": n_tokens,
              "repeats": args.repeats, "tokens_per_second": round(statistics.median(rates)),
              "peak_memory_mb": round(rss, 1)}
    write(args.output, record)
    print(f"{args.task}: {record['tokens_per_second']:,} tokens/s (median of {args.repeats}), "
          f"peak memory {record['peak_memory_mb']} MB")


def write(path, record):
    if path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(record, indent=2) + "\n", encoding="utf8")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    c = sub.add_parser("curve")
    c.add_argument("task", choices=TASKS)
    c.add_argument("--train", type=Path, required=True)
    c.add_argument("--dev", type=Path, help="default: the last --heldout share of --train")
    c.add_argument("--heldout", type=float, default=0.1)
    c.add_argument("--test", type=Path)
    c.add_argument("--feedback", choices=("recognition", "classification"), default="recognition")
    c.add_argument("--epochs", type=int, default=20)
    c.add_argument("--limit", type=int, default=0)
    c.add_argument("--batch", type=int, default=32)
    c.add_argument("--max-length", type=int, default=None,
                   help="longest candidate phrase (default: the component's; 0: no limit)")
    c.add_argument("--seed", type=int, default=0)
    c.add_argument("--chunk-boundaries", action="store_true", help="clauses: no boundary inside a chunk")
    c.add_argument("--output", type=Path)
    e = sub.add_parser("evaluate")
    e.add_argument("task", choices=TASKS)
    e.add_argument("model", type=Path)
    e.add_argument("data", type=Path)
    e.add_argument("--output", type=Path)
    s = sub.add_parser("speed")
    s.add_argument("task", choices=TASKS)
    s.add_argument("model", type=Path)
    s.add_argument("data", type=Path)
    s.add_argument("--repeats", type=int, default=3)
    s.add_argument("--batch-size", type=int, default=1000)
    s.add_argument("--output", type=Path)
    args = ap.parse_args(argv)
    {"curve": curve, "evaluate": evaluate, "speed": speed}[args.command](args)


if __name__ == "__main__":
    main()
