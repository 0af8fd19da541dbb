"""Train the first-order linear-chain CRF baseline (python-crfsuite).

    python benchmarks/crf_baseline.py {pos,chunk,ner} TRAIN.spacy OUTPUT_DIR
        [--c1 1.0] [--c2 0.0] [--max-iterations 200] [--limit N]
        [--check 300] [--metrics metrics/crf_conll2000_train.json]

TRAIN.spacy comes from `spacy convert` of UD EWT for pos (gold XPOS in
token.tag_; the `convert` command of project.yml) and from
benchmarks/columns_to_docbin.py for chunk and ner (gold docs: POS tags and
doc.spans["chunks"] for chunk, doc.ents for ner). The attributes are the
feature templates of lookahead_tagger / lookahead_chunker / lookahead_ner (see
benchmarks/crf_spans.py), checked against the compiled feature extraction on
the first `--check` sentences before training. Labels: the XPOS tags for pos,
IOB2 for chunk and ner.

Training: crfsuite's `lbfgs` with `c1` > 0 is OWL-QN, i.e. L1-regularised
maximum likelihood as the paper's CRF (Tsuruoka et al. 2011 train theirs with
L1 and SGD); `c2` adds an L2 term (0 by default). At most `--max-iterations`
iterations (crfsuite stops earlier only if its convergence test, 1e-5
relative improvement over 10 iterations, is met; the number run is recorded).
Label-bigram (transition) features for all label pairs
(`feature.possible_transitions`), state features for the attribute/label
pairs seen in training (crfsuite's default), no frequency cut-off.

Output: OUTPUT_DIR/model-last, a spaCy pipeline with the `benchmark_crf_tagger`
(pos) or `benchmark_crf_spans` (chunk, ner) component (import
benchmarks/crf_spans.py to load it, e.g. `--code benchmarks/crf_spans.py` for
`spacy benchmark accuracy`, evaluate.py and speed.py), and a JSON with the
feature-extraction and training times, iterations, final loss and active
features. benchmarks/timed.py around this script records the wall time and
peak memory as for the other systems.
"""
import argparse
import json
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path

import pycrfsuite
import spacy
from spacy.tokens import DocBin

sys.path.insert(0, str(Path(__file__).parent))
import crf_spans  # noqa: E402  (registers the benchmark_crf_* factories)


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
    docs = [d for d in DocBin().from_disk(args.train).get_docs(nlp.vocab) if len(d)]
    if args.limit:
        docs = docs[:args.limit]
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
        yseq = crf_spans.gold_labels(doc, args.task, args.spans_key)
        trainer.append(xseq, yseq)
        n_tokens += len(doc)
        n_attrs += sum(len(x) for x in xseq)
    featurize_seconds = time.perf_counter() - t0
    params = {
        "c1": args.c1, "c2": args.c2, "max_iterations": args.max_iterations,
        "feature.possible_transitions": True, "feature.possible_states": False,
        "feature.minfreq": 0.0,
    }
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
    last = trainer.logparser.last_iteration or {}
    iterations = len(trainer.logparser.iterations)

    if args.task == "pos":
        crf = nlp.add_pipe("benchmark_crf_tagger")
    else:
        crf = nlp.add_pipe("benchmark_crf_spans", config={"feature_set": args.task,
                                                          "spans_key": args.spans_key,
                                                          "use_tags": use_tags})
    crf.set_model(model_bytes)
    model_dir = args.output / "model-last"
    model_dir.parent.mkdir(parents=True, exist_ok=True)
    nlp.to_disk(model_dir)
    record = {
        "task": args.task, "train": str(args.train), "limit": args.limit,
        "sentences": len(docs), "tokens": n_tokens,
        "attributes_per_token": round(n_attrs / max(1, n_tokens), 2),
        "checked_tokens": n_checked,
        "algorithm": "lbfgs (OWL-QN when c1 > 0)", "params": params,
        "iterations": iterations, "final_loss": last.get("loss"),
        "active_features": last.get("active_features"),
        "featurize_seconds": round(featurize_seconds, 2),
        "train_seconds": round(train_seconds, 2),
        "model_bytes": len(model_bytes), "model": str(model_dir),
        "python-crfsuite": metadata.version("python-crfsuite"),
    }
    print(f"crf_baseline.py: {iterations} iterations in {train_seconds:.1f} s, "
          f"loss {record['final_loss']}, {record['active_features']} active features -> {model_dir}",
          file=sys.stderr)
    if args.metrics:
        args.metrics.parent.mkdir(parents=True, exist_ok=True)
        args.metrics.write_text(json.dumps(record, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
