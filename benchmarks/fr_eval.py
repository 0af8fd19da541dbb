"""Test score of a trained FR phrase recogniser (fr_clause_finder or
fr_chunker, Carreras et al. 2005) on a column file: the evaluation of the
`clauses` and `fr_chunk` rows of benchmarks/experiments.py, run once per
trained model.

    python benchmarks/fr_eval.py clauses|chunker MODEL_DIR TEST_FILE --output metrics/NAME.json
        [--limit N]

TEST_FILE is a column file read with the package's readers, CoNLL-2001
(`WORD POS CHUNK CLAUSE`, spacy_lookahead.conll2001.v1) for clauses,
CoNLL-2000 (`WORD POS CHUNK`, spacy_lookahead.conll2000.v1) for chunks, or
its .spacy DocBin twin (corpus/conll2000/test.spacy: tags and
doc.spans["chunks"]). The model gets the file's inputs only, as in
benchmarks/speed.py (benchmarks/spanbench.py): words and POS tags, and the
gold chunks for clauses; the gold phrases are the last column.
`nlp.evaluate` scores the predictions with the component's scorer (exact
spans, micro-averaged): the JSON has `p`, `r`, `f` in percent, spaCy's own
`spans_<key>_p/r/f` (fractions) and `per_type`, and the filtering layer on
the test set (`filters`: candidates, the share of gold phrases among them,
the F1 bound a perfect ranker could reach on them; the paper's Figure 5).
"""
import argparse
import json
import sys
from pathlib import Path

import spacy
from spacy.training import Example

import spacy_lookahead.pipes.phrases  # noqa: F401  (factories, without the entry points)
import spacy_lookahead.scoring  # noqa: F401

sys.path.insert(0, str(Path(__file__).parent))
import spanbench  # noqa: E402

# the span group each task writes (spaCy's score keys are spans_<key>_...)
TASKS = {"clauses": "clauses", "chunker": "chunks"}
# spanbench's task (the inputs) of each
INPUTS = {"clauses": "clauses", "chunker": "chunk"}
FILTER_KEYS = ("candidates", "candidates_recall", "f_bound", "start_p", "start_r", "end_p", "end_r")


def read(task: str, path: Path, nlp, limit: int = 0):
    """Examples: the model's inputs rebuilt from the gold docs of the file."""
    gold = spanbench.read_gold(path, limit=limit, vocab=nlp.vocab, task=INPUTS[task])
    return [Example(spanbench.make_doc(nlp.vocab, spanbench.inputs_of(ref, INPUTS[task])), ref)
            for ref in gold]


def evaluate(task: str, model: Path, data: Path, limit: int = 0) -> dict:
    nlp = spacy.load(model)
    examples = read(task, data, nlp, limit)
    scores = nlp.evaluate(examples)
    prefix = f"spans_{TASKS[task]}"
    record = {"task": task, "model": str(model), "data": str(data), "sentences": len(examples),
              "tokens": sum(len(eg.reference) for eg in examples),
              **{m: round(100 * (scores.get(f"{prefix}_{m}") or 0.0), 2) for m in ("p", "r", "f")},
              **{f"{prefix}_{m}": scores.get(f"{prefix}_{m}") for m in ("p", "r", "f")},
              "per_type": scores.get(f"{prefix}_per_type"),
              "filters": {k: scores[f"{prefix}_{k}"] for k in FILTER_KEYS if f"{prefix}_{k}" in scores}}
    return record


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
