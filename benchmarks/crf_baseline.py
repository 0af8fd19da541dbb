"""Train the first-order linear-chain CRF baseline (python-crfsuite).

    python -m benchmarks.crf_baseline {pos,chunk,ner} TRAIN.spacy OUTPUT_DIR
        [--c1 1.0] [--c2 0.0] [--max-iterations 200] [--limit N]
        [--check 300] [--metrics metrics/crf_conll2000_train.json]

TRAIN.spacy: gold docs (`spacy convert` of UD EWT for pos; columns_to_docbin
for chunk and ner). The attributes are the components' feature templates
(benchmarks/crf_spans.py), checked against the compiled extraction on the
first `--check` sentences. Training: crfsuite's `lbfgs`, OWL-QN (L1) with
`c1` > 0 as the paper's CRF, `c2` an L2 term; at most `--max-iterations`
(crfsuite stops earlier on its convergence test; the number run is
recorded); transitions for all label pairs, state features for the pairs
seen in training, no cut-off. Output: OUTPUT_DIR/model-last, a pipeline with
`benchmark_crf_tagger` (pos) or `benchmark_crf_spans` (load it with `--code
benchmarks/crf_spans.py`), and with --metrics a JSON of the times,
iterations, final loss and active features."""
import argparse
import json
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path

import pycrfsuite
import spacy

from benchmarks import crf_spans  # registers the benchmark_crf_* factories
from benchmarks.gold import read_gold


class Trainer(pycrfsuite.Trainer):
    """Prints one line every 10 iterations (crfsuite's own log is verbose)."""

    def message(self, message):
        if self.logparser.feed(message) == "iteration":
            info = self.logparser.last_iteration
            if info["num"] % 10 == 0:
                print(f"crf_baseline.py: iteration {info['num']}: loss {info.get('loss', 0):.1f}, "
                      f"{info.get('active_features')} active features, "
                      f"{info.get('time', 0):.2f} s", file=sys.stderr, flush=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("task", choices=crf_spans.FEATURE_SETS)
    ap.add_argument("train", type=Path)
    ap.add_argument("output", type=Path)
    ap.add_argument("--c1", type=float, default=1.0, help="L1 coefficient (OWL-QN)")
    ap.add_argument("--c2", type=float, default=0.0, help="L2 coefficient")
    ap.add_argument("--max-iterations", type=int, default=200)
    ap.add_argument("--limit", type=int, default=0, help="first N training sentences (0: all)")
    ap.add_argument("--check", type=int, default=300,
                    help="sentences whose attributes are checked against the component's features")
    ap.add_argument("--spans-key", default="chunks")
    ap.add_argument("--metrics", type=Path, default=None, help="JSON file for the training record")
    args = ap.parse_args(argv)

    nlp = spacy.blank("en")
    docs = read_gold(args.train, limit=args.limit, vocab=nlp.vocab)
    use_tags = args.task == "chunk"
    n_checked = crf_spans.check_against_system(docs[:args.check], args.task, use_tags=use_tags)
    print(f"crf_baseline.py: attributes match the component's static features on "
          f"{n_checked:,} tokens", file=sys.stderr)

    trainer = Trainer(verbose=False)
    fx = crf_spans.FeatureExtractor(args.task)
    t0 = time.perf_counter()
    n_tokens = n_attrs = 0
    for doc in docs:
        xseq = fx.doc(doc, use_tags=use_tags)
        trainer.append(xseq, crf_spans.gold_labels(doc, args.task, args.spans_key))
        n_tokens, n_attrs = n_tokens + len(doc), n_attrs + sum(len(x) for x in xseq)
    featurize_seconds = time.perf_counter() - t0
    params = {"c1": args.c1, "c2": args.c2, "max_iterations": args.max_iterations,
              "feature.possible_transitions": True, "feature.possible_states": False, "feature.minfreq": 0.0}
    trainer.select("lbfgs", "crf1d")
    trainer.set_params(params)
    print(f"crf_baseline.py: {len(docs):,} sentences, {n_tokens:,} tokens, "
          f"{n_attrs / max(1, n_tokens):.1f} attributes per token "
          f"(extracted in {featurize_seconds:.1f} s); training lbfgs {params}",
          file=sys.stderr, flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        model_file = Path(tmp) / crf_spans.MODEL_FILE
        t0 = time.perf_counter()
        trainer.train(str(model_file))
        train_seconds = time.perf_counter() - t0
        model_bytes = model_file.read_bytes()
    last, iterations = trainer.logparser.last_iteration or {}, len(trainer.logparser.iterations)
    crf = nlp.add_pipe("benchmark_crf_tagger") if args.task == "pos" else nlp.add_pipe(
        "benchmark_crf_spans", config={"feature_set": args.task, "spans_key": args.spans_key, "use_tags": use_tags})
    crf.set_model(model_bytes)
    model_dir = args.output / "model-last"
    model_dir.parent.mkdir(parents=True, exist_ok=True)
    nlp.to_disk(model_dir)
    record = {"task": args.task, "train": str(args.train), "limit": args.limit, "sentences": len(docs),
              "tokens": n_tokens, "attributes_per_token": round(n_attrs / max(1, n_tokens), 2),
              "checked_tokens": n_checked, "algorithm": "lbfgs (OWL-QN when c1 > 0)", "params": params,
              "iterations": iterations, "final_loss": last.get("loss"),
              "active_features": last.get("active_features"), "featurize_seconds": round(featurize_seconds, 2),
              "train_seconds": round(train_seconds, 2), "model_bytes": len(model_bytes), "model": str(model_dir),
              "python-crfsuite": metadata.version("python-crfsuite")}
    print(f"crf_baseline.py: {iterations} iterations in {train_seconds:.1f} s, "
          f"loss {record['final_loss']}, {record['active_features']} active features -> {model_dir}",
          file=sys.stderr)
    if args.metrics:
        args.metrics.parent.mkdir(parents=True, exist_ok=True)
        args.metrics.write_text(json.dumps(record, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
