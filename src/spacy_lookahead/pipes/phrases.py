"""`fr_clause_finder` and `fr_chunker`: filtering-ranking phrase recognition
trained with the FR-Perceptron (Carreras, Marquez & Castro 2005).

The clause finder writes nested clauses to doc.spans["clauses"] from words,
POS tags and chunks (CoNLL-2001, bottom-up DP); the chunker writes chunks to
doc.spans["chunks"] from words and POS tags (CoNLL-2000, left-to-right DP).
"""
import warnings
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

import numpy
from spacy.language import Language
from spacy.tokens import Doc, Span, SpanGroup
from spacy.training import Example
from spacy.vocab import Vocab

from ..core.batch import thread_count
from ..core.threads import RunsStarted, ranges_by_cost
from ..core.fr_perceptron import FEEDBACKS, fr_perceptron, recognise
from ..core.weights import Weights
from ..spacy_io import LexemeAtoms, in_vocab, sentence_units, write_phrases
from ..systems.phrases import PhraseSystem, UnitsJob, unit_costs
from .base import LOOKS_UP, LOOKUP_AGAIN_MOST, MAKES_WORDS, SearchPipe
from .settings import Feedback, check_threads, config_error
from .spaces import compact_input, compact_spans, content_index

# A doc longer than this many words and without sentence boundaries is
# decoded as one unit: one warning says how to split it.
LONG_UNIT = 1000
# The longest candidate phrase by default: it bounds the DP's cost per word
# (time O(n L^2), memory O(n L)), so any doc costs the same per word. Clauses:
# L = 80 loses 4 of the 11,037 gold clauses of wsj_clauses train+dev (0.04%;
# the longest dev clause has 58 words; dev F1 for L in 0, 50..100 is within
# seed noise) at 9.4 ms and 2.7 MB per 1k words at 100k words in one doc
# (L = 0: 184 ms per 1k words already at 1k). Chunks: L = 20 loses none of
# CoNLL-2000's training chunks (the longest has 15 words).
CLAUSE_MAX_LENGTH = 80
CHUNK_MAX_LENGTH = 20


class Phrases(Sequence):
    """predict()'s phrases of a batch: every doc's in one array, `rows`
    (M, 3) int32 (start, end inclusive, type), doc k's at
    rows[offsets[k]:offsets[k + 1]]; phrases[k] is doc k's."""

    def __init__(self, rows: numpy.ndarray, offsets: numpy.ndarray) -> None:
        self.rows = rows
        self.offsets = offsets

    @classmethod
    def of(cls, per_doc: List[numpy.ndarray]) -> "Phrases":
        """From each doc's rows."""
        per_doc = [numpy.asarray(r, dtype="int32").reshape((-1, 3)) for r in per_doc]
        offsets = numpy.zeros((len(per_doc) + 1,), dtype="int64")
        numpy.cumsum([len(r) for r in per_doc], out=offsets[1:])
        rows = numpy.concatenate(per_doc) if per_doc else numpy.zeros((0, 3), dtype="int32")
        return cls(rows, offsets)

    def replaced(self, docs: numpy.ndarray, others: "Phrases") -> "Phrases":
        """These phrases with those of the docs at places `docs` (int,
        rising) taken from `others` (one doc each, in that order) instead;
        per batch, no Python per doc."""
        docs = numpy.asarray(docs, dtype="int64")
        if len(others) != len(docs):
            raise ValueError(f"Phrases.replaced: {len(others)} docs' phrases for {len(docs)} places: "
                             "give one doc's phrases per place")
        n_self, n_other = numpy.diff(self.offsets), numpy.diff(others.offsets)
        keep = numpy.ones((len(self),), dtype=bool)
        keep[docs] = False
        counts = numpy.where(keep, n_self, 0)
        counts[docs] = n_other
        offsets = numpy.zeros_like(self.offsets)
        numpy.cumsum(counts, out=offsets[1:])
        rows = numpy.empty((int(offsets[-1]), 3), dtype="int32")
        doc = numpy.repeat(numpy.arange(len(self)), n_self)  # each row's doc
        kept = keep[doc]
        doc = doc[kept]
        rows[offsets[doc] + numpy.flatnonzero(kept) - self.offsets[doc]] = self.rows[kept]
        k = numpy.repeat(numpy.arange(len(others)), n_other)
        rows[offsets[docs[k]] + numpy.arange(len(others.rows)) - others.offsets[k]] = others.rows
        return Phrases(rows, offsets)

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def __getitem__(self, k: int) -> numpy.ndarray:
        if not -len(self) <= k < len(self):
            raise IndexError(k)
        k %= len(self)
        return self.rows[self.offsets[k]:self.offsets[k + 1]]


def validate_fr_settings(name: str, feedback: Any, max_length: Any, **keys: Any) -> None:
    """Raise on wrong config values, naming the setting and what it accepts."""
    if feedback not in FEEDBACKS:
        raise config_error(name, "feedback", f"[{name}] feedback must be one of {FEEDBACKS} (recognition = the "
                         f"FR-Perceptron of Figure 1, classification = the CO-VP baseline), "
                         f"got {feedback!r}")
    if not isinstance(max_length, int) or isinstance(max_length, bool) or max_length < 0:
        raise config_error(name, "max_length", f"[{name}] max_length must be an integer >= 0 (0: no limit on the "
                         f"length of a candidate phrase), got {max_length!r}")
    for key, value in keys.items():
        if not isinstance(value, str) or not value:
            raise config_error(name, key, f"[{name}] {key} must be a non-empty span group name, got {value!r}")


class PhrasePipe(SearchPipe):
    """Shared by both components: inputs, gold phrases, the FR system,
    the online pass and the filters' statistics (the paper's Figure 5)."""

    embedded = False
    feature_set = "chunk"

    def __init__(self, vocab: Vocab, name: str, *, feedback: str, max_length: int, spans_key: str,
                 n_threads: int, scorer: Optional[Callable], **settings: Any) -> None:
        validate_fr_settings(name, feedback, max_length, spans_key=spans_key,
                             **{k: v for k, v in settings.items() if k.endswith("_key")})
        check_threads(name, n_threads)
        super().__init__(vocab, name, scorer=scorer, feedback=feedback, max_length=max_length,
                         spans_key=spans_key, n_threads=n_threads, **settings)
        self._atoms = LexemeAtoms()
        self._system: Optional[PhraseSystem] = None

    def weight_classes(self) -> Optional[int]:
        """Each phrase type's start filter, end filter and phrase score."""
        return 3 * len(self.labels) if self.labels else None

    @property
    def system(self) -> PhraseSystem:
        if self._system is None or self._system.nr_type != len(self.labels):
            self._require_labels()
            self._system = PhraseSystem(len(self.labels), self.embedded, self.feature_set,
                                        self.cfg["max_length"])
        return self._system

    # --- inputs and targets ----------------------------------------------------
    def input_columns(self, doc: Doc, item: Dict[str, Any], example: Optional[Example]) -> None:
        """The per-doc input columns besides the POS tags (read per batch in
        `_batch_inputs`): none here."""

    def _inputs(self, docs: List[Doc], examples: Optional[List[Example]] = None) -> List[Dict[str, Any]]:
        return self._batch_inputs(docs, examples)[0]

    def _batch_inputs(self, docs: List[Doc], examples: Optional[List[Example]] = None
                      ) -> Tuple[List[Dict[str, Any]], Dict[str, Any]]:
        """Each doc's input (views of the batch's arrays: `_batch`), and the
        batch."""
        batch = self._batch(docs, examples)
        every, bounds, inside = batch["atoms"], batch["starts"].tolist(), batch.get("inside")
        inputs = []
        for i, doc in enumerate(docs):
            item = {"atoms": every[bounds[i]:bounds[i + 1]]}
            if inside is not None:
                item["inside"] = inside[bounds[i]:bounds[i + 1]]
            self.input_columns(doc, item, examples[i] if examples else None)
            inputs.append(item)
        return inputs, batch

    def _batch(self, docs: List[Doc], examples: Optional[List[Example]] = None,
               defer_rows: bool = False) -> Dict[str, Any]:
        """The batch's token arrays (LexemeAtoms.docs_inputs: words, tags,
        whitespace and sentence starts read in C) with the input columns.
        POS tags: the sequence labellers' helper (gold tags while training
        when the predicted doc has none; an error at prediction time).
        defer_rows: the atoms' rows may be left to the units' decoding
        (docs_inputs' defer: "rows", which UnitsJob reads)."""
        batch = self._atoms.docs_inputs(docs, tags=True, sent_starts=True, own=self._own_tables(),
                                        defer=defer_rows)
        self._tag_columns(docs, batch, examples, self.gold_description)
        self.batch_columns(docs, batch, examples)
        return batch

    def batch_columns(self, docs: List[Doc], batch: Dict[str, Any],
                      examples: Optional[List[Example]]) -> None:
        """Input columns besides the POS tags over the whole batch (its
        "atoms"; an "inside" column goes to each doc's input): none here."""

    def reads_tags(self) -> bool:
        return True

    def units(self, doc: Doc) -> List[numpy.ndarray]:
        """What prediction decodes as one unit (spacy_io.sentence_units):
        the positions of the words (no whitespace tokens) of each sentence
        where the doc has sentence boundaries, else of the whole doc."""
        batch = self._atoms.docs_inputs([doc], sent_starts=True, own=self._own_tables())
        words, unit_starts, *_ = sentence_units([doc], batch["starts"], batch["space"],
                                                batch["sent_starts"], batch["sent_set"])
        return [words[a:b] for a, b in zip(unit_starts[:-1], unit_starts[1:])]

    def _warn_long_unit(self, n_words: int) -> None:
        """Once: a doc of more than LONG_UNIT words without sentence
        boundaries was decoded as one unit (sentence_units' `longest`)."""
        if n_words > LONG_UNIT and not getattr(self, "_warned_long", False):
            self._warned_long = True
            warnings.warn(
                f"[{self.name}] a doc of {n_words} words has no sentence boundaries, so it is "
                "decoded as one unit: slower, and clauses may span sentences. Put a "
                "sentencizer or a parser before this component.", UserWarning, stacklevel=4)

    def reference_spans(self, doc: Doc) -> Optional[List[Span]]:
        key = self.cfg["spans_key"]
        return list(doc.spans[key]) if key in doc.spans else None

    def gold_phrases(self, example: Example, index: Optional[numpy.ndarray] = None) -> numpy.ndarray:
        """(start, end inclusive, type) of the gold phrases on the predicted
        tokens (on the content tokens at `index` if given)."""
        spans = self.reference_spans(example.reference)
        if spans is None:
            raise ValueError(f"[{self.name}] a training example has no gold "
                             f"doc.spans[{self.cfg['spans_key']!r}]: give gold docs with it.")
        ids = self.label_ids
        aligned = example.get_aligned_spans_y2x(spans, allow_overlap=True)
        tuples = [(s.start, s.end, ids[s.label_]) for s in aligned if s.label_ in ids]
        if index is not None:
            tuples = compact_spans(tuples, index)
        rows = sorted({(s, e - 1, k) for s, e, k in tuples})
        return numpy.asarray(rows, dtype="int32").reshape((-1, 3))

    def _training_instances(self, examples: List[Example]):
        """One instance per example over its words (whitespace tokens out)
        and the gold phrases on them."""
        docs = [eg.predicted for eg in examples]
        indexes = [content_index(doc) for doc in docs]
        golds = [self.gold_phrases(eg, i) for eg, i in zip(examples, indexes)]
        inputs = self._inputs(docs, examples)
        system = self.system
        return ((system.instance(compact_input(x, i), g) for x, i, g in zip(inputs, indexes, golds)),
                golds)

    # --- spaCy API ---------------------------------------------------------------
    def initialize(self, get_examples: Callable[[], Iterable[Example]], *, nlp: Optional[Language] = None,
                   labels: Optional[List[str]] = None) -> None:
        """Collect the phrase types from the training examples (or `labels`)."""
        self.cfg["labels"] = []
        self._label_ids = None
        self._system = None
        self.weights = Weights()
        found, tags = set(), set()
        # one pass: phrase types and input tags
        for eg in self._read_examples(get_examples, f"{type(self).__name__}.initialize"):
            tags |= self._example_tags(eg)
            if labels is None:
                found.update(span.label_ for span in (self.reference_spans(eg.reference) or []))
        for label in sorted(found) if labels is None else labels:
            self.add_label(label)
        if not self.labels:
            raise ValueError(f"[{self.name}] no gold spans found in the training examples "
                             f"(doc.spans[{self.cfg['spans_key']!r}] on the gold docs).")
        self._learn_input_tags(get_examples, tags)

    def predict(self, docs: Iterable[Doc]) -> Phrases:
        """The phrases of each doc, (m, 3) int32 rows (start, end inclusive,
        type), recognised unit by unit: the words of each sentence where the
        doc has sentence boundaries, else of the whole doc (the DP's cost
        grows with the unit, and max_length bounds it in the unit's length).
        The units are found in C (spacy_io.sentence_units) and decoded in
        C (UnitsJob: no instance, array or Python object per unit;
        contiguous ranges of units of about equal work, taken in turn by
        n_threads C threads)."""
        docs = list(docs)
        return self._phrases(docs, *self._units_begun(docs, thread_count(self.cfg["n_threads"])))

    def _begin(self, docs: List[Doc], pool: Optional[Any], threads: int) -> tuple:
        """The pipelined pipe() (SearchPipe._batches; pool: unused): the
        search started on `threads` C threads, which never take the GIL,
        and which also read each doc's words, tags, chunks and sentences
        where they can (`_threads_read`: nothing read on this thread)."""
        lookup = self._threads_read() is not None and self._lookup_resumed(docs)
        try:
            return self._units_begun(docs, threads, lookup)
        except BaseException:
            if lookup:  # (no _finish will end this probe)
                self._calls.lookup_probing = False
            raise

    def _units_begun(self, docs: List[Doc], threads: int, lookup: int = 0) -> tuple:
        """predict() up to the search, and the search started on `threads`
        C threads: (each unit's doc, the job, its runs started, and for a
        job over docs that the threads read (lookup, `_looked_up`) its rows
        and threads, else None)."""
        self._require_labels()
        self._start_tally()
        if lookup:
            begun = (None if getattr(self._calls, "learning", False)
                     else self._looked_up(docs, threads, lookup))
            if begun is not None:
                self._warn_unseen_tags()  # (none counted yet: the call's tally let go)
                return begun
            self._calls.lookup_probing = False  # (not looked up: no probe)
        batch = self._batch(docs, defer_rows=True)
        words, unit_starts, unit_base, unit_doc, longest = sentence_units(
            docs, batch["starts"], batch["space"], batch["sent_starts"], batch["sent_set"])
        self._warn_long_unit(longest)
        self._warn_unseen_tags()
        ranges = ranges_by_cost(unit_costs(unit_starts, self.cfg["max_length"] or 0), threads)
        job = UnitsJob(self.system, self.averaged_weights, batch["atoms"], batch.get("inside"),
                       words, unit_starts, unit_base, ranges, batch.get("rows"))
        return unit_doc, job, RunsStarted(job.runs(threads)), None

    def _threads_read(self) -> Optional[Dict[str, Any]]:
        """What LexemeAtoms.unit_inputs reads on the searching threads
        besides the words and tags (its `chunks`, `key`, `inside`); None
        where a subclass makes the inputs its own way (they are then read
        here, on the calling thread)."""
        cls = type(self)
        if cls.input_columns is not PhrasePipe.input_columns or cls._batch is not PhrasePipe._batch \
                or cls.batch_columns is not cls._columns_on_threads \
                or cls._tag_columns is not SearchPipe._tag_columns \
                or cls._chunk_columns is not SearchPipe._chunk_columns:
            return None
        return self._thread_columns()

    def _thread_columns(self) -> Dict[str, Any]:
        """unit_inputs' `chunks`, `key` and `inside` (batch_columns' columns,
        read by the threads): none here."""
        return {}

    def _left_share(self, docs: List[Doc]) -> float:
        """A sample's docs with a word not cached yet (whitespace is read)."""
        return self._atoms.left_share(docs, own=self._own_tables())

    def _looked_up(self, docs: List[Doc], threads: int, lookup: int = LOOKS_UP
                   ) -> Optional[tuple]:
        """_units_begun over docs whose words, tags, chunks and sentences
        the searching threads read (spacy_io.LexemeAtoms.unit_inputs,
        UnitsJob.over_docs); None where they cannot (no token, several
        vocabs). The docs they leave (a word not cached yet, an untagged
        word, no chunks, a chunk type first seen) are done again after
        (`_phrases`). lookup: _lookup_resumed's (MAKES_WORDS: they also make
        the words the cache lacks, unit_inputs' new_words)."""
        batch = self._atoms.unit_inputs(docs, self._own_tables(), self._known_tags(),
                                        new_words=lookup == MAKES_WORDS, **self._thread_columns())
        if batch is None:
            return None
        starts, rows = batch["starts"], batch["rows"]
        ranges = ranges_by_cost(unit_costs(starts, self.cfg["max_length"] or 0), threads)
        job = UnitsJob.over_docs(self.system, self.averaged_weights, batch["atoms"],
                                 batch.get("inside"), starts, rows, ranges)
        return None, job, RunsStarted(job.runs(threads)), (rows, threads, lookup)

    def _phrases(self, docs: List[Doc], unit_doc: Optional[numpy.ndarray], job: UnitsJob,
                 started: RunsStarted, looked_up: Optional[tuple] = None) -> Phrases:
        """predict()'s Phrases from the search's ranges (waited for); over
        docs the threads read (looked_up: their rows, threads and lookup), the docs
        they left done again here and put in their places."""
        if looked_up is not None:
            self._calls.lookup_probing = False  # (a probe ends here, however it ends)
        started.results()
        if looked_up is None:
            return Phrases(*job.doc_result(unit_doc, len(docs)))
        rows, threads, lookup = looked_up
        rows.keep_new_words()  # (for the next batches' threads)
        found = Phrases(*job.doc_result(None, len(docs)))
        self._warn_long_unit(job.longest_unit())
        left = rows.returned()
        self._pause_lookup(len(left) > LOOKUP_AGAIN_MOST * len(docs), lookup,
                           new_words_alone=len(rows.returned(new_words=True)) == len(left))
        if len(left):
            again = [docs[i] for i in left.tolist()]
            found = found.replaced(left, self._phrases(again, *self._units_begun(again, threads)))
        # (counted once the batch cannot fail here: one that does is done
        # again, in parts, by SearchPipe._written, and counted then)
        self._tally_tags_read(rows.tag_counts(), docs[0].vocab.strings)
        return found

    def _finish(self, docs: List[Doc], begun: tuple) -> None:
        self.set_annotations(docs, self._phrases(docs, *begun))

    def _abandon(self, docs: List[Doc], begun: tuple) -> None:
        try:  # (the threads read the docs: they are left alone once those stop)
            begun[2].results()
        except Exception:  # (its error is no one's now: the batch is dropped)
            pass
        if begun[3] is not None:
            self._calls.lookup_probing = False

    def set_annotations(self, docs: Iterable[Doc], phrases: Sequence[numpy.ndarray]) -> None:
        """Each doc's phrases (predict's Phrases, or a list of each doc's
        rows) as a new span group doc.spans[spans_key]."""
        key = self.cfg["spans_key"]
        docs = list(docs)
        if not isinstance(phrases, Phrases):
            phrases = Phrases.of(list(phrases))
        if in_vocab(docs, self.vocab):  # in C: no Python per span
            write_phrases(docs, phrases.rows, self.string_hashes(self.labels), key, phrases.offsets)
            return
        labels = self.labels
        for doc, rows in zip(docs, phrases):
            spans = [Span(doc, int(s), int(e) + 1, label=labels[k]) for s, e, k in rows]
            doc.spans[key] = SpanGroup(doc, name=key, spans=spans)

    def learn(self, examples: List[Example]) -> float:
        """One online pass (FR-Perceptron, or CO-VP with feedback =
        "classification"); the loss is the number of missed plus
        over-predicted phrases."""
        instances, _ = self._training_instances(examples)
        mistakes, _ = fr_perceptron(instances, self.weights, self.cfg["feedback"])
        return mistakes

    def filter_stats(self, examples: Iterable[Example]) -> Dict[str, float]:
        """The filtering layer on gold-annotated examples (averaged weights):
        the number of candidates it generates, the share of gold phrases
        among them (recall of F(x)) and the F1 a perfect ranker could reach
        on them (precision 1, that recall): the paper's Figure 5."""
        examples = list(examples)
        instances, golds = self._training_instances(examples)
        results = recognise(instances, self.averaged_weights, details=True)
        max_length = self.cfg["max_length"]
        n_gold = n_reachable = n_candidates = 0
        counts = numpy.zeros((2, 3), dtype="int64")  # start/end x (fired, gold, both)
        for gold, (_, candidates, start, end) in zip(golds, results):
            n_candidates += candidates
            n_gold += len(gold)
            n_reachable += sum(1 for s, e, k in gold if start[s, k] and end[e, k]
                               and (not max_length or e - s + 1 <= max_length))
            for row, (fired, column) in enumerate(((start, 0), (end, 1))):
                boundary = numpy.zeros_like(fired)
                boundary[gold[:, column], gold[:, 2]] = True
                counts[row] += (fired.sum(), boundary.sum(), (fired & boundary).sum())
        recall = n_reachable / n_gold if n_gold else 0.0
        stats = {"candidates": n_candidates, "gold": n_gold, "gold_candidates": n_reachable,
                 "candidate_recall": recall, "upper_bound_f": 2 * recall / (1 + recall) if recall else 0.0}
        # Precision and recall of the start and end decisions on the gold
        # boundary words (the curves of the paper's Figure 5).
        for row, name in enumerate(("start", "end")):
            fired, boundary, both = (int(v) for v in counts[row])
            stats[f"{name}_p"] = both / fired if fired else 0.0
            stats[f"{name}_r"] = both / boundary if boundary else 0.0
        return stats

    def score(self, examples: Iterable[Example], **kwargs) -> Dict[str, Any]:
        """The scorer's `spans_<key>_p/r/f` (and the base pipe's keys), plus
        the filtering layer on the same examples (`filter_stats`: the
        paper's Figure 5), so that `spacy train`'s evaluations log it:
        `spans_<key>_candidates` (candidates generated), `..._candidates_recall`
        (share of the gold phrases among them), `..._f_bound` (the F1 a
        perfect ranker could reach on them) and `..._start_p/_start_r/
        _end_p/_end_r` (the filters' decisions on the gold boundary words).
        Left out when an example has no gold phrases (no span group) or the
        component has no labels yet."""
        examples = list(examples)
        scores = super().score(examples, **kwargs)
        if self.labels and examples and all(self.reference_spans(eg.reference) is not None
                                            for eg in examples):
            prefix = f"spans_{self.cfg['spans_key']}"
            stats = self.filter_stats(examples)
            scores.update({f"{prefix}_candidates": stats["candidates"],
                           f"{prefix}_candidates_recall": stats["candidate_recall"],
                           f"{prefix}_f_bound": stats["upper_bound_f"],
                           **{f"{prefix}_{k}": stats[k] for k in ("start_p", "start_r", "end_p", "end_r")}})
        return scores

    def _on_load(self) -> None:
        self._system = None


@Language.factory(
    "fr_clause_finder",
    assigns=["doc.spans"],
    requires=["token.tag", "doc.spans"],
    default_config={
        "feedback": "recognition",
        "max_length": CLAUSE_MAX_LENGTH,
        "chunk_boundaries": False,
        "spans_key": "clauses",
        "chunks_key": "chunks",
        "n_threads": 1,
        "scorer": {"@scorers": "spacy_lookahead.clause_scorer.v1"},
    },
    default_score_weights={"spans_clauses_f": 1.0, "spans_clauses_p": 0.0, "spans_clauses_r": 0.0, "spans_clauses_per_type": None},
)
def make_fr_clause_finder(nlp: Language, name: str, feedback: Feedback, max_length: int, chunk_boundaries: bool,
                          spans_key: str, chunks_key: str, n_threads: int,
                          scorer: Optional[Callable]) -> "FRClauseFinder":
    """Clause identification (CoNLL-2001) into doc.spans[spans_key], nested.

    Needs POS tags (token.tag_) and chunks (doc.spans[chunks_key]) on its input
    docs, e.g. from lookahead_tagger and lookahead_chunker earlier in the
    pipeline; while training, missing ones are taken from the gold docs.
    feedback: "recognition" (FR-Perceptron) or "classification" (CO-VP).
    max_length: longest candidate clause in words (0: no limit; the DP then
    costs O(n^3) in a unit of n words).
    chunk_boundaries: only words that start (end) a chunk or lie outside
    chunks may start (end) a clause, as the paper does to save computation.
    Off by default: on wsj_clauses, whose chunks approximate chunklink's,
    5.5% of the dev clauses cross a chunk boundary and would be unreachable.
    n_threads: threads that decode the docs of a batch (0: every core).
    """
    return FRClauseFinder(nlp.vocab, name, feedback=feedback, max_length=max_length,
                          chunk_boundaries=chunk_boundaries, spans_key=spans_key,
                          chunks_key=chunks_key, n_threads=n_threads, scorer=scorer)


class FRClauseFinder(PhrasePipe):
    """Features as Section 4.1 of the paper for clauses: word, POS and chunk
    windows of +-3, left start/end predictions, counts of relevant elements,
    the internal pattern with inner clauses reduced."""

    embedded = True
    feature_set = "clause"
    gold_description = "clause identification"

    def __init__(self, vocab: Vocab, name: str = "fr_clause_finder", *, feedback: str = "recognition",
                 max_length: int = CLAUSE_MAX_LENGTH, chunk_boundaries: bool = False, spans_key: str = "clauses",
                 chunks_key: str = "chunks", n_threads: int = 1,
                 scorer: Optional[Callable] = None) -> None:
        if not isinstance(chunk_boundaries, bool):
            raise config_error(name, "chunk_boundaries", f"[{name}] chunk_boundaries must be true or false, got {chunk_boundaries!r}")
        super().__init__(vocab, name, feedback=feedback, max_length=max_length, spans_key=spans_key,
                         chunks_key=chunks_key, chunk_boundaries=chunk_boundaries,
                         n_threads=n_threads, scorer=scorer)

    def batch_columns(self, docs: List[Doc], batch: Dict[str, Any],
                      examples: Optional[List[Example]]) -> None:
        """The chunks (B-X / I-X / O) and, with chunk_boundaries, whether a
        token is inside a chunk after its first token."""
        inside = numpy.zeros((len(batch["atoms"]),), dtype="uint8")
        self._chunk_columns(
            docs, batch, examples, self.cfg["chunks_key"],
            "Put a chunker (e.g. lookahead_chunker or fr_chunker) before it in the pipeline, "
            "or give it docs with chunks (the conll2001 reader does).", inside)
        if self.cfg["chunk_boundaries"]:
            batch["inside"] = inside

    def _thread_columns(self) -> Dict[str, Any]:
        """The chunk column too (and the inside flags with chunk_boundaries)."""
        return {"chunks": self._chunk_atoms_of(), "key": self.cfg["chunks_key"],
                "inside": self.cfg["chunk_boundaries"]}


# The batch_columns whose columns _thread_columns has the threads read.
PhrasePipe._columns_on_threads = PhrasePipe.batch_columns
FRClauseFinder._columns_on_threads = FRClauseFinder.batch_columns


@Language.factory(
    "fr_chunker",
    assigns=["doc.spans"],
    requires=["token.tag"],
    default_config={
        "feedback": "recognition",
        "max_length": CHUNK_MAX_LENGTH,
        "spans_key": "chunks",
        "n_threads": 1,
        "scorer": {"@scorers": "spacy_lookahead.chunk_scorer.v1"},
    },
    default_score_weights={"spans_chunks_f": 1.0, "spans_chunks_p": 0.0, "spans_chunks_r": 0.0, "spans_chunks_per_type": None},
)
def make_fr_chunker(nlp: Language, name: str, feedback: Feedback, max_length: int, spans_key: str,
                    n_threads: int, scorer: Optional[Callable]) -> "FRChunker":
    """Base-phrase chunking (CoNLL-2000) into doc.spans[spans_key] from words
    and POS tags, with filters and rankers per chunk type (the FRP-Chunker).
    max_length: longest candidate chunk in words (0: no limit).
    n_threads: threads that decode the docs of a batch (0: every core)."""
    return FRChunker(nlp.vocab, name, feedback=feedback, max_length=max_length, spans_key=spans_key,
                     n_threads=n_threads, scorer=scorer)


class FRChunker(PhrasePipe):
    """Features as Section 4.1 of the paper for chunking: word and POS windows
    of +-2 with their n-grams through the word; phrase context windows, the
    words, POS and POS n-grams inside, and the three chunks to the left."""

    embedded = False
    feature_set = "chunk"
    gold_description = "chunking"

    def __init__(self, vocab: Vocab, name: str = "fr_chunker", *, feedback: str = "recognition",
                 max_length: int = CHUNK_MAX_LENGTH, spans_key: str = "chunks", n_threads: int = 1,
                 scorer: Optional[Callable] = None) -> None:
        super().__init__(vocab, name, feedback=feedback, max_length=max_length, spans_key=spans_key,
                         n_threads=n_threads, scorer=scorer)
