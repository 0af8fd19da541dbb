"""Convert a column file (CoNLL-2000, IOB2 NER, CoNLL-2001 clauses) to a .spacy corpus.

    python -m benchmarks.columns_to_docbin chunk|ner|clause SRC DEST.spacy [--limit N]

Read with the package's own readers (spacy_lookahead.conll2000.v1, iob.v1,
conll2001.v1), so the spans are those the components train on; one
sentence a doc, the words of the file. chunk: POS in token.tag_, the chunks
in doc.spans["chunks"] (the chunkers') and as doc.ents (spaCy's ner trained
on them); ner: doc.ents; clause: POS, doc.spans["chunks"] and the nested
doc.spans["clauses"]. The same files serve spaCy's baselines (`spacy
train`, `spacy benchmark accuracy --gold-preproc`), evaluate.py and speed.py."""
import argparse
import sys
from pathlib import Path

from spacy.tokens import DocBin

from benchmarks.gold import read_gold

# task: (benchmarks/gold.py's task, the reader), what its spans are
TASKS = {"chunk": ("chunk", "chunks"), "ner": ("ner", "entities"), "clause": ("clauses", "clauses")}


def convert(task: str, src: Path, dest: Path, limit: int = 0) -> dict:
    docs = read_gold(src, limit=limit, task=TASKS[task][0])
    for doc in docs:
        if task == "chunk":  # chunks never overlap: the same spans as entities
            doc.set_ents(list(doc.spans["chunks"]), default="outside")
    dest.parent.mkdir(parents=True, exist_ok=True)
    DocBin(docs=docs, store_user_data=False).to_disk(dest)
    return {"docs": len(docs), "tokens": sum(len(d) for d in docs),
            "spans": sum(len(d.spans["clauses"]) if task == "clause" else len(d.ents) for d in docs)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("task", choices=sorted(TASKS))
    ap.add_argument("src", type=Path)
    ap.add_argument("dest", type=Path)
    ap.add_argument("--limit", type=int, default=0, help="first N sentences only (0: all)")
    args = ap.parse_args(argv)
    counts = convert(args.task, args.src, args.dest, limit=args.limit)
    print(f"columns_to_docbin.py: {args.src} -> {args.dest}: {counts['docs']:,} sentences, "
          f"{counts['tokens']:,} tokens, {counts['spans']:,} {TASKS[args.task][1]}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
