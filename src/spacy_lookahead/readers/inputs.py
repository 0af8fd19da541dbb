"""A DocBin reader that keeps the gold *input* annotation on the predicted
docs: POS tags for the chunker and a stand-alone parser, POS tags and chunks
for the clause finder. The outputs (heads, chunks of a chunker, clauses,
entities) stay on the reference only, so `Language.evaluate` scores the
component on gold inputs -- the benchmarks' "gold POS" setting -- and never
hands it its own answers.

spaCy's `Corpus` builds the predicted docs from the words alone; here it
reads the DocBin (sentence splitting, `limit`, `max_length` are spaCy's) and
this module's augmenter rebuilds each predicted doc from the reference's
tokens plus the named inputs.

With `inputs_path`, the inputs come from a second DocBin of the same docs
in the same order instead of the gold: e.g. jackknifed POS tags
(`python -m spacy_lookahead jackknife`), so that a parser trains on the
kind of tags it will see. The two corpora are read side by side and a
mismatch in the words is an error."""
from itertools import zip_longest
from pathlib import Path
from typing import Callable, Iterable, Iterator, List, Optional, Sequence, Union

from spacy.language import Language
from spacy.tokens import Doc, Span
from spacy.training import Corpus, Example
from spacy.util import registry

# input name -> (Doc() argument, token attribute, annotation name for has_annotation)
# (sent_starts: the gold sentence boundaries, for arc_standard_parser's
# respect_sent_starts)
TOKEN_INPUTS = {"tag": ("tags", "tag_", "TAG"), "pos": ("pos", "pos_", "POS"),
                "morph": ("morphs", "morph", "MORPH"), "lemma": ("lemmas", "lemma_", "LEMMA"),
                "sent_starts": ("sent_starts", "is_sent_start", "SENT_START")}
# input name -> the doc.user_data keys it is kept in (per-token arrays)
USER_DATA_INPUTS = {"tag_alternatives": ("tag_alternative", "tag_alternative_prob")}


class KeepInputs:
    """Corpus augmenter: the example again, its predicted doc made of the
    reference's tokens and the named inputs: token attributes (`tag`, `pos`,
    `morph`, `lemma`), a tagger's `tag_alternatives` (doc.user_data) or
    span-group keys (e.g. `chunks`)."""

    def __init__(self, inputs: Sequence[str]) -> None:
        if isinstance(inputs, str) or not inputs:
            raise ValueError(f"keep_inputs: `inputs` must be a non-empty list of names, got "
                             f"{inputs!r}: e.g. [\"tag\"] or [\"tag\", \"chunks\"] (token attributes "
                             f"{', '.join(TOKEN_INPUTS)}, {', '.join(USER_DATA_INPUTS)}, or "
                             "span-group keys)")
        self.inputs = list(inputs)

    def __call__(self, nlp: Language, example: Example) -> Iterator[Example]:
        yield Example(self.predicted(nlp, example.reference), example.reference)

    def predicted(self, nlp: Language, ref: Doc) -> Doc:
        args = {}
        for name in self.inputs:
            if name in TOKEN_INPUTS:
                arg, attr, annotation = TOKEN_INPUTS[name]
                if not ref.has_annotation(annotation):
                    raise ValueError(f"keep_inputs: the input {name!r} is missing from a gold doc "
                                     f"({ref.text[:60]!r}): convert the data with its {annotation} "
                                     "annotation, or drop it from `inputs`")
                values = [getattr(t, attr) for t in ref]
                args[arg] = values if name == "sent_starts" else [str(v) for v in values]
        doc = Doc(nlp.vocab, words=[t.text for t in ref], spaces=[bool(t.whitespace_) for t in ref],
                  **args)
        for name in self.inputs:
            if name in TOKEN_INPUTS:
                continue
            if name in USER_DATA_INPUTS:
                for key in USER_DATA_INPUTS[name]:
                    if key not in ref.user_data:
                        raise ValueError(f"keep_inputs: the input {name!r} is missing from a doc "
                                         f"({ref.text[:60]!r}): make the docs with a tagger with "
                                         "alternatives = true (e.g. python -m spacy_lookahead "
                                         "jackknife ... --components.lookahead_tagger.alternatives "
                                         "true), or drop it from `inputs`")
                    doc.user_data[key] = ref.user_data[key]
                continue
            if name not in ref.spans:
                raise ValueError(f"keep_inputs: a gold doc has no span group {name!r} "
                                 f"(it has {sorted(ref.spans) or 'none'}): name an input the "
                                 f"data has ({', '.join(TOKEN_INPUTS)} or a span-group key)")
            doc.spans[name] = [Span(doc, s.start, s.end, label=s.label_) for s in ref.spans[name]]
        return doc


class PerTokenUserData(Corpus):
    """spaCy's Corpus whose sentence docs keep the per-token arrays of
    doc.user_data (USER_DATA_INPUTS), sliced to the sentence, and every
    span group of their doc with its spans in the sentence (empty where it
    has none: an empty group is not a missing one): Span.as_doc drops both.
    Otherwise the same examples, in the same order."""

    def _sentence(self, reference: Doc, start: int, end: int) -> Doc:
        doc = reference[start:end].as_doc()
        for name, group in reference.spans.items():
            doc.spans[name] = [Span(doc, s.start - start, s.end - start, label=s.label_)
                               for s in group if start <= s.start and s.end <= end]
        for keys in USER_DATA_INPUTS.values():
            for key in keys:
                values = reference.user_data.get(key)
                if values is not None and len(values) == len(reference):
                    doc.user_data[key] = values[start:end]
        return doc

    def make_examples_gold_preproc(self, nlp: Language, reference_docs: Iterable[Doc]
                                   ) -> Iterator[Example]:
        for reference in reference_docs:
            if reference.has_annotation("SENT_START"):
                sents = [self._sentence(reference, s.start, s.end) for s in reference.sents]
            else:
                sents = [reference]
            for sent in sents:
                eg = self._make_example(nlp, sent, True)
                if len(eg.x):
                    yield eg

    def make_examples(self, nlp: Language, reference_docs: Iterable[Doc]) -> Iterator[Example]:
        for reference in reference_docs:
            if len(reference) == 0:
                continue
            if self.max_length == 0 or len(reference) < self.max_length:
                yield self._make_example(nlp, reference, False)
            elif reference.has_annotation("SENT_START"):
                for s in reference.sents:
                    if len(s) and (self.max_length == 0 or len(s) < self.max_length):
                        yield self._make_example(nlp, self._sentence(reference, s.start, s.end),
                                                 False)


class InputsFrom:
    """Examples of the gold corpus whose predicted docs take the `inputs`
    from a second corpus of the same docs (read in step with the first)."""

    def __init__(self, gold: Corpus, source: Corpus, keep: KeepInputs, inputs_path: Path) -> None:
        self.gold, self.source, self.keep, self.inputs_path = gold, source, keep, inputs_path

    def __call__(self, nlp: Language) -> Iterator[Example]:
        for k, (eg, src) in enumerate(zip_longest(self.gold(nlp), self.source(nlp))):
            if eg is None or src is None:
                raise ValueError(f"keep_inputs: {self.inputs_path} has "
                                 f"{'more' if eg is None else 'fewer'} docs than the corpus "
                                 f"(first difference at example {k}): make it from the same "
                                 "corpus (e.g. with python -m spacy_lookahead jackknife)")
            words = [t.text for t in eg.reference]
            if [t.text for t in src.reference] != words:
                raise ValueError(f"keep_inputs: example {k} of {self.inputs_path} has other words "
                                 f"than the corpus ({' '.join(words)[:60]!r}): make it from the "
                                 "same corpus, in the same order, with the same limit and max_length")
            yield Example(self.keep.predicted(nlp, src.reference), eg.reference)


@registry.readers("spacy_lookahead.keep_inputs.v1")
def create_keep_inputs_reader(path: Union[str, Path], inputs: List[str], gold_preproc: bool = True,
                              limit: int = 0, max_length: int = 0,
                              inputs_path: Optional[Union[str, Path]] = None
                              ) -> Callable[[Language], Iterable[Example]]:
    """spaCy's Corpus over a DocBin with the gold `inputs` copied onto the
    predicted docs (gold tokenisation; `gold_preproc` splits into sentences);
    with `inputs_path`, the inputs of the same docs in that DocBin instead
    (e.g. jackknifed tags)."""
    keep = KeepInputs(inputs)
    if inputs_path is None:
        return PerTokenUserData(path, gold_preproc=gold_preproc, limit=limit,
                                max_length=max_length, augmenter=keep)
    if not Path(inputs_path).exists():
        raise ValueError(f"keep_inputs: inputs_path {inputs_path} not found: make it first "
                         "(e.g. python -m spacy_lookahead jackknife CONFIG TRAIN.spacy "
                         f"{inputs_path})")
    return InputsFrom(PerTokenUserData(path, gold_preproc=gold_preproc, limit=limit,
                                       max_length=max_length),
                      PerTokenUserData(inputs_path, gold_preproc=gold_preproc, limit=limit,
                                       max_length=max_length), keep, Path(inputs_path))
