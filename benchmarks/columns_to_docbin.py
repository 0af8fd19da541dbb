"""Convert a column file (CoNLL-2000, IOB2 NER, CoNLL-2001 clauses) to a .spacy corpus.

    python -m benchmarks.columns_to_docbin chunk|ner|clause SRC DEST.spacy [--limit N]
        [--spans-key KEY] [--held-out 0.1 --part rest|held_out]

Read with the package's own readers (spacy_lookahead.conll2000.v1, iob.v1,
conll2001.v1), so the spans are those the components train on; one
sentence a doc, the words of the file. chunk: POS in token.tag_, the chunks
in doc.spans["chunks"] (the chunkers') and as doc.ents (spaCy's ner trained
on them); ner: doc.ents; clause: POS, doc.spans["chunks"] and the nested
doc.spans["clauses"]. The same files serve spaCy's baselines (`spacy
train`, `spacy benchmark accuracy --gold-preproc`), evaluate.py and speed.py.

--spans-key KEY (ner) also puts the entities in doc.spans[KEY]: the gold
of a first-stage span labeller (configs/ner_jnlpba_stage1.cfg).
--held-out / --part write the file's last share of sentences or the rest,
the same sentences as the readers' held_out / part."""
import argparse
import sys
from pathlib import Path
from typing import Optional

from spacy.tokens import DocBin

from benchmarks.gold import read_gold

# task: (benchmarks/gold.py's task, the reader), what its spans are
TASKS = {"chunk": ("chunk", "chunks"), "ner": ("ner", "entities"), "clause": ("clauses", "clauses")}


def convert(task: str, src: Path, dest: Path, limit: int = 0, spans_key: Optional[str] = None,
            held_out: float = 0.0, part: Optional[str] = None) -> dict:
    if spans_key is not None and task != "ner":
        raise ValueError(f"--spans-key copies the entities of task ner, not {task}")
    if part is not None and not held_out:
        raise ValueError(f"--part {part} needs --held-out (e.g. 0.1: the last tenth of the "
                         "sentences is held out)")
    docs = read_gold(src, limit=limit, task=TASKS[task][0], held_out=held_out,
                     part=part or "held_out")
    for doc in docs:
        if task == "chunk":  # chunks never overlap: the same spans as entities
            doc.set_ents(list(doc.spans["chunks"]), default="outside")
        if spans_key is not None:
            doc.spans[spans_key] = list(doc.ents)
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
    ap.add_argument("--spans-key", default=None,
                    help="ner: the entities also in doc.spans[KEY] (a first stage's gold)")
    ap.add_argument("--held-out", type=float, default=0.0,
                    help="the file's last share of sentences (e.g. 0.1) or, with --part rest, "
                         "the others")
    ap.add_argument("--part", choices=("held_out", "rest"), default=None,
                    help="with --held-out: the held-out sentences (the default) or the rest")
    args = ap.parse_args(argv)
    try:
        counts = convert(args.task, args.src, args.dest, limit=args.limit,
                         spans_key=args.spans_key, held_out=args.held_out, part=args.part)
    except ValueError as e:
        ap.error(str(e))
    print(f"columns_to_docbin.py: {args.src} -> {args.dest}: {counts['docs']:,} sentences, "
          f"{counts['tokens']:,} tokens, {counts['spans']:,} {TASKS[args.task][1]}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
