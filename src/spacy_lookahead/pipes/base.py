"""What every search-based component shares: the weight table, averaged
weights for prediction, serialisation and the spaCy plumbing."""
import threading
import time
import warnings
from collections import deque
from pathlib import Path
from typing import Any, Callable, Deque, Dict, Iterable, Iterator, List, Optional, Union

import numpy

import srsly
from spacy import util
from spacy.attrs import IS_SPACE, TAG
from spacy.errors import Errors
from spacy.lookups import Lookups, Table
from spacy.pipeline import TrainablePipe
from spacy.tokens import Doc, Span
from spacy.training import Example, validate_examples
from spacy.vocab import Vocab
from thinc.api import Model

from ..core.batch import shared_pool, thread_count
from ..core.features import A_CHUNK_COLUMN as A_CHUNK, A_TAG_COLUMN as A_TAG
from ..core.weights import Weights, unpack_fields
from ..spacy_io import CLUSTER_TABLE, PROB_TABLE, ChunkAtoms, check_tags
from .aligned import aligned_values
from .integrity import ModelFileError, seal, unseal
from .settings import config_error


# A component's sealed weights as _load takes them: the bytes, the file that
# holds them, or a function that hands the bytes over (none kept by its caller)
Sealed = Union[bytes, Path, Callable[[], bytes]]


def placeholder_model(name: str) -> Model:
    """spaCy's training loop expects a thinc Model on every trainable pipe;
    ours holds no thinc parameters (the weights live in the Cython core)."""
    return Model(name, lambda model, X, is_train: (X, lambda dY: dY))


def filled_atoms(batch: Dict[str, Any]) -> numpy.ndarray:
    """batch["atoms"] (LexemeAtoms.docs_inputs'), every row filled: where
    docs_inputs left them to the searches (defer: "rows"), they are filled
    now, and the batch then holds no rows."""
    rows = batch.pop("rows", None)
    if rows is not None:
        rows.fill_all()
    return batch["atoms"]


def _add_to_tally(tally: Dict[str, Any], n_words: int, n_unseen: int, examples: Iterable[int],
                  strings: Any) -> None:
    """A batch's words and unseen tags (up to 5 named, as tag hashes) into
    a prediction call's tally (SearchPipe._start_tally's)."""
    tally["words"] += n_words
    if n_unseen:
        tally["unseen"] += n_unseen
        if len(tally["tags"]) < 5:
            tally["tags"].update(strings[int(h)] for h in sorted(examples))


def any_per_doc(mask: numpy.ndarray, starts: numpy.ndarray) -> numpy.ndarray:
    """Per doc of a batch (starts: where each doc's tokens begin in `mask`):
    whether any of its tokens is set."""
    counts = numpy.concatenate([[0], numpy.cumsum(mask)])
    return counts[starts[1:]] > counts[starts[:-1]]


# Batches searched ahead of the one pipe() writes (n_threads > 1): with two,
# the threads go from one batch to the next without waiting for this thread
# (2 cores, 2 threads, batches of 32 docs: 1.29-1.40x one thread -> 1.38-1.50x;
# of 256: the same); each holds a batch of docs and outputs in memory.
PIPELINE_DEPTH = 2
# ... and a batch of at least this many docs a thread (n_threads > 1): each
# batch costs the threads a start and an end (waking up, the GIL), whatever
# its size, and with a few short docs a thread that cost is the search's.
# 2 cores, 2 threads, pipe(batch_size=16): 1.14-1.23x one thread -> 1.85-1.90x;
# 16 threads at batch_size=256 would give each 16 docs.
MIN_DOCS_PER_THREAD = 64

# pipe() with threads that look the words up (the sequence labellers'
# _looks_up_on_threads, the phrase recognisers' _threads_read): the
# docs they leave for words not cached yet are searched again by the same
# runs once the words are (DocsLayout.search_again; the phrase recognisers
# decode the docs they leave again, on the same threads); those left for other
# reasons (presets, an untagged word, whitespace alone) are predicted again on
# the calling thread, which cost a batch ~7% on 2 cores whatever their
# number; and a search again waits for its threads (nothing else runs beside
# it: a cold cache, where most docs have new words, cost ~8%). So after a
# batch with docs predicted again, or more than LOOKUP_AGAIN_MOST of them
# searched again, the next batches look their words up on the calling
# thread: LOOKUP_PAUSE of them, twice as many after each pause
# that ends in such a batch again (at most LOOKUP_PAUSE_MOST), and then the
# threads try again (benchmarks/NOTES.md, 2026-12-06, eighth session); but a
# batch looked up unsampled that left many docs for new words alone (fresh
# text in mid-stream) has the next batches sampled again instead (where
# they are cold, their threads make the new words: 2026-12-07, third session)
LOOKUP_AGAIN_MOST = 0.25
LOOKUP_PAUSE = 8
LOOKUP_PAUSE_MOST = 512
# SearchPipe._lookup_resumed: the searching threads look the batch's words
# up (a sample found the cache warm), and (MAKES_WORDS) make those the
# cache lacks (a sample found it cold), or look them up unsampled
# (LOOKS_UP_TRUSTED: a probe went well and a sample found the cache warm)
LOOKS_UP = 1
MAKES_WORDS = 2
LOOKS_UP_TRUSTED = 3


def pipelined_batch_size(batch_size: int, threads: int) -> int:
    """The docs a batch of the pipelined pipe() holds (n_threads > 1):
    batch_size, and at least MIN_DOCS_PER_THREAD a thread."""
    return max(batch_size, MIN_DOCS_PER_THREAD * threads)


class SearchPipe(TrainablePipe):
    """Base class: subclasses give the system, the features and the targets.

    The perceptron weights are averaged (Collins 2002) by construction:
    `predict()`, spaCy's evaluation during `spacy train` and `to_disk()` all
    read `self.averaged_weights`, never the raw training weights, so nothing
    depends on `Language.use_params` (which skips pipes whose optimizer has
    no averages, as here).
    """

    # cfg keys that define the features: a model is useless with other values.
    feature_settings: tuple = ()
    # cfg keys that belong to the trained model and are restored with it
    # (whatever the loading config says), e.g. which learner made the weights.
    model_settings: tuple = ()
    # the value of a model setting in a model saved before the setting
    # existed (its cfg lacks the key): what those models were trained with
    model_settings_before: Dict[str, Any] = {}

    def __init__(self, vocab: Vocab, name: str, *, scorer: Optional[Callable], **settings: Any) -> None:
        self.vocab = vocab
        self.name = name
        self.model = placeholder_model(name)
        self.scorer = scorer
        self.cfg: Dict[str, Any] = {"labels": [], **settings}
        # the vocab's lookups tables the features read (lexicon.py), the
        # component's own copy: it travels with the component (spaCy's
        # `source` does not copy the vocab's tables) and goes into a vocab
        # that lacks them (install_lexicon)
        self.lexicon = Lookups()
        self.weights = Weights()
        self._averaged: Optional[Weights] = None
        self._averaged_version = -1
        self._lock = threading.Lock()
        # per thread: whether update() is running, and the unseen-tag tally of
        # the prediction call under way (see _check_tags)
        self._calls = threading.local()
        self._update_seconds = 0.0  # time spent learning, for per-epoch timings

    # --- labels ------------------------------------------------------------
    @property
    def labels(self) -> tuple:
        return tuple(self.cfg["labels"])

    @property
    def label_data(self) -> List[str]:
        return list(self.labels)

    def add_label(self, label: str) -> int:
        if not isinstance(label, str):
            raise ValueError(Errors.E187)
        if label in self.cfg["labels"]:
            return 0
        if len(self.weights):
            raise ValueError(
                f"[{self.name}] cannot add label {label!r} to a trained model: "
                "its label set is fixed. Re-train from scratch with the new label."
            )
        self.cfg["labels"].append(label)
        self._label_ids = None
        return 1

    @property
    def label_ids(self) -> Dict[str, int]:
        if getattr(self, "_label_ids", None) is None:
            self._label_ids = {label: i for i, label in enumerate(self.labels)}
        return self._label_ids

    # --- weights -----------------------------------------------------------
    @property
    def averaged_weights(self) -> Weights:
        """The averaged weights the component predicts with; recomputed only
        after the training weights changed. Thread-safe."""
        with self._lock:
            if self._averaged is None or self._averaged_version != self.weights.version:
                self._averaged = self.weights.average()
                self._averaged_version = self.weights.version
            return self._averaged

    def set_weights(self, weights: Weights) -> None:
        """Replace the training weights (e.g. with mixed ones: distributed
        training); the averaged weights are recomputed from them, and the
        system is rebuilt as after loading (`_on_load`). Score caches need
        nothing: they are keyed by the table's address and version, and
        versions come from one process-wide clock (core/weights.pyx), so a
        new table never meets an old table's cached scores."""
        with self._lock:
            self.weights = weights
            self._averaged = None
        self._on_load()

    # --- training ------------------------------------------------------------
    def update(self, examples: Iterable[Example], *, drop: float = 0.0, sgd: Any = None,
               losses: Optional[Dict[str, float]] = None) -> Dict[str, float]:
        """One online pass of the component's learner over the examples, in
        order; the loss is what the learner counts (see `learn`)."""
        if losses is None:
            losses = {}
        losses.setdefault(self.name, 0.0)
        examples = list(examples)
        validate_examples(examples, f"{type(self).__name__}.update")
        self._require_labels()
        self._explain_ignored(drop)
        if self.weights.frozen:  # loaded for prediction: train on a thawed copy
            self.weights = self.weights.copy()
        start = time.perf_counter()
        self._calls.learning = True
        try:
            losses[self.name] += self.learn(examples)
        finally:
            self._calls.learning = False
        self._update_seconds += time.perf_counter() - start
        return losses

    def _explain_ignored(self, drop: float) -> None:
        """Say once that dropout, and the optimizer that comes with it, do
        nothing here: `spacy init fill-config` adds Adam and dropout 0.1, and
        `spacy train` prints Adam's learn rate as if it were used. Dropout is
        the sign of such a config: nlp.update(examples) in Python passes
        none, and spaCy's implicit optimizer is not worth a warning there."""
        if not drop or getattr(self, "_explained", False):
            return
        self._explained = True
        warnings.warn(
            f"[{self.name}] learns in update() (its perceptron, SAPO or FR update): "
            f"dropout ({drop}) and the optimizer of [training.optimizer] (the learn rate "
            "spacy train prints) are ignored. To say so in the config: [training] "
            'dropout = 0.0 and [training.optimizer] @optimizers = '
            '"spacy_lookahead.no_optimizer.v1".', UserWarning, stacklevel=3)

    def learn(self, examples: List[Example]) -> float:
        """The learner's pass over the examples; returns the loss."""
        raise NotImplementedError

    def get_loss(self, examples, scores):
        raise NotImplementedError(f"[{self.name}] the loss is computed by the learner and "
                                  "reported by update()")

    def score(self, examples: Iterable[Example], **kwargs) -> Dict[str, Any]:
        """The scorer's figures plus the mean |w| of the training weights (Sun
        et al.'s w-complexity curve) and the time spent in update(), so that
        training logs show both. A span-group component's scorer is told its
        key, so the figures come as spaCy's `spans_<spans_key>_p/r/f`."""
        if self.cfg.get("spans_key"):
            kwargs.setdefault("spans_key", self.cfg["spans_key"])
        scores = dict(super().score(examples, **kwargs))
        scores[f"{self.name}_w_mean_abs"] = self.weights.mean_abs()
        scores[f"{self.name}_update_seconds"] = self._update_seconds
        return scores

    def finish_update(self, sgd: Any) -> None:
        """Updates are applied in update(); there is no optimizer step."""

    def use_params(self, params: dict):
        """No thinc parameters: predictions always use the averaged weights."""
        yield

    def _require_labels(self) -> None:
        if not self.labels:
            raise ValueError(
                f"[{self.name}] has no labels: initialize it first, e.g. with "
                "nlp.initialize(lambda: examples), or train it with `spacy train`."
            )

    # --- prediction ------------------------------------------------------------
    def __call__(self, doc: Doc) -> Doc:
        """spaCy reports any KeyError of a component as "[E109] ... did you
        forget to call initialize()?": a KeyError here is not that, so it
        is raised as what it is."""
        try:
            return super().__call__(doc)
        except KeyError as err:
            raise RuntimeError(
                f"[{self.name}] internal error (KeyError: {err}) while annotating a doc of "
                f"{len(doc)} tokens. The component is initialized; this is a bug in "
                "spacy-lookahead: please report it with the text.") from err

    # --- inputs --------------------------------------------------------------
    def reads_tags(self) -> bool:
        """Whether token.tag_ is an input of the component."""
        return False

    def _learn_input_tags(self, get_examples: Callable[[], Iterable[Example]],
                          tags: Optional[set] = None) -> None:
        """Keep the POS tags seen in training (predicted or gold docs; and
        while training, those an annotating tagger gives), to count unseen
        ones at prediction time. `tags`: collected already (`_example_tags`
        in the caller's pass over the corpus: each pass reads it again)."""
        if not self.reads_tags():
            self.cfg.pop("input_tags", None)
            return
        if tags is None:
            tags = set()
            for eg in get_examples():
                tags |= self._example_tags(eg)
        self.cfg["input_tags"] = sorted(tags - {""})

    @staticmethod
    def _read_examples(get_examples: Callable[[], Iterable[Example]], method: str) -> Iterator[Example]:
        """The training examples of `initialize`, validated as spaCy's
        validate_examples does, in the caller's one pass over the corpus
        (validating first would read it once more: ~1 ms a doc)."""
        examples = get_examples()
        if not hasattr(examples, "__iter__"):
            validate_examples(examples, method)  # spaCy's error
        for eg in examples:
            if not isinstance(eg, Example):
                validate_examples([eg], method)  # spaCy's error, naming the type
            yield eg

    def _example_tags(self, eg: Example) -> set:
        """The POS tags of an example's words (predicted and gold docs), if
        the component reads tags."""
        if not self.reads_tags():
            return set()
        return {t.tag_ for doc in (eg.predicted, eg.reference) if doc.has_annotation("TAG")
                for t in doc if not t.is_space}

    def _known_tags(self) -> Optional[numpy.ndarray]:
        tags = self.cfg.get("input_tags")
        if tags is None:  # models saved before the tags were kept
            return None
        if getattr(self, "_known", (None,))[0] is not tags:
            hashes = numpy.asarray([self.vocab.strings.add(t) for t in tags], dtype="uint64")
            self._known = (tags, numpy.sort(hashes))
        return self._known[1]

    def _check_tags(self, doc: Doc, tags: numpy.ndarray,
                    words: Optional[numpy.ndarray] = None) -> None:
        """Empty tags on words are an error. In update(), the tags are
        learnt as seen; in a prediction call (`_start_tally`), those unseen
        in training are counted for one warning (`_warn_unseen_tags`).
        words: the tokens that are not whitespace, if the caller knows them."""
        if words is None:
            words = doc.to_array(IS_SPACE) == 0
        self._check_batch_tags([doc], numpy.asarray([0, len(doc)]), tags, words)

    def _check_batch_tags(self, docs: List[Doc], starts: numpy.ndarray, tags: numpy.ndarray,
                          words: numpy.ndarray) -> None:
        """_check_tags over a batch's tokens at once (starts: where each
        doc's tokens begin in `tags` and `words`), in C (spacy_io.check_tags)."""
        known = self._known_tags()
        learning = getattr(self._calls, "learning", False)
        tally = getattr(self._calls, "tally", None)
        counting = known is not None and not learning and tally is not None
        first, n_empty, n_words, n_unseen, examples = check_tags(
            tags, words, known if counting else None)
        if first >= 0:
            k = int(numpy.searchsorted(starts, first, side="right")) - 1
            doc, i = docs[k], int(first - starts[k])
            in_doc = int(((tags == 0) & words)[starts[k]:starts[k + 1]].sum())
            raise ValueError(
                f"[{self.name}] token {i} ({doc[i].text!r}) of a doc has no POS tag (token.tag_ is "
                f"empty; {in_doc} of {len(doc)} tokens are untagged), and the component reads "
                "the tags. Tag every token (a tagger earlier in the pipeline tags all of them), "
                "or set the missing tags.")
        if known is None:
            return
        if learning:
            # tags of an annotating component while training count as seen
            new = numpy.setdiff1d(tags[words], known)
            if len(new):
                strings = docs[0].vocab.strings
                self.cfg["input_tags"] = sorted({*self.cfg["input_tags"],
                                                 *(strings[int(h)] for h in new)})
            return
        if tally is None:  # neither training nor predicting (e.g. filter_stats)
            return
        _add_to_tally(tally, n_words, n_unseen, examples, docs[0].vocab.strings)

    def _tally_tags_read(self, counts: Optional[tuple], strings: Any) -> None:
        """Into the pipe() call's tally, the unseen tags that the searching
        threads counted as they read a batch's tags (docs_inputs' lookup:
        WordRows.tag_counts(), None where none were counted)."""
        tally = getattr(self._calls, "pipe_tally", None)
        if counts is not None and tally is not None:
            _add_to_tally(tally, *counts, strings)

    def _start_tally(self) -> None:
        """A prediction call starts: count its unseen tags afresh (inside
        pipe(), into the tally of the whole pipe() call)."""
        whole = getattr(self._calls, "pipe_tally", None)
        self._calls.tally = whole if whole is not None else {"unseen": 0, "words": 0, "tags": set()}

    def _warn_unseen_tags(self) -> None:
        """One warning per prediction call, with the rate of unseen tags;
        inside pipe(), one when the pipe() call ends."""
        tally = getattr(self._calls, "tally", None)
        self._calls.tally = None
        if getattr(self._calls, "pipe_tally", None) is None:
            self._warn_tally(tally)

    def pipe(self, stream: Iterable[Doc], *, batch_size: int = 128) -> Iterator[Doc]:
        """As TrainablePipe.pipe (`_batches`), with one unseen-tag warning for
        the whole call rather than one per batch (they broke spaCy's
        training table, once per batch of each evaluation)."""
        if getattr(self._calls, "pipe_tally", None) is not None:  # (a pipe() inside one)
            yield from self._batches(stream, batch_size=batch_size)
            return
        self._calls.pipe_tally = {"unseen": 0, "words": 0, "tags": set()}
        try:
            yield from self._batches(stream, batch_size=batch_size)
        finally:
            tally, self._calls.pipe_tally = self._calls.pipe_tally, None
            self._warn_tally(tally)

    def _batches(self, stream: Iterable[Doc], *, batch_size: int) -> Iterator[Doc]:
        """With n_threads > 1, the batches are pipelined: while the threads
        search the next PIPELINE_DEPTH batches (without the GIL), this thread
        makes the inputs of the one after them and writes the outputs of the
        one before, so that the Python per batch runs beside the search
        instead of between searches. A batch holds at least
        MIN_DOCS_PER_THREAD docs a thread, whatever batch_size asks.
        The same outputs as one thread, in the same order; a batch of
        batch_size docs whose inputs or outputs fail goes to the error
        handler (its docs are not yielded), as TrainablePipe.pipe does.
        Where the caller stops early (or an error leaves), the batches in
        flight are waited for and their docs left as they were (_abandon)."""
        threads = thread_count(self.cfg["n_threads"])
        if threads <= 1:
            yield from TrainablePipe.pipe(self, stream, batch_size=batch_size)
            return
        # each call tries the look-up on the threads at once (no pause left
        # from another: _pause_lookup)
        self._calls.lookup_pause = self._calls.lookup_pause_length = 0
        self._calls.lookup_trusted = self._calls.lookup_probing = False
        self._calls.lookup_cold = True
        error_handler = self.get_error_handler()
        pool = shared_pool(threads)
        started: Deque[tuple] = deque()
        try:
            for docs in util.minibatch(stream, size=pipelined_batch_size(batch_size, threads)):
                docs = list(docs)
                try:
                    started.append((docs, self._begin(docs, pool, threads)))
                except Exception as err:  # (handled in the batches' order)
                    started.append((docs, err))
                while len(started) > PIPELINE_DEPTH:
                    yield from self._written(*started.popleft(), error_handler, batch_size, pool,
                                             threads)
            while started:
                yield from self._written(*started.popleft(), error_handler, batch_size, pool,
                                         threads)
        finally:
            while started:
                docs, begun = started.popleft()
                if not isinstance(begun, Exception):
                    self._abandon(docs, begun)

    def _written(self, docs: List[Doc], begun: Any, error_handler: Callable, batch_size: int,
                 pool: Any, threads: int) -> List[Doc]:
        """The batch's docs, annotated (_finish; begun: _begin's, or its
        error); none where the error handler took its error. A batch larger
        than batch_size (MIN_DOCS_PER_THREAD's) that fails is done again in
        batches of batch_size, each on its own: the error handler gets the
        batches the caller asked for, and the others are kept."""
        try:
            if isinstance(begun, Exception):
                raise begun
            self._finish(docs, begun)
        except Exception as err:
            if len(docs) <= batch_size:
                error_handler(self.name, self, docs, err)
                return []
            kept: List[Doc] = []
            for part in util.minibatch(docs, size=batch_size):
                part = list(part)
                try:
                    self._finish(part, self._begin(part, pool, threads))
                except Exception as part_err:
                    error_handler(self.name, self, part, part_err)
                    continue
                kept.extend(part)
            return kept
        return docs

    def _begin(self, docs: List[Doc], pool: Any, threads: int) -> Any:
        """The pipelined pipe(): the batch's search, started on `pool`."""
        raise NotImplementedError

    def _finish(self, docs: List[Doc], begun: Any) -> None:
        """The pipelined pipe(): wait for _begin's search, write the outputs."""
        raise NotImplementedError

    def _abandon(self, docs: List[Doc], begun: Any) -> None:
        """The pipelined pipe() stopped before _finish: wait for _begin's
        search and leave the docs as they were (what its threads wrote
        undone; none by default)."""

    def _lookup_resumed(self, docs: List[Doc]) -> int:
        """Whether this batch's threads look its words up (this thread's
        pipe() call: _calls): not while a pause lasts (counted down here),
        nor beside a probe: the first batch of a call, or after a pause,
        goes alone until its _finish says how it went (_pause_lookup).
        Where a sample of its docs says the threads would leave more than
        LOOKUP_AGAIN_MOST of them for a word not cached yet (`_left_share`:
        a cold word cache, e.g. the first batches of fresh text), the
        threads also make the batch's new words (MAKES_WORDS: a scan of
        its tokens here finds them, docs_inputs' `new_words`), where they
        would leave their docs. Once a probe went well, the next batches
        look up unsampled from the first sample that finds the cache warm
        (a sample reads a few docs here: 1-7 ns a token of the batch),
        until such a batch leaves many docs for new words (fresh text
        in mid-stream: `_pause_lookup`). 0: no look-up on the threads,
        LOOKS_UP, MAKES_WORDS or LOOKS_UP_TRUSTED (unsampled)."""
        calls = self._calls
        pause = getattr(calls, "lookup_pause", 0)
        if pause > 0:
            calls.lookup_pause = pause - 1
            return 0
        trusted = getattr(calls, "lookup_trusted", False)
        if not trusted and getattr(calls, "lookup_probing", False):
            return 0
        if trusted and not getattr(calls, "lookup_cold", True):
            return LOOKS_UP_TRUSTED
        calls.lookup_cold = self._left_share(docs) > LOOKUP_AGAIN_MOST
        if not trusted:
            calls.lookup_probing = True
        return MAKES_WORDS if calls.lookup_cold else LOOKS_UP

    def _left_share(self, docs: List[Doc]) -> float:
        """The share of a sample of `docs` that threads looking their words
        up would leave (e.g. spacy_io.LexemeAtoms.left_share); 0.0 here."""
        return 0.0

    def _cache_words(self, docs: List[Doc]) -> None:
        """The word types of `docs` put in the word cache that the threads
        read (spacy_io.LexemeAtoms.cache_words): for the docs they left.
        Subclasses whose threads look words up say how."""
        raise NotImplementedError(f"{type(self).__name__} looks words up on its threads "
                                  "but cannot cache them (_cache_words): a bug, please report it")

    def _pause_lookup(self, costly: bool, lookup: int = LOOKS_UP,
                      new_words_alone: bool = False) -> None:
        """After a batch whose threads looked its words up (`lookup`:
        _lookup_resumed's for it): where that cost more than it saved
        (LOOKUP_AGAIN_MOST), a pause (twice the last, where the pause
        before ended in the same), else the next batches look up too. But
        where an unsampled batch (LOOKS_UP_TRUSTED) cost so for new words
        alone (`new_words_alone`: fresh text in mid-stream), the next
        batches are sampled again instead (MAKES_WORDS where they are
        cold); a sampled batch that costs so pauses (a wrong sample)."""
        calls = self._calls
        calls.lookup_probing = False
        if getattr(calls, "lookup_pause", 0) > 0:  # (a batch begun before the pause)
            return
        if costly and new_words_alone and lookup == LOOKS_UP_TRUSTED:
            calls.lookup_cold = True
            return
        length = getattr(calls, "lookup_pause_length", 0)
        calls.lookup_trusted = not costly
        if not costly:
            calls.lookup_pause_length = 0
            return
        length = min(LOOKUP_PAUSE_MOST, 2 * length) if length else LOOKUP_PAUSE
        calls.lookup_pause_length = calls.lookup_pause = length

    def _warn_tally(self, tally: Optional[Dict[str, Any]]) -> None:
        if tally and tally["unseen"]:
            warnings.warn(
                f"[{self.name}] {tally['unseen']} of {tally['words']} input words "
                f"({tally['unseen'] / tally['words']:.1%}) have POS tags never seen in training "
                f"(e.g. {', '.join(sorted(tally['tags']))}): they count as unknown tags and "
                "accuracy suffers. Use a tagger with the tag set of the training data.",
                UserWarning, stacklevel=4)

    def _tag_column(self, doc: Doc, atoms: numpy.ndarray, example: Optional[Example],
                    what: str, words: Optional[numpy.ndarray] = None) -> None:
        """POS tags as an input feature: from the doc, else (training only)
        from the aligned gold doc; missing at prediction time is an error,
        and so is an empty tag on a word. words: as _check_tags."""
        if doc.has_annotation("TAG"):
            tags = doc.to_array(TAG)
            self._check_tags(doc, tags, words)
            atoms[:, A_TAG] = tags
        elif example is not None and example.reference.has_annotation("TAG"):
            atoms[:, A_TAG] = aligned_values(example, "TAG")
        elif _has_words(doc):
            raise ValueError(
                f"[{self.name}] needs POS tags (token.tag_) on its input docs for {what}, "
                "and this doc has none. Put a tagger (e.g. lookahead_tagger) before it "
                "in the pipeline, or give it docs with tags (to score it on gold tags: "
                "`python -m spacy_lookahead evaluate MODEL DATA.spacy --inputs tag`)."
                + ("" if example is None else " The gold doc has no tags either."))

    def string_hashes(self, strings: List[str]) -> numpy.ndarray:
        """The hashes of `strings` in the component's vocab (added to it), as
        uint64: what the C writers (spacy_io) put in the tokens. Made again
        only when the strings change (the label set)."""
        strings = list(strings)
        if getattr(self, "_hashes", (None,))[0] != strings:
            self._hashes = (strings, numpy.asarray([self.vocab.strings.add(s) for s in strings],
                                                   dtype="uint64"))
        return self._hashes[1]

    def _tag_columns(self, docs: List[Doc], batch: Dict[str, Any],
                     examples: Optional[List[Example]], what: str) -> None:
        """_tag_column over a batch (LexemeAtoms.docs_inputs with tags: the
        tags read from the tokens in C, into the atoms' tag column too):
        where every doc has tags, one check; else doc by doc."""
        starts, tags, space = batch["starts"], batch["tags"], batch["space"]
        words = numpy.ones((len(tags),), dtype=bool) if space is None else space == 0
        if batch["untagged"] == 0:
            self._check_batch_tags(docs, starts, tags, words)
            return
        atoms = filled_atoms(batch)
        for k, doc in enumerate(docs):
            self._tag_column(doc, atoms[starts[k]:starts[k + 1]],
                             examples[k] if examples else None, what)

    def _chunk_columns(self, docs: List[Doc], batch: Dict[str, Any],
                       examples: Optional[List[Example]], key: str, fix: str,
                       inside: Optional[numpy.ndarray] = None) -> None:
        """_chunk_column over a batch: the docs with doc.spans[key] in C
        (spacy_io.ChunkAtoms: no Python per chunk), the others doc by doc.
        inside: uint8 per token of the batch, set to 1 on a chunk's tokens
        after its first."""
        chunk_atoms = self._chunk_atoms_of()
        starts, rows = batch["starts"], batch.get("rows")
        if rows is not None:  # rows left to the searches: the column goes with them
            column = numpy.zeros((len(batch["atoms"]), 1), dtype="uint64")
            found = chunk_atoms.write(docs, key, column, starts, 0, inside)
            if found.all():
                rows.set_column(A_CHUNK, column[:, 0])
                return
            atoms = filled_atoms(batch)  # (docs without chunks: written below, per doc)
            atoms[:, A_CHUNK] = column[:, 0]
        else:
            atoms = batch["atoms"]
            found = chunk_atoms.write(docs, key, atoms, starts, A_CHUNK, inside)
        for k in numpy.flatnonzero(found == 0).tolist():
            start = int(starts[k])
            chunks = self._chunk_column(docs[k], atoms[start:starts[k + 1]],
                                        examples[k] if examples else None, key, fix)
            if inside is not None:
                for span in chunks:
                    inside[start + span.start + 1:start + span.end] = 1

    def _chunk_atoms_of(self) -> ChunkAtoms:
        """The chunk types' hashes as the C readers look them up (made again
        for another vocab's strings)."""
        chunk_atoms = getattr(self, "_chunk_atoms", None)
        if chunk_atoms is None or chunk_atoms.strings is not self.vocab.strings:
            chunk_atoms = self._chunk_atoms = ChunkAtoms(self.vocab.strings)
        return chunk_atoms

    def _chunk_column(self, doc: Doc, atoms: numpy.ndarray, example: Optional[Example],
                      key: str, fix: str) -> List[Span]:
        """Chunks as an input feature (B-X / I-X / O per token, written per
        chunk): from doc.spans[key], else (training only) from the aligned
        gold doc; missing at prediction time is an error naming `fix`.
        Returns the chunks."""
        if key in doc.spans:
            chunks = list(doc.spans[key])
        elif example is not None and key in example.reference.spans:
            chunks = example.get_aligned_spans_y2x(list(example.reference.spans[key]),
                                                   allow_overlap=True)
        elif _has_words(doc):
            raise ValueError(
                f"[{self.name}] needs chunks in doc.spans[{key!r}] on its input docs, and this "
                f"doc has none. {fix} (To score it on gold chunks: `python -m spacy_lookahead "
                f"evaluate MODEL DATA.spacy --inputs tag,{key}`.)"
                + ("" if example is None else " The gold doc has none either."))
        else:
            chunks = []
        strings = self.vocab.strings
        for span in chunks:  # per chunk, not per token
            atoms[span.start, A_CHUNK] = strings.add(f"B-{span.label_}")
            atoms[span.start + 1:span.end, A_CHUNK] = strings.add(f"I-{span.label_}")
        atoms[atoms[:, A_CHUNK] == 0, A_CHUNK] = strings.add("O")
        return chunks

    # --- serialisation -----------------------------------------------------
    def _check_settings(self, cfg: Dict[str, Any]) -> None:
        for key in self.feature_settings:
            if key in cfg and cfg[key] != self.cfg.get(key):
                raise config_error(
                    self.name, key,
                    f"[{self.name}] the model was trained with {key} = {cfg[key]!r} but "
                    f"the component is configured with {key} = {self.cfg.get(key)!r}; "
                    "features would not match the weights. Load it with the setting "
                    "it was trained with."
                )

    @property
    def component_type(self) -> str:
        """What the weights file's header names: the class that wrote it."""
        return type(self).__name__

    def _sealed_weights(self) -> bytes:
        return seal(self.component_type, self.labels, self._feature_values(self.cfg),
                    self.averaged_weights.to_bytes())

    def _feature_values(self, cfg: Dict[str, Any]) -> Dict[str, Any]:
        """The feature settings the weights' checksum covers: those the cfg
        has (a model saved before a setting existed was sealed without it)."""
        return {key: cfg[key] for key in self.feature_settings if key in cfg}

    def _load(self, cfg: Dict[str, Any], sealed: Sealed,
              source: str = "the weights") -> None:
        """Load the sealed weights: bytes, the file that holds them, or a
        function that hands them over (from_bytes: its message keeps no
        reference). The file is read, or the bytes taken, here so that each
        copy of the weights' bytes (the file's, the unsealed, the unpacked
        fields) is freed once the next is made. A model's peak memory while
        loading is then its table and the fields, not three copies beside
        the table."""
        if not isinstance(cfg, dict) or not isinstance(cfg.get("labels"), list):
            raise ValueError(f"[{self.name}] corrupt cfg: no label list")
        self._check_settings(cfg)
        try:
            fields = unpack_fields(unseal(
                self.component_type, cfg["labels"], self._feature_values(cfg),
                sealed.read_bytes() if isinstance(sealed, Path)
                else sealed() if callable(sealed) else sealed, source))
        except ModelFileError as err:
            raise ModelFileError(f"[{self.name}] {err}") from err
        except ValueError as err:
            raise ModelFileError(f"[{self.name}] {source}: {err}") from err
        # Labels and feature settings come from the model; search settings
        # (depth, margin) from the config, so they can be changed at load time.
        before = dict(self.cfg)
        self._apply_model_cfg(cfg)
        # A saved model holds the weights to predict with (averaged, or
        # SAPO's own): frozen for fast prediction (update() trains on a
        # thawed copy), made so at once (no training table built and freed).
        try:  # (the class ids checked against the model's own classes)
            weights = Weights().from_fields(fields, n_classes=self.weight_classes() or 0,
                                            frozen=True)
        except ValueError as err:
            self.cfg.clear()
            self.cfg.update(before)
            self._label_ids = None
            self._on_load()
            raise ModelFileError(f"[{self.name}] {source}: {err}") from err
        self.weights = weights
        self._averaged = weights
        self._averaged_version = weights.version
        self._add_strings(self.vocab)
        self._on_load()

    def _apply_model_cfg(self, cfg: Dict[str, Any]) -> None:
        self.cfg["labels"] = list(cfg["labels"])
        self.cfg.update({key: cfg[key] for key in self.model_settings if key in cfg})
        self.cfg.update({key: value for key, value in self.model_settings_before.items()
                         if key not in cfg})
        self.cfg.pop("input_tags", None)
        if isinstance(cfg.get("input_tags"), list):
            self.cfg["input_tags"] = list(cfg["input_tags"])
        self._label_ids = None
        self._on_load()

    def weight_classes(self) -> Optional[int]:
        """How many classes the weights score (their class ids are below
        it); None: not known here, unchecked."""
        return None

    def output_strings(self) -> List[str]:
        """Every string the component writes to docs (labels, ROOT ...)."""
        return list(self.labels)

    def _add_strings(self, vocab: Vocab) -> None:
        """Put the strings the component writes into a vocab, so that they
        travel with the component into any pipeline it is added to."""
        for string in self.output_strings():
            vocab.strings.add(string)

    def _on_load(self) -> None:
        pass

    def keep_lexicon(self, tables: Iterable[str]) -> None:
        """Copy these tables of the vocab's lookups into the component."""
        self.lexicon = Lookups()
        for name in tables:
            if self.vocab.lookups.has_table(name):
                self.lexicon.set_table(name, self.vocab.lookups.get_table(name))

    def install_lexicon(self, vocab: Vocab, share: bool = False) -> None:
        """Put the component's tables into a vocab that has none of that
        name (spaCy's `source` copies no lookups tables). `share` (on
        loading: a pipeline loaded from disk has both): where the vocab's
        table has the same words and values, keep one of them in memory.
        The component reads its own tables either way (_own_tables): a
        vocab's table of that name may be another one, e.g. another
        component's, with more words."""
        for name in self.lexicon.tables:
            own = self.lexicon.get_table(name)
            if not vocab.lookups.has_table(name):
                vocab.lookups.set_table(name, own)
            elif share:
                theirs = vocab.lookups.get_table(name)
                # (dict's own comparison of the stored entries: dict(table)
                # goes through Table.__getitem__, 0.45 s for two tables of
                # 322k words against 0.02 s)
                if theirs is not own and len(theirs) == len(own) and dict.__eq__(theirs, own):
                    self.lexicon.set_table(name, theirs)

    def _read_lexicon(self, data: Optional[bytes]) -> None:
        """The component's tables from Lookups.to_bytes() data (None:
        none), as Lookups.from_bytes reads them, except that a table whose
        entries are the vocab's table of that name (a pipeline loaded from
        disk has both) is the vocab's, not built again: a Table adds its
        words one by one (0.76 s of a parser's load, for a table
        install_lexicon then found equal and dropped)."""
        self.lexicon = Lookups()
        if data is None:
            return
        lookups = self.vocab.lookups
        for name, entries in srsly.msgpack_loads(data).items():
            theirs = lookups.get_table(name) if lookups.has_table(name) else None
            if theirs is not None and len(theirs) == len(entries) and dict.__eq__(theirs, entries):
                self.lexicon.set_table(name, theirs)
            else:
                self.lexicon.set_table(name, Table(name, entries))

    def _own_tables(self) -> tuple:
        """The (cluster, probability) tables the component was trained with
        (None where it has none: the vocab's are read), for
        LexemeAtoms.docs_inputs."""
        lexicon = self.lexicon
        return tuple(lexicon.get_table(name) if lexicon.has_table(name) else None
                     for name in (CLUSTER_TABLE, PROB_TABLE))

    def to_bytes(self, *, exclude: Iterable[str] = tuple()) -> bytes:
        serialize = {
            "cfg": lambda: srsly.json_dumps(self.cfg),
            "weights": self._sealed_weights,
        }
        if self.lexicon.tables:
            serialize["lexicon"] = self.lexicon.to_bytes
        if "vocab" not in exclude:
            serialize["vocab"] = lambda: self.vocab.to_bytes(exclude=exclude)
        return util.to_bytes(serialize, exclude)

    def from_bytes(self, bytes_data: bytes, *, exclude: Iterable[str] = tuple()) -> "SearchPipe":
        try:
            msg = srsly.msgpack_loads(bytes_data)
            cfg = srsly.json_loads(msg["cfg"])
            if "weights" not in msg:
                raise KeyError("weights")
        except Exception as err:
            raise ValueError(f"[{self.name}] corrupt component bytes ({err}). "
                             "Serialise the component again with to_bytes().") from err
        if "vocab" in msg and "vocab" not in exclude:
            self.vocab.from_bytes(msg["vocab"], exclude=exclude)
        self._read_lexicon(msg.get("lexicon"))
        # (handed over, not kept here: a copy of the weights fewer at the peak)
        self._load(cfg, lambda: msg.pop("weights"), "the component's weights bytes")
        self.install_lexicon(self.vocab, share=True)
        return self

    def to_disk(self, path, *, exclude: Iterable[str] = tuple()) -> None:
        path = util.ensure_path(path)
        serialize = {
            "cfg": lambda p: srsly.write_json(p, self.cfg),
            "weights": lambda p: p.write_bytes(self._sealed_weights()),
        }
        if self.lexicon.tables:
            serialize["lexicon"] = lambda p: p.write_bytes(self.lexicon.to_bytes())
        if "vocab" not in exclude:
            serialize["vocab"] = lambda p: self.vocab.to_disk(p, exclude=exclude)
        util.to_disk(path, serialize, exclude)

    def from_disk(self, path, *, exclude: Iterable[str] = tuple()) -> "SearchPipe":
        path = util.ensure_path(path)
        for part in ("cfg", "weights"):
            if not (path / part).exists():
                raise ValueError(f"[{self.name}] model directory {path} has no '{part}' file: "
                                 "it is incomplete. Save the pipeline again or re-train it.")
        try:
            cfg = srsly.read_json(path / "cfg")
        except Exception as err:
            raise ValueError(f"[{self.name}] corrupt file {path / 'cfg'} ({err}). "
                             "Save the pipeline again or re-train it.") from err
        if (path / "vocab").exists() and "vocab" not in exclude:
            self.vocab.from_disk(path / "vocab", exclude=exclude)
        self.lexicon = Lookups()
        if (path / "lexicon").exists():
            try:
                self._read_lexicon((path / "lexicon").read_bytes())
            except Exception as err:
                raise ValueError(f"[{self.name}] corrupt file {path / 'lexicon'} ({err}). "
                                 "Save the pipeline again or re-train it.") from err
        self._load(cfg, path / "weights", f"weights file {path / 'weights'}")
        self.install_lexicon(self.vocab, share=True)
        return self

    def __reduce__(self):
        state = {"vocab": self.vocab, "name": self.name, "scorer": self.scorer,
                 "cfg": self.cfg, "bytes": self.to_bytes(exclude=["vocab"])}
        return (_rebuild_pipe, (type(self), state))


def _has_words(doc: Doc) -> bool:
    """Whether the doc has a token that is not whitespace (a doc of
    whitespace only needs no input annotation: the models never see it)."""
    return bool(len(doc)) and not doc.to_array(IS_SPACE).all()


def _rebuild_pipe(cls, state: Dict[str, Any]) -> SearchPipe:
    # what was learnt comes back with the bytes
    settings = {k: v for k, v in state["cfg"].items() if k not in ("labels", "input_tags")}
    pipe = cls(state["vocab"], state["name"], scorer=state["scorer"], **settings)
    return pipe.from_bytes(state["bytes"], exclude=["vocab"])
