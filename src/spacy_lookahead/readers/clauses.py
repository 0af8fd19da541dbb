"""Reader and writer for the CoNLL-2001 clause format: `WORD POS CHUNK CLAUSE`
per line, a blank line after each sentence. The CLAUSE column opens clauses
with `(S` and closes them with `S)` around a `*`: `(S*`, `*S)`, `(S(S*`,
`*S)S)`, `(S*S)`, `*`.

Each sentence becomes one `Example`: POS tags in `tag_` and the chunks (IOB2)
in `spans[chunks_key]` of both docs (inputs), the clauses in
`reference.spans[clauses_key]` (the target), nested spans in one group.
"""
import re
from pathlib import Path
from typing import Callable, Iterable, Iterator, List, Tuple, Union

from spacy.language import Language
from spacy.tokens import Doc, Span, SpanGroup
from spacy.training import Example
from spacy.util import registry
from spacy.vocab import Vocab

from .columns import FileCorpus, _spans_or_error, read_sentences
from .tags import doc_to_iob

PathLike = Union[str, Path]
_CLAUSE = re.compile(r"^((?:\([^()*\s]+)*)\*((?:[^()*\s]+\))*)$")
_OPEN = re.compile(r"\(([^()*\s]+)")
_CLOSE = re.compile(r"([^()*\s]+)\)")


def parse_clauses(column: List[str]) -> List[Tuple[int, int, str]]:
    """(start, end exclusive, label) of the bracketed clauses of one
    sentence. Raises ValueError(index, message) on a malformed or unbalanced
    column, index being the 0-based token."""
    stack: List[Tuple[int, str]] = []
    spans = []
    for i, field in enumerate(column):
        match = _CLAUSE.match(field)
        if match is None:
            raise _BracketError(i, f"malformed clause field {field!r} (expected e.g. '(S*', '*S)', '*')")
        for label in _OPEN.findall(match.group(1)):
            stack.append((i, label))
        for label in _CLOSE.findall(match.group(2)):
            if not stack:
                raise _BracketError(i, f"'{label})' closes a clause that was never opened")
            start, open_label = stack.pop()
            if open_label != label:
                raise _BracketError(i, f"'{label})' closes a '({open_label}' clause")
            spans.append((start, i + 1, label))
    if stack:
        start, label = stack[-1]
        raise _BracketError(start, f"'({label}' is never closed in its sentence")
    return spans


class _BracketError(ValueError):
    def __init__(self, index: int, message: str) -> None:
        super().__init__(message)
        self.index = index


def clause_column(spans: Iterable[Span], n: int) -> List[str]:
    """The CLAUSE column of n tokens for (possibly nested) spans: at a token,
    the clauses that start there open outermost first, those that end there
    close innermost first."""
    opens: List[List[Tuple[int, str]]] = [[] for _ in range(n)]
    closes: List[List[Tuple[int, str]]] = [[] for _ in range(n)]
    for span in spans:
        opens[span.start].append((span.end, span.label_))
        closes[span.end - 1].append((span.start, span.label_))
    column = []
    for i in range(n):
        head = "".join(f"({label}" for _, label in sorted(opens[i], key=lambda x: -x[0]))
        tail = "".join(f"{label})" for _, label in sorted(closes[i], key=lambda x: -x[0]))
        column.append(f"{head}*{tail}")
    return column


class ClauseCorpus(FileCorpus):
    """Iterate over a CoNLL-2001 file as Examples: a callable taking the
    `Language` object, as `spacy.Corpus` is. limit: examples to yield (0: all)."""

    def __init__(self, path: PathLike, *, clauses_key: str = "clauses", chunks_key: str = "chunks",
                 limit: int = 0) -> None:
        if path is None:
            raise ValueError("corpus path is None: set it in the config (e.g. [paths] train)")
        self.path = Path(path)
        self.clauses_key = clauses_key
        self.chunks_key = chunks_key
        self.limit = limit

    def read(self, vocab: Vocab) -> Iterator[Example]:
        self._check_file()
        for rows in read_sentences(self.path, 4, {2: "iob2"}):
            words = [fields[0] for _, _, fields in rows]
            tags = [fields[1] for _, _, fields in rows]
            chunk_tags = [fields[2] for _, _, fields in rows]
            try:
                clauses = parse_clauses([fields[3] for _, _, fields in rows])
            except _BracketError as err:
                lineno, line, _ = rows[err.index]
                raise ValueError(f"{self.path}:{lineno}: {err}: {line!r}") from None
            predicted = Doc(vocab, words=words, tags=tags)
            reference = Doc(vocab, words=words, tags=tags)
            for doc in (predicted, reference):
                doc.spans[self.chunks_key] = _spans_or_error(self.path, rows, doc, chunk_tags, "iob2")
            reference.spans[self.clauses_key] = SpanGroup(
                reference, name=self.clauses_key,
                spans=[Span(reference, s, e, label=label) for s, e, label in clauses])
            yield Example(predicted, reference)


@registry.readers("spacy_lookahead.conll2001.v1")
def create_conll2001_reader(path: PathLike, clauses_key: str = "clauses", chunks_key: str = "chunks",
                            limit: int = 0) -> Callable[[Language], Iterable[Example]]:
    """CoNLL-2001 clause identification (`WORD POS CHUNK CLAUSE`): gold clauses
    in `reference.spans[clauses_key]`; POS tags in `tag_` and chunks in
    `spans[chunks_key]` of both docs (inputs of the clause finder)."""
    return ClauseCorpus(path, clauses_key=clauses_key, chunks_key=chunks_key, limit=limit)


def write_clauses(docs: Iterable[Doc], path: PathLike, *, clauses_key: str = "clauses",
                  chunks_key: str = "chunks") -> int:
    """Write docs in the CoNLL-2001 format (tag_, spans[chunks_key] as IOB2,
    spans[clauses_key] as brackets); returns the number of sentences. The
    reader reads the file back to the same annotation."""
    n = 0
    with Path(path).open("w", encoding="utf8") as file_:
        for doc in docs:
            for key in (chunks_key, clauses_key):
                if key not in doc.spans:
                    raise ValueError(f"doc has no doc.spans[{key!r}]: {doc.text[:60]!r}. "
                                     "Run the chunker and clause finder first.")
            chunks = doc_to_iob(doc, list(doc.spans[chunks_key]), "iob2")
            clauses = clause_column(doc.spans[clauses_key], len(doc))
            file_.writelines(f"{token.text} {token.tag_ or '_'} {chunk} {clause}\n" for token, chunk, clause in zip(doc, chunks, clauses))
            file_.write("\n")
            n += 1
    return n
