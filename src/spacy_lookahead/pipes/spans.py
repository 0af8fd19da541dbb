"""`lookahead_chunker` and `lookahead_ner`: spans as IOB2/BILUO labelling on
the shared tagging system (Tsuruoka et al. 2011, Section 4.1: chunking on
CoNLL-2000, bio-NER on JNLPBA tagged right to left)."""
import warnings
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple

import numpy
from spacy.attrs import SENT_START
from spacy.language import Language
from spacy.tokens import Doc, Span, SpanGroup
from spacy.training import Example
from spacy.util import filter_spans
from spacy.vocab import Vocab

from .. import scoring  # noqa: F401  (registers the scorers a saved config names)
from ..spacy_io import LabelSink, has_entities, in_vocab, write_spans
from ..core.marginals import Lattice, Transitions
from ..systems.span_ids import SpanScores, batch_span_scores, kept_spans, span_scores
from ..systems.schemes import (ALIASES, SCHEMES, action_arrays, ids_to_spans, label_constraints,
                                scheme_actions, span_probabilities, spans_to_ids, sum_in_order)
from .base import Sealed, any_per_doc
from .sequence import SEQUENCE_DEFAULTS, SequencePipe
from .learners import Learner, MarginPerceptron
from .search import Search
from .settings import Direction, Probabilities, Scheme, config_error
from .spaces import any_spaced, compact_spans, content_index, expand_span_ids, expand_spans
from .prediction import Predictions, SpanPredictions, kept_probabilities
from .transition import DocsLayout, Prediction

SpanTuple = Tuple[int, int, str]
# Default perceptron margin C. Appendix A of the paper: the learnt margin
# approaches half the true one as C grows against R^2, the squared norm of a
# feature difference (about 2 x 25 features x (D + 1) steps here), so C is
# set on that scale. CoNLL-2000, depth 1: held-out 10% of train 94.21 (C = 1)
# vs 94.23 (C = 60); test 93.45 vs 93.72. JNLPBA rtl: test 70.33 vs 71.26 (C = 50).
MARGIN = 50.0
SPAN_DEFAULTS = {**SEQUENCE_DEFAULTS, "learner": MarginPerceptron(MARGIN).config()}




class SpanLabeller(SequencePipe):
    """Labels spans through one label per token (scheme "iob2", or
    "biluo"); the search only follows label sequences the scheme allows."""

    history_setting = "label_trigrams"
    default_learner = MarginPerceptron(MARGIN)

    def __init__(self, vocab: Vocab, name: str, *, scheme: str, **settings) -> None:
        for key, value in settings.items():
            if key.endswith("_key") and (not isinstance(value, str) or not value):
                raise config_error(name, key, f"[{name}] {key} must be a non-empty span group "
                                              f"name, got {value!r}")
        scheme = ALIASES.get(scheme, scheme)
        if scheme not in SCHEMES:
            raise config_error(name, "scheme", f"[{name}] scheme must be one of {sorted(SCHEMES)}, got {scheme!r}")
        super().__init__(vocab, name, scheme=scheme, **settings)
        self._arrays = None

    @property
    def actions(self) -> List[str]:
        return scheme_actions(self.labels, self.cfg["scheme"])

    def _load(self, cfg, sealed: Sealed, source: str = "the weights") -> None:
        # models saved before the scheme took the readers' name ("iob")
        if isinstance(cfg, dict) and "scheme" in cfg:
            cfg = {**cfg, "scheme": ALIASES.get(cfg["scheme"], cfg["scheme"])}
        super()._load(cfg, sealed, source)

    def constraints(self):
        return label_constraints(self.actions, self.cfg["scheme"], self.cfg["direction"])

    def _kinds_types(self):
        if self._arrays is None or self._arrays[0] != self.labels:
            self._arrays = (self.labels, *action_arrays(self.actions))
        return self._arrays[1], self._arrays[2]

    # --- writing in C (spacy_io.write_spans): no Python per span ---------------
    c_spans_key: Optional[str] = None  # None: doc.ents

    @property
    def scores_key(self) -> str:
        """The span group whose attrs["scores"] holds the spans'
        probabilities (write_spans)."""
        raise NotImplementedError

    def writes_in_c(self, docs: List[Doc], presets_left: bool = False) -> bool:
        """Whether the batch's spans can be written by spacy_io.write_spans:
        one vocab, nothing a subclass must keep (e.g. preset entities;
        presets_left: the docs with preset annotation are left to the
        caller already: the searching threads that look the words up
        leave those with token.ent_iob set)."""
        return in_vocab(docs, self.vocab)

    # --- subclasses: where the gold and the output spans live -----------------
    def reference_spans(self, doc: Doc) -> Optional[Iterable[Span]]:
        raise NotImplementedError

    def write_spans(self, doc: Doc, spans: List[Span], scores: Optional[numpy.ndarray]) -> None:
        raise NotImplementedError

    def missing_gold(self, example: Example) -> Optional[numpy.ndarray]:
        """Boolean mask of predicted tokens whose gold is unknown."""
        return None

    # -----------------------------------------------------------------------------
    def initialize(self, get_examples: Callable[[], Iterable[Example]], *, nlp: Optional[Language] = None,
                   labels: Optional[List[str]] = None) -> None:
        """Collect the span types from the training examples (or `labels`)."""
        self._reset()
        found, tags, size = set(), set(), 0
        # one pass: span types, |S|, input tags
        for eg in self._read_examples(get_examples, f"{type(self).__name__}.initialize"):
            size += 1
            tags |= self._example_tags(eg)
            if labels is None:
                found.update(span.label_ for span in (self.reference_spans(eg.reference) or []))
        for label in sorted(found) if labels is None else labels:
            if "-" in label and label.split("-", 1)[0] in ("B", "I", "L", "U", "O"):
                raise ValueError(f"[{self.name}] {label!r} looks like an IOB tag: give span "
                                 "types (e.g. 'NP'), not per-token labels.")
            self.add_label(label)
        if not self.labels:
            raise ValueError(f"[{self.name}] no gold spans found in the training examples "
                             f"({self.gold_description}).")
        self._count_training_set(get_examples, size, tags)

    def gold_ids(self, example: Example, index: Optional[numpy.ndarray] = None) -> numpy.ndarray:
        n = len(example.predicted) if index is None else len(index)
        spans = self.reference_spans(example.reference)
        if spans is None:
            return numpy.full((n,), -1, dtype="int32")
        aligned = filter_spans(example.get_aligned_spans_y2x(list(spans), allow_overlap=True))
        tuples = [(s.start, s.end, s.label_) for s in aligned]
        missing = self.missing_gold(example)
        if index is not None:
            tuples = compact_spans(tuples, index)
            missing = None if missing is None else missing[index]
        ids = spans_to_ids(n, tuples, self.actions, self.cfg["scheme"])
        if missing is not None:
            ids[missing] = -1
        if self.cfg.get("respect_sent_starts") and tuples:
            self._unknown_across_sentences(example.predicted, index, tuples, ids)
        return ids

    def _unknown_across_sentences(self, doc: Doc, index: Optional[numpy.ndarray],
                                  tuples: List[Tuple[int, int, str]], ids: numpy.ndarray) -> None:
        """A gold span across a sentence start cannot be output with
        respect_sent_starts: its tokens' gold is unknown (no update there),
        said once, rather than a doc the search cannot follow."""
        starts = doc.to_array(SENT_START) == 1
        if index is not None:
            starts = starts[index]
        crossing = [(b, e) for b, e, _ in tuples if starts[b + 1:e].any()]
        for b, e in crossing:
            ids[b:e] = -1
        if crossing and not getattr(self, "_warned_crossing", False):
            self._warned_crossing = True
            warnings.warn(f"[{self.name}] a gold span crosses a sentence start of its doc "
                          f"({doc[crossing[0][0]:crossing[0][1]].text!r}...): with "
                          "respect_sent_starts = true no output can, so its tokens are treated "
                          "as unknown. Fix the sentence starts of the training docs, or set "
                          "respect_sent_starts = false.")

    def expand(self, output: numpy.ndarray, index: numpy.ndarray, n: int) -> numpy.ndarray:
        """The same spans over the doc's tokens: whitespace between two
        tokens of a span is inside it, any other whitespace outside."""
        return self.expand_batch(numpy.asarray(output, dtype="int32"),
                                 numpy.asarray([0, len(index)]), index, numpy.asarray([0, n]))

    def expand_batch(self, labels: numpy.ndarray, starts: numpy.ndarray, positions: numpy.ndarray,
                     doc_starts: numpy.ndarray) -> numpy.ndarray:
        return expand_span_ids(labels, positions, starts, doc_starts, *self._kinds_types())

    def _predictions(self, docs: List[Doc], indexes: Any, results: list) -> Any:
        """As SequencePipe's; calibrated with a batch decoded at once: its
        SpanPredictions, every span's probability from one pass over the
        batch's lattices (batch_span_scores: the exact_scorer's figures, no
        numpy per doc)."""
        if not (self.calibrated and isinstance(indexes, DocsLayout)):
            return super()._predictions(docs, indexes, results)
        predictions = self._docs_predictions(docs, indexes)
        if indexes.lattices is not None:  # (done with the search)
            scores, span_starts = indexes.lattices.compacted()
        else:
            W, tau, system = self.averaged_weights, self.temperature, self.system
            scores, span_starts = batch_span_scores(
                indexes.held, W, tau, Transitions(system, W, tau) if system.homogeneous else None,
                indexes.output.labels, indexes.starts, *self.span_parts(),
                self.cfg["direction"] == "rtl")
        return SpanPredictions(predictions.labels, predictions.starts, scores, span_starts)

    def _lattice_pass(self, held, starts: numpy.ndarray) -> Optional[SpanScores]:
        """Calibrated: every span's probability (SpanScores), from each
        doc's lattice right after its search, on the same thread."""
        if not self.calibrated:
            return None
        return SpanScores(held, self.averaged_weights, self.temperature, None, starts,
                          self.span_parts(), self.cfg["direction"] == "rtl")

    def exact_scorer(self) -> Callable[[Lattice, numpy.ndarray], numpy.ndarray]:
        """Each span's probability: that its tokens take exactly its labels
        (B-X I-X ..., or B-X ... L-X / U-X) and, in IOB2, that the next token
        does not continue it (systems/span_ids.span_scores, in C)."""
        kinds, types, parts, closed, biluo = self.span_parts()
        rtl = self.cfg["direction"] == "rtl"
        return lambda lattice, best: span_scores(lattice, best, kinds, types, parts, closed, biluo, rtl)

    def span_parts(self) -> tuple:
        kinds, types = self._kinds_types()
        parts, closed = self._span_parts()
        parts = numpy.asarray(parts, dtype="int32").reshape((-1, 4))
        closed = numpy.asarray(closed, dtype="uint8").reshape((len(parts), -1))
        return kinds, types, parts, closed, self.cfg["scheme"] == "biluo"

    def _kept_predictions(self, docs: List[Doc], layout: DocsLayout) -> SpanPredictions:
        """The Predictions of a batch whose n best were kept (SAPO's, at the
        temperature): the best labels over the docs' tokens and each span's
        probability, the mass of the n best that hold exactly that span
        (span_ids.kept_spans), summed in the outputs' order as
        span_probabilities sums it per doc."""
        kept, scores, counts = layout.output.kept
        probs = kept_probabilities(scores, counts, self.temperature)
        kinds, types = self._kinds_types()
        spans, span_starts, holds = kept_spans(layout.output.labels, layout.starts, kept[:, 0, :],
                                               counts, kinds, types)
        doc_of = numpy.repeat(numpy.arange(len(counts)), numpy.diff(span_starts))
        mass = numpy.minimum(sum_in_order(probs[doc_of].T, holds), 1.0).astype("float32")
        labels, doc_starts = self._expanded_labels(docs, layout.output.labels, layout.starts,
                                                   layout.indexes)
        return SpanPredictions(labels, doc_starts, mass, span_starts)

    def _parts_predictions(self, docs: List[Doc], indexes: List[Optional[numpy.ndarray]],
                           found: tuple) -> SpanPredictions:
        """The Predictions of a batch from BestParts' arrays: the labels
        over the docs' tokens, each span's probability."""
        labels, starts, scores, span_starts = found
        labels, doc_starts = self._expanded_labels(docs, labels, starts, indexes)
        return SpanPredictions(labels, doc_starts, scores, span_starts)

    def part_truth(self, best: numpy.ndarray, gold: numpy.ndarray) -> Optional[numpy.ndarray]:
        """Each span: is it a gold span (same tokens, same label)."""
        if (gold < 0).any():
            return None
        kinds, types = self._kinds_types()
        truth = set(ids_to_spans(gold, kinds, types))
        return numpy.asarray([span in truth for span in ids_to_spans(best, kinds, types)],
                             dtype="bool")

    def _span_parts(self) -> Tuple[list, list]:
        """Per span type: the action ids of its B, I, L, U labels (-1 where
        the scheme has none), and the mask of the actions that do not
        continue it (not its I); kept while the labels stay the same."""
        key = (tuple(self.labels), self.cfg["scheme"])
        if getattr(self, "_parts", (None,))[0] != key:
            ids = {name: k for k, name in enumerate(self.actions)}
            parts = [tuple(ids.get(f"{x}-{label}", -1) for x in "BILU") for label in self.labels]
            closed = [[int(name != f"I-{label}") for name in ids] for label in self.labels]
            self._parts = (key, parts, closed)
        return self._parts[1], self._parts[2]

    def _output_sink(self, docs: List[Doc], indexes: List[Optional[numpy.ndarray]],
                     lattices: Any, looked_up: bool = False) -> Optional[LabelSink]:
        """The spans written by the searching threads (doc.ents into the
        tokens, a group's spans made there and the groups by its finish(),
        as set_annotations' write_spans) where that is all it writes: no
        probabilities, `writes_in_c` (whitespace inside a span only between
        two of its tokens)."""
        if not self._writes_spans_only(docs, looked_up):
            return None
        kinds, types = self._kinds_types()
        return LabelSink.spans(docs, kinds, types, self.string_hashes(self.labels),
                               self.c_spans_key)

    def _writes_spans_only(self, docs: List[Doc], presets_left: bool = False) -> bool:
        """Whether set_annotations writes the spans of the best labelling and
        nothing else on `docs` (their whitespace tokens aside): no
        probabilities, `writes_in_c` (presets_left: as its)."""
        return (not self.calibrated and type(self).set_annotations is SpanLabeller.set_annotations
                and self.writes_in_c(docs, presets_left))

    def set_annotations(self, docs: Iterable[Doc], predictions: List[Prediction]) -> None:
        """Write the spans of the best labelling; with SAPO, each span's
        probability (the summed probability of the n best outputs that
        contain it) goes to the span group's attrs["scores"], as spancat does."""
        kinds, types = self._kinds_types()
        labels = self.labels
        docs = list(docs)
        if isinstance(predictions, Predictions) and self.writes_in_c(docs):
            hashes = self.string_hashes(labels)
            scored = isinstance(predictions, SpanPredictions)
            # the scores go in the group's attrs as it is made (no Python per doc)
            scores = (predictions.span_scores, predictions.span_starts) if scored else (None, None)
            here = scored and self.scores_key == self.c_spans_key
            write_spans(docs, predictions.labels, kinds, types, hashes, self.c_spans_key,
                        predictions.starts, *(scores if here else (None, None)))
            if scored and not here:  # doc.ents: a group of the same spans, for their scores
                write_spans(docs, predictions.labels, kinds, types, hashes, self.scores_key,
                            predictions.starts, *scores)
            return
        if self.writes_in_c(docs) and all(out.scores is None and out.probs is None
                                          for out in predictions):
            write_spans(docs, [out.best for out in predictions], kinds, types,
                        self.string_hashes(labels), self.c_spans_key)
            return
        for doc, out in zip(docs, predictions):
            best = ids_to_spans(out.best, kinds, types)
            spans = [Span(doc, start, end, label=labels[t]) for start, end, t in best]
            scores = None
            if out.scores is not None:
                scores = numpy.asarray(out.scores, dtype="float32")
            elif out.probs is not None:
                nbest = numpy.asarray(out.nbest, dtype="int32").reshape((len(out.nbest), len(doc)))
                scores = span_probabilities(best, nbest, out.probs, kinds, types)
            self.write_spans(doc, spans, scores)


@Language.factory(
    "lookahead_chunker",
    assigns=["doc.spans"],
    requires=["token.tag"],
    default_config={
        "direction": "ltr",
        "scheme": "iob2",
        "spans_key": "chunks",
        "label_trigrams": False,
        "features": ["preset:chunk"],
        "respect_sent_starts": False,
        **SPAN_DEFAULTS,
        "scorer": {"@scorers": "spacy_lookahead.chunk_scorer.v1"},
    },
    default_score_weights={"spans_chunks_f": 1.0, "spans_chunks_p": 0.0, "spans_chunks_r": 0.0, "spans_chunks_per_type": None},
)
def make_lookahead_chunker(nlp: Language, name: str, direction: Direction, scheme: Scheme,
                           spans_key: str, label_trigrams: bool, features: List[str],
                           respect_sent_starts: bool, search: Search, learner: Learner,
                           n_threads: int, probabilities: Probabilities,
                           temperature: Optional[float], scorer: Optional[Callable]
                           ) -> "LookaheadChunker":
    """Base-phrase chunking into doc.spans[spans_key] from words and POS tags.

    direction: "ltr" or "rtl", the order in which tokens are labelled.
    scheme: "iob2" or "biluo" labelling of the chunks (as the readers name them).
    label_trigrams: add the (label t-1, label t-2) history feature.
    features: the feature templates (a list: presets such as "preset:chunk"
        and templates such as "cluster6[0]" or "lower[-1] lower[0]";
        spacy_lookahead/systems/templates.py lists the atoms). Templates
        reading `cluster*` or `prob` need the vocab's tables
        ([initialize.lookups], spacy_lookahead/lexicon.py).
    respect_sent_starts: label each sentence of a doc on its own (its
        tokens' features stop at its edges, the label history starts
        again, no span crosses a sentence start), from the doc's sentence
        starts (e.g. a sentencizer's earlier in the pipeline); the `doc`
        templates still read the whole doc.
    search, learner, n_threads, probabilities, temperature: see the tagger
        (the default margin here is 50). With SAPO.v1 each chunk's
        probability goes to doc.spans[spans_key].attrs["scores"].
    """
    return LookaheadChunker(nlp.vocab, name, direction=direction, scheme=scheme,
                            spans_key=spans_key, label_trigrams=label_trigrams,
                            features=features, respect_sent_starts=respect_sent_starts,
                            search=search, learner=learner, n_threads=n_threads,
                            probabilities=probabilities, temperature=temperature, scorer=scorer)


class LookaheadChunker(SpanLabeller):
    """Chunks (NP, VP, PP, ...) from words and POS tags; features as Sun et
    al. Section 4.2: words at -2..+2 and their bigrams, POS uni/bi/trigrams."""

    feature_set = "chunk"
    feature_settings = ("direction", "label_trigrams", "scheme", "features", "respect_sent_starts")
    model_settings_before = {"features": ["preset:chunk"], "word_classes": {},
                             "respect_sent_starts": False}
    gold_description = "doc.spans[spans_key] on the gold docs"

    def __init__(self, vocab: Vocab, name: str = "lookahead_chunker", *, direction: str = "ltr",
                 scheme: str = "iob2", spans_key: str = "chunks", label_trigrams: bool = False,
                 features: Optional[List[str]] = None, respect_sent_starts: bool = False,
                 scorer: Optional[Callable] = None, **settings) -> None:
        super().__init__(vocab, name, direction=direction, scheme=scheme, spans_key=spans_key,
                         label_trigrams=bool(label_trigrams), features=features,
                         respect_sent_starts=bool(respect_sent_starts), scorer=scorer,
                         **settings)

    def reads_tags(self) -> bool:
        return True

    def input_columns(self, doc: Doc, atoms: numpy.ndarray, example: Optional[Example]) -> None:
        self._tag_column(doc, atoms, example, "chunking")

    def token_columns(self) -> Dict[str, bool]:
        return {"tags": True}

    @property
    def c_spans_key(self) -> Optional[str]:  # type: ignore[override]
        return self.cfg["spans_key"]

    @property
    def scores_key(self) -> str:
        return self.cfg["spans_key"]

    def batch_columns(self, docs: List[Doc], batch: Dict[str, Any],
                      examples: Optional[List[Example]]) -> None:
        self._tag_columns(docs, batch, examples, "chunking")

    def _inputs_on_threads(self) -> bool:
        """The words and the tag column (no other, no sentence starts)."""
        own = type(self)
        return (not self.cfg.get("respect_sent_starts") and not self.system.reads_doc
                and own.batch_columns is LookaheadChunker.batch_columns
                and own.input_columns is LookaheadChunker.input_columns
                and own.forced_ids is SequencePipe.forced_ids
                and own.token_columns is LookaheadChunker.token_columns)

    def _looks_up_on_threads(self, docs: List[Doc]) -> bool:
        """Where the sink writes the chunks and the inputs are the words and
        tags (the docs with an untagged word left to _finish)."""
        return self._inputs_on_threads() and self._writes_spans_only(docs)

    def reference_spans(self, doc: Doc):
        return doc.spans[self.cfg["spans_key"]] if self.cfg["spans_key"] in doc.spans else None

    def write_spans(self, doc: Doc, spans: List[Span], scores: Optional[numpy.ndarray]) -> None:
        key = self.cfg["spans_key"]
        doc.spans[key] = SpanGroup(doc, name=key, spans=spans,
                                   attrs={} if scores is None else {"scores": scores})


CHUNK_FIX = ("chunk_features = true reads them: put a chunker (e.g. lookahead_chunker) before "
             "it in the pipeline, or set chunk_features = false.")


@Language.factory(
    "lookahead_ner",
    assigns=["doc.ents", "token.ent_iob", "token.ent_type"],
    default_config={
        "direction": "ltr",
        "scheme": "iob2",
        "label_trigrams": False,
        "pos_features": False,
        "chunk_features": False,
        "chunks_key": "chunks",
        "features": ["preset:ner"],
        "respect_sent_starts": False,
        **SPAN_DEFAULTS,
        "scores_key": "ents",
        "scorer": {"@scorers": "spacy_lookahead.entity_scorer.v1"},
    },
    default_score_weights={"ents_f": 1.0, "ents_p": 0.0, "ents_r": 0.0, "ents_per_type": None},
)
def make_lookahead_ner(nlp: Language, name: str, direction: Direction, scheme: Scheme,
                       label_trigrams: bool, pos_features: bool, chunk_features: bool,
                       chunks_key: str, features: List[str], respect_sent_starts: bool,
                       search: Search, learner: Learner, n_threads: int,
                       probabilities: Probabilities, temperature: Optional[float],
                       scores_key: str, scorer: Optional[Callable]) -> "LookaheadNER":
    """Named entities into doc.ents.

    direction: "rtl" tags right to left (the paper's choice for JNLPBA).
    pos_features / chunk_features: use token.tag_ / doc.spans[chunks_key] as
    input features (then required on every doc, e.g. from a tagger and a
    chunker earlier in the pipeline).
    features, respect_sent_starts: as the chunker's (the preset here is
        "preset:ner").
    search, learner, n_threads, probabilities, temperature: see the tagger
        (the default margin here is 50). With SAPO.v1 the entities are also
        written to doc.spans[scores_key] with their probabilities in
        attrs["scores"].
    """
    return LookaheadNER(nlp.vocab, name, direction=direction, scheme=scheme,
                        label_trigrams=label_trigrams, pos_features=pos_features,
                        chunk_features=chunk_features, chunks_key=chunks_key, features=features,
                        respect_sent_starts=respect_sent_starts, search=search, learner=learner,
                        n_threads=n_threads, probabilities=probabilities,
                        temperature=temperature, scores_key=scores_key, scorer=scorer)


class LookaheadNER(SpanLabeller):
    """Entities from words (substrings < 10 characters, affixes, shape), and
    optionally POS tags and chunks; features as Sun et al. Section 4.2.

    Preset entities are respected as spaCy's `ner` does: tokens whose
    ent_iob is already set (inside an entity, or explicitly outside) keep
    their annotation and the search plans around them."""

    feature_set = "ner"
    feature_settings = ("direction", "label_trigrams", "scheme", "pos_features", "chunk_features",
                        "features", "respect_sent_starts")
    model_settings_before = {"features": ["preset:ner"], "word_classes": {},
                             "respect_sent_starts": False}
    gold_description = "doc.ents on the gold docs"

    def __init__(self, vocab: Vocab, name: str = "lookahead_ner", *, direction: str = "ltr",
                 scheme: str = "iob2", label_trigrams: bool = False, pos_features: bool = False,
                 chunk_features: bool = False, chunks_key: str = "chunks",
                 scores_key: str = "ents", features: Optional[List[str]] = None,
                 respect_sent_starts: bool = False, scorer: Optional[Callable] = None,
                 **settings) -> None:
        super().__init__(vocab, name, direction=direction, scheme=scheme,
                         label_trigrams=bool(label_trigrams), pos_features=bool(pos_features),
                         chunk_features=bool(chunk_features), chunks_key=chunks_key,
                         scores_key=scores_key, features=features,
                         respect_sent_starts=bool(respect_sent_starts), scorer=scorer,
                         **settings)

    def reads_tags(self) -> bool:
        return self.cfg["pos_features"]

    def input_columns(self, doc: Doc, atoms: numpy.ndarray, example: Optional[Example]) -> None:
        if self.cfg["pos_features"]:
            self._tag_column(doc, atoms, example, "pos_features = true")
        if self.cfg["chunk_features"]:
            self._chunk_column(doc, atoms, example, self.cfg["chunks_key"], CHUNK_FIX)

    def token_columns(self) -> Dict[str, bool]:
        return {"tags": bool(self.cfg["pos_features"]), "ent_iob": True}

    def batch_columns(self, docs: List[Doc], batch: Dict[str, Any],
                      examples: Optional[List[Example]]) -> None:
        if self.cfg["pos_features"]:
            self._tag_columns(docs, batch, examples, "pos_features = true")
        if self.cfg["chunk_features"]:
            self._chunk_columns(docs, batch, examples, self.cfg["chunks_key"], CHUNK_FIX)

    def writes_in_c(self, docs: List[Doc], presets_left: bool = False) -> bool:
        """As SpanLabeller's, and no doc has preset entities (they are kept)."""
        return super().writes_in_c(docs) and (presets_left or not has_entities(docs).any())

    def _inputs_on_threads(self) -> bool:
        """No POS or chunk column; presets come from token.ent_iob alone
        (the threads that look the words up leave the docs with some; a
        subclass that finds presets or columns elsewhere does not say so)."""
        own = type(self)
        return (not self.cfg["pos_features"] and not self.cfg["chunk_features"]
                and not self.cfg.get("respect_sent_starts") and not self.system.reads_doc
                and own.forced_ids is LookaheadNER.forced_ids
                and own.preset_docs is LookaheadNER.preset_docs
                and own.batch_columns is LookaheadNER.batch_columns
                and own.input_columns is LookaheadNER.input_columns)

    def _looks_up_on_threads(self, docs: List[Doc]) -> bool:
        """Where the sink writes the entities and the inputs are the words
        (the docs with preset entities left to _finish)."""
        return self._inputs_on_threads() and self._writes_spans_only(docs, True)

    @property
    def scores_key(self) -> str:
        return self.cfg["scores_key"]

    def preset_docs(self, docs: List[Doc], batch: Dict[str, Any]) -> Iterable[int]:
        """The docs with preset entities (token.ent_iob set on some token)."""
        return numpy.flatnonzero(any_per_doc(batch["ent_iob"] != 0, batch["starts"])).tolist()

    def reference_spans(self, doc: Doc):
        return doc.ents if doc.has_annotation("ENT_IOB") else None

    def missing_gold(self, example: Example) -> Optional[numpy.ndarray]:
        iob = example.get_aligned("ENT_IOB")
        return numpy.asarray([not v for v in iob], dtype=bool)

    def _preset(self, doc: Doc) -> Optional[numpy.ndarray]:
        iob = doc.to_array("ENT_IOB")
        return iob if iob.any() else None

    def forced_ids(self, doc: Doc) -> Optional[numpy.ndarray]:
        iob = self._preset(doc)
        if iob is None:
            return None
        known = [(e.start, e.end, e.label_) for e in doc.ents if e.label_ in self.label_ids]
        index = content_index(doc)
        if index is not None:  # a preset entity's whitespace edges are dropped with the spaces
            known = expand_spans(compact_spans(known, index), index)
        ids = spans_to_ids(len(doc), known, self.actions, self.cfg["scheme"])
        ids[iob == 0] = -1  # free: no preset annotation
        return ids

    def without_output(self, doc: Doc) -> Doc:
        """A copy without entities: written ones would read as preset."""
        doc = doc.copy()
        doc.set_ents([], default="missing")
        return doc

    def write_spans(self, doc: Doc, spans: List[Span], scores: Optional[numpy.ndarray]) -> None:
        """doc.ents; with SAPO also doc.spans[scores_key] holding the same
        entities with their probabilities in attrs["scores"] (doc.ents has no
        place for scores)."""
        if self._preset(doc) is not None:  # keep preset entities of types we do not know
            kept = [e for e in doc.ents if e.label_ not in self.label_ids]
            taken = {i for e in kept for i in range(e.start, e.end)}
            if scores is not None:
                scores = scores[[not taken.intersection(range(s.start, s.end)) for s in spans]]
            spans = [s for s in spans if not taken.intersection(range(s.start, s.end))]
            spans, scores = kept + spans, (None if scores is None else
                                           numpy.concatenate([numpy.ones(len(kept), "float32"), scores]))
        order = sorted(range(len(spans)), key=lambda i: spans[i])
        doc.set_ents([spans[i] for i in order], default="outside")
        if scores is not None:
            key = self.cfg["scores_key"]
            doc.spans[key] = SpanGroup(doc, name=key, spans=[spans[i] for i in order],
                                       attrs={"scores": scores[order]})
