"""`lookahead_tagger`: POS tagging with depth-D lookahead search and the
margin perceptron (Tsuruoka et al. 2011, Sections 3 and 4.1)."""
from typing import Callable, Iterable, List, Optional

import numpy
from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example, validate_examples
from spacy.vocab import Vocab

from ..core.marginals import Lattice
from .sequence import SEQUENCE_DEFAULTS, SequencePipe
from .settings import Direction, Learner, Probabilities, Search, Target, Update, config_error
from .spaces import SPACE_POS, SPACE_TAG
from .transition import Prediction, token_probability

TARGETS = ("tag", "pos")
TAG_PROBS = "tag_probs"  # doc.user_data key of the SAPO tag probabilities
token_probability("tag_prob", TAG_PROBS)


@Language.factory(
    "lookahead_tagger",
    assigns=["token.tag"],
    default_config={
        "direction": "ltr",
        "target": "tag",
        "tag_trigrams": False,
        **SEQUENCE_DEFAULTS,
        "scorer": {"@scorers": "spacy_lookahead.tagger_scorer.v1"},
    },
    default_score_weights={"tag_acc": 1.0, "pos_acc": None},
)
def make_lookahead_tagger(nlp: Language, name: str, direction: Direction, target: Target,
                          tag_trigrams: bool, search: Search, depth: int, margin: float,
                          beam_width: int, update: Update, learner: Learner, n: int,
                          learning_rate: float, learning_rate_decay: float, l2: float, n_threads: int,
                          probabilities: Probabilities, temperature: Optional[float], average: bool,
                          scorer: Optional[Callable]) -> "LookaheadTagger":
    """Create a lookahead tagger.

    direction: "ltr" or "rtl", the order in which tokens are tagged.
    target: "tag" (token.tag_, e.g. PTB/XPOS) or "pos" (token.pos_, UPOS).
    tag_trigrams: add (t-1, t-2) history features (the paper's "+ tag trigram").
    search, depth, margin, beam_width, update: the search and the perceptron
        update: "greedy", "lookahead" (depth D, margin C; Tsuruoka et al.
        Figures 2-3) or "beam" (width k, violation-fixing `update`; Huang et al.).
    learner: "perceptron" (averaged) or "sapo" (Sun et al.: top-n search,
        probabilities, L2 with n, learning_rate, learning_rate_decay, l2).
    n_threads: threads that decode the docs of a batch (0: every core); the
        output is the same with any number.
    probabilities: SAPO's tag probabilities (token._.tag_prob): "nbest", the
        mass of the n best outputs that agree on the tag (Sun et al.),
        "marginals", the exact marginal over all outputs (forward-backward;
        first-order models), or "auto": the marginals where they are exact,
        else the n best.
    temperature: SAPO's tau, p(y | x) proportional to exp(w . Phi / tau): null
        fits it on the dev data during training (least NLL of the gold
        outputs; first-order models, 1 otherwise) and saves it with the
        model; a number fixes it.
    average: SAPO predicts with the averaged weights (Algorithm 1 does not).
    """
    return LookaheadTagger(nlp.vocab, name, direction=direction, target=target,
                           tag_trigrams=tag_trigrams, search=search, depth=depth, margin=margin,
                           beam_width=beam_width, update=update, learner=learner, n=n,
                           learning_rate=learning_rate, learning_rate_decay=learning_rate_decay,
                           l2=l2, n_threads=n_threads, probabilities=probabilities,
                           temperature=temperature, average=average, scorer=scorer)


class LookaheadTagger(SequencePipe):
    """A history-based tagger: each token's label is chosen by a depth-D
    lookahead search over the labels of the next tokens (Figure 2) and
    learnt by the margin perceptron on the backed-up scores (Figure 3)."""

    feature_settings = ("direction", "tag_trigrams")
    feature_set = "pos"

    def __init__(self, vocab: Vocab, name: str = "lookahead_tagger", *, direction: str = "ltr",
                 target: str = "tag", tag_trigrams: bool = False,
                 scorer: Optional[Callable] = None, **search_settings) -> None:
        """search_settings: search, depth, margin, beam_width, update, learner,
        n, learning_rate, learning_rate_decay, l2 (settings.py)."""
        if target not in TARGETS:
            raise config_error(name, "target", f"[{name}] target must be one of {TARGETS}, got {target!r}")
        super().__init__(vocab, name, direction=direction, scorer=scorer,
                         search_settings=search_settings, target=target,
                         tag_trigrams=bool(tag_trigrams))

    @property
    def attr(self) -> str:
        return self.cfg["target"].upper()

    def initialize(self, get_examples: Callable[[], Iterable[Example]], *, nlp: Optional[Language] = None,
                   labels: Optional[List[str]] = None) -> None:
        """Collect the label set from the training examples (or `labels`)."""
        validate_examples(get_examples(), "LookaheadTagger.initialize")
        self._reset()
        if labels is None:
            getter = f"{self.cfg['target']}_"
            # whitespace tokens are not tagged by the model (spaces.py)
            labels = sorted({getattr(t, getter) for eg in get_examples() for t in eg.reference
                             if not t.is_space} - {""})
        for label in labels:
            self.add_label(label)
        if not self.labels:
            raise ValueError(f"[{self.name}] no '{self.cfg['target']}' annotation found in the "
                             "training examples: they need gold tags to learn from.")
        self._count_training_set(get_examples)

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
        ids = self.label_ids
        aligned = example.get_aligned(self.attr, as_string=True)
        gold = numpy.asarray([ids.get(t, -1) if t else -1 for t in aligned], dtype="int32")
        return gold if index is None else gold[index]

    def expand(self, output: numpy.ndarray, index: numpy.ndarray, n: int) -> numpy.ndarray:
        """-1 (the space tag) on the whitespace tokens."""
        out = numpy.full((n,), -1, dtype="int32")
        out[index] = output
        return out

    def exact_scorer(self) -> Callable[[Lattice, numpy.ndarray], numpy.ndarray]:
        """Each tag's marginal probability."""
        if self.cfg["direction"] == "rtl":  # steps run from the last token
            return lambda lattice, best: lattice.step_probabilities(best[::-1])[::-1]
        return lambda lattice, best: lattice.step_probabilities(best)

    def expand_scores(self, scores: numpy.ndarray, index: numpy.ndarray, n: int) -> numpy.ndarray:
        out = numpy.ones((n,), dtype="float64")  # the space tag is certain
        out[index] = scores
        return out

    def set_annotations(self, docs: Iterable[Doc], predictions: List[Prediction]) -> None:
        """Write the tags; with SAPO also each tag's probability (the summed
        probability of the n best outputs that agree on it), read through
        `token._.tag_prob` (doc.user_data["tag_probs"]). Whitespace tokens
        (label -1) get the space tag, with probability 1."""
        vocab, label_hashes = None, None
        attrs = [self.attr]
        for doc, out in zip(docs, predictions):
            if doc.vocab is not vocab:  # the strings go to the doc's own vocab
                vocab = doc.vocab
                label_hashes = numpy.asarray([vocab.strings.add(s) for s in self.output_strings()],
                                             dtype="uint64")[:, None]
            if len(out.best):
                doc.from_array(attrs, label_hashes[out.best])
            if out.scores is not None:
                doc.user_data[TAG_PROBS] = numpy.asarray(out.scores, dtype="float64")
            elif out.probs is not None:
                nbest = numpy.asarray(out.nbest, dtype="int32").reshape((len(out.nbest), len(doc)))
                agree = nbest == out.best
                doc.user_data[TAG_PROBS] = agree.T.astype("float64") @ out.probs
