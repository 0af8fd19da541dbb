"""What every transition-system component (tagger, chunker, NER, parser)
shares: the search and learner blocks chosen by the config (`search.py`,
`learners.py`) and the other shared settings (`settings.py`), the system's
instances of a batch of docs, prediction by the learner's decoder, and the
n best outputs with their probabilities."""
import functools
from typing import (Any, Callable, Dict, Iterable, Iterator, List, NamedTuple, Optional,
                    Sequence, Tuple, Union)

import numpy
from spacy.tokens import Doc, Token
from spacy.training import Example
from spacy.vocab import Vocab

from ..core import decode as decoding
from ..core.batch import Started, chunks_for, in_threads, thread_count
from ..core.threads import RunsStarted
from ..core.system import TransitionSystem
from ..core.weights import Weights
from .base import LOOKUP_AGAIN_MOST, Sealed, SearchPipe
from ..lexicon import lexicon_tables, require_tables
from .learners import Learner, MarginPerceptron
from ..registry import resolve_block
from .prediction import Prediction, softmax
from .search import Lookahead, Search
from .settings import check_unused, check_values, config_error
from .spaces import any_spaced, compact_input, content_index


def _token_probability(token: Token, key: str) -> Optional[float]:
    probs = token.doc.user_data.get(key)
    return None if probs is None or len(probs) != len(token.doc) else float(probs[token.i])


def token_probability(extension: str, key: str) -> None:
    """Register `token._.<extension>`: the token's entry of the per-token
    probabilities a component keeps in doc.user_data[key] (None if it kept
    none for this doc). The getter pickles (a partial of a module-level
    function): spaCy's n_process sends the extensions to processes that a
    spawn or forkserver start method makes afresh."""
    if not Token.has_extension(extension):
        Token.set_extension(extension, getter=functools.partial(_token_probability, key=key))


# predict_nbest's largest n (as the `n` setting's): its memory grows with n
# times the doc's length
MAX_NBEST = 1000



class DocsLayout(NamedTuple):
    """Where a batch decoded at once (decode_docs) has each doc: its
    content tokens' outputs at starts[k]:starts[k + 1] of output's planes,
    and its content positions (None: no whitespace token). Where the
    searches looked the words up (rows), a doc's whitespace may be left out
    there instead: its outputs (written by the sink) fill the start of its
    slot."""
    starts: numpy.ndarray
    indexes: List[Optional[numpy.ndarray]]
    output: Any  # core.decode.DocsOutput
    held: Any  # the system's batch_docs, decoded (e.g. for lattices over its cached scores)
    lattices: Any = None  # a core.marginals.DocPass done after each doc's search, or None
    sink: Any = None  # a core.instance.DocSink that wrote each doc's output after it, or None
    rows: Any = None  # rows whose words the searches looked up (spacy_io.WordRows), or None
    runs: Any = None  # ... and the searches' DocsRuns (run again over the docs they left)
    lookup: int = 0  # ... and SearchPipe._lookup_resumed's for the batch

    def returned(self) -> List[int]:
        """The docs the searching threads left to the caller (their rows
        could not be filled there: a word not cached yet, presets, a doc
        of whitespace alone; docs_inputs' lookup), after the searches."""
        return [] if self.rows is None else self.rows.returned().tolist()

    def search_again(self, docs: List[Doc], cache_words: Callable[[List[Doc]], None]) -> int:
        """The docs the threads left for words not cached yet, searched
        again by the same runs (on C threads, into the same output and
        sink) once their words are cached: no other input is made again.
        Those still left (other reasons) stay returned(). Returns how many
        were searched again."""
        again = self.rows.returned(new_words=True).tolist()
        if not again:
            return 0
        cache_words([docs[i] for i in again])
        self.rows.retry(again)
        self.output.retake(again)
        RunsStarted(self.runs).results()
        return len(again)


def on_c_threads(runs: list) -> list:
    """A batch decoded at once: its CRuns (one a thread, sharing the batch's
    docs: decode_docs' DocsRuns, a lattice pass's PassRuns) run on this
    process's C threads, which never take the GIL (one: here); their
    outputs (none: they are in the batch's DocsOutput or pass)."""
    return RunsStarted(runs).results()


def docs_runs(held: Any, output: Any, threads: int, W: Weights, depth: int, beam_width: int,
              then: Any = None, exact_topn: bool = False, sink: Any = None) -> list:
    """decode_docs of a batch (Docs `held`, into `output`) as DocsRuns for
    `threads` threads, which take its docs in turn (then: a lattice pass
    each thread does on each doc after its search; sink: where each thread
    then puts the doc's output)."""
    return [decoding.DocsRun(held, W, depth, output, beam_width, then, exact_topn, sink)
            for _ in range(threads)]


class TransitionPipe(SearchPipe):
    """Subclasses give the system (`make_system`), the inputs of a doc, the
    gold of an example (`gold`), how outputs are written (`set_annotations`)
    and shown (`describe`)."""

    # |S| (SAPO's L2 step) is counted at initialize(); the temperature fitted
    # on the dev data is saved with the model. Which kind of learner made the
    # weights is checked on load (`_load`).
    model_settings = ("train_size", "fitted_temperature")
    # which lookups tables the feature templates read (lexicon.py)
    _lexicon_needs: Dict[str, bool] = {}
    # the beam width of the n best (predict_nbest) where the search has none
    # and the system is not first-order
    nbest_width = 8

    # the blocks of a component made without them (the factories' defaults)
    default_search: Search = Lookahead()
    default_learner: Learner = MarginPerceptron()

    def __init__(self, vocab: Vocab, name: str, *, scorer: Optional[Callable],
                 search: Union[Search, Dict[str, Any], None] = None,
                 learner: Union[Learner, Dict[str, Any], None] = None,
                 n_threads: int = 1, **settings: Any) -> None:
        """search, learner: the blocks, or their config sections (a pickled
        component's cfg)."""
        self.search: Search = (self.default_search if search is None else search
                               if isinstance(search, Search) else resolve_block(search))
        self.learner: Learner = (self.default_learner if learner is None else learner
                                 if isinstance(learner, Learner) else resolve_block(learner))
        self.learner.check(name, self.search)
        check_values(name, {"n_threads": n_threads, **settings})
        check_unused(name, settings, self.learner.probabilistic)
        super().__init__(vocab, name, scorer=scorer, search=self.search.config(),
                         learner=self.learner.config(), n_threads=n_threads, **settings)
        self._system: Optional[TransitionSystem] = None
        self._seen = 0  # training examples seen (SAPO's epoch count; > 0: training)
        self._fitted_for: Optional[tuple] = None  # (weights, version) the temperature was fitted to
        # Beam training: how many updates, and how many were not violations
        # (only possible for the standard update; Huang et al. Figure 5).
        self.update_stats = {"updates": 0, "invalid": 0, "docs": 0, "skipped": 0}

    # --- to define in subclasses -------------------------------------------------
    def make_system(self) -> TransitionSystem:
        raise NotImplementedError

    def system_is_current(self, system: TransitionSystem) -> bool:
        return True

    def _inputs(self, docs: List[Doc], examples: Optional[List[Example]] = None) -> list:
        """The system input of each doc, over all its tokens."""
        raise NotImplementedError

    def gold(self, example: Example, index: Optional[numpy.ndarray] = None) -> Any:
        """The gold output of an example over the content tokens at `index`
        (all tokens if None)."""
        raise NotImplementedError

    def expand(self, output: Any, index: numpy.ndarray, n: int) -> Any:
        """An output over the content tokens at `index` as an output over the
        n tokens of the doc (whitespace tokens filled in: spaces.py)."""
        raise NotImplementedError

    def describe(self, output: Any) -> Any:
        """An output as predict_nbest shows it (label names, a tree)."""
        return output

    # --- shared ------------------------------------------------------------------
    @property
    def system(self) -> TransitionSystem:
        if self._system is None or not self.system_is_current(self._system):
            self._require_labels()
            self._system = self.make_system()
        return self._system

    def _on_load(self) -> None:
        self._system = None

    def weight_classes(self) -> Optional[int]:
        return self.system.nr_class if self.labels else None

    def without_output(self, doc: Doc) -> Doc:
        """The doc as the component would get it, for a doc it has written
        its output to (where that output would read as an input)."""
        return doc

    @property
    def examples_seen(self) -> int:
        """Training examples seen (SAPO's epoch count; > 0: training)."""
        return self._seen

    def check_label_limits(self) -> None:
        """The config error that names the fix where the settings ask for an
        exact search the label count is past (search.MAX_LABELS_EXACT_TOPN,
        settings.MAX_LABELS_LATTICE): a probabilistic learner's, at
        initialize, before training starts."""
        self.search.exact_topn(self.system, self.name)  # (raises past the limit)

    @property
    def averaged_weights(self) -> Weights:
        """The weights to predict with: the averaged ones, unless the learner
        predicts with its current weights (SAPO: its L2 step keeps them
        bounded and its probabilities are defined by them; Algorithm 1 has
        no averaging; with average = true, the averaged ones)."""
        if not self.learner.averages:
            return self.weights
        return super().averaged_weights

    @property
    def temperature(self) -> float:
        """tau of SAPO's p(y | x) = exp(w . Phi(x, y) / tau) / Z: the setting,
        or where it is null the one fitted on the dev data (1 until then).
        A perceptron has one where it gives probabilities (a tagger's
        `alternatives`, or a temperature fitted on held-out data by
        fit_temperature: a calibrated sequence labeller), else 1."""
        if not self.learner.probabilistic and not self.cfg.get("alternatives") \
                and self.cfg.get("fitted_temperature") is None:
            return 1.0
        tau = self.cfg.get("temperature")
        return float(tau if tau is not None else self.cfg.get("fitted_temperature") or 1.0)

    def inputs_and_indexes(self, docs: List[Doc], examples: Optional[List[Example]] = None
                           ) -> Tuple[list, List[Optional[numpy.ndarray]]]:
        """The system inputs of the docs (`_inputs`) and the positions of
        their content tokens (None: no whitespace token)."""
        return self._inputs(docs, examples), [content_index(doc) for doc in docs]

    def instances(self, docs: List[Doc], examples: Optional[List[Example]] = None,
                  indexes: Optional[List[Optional[numpy.ndarray]]] = None,
                  inputs: Optional[list] = None) -> Iterator:
        """The system's instances of the docs without their whitespace
        tokens (`indexes`: the content tokens of each doc; `inputs`: from
        inputs_and_indexes, if made already), made one at a time as the
        engine takes them."""
        system = self.system
        if inputs is None or indexes is None:
            inputs, indexes = self.inputs_and_indexes(docs, examples)
        if examples is None:
            return (system.instance(compact_input(x, i)) for x, i in zip(inputs, indexes))
        golds = [self.gold(eg, i) for eg, i in zip(examples, indexes)]
        return (system.instance(compact_input(x, i), g) for x, i, g in zip(inputs, indexes, golds))

    def _in_doc(self, prediction: "Prediction", index: Optional[numpy.ndarray],
                n: int) -> "Prediction":
        if index is None:
            return prediction
        nbest, scores = prediction.nbest, prediction.scores
        return Prediction(self.expand(prediction.best, index, n),
                          None if nbest is None else [self.expand(o, index, n) for o in nbest],
                          prediction.probs,
                          None if scores is None else self.expand_scores(scores, index, n))

    def expand_scores(self, scores: numpy.ndarray, index: numpy.ndarray, n: int) -> numpy.ndarray:
        """Prediction.scores over the doc's tokens (whitespace filled in)."""
        return scores

    def learn(self, examples: List[Example]) -> float:
        """One pass of the configured learner (learners.py) over the
        examples; the loss is what it counts."""
        loss = self.learner.learn(self, self.instances([eg.predicted for eg in examples],
                                                       examples))
        self._seen += len(examples)
        return loss

    def predict(self, docs: Iterable[Doc]) -> List[Prediction]:
        """Perceptron: the best output by the configured search. SAPO: the n
        best (exact A* where possible), the best written to the doc and the
        probabilities kept for scores."""
        docs = list(docs)
        indexes, run, instances, args = self._decoding(docs)
        try:
            results = (on_c_threads(instances) if run is on_c_threads
                       else in_threads(run, instances, self.cfg["n_threads"], *args))
        except decoding.NoValidOutput as err:
            raise self._naming_the_doc(docs, err) from None
        return self._predictions(docs, indexes, results)

    def _begin(self, docs: List[Doc], pool: Any, threads: int) -> tuple:
        """The pipelined pipe() (SearchPipe._batches): the batch's decoding
        started on the pool's threads; a batch decoded at once (on_c_threads)
        on C threads that never take the GIL (threads.RunsStarted), which
        also write each doc's output where the component has a sink for the
        batch (`_output_sink`)."""
        indexes, run, instances, args = self._decoding(docs, writes=True)
        if run is on_c_threads:
            try:
                return indexes, RunsStarted(instances)
            except BaseException:
                if isinstance(indexes, DocsLayout) and indexes.rows is not None:
                    self._calls.lookup_probing = False  # (no _finish will end this probe)
                raise
        return indexes, Started(pool, run, chunks_for(list(instances), threads), args)

    def _finish(self, docs: List[Doc], begun: tuple) -> None:
        indexes, started = begun
        sink = indexes.sink if isinstance(indexes, DocsLayout) else None
        if isinstance(indexes, DocsLayout) and indexes.rows is not None:
            self._calls.lookup_probing = False  # (a probe ends here, however it ends)
        try:
            results = started.results()
            if sink is not None:  # (the searching threads wrote the outputs)
                redo: List[int] = []
                alone = None  # (docs of whitespace alone: the sink writes them)
                if indexes.rows is not None and docs:
                    indexes.rows.keep_new_words()  # (for the next batches' threads)
                    searched = indexes.search_again(docs, self._cache_words)
                    alone = indexes.rows.returned(whitespace=True).tolist()
                    redo = sorted(set(indexes.returned()) - set(alone))
                    self._pause_lookup(len(redo) > 0 or searched > LOOKUP_AGAIN_MOST * len(docs),
                                       indexes.lookup, new_words_alone=not redo)
                again = [docs[i] for i in redo]  # (predicted before a write is final)
                predictions = self.predict(again) if again else None
                sink.finish(absent=redo, alone=alone)
                if again:
                    self.set_annotations(again, predictions)
                if indexes.rows is not None and docs:  # (once the batch cannot fail: one
                    # that does is done again, in parts, by SearchPipe._written)
                    self._tally_tags_read(indexes.rows.tag_counts(), docs[0].vocab.strings)
                return
        except decoding.NoValidOutput as err:
            if sink is not None:  # (the docs written before the stop, as they were)
                sink.undo()
            raise self._naming_the_doc(docs, err) from None
        except BaseException:
            if sink is not None:
                sink.undo()
            raise
        self.set_annotations(docs, self._predictions(docs, indexes, results))

    def _abandon(self, docs: List[Doc], begun: tuple) -> None:
        indexes, started = begun
        try:
            started.results()
        except Exception:  # (its error is no one's now: the batch is dropped)
            pass
        if isinstance(indexes, DocsLayout) and indexes.sink is not None:
            indexes.sink.undo()
        if isinstance(indexes, DocsLayout) and indexes.rows is not None:
            self._calls.lookup_probing = False

    def _naming_the_doc(self, docs: List[Doc], err: Exception) -> Exception:
        """A batch's NoValidOutput, naming the first of its docs that has no
        valid output (each decoded again on its own: the error path only)."""
        run, args = self._decoder()
        for k, doc in enumerate(docs):
            inputs, indexes = self.inputs_and_indexes([doc])
            try:
                run(list(self.instances([doc], None, indexes, inputs)), *args)
            except decoding.NoValidOutput:
                return decoding.NoValidOutput(
                    f"[{self.name}] doc {k} of the batch ({len(doc)} tokens: "
                    f"{doc.text[:60]!r}{'...' if len(doc.text) > 60 else ''}): {err}")
        return err

    def _decoding(self, docs: List[Doc], writes: bool = False
                  ) -> Tuple[Any, Callable, Iterable, tuple]:
        """(the docs' content positions, the engine's decoder, the docs'
        instances (made as the decoder takes them, where the system makes
        them one at a time), the decoder's other arguments): everything
        but the search. The best output alone (`_decodes_docs`): the batch
        decoded at once (decode_docs: one call per thread, which take its
        docs in turn; no instance, array or Prediction per doc); the
        positions are then a DocsLayout. writes (pipe()'s, never
        predict()'s): the searching threads may write each doc's output
        into it (the layout's sink: `_output_sink`)."""
        self._require_labels()
        self._start_tally()
        run, args = self._decoder()
        if self._decodes_docs(run, args):
            lookup = writes and self._looks_up_on_threads(docs) and self._lookup_resumed(docs)
            try:
                return self._docs_decoding(docs, writes, lookup, run, args)
            except BaseException:
                if lookup:  # (no _finish will end this probe)
                    self._calls.lookup_probing = False
                raise
        inputs, indexes = self.inputs_and_indexes(docs)
        self._warn_unseen_tags()
        return indexes, run, self.instances(docs, None, indexes, inputs), args

    def _docs_decoding(self, docs: List[Doc], writes: bool, lookup: int, run: Callable,
                       args: tuple) -> Tuple[Any, Callable, Iterable, tuple]:
        """_decoding of a batch decoded at once (`_decodes_docs`); lookup:
        the searching threads look its words up (MAKES_WORDS: and make
        those the cache lacks)."""
        inputs, indexes = self.batch_inputs(docs, defer_rows=True, lookup=lookup)
        self._warn_unseen_tags()
        held = self.system.batch_docs(inputs)
        W, depth, beam_width, keep = self._docs_decode_args(run, args)
        output = decoding.DocsOutput(held, keep)
        lattices = self._lattice_pass(held, inputs["starts"])
        sink = self._output_sink(docs, indexes, lattices, lookup) if writes else None
        if lookup and sink is None:
            raise RuntimeError(f"[{self.name}] looks words up on its searching threads but "
                               "has no sink for their outputs (a bug: please report it)")
        rows = inputs.get("rows") if lookup else None  # (none for a batch without tokens)
        rows = rows if rows is not None and rows.looks_up else None
        if lookup and rows is None:  # (nothing looked up: no probe for _finish to end)
            self._calls.lookup_probing = False
        if rows is not None:  # (they may leave a doc's whitespace out: its outputs are its words')
            sink.over_content(rows)
        elif sink is not None and any_spaced(indexes):  # (left out here: the same)
            sink.over_positions(indexes)
        threads = max(1, min(thread_count(self.cfg["n_threads"]), len(docs)))
        runs = docs_runs(held, output, threads, W, depth, beam_width, lattices, sink=sink)
        return (DocsLayout(inputs["starts"], indexes, output, held, lattices, sink,
                           rows, runs if rows is not None else None, int(lookup)),
                on_c_threads, runs, ())

    def _output_sink(self, docs: List[Doc], indexes: List[Optional[numpy.ndarray]],
                     lattices: Any, looked_up: bool = False) -> Any:
        """Where the searching threads of a batch decoded at once write each
        doc's output right after its search (a core.instance.DocSink over
        `docs`, e.g. spacy_io.LabelSink), where that is all set_annotations
        would do with it; None: set_annotations writes them after the
        search (subclasses that have one say when; a subclass of theirs
        that writes more in its own set_annotations gets none). A batch
        that fails leaves its docs as they were (the sink's undo()).
        The docs' whitespace is left out of their searches, and the sink
        puts it back (a spacy_io.LabelSink's over_positions, or its
        over_content where the threads look the words up). indexes: the
        docs' content positions (None: no whitespace token); lattices:
        the batch's `_lattice_pass`; looked_up: the searching threads look
        the words up and leave the docs with preset annotation
        (docs_inputs' lookup)."""
        return None

    def _looks_up_on_threads(self, docs: List[Doc]) -> bool:
        """Whether the threads that search a batch decoded at once in
        pipe() may also look its words up (batch_inputs' lookup: no token
        read on the calling thread): where they write every output too
        (`_output_sink` makes a sink for these docs whatever their tokens)
        and nothing reads the inputs before the search. The docs they
        cannot do (a word not cached yet: searched again once cached;
        whitespace alone, presets) are predicted again by _finish. False
        here; subclasses that can say when."""
        return False

    def _lattice_pass(self, held: Any, starts: numpy.ndarray) -> Any:
        """A pass over the lattices of a batch decoded at once (a
        core.marginals.DocPass over `held`, the docs' content tokens at
        starts[k]:starts[k + 1]) that decode_docs does on each doc after
        its search, on the same thread; None: none (subclasses that write
        probabilities say)."""
        return None

    def _decoder(self) -> Tuple[Callable, tuple]:
        """The learner's decoder and its arguments after the instances."""
        return self.learner.decoder(self)

    @property
    def calibrated(self) -> bool:
        """Whether the component writes probabilities fitted on held-out
        data (subclasses say when)."""
        return False

    def _decodes_docs(self, run: Callable, args: tuple) -> bool:
        """Whether the output is the best by greedy, lookahead or beam
        search (decode), by a learner that takes decode's outputs as they
        are (Learner.predictions), with no n best (SAPO's, a calibrated
        parser's: their decoder is not decode): then the batch is decoded
        at once, and probabilities of its parts (a calibrated sequence
        labeller's) come after, from its lattices."""
        return (run is decoding.decode and not self.learner.probabilistic
                and type(self.learner).predictions is Learner.predictions)

    def _docs_decode_args(self, run: Callable, args: tuple) -> Tuple[Weights, int, int, int]:
        """decode_docs' arguments for a decoder that `_decodes_docs`: the
        weights, the depth, the beam width (0: none) and how many of the
        beam's best final items to keep (DocsOutput's keep; 0: the best)."""
        return args[0], args[2], args[3] if args[1] == "beam" else 0, 0

    def batch_inputs(self, docs: List[Doc], defer_rows: bool = False, lookup: int = 0
                     ) -> Tuple[Dict[str, Any], List[Optional[numpy.ndarray]]]:
        """The system input of the whole batch without its whitespace tokens
        (the system's batch_docs reads it: per-token arrays over the docs'
        tokens one after the other, "starts" where each doc's begin), and
        the positions of each doc's content tokens (None: no whitespace
        token). defer_rows: its rows may be left to batch_docs' searches,
        which fill each doc's before they read it (a DocRows, "rows"), where
        the system takes them. lookup (with defer_rows, where
        `_looks_up_on_threads`): the searches look the words up too
        (docs_inputs' lookup), and leave the docs they cannot do; with
        MAKES_WORDS (SearchPipe._lookup_resumed), they make the words the
        cache lacks (docs_inputs' new_words)."""
        raise NotImplementedError

    def _docs_predictions(self, docs: List[Doc], layout: DocsLayout) -> Sequence:
        """The outputs of a batch decoded at once (the shared DocsOutput)
        over the docs' tokens, as a sequence of Prediction."""
        raise NotImplementedError

    def _predictions(self, docs: List[Doc], indexes: Any, results: list) -> Sequence:
        if isinstance(indexes, DocsLayout):
            return self._docs_predictions(docs, indexes)
        predictions = self.learner.predictions(self, results)
        if not any_spaced(indexes):
            return predictions
        return [self._in_doc(p, i, len(doc)) for p, i, doc in zip(predictions, indexes, docs)]

    def predict_nbest(self, docs: Iterable[Doc], n: int = 5, *, presets: bool = False
                      ) -> List[List[Tuple[Any, float]]]:
        """The n best outputs of each doc with their probabilities (a softmax
        over the n best, Sun et al. eq. 1, at the model's temperature), best first, as `describe` shows
        them. Meaningful as probabilities for SAPO models and for perceptron
        models with a temperature fitted on held-out data (fit_temperature);
        for the others the ranking is exact (first-order systems) or a
        beam's, but the scale is arbitrary (temperature 1). n: 1..MAX_NBEST. What a doc holds where the
        component writes (the NER's doc.ents, e.g. of `nlp(text)`) is not
        read as preset annotation, unless `presets` (then, as in prediction,
        the outputs keep it)."""
        if not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= MAX_NBEST:
            raise ValueError(f"[{self.name}] n must be an integer in 1..{MAX_NBEST}, got {n!r}")
        docs = list(docs) if presets else [self.without_output(doc) for doc in docs]
        return [[(self.describe(o), float(p))
                 for o, p in zip(outputs, softmax(scores / self.temperature))]
                for outputs, scores in self.nbest_scores(docs, n)]

    def nbest_scores(self, docs: List[Doc], n: int) -> List[Tuple[list, numpy.ndarray]]:
        """Each doc's n best outputs (over all its tokens), best first, and
        their scores w . Phi (at temperature 1, not normalised)."""
        self._require_labels()
        self._start_tally()
        inputs, indexes = self.inputs_and_indexes(docs)
        out = []
        for (outputs, scores), index, doc in zip(
                in_threads(decoding.nbest, self.instances(docs, None, indexes, inputs),
                           self.cfg["n_threads"],
                           self.averaged_weights, n, self.search.predict_beam_width(self.nbest_width),
                           self.search.exact_topn(self.system, self.name)),
                indexes, docs):
            if index is not None:
                outputs = [self.expand(o, index, len(doc)) for o in outputs]
            out.append((outputs, numpy.asarray(scores, dtype="float64")))
        self._warn_unseen_tags()
        return out

    def score(self, examples: Iterable[Example], **kwargs) -> Dict[str, Any]:
        """With beam search, also the updates and invalid (non-violation)
        updates made so far (Huang et al. Figure 5), for the training curves.
        While a model that writes probabilities trains with temperature =
        null, the first scoring after its weights changed fits the
        temperature on the examples scored (`fit_temperature`): during
        `spacy train`, the dev set (never a loaded model: it keeps the
        temperature it was saved with)."""
        examples = list(examples)
        if self._fits_temperature():
            self.fit_temperature(examples)
        scores = super().score(examples, **kwargs)
        scores.update(self.learner.scores(self))
        if self.has_temperature:
            scores[f"{self.name}_temperature"] = self.temperature
        return scores

    # --- temperature scaling -----------------------------------------------------
    @property
    def has_temperature(self) -> bool:
        """Whether the component writes probabilities at a temperature: a
        probabilistic learner's (SAPO)."""
        return self.learner.probabilistic

    def _fits_temperature(self) -> bool:
        return (self.has_temperature and self.cfg.get("temperature") is None and self._seen > 0
                and self._fitted_for != (id(self.weights), self.weights.version))

    def fit_temperature(self, examples: List[Example]) -> float:
        """Fit tau of p(y | x) = exp(w . Phi / tau) / Z on the examples (the
        dev data; `_temperature_fit`), keep it with the model and return
        the temperature."""
        tau = self._temperature_fit(list(examples))
        if tau is not None:  # 4 decimals (the fit's tolerance is 0.5%): the saved cfg gives it back
            self.cfg["fitted_temperature"] = round(tau, 4)
        self._fitted_for = (id(self.weights), self.weights.version)
        return self.temperature

    def _temperature_fit(self, examples: List[Example]) -> Optional[float]:
        """The tau fitted on the examples, None if they give none (no known
        gold). Defined by the components that write probabilities."""
        raise NotImplementedError

    def _load(self, cfg: Dict[str, Any], sealed: Sealed,
              source: str = "the weights") -> None:
        if isinstance(cfg, dict):
            self._check_learner(cfg.get("learner"))
        super()._load(cfg, sealed, source)
        # saved with 4 decimals; srsly's JSON reader can return a neighbouring
        # float (1.9546 -> 1.9546000000000001): rounding gives back the fit's
        if self.cfg.get("fitted_temperature") is not None:
            self.cfg["fitted_temperature"] = round(float(self.cfg["fitted_temperature"]), 4)

    def _check_learner(self, saved: Any) -> None:
        """The weights' learner (its kind: a saved cfg holds its block, or in
        models saved before the blocks its name) is the configured one's:
        averaged or not, probabilities or none. Otherwise the error that
        names the block to configure."""
        if saved is None:
            return
        kind = saved if isinstance(saved, str) else None
        if isinstance(saved, dict):
            try:
                kind = resolve_block(saved).kind
            except Exception:  # (a learner this process has not registered)
                kind = saved.get("@learners")
        if kind != self.learner.kind:
            block = saved if isinstance(saved, dict) else {"sapo": "spacy_lookahead.SAPO.v1"}.get(
                kind, "spacy_lookahead.MarginPerceptron.v1 or spacy_lookahead.ViolationFixing.v1")
            raise config_error(
                self.name, "learner",
                f"[{self.name}] the weights were trained by a {kind!r} learner and the "
                f"component is configured with {self.learner.registered} "
                f"({self.learner.kind!r}): configure [components.{self.name}.learner] as the "
                f"model was trained ({block}), and a search it takes.")

    def _check_lexicon(self, docs: List[Doc]) -> None:
        """The vocab's lookups tables the templates read (`_lexicon_needs`,
        set by the subclass): the component's own copy goes into a vocab
        without them; none at all is an error that names the fix."""
        if docs and any(self._lexicon_needs.values()):
            self.install_lexicon(docs[0].vocab)
            require_tables(self.name, docs[0].vocab, self._lexicon_needs)

    def _count_training_set(self, get_examples: Callable[[], Iterable[Example]],
                            size: Optional[int] = None, tags: Optional[set] = None) -> None:
        """|S| (SAPO's L2 step) and the input tags; `size` and `tags` if the
        caller's pass over the corpus counted them already; the lookups
        tables the templates read, kept with the component."""
        if any(self._lexicon_needs.values()):  # before training starts
            require_tables(self.name, self.vocab, self._lexicon_needs)
        self.keep_lexicon(lexicon_tables(self._lexicon_needs))
        self.cfg["train_size"] = sum(1 for _ in get_examples()) if size is None else size
        self._seen = 0
        self._learn_input_tags(get_examples, tags)
        self.learner.initialize(self)  # a wrong setting found before training starts

    def _reset(self) -> None:
        self.cfg["labels"] = []
        self._seen = 0
        self._label_ids = None
        self._system = None
        self.weights = Weights()
