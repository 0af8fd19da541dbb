"""CoNLL-X dependency files (`ID FORM LEMMA CPOSTAG POSTAG FEATS HEAD DEPREL
...`, tab-separated, a blank line after each sentence) to spaCy Docs, one
sentence per doc: `tag_` from POSTAG, heads and labels from HEAD/DEPREL.

spaCy's conllu converter would read the same columns but puts CPOSTAG into
`token.pos_`, which must be a Universal POS tag; the WSJ sample has PTB tags
there. Run as a script to write a DocBin:
`python -m spacy_lookahead.readers.conllx IN.conll OUT.spacy`."""
import sys
from pathlib import Path
from typing import Callable, Iterable, Iterator, List, Union

from spacy.language import Language
from spacy.tokens import Doc, DocBin
from spacy.training import Example
from spacy.util import registry
from spacy.vocab import Vocab

from .inputs import create_keep_inputs_reader


def read_conllx(path: Union[str, Path], vocab: Vocab) -> Iterator[Doc]:
    rows: List[List[str]] = []
    for line_no, line in enumerate(Path(path).read_text(encoding="utf8").splitlines(), 1):
        if not line.strip():
            if rows:
                yield _doc(vocab, rows, path, line_no)
                rows = []
            continue
        cols = line.split("\t")
        if len(cols) < 8:
            raise ValueError(f"{path}:{line_no}: expected 10 tab-separated CoNLL-X columns, "
                             f"got {len(cols)}")
        rows.append(cols)
    if rows:
        yield _doc(vocab, rows, path, line_no + 1)


def _doc(vocab: Vocab, rows: List[List[str]], path, line_no: int) -> Doc:
    n = len(rows)
    heads = []
    for k, cols in enumerate(rows):
        if cols[0] != str(k + 1) or not cols[6].isdigit() or int(cols[6]) > n:
            raise ValueError(f"{path}: sentence ending at line {line_no}: bad ID or HEAD in row {k + 1}")
        head = int(cols[6])
        heads.append(k if head == 0 else head - 1)
    deps = ["ROOT" if h == k else cols[7] for k, (h, cols) in enumerate(zip(heads, rows))]
    return Doc(vocab, words=[c[1] for c in rows], tags=[c[4] for c in rows], heads=heads,
               deps=deps, sent_starts=[True] + [False] * (n - 1))


@registry.readers("spacy_lookahead.gold_tags_corpus.v1")
def create_gold_tags_corpus(path: Union[str, Path], limit: int = 0,
                            max_length: int = 0) -> Callable[[Language], Iterable[Example]]:
    """The parser's "gold POS" setting, where the tags are an input at
    training and evaluation time: `spacy_lookahead.keep_inputs.v1` with
    inputs = ["tag"], sentence by sentence."""
    return create_keep_inputs_reader(path, inputs=["tag"], gold_preproc=True, limit=limit,
                                     max_length=max_length)


if __name__ == "__main__":
    src, dest = sys.argv[1:3]
    docs = list(read_conllx(src, Vocab()))
    DocBin(docs=docs, attrs=["ORTH", "TAG", "HEAD", "DEP", "SENT_START"]).to_disk(dest)
    print(f"{len(docs)} sentences -> {dest}")
