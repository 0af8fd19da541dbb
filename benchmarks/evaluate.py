"""Span F1 of a trained pipeline on a gold .spacy test set, with the package's scorer.

    python -m benchmarks.evaluate MODEL_DIR TEST.spacy --task {chunk,ner} --output metrics/NAME.json
        [--code benchmarks/crf_spans.py] [--predictions FILE] [--n-sents N]

Not `spacy benchmark accuracy`: its JSON keeps only the keys it knows, and
its predicted docs get the gold words without the POS tags the chunker and
the CRF read. Here every system gets the task's inputs (benchmarks/gold.py)
and one scorer (`spacy_lookahead.scoring.score_chunks` / `score_entities`:
exact spans, micro-averaged, as conlleval), whether it writes
`doc.spans["chunks"]` or `doc.ents`. The JSON has p, r, f (fractions),
per_type and the task's usual keys (`spans_chunks_f`, `ents_f`).
`--predictions` writes the test set in conlleval's input layout (`word
[POS] gold predicted`, IOB2); `--n-sents N` joins N sentences into a doc."""
import argparse
import json
import sys
import time
from pathlib import Path

import spacy
from spacy.tokens import Doc
from spacy.util import import_file
from tqdm import tqdm

from benchmarks import gold as G


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model", type=Path)
    ap.add_argument("data", type=Path)
    ap.add_argument("--task", choices=("chunk", "ner"), required=True)
    ap.add_argument("--output", type=Path, required=True)
    ap.add_argument("--code", type=Path, default=None, help="Python file to import first (factories)")
    ap.add_argument("--predictions", type=Path, default=None, help="write conlleval input here")
    ap.add_argument("--batch-size", type=int, default=1000)
    ap.add_argument("--n-sents", type=int, default=1, help="sentences per doc")
    args = ap.parse_args(argv)
    if args.code:
        import_file("code", args.code)
    if not (args.model / "config.cfg").exists():
        sys.exit(f"evaluate.py: no trained model at {args.model}")
    nlp = spacy.load(args.model)
    gold = G.read_gold(args.data, vocab=nlp.vocab)
    if args.n_sents > 1:
        gold = [Doc.from_docs(gold[i:i + args.n_sents]) for i in range(0, len(gold), args.n_sents)]
    docs = [G.make_doc(nlp.vocab, G.inputs_of(d, args.task)) for d in gold]
    t0 = time.perf_counter()
    predicted = list(tqdm(nlp.pipe(docs, batch_size=args.batch_size), total=len(docs),
                          desc=f"evaluate {args.model}", unit="doc", leave=False))
    seconds = time.perf_counter() - t0
    result = G.score(predicted, gold, args.task)
    examples = result.pop("examples")
    key = f"spans_{G.SPANS_KEY}" if args.task == "chunk" else "ents"
    result.update({f"{key}_{m}": result[m] for m in "prf"})
    result.update({"task": args.task, "model": str(args.model), "data": str(args.data),
                   "pipeline": nlp.pipe_names, "n_docs": len(gold), "n_tokens": sum(len(d) for d in gold),
                   "n_gold_spans": sum(len(G.predicted_spans(d, args.task)[0]) for d in gold),
                   "predict_seconds": round(seconds, 2)})
    for name, pipe in nlp.pipeline:  # the CRF baseline times its two parts
        timing = getattr(pipe, "timing", None)
        if timing and timing.get("tokens"):
            both = timing["featurize_seconds"] + timing["viterbi_seconds"]
            result[f"{name}_timing"] = {
                **{k: round(v, 3) for k, v in timing.items()},
                "viterbi_tokens_per_second": round(timing["tokens"] / max(timing["viterbi_seconds"], 1e-9)),
                "featurize_share": round(timing["featurize_seconds"] / max(both, 1e-9), 3)}
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=2) + "\n")
    if args.predictions:
        from spacy_lookahead.readers.columns import write_columns
        args.predictions.parent.mkdir(parents=True, exist_ok=True)
        write_columns(examples, args.predictions, spans=G.SPANS_KEY if args.task == "chunk" else "ents",
                      pos=args.task == "chunk")
    print(f"evaluate.py: {args.model}: {key} P {result['p'] * 100:.2f} R {result['r'] * 100:.2f} "
          f"F1 {result['f'] * 100:.2f} ({result['n_docs']:,} sentences, predictions from "
          f"{', '.join(result['predictions_from'])}) -> {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
