"""Calibration of SAPO's probabilities on a test set: are the spans (or tags)
the model is sure of the ones it gets right?

    python benchmarks/calibration.py MODEL_DIR[@probabilities=marginals] TEST.spacy
        --task {chunk,ner,tag} --output metrics/calibration_NAME.json

Chunks: doc.spans["chunks"].attrs["scores"]; entities: doc.spans["ents"]
(lookahead_ner's scores_key) .attrs["scores"]; tags: token._.tag_prob. Each
prediction falls in a probability bin; per bin: how many, their mean
probability and the fraction that is right (exact span + label, or the gold
tag). Also the expected calibration error (ECE: the count-weighted mean gap
between mean probability and accuracy).
"""
import argparse
import json
import sys
from pathlib import Path

import numpy
from tqdm import tqdm

sys.path.insert(0, str(Path(__file__).parent))
import spanbench  # noqa: E402
from model_spec import load, parse_spec  # noqa: E402

BINS = [0.0, 0.5, 0.7, 0.9, 0.99, 1.0 + 1e-9]


def predictions(doc, gold, task):
    """(probability, right?) for every prediction of one doc."""
    if task == "tag":
        return [(t._.tag_prob, t.tag_ == g.tag_) for t, g in zip(doc, gold)]
    key = "chunks" if task == "chunk" else "ents"
    group = doc.spans[key]
    gold_spans = gold.spans["chunks"] if task == "chunk" else gold.ents
    truth = {(s.start, s.end, s.label_) for s in gold_spans}
    return [(float(p), (s.start, s.end, s.label_) in truth)
            for s, p in zip(group, group.attrs["scores"])]


def calibration(pairs):
    probs = numpy.asarray([p for p, _ in pairs], dtype="float64")
    right = numpy.asarray([r for _, r in pairs], dtype="float64")
    bins, ece = [], 0.0
    for low, high in zip(BINS[:-1], BINS[1:]):
        mask = (probs >= low) & (probs < high)
        n = int(mask.sum())
        if n:
            ece += n * abs(probs[mask].mean() - right[mask].mean())
        bins.append({"low": low, "high": min(high, 1.0), "count": n,
                     "mean_probability": float(probs[mask].mean()) if n else None,
                     "accuracy": float(right[mask].mean()) if n else None})
    return {"predictions": len(pairs), "accuracy": float(right.mean()) if len(pairs) else None,
            "ece": ece / max(1, len(pairs)), "bins": bins}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model", help="MODEL_DIR, or MODEL_DIR@key=value,... to change settings "
                                   "at load (benchmarks/model_spec.py), e.g. @probabilities=marginals")
    ap.add_argument("data", type=Path)
    ap.add_argument("--task", choices=spanbench.TASKS, required=True)
    ap.add_argument("--output", type=Path, required=True)
    args = ap.parse_args(argv)
    _, model_dir, overrides = parse_spec(f"model={args.model}")
    if not (Path(model_dir) / "config.cfg").exists():
        sys.exit(f"calibration.py: no trained model at {model_dir}")
    nlp = load(model_dir, overrides)
    gold = spanbench.read_gold(args.data, vocab=nlp.vocab)
    docs = nlp.pipe(spanbench.make_doc(nlp.vocab, spanbench.inputs_of(d, args.task)) for d in gold)
    docs = tqdm(docs, total=len(gold), desc=f"calibration {args.model}", unit="doc", leave=False)
    pairs = [pair for doc, ref in zip(docs, gold) for pair in predictions(doc, ref, args.task)]
    if pairs and any(p is None for p, _ in pairs):
        sys.exit("calibration.py: the model gives no probabilities (train it with learner = sapo)")
    result = {"model": str(args.model), "data": str(args.data), "task": args.task,
              **calibration(pairs)}
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=2) + "\n")
    for b in result["bins"]:
        if b["count"]:
            print(f"[{b['low']:.2f}, {b['high']:.2f}): {b['count']:>6} predictions, "
                  f"mean p {b['mean_probability']:.3f}, accuracy {b['accuracy']:.3f}")
    print(f"ECE {result['ece']:.4f} over {result['predictions']:,} predictions")
    return 0


if __name__ == "__main__":
    sys.exit(main())
