"""Dependency-parsing slices of the shared data as spaCy Examples: gold tree
and tags on the reference, words only on the predicted doc (as
spacy.Corpus.v1 gives them)."""
from functools import lru_cache
from typing import List

from spacy.tokens import Doc, DocBin
from spacy.training import Example
from spacy.training.converters import conllu_to_docs
from spacy.vocab import Vocab

from conftest import SHARED_DATA
from spacy_lookahead.readers.conllx import read_conllx

ATTRS = ["ORTH", "TAG", "HEAD", "DEP", "SENT_START"]


@lru_cache(maxsize=None)
def _bytes(corpus: str, split: str, limit: int) -> bytes:
    if corpus == "ewt":
        text = (SHARED_DATA / "ud_ewt" / f"en_ewt-ud-{split}.conllu").read_text(encoding="utf8")
        docs = conllu_to_docs(text, n_sents=1, no_print=True)
    else:
        docs = read_conllx(SHARED_DATA / "wsj_dep_sample" / f"{split}.conll", Vocab())
    out = []
    for doc in docs:
        out.append(doc)
        if len(out) >= limit:
            break
    return DocBin(docs=out, attrs=ATTRS).to_bytes()


def gold_docs(vocab: Vocab, corpus: str, split: str, limit: int = 10 ** 9) -> List[Doc]:
    return list(DocBin().from_bytes(_bytes(corpus, split, limit)).get_docs(vocab))


def words_only(vocab: Vocab, doc: Doc, tags: bool = False) -> Doc:
    return Doc(vocab, words=[t.text for t in doc], spaces=[bool(t.whitespace_) for t in doc],
               tags=[t.tag_ for t in doc] if tags else None)


def parse_examples(vocab: Vocab, corpus: str, split: str, limit: int,
                   n_sents: int = 1) -> List[Example]:
    """`limit` sentences, `n_sents` per doc (as `spacy convert -n`)."""
    docs = gold_docs(vocab, corpus, split, limit)
    if n_sents > 1:
        docs = [Doc.from_docs(docs[i:i + n_sents]) for i in range(0, len(docs), n_sents)]
    return [Example(words_only(vocab, d), d) for d in docs]
