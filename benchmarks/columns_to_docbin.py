"""Convert a column file (CoNLL-2000, IOB2 NER, CoNLL-2001 clauses) to a .spacy corpus.

    python benchmarks/columns_to_docbin.py chunk assets/conll2000/train.txt corpus/conll2000/train.spacy
    python benchmarks/columns_to_docbin.py ner   assets/jnlpba/train.iob2   corpus/jnlpba/train.spacy
    python benchmarks/columns_to_docbin.py clause assets/wsj_clauses/test.txt corpus/wsj_clauses/test.spacy

The files are read with the package's own registered readers
(`spacy_lookahead.conll2000.v1` / `spacy_lookahead.iob.v1`, i.e.
`spacy_lookahead.readers.columns.ColumnCorpus`), so the spans are decoded
exactly as our components see them in training. One sentence per Doc, gold
tokens (the words of the file, spaces between them), and:

* chunk: the POS column in `token.tag_`, the chunks in `doc.spans["chunks"]`
  (what `lookahead_chunker` is trained and scored on) AND as `doc.ents` (what
  spaCy's `ner` is trained and scored on); chunks never overlap, so both
  hold the same spans;
* ner: the entities in `doc.ents` (JNLPBA has words and entity tags only);
* clause (`spacy_lookahead.conll2001.v1`): POS in `token.tag_`, chunks in
  `doc.spans["chunks"]`, the nested clauses in `doc.spans["clauses"]` (for
  `python -m spacy_lookahead evaluate ... --inputs tag,chunks`).

The same .spacy files serve the spaCy `ner` baselines (`spacy train`,
`spacy benchmark accuracy --gold-preproc`), benchmarks/evaluate.py and
benchmarks/speed.py (which rebuild the inputs from the gold words, plus the
POS tags for chunking).
"""
import argparse
import sys
from pathlib import Path

import spacy
from spacy.tokens import DocBin

from spacy_lookahead.readers.clauses import ClauseCorpus
from spacy_lookahead.readers.columns import ColumnCorpus

READERS = {
    # task: (columns, target) as the registered readers use them
    "chunk": (["word", "pos", "chunk"], "chunk"),   # spacy_lookahead.conll2000.v1
    "ner": (["word", "ent"], "ent"),                # spacy_lookahead.iob.v1 (JNLPBA)
    "clause": (None, "clauses"),                    # spacy_lookahead.conll2001.v1
}


def convert(task: str, src: Path, dest: Path, spans_key: str = "chunks", limit: int = 0) -> dict:
    columns, target = READERS[task]
    nlp = spacy.blank("en")
    corpus = (ClauseCorpus(src, limit=limit) if task == "clause" else
              ColumnCorpus(src, columns, target, scheme="iob2", spans_key=spans_key, limit=limit))
    db = DocBin(store_user_data=False)
    n_docs = n_tokens = n_spans = 0
    for eg in corpus(nlp):
        doc = eg.reference
        if task == "chunk":
            chunks = list(doc.spans[spans_key])
            doc.set_ents(chunks, default="outside")
            n_spans += len(chunks)
        elif task == "clause":
            n_spans += len(doc.spans[target])
        else:
            n_spans += len(doc.ents)
        db.add(doc)
        n_docs += 1
        n_tokens += len(doc)
    dest.parent.mkdir(parents=True, exist_ok=True)
    db.to_disk(dest)
    return {"docs": n_docs, "tokens": n_tokens, "spans": n_spans}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("task", choices=sorted(READERS))
    ap.add_argument("src", type=Path)
    ap.add_argument("dest", type=Path)
    ap.add_argument("--limit", type=int, default=0, help="first N sentences only (0: all)")
    args = ap.parse_args(argv)
    counts = convert(args.task, args.src, args.dest, limit=args.limit)
    print(f"columns_to_docbin.py: {args.src} -> {args.dest}: {counts['docs']:,} sentences, "
          f"{counts['tokens']:,} tokens, {counts['spans']:,} "
          f"{ {'chunk': 'chunks', 'ner': 'entities', 'clause': 'clauses'}[args.task]}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
