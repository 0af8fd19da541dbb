"""Calibration of a model's probabilities on a test set: are the spans (or
tags) it is sure of the ones it gets right?

    python -m benchmarks.calibration MODEL_DIR[@probabilities=marginals] DATA
        --task {chunk,ner,tag} --output metrics/calibration_NAME.json [--plot F.png] [--held-out 0.1]

DATA: a DocBin, or a column file (CoNLL-2000 chunks, IOB2 entities) with
`--held-out 0.1` for its last tenth (the dev set of data without one:
select on it, never on test). Chunks: doc.spans["chunks"].attrs["scores"];
entities: doc.spans["ents"].attrs["scores"] (lookahead_ner's scores_key);
tags: token._.tag_prob. Each prediction falls in a probability bin; per
bin how many, their mean probability and the share that is right (exact
span + label, or the gold tag), and the expected calibration error
(benchmarks/gold.py). --plot draws the reliability diagram."""
import argparse
import json
import sys
from pathlib import Path

from tqdm import tqdm

from benchmarks import gold as G
from benchmarks.harness import load, parse_spec


def predictions(doc, gold, task):
    """(probability, right?) for every prediction of one doc."""
    if task == "tag":
        return [(t._.tag_prob, t.tag_ == g.tag_) for t, g in zip(doc, gold)]
    group = doc.spans["chunks" if task == "chunk" else "ents"]
    truth = {(s.start, s.end, s.label_) for s in (gold.spans["chunks"] if task == "chunk" else gold.ents)}
    return [(float(p), (s.start, s.end, s.label_) in truth) for s, p in zip(group, group.attrs["scores"])]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model", help="MODEL_DIR, or MODEL_DIR@key=value,... to change settings at load "
                                   "(benchmarks/harness.py), e.g. @probabilities=marginals")
    ap.add_argument("data", type=Path)
    ap.add_argument("--task", choices=G.TASKS, required=True)
    ap.add_argument("--output", type=Path, required=True)
    ap.add_argument("--held-out", type=float, default=0.0,
                    help="DATA is a column file: score its last share of sentences")
    ap.add_argument("--plot", type=Path, default=None, help="write the reliability diagram")
    args = ap.parse_args(argv)
    _, model_dir, overrides = parse_spec(f"model={args.model}")
    if not (Path(model_dir) / "config.cfg").exists():
        sys.exit(f"calibration.py: no trained model at {model_dir}")
    nlp = load(model_dir, overrides)
    gold = G.read_gold(args.data, vocab=nlp.vocab, task=args.task, held_out=args.held_out)
    docs = nlp.pipe(G.make_doc(nlp.vocab, G.inputs_of(d, args.task)) for d in gold)
    docs = tqdm(docs, total=len(gold), desc=f"calibration {args.model}", unit="doc", leave=False)
    pairs = [pair for doc, ref in zip(docs, gold) for pair in predictions(doc, ref, args.task)]
    if pairs and any(p is None for p, _ in pairs):
        sys.exit("calibration.py: the model writes no probabilities (a SAPO learner, or a fitted temperature)")
    result = {"model": str(args.model), "data": str(args.data), "task": args.task, **G.calibration(pairs)}
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=2) + "\n")
    for b in result["bins"]:
        if b["count"]:
            print(f"[{b['low']:.2f}, {b['high']:.2f}): {b['count']:>6} predictions, "
                  f"mean p {b['mean_probability']:.3f}, accuracy {b['accuracy']:.3f}")
    print(f"ECE {result['ece']:.4f} over {result['predictions']:,} predictions")
    if args.plot:
        from benchmarks.plots import reliability
        reliability(result, args.plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
