"""Calibration of SAPO's probabilities on a test set: are the spans (or tags)
the model is sure of the ones it gets right?

    python benchmarks/calibration.py MODEL_DIR[@probabilities=marginals] TEST.spacy
        --task {chunk,ner,tag} --output metrics/calibration_NAME.json [--plot F.png]

DATA is a DocBin, or a column file read by the project's readers
(CoNLL-2000 for chunks, IOB2 for entities) with `--held-out 0.1`: its last
tenth, the dev set of a data set without one (select on it, never on test).
With --plot, the reliability diagram: observed accuracy against mean
probability per bin, with the diagonal and the counts.

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

BINS = [k / 10 for k in range(10)] + [1.0 + 1e-9]  # 10 equal bins, 1.0 in the last


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
    ap.add_argument("--held-out", type=float, default=0.0,
                    help="DATA is a column file: score its last share of sentences")
    ap.add_argument("--plot", type=Path, default=None, help="write the reliability diagram")
    args = ap.parse_args(argv)
    _, model_dir, overrides = parse_spec(f"model={args.model}")
    if not (Path(model_dir) / "config.cfg").exists():
        sys.exit(f"calibration.py: no trained model at {model_dir}")
    nlp = load(model_dir, overrides)
    gold = read_data(args.data, args.task, args.held_out, nlp)
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
    if args.plot:
        plot(result, args.plot)
    return 0


def read_data(path: Path, task: str, held_out: float, nlp):
    """The gold docs of a DocBin, or of a column file's held-out part."""
    if path.suffix == ".spacy":
        if held_out:
            sys.exit("calibration.py: --held-out is for column files; a DocBin is read whole")
        return spanbench.read_gold(path, vocab=nlp.vocab)
    from spacy_lookahead.readers import create_conll2000_reader, create_iob_reader
    part = {"held_out": held_out, "part": "held_out"} if held_out else {}
    reader = create_conll2000_reader(path, **part) if task == "chunk" else create_iob_reader(path, **part)
    return [eg.reference for eg in reader(nlp) if len(eg.reference)]


def plot(result: dict, path: Path) -> None:
    """Reliability diagram: accuracy per bin against its mean probability."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    bins = [b for b in result["bins"] if b["count"]]
    fig, ax = plt.subplots(figsize=(4.5, 4.5))
    ax.plot([0, 1], [0, 1], color="grey", linestyle="--", linewidth=1)
    ax.plot([b["mean_probability"] for b in bins], [b["accuracy"] for b in bins], marker="o")
    for b in bins:
        ax.annotate(f"{b['count']:,}", (b["mean_probability"], b["accuracy"]), fontsize=7,
                    textcoords="offset points", xytext=(4, -10))
    ax.set_xlim(0, 1.02)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("predicted probability (bin mean)")
    ax.set_ylabel("observed accuracy")
    ax.set_title(f"{result['task']}: ECE {result['ece']:.3f}", fontsize=10)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)


if __name__ == "__main__":
    sys.exit(main())
