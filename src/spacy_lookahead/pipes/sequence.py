"""What the sequence labellers (tagger, chunker, NER) share: the tagging
system built from the config, its inputs per doc, and the gold labels; the
search and the learner are the shared ones of `TransitionPipe`."""
from collections import Counter, defaultdict
from typing import Any, Callable, Dict, Iterable, List, NamedTuple, Optional, Tuple

import numpy
from spacy.tokens import Doc
from spacy.training import Example
from spacy.vocab import Vocab

from ..core import decode as decoding
from ..core.batch import thread_count
from ..core.features import string_atoms
from ..core.calibration import fit_temperature, gold_derivations, minimise_over_temperature
from ..core.marginals import Lattice, Transitions, _each_lattice, best_with_probabilities
from ..core.weights import Weights
from ..spacy_io import LexemeAtoms
from ..systems.tagging import TaggingSystem
from ..systems.templates import TemplateError, expand, uses_lexicon
from . import settings
from .settings import PROBABILITY_SETTINGS, SEARCH_DEFAULTS, config_error
from ..systems.schemes import sum_in_order
from ..systems.span_ids import BestParts
from .base import MAKES_WORDS, filled_atoms
from .spaces import any_spaced, content_positions, over_doc_tokens, without_whitespace
from .prediction import Predictions, TagPredictions, kept_probabilities
from .transition import DocsLayout, Prediction, TransitionPipe, docs_runs, on_c_threads

# The shared settings of the sequence components (see settings.py), as
# their factories' default config. The n best of a lookahead model
# (predict_nbest) with tag/label trigrams: a beam of 16 (TopN.v1's default
# width; Sun et al. use 50 and find no difference to A*). SAPO's probabilities:
# exact marginals (where the model is first-order) at a temperature fitted on
# the dev data. Chosen on dev data (ECE, n best at tau = 1 / marginals at
# tau = 1 / marginals at the fitted tau): EWT dev tags 0.022 / 0.460 / 0.008,
# held-out tenths of CoNLL-2000 chunks 0.016 / 0.091 / 0.012 and of JNLPBA
# entities 0.144 / 0.097 / 0.022; tau fitted to the written parts'
# probabilities instead of the gold outputs' NLL (fit_temperature): 0.006,
# 0.005, 0.026. No averaging, as Algorithm 1 (JNLPBA gains from it:
# benchmarks/results.md, the SAPO ablations).
SEQUENCE_DEFAULTS: Dict[str, Any] = {**SEARCH_DEFAULTS, **PROBABILITY_SETTINGS}
# The largest temperature a perceptron's fit (fit_temperature, `calibrated`)
# searches: its scores have the scale of its margin and updates (the span
# labellers' margin is 50).
PERCEPTRON_MAX_TEMPERATURE = 1000.0
# The `ambiguity` atom (Gimenez and Marquez 2004's ambiguity classes; a tag
# dictionary): a word seen at least CLASS_MIN_COUNT times in training has the
# set of labels that took at least CLASS_MIN_SHARE of its occurrences; rarer
# words have none, in training as at prediction, as unseen words.
CLASS_MIN_COUNT = 3
CLASS_MIN_SHARE = 0.05


class PartsLayout(NamedTuple):
    """Where SAPO's best outputs with their parts' probabilities (decoded by
    span_ids.BestParts over the batch, its threads taking the docs in
    turn) put each doc: the docs' content positions, and the pass."""
    indexes: List[Optional[numpy.ndarray]]
    parts: Any  # span_ids.BestParts


class SequencePipe(TransitionPipe):
    """Base of the sequence labellers. Subclasses define the action names,
    the feature set, the gold action ids of an example and how predictions
    are written to the Doc."""

    feature_set = "pos"
    history_setting = "tag_trigrams"  # cfg key of the (t-1, t-2) feature switch
    nbest_width = 16
    # the word classes of the `ambiguity` atom are learnt with the model
    model_settings = TransitionPipe.model_settings + ("word_classes",)

    def __init__(self, vocab: Vocab, name: str, *, direction: str, scorer,
                 features: Optional[List[str]] = None, **settings: Any) -> None:
        features = [f"preset:{self.feature_set}"] if features is None else list(features)
        settings = {**PROBABILITY_SETTINGS, **settings}
        super().__init__(vocab, name, scorer=scorer, direction=direction, features=features,
                         **settings)
        self._set_templates()
        if self.cfg["probabilities"] == "marginals" and self.cfg[self.history_setting]:
            raise config_error(name, "probabilities", f"[{name}] probabilities = 'marginals' are "
                               "exact for first-order models only: set "
                               f"{self.history_setting} = false, or probabilities = 'nbest'.")

    def _set_templates(self) -> None:
        """Check the `features` setting; the word inputs it needs."""
        try:
            expanded = expand(self.cfg["features"], self.feature_set)
        except TemplateError as err:
            raise config_error(self.name, "features", f"[{self.name}] features: {err}. Write "
                               "templates as in spacy_lookahead/systems/templates.py, e.g. "
                               f"features = [\"preset:{self.feature_set}\", \"cluster6[0]\"]."
                               ) from None
        texts = [text for text, _ in expanded]
        self._atoms = LexemeAtoms(substrings="substrings[0]" in texts)
        self._lexicon_needs = uses_lexicon(texts)
        self._reads_classes = any("ambiguity[" in text for text in texts)
        classes = self.cfg.get("word_classes") or {}
        self._atoms.set_classes(dict(zip(classes, string_atoms(list(classes.values())).tolist())))

    def _on_load(self) -> None:
        super()._on_load()
        self._set_templates()  # a model saved before `features` existed: its preset

    def _count_training_set(self, get_examples: Callable[[], Iterable[Example]],
                            size: Optional[int] = None, tags: Optional[set] = None) -> None:
        super()._count_training_set(get_examples, size, tags)
        self.cfg["word_classes"] = self._word_classes(get_examples) if self._reads_classes else {}
        self._set_templates()

    def _word_classes(self, get_examples: Callable[[], Iterable[Example]]) -> Dict[str, str]:
        """{word: its labels in training, "A|B"} for the `ambiguity` atom."""
        counts: Dict[str, Counter] = defaultdict(Counter)
        names = self.actions
        for eg in get_examples():
            gold = self.gold(eg)
            for token, label in zip(eg.predicted, gold):
                if label >= 0:
                    counts[token.text][names[label]] += 1
        out = {}
        for word, c in counts.items():
            total = sum(c.values())
            if total >= CLASS_MIN_COUNT:
                out[word] = "|".join(sorted(t for t, k in c.items() if k >= CLASS_MIN_SHARE * total))
        return out

    # --- to define in subclasses ---------------------------------------------
    @property
    def actions(self) -> List[str]:
        return list(self.labels)

    def constraints(self) -> Dict[str, numpy.ndarray]:
        return {}

    def gold_ids(self, example: Example, index: Optional[numpy.ndarray] = None) -> numpy.ndarray:
        """Gold action ids of the content tokens at `index` (all if None)."""
        raise NotImplementedError

    def set_annotations(self, docs: Iterable[Doc], predictions: List[Prediction]) -> None:
        raise NotImplementedError

    def input_columns(self, doc: Doc, atoms: numpy.ndarray, example: Optional[Example]) -> None:
        """Fill the per-token input columns (POS, chunks) of `atoms`; at
        training time `example` gives the gold doc to take missing inputs from."""

    def forced_ids(self, doc: Doc) -> Optional[numpy.ndarray]:
        return None

    def token_columns(self) -> Dict[str, bool]:
        """Which token columns the inputs read besides the words (tags, ent_iob:
        see LexemeAtoms.docs_inputs), read for the whole batch in C."""
        return {}

    def batch_columns(self, docs: List[Doc], batch: Dict[str, Any],
                      examples: Optional[List[Example]]) -> None:
        """input_columns over a batch (its atoms, starts and token_columns);
        by default doc by doc."""
        if type(self).input_columns is SequencePipe.input_columns:
            return
        atoms, starts = filled_atoms(batch), batch["starts"]
        for i, doc in enumerate(docs):
            self.input_columns(doc, atoms[starts[i]:starts[i + 1]], examples[i] if examples else None)

    def preset_docs(self, docs: List[Doc], batch: Dict[str, Any]) -> Iterable[int]:
        """The docs of the batch forced_ids may find presets in."""
        return range(len(docs))

    # --- shared ------------------------------------------------------------------
    def make_system(self) -> TaggingSystem:
        return TaggingSystem(len(self.actions), direction=self.cfg["direction"],
                             tag_trigrams=self.cfg[self.history_setting],
                             feature_set=self.feature_set, templates=list(self.cfg["features"]),
                             **self.constraints())

    def system_is_current(self, system: TaggingSystem) -> bool:
        return system.nr_class == len(self.actions) and system.templates == list(self.cfg["features"])

    def gold(self, example: Example, index: Optional[numpy.ndarray] = None) -> numpy.ndarray:
        return self.gold_ids(example, index)

    def describe(self, output: numpy.ndarray) -> List[str]:
        """Labels as action names in document order (tags, or IOB/BILUO span labels)."""
        names = self.actions
        return [names[i] for i in output]

    def inputs_and_indexes(self, docs: List[Doc], examples: Optional[List[Example]] = None,
                           defer_rows: bool = False, lookup: int = 0
                           ) -> Tuple[Dict[str, Any], List[Optional[numpy.ndarray]]]:
        """The system input of the whole batch, without Python per token:
        the docs' word inputs in one set of arrays (LexemeAtoms.docs_inputs)
        with the input columns and preset labels filled in per doc and the
        whitespace tokens left out (TaggingSystem.batch_instances reads
        it); and the positions of each doc's content tokens (None: no
        whitespace token). defer_rows: the atoms' rows may be left to the
        searches (docs_inputs' defer: batch_docs' searches fill them);
        lookup: the words and token columns too, where the searching
        threads can make the inputs (`_inputs_on_threads`; docs_inputs'
        lookup, with compact: each doc's whitespace left out of its rows
        there, the sink told so: `_docs_decoding`): no column or preset
        is then made here, and the positions are None; MAKES_WORDS
        (SearchPipe._lookup_resumed): the threads also make the words the
        cache lacks (docs_inputs' new_words)."""
        self._check_lexicon(docs)
        columns = self.token_columns()
        makes_words = lookup == MAKES_WORDS
        lookup = bool(lookup and defer_rows and self._inputs_on_threads())
        batch = self._atoms.docs_inputs(docs, sent_starts=bool(self.cfg.get("respect_sent_starts")),
                                        own=self._own_tables(), defer=defer_rows, lookup=lookup,
                                        known=self._known_tags() if lookup and columns.get("tags")
                                        else None, compact=lookup,
                                        new_words=lookup and makes_words, **columns)
        atoms, starts = batch["atoms"], batch["starts"]
        batch.pop("sent_set", None)  # (per doc: the phrase recognisers' units read it)
        if not self.cfg.get("respect_sent_starts") or not len(atoms):
            batch.pop("sent_starts", None)
        rows = batch.get("rows")
        if rows is not None and rows.looks_up:  # (the threads write or check the columns,
            batch.pop("space")                  # leave the whitespace out of each doc's rows,
            # and leave the docs with presets)
            return batch, [None] * len(docs)
        self.batch_columns(docs, batch, examples)
        if type(self).forced_ids is not SequencePipe.forced_ids:
            for i in self.preset_docs(docs, batch):
                ids = self.forced_ids(docs[i])
                if ids is not None:
                    if batch.get("forced") is None:
                        batch["forced"] = numpy.full((len(atoms),), -1, dtype="int32")
                    batch["forced"][starts[i]:starts[i + 1]] = ids
        for column in self.token_columns():
            batch.pop(column, None)
        batch.pop("untagged", None)
        space = batch.pop("space")
        if space is None:
            return batch, [None] * len(docs)
        return without_whitespace(batch, space)

    def batch_inputs(self, docs: List[Doc], defer_rows: bool = False, lookup: int = 0
                     ) -> Tuple[Dict[str, Any], List[Optional[numpy.ndarray]]]:
        return self.inputs_and_indexes(docs, defer_rows=defer_rows, lookup=lookup)

    def _cache_words(self, docs: List[Doc]) -> None:
        self._atoms.cache_words(docs, self._own_tables())

    def _left_share(self, docs: List[Doc]) -> float:
        """A sample's docs with a word not cached yet (the docs the threads
        leave: docs_inputs' lookup)."""
        return self._atoms.left_share(docs, own=self._own_tables())

    def _inputs_on_threads(self) -> bool:
        """Whether the threads that search a batch can make its inputs
        themselves (docs_inputs' lookup): the words, token.tag (its column
        written there, a doc with an untagged token left), presets from
        token.ent_iob alone (a doc with some left); no other input column
        or preset, no sentence start, no doc template. Here: the words
        alone (subclasses that read more say when)."""
        return (not self.token_columns() and not self.cfg.get("respect_sent_starts")
                and type(self).input_columns is SequencePipe.input_columns
                and type(self).batch_columns is SequencePipe.batch_columns
                and type(self).forced_ids is SequencePipe.forced_ids
                and not self.system.reads_doc)

    def _decoding(self, docs: List[Doc], writes: bool = False
                  ) -> Tuple[Any, Callable, Iterable, tuple]:
        """As TransitionPipe's; SAPO's per batch too (no instance per doc,
        one nogil section per thread): with marginal probabilities, the best
        output and the exact probabilities of its parts from each doc's
        lattice (BestParts); with the n best's, the n best of each doc as
        nbest() finds them (A* or a beam), kept by decode_docs
        (DocsOutput's keep)."""
        if not self.learner.probabilistic:
            return super()._decoding(docs, writes)
        self._require_labels()
        self._start_tally()
        run, args = self._decoder()  # (its settings' errors first)
        inputs, indexes = self.batch_inputs(docs)
        self._warn_unseen_tags()
        held = self.system.batch_docs(inputs)
        threads = max(1, min(thread_count(self.cfg["n_threads"]), len(docs)))
        if self.uses_marginals:
            parts = BestParts(held, self.averaged_weights, self.temperature, None,
                              self.cfg["direction"] == "rtl", self.span_parts())
            return PartsLayout(indexes, parts), on_c_threads, parts.runs(threads), ()
        W, n, beam_width, exact = args  # decoding.nbest's
        exact = exact and self.system.first_order
        output = decoding.DocsOutput(held, n)
        lattices = self._lattice_pass(held, inputs["starts"])
        return (DocsLayout(inputs["starts"], indexes, output, held, lattices), on_c_threads,
                docs_runs(held, output, threads, W, 0, 0 if exact else max(n, beam_width),
                          lattices, exact), ())

    @property
    def calibrated(self) -> bool:
        """A perceptron whose temperature was fitted on held-out data
        (`fit_temperature`, e.g. by benchmarks/package.py; a tagger's
        `alternatives` fit one while training): it writes the exact
        probabilities of the parts of its output, as SAPO with marginals
        does (each tag's in token._.tag_prob, each span's in the span
        group's attrs["scores"]), under p(y | x) proportional to
        exp(w . Phi / tau). The output is the search's, unchanged; first-order
        models within settings.MAX_LABELS_LATTICE only."""
        return (not self.learner.probabilistic and self.cfg.get("fitted_temperature") is not None
                and not self.cfg[self.history_setting] and self.lattice_fits())

    def _docs_predictions(self, docs: List[Doc], layout: DocsLayout) -> Predictions:
        """The labels of a batch decoded at once (the shared DocsOutput) over
        the docs' tokens: the docs with whitespace expanded one by one."""
        return Predictions(*self._expanded_labels(docs, layout.output.labels, layout.starts,
                                                  layout.indexes))

    def _expanded_labels(self, docs: List[Doc], labels: numpy.ndarray, starts: numpy.ndarray,
                         indexes: List[Optional[numpy.ndarray]]
                         ) -> Tuple[numpy.ndarray, numpy.ndarray]:
        """A batch's labels over its content tokens (doc k's at
        starts[k]:starts[k + 1]) over all its tokens, and where each doc's
        begin (expand_batch: no Python per doc)."""
        if any_spaced(indexes):
            positions, doc_starts = content_positions(docs, indexes)
            labels = self.expand_batch(labels[:len(positions)], starts, positions, doc_starts)
            starts = doc_starts
        return labels, starts

    def expand_batch(self, labels: numpy.ndarray, starts: numpy.ndarray, positions: numpy.ndarray,
                     doc_starts: numpy.ndarray) -> numpy.ndarray:
        """`expand` over a batch: the labels of its content tokens (doc k's
        at starts[k]:starts[k + 1], at `positions` of the batch's tokens,
        doc k's at doc_starts[k]:doc_starts[k + 1]) over all its tokens
        (int32), at once (no Python per doc)."""
        raise NotImplementedError

    def _predictions(self, docs: List[Doc], indexes: Any, results: list) -> List[Prediction]:
        """As TransitionPipe's; a calibrated perceptron (`calibrated`) also
        gives the probabilities of its output's parts (per doc here; a batch
        decoded at once: the tagger's and span labellers' own); SAPO's best
        with the probabilities of its parts (PartsLayout), and its n best
        kept per batch, theirs."""
        if isinstance(indexes, PartsLayout):
            return self._parts_predictions(docs, indexes.indexes, self._found_parts(docs, indexes))
        if isinstance(indexes, DocsLayout) and indexes.output.keep:  # SAPO's n best
            return self._kept_predictions(docs, indexes)
        if not self.calibrated or isinstance(indexes, DocsLayout):
            # (a calibrated batch decoded at once: the subclasses' _predictions
            # read its lattices, done after each doc's search)
            return super()._predictions(docs, indexes, results)
        inputs, _ = self.inputs_and_indexes(docs)
        instances = self.instances(docs, None, indexes, inputs)
        probs = self._part_probabilities(instances, results, self.averaged_weights,
                                         self.temperature)
        predictions = [Prediction(out, scores=p) for out, p in zip(results, probs)]
        return [self._in_doc(p, i, len(doc)) for p, i, doc in zip(predictions, indexes, docs)]

    def _part_probabilities(self, instances: Iterable, outputs: List[numpy.ndarray], W: Weights,
                            tau: float) -> List[numpy.ndarray]:
        """Per instance and its output (labels in document order over the
        content tokens, e.g. the search's): the probability of each of the
        output's parts under the lattice at temperature tau (exact_scorer:
        each span's; None: each label's marginal), in document order."""
        system = self.system
        transitions = Transitions(system, W, tau) if system.homogeneous else None
        exact = self.exact_scorer()
        rtl = self.cfg["direction"] == "rtl"  # the steps run from the last token
        out = []
        for (_, lattice), output in zip(_each_lattice(instances, W, tau, transitions), outputs):
            output = numpy.ascontiguousarray(output, dtype="int32")
            if exact is not None:
                out.append(numpy.asarray(exact(lattice, output), dtype="float64"))
            else:  # the lattice's steps run from the last token where rtl
                probs = lattice.step_probabilities(output[::-1] if rtl else output)
                out.append(numpy.ascontiguousarray(probs[::-1]) if rtl else probs)
        return out

    def lattice_fits(self) -> bool:
        """Whether the exact lattice (marginals, alternatives, the temperature
        fit) is within settings.MAX_LABELS_LATTICE: it holds 16 T C^2 bytes
        per doc."""
        return self.system.nr_class <= settings.MAX_LABELS_LATTICE

    def check_label_limits(self) -> None:
        super().check_label_limits()
        self.uses_marginals  # (raises past the lattice's limit)

    @property
    def uses_marginals(self) -> bool:
        """Probabilities as exact marginals: asked for, or "auto" on a
        first-order model whose lattice fits (`lattice_fits`)."""
        how = self.cfg["probabilities"]
        if how == "marginals" and not self.lattice_fits():
            raise config_error(
                self.name, "probabilities",
                f"exact marginals need a lattice of 16 T C^2 bytes per doc of T tokens and C "
                f"labels, and this model has {self.system.nr_class} labels (at most "
                f"{settings.MAX_LABELS_LATTICE}): set probabilities = \"nbest\" (or \"auto\")")
        return how == "marginals" or (how == "auto" and not self.cfg[self.history_setting]
                                      and self.lattice_fits())

    def _found_parts(self, docs: List[Doc], layout: PartsLayout) -> tuple:
        """BestParts' (labels, starts, parts' probabilities, part starts) of
        the batch; a doc with no valid output raises the decoder's error,
        naming the doc."""
        *found, stuck = layout.parts.found()
        if stuck >= 0:
            err = decoding._no_valid_output(int(layout.parts.steps[stuck]), 0)
            raise self._naming_the_doc(docs, err)
        return tuple(found)

    def span_parts(self) -> Optional[tuple]:
        """What span_ids.best_parts and span_scores need to score spans
        (kinds, types, parts, closed, biluo); None: the parts are labels."""
        return None

    def _kept_predictions(self, docs: List[Doc], layout: DocsLayout) -> TagPredictions:
        """The Predictions of a batch whose n best were kept (SAPO's, at the
        temperature): the best labels over the docs' tokens and each
        label's probability, the mass of the n best that agree on it
        (whitespace: every output agrees), summed in the outputs' order
        as set_annotations sums it per doc."""
        kept, scores, counts = layout.output.kept
        probs = kept_probabilities(scores, counts, self.temperature)
        lengths = numpy.diff(layout.starts)
        agree = kept[:, 0, :] == layout.output.labels
        mass = sum_in_order(probs[numpy.repeat(numpy.arange(len(lengths)), lengths)].T, agree)
        labels, doc_starts = self._expanded_labels(docs, layout.output.labels, layout.starts,
                                                   layout.indexes)
        if any_spaced(layout.indexes):
            whole = sum_in_order(probs.T, True)  # (every output agrees)
            mass = over_doc_tokens(mass, content_positions(docs, layout.indexes)[0],
                                   int(doc_starts[-1]), numpy.nan)
            gaps = numpy.isnan(mass)
            mass[gaps] = numpy.repeat(whole, numpy.diff(doc_starts))[gaps]
        return TagPredictions(labels, doc_starts, None, None, numpy.minimum(mass, 1.0))

    def _parts_predictions(self, docs: List[Doc], indexes: List[Optional[numpy.ndarray]],
                           found: tuple) -> Predictions:
        """The Predictions of a batch from BestParts' arrays: the labels
        over the docs' tokens, each label's probability (1 on whitespace)."""
        labels, starts, parts, part_starts = found
        labels, doc_starts = self._expanded_labels(docs, labels, starts, indexes)
        if any_spaced(indexes):
            parts = over_doc_tokens(parts, content_positions(docs, indexes)[0],
                                    int(doc_starts[-1]), 1.0)
        return TagPredictions(labels, doc_starts, None, None, parts)

    def _exact_parts(self, instances: list, W: Weights, tau: float) -> list:
        """Per instance (core/marginals.best_with_probabilities): (its best
        derivation or None, its score, the probabilities of its output's
        parts at temperature tau, in document order)."""
        system = self.system
        transitions = Transitions(system, W, tau) if system.homogeneous else None
        exact = self.exact_scorer()
        if exact is not None:
            return best_with_probabilities(instances, W, tau, transitions,
                                           lambda lattice, inst, actions:
                                           exact(lattice, inst.output(actions)))
        found = best_with_probabilities(instances, W, tau, transitions)
        if self.cfg["direction"] == "rtl":  # the steps run from the last token
            return [(actions, score, probs[::-1]) for actions, score, probs in found]
        return found

    # --- temperature scaling -----------------------------------------------------
    @property
    def has_temperature(self) -> bool:
        """SAPO, a perceptron tagger's alternatives and a calibrated
        perceptron write probabilities."""
        return (self.learner.probabilistic or self.cfg.get("alternatives", False)
                or self.cfg.get("fitted_temperature") is not None)

    def _fits_temperature(self) -> bool:
        """Fitted on the exact lattice: first-order models within
        settings.MAX_LABELS_LATTICE; the others keep temperature 1 unless set."""
        return super()._fits_temperature() and self.system.first_order and self.lattice_fits()

    def _temperature_fit(self, examples: List[Example]) -> Optional[float]:
        """SAPO with exact marginals: the tau of the least log-loss of the
        probabilities the component writes (each tag's, each span's)
        against whether that part of the best output is right, i.e.
        calibrated where users read them. Otherwise (the n best, a
        perceptron tagger's alternatives): the least negative
        log-likelihood of the gold outputs (temperature scaling of the
        model's own distribution). Both are exact for first-order models
        (the lattice gives log Z and the marginals); the parts' fit was the
        better calibrated on the dev data of all three tasks
        (benchmarks/results.md). A perceptron without `alternatives`
        (calibrated by this fit: `calibrated`): the least log-loss of the
        probabilities of the parts of its own outputs (the search's) against
        whether each part is right. Docs whose gold is not fully known are
        left out."""
        self.check_temperature_fit()
        examples = [Example(self.without_output(eg.predicted), eg.reference) for eg in examples]
        docs = [eg.predicted for eg in examples]
        W = self.averaged_weights
        if self.learner.probabilistic and self.uses_marginals:
            return self._fit_to_parts(docs, examples, W)
        if not self.learner.probabilistic and not self.cfg.get("alternatives"):
            return self._fit_to_own_parts(docs, examples, W)
        golds = gold_derivations(self.instances(docs, examples))
        return fit_temperature(golds, W)[0] if golds else None

    def _fit_to_own_parts(self, docs: List[Doc], examples: List[Example], W: Weights
                          ) -> Optional[float]:
        """A perceptron: the tau of the least log-loss of the probabilities
        of the parts of the search's outputs (what `calibrated` writes; the
        outputs do not depend on tau); None if no doc has a fully known gold."""
        inputs, indexes = self.inputs_and_indexes(docs, examples)
        run, args = self._decoder()
        outputs = run(list(self.instances(docs, None, indexes, inputs)), *args)
        kept, kept_outputs, truths = [], [], []
        for inst, eg, index, output in zip(self.instances(docs, None, indexes, inputs), examples,
                                           indexes, outputs):
            truth = self.part_truth(numpy.asarray(output), self.gold(eg, index))
            if truth is not None and len(truth):
                kept.append(inst)
                kept_outputs.append(output)
                truths.append(truth)
        if not kept:
            return None
        # a perceptron's scores have no fixed scale (the margin, the number
        # of updates): its tau can be far above 1
        return _least_part_log_loss(
            truths, lambda tau: self._part_probabilities(kept, kept_outputs, W, tau),
            high=PERCEPTRON_MAX_TEMPERATURE)

    def check_temperature_fit(self) -> None:
        """The error that names the fix where the temperature cannot be fitted."""
        if not self.system.first_order:
            raise ValueError(f"[{self.name}] the temperature is fitted for first-order models "
                             f"only ({self.history_setting} = false); set temperature to a number.")
        if not self.lattice_fits():
            raise ValueError(f"[{self.name}] the temperature is fitted on the exact lattice, "
                             f"16 T C^2 bytes per doc, and this model has {self.system.nr_class} "
                             f"labels (at most {settings.MAX_LABELS_LATTICE}); set temperature "
                             "to a number.")

    def _fit_to_parts(self, docs: List[Doc], examples: List[Example], W: Weights
                      ) -> Optional[float]:
        """The tau of the least log-loss of the best outputs' part
        probabilities (the outputs do not depend on tau; their parts'
        probabilities do); None if no doc has a fully known gold."""
        inputs, indexes = self.inputs_and_indexes(docs, examples)
        instances = self.instances(docs, None, indexes, inputs)
        kept, truths = [], []
        for inst, eg, index, (actions, _, _) in zip(instances, examples, indexes,
                                                    self._exact_parts(instances, W, 1.0)):
            if actions is None:
                continue
            truth = self.part_truth(inst.output(actions), self.gold(eg, index))
            if truth is not None and len(truth):
                kept.append(inst)
                truths.append(truth)
        if not kept:
            return None
        return _least_part_log_loss(
            truths, lambda tau: [probs for _, _, probs in self._exact_parts(kept, W, tau)])

    def part_truth(self, best: numpy.ndarray, gold: numpy.ndarray) -> Optional[numpy.ndarray]:
        """Whether each part of `best` that exact_scores gives a probability
        (labels in document order over the content tokens) is right under
        `gold` (the gold ids); None if the gold is not fully known."""
        raise NotImplementedError

    def exact_scorer(self) -> Optional[Callable[[Lattice, numpy.ndarray], numpy.ndarray]]:
        """f(lattice, best): the probability of each part of `best` (labels in
        document order over the content tokens) under the lattice's
        distribution. Made once per batch. None: the parts are the steps
        (each label's marginal, core/marginals.best_with_probabilities)."""
        raise NotImplementedError

    def instances(self, docs: List[Doc], examples: Optional[List[Example]] = None,
                  indexes: Optional[List[Optional[numpy.ndarray]]] = None,
                  inputs: Optional[Dict[str, Any]] = None) -> list:
        """The instances of the batch, made at once from its arrays."""
        if inputs is None or indexes is None:
            inputs, indexes = self.inputs_and_indexes(docs, examples)
        golds = None if examples is None else [self.gold(eg, i) for eg, i in zip(examples, indexes)]
        return self.system.batch_instances(inputs, golds)


def _least_part_log_loss(truths: List[numpy.ndarray],
                         probabilities: Callable[[float], List[numpy.ndarray]],
                         high: float = 10.0) -> float:
    """The tau in [0.1, high] of the least log-loss of the parts'
    probabilities(tau) against whether each part is right (truths)."""
    right = numpy.concatenate(truths).astype("float64")

    def log_loss(tau: float) -> float:
        p = numpy.clip(numpy.concatenate(probabilities(tau)).astype("float64"), 1e-12, 1.0 - 1e-12)
        return float(-(right * numpy.log(p) + (1.0 - right) * numpy.log1p(-p)).sum())

    return minimise_over_temperature(log_loss, high=high)[0]
