"""`arc_standard_parser`: labelled arc-standard dependency parsing (Nivre
2004) with greedy search, depth-D lookahead and the margin perceptron
(Tsuruoka et al. 2011, Section 4.2), beam search with the violation-fixing
updates (Huang et al. 2012), or SAPO over the beam's n best parses (Sun et
al.), which also gives each token's head probability; so does a beam
perceptron calibrated on held-out data (`fit_temperature`). Non-projective training
trees are lifted with label decoration and restored on output (spaCy's
nonproj)."""
import warnings
from collections import Counter
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple, Union

import numpy
from spacy.language import Language
from spacy.pipeline._parser_internals import nonproj
from spacy.tokens import Doc
from spacy.training import Example
from spacy.vocab import Vocab

from ..core import decode as decoding
from ..core.features import A_TAG_ALT_COLUMN as A_TAG_ALT, SURE
from ..core.calibration import minimise_over_temperature
from ..core.weights import Weights
from ..spacy_io import LexemeAtoms, in_vocab, sentence_ids, write_arcs
from ..systems.arc_standard import ArcStandardSystem
from ..systems.parser_templates import parser_groups
from ..systems.templates import (PARSER_SLOTS, PARSER_STATE_ATOMS, TemplateError,
                                 split_parser_features, uses_lexicon)
from .. import scoring  # noqa: F401  (registers the default scorer without the entry point)
from .aligned import aligned_values
from .learners import Learner
from .search import Beam, Search
from .sequence import PERCEPTRON_MAX_TEMPERATURE
from .settings import MAX_TEMPERATURE, SEARCH_DEFAULTS, ParserFeatures, config_error
from .spaces import (SPACE_DEP, any_spaced, compact_heads, content_positions, expand_tree,
                     expand_trees, over_doc_tokens, without_whitespace)
from .tagger import TAG_ALTERNATIVE, TAG_ALTERNATIVE_PROB, TAG_PROBS
from . import noun_chunks
from .prediction import Trees, kept_probabilities, nbest_prediction
from .transition import DocsLayout, Prediction, TransitionPipe, softmax, token_probability

# doc.user_data key of the head probabilities (SAPO, a calibrated beam perceptron)
HEAD_PROBS = "head_probs"
# tag_alternatives: a tagger's alternative tag is a feature from this
# probability up. EWT dev, the depth-1 tagger of jackknife fold 0: 13% of
# the tokens, where the tag is wrong 33% of the time and the alternative
# right 23% (76% of the tagger's errors); below it the tag is right 98.4%.
ALTERNATIVE_MIN_PROB = 0.05
token_probability("head_prob", HEAD_PROBS)


def same_arcs(tree: tuple, other: tuple) -> numpy.ndarray:
    """Per token, whether two trees give it the same head and label."""
    return (tree[0] == other[0]) & (tree[1] == other[1])


def validate_min_label_freq(name: str, min_label_freq: Any) -> None:
    if (not isinstance(min_label_freq, int) or isinstance(min_label_freq, bool)
            or min_label_freq < 1):
        raise config_error(name, "min_label_freq", f"[{name}] min_label_freq must be an integer >= 1, got {min_label_freq!r}")


def validate_features(name: str, features: Any) -> Tuple[str, List[str]]:
    """(the fixed set, "base" or "rich"; the templates on top of it)."""
    try:
        preset, templates = split_parser_features(features)
        parser_groups(preset, False, templates)
        return preset, templates
    except TemplateError as err:
        raise config_error(name, "features",
                           f"[{name}] features: {err}. Set features = \"base\" (the default "
                           f"set), \"rich\" (plus Zhang and Nivre's third-order and label-set "
                           f"features) or a list such as [\"preset:rich\", \"cluster6[s0]\", "
                           f"\"cluster6[q0] tag[q0]\", \"ctag[s0] nl[s0]\"] (positions: "
                           f"{', '.join(PARSER_SLOTS)}; the state's atoms: "
                           f"{', '.join(PARSER_STATE_ATOMS)})."
                           ) from None


@Language.factory(
    "arc_standard_parser",
    assigns=["token.head", "token.dep", "token.is_sent_start", "doc.sents"],
    requires=["token.tag"],
    default_config={
        **SEARCH_DEFAULTS,
        "respect_sent_starts": False,
        "min_label_freq": 20,
        "features": "base",
        "tag_alternatives": False,
        "joint_tagging": False,
        "temperature": None,
        "scorer": {"@scorers": "spacy_lookahead.parser_scorer.v1"},
    },
    default_score_weights={"dep_uas": 0.5, "dep_las": 0.5, "dep_las_per_type": None,
                           "sents_p": None, "sents_r": None, "sents_f": 0.0},
)
def make_arc_standard_parser(nlp: Language, name: str, search: Search, learner: Learner,
                             n_threads: int,
                             respect_sent_starts: bool, min_label_freq: int,
                             scorer: Optional[Callable],
                             features: Union[ParserFeatures, List[str]] = "base",
                             tag_alternatives: bool = False,
                             joint_tagging: bool = False,
                             temperature: Optional[float] = None) -> "ArcStandardParser":
    """Create an arc-standard parser.

    search: a @search block: Greedy.v1, Lookahead.v1 (depth D; Figure 2 of
        Tsuruoka et al. 2011), Beam.v1 (width k, violation-fixing `update`:
        standard, early, max_violation, hybrid or latest) or TopN.v1 (for
        SAPO: the parser is not first-order, so a beam of max(n, width)).
    learner: a @learners block: MarginPerceptron.v1 (margin C; Figure 3),
        ViolationFixing.v1 (with Beam.v1) or SAPO.v1 (Sun et al.: the n best
        parses, probabilities, L2; each token's head probability in
        token._.head_prob). A ViolationFixing.v1 model writes head
        probabilities too once calibrated: `parser.fit_temperature(examples)`
        on held-out data (benchmarks/package.py does it for a package).
    respect_sent_starts: keep the docs' existing sentence boundaries (arcs
        stay inside them, one root each) instead of predicting them.
    min_label_freq: decorated (lifted) labels rarer than this in the training
        data are replaced by their plain label.
    features: "base" (Huang and Sagae's templates, distance, valency,
        dependent labels) or "rich": base plus Zhang and Nivre's (2011)
        third-order features (second leftmost/rightmost dependents of s0 and
        s1), label sets of s0's and s1's dependents, and 3-letter suffixes;
        or a list: one of "preset:base" / "preset:rich" (base if none) and
        feature templates over the stack and buffer positions s0, s1, s2,
        q0, q1, q2, s0l, s0r, s1l, s1r, s0l2, s0r2, s1l2, s1r2
        (systems/templates.py), e.g. "cluster6[s0]" or "cluster4[q0]
        tag[q0]" (Koo et al. 2008's cluster features; the tables come from
        [initialize.lookups]), and over the state: "ctag[s0] nl[s0]",
        "label[s0l] cluster4[s0]" (the presets are such lists:
        systems/parser_templates.py).
        Saved with the model: a loaded model uses the set it was trained
        with (models saved before the setting: "base").
    tag_alternatives: also read the tagger's alternative tags
        (`token._.tag_alternative` of a lookahead_tagger with alternatives =
        true) as features, where their probability is at least
        ALTERNATIVE_MIN_PROB: the tagger's uncertainty, not only its choice.
        Train on docs that have them (e.g. a jackknifed corpus made with
        that tagger). Saved with the model.
    joint_tagging: tag in the parser's search (Hatori et al. 2011; Bohnet
        and Nivre 2012), between the tagger's tag and its alternative (needs
        tag_alternatives): a word is shifted with one of them (SHIFT or
        SHIFT-ALT), the beam keeps both readings, and the chosen tag is
        written to token.tag_. Train on docs whose tags come from that
        tagger (the jackknifed corpus); the gold SHIFT-ALT is where the
        alternative is the gold tag. Saved with the model.
    temperature: SAPO's tau, p(parse | x) proportional to exp(w . Phi / tau)
        over the n best: null fits it on the dev data during training, to
        the head probabilities the parser writes (saved with the model).

    In an English pipeline the parser also makes `doc.noun_chunks` read UD
    labels (pipes/noun_chunks.py: spaCy's English iterator reads ClearNLP's).
    """
    noun_chunks.install(nlp)
    return ArcStandardParser(nlp.vocab, name, search=search, learner=learner,
                             n_threads=n_threads, respect_sent_starts=respect_sent_starts,
                             min_label_freq=min_label_freq, features=features,
                             tag_alternatives=tag_alternatives, joint_tagging=joint_tagging,
                             temperature=temperature, scorer=scorer)


class ArcStandardParser(TransitionPipe):
    """Predicts `token.head`, `token.dep_` and the sentence boundaries. The
    POS tags (`token.tag_`) are an input: from a tagger earlier in the
    pipeline; while training, from the gold docs if the docs have none."""

    # the root label is learnt from the data, like the labels; the feature
    # set is the one the weights were trained with
    model_settings = TransitionPipe.model_settings + ("root_label", "features",
                                                      "tag_alternatives", "joint_tagging",
                                                      "fitted_width")
    model_settings_before = {"features": "base", "tag_alternatives": False,
                             "joint_tagging": False}

    def __init__(self, vocab: Vocab, name: str = "arc_standard_parser", *,
                 respect_sent_starts: bool = False, min_label_freq: int = 20,
                 scorer: Optional[Callable] = None, root_label: str = "ROOT",
                 features: str = "base", tag_alternatives: bool = False,
                 joint_tagging: bool = False, temperature: Optional[float] = None,
                 **settings: Any) -> None:
        """settings: search, learner, n_threads (settings.py); temperature:
        SAPO's, null fits it on the dev data (the head probabilities)."""
        validate_min_label_freq(name, min_label_freq)
        validate_features(name, features)
        if not isinstance(features, str):
            features = list(features)
        for key, value in (("tag_alternatives", tag_alternatives),
                           ("joint_tagging", joint_tagging)):
            if not isinstance(value, bool):
                raise config_error(name, key, f"[{name}] {key} must be true or false, got "
                                              f"{value!r}")
        if joint_tagging and not tag_alternatives:
            raise config_error(name, "joint_tagging", f"[{name}] joint_tagging chooses between "
                               "the tagger's tag and its alternative: set tag_alternatives = "
                               "true too (and alternatives = true on the lookahead_tagger).")
        super().__init__(vocab, name, scorer=scorer, temperature=temperature, **settings,
                         respect_sent_starts=bool(respect_sent_starts),
                         min_label_freq=min_label_freq, root_label=root_label,
                         features=features, tag_alternatives=tag_alternatives,
                         joint_tagging=joint_tagging)
        self._set_templates()

    def _set_templates(self) -> None:
        self._preset, self._templates = split_parser_features(self.cfg.get("features", "base"))
        self._atoms = LexemeAtoms()
        self._lexicon_needs = uses_lexicon(self._templates, PARSER_SLOTS)

    def _on_load(self) -> None:
        super()._on_load()
        self._set_templates()  # the features the model was trained with

    def reads_tags(self) -> bool:
        return True

    def _feature_values(self, cfg: Dict[str, Any]) -> Dict[str, Any]:
        """The weights' checksum covers the feature set and tag_alternatives
        where they are not the defaults: a saved cfg edited to another set
        is refused, and models saved before these settings (all default)
        keep their checksums."""
        values = super()._feature_values(cfg)
        for key, default in self.model_settings_before.items():
            if cfg.get(key, default) != default:
                values[key] = cfg[key]
        return values

    @property
    def rich_features(self) -> bool:
        return self._preset == "rich"

    @property
    def tag_alternatives(self) -> bool:
        return bool(self.cfg.get("tag_alternatives", False))

    @property
    def joint_tagging(self) -> bool:
        return bool(self.cfg.get("joint_tagging", False))

    def make_system(self) -> ArcStandardSystem:
        return ArcStandardSystem(len(self.labels), rich=self.rich_features,
                                 alternatives=self.tag_alternatives, joint=self.joint_tagging,
                                 templates=self._templates)

    def system_is_current(self, system: ArcStandardSystem) -> bool:
        return (system.n_labels == len(self.labels) and system.rich == self.rich_features
                and system.alternatives == self.tag_alternatives
                and system.joint == self.joint_tagging and system.templates == self._templates)

    # --- labels and gold ---------------------------------------------------------
    def initialize(self, get_examples: Callable[[], Iterable[Example]], *,
                   nlp: Optional[Language] = None, labels: Optional[List[str]] = None) -> None:
        """Collect the arc labels (after projectivisation, with decorated
        labels of lifted arcs) and the root label from the training data."""
        self._reset()
        counts: Counter = Counter()
        roots: Counter = Counter()
        tags, size = set(), 0
        # one pass: labels, |S|, input tags
        for eg in self._read_examples(get_examples, "ArcStandardParser.initialize"):
            size += 1
            tags |= self._example_tags(eg)
            heads, deps = self._projective(eg.reference)
            space = eg.reference.to_array("IS_SPACE") if len(eg.reference) else []
            for i, (h, d) in enumerate(zip(heads, deps)):
                if not d or h is None or space[i]:  # whitespace: attached by rule
                    continue
                (roots if h == i else counts)[d] += 1
        if labels is None:
            freq = self.cfg["min_label_freq"]
            labels = sorted({d if not nonproj.is_decorated(d) or c >= freq else nonproj.decompose(d)[0]
                             for d, c in counts.items()})
        for label in labels:
            self.add_label(label)
        if roots:
            self.cfg["root_label"] = roots.most_common(1)[0][0]
        if not self.labels:
            raise ValueError(f"[{self.name}] no dependency annotation (token.head, token.dep_) "
                             "found in the training examples: they need gold trees to learn from.")
        self._count_training_set(get_examples, size, tags)

    @staticmethod
    def _projective(doc: Doc) -> Tuple[list, list]:
        if not doc.has_annotation("DEP"):
            return [None] * len(doc), [""] * len(doc)
        heads = [t.head.i for t in doc]
        deps = [t.dep_ for t in doc]
        return nonproj.projectivize(heads, deps)

    def gold(self, example: Example, index: Optional[numpy.ndarray] = None) -> tuple:
        """Projectivised gold (heads, label ids) on the predicted tokens (the
        content tokens at `index` if given): head = i for a root, -1 where
        unknown (also a head on a whitespace token); label -1 for roots and
        unknown. With joint_tagging also a third array: 1 where the
        tagger's alternative tag is the gold tag (the gold SHIFT-ALT)."""
        tree = self._gold_tree(example, index)
        if not self.joint_tagging:
            return tree
        alt = self._gold_alternatives(example)
        return (*tree, alt if index is None else alt[index])

    def _gold_alternatives(self, example: Example) -> numpy.ndarray:
        """Per predicted token, 1 where its likely alternative tag (as
        _alternative_column reads it) is the reference's tag."""
        doc = example.predicted
        atoms = numpy.full((len(doc), A_TAG_ALT + 1), SURE, dtype="uint64")
        self._alternative_column(doc, atoms, example)
        gold = aligned_values(example, "TAG")
        alts = atoms[:, A_TAG_ALT]
        return ((alts != SURE) & (alts == gold) & (gold != 0)).astype("uint8")

    def _gold_tree(self, example: Example, index: Optional[numpy.ndarray] = None
                   ) -> Tuple[numpy.ndarray, numpy.ndarray]:
        n = len(example.predicted)
        if not example.reference.has_annotation("DEP"):
            m = n if index is None else len(index)
            return numpy.full((m,), -1, dtype="int32"), numpy.full((m,), -1, dtype="int32")
        heads, deps = example.get_aligned_parse(projectivize=True)
        ids = self.label_ids
        h = numpy.asarray([-1 if x is None else x for x in heads], dtype="int32")
        labels = numpy.full((n,), -1, dtype="int32")
        for i, d in enumerate(deps):
            if d and h[i] != i:
                j = ids.get(d)
                if j is None and nonproj.is_decorated(d):
                    j = ids.get(nonproj.decompose(d)[0])
                labels[i] = -1 if j is None else j
        if index is None:
            return h, labels
        h = compact_heads(h, index, n)
        labels = labels[index]
        labels[h < 0] = -1
        return h, labels

    # --- inputs --------------------------------------------------------------
    def _inputs(self, docs: List[Doc], examples: Optional[List[Example]] = None) -> list:
        return self.inputs_and_indexes(docs, examples)[0]

    def _batch_columns(self, docs: List[Doc], examples: Optional[List[Example]] = None
                       ) -> Dict[str, Any]:
        """The batch's tokens read once in C (words, tags, whitespace:
        LexemeAtoms.docs_inputs), with the columns the settings add:
        tag_alternatives' column in the atoms, and with respect_sent_starts
        "sent_ids" (N,) int32 (equal within a given sentence of a doc) and
        "sent_docs" (n_docs,) uint8, 1 for the docs whose sentences are
        given (only they read their sent_ids)."""
        self._check_lexicon(docs)
        batch = self._atoms.docs_inputs(docs, tags=True, own=self._own_tables())
        self._tag_columns(docs, batch, examples, "parsing")
        every, bounds = batch["atoms"], batch["starts"]
        alternatives, sent_starts = self.tag_alternatives, self.cfg["respect_sent_starts"]
        if sent_starts:
            batch["sent_ids"], batch["sent_docs"] = sentence_ids(docs, bounds)
        if alternatives:
            self._alternative_columns(docs, every, bounds, examples)
        return batch

    def inputs_and_indexes(self, docs: List[Doc], examples: Optional[List[Example]] = None
                           ) -> Tuple[list, List[Optional[numpy.ndarray]]]:
        """Each doc's input (an instance's: its atoms, and its sent_ids where
        its sentences are given) and its content positions (_batch_columns)."""
        batch = self._batch_columns(docs, examples)
        every, space = batch["atoms"], batch["space"]
        bounds = batch["starts"].tolist()
        inputs: List[Dict[str, Any]] = [{"atoms": every[a:b]} for a, b in zip(bounds, bounds[1:])]
        for k in numpy.flatnonzero(batch.get("sent_docs", ())).tolist():
            inputs[k]["sent_ids"] = batch["sent_ids"][bounds[k]:bounds[k + 1]]
        if space is None:
            return inputs, [None] * len(docs)
        indexes = []
        for a, b in zip(bounds, bounds[1:]):
            words = space[a:b]
            indexes.append(numpy.flatnonzero(words == 0).astype("int32") if words.any() else None)
        return inputs, indexes

    def batch_inputs(self, docs: List[Doc], defer_rows: bool = False, lookup: int = 0
                     ) -> Tuple[Dict[str, Any], List[Optional[numpy.ndarray]]]:
        """The batch input of ArcStandardSystem.batch_docs (_batch_columns,
        whitespace tokens left out) and each doc's content positions.
        defer_rows, lookup: unused (the parser adds columns of its own to
        the rows, so every row is made here)."""
        batch = self._batch_columns(docs)
        held = {"atoms": batch["atoms"], "starts": batch["starts"],
                "sent_ids": batch.get("sent_ids")}
        if batch["space"] is not None:
            held, indexes = without_whitespace(held, batch["space"])
        else:
            indexes = [None] * len(docs)
        held["sent_docs"] = batch.get("sent_docs")
        return held, indexes

    def _alternative_columns(self, docs: List[Doc], atoms: numpy.ndarray, starts: numpy.ndarray,
                             examples: Optional[List[Example]]) -> None:
        """_alternative_column over a batch: the docs whose tagger kept its
        alternatives (the tagger's arrays, of the doc's length) in one
        numpy pass over their tokens, the others doc by doc."""
        alts, probs, kept = [], [], []
        for k, doc in enumerate(docs):
            a, p = doc.user_data.get(TAG_ALTERNATIVE), doc.user_data.get(TAG_ALTERNATIVE_PROB)
            if (isinstance(a, numpy.ndarray) and isinstance(p, numpy.ndarray)
                    and len(a) == len(doc) == len(p) and len(doc)):
                alts.append(a)
                probs.append(p)
                kept.append(k)
            else:
                self._alternative_column(doc, atoms[starts[k]:starts[k + 1]],
                                         examples[k] if examples else None)
        if not kept:
            return
        likely = numpy.concatenate(probs) >= ALTERNATIVE_MIN_PROB
        column = numpy.where(likely, numpy.concatenate(alts).astype("uint64", copy=False), SURE)
        if len(kept) == len(docs):
            atoms[:, A_TAG_ALT] = column
        else:
            rows = numpy.concatenate([numpy.arange(starts[k], starts[k + 1]) for k in kept])
            atoms[rows, A_TAG_ALT] = column

    def _alternative_column(self, doc: Doc, atoms: numpy.ndarray,
                            example: Optional[Example]) -> None:
        """A_TAG_ALT: the tagger's alternative tag where its probability is
        at least ALTERNATIVE_MIN_PROB, else SURE. Gold tags (training on a
        doc without tags) are sure; tags without alternatives are an error."""
        alts = doc.user_data.get(TAG_ALTERNATIVE)
        probs = doc.user_data.get(TAG_ALTERNATIVE_PROB)
        if alts is not None and probs is not None and len(alts) == len(doc) == len(probs):
            likely = numpy.asarray(probs) >= ALTERNATIVE_MIN_PROB
            atoms[:, A_TAG_ALT] = numpy.where(likely, numpy.asarray(alts, dtype="uint64"), SURE)
        elif (example is not None and not doc.has_annotation("TAG")) or not len(doc):
            atoms[:, A_TAG_ALT] = SURE
        else:
            raise ValueError(
                f"[{self.name}] tag_alternatives = true reads the tagger's alternative tags "
                "(token._.tag_alternative), and this doc has none: set alternatives = true on "
                "the lookahead_tagger before the parser (to train: make the training docs with "
                "such a tagger, e.g. python -m spacy_lookahead jackknife ... "
                "--components.lookahead_tagger.alternatives true, read with inputs [\"tag\", "
                "\"tag_alternatives\"]).")

    # --- output --------------------------------------------------------------
    def label_names(self) -> List[str]:
        """The names of the output label ids: the arc labels, then the label
        of whitespace tokens' arcs (id len(labels)), then the root label (-1)."""
        return [*self.labels, SPACE_DEP, self.cfg["root_label"]]

    def output_strings(self) -> List[str]:
        """The labels, those of lifted arcs undecorated, ROOT and `dep`."""
        names = self.label_names()
        return names + [nonproj.decompose(d)[0] for d in names if nonproj.is_decorated(d)]

    def expand(self, tree: tuple, index: numpy.ndarray, n: int) -> tuple:
        """Whitespace tokens attached to the preceding word (spaces.py);
        joint: they keep their tags."""
        expanded = expand_tree(tree[0], tree[1], index, n, len(self.labels))
        if len(tree) < 3:
            return expanded
        alts = numpy.zeros((n,), dtype="uint8")
        alts[index] = tree[2]
        return (*expanded, alts)

    def describe(self, tree: Tuple[numpy.ndarray, numpy.ndarray]) -> Tuple[List[int], List[str]]:
        """(heads, labels) as predict_nbest shows them: absolute head indices
        (a root is its own head) and label names (decorated labels of lifted
        arcs as they are; the root label for roots)."""
        heads, labels = tree[0], tree[1]
        names = self.label_names()
        if len(tree) > 2:  # joint: also which words took the tagger's alternative tag
            return heads.tolist(), [names[i] for i in labels], tree[2].astype(bool).tolist()
        return heads.tolist(), [names[i] for i in labels]

    # --- head probabilities: the n best at a temperature -------------------------
    @property
    def nbest_n(self) -> int:
        """How many of the n best parses the head probabilities sum over:
        SAPO's n; a beam perceptron's beam width (its final beam, the same
        beam whose best parse it writes). A greedy or lookahead perceptron
        has no n best that keep its parse: the error that names the fix."""
        if self.learner.probabilistic:
            return self.learner.n
        if isinstance(self.search, Beam):
            return self.search.predict_beam_width(1)
        raise ValueError(
            f"[{self.name}] head probabilities come from the beam's n best parses, and this "
            f"perceptron parser searches with {self.search.registered}: a wider search would "
            "change the parse it writes. Train it with @search = \"spacy_lookahead.Beam.v1\" "
            "and @learners = \"spacy_lookahead.ViolationFixing.v1\" (or learner = SAPO.v1) to "
            "calibrate it.")

    @property
    def calibrated(self) -> bool:
        """A beam perceptron whose temperature was fitted on held-out data
        (`fit_temperature`): prediction keeps the final beam's parses and
        their scores (core.decode.nbest: the same beam as decode's, so the
        same best parse) and writes each token's head probability at that
        temperature, as SAPO does. Uncalibrated, decode's best only."""
        return (not self.learner.probabilistic and isinstance(self.search, Beam)
                and self.cfg.get("fitted_temperature") is not None)

    @property
    def has_temperature(self) -> bool:
        return self.learner.probabilistic or self.calibrated

    def fit_temperature(self, examples: List[Example]) -> float:
        """TransitionPipe.fit_temperature; also keeps the width of the beam
        whose n best it was fitted on (the prediction width)."""
        tau = super().fit_temperature(examples)
        if self.cfg.get("fitted_temperature") is not None:
            self.cfg["fitted_width"] = self.search.predict_beam_width(1)
        return tau

    def _decoder(self) -> Tuple[Callable, tuple]:
        fitted, width = self.cfg.get("fitted_width"), self.search.predict_beam_width(1)
        if fitted is not None and fitted != width and self.has_temperature \
                and self.cfg.get("temperature") is None:
            warnings.warn(
                f"[{self.name}] its temperature was fitted on the n best of a beam of {fitted}, "
                f"and it predicts with a beam of {width}: its head probabilities are not "
                f"calibrated for that beam. Fit it again (fit_temperature on held-out "
                f"examples), or predict with predict_width = {fitted}.", UserWarning)
        if not self.calibrated:
            return super()._decoder()
        width = self.search.predict_beam_width(1)  # n = width: decode's beam, not max(n, width)
        return decoding.nbest, (self.averaged_weights, width, width,
                                self.search.exact_topn(self.system, self.name))

    def _decodes_docs(self, run: Callable, args: tuple) -> bool:
        """As TransitionPipe's; calibrated or SAPO, too: the beam's n best
        are kept per batch (decode_docs with DocsOutput's keep), as nbest()
        gives them (the parser's n best are a beam's, never A*'s)."""
        return super()._decodes_docs(run, args) or (
            (self.calibrated or self.learner.probabilistic) and run is decoding.nbest)

    def _docs_decode_args(self, run: Callable, args: tuple) -> Tuple[Weights, int, int, int]:
        if run is decoding.nbest:  # (W, n, beam width, exact): the beam's n best
            return args[0], 0, max(args[1], args[2]), args[1]
        return super()._docs_decode_args(run, args)

    def _docs_predictions(self, docs: List[Doc], layout: DocsLayout) -> Trees:
        """The trees of a batch decoded at once (the output's planes: heads
        as content positions, labels, joint's alts) over the docs' tokens:
        heads as doc positions; whitespace put back at once (expand_trees,
        as expand does per doc)."""
        planes = layout.output.planes
        starts = layout.starts
        heads, labels = planes[0], planes[1]
        alts = planes[2].astype("uint8") if len(planes) > 2 else None
        content = None
        if any_spaced(layout.indexes):
            content, doc_starts = content_positions(docs, layout.indexes)
            heads, labels = expand_trees(heads[:starts[-1]], labels[:starts[-1]], starts, content,
                                         doc_starts, len(self.labels))
            if alts is not None:  # (joint: whitespace keeps its tag)
                alts = over_doc_tokens(alts[:starts[-1]], content, int(doc_starts[-1]), 0)
            starts = doc_starts
        head_probs = None
        if layout.output.keep:
            head_probs = self._kept_head_probs(layout)
            if content is not None:  # whitespace: 1 (every parse attaches it alike)
                head_probs = over_doc_tokens(head_probs, content, int(starts[-1]), 1.0)
        return Trees(heads, labels, alts, starts, head_probs)

    def _kept_head_probs(self, layout: DocsLayout) -> numpy.ndarray:
        """Each content token's head probability from the n best parses a
        batch decoded at once kept (DocsOutput.kept), computed as
        _write_extras computes it per doc: each doc's softmax of its n best
        scores at the temperature (nbest_prediction's, the docs of k parses
        at once), and 1 less the mass of the parses that give the token
        another head or label, summed in the parses' order."""
        kept, scores, counts = layout.output.kept
        probs = kept_probabilities(scores, counts, self.temperature)
        lengths = numpy.diff(layout.starts)
        per_token = probs[numpy.repeat(numpy.arange(len(lengths)), lengths)].T  # (keep, N)
        differ = (kept[:, 0, :] != kept[0, 0, :]) | (kept[:, 1, :] != kept[0, 1, :])
        return numpy.clip(1.0 - (per_token * differ).sum(axis=0), 0.0, 1.0)

    def _predictions(self, docs: List[Doc], indexes: Any, results: list) -> Sequence:
        if isinstance(indexes, DocsLayout) or not self.calibrated:
            return super()._predictions(docs, indexes, results)
        tau = self.temperature
        return [self._in_doc(nbest_prediction(outputs, scores, tau), i, len(doc))
                for (outputs, scores), i, doc in zip(results, indexes, docs)]

    def _temperature_fit(self, examples: List[Example]) -> Optional[float]:
        """SAPO or a beam perceptron (`calibrated` once fitted; a greedy or
        lookahead one: `nbest_n`'s error): the tau of the least log-loss of
        the head probabilities the parser writes (`token._.head_prob`: the
        mass of the n best parses that give a token the best parse's head
        and label) against whether the written head and label are the
        reference's (as benchmarks/parser_eval.py scores them). The n best
        do not depend on tau, their probabilities do. Tokens without a gold
        head, and docs whose words are not the reference's, are left out;
        None if none is left. The n best's mass saturates: where all n
        parses agree, the probability is 1 whatever tau is. A perceptron's
        scores have no fixed scale (its updates): its tau is searched up to
        PERCEPTRON_MAX_TEMPERATURE."""
        n = self.nbest_n  # (a greedy perceptron's error, before any work)
        kept = [eg for eg in examples if eg.reference.has_annotation("DEP")
                and [t.text for t in eg.predicted] == [t.text for t in eg.reference]]
        docs = [eg.predicted.copy() for eg in kept]  # the written parse stays as it is
        found = self.nbest_scores(docs, n)
        self.set_annotations(docs, [Prediction(outputs[0]) for outputs, _ in found])
        agreements, scores, truths = [], [], []
        for doc, eg, (outputs, doc_scores) in zip(docs, kept, found):
            known = numpy.asarray([bool(g.dep_) for g in eg.reference], dtype=bool)
            if not known.any():
                continue
            agreements.append(numpy.asarray([same_arcs(tree, outputs[0])[known]
                                             for tree in outputs], dtype="float64"))
            scores.append(doc_scores)
            truths.append([t.head.i == g.head.i and t.dep_.lower() == g.dep_.lower()
                           for t, g, k in zip(doc, eg.reference, known) if k])
        if not truths:
            return None
        right = numpy.concatenate(truths).astype("float64")

        def log_loss(tau: float) -> float:
            p = numpy.concatenate([softmax(s / tau) @ a for s, a in zip(scores, agreements)])
            p = numpy.clip(p, 1e-12, 1.0 - 1e-12)
            return float(-(right * numpy.log(p) + (1.0 - right) * numpy.log1p(-p)).sum())

        # SAPO: up to the largest temperature the setting takes (the n best
        # of a weak model can need a flat distribution)
        high = MAX_TEMPERATURE if self.learner.probabilistic else PERCEPTRON_MAX_TEMPERATURE
        return minimise_over_temperature(log_loss, high=high)[0]

    @staticmethod
    def _write_alternative_tags(doc: Doc, chosen: numpy.ndarray) -> None:
        """token.tag_ = the tagger's alternative tag where joint tagging chose
        it (the alternatives stay in doc.user_data), and token._.tag_prob,
        where the tagger gave its tags' probabilities, the tagger's
        probability of that tag (that of the alternative)."""
        tags = doc.to_array("TAG")
        tags[chosen] = numpy.asarray(doc.user_data[TAG_ALTERNATIVE], dtype="uint64")[chosen]
        doc.from_array(["TAG"], tags.reshape(-1, 1))
        probs, alt_probs = doc.user_data.get(TAG_PROBS), doc.user_data.get(TAG_ALTERNATIVE_PROB)
        if probs is not None and alt_probs is not None and len(probs) == len(alt_probs) == len(doc):
            probs = numpy.array(probs, dtype="float64")
            probs[chosen] = numpy.asarray(alt_probs, dtype="float64")[chosen]
            doc.user_data[TAG_PROBS] = probs

    def set_annotations(self, docs: Iterable[Doc], predictions: List[Prediction]) -> None:
        """Heads, labels and sentence boundaries (joint_tagging: and the tags
        it chose); with SAPO or calibrated also each token's head
        probability (the summed probability of the n best parses that give
        it the same head and label), read through `token._.head_prob`
        (doc.user_data["head_probs"])."""
        vocab, label_hashes = None, None
        docs = list(docs)
        if isinstance(predictions, Trees) and in_vocab(docs, self.vocab):
            # a batch decoded at once: its arrays written whole, no Python per
            # doc but where a doc has a lifted arc or chose alternative tags
            label_hashes, decorated = self._label_hashes()
            needs = write_arcs(docs, predictions.heads, predictions.labels, label_hashes,
                               decorated, starts=predictions.starts)
            for k in numpy.flatnonzero(needs).tolist():
                nonproj.deprojectivize(docs[k])
            if predictions.alts is not None:
                total = numpy.zeros((len(predictions.alts) + 1,), dtype="int64")
                numpy.cumsum(predictions.alts, out=total[1:])
                starts = predictions.starts
                for k in numpy.flatnonzero(total[starts[1:]] > total[starts[:-1]]).tolist():
                    self._write_extras(docs[k], predictions[k])
            self._write_head_probs(docs, predictions)
            return
        if in_vocab(docs, self.vocab):  # the arcs in C, the whole batch
            label_hashes, decorated = self._label_hashes()
            needs = write_arcs(docs, [out.best[0] for out in predictions],
                               [out.best[1] for out in predictions], label_hashes, decorated)
            for doc, out, deprojectivize in zip(docs, predictions, needs):
                if deprojectivize:
                    nonproj.deprojectivize(doc)
                self._write_extras(doc, out)
            return
        for doc, out in zip(docs, predictions):
            n = len(doc)
            if not n:
                continue
            if doc.vocab is not vocab:  # the strings go to the doc's own vocab
                vocab = doc.vocab
                for string in self.output_strings():
                    vocab.strings.add(string)
                label_hashes = numpy.asarray([vocab.strings[s] for s in self.label_names()],
                                             dtype="uint64")
            heads, labels = out.best[0], out.best[1]
            arr = numpy.zeros((n, 2), dtype="uint64")
            arr[:, 0] = (heads - numpy.arange(n, dtype="int32")).astype("int64").view("uint64")
            arr[:, 1] = label_hashes[labels]  # -1: the root label, last
            doc.from_array(["HEAD", "DEP"], arr)
            nonproj.deprojectivize(doc)
            self._write_extras(doc, out)
        if isinstance(predictions, Trees):
            self._write_head_probs(docs, predictions)

    @staticmethod
    def _write_head_probs(docs: List[Doc], trees: Trees) -> None:
        """A calibrated batch's head probabilities (Trees.head_probs), each
        doc's a view of the batch's array."""
        if trees.head_probs is None:
            return
        bounds = trees.starts.tolist()
        for doc, a, b in zip(docs, bounds, bounds[1:]):
            if b > a:
                doc.user_data[HEAD_PROBS] = trees.head_probs[a:b]

    def _label_hashes(self) -> Tuple[numpy.ndarray, numpy.ndarray]:
        """The hashes of label_names() in the component's vocab (its output
        strings added), and per label whether it is projectivised ("x||y")."""
        names = self.label_names()
        for string in self.output_strings()[len(names):]:  # the lifted labels' bases
            self.vocab.strings.add(string)
        return (self.string_hashes(names),
                numpy.asarray([nonproj.is_decorated(s) for s in names], dtype="uint8"))

    def _write_extras(self, doc: Doc, out: Prediction) -> None:
        """What set_annotations writes besides the arcs: the tags a joint
        model chose, and with SAPO or calibrated each token's head probability."""
        if not len(doc):
            return
        if len(out.best) > 2 and out.best[2].any():  # joint: the tags it chose
            self._write_alternative_tags(doc, out.best[2].astype(bool))
        if out.probs is not None:
            # 1 less the mass of the parses that differ: exactly 1 where all
            # n agree (a sum of the agreeing masses rounds to either side of 1)
            # (the mass summed in the parses' order, as a batch decoded at once sums it)
            heads = numpy.array([tree[0] for tree in out.nbest])
            labels = numpy.array([tree[1] for tree in out.nbest])
            differ = (heads != out.best[0]) | (labels != out.best[1])
            mass = (numpy.asarray(out.probs, dtype="float64")[:, None] * differ).sum(axis=0)
            doc.user_data[HEAD_PROBS] = numpy.clip(1.0 - mass, 0.0, 1.0)
