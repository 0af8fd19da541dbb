"""Test score of a trained FR phrase recogniser (fr_clause_finder or
fr_chunker, Carreras et al. 2005): the evaluation of the `clauses` and
`fr_chunk` rows of benchmarks/experiments.py, once per trained model.

    python -m benchmarks.fr_eval clauses|chunker MODEL_DIR TEST_FILE --output metrics/NAME.json [--limit N]

TEST_FILE: CoNLL-2001 (`WORD POS CHUNK CLAUSE`) for clauses, CoNLL-2000 for
chunks, or its .spacy twin. The model gets the inputs only (benchmarks/gold.py:
words and POS tags, and the gold chunks for clauses); `nlp.evaluate` scores
it with the component's scorer (exact spans, micro-averaged). The JSON has
`p`, `r`, `f` in percent, spaCy's `spans_<key>_p/r/f` (fractions),
`per_type`, and the filtering layer on the test set (`filters`: candidates,
the share of gold phrases among them, the F1 bound a perfect ranker could
reach on them: the paper's Figure 5)."""
import argparse
import json
import sys
from pathlib import Path

import spacy
from spacy.training import Example

import spacy_lookahead.pipes.phrases  # noqa: F401  (factories, without the entry points)
import spacy_lookahead.scoring  # noqa: F401
from benchmarks import gold as G

# the span group each task writes (spaCy's keys: spans_<key>_...) and gold.py's task of its inputs
TASKS = {"clauses": ("clauses", "clauses"), "chunker": ("chunks", "chunk")}
FILTER_KEYS = ("candidates", "candidates_recall", "f_bound", "start_p", "start_r", "end_p", "end_r")


def evaluate(task: str, model: Path, data: Path, limit: int = 0) -> dict:
    nlp = spacy.load(model)
    key, inputs = TASKS[task]
    examples = [Example(G.make_doc(nlp.vocab, G.inputs_of(ref, inputs)), ref)
                for ref in G.read_gold(data, limit=limit, vocab=nlp.vocab, task=inputs)]
    scores, prefix = nlp.evaluate(examples), f"spans_{key}"
    return {"task": task, "model": str(model), "data": str(data), "sentences": len(examples),
            "tokens": sum(len(eg.reference) for eg in examples),
            **{m: round(100 * (scores.get(f"{prefix}_{m}") or 0.0), 2) for m in ("p", "r", "f")},
            **{f"{prefix}_{m}": scores.get(f"{prefix}_{m}") for m in ("p", "r", "f")},
            "per_type": scores.get(f"{prefix}_per_type"),
            "filters": {k: scores[f"{prefix}_{k}"] for k in FILTER_KEYS if f"{prefix}_{k}" in scores}}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("task", choices=tuple(TASKS))
    ap.add_argument("model", type=Path)
    ap.add_argument("data", type=Path, help="the test file (CoNLL-2001 for clauses, CoNLL-2000 for "
                                            "chunks) or its .spacy twin")
    ap.add_argument("--output", type=Path, default=None, help="JSON file to write")
    ap.add_argument("--limit", type=int, default=0, help="score the first N sentences only (0: all)")
    args = ap.parse_args(argv)
    if not (args.model / "config.cfg").exists():
        sys.exit(f"fr_eval.py: no trained model at {args.model}")
    record = evaluate(args.task, args.model, args.data, args.limit)
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(json.dumps(record, indent=2) + "\n", encoding="utf8")
    print(json.dumps({k: record[k] for k in ("p", "r", "f")}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
