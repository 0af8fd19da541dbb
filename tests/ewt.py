"""Slices of UD English EWT (from ../shared/data) as spaCy Examples."""
from functools import lru_cache
from typing import List

from spacy.tokens import Doc, DocBin
from spacy.training import Example
from spacy.training.converters import conllu_to_docs
from spacy.vocab import Vocab

from conftest import SHARED_DATA


@lru_cache(maxsize=None)
def _docs(split: str, limit: int):
    path = SHARED_DATA / "ud_ewt" / f"en_ewt-ud-{split}.conllu"
    text = path.read_text(encoding="utf8")
    docs = []
    for doc in conllu_to_docs(text, n_sents=1, no_print=True):
        docs.append(doc)
        if len(docs) >= limit:
            break
    return DocBin(docs=docs, attrs=["TAG", "POS"]).to_bytes()


def ewt_examples(vocab: Vocab, split: str, limit: int) -> List[Example]:
    """The first `limit` sentences of a split: gold tags on the reference,
    words only on the predicted doc (as spacy.Corpus.v1 gives them)."""
    docs = DocBin().from_bytes(_docs(split, limit)).get_docs(vocab)
    return [Example(_words_only(vocab, doc), doc) for doc in docs]


def _words_only(vocab: Vocab, doc: Doc) -> Doc:
    return Doc(vocab, words=[t.text for t in doc], spaces=[bool(t.whitespace_) for t in doc])
