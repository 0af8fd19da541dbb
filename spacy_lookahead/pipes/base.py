"""What every search-based component shares: the weight table, averaged
weights for prediction, serialisation and the spaCy plumbing."""
import threading
import time
from typing import Any, Callable, Dict, Iterable, List, Optional

import numpy

import srsly
from spacy import util
from spacy.errors import Errors
from spacy.pipeline import TrainablePipe
from spacy.tokens import Doc, Span
from spacy.training import Example, validate_examples
from spacy.vocab import Vocab
from thinc.api import Model

from ..core.features import A_CHUNK_COLUMN as A_CHUNK, A_TAG_COLUMN as A_TAG
from ..core.weights import Weights


def placeholder_model(name: str) -> Model:
    """spaCy's training loop expects a thinc Model on every trainable pipe;
    ours holds no thinc parameters (the weights live in the Cython core)."""
    return Model(name, lambda model, X, is_train: (X, lambda dY: dY))


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

    def __init__(self, vocab: Vocab, name: str, *, scorer: Optional[Callable], **settings: Any) -> None:
        self.vocab = vocab
        self.name = name
        self.model = placeholder_model(name)
        self.scorer = scorer
        self.cfg: Dict[str, Any] = {"labels": [], **settings}
        self.weights = Weights()
        self._averaged: Optional[Weights] = None
        self._averaged_version = -1
        self._lock = threading.Lock()
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
        start = time.perf_counter()
        losses[self.name] += self.learn(examples)
        self._update_seconds += time.perf_counter() - start
        return losses

    def learn(self, examples: List[Example]) -> float:
        """The learner's pass over the examples; returns the loss."""
        raise NotImplementedError

    def get_loss(self, examples, scores):
        raise NotImplementedError(f"[{self.name}] the loss is computed by the learner and "
                                  "reported by update()")

    def score(self, examples: Iterable[Example], **kwargs) -> Dict[str, Any]:
        """The scorer's figures plus the mean |w| of the training weights (Sun
        et al.'s w-complexity curve) and the time spent in update(), so that
        training logs show both."""
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

    # --- inputs --------------------------------------------------------------
    def _tag_column(self, doc: Doc, atoms: numpy.ndarray, example: Optional[Example],
                    what: str) -> None:
        """POS tags as an input feature: from the doc, else (training only)
        from the aligned gold doc; missing at prediction time is an error."""
        if doc.has_annotation("TAG"):
            atoms[:, A_TAG] = doc.to_array("TAG")
        elif example is not None and example.reference.has_annotation("TAG"):
            atoms[:, A_TAG] = [t or 0 for t in example.get_aligned("TAG")]
        elif len(doc):
            raise ValueError(
                f"[{self.name}] needs POS tags (token.tag_) on its input docs for {what}, "
                "and this doc has none. Put a tagger (e.g. lookahead_tagger) before it "
                "in the pipeline, or give it docs with tags."
                + ("" if example is None else " The gold doc has no tags either."))

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
        elif len(doc):
            raise ValueError(
                f"[{self.name}] needs chunks in doc.spans[{key!r}] on its input docs, and this "
                f"doc has none. {fix}"
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
                raise ValueError(
                    f"[{self.name}] the model was trained with {key} = {cfg[key]!r} but "
                    f"the component is configured with {key} = {self.cfg.get(key)!r}; "
                    "features would not match the weights. Load it with the setting "
                    "it was trained with."
                )

    def _load(self, cfg: Dict[str, Any], weights_bytes: bytes) -> None:
        if not isinstance(cfg, dict) or not isinstance(cfg.get("labels"), list):
            raise ValueError(f"[{self.name}] corrupt cfg: no label list")
        self._check_settings(cfg)
        try:
            weights = Weights().from_bytes(weights_bytes)
        except ValueError as err:
            raise ValueError(f"[{self.name}] {err}") from err
        # Labels and feature settings come from the model; search settings
        # (depth, margin) from the config, so they can be changed at load time.
        self.cfg["labels"] = list(cfg["labels"])
        self.cfg.update({key: cfg[key] for key in self.model_settings if key in cfg})
        self._label_ids = None
        # A saved model holds averaged weights: they are already final.
        self.weights = weights
        self._averaged = weights
        self._averaged_version = weights.version
        self._on_load()

    def _on_load(self) -> None:
        pass

    def to_bytes(self, *, exclude: Iterable[str] = tuple()) -> bytes:
        serialize = {
            "cfg": lambda: srsly.json_dumps(self.cfg),
            "weights": lambda: self.averaged_weights.to_bytes(),
        }
        if "vocab" not in exclude:
            serialize["vocab"] = lambda: self.vocab.to_bytes(exclude=exclude)
        return util.to_bytes(serialize, exclude)

    def from_bytes(self, bytes_data: bytes, *, exclude: Iterable[str] = tuple()) -> "SearchPipe":
        try:
            msg = srsly.msgpack_loads(bytes_data)
            cfg = srsly.json_loads(msg["cfg"])
            weights_bytes = msg["weights"]
        except Exception as err:
            raise ValueError(f"[{self.name}] corrupt component bytes ({err}). "
                             "Serialise the component again with to_bytes().") from err
        if "vocab" in msg and "vocab" not in exclude:
            self.vocab.from_bytes(msg["vocab"], exclude=exclude)
        self._load(cfg, weights_bytes)
        return self

    def to_disk(self, path, *, exclude: Iterable[str] = tuple()) -> None:
        path = util.ensure_path(path)
        serialize = {
            "cfg": lambda p: srsly.write_json(p, self.cfg),
            "weights": lambda p: p.write_bytes(self.averaged_weights.to_bytes()),
        }
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
        try:
            self._load(cfg, (path / "weights").read_bytes())
        except ValueError as err:
            raise ValueError(f"{err} (file: {path / 'weights'})") from err
        return self

    def __reduce__(self):
        state = {"vocab": self.vocab, "name": self.name, "scorer": self.scorer,
                 "cfg": self.cfg, "bytes": self.to_bytes(exclude=["vocab"])}
        return (_rebuild_pipe, (type(self), state))


def _rebuild_pipe(cls, state: Dict[str, Any]) -> SearchPipe:
    settings = {k: v for k, v in state["cfg"].items() if k != "labels"}
    pipe = cls(state["vocab"], state["name"], scorer=state["scorer"], **settings)
    return pipe.from_bytes(state["bytes"], exclude=["vocab"])
