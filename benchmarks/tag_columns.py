"""Add a POS column, tagged by a trained tagger, to a JNLPBA-style column file.

    python -m benchmarks.tag_columns TAGGER_MODEL IN.iob2 OUT.iob2

IN has `word<TAB>entity` lines (IOB2); OUT gets `word POS entity` lines,
the POS tags from TAGGER_MODEL (e.g. the EWT tagger: a tagger that never
saw the file, so train and test are tagged alike), for an NER that reads
POS tags (`pos_features = true`, columns ["word", "pos", "ent"]). Prints
tokens/second and the peak memory.
"""
import argparse
import resource
import sys
import time

import spacy

from spacy_lookahead.readers.columns import create_iob_reader, write_columns


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model")
    ap.add_argument("source")
    ap.add_argument("output")
    ap.add_argument("--batch-size", type=int, default=1000)
    args = ap.parse_args(argv)
    nlp = spacy.load(args.model)
    examples = list(create_iob_reader(args.source)(nlp))
    start = time.perf_counter()
    tagged = list(nlp.pipe((eg.predicted for eg in examples), batch_size=args.batch_size))
    seconds = time.perf_counter() - start
    out = []
    for doc, eg in zip(tagged, examples):
        gold = eg.reference.copy()
        for token, tag in zip(gold, doc):
            token.tag_ = tag.tag_
        out.append(gold)
    n = write_columns(out, args.output, spans="ents", pos=True)
    tokens = sum(len(d) for d in out)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{n} sentences, {tokens} tokens tagged at {tokens / seconds:,.0f} tokens/s, "
          f"peak RSS {peak:.0f} MB -> {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
