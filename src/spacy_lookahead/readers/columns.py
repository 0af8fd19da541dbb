"""Corpus readers and a writer for column files: CoNLL-2000 chunking
(`word POS chunk`), JNLPBA (`word<TAB>tag`), CoNLL-2003 (`word POS chunk ent`).

One token per line, columns separated by any whitespace, a blank line after
each sentence; `-DOCSTART-` and `###MEDLINE:` lines separate documents and
are skipped. Each sentence becomes one `Example` (`n_sents` joins several):

* the reference doc holds the gold annotation (chunks as a span group,
  entities as `doc.ents`) and the input columns;
* the predicted doc holds the words and the input columns only: `tag_` from
  a POS column and, for NER, the chunk column as `doc.spans["chunks"]`.
  `Language.evaluate` and `Language.update` copy the predicted doc with
  `Doc.copy()`, which keeps both, so the components see them as features.
"""
import itertools
import re
from pathlib import Path
from typing import Callable, Dict, Iterable, Iterator, List, Literal, Optional, Sequence, Tuple, Union, get_args

from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example
from spacy.util import registry
from spacy.vocab import Vocab

from .tags import TagError, check_scheme, doc_to_iob, get_spans, is_valid_tag, iob_to_spans

PathLike = Union[str, Path]
COLUMN_NAMES = ("word", "pos", "chunk", "ent", "_")
SKIP_PREFIXES = ("-DOCSTART-", "###MEDLINE:")
_WHITESPACE = re.compile(r"\s+")

Row = Tuple[int, str, List[str]]  # (1-based line number, line, fields)


def read_sentences(path: PathLike, n_columns: int,
                   tag_columns: Optional[Dict[int, str]] = None) -> Iterator[List[Row]]:
    """Yield the sentences of a column file as lists of rows. A line with
    the wrong number of columns or a malformed tag in one of `tag_columns`
    (column index -> scheme) raises ValueError naming the file, the 1-based
    line number and the line."""
    path = Path(path)
    rows: List[Row] = []
    with path.open(encoding="utf8") as file_:
        for lineno, line in enumerate(file_, 1):
            line = line.rstrip("\r\n")
            if not line.strip() or line.startswith(SKIP_PREFIXES):
                if rows:
                    yield rows
                    rows = []
                continue
            fields = _WHITESPACE.split(line.strip())
            if len(fields) != n_columns:
                raise ValueError(f"{path}:{lineno}: expected {n_columns} columns, "
                                 f"found {len(fields)}: {line!r}")
            for i, scheme in (tag_columns or {}).items():
                if not is_valid_tag(fields[i], scheme):
                    raise ValueError(f"{path}:{lineno}: malformed {scheme.upper()} tag "
                                     f"{fields[i]!r} in column {i + 1}: {line!r}")
            rows.append((lineno, line, fields))
    if rows:
        yield rows


def _spans_or_error(path: Path, rows: List[Row], doc: Doc, tags: List[str], scheme: str):
    try:
        return iob_to_spans(doc, tags, scheme)
    except TagError as err:  # only BILUO sequences can be invalid; IOB is always repaired
        lineno, line, _ = rows[err.index]
        raise ValueError(f"{path}:{lineno}: {err}: {line!r}") from None


Part = Literal["all", "rest", "held_out"]
PARTS = get_args(Part)


def join_sentences(examples: Iterable[Example], n_sents: int) -> Iterator[Example]:
    """Examples of n_sents sentences in a row each (the last may have fewer):
    both docs joined by Doc.from_docs, which keeps the annotation and marks
    each sentence's start."""
    examples = iter(examples)
    while True:
        group = list(itertools.islice(examples, n_sents))
        if not group:
            return
        if len(group) == 1:
            yield group[0]
            continue
        yield Example(Doc.from_docs([eg.predicted for eg in group]),
                      Doc.from_docs([eg.reference for eg in group]))


def count_sentences(path: PathLike) -> int:
    """The number of sentences read_sentences yields from a file, without
    splitting its lines."""
    n, in_sentence = 0, False
    with Path(path).open(encoding="utf8") as file_:
        for line in file_:
            ends = not line.strip() or line.startswith(SKIP_PREFIXES)
            if ends and in_sentence:
                n += 1
            in_sentence = not ends
    return n + in_sentence


class FileCorpus:
    """A corpus read from one file, as a spaCy reader: at most `limit`
    examples (0: all). Subclasses set `path` and `limit` and define read().

    For a data set without a development split (CoNLL-2000, JNLPBA), the
    last `held_out` share of the file's sentences is a fixed dev set: `part`
    = "rest" reads the others (train on them), "held_out" reads those (select
    models on them), "all" the whole file. The last sentences, not every
    k-th: the held-out ones then come from other documents than the rest.

    `n_sents` > 1 joins that many sentences in a row into one doc (as
    `spacy convert -n`), so that what a component reads from the rest of
    the document (the `doc` templates, systems/templates.py) sees them: for
    a data set without document markers (the JNLPBA files), about one
    abstract's worth. The held-out part is cut first, in sentences."""

    path: Path
    limit: int
    held_out: float = 0.0
    part: str = "all"
    n_sents: int = 1

    def _set_part(self, held_out: float, part: str) -> None:
        if part not in PARTS:
            raise ValueError(f"part must be one of {PARTS}, got {part!r}")
        if isinstance(held_out, bool) or not isinstance(held_out, (int, float)) \
                or not 0.0 <= held_out < 1.0:
            raise ValueError(f"held_out must be a share of the sentences in [0, 1), got {held_out!r}")
        if part != "all" and held_out == 0.0:
            raise ValueError(f"part = {part!r} needs held_out > 0 (e.g. 0.1: the last tenth of the "
                             "sentences is held out)")
        self.held_out, self.part = float(held_out), part

    def __call__(self, nlp: Language) -> Iterator[Example]:
        examples = self.read(nlp.vocab)
        if self.part != "all":
            total = count_sentences(self.path)
            cut = total - round(total * self.held_out)
            first, stop = (0, cut) if self.part == "rest" else (cut, total)
            examples = itertools.islice(examples, first, stop)
        if self.n_sents > 1:
            examples = join_sentences(examples, self.n_sents)
        for i, example in enumerate(examples):
            if self.limit >= 1 and i >= self.limit:
                break
            yield example

    def read(self, vocab: Vocab) -> Iterator[Example]:
        raise NotImplementedError

    def _set_n_sents(self, n_sents: int) -> None:
        if isinstance(n_sents, bool) or not isinstance(n_sents, int) or n_sents < 1:
            raise ValueError(f"n_sents must be a whole number of sentences per doc, at least 1, "
                             f"got {n_sents!r}")
        self.n_sents = n_sents

    def _check_file(self) -> None:
        if not self.path.is_file():
            raise FileNotFoundError(f"corpus file not found: {self.path}")


class ColumnCorpus(FileCorpus):
    """Iterate over a column file as Examples, one per sentence: a callable
    taking the `Language` object, as `spacy.Corpus` is.

    columns: the name of each column: "word", "pos", "chunk", "ent" or "_".
    target: "chunk" (gold chunks in `reference.spans[spans_key]`) or "ent"
        (gold entities in `reference.ents`; a chunk column then goes to
        `spans[spans_key]` of both docs, as an input).
    scheme: "iob2" or "iob1" (decoded alike, as conlleval does) or "biluo".
    limit: the number of examples to yield (0: all).
    held_out, part: a fixed dev set from the end of the file (FileCorpus).
    """

    def __init__(self, path: PathLike, columns: Sequence[str], target: str, *,
                 scheme: str = "iob2", spans_key: str = "chunks", limit: int = 0,
                 held_out: float = 0.0, part: Part = "all", n_sents: int = 1) -> None:
        if path is None:
            raise ValueError("corpus path is None: set it in the config (e.g. [paths] train)")
        columns = list(columns)
        unknown = [c for c in columns if c not in COLUMN_NAMES]
        if unknown:
            raise ValueError(f"unknown column names {unknown}: use {COLUMN_NAMES}")
        for name in ("word", "pos", "chunk", "ent"):
            if columns.count(name) > 1:
                raise ValueError(f"column {name!r} named more than once in {columns}")
        if "word" not in columns:
            raise ValueError(f"no 'word' column in {columns}")
        if target not in ("chunk", "ent"):
            raise ValueError(f"target must be 'chunk' or 'ent', got {target!r}")
        if target not in columns:
            raise ValueError(f"no {target!r} column (the gold annotation) in {columns}")
        self.path = Path(path)
        self.columns = columns
        self.target = target
        self.scheme = check_scheme(scheme)
        self.spans_key = spans_key
        self.limit = limit
        self._set_part(held_out, part)
        self._set_n_sents(n_sents)

    def read(self, vocab: Vocab) -> Iterator[Example]:
        self._check_file()
        col = {name: i for i, name in enumerate(self.columns) if name != "_"}
        tag_columns = {col[name]: self.scheme for name in ("chunk", "ent") if name in col}
        for rows in read_sentences(self.path, len(self.columns), tag_columns):
            words = [fields[col["word"]] for _, _, fields in rows]
            tags = [fields[col["pos"]] for _, _, fields in rows] if "pos" in col else None
            predicted = Doc(vocab, words=words, tags=tags)
            reference = Doc(vocab, words=words, tags=tags)
            if "chunk" in col:
                chunk_tags = [fields[col["chunk"]] for _, _, fields in rows]
                docs = (reference,) if self.target == "chunk" else (reference, predicted)
                for doc in docs:
                    doc.spans[self.spans_key] = _spans_or_error(self.path, rows, doc, chunk_tags, self.scheme)
            if self.target == "ent":
                ent_tags = [fields[col["ent"]] for _, _, fields in rows]
                reference.set_ents(_spans_or_error(self.path, rows, reference, ent_tags, self.scheme),
                                   default="outside")
            yield Example(predicted, reference)


@registry.readers("spacy_lookahead.conll2000.v1")
def create_conll2000_reader(path: PathLike, spans_key: str = "chunks", limit: int = 0,
                            held_out: float = 0.0, part: Part = "all", n_sents: int = 1
                            ) -> Callable[[Language], Iterable[Example]]:
    """CoNLL-2000 chunking (`word POS chunk`, IOB2 or IOB1): gold chunks in
    `reference.spans[spans_key]`; POS tags (an input) in `tag_` of both docs.
    held_out, part: "rest" / "held_out" split off the file's last sentences
    as a dev set (the data set has none). n_sents: sentences per doc."""
    return ColumnCorpus(path, ["word", "pos", "chunk"], "chunk", spans_key=spans_key, limit=limit,
                        held_out=held_out, part=part, n_sents=n_sents)


@registry.readers("spacy_lookahead.iob.v1")
def create_iob_reader(path: PathLike, columns: Sequence[str] = ("word", "ent"), scheme: str = "iob2",
                      chunks_key: str = "chunks", limit: int = 0, held_out: float = 0.0,
                      part: Part = "all", n_sents: int = 1
                      ) -> Callable[[Language], Iterable[Example]]:
    """NER in IOB columns (JNLPBA: ["word", "ent"]; CoNLL-2003: ["word",
    "pos", "chunk", "ent"]; "_" ignores a column): gold entities in
    `reference.ents`; a POS column goes to `tag_` and a chunk column to
    `doc.spans[chunks_key]` of both docs (input features). scheme: "iob2",
    "iob1" (both decoded as conlleval does) or "biluo" (strict). held_out,
    part: "rest" / "held_out" split off the file's last sentences as a dev
    set (JNLPBA has none). n_sents: sentences per doc (JNLPBA's abstracts
    have about 10)."""
    return ColumnCorpus(path, columns, "ent", scheme=scheme, spans_key=chunks_key, limit=limit,
                        held_out=held_out, part=part, n_sents=n_sents)


def write_columns(docs_or_examples: Iterable[Union[Doc, Example]], path: PathLike, *,
                  spans: str = "chunks", pos: Optional[bool] = None, scheme: str = "iob2",
                  sep: str = " ") -> int:
    """Write docs or examples as a column file and return the number of sentences.

    spans: "ents" for `doc.ents`, otherwise the name of a span group.
    Examples give `word [POS] gold pred` lines (gold from the reference,
    pred from the predicted doc), the input of the `conlleval` script; docs
    give `word [POS] tag`, which the readers read back. pos: write the POS
    column (`tag_`, "_" where empty); None writes it for span groups (the
    CoNLL-2000 layout) and for "ents" when the first doc has tags.
    scheme: "iob2" (default) or "iob1". A blank line ends each sentence.
    """
    if scheme not in ("iob1", "iob2"):
        raise ValueError(f"scheme must be 'iob1' or 'iob2' (conlleval's input), got {scheme!r}")
    n = 0
    with Path(path).open("w", encoding="utf8") as file_:
        for item in docs_or_examples:
            if isinstance(item, Example):
                docs = [item.reference, item.predicted]
                if [t.text for t in item.reference] != [t.text for t in item.predicted]:
                    raise ValueError("write_columns needs examples whose predicted and reference "
                                     f"docs have the same tokens: {item.reference.text[:60]!r}")
            else:
                docs = [item]
            if pos is None:
                pos = spans != "ents" or docs[0].has_annotation("TAG")
            tag_doc = docs[-1] if docs[-1].has_annotation("TAG") else docs[0]
            columns = [[t.text for t in docs[0]]]
            if pos:
                columns.append([t.tag_ or "_" for t in tag_doc])
            columns.extend(doc_to_iob(doc, get_spans(doc, spans), scheme) for doc in docs)
            for fields in zip(*columns):
                file_.write(sep.join(fields) + "\n")
            file_.write("\n")
            n += 1
    return n
