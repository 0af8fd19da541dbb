"""Clause data for the tests: two hand-made sentences of nested clauses,
and slices of the WSJ clause sample (CoNLL-2001 layout)."""
from spacy_lookahead.readers.clauses import ClauseCorpus

NESTED = """\
He PRP B-NP (S*
said VBD B-VP *
that IN B-SBAR (S*
she PRP B-NP (S*
left VBD B-VP *S)S)
, , O *
and CC O *
smiled VBD B-VP (S*S)
. . O *S)

Go VB B-VP (S*S)

"""


def wsj(shared_data, vocab, split, limit=0):
    corpus = ClauseCorpus(shared_data / "wsj_clauses" / f"{split}.txt")
    return [eg for _, eg in zip(range(limit or 10 ** 9), corpus.read(vocab))]
