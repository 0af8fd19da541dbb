"""`lookahead_tagger`: POS tagging with depth-D lookahead search and the
margin perceptron (Tsuruoka et al. 2011, Sections 3 and 4.1)."""
from typing import Any, Callable, Iterable, List, Optional, Sequence, Tuple

import numpy
from spacy.language import Language
from spacy.tokens import Doc, Token
from spacy.training import Example
from spacy.vocab import Vocab

from ..core.marginals import StepAlternatives, Transitions, step_alternatives
from ..spacy_io import LabelSink, in_vocab, write_tags
from ..systems.schemes import sum_in_order
from .aligned import aligned_values, hashes_for
from .sequence import SEQUENCE_DEFAULTS, SequencePipe
from . import settings
from .learners import Learner
from .search import Search
from .settings import Direction, Probabilities, Target, config_error
from .spaces import SPACE_POS, SPACE_TAG, any_spaced, content_positions, over_doc_tokens
from .prediction import Predictions, TagPredictions
from .transition import DocsLayout, Prediction, token_probability

TARGETS = ("tag", "pos")
TAG_PROBS = "tag_probs"  # doc.user_data key of the SAPO tag probabilities
token_probability("tag_prob", TAG_PROBS)
# doc.user_data keys of each token's alternative tag (setting `alternatives`):
# the tag's string hash (0: none) and its probability
TAG_ALTERNATIVE = "tag_alternative"
TAG_ALTERNATIVE_PROB = "tag_alternative_prob"


def _tag_alternative(token) -> Optional[Tuple[str, float]]:
    alts = token.doc.user_data.get(TAG_ALTERNATIVE)
    probs = token.doc.user_data.get(TAG_ALTERNATIVE_PROB)
    if alts is None or probs is None or len(alts) != len(token.doc) or not alts[token.i]:
        return None
    return token.doc.vocab.strings[int(alts[token.i])], float(probs[token.i])


if not Token.has_extension(TAG_ALTERNATIVE):
    Token.set_extension(TAG_ALTERNATIVE, getter=_tag_alternative)


@Language.factory(
    "lookahead_tagger",
    assigns=["token.tag"],
    default_config={
        "direction": "ltr",
        "target": "tag",
        "tag_trigrams": False,
        "alternatives": False,
        "features": ["preset:pos"],
        "respect_sent_starts": False,
        **SEQUENCE_DEFAULTS,
        "scorer": {"@scorers": "spacy_lookahead.tagger_scorer.v1"},
    },
    default_score_weights={"tag_acc": 1.0, "pos_acc": None},
)
def make_lookahead_tagger(nlp: Language, name: str, direction: Direction, target: Target,
                          tag_trigrams: bool, alternatives: bool, features: List[str],
                          respect_sent_starts: bool, search: Search, learner: Learner,
                          n_threads: int, probabilities: Probabilities,
                          temperature: Optional[float], scorer: Optional[Callable]
                          ) -> "LookaheadTagger":
    """Create a lookahead tagger.

    direction: "ltr" or "rtl", the order in which tokens are tagged.
    target: "tag" (token.tag_, e.g. PTB/XPOS) or "pos" (token.pos_, UPOS).
    tag_trigrams: add (t-1, t-2) history features (the paper's "+ tag trigram").
    alternatives: also give each token the most probable tag other than the
        one chosen, with its probability (`token._.tag_alternative`: (tag, p)
        or None on whitespace), from the exact marginals of the model's
        distribution at its temperature (fitted on the dev data while
        training, as SAPO's; perceptrons too). First-order models only
        (tag_trigrams = false). A parser can read it (its tag_alternatives).
    features: the feature templates (a list: presets such as "preset:pos"
        and templates such as "cluster6[0]" or "lower[-1] lower[0]";
        spacy_lookahead/systems/templates.py lists the atoms). Templates
        reading `cluster*` or `prob` need the vocab's tables
        ([initialize.lookups], spacy_lookahead/lexicon.py).
    respect_sent_starts: label each sentence of a doc on its own (its
        tokens' features stop at its edges, the label history starts
        again), from the doc's sentence starts (e.g. a sentencizer's or
        a parser's earlier in the pipeline); the `doc` templates still read
        the whole doc.
    search: a @search block: Greedy.v1, Lookahead.v1 (depth D; Tsuruoka et
        al. Figure 2), Beam.v1 (width k, violation-fixing `update`; Huang et
        al.) or TopN.v1 (SAPO's top-n search); pipes/search.py.
    learner: a @learners block: MarginPerceptron.v1 (margin C; Figure 3),
        ViolationFixing.v1 (with Beam.v1) or SAPO.v1 (Sun et al.: n best,
        probabilities, L2; with TopN.v1 or Beam.v1); pipes/learners.py.
    n_threads: threads that decode the docs of a batch (0: every core); the
        output is the same with any number.
    probabilities: SAPO's tag probabilities (token._.tag_prob): "nbest", the
        mass of the n best outputs that agree on the tag (Sun et al.),
        "marginals", the exact marginal over all outputs (forward-backward;
        first-order models), or "auto": the marginals where they are exact,
        else the n best.
    temperature: SAPO's tau, p(y | x) proportional to exp(w . Phi / tau): null
        fits it on the dev data during training (first-order models, 1
        otherwise: with exact marginals, the least log-loss of the tag
        probabilities against whether each tag is right; else the least NLL
        of the gold outputs) and saves it with the model; a number fixes it.
    """
    return LookaheadTagger(nlp.vocab, name, direction=direction, target=target,
                           tag_trigrams=tag_trigrams, alternatives=alternatives,
                           features=features, respect_sent_starts=respect_sent_starts,
                           search=search, learner=learner, n_threads=n_threads,
                           probabilities=probabilities, temperature=temperature, scorer=scorer)


class LookaheadTagger(SequencePipe):
    """A history-based tagger: each token's label is chosen by a depth-D
    lookahead search over the labels of the next tokens (Figure 2) and
    learnt by the margin perceptron on the backed-up scores (Figure 3)."""

    feature_settings = ("direction", "tag_trigrams", "features", "respect_sent_starts")
    model_settings_before = {"features": ["preset:pos"], "word_classes": {},
                             "respect_sent_starts": False}
    feature_set = "pos"

    def __init__(self, vocab: Vocab, name: str = "lookahead_tagger", *, direction: str = "ltr",
                 target: str = "tag", tag_trigrams: bool = False, alternatives: bool = False,
                 features: Optional[List[str]] = None, respect_sent_starts: bool = False,
                 scorer: Optional[Callable] = None, **settings) -> None:
        """settings: search, learner, n_threads, probabilities, temperature
        (settings.py)."""
        if target not in TARGETS:
            raise config_error(name, "target", f"[{name}] target must be one of {TARGETS}, got {target!r}")
        if alternatives is True and tag_trigrams:
            raise config_error(name, "alternatives", f"[{name}] alternatives come from the exact "
                               "marginals of a first-order model: set tag_trigrams = false, or "
                               "alternatives = false.")
        super().__init__(vocab, name, direction=direction, scorer=scorer,
                         alternatives=alternatives, target=target,
                         tag_trigrams=bool(tag_trigrams), features=features,
                         respect_sent_starts=bool(respect_sent_starts), **settings)

    @property
    def attr(self) -> str:
        return self.cfg["target"].upper()

    def initialize(self, get_examples: Callable[[], Iterable[Example]], *, nlp: Optional[Language] = None,
                   labels: Optional[List[str]] = None) -> None:
        """Collect the label set from the training examples (or `labels`)."""
        self._reset()
        getter = f"{self.cfg['target']}_"
        found, size = set(), 0
        # one pass: labels and |S|
        for eg in self._read_examples(get_examples, "LookaheadTagger.initialize"):
            size += 1
            if labels is None:  # whitespace tokens are not tagged by the model (spaces.py)
                found.update(getattr(t, getter) for t in eg.reference if not t.is_space)
        for label in sorted(found - {""}) if labels is None else labels:
            self.add_label(label)
        if not self.labels:
            raise ValueError(f"[{self.name}] no '{self.cfg['target']}' annotation found in the "
                             "training examples: they need gold tags to learn from.")
        self._check_alternatives()
        self._count_training_set(get_examples, size)

    def _check_alternatives(self) -> None:
        if self.cfg["alternatives"] and not self.lattice_fits():
            raise config_error(
                self.name, "alternatives",
                f"alternatives come from the exact lattice, 16 T C^2 bytes per doc of T tokens "
                f"and C labels, and this tagger has {len(self.labels)} labels (at most "
                f"{settings.MAX_LABELS_LATTICE}): set alternatives = false")

    @property
    def space_label(self) -> str:
        """What whitespace tokens get: `_SP` (tag) or `SPACE` (pos), as spaCy's
        own pipelines give them."""
        return SPACE_TAG if self.cfg["target"] == "tag" else SPACE_POS

    def output_strings(self) -> List[str]:
        return [*self.labels, self.space_label]

    def describe(self, output: numpy.ndarray) -> List[str]:
        """Tags in document order; -1 (a whitespace token): the space tag."""
        names = [*self.actions, self.space_label]
        return [names[i] for i in output]

    def gold_ids(self, example: Example, index: Optional[numpy.ndarray] = None) -> numpy.ndarray:
        self._label_hashes = hashes_for(getattr(self, "_label_hashes", None), self.vocab,
                                        self.label_ids)
        gold = self._label_hashes.ids_of(aligned_values(example, self.attr))
        return gold if index is None else gold[index]

    def _predictions(self, docs: List[Doc], indexes: list, results: list) -> Sequence[Prediction]:
        """As SequencePipe's; with `alternatives`, also each token's
        alternative tag (second_best); a calibrated perceptron with
        alternatives reads its tags' probabilities from the same lattices.
        Both predict() and the threaded pipe() come through here; a batch
        decoded at once gives TagPredictions (arrays over the batch)."""
        alternatives = self.cfg["alternatives"]
        if not (alternatives or self.calibrated):
            return super()._predictions(docs, indexes, results)
        layout = indexes if isinstance(indexes, DocsLayout) else None
        if layout is not None:
            kept = layout.output.keep  # SAPO's n best: their mass on each tag
            predictions = (self._kept_predictions(docs, layout) if kept
                           else self._docs_predictions(docs, layout))
            own, alt, alt_probs, _ = self._alternatives(docs, None, layout)
            return TagPredictions(predictions.labels, predictions.starts,
                                  alt if alternatives else None,
                                  alt_probs if alternatives else None,
                                  predictions.probs if kept else own if self.calibrated else None)
        if self.calibrated:
            predictions = [self._in_doc(Prediction(out), i, len(doc))
                           for out, i, doc in zip(results, indexes, docs)]
        else:
            predictions = super()._predictions(docs, indexes, results)
        own, alt, alt_probs, starts = self._alternatives(docs, [p.best for p in predictions])
        bounds = starts.tolist()
        return [p._replace(scores=own[a:b] if self.calibrated else p.scores,
                           alternatives=(alt[a:b], alt_probs[a:b]) if alternatives else None)
                for p, a, b in zip(predictions, bounds, bounds[1:])]

    def _lattice_setup(self, docs: List[Doc], layout: Optional[DocsLayout] = None) -> tuple:
        """What a pass over the docs' lattices needs: the docs as the engine
        takes them and their content indexes (of a batch decoded at once:
        its Docs, whose static scores the search cached; else an instance
        per doc), the weights, tau, the transition scores shared by the docs
        (homogeneous systems) and whether the steps run from the last token
        (rtl)."""
        self._check_alternatives()
        if layout is not None:
            instances, indexes = layout.held, layout.indexes
        else:
            inputs, indexes = self.inputs_and_indexes(docs)
            instances = self.instances(docs, None, indexes, inputs)
        W, tau, system = self.averaged_weights, self.temperature, self.system
        transitions = Transitions(system, W, tau) if system.homogeneous else None
        return instances, indexes, W, tau, transitions, self.cfg["direction"] == "rtl"

    def _lattice_pass(self, held, starts: numpy.ndarray) -> Optional[StepAlternatives]:
        """With `alternatives` or calibrated: each token's marginal, its
        alternative tag and that tag's marginal (StepAlternatives), from
        each doc's lattice right after its search, on the same thread."""
        if not (self.cfg["alternatives"] or self.calibrated):
            return None
        self._check_alternatives()
        return StepAlternatives(held, self.averaged_weights, self.temperature, None, starts,
                                None, self.cfg["direction"] == "rtl")

    def _alternatives(self, docs: List[Doc], best: Optional[List[numpy.ndarray]],
                      layout: Optional[DocsLayout] = None
                      ) -> Tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray, numpy.ndarray]:
        """Over the docs' tokens, one doc after another (doc k's at
        starts[k]:starts[k + 1], the last array), from one lattice per doc
        (its marginals, core/marginals.pyx: step_alternatives, no numpy per
        doc): each token's probability of its tag in `best` (ids over the
        doc's tokens; a batch decoded at once: its own labels), its most
        probable other tag (first in tag order on ties) and that tag's
        probability; on whitespace 1, -1 and 0, and -1 and 0 where there is
        no other tag."""
        if layout is not None and layout.lattices is not None:  # (done with the search)
            own, alt, alt_probs = layout.lattices.check().outputs()
            starts, indexes = layout.starts, layout.indexes
            return self._over_doc_tokens(docs, indexes, own, alt, alt_probs, starts)
        instances, indexes, W, tau, transitions, rtl = self._lattice_setup(docs, layout)
        if layout is not None:
            derivations, starts = layout.output.labels, layout.starts
        else:
            contents = [tags if index is None else tags[index] for tags, index in zip(best, indexes)]
            derivations = numpy.concatenate([numpy.asarray(c, dtype="int32") for c in contents]
                                            or [numpy.zeros((0,), dtype="int32")])
            starts = numpy.zeros((len(docs) + 1,), dtype="int64")
            numpy.cumsum([len(c) for c in contents], out=starts[1:])
        own, alt, alt_probs = step_alternatives(instances, derivations, starts, W, tau, transitions,
                                                rtl)
        return self._over_doc_tokens(docs, indexes, own, alt, alt_probs, starts)

    @staticmethod
    def _over_doc_tokens(docs: List[Doc], indexes: list, own: numpy.ndarray, alt: numpy.ndarray,
                         alt_probs: numpy.ndarray, starts: numpy.ndarray) -> tuple:
        """_alternatives' arrays over the docs' content tokens, over all their
        tokens (whitespace: 1, -1, 0), and where each doc's begin."""
        if not any_spaced(indexes):
            return own, alt, alt_probs, starts
        content, doc_starts = content_positions(docs, indexes)
        n = int(doc_starts[-1])
        return (over_doc_tokens(own, content, n, 1.0), over_doc_tokens(alt, content, n, -1),
                over_doc_tokens(alt_probs, content, n, 0.0), doc_starts)

    def second_best(self, docs: List[Doc], best: List[numpy.ndarray],
                    layout: Optional[DocsLayout] = None
                    ) -> List[Tuple[numpy.ndarray, numpy.ndarray]]:
        """Per doc: the id of each token's most probable tag other than its
        tag in `best` (ids over the doc's tokens), and its marginal
        probability under p(y | x) = exp(w . Phi / tau) / Z (the exact
        marginals of the first-order lattice, core/marginals.pyx);
        -1 and 0 on whitespace tokens and where there is no other tag."""
        _, alt, alt_probs, starts = self._alternatives(docs, best, layout)
        bounds = starts.tolist()
        return [(alt[a:b], alt_probs[a:b]) for a, b in zip(bounds, bounds[1:])]

    def expand(self, output: numpy.ndarray, index: numpy.ndarray, n: int) -> numpy.ndarray:
        """-1 (the space tag) on the whitespace tokens."""
        return over_doc_tokens(numpy.asarray(output, dtype="int32"), index, n, -1)

    def expand_batch(self, labels: numpy.ndarray, starts: numpy.ndarray, positions: numpy.ndarray,
                     doc_starts: numpy.ndarray) -> numpy.ndarray:
        return self.expand(labels, positions, int(doc_starts[-1]))

    def exact_scorer(self) -> None:
        """Each tag's marginal probability: the probabilities of the steps."""
        return None

    def part_truth(self, best: numpy.ndarray, gold: numpy.ndarray) -> Optional[numpy.ndarray]:
        """Each tag: is it the gold tag."""
        return None if (gold < 0).any() else best == gold

    def expand_scores(self, scores: numpy.ndarray, index: numpy.ndarray, n: int) -> numpy.ndarray:
        out = numpy.ones((n,), dtype="float64")  # the space tag is certain
        out[index] = scores
        return out

    def _output_sink(self, docs: List[Doc], indexes: List[Optional[numpy.ndarray]],
                     lattices: Any, looked_up: bool = False) -> Optional[LabelSink]:
        """token.tag written by the searching threads (as set_annotations'
        write_tags) where that is all it writes: tags, no alternatives or
        probabilities, one vocab (the space tag on whitespace)."""
        if not self._writes_tags_only(docs):
            return None
        return LabelSink.tags(docs, self.string_hashes(self.output_strings()), undoable=True)

    def _writes_tags_only(self, docs: List[Doc]) -> bool:
        """Whether set_annotations writes token.tag and nothing else on
        `docs` (their whitespace tokens aside): tags, no alternatives or
        probabilities, one vocab."""
        return (self.attr == "TAG" and not self.cfg["alternatives"] and not self.calibrated
                and type(self).set_annotations is LookaheadTagger.set_annotations
                and in_vocab(docs, self.vocab))

    def _looks_up_on_threads(self, docs: List[Doc]) -> bool:
        """Where the sink writes the tags and the inputs are the words alone
        (a doc's whitespace is left out of its search there, and gets the
        space tag from the sink)."""
        return self._writes_tags_only(docs) and self._inputs_on_threads()

    def set_annotations(self, docs: Iterable[Doc], predictions: List[Prediction]) -> None:
        """Write the tags; with SAPO also each tag's probability (the summed
        probability of the n best outputs that agree on it), read through
        `token._.tag_prob` (doc.user_data["tag_probs"]). Whitespace tokens
        (label -1) get the space tag, with probability 1."""
        vocab, label_hashes = None, None
        attrs = [self.attr]
        docs = list(docs)
        in_c = self.attr == "TAG" and in_vocab(docs, self.vocab)
        if in_c:  # token.tag in C, the whole batch (spacy_io.write_tags)
            label_hashes = self.string_hashes(self.output_strings())[:, None]
            if isinstance(predictions, Predictions):  # a batch decoded at once
                write_tags(docs, predictions.labels, label_hashes[:, 0], predictions.starts)
                if isinstance(predictions, TagPredictions):
                    self._write_alternatives(docs, predictions, label_hashes[:, 0])
                return
            write_tags(docs, [out.best for out in predictions], label_hashes[:, 0])
            if all(out.alternatives is None and out.scores is None and out.probs is None
                   for out in predictions):
                return
        for doc, out in zip(docs, predictions):
            if doc.vocab is not vocab and not in_c:  # the strings go to the doc's own vocab
                vocab = doc.vocab
                label_hashes = numpy.asarray([vocab.strings.add(s) for s in self.output_strings()],
                                             dtype="uint64")[:, None]
            if len(out.best) and not in_c:
                doc.from_array(attrs, label_hashes[out.best])
            if out.alternatives is not None:
                ids, probs = out.alternatives
                doc.user_data[TAG_ALTERNATIVE] = numpy.where(
                    ids >= 0, label_hashes[ids, 0], 0).astype("uint64")
                doc.user_data[TAG_ALTERNATIVE_PROB] = probs
            if out.scores is not None:
                doc.user_data[TAG_PROBS] = numpy.asarray(out.scores, dtype="float64")
            elif out.probs is not None:
                nbest = numpy.asarray(out.nbest, dtype="int32").reshape((len(out.nbest), len(doc)))
                agree = nbest == out.best
                # (a sum of the agreeing outputs' p, in their order as a batch's
                # are summed (SequencePipe._kept_predictions): rounding can pass 1)
                doc.user_data[TAG_PROBS] = numpy.minimum(
                    sum_in_order(numpy.asarray(out.probs)[:, None], agree), 1.0)

    @staticmethod
    def _write_alternatives(docs: List[Doc], predictions: TagPredictions,
                            label_hashes: numpy.ndarray) -> None:
        """doc.user_data's alternatives (and tag probabilities) of a batch:
        the tag hashes looked up once for the batch, each doc's entries
        views of the batch's arrays."""
        alt = None
        if predictions.alt is not None:
            alt = numpy.where(predictions.alt >= 0, label_hashes[predictions.alt], 0
                              ).astype("uint64")
        bounds = predictions.starts.tolist()
        probs = predictions.probs
        for doc, a, b in zip(docs, bounds, bounds[1:]):
            user_data = doc.user_data
            if alt is not None:
                user_data[TAG_ALTERNATIVE] = alt[a:b]
                user_data[TAG_ALTERNATIVE_PROB] = predictions.alt_probs[a:b]
            if probs is not None:
                user_data[TAG_PROBS] = probs[a:b]
