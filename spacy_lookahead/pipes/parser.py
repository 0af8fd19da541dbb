"""`arc_standard_parser`: labelled arc-standard dependency parsing (Nivre
2004) with greedy search, depth-D lookahead and the margin perceptron
(Tsuruoka et al. 2011, Section 4.2), or beam search with the
violation-fixing updates (Huang et al. 2012). Non-projective training trees
are lifted with label decoration and restored on output (spaCy's nonproj)."""
from collections import Counter
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple

import numpy
from spacy.language import Language
from spacy.pipeline._parser_internals import nonproj
from spacy.tokens import Doc
from spacy.training import Example, validate_examples
from spacy.vocab import Vocab

from ..core.features import LexemeAtoms
from ..core.violation import METHODS
from ..core.weights import Weights
from ..systems.arc_standard import ArcStandardSystem
from .base import SearchPipe

SEARCHES = ("greedy", "lookahead", "beam")
UPDATES = tuple(METHODS)


def validate_parser_settings(name: str, search: Any, depth: Any, margin: Any, beam_width: Any,
                             update: Any, min_label_freq: Any) -> None:
    """Raise on wrong config values, naming the setting and what it accepts."""
    def is_int(v: Any) -> bool:
        return isinstance(v, int) and not isinstance(v, bool)

    if search not in SEARCHES:
        raise ValueError(f"[{name}] search must be one of {SEARCHES}, got {search!r}")
    if not is_int(depth) or not 0 <= depth <= 3:
        raise ValueError(f"[{name}] depth must be an integer 0-3 (the lookahead depth D; "
                         f"it costs O(actions^(D+1)) per step), got {depth!r}")
    if not isinstance(margin, (int, float)) or isinstance(margin, bool) or margin < 0:
        raise ValueError(f"[{name}] margin must be a number >= 0, got {margin!r}")
    if not is_int(beam_width) or beam_width < 1:
        raise ValueError(f"[{name}] beam_width must be an integer >= 1, got {beam_width!r}")
    if update not in UPDATES:
        raise ValueError(f"[{name}] update must be one of {UPDATES}, got {update!r}")
    if not is_int(min_label_freq) or min_label_freq < 1:
        raise ValueError(f"[{name}] min_label_freq must be an integer >= 1, got {min_label_freq!r}")


@Language.factory(
    "arc_standard_parser",
    assigns=["token.head", "token.dep", "token.is_sent_start", "doc.sents"],
    requires=["token.tag"],
    default_config={
        "search": "lookahead",
        "depth": 1,
        "margin": 1.0,
        "beam_width": 8,
        "update": "max_violation",
        "respect_sent_starts": False,
        "min_label_freq": 20,
        "scorer": {"@scorers": "spacy.parser_scorer.v1"},
    },
    default_score_weights={"dep_uas": 0.5, "dep_las": 0.5, "dep_las_per_type": None,
                           "sents_p": None, "sents_r": None, "sents_f": 0.0},
)
def make_arc_standard_parser(nlp: Language, name: str, search: str, depth: int, margin: float,
                             beam_width: int, update: str, respect_sent_starts: bool,
                             min_label_freq: int, scorer: Optional[Callable]) -> "ArcStandardParser":
    """Create an arc-standard parser.

    search: "greedy" (depth 0), "lookahead" (depth D, margin C; Figures 2-3 of
        Tsuruoka et al. 2011) or "beam" (beam_width k, violation-fixing
        `update`: standard, early, max_violation, hybrid or latest).
    respect_sent_starts: keep the docs' existing sentence boundaries (arcs
        stay inside them, one root each) instead of predicting them.
    min_label_freq: decorated (lifted) labels rarer than this in the training
        data are replaced by their plain label.
    """
    return ArcStandardParser(nlp.vocab, name, search=search, depth=depth, margin=margin,
                             beam_width=beam_width, update=update,
                             respect_sent_starts=respect_sent_starts,
                             min_label_freq=min_label_freq, scorer=scorer)


class ArcStandardParser(SearchPipe):
    """Predicts `token.head`, `token.dep_` and the sentence boundaries. The
    POS tags (`token.tag_`) are an input: from a tagger earlier in the
    pipeline; while training, from the gold docs if the docs have none."""

    def __init__(self, vocab: Vocab, name: str = "arc_standard_parser", *, search: str = "lookahead",
                 depth: int = 1, margin: float = 1.0, beam_width: int = 8,
                 update: str = "max_violation", respect_sent_starts: bool = False,
                 min_label_freq: int = 20, scorer: Optional[Callable] = None,
                 root_label: str = "ROOT") -> None:
        validate_parser_settings(name, search, depth, margin, beam_width, update, min_label_freq)
        super().__init__(vocab, name, scorer=scorer, search=search, depth=depth,
                         margin=float(margin), beam_width=beam_width, update=update,
                         respect_sent_starts=bool(respect_sent_starts),
                         min_label_freq=min_label_freq, root_label=root_label)
        self._atoms = LexemeAtoms()
        self._system: Optional[ArcStandardSystem] = None
        # Beam training: how many updates, and how many were not violations
        # (only possible for the standard update; Huang et al. Figure 5).
        self.update_stats = {"updates": 0, "invalid": 0, "docs": 0, "skipped": 0}

    @property
    def system(self) -> ArcStandardSystem:
        if self._system is None or self._system.n_labels != len(self.labels):
            self._require_labels()
            self._system = ArcStandardSystem(len(self.labels))
        return self._system

    def _load(self, cfg: Dict[str, Any], weights_bytes: bytes) -> None:
        super()._load(cfg, weights_bytes)
        # learnt from the data, like the labels
        self.cfg["root_label"] = cfg.get("root_label", "ROOT")

    def _on_load(self) -> None:
        self._system = None

    # --- labels and gold ---------------------------------------------------------
    def initialize(self, get_examples: Callable[[], Iterable[Example]], *,
                   nlp: Optional[Language] = None, labels: Optional[List[str]] = None) -> None:
        """Collect the arc labels (after projectivisation, with decorated
        labels of lifted arcs) and the root label from the training data."""
        validate_examples(get_examples(), "ArcStandardParser.initialize")
        self.cfg["labels"] = []
        self._label_ids = None
        self._system = None
        self.weights = Weights()
        counts: Counter = Counter()
        roots: Counter = Counter()
        for eg in get_examples():
            heads, deps = self._projective(eg.reference)
            for i, (h, d) in enumerate(zip(heads, deps)):
                if not d or h is None:
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

    @staticmethod
    def _projective(doc: Doc) -> Tuple[list, list]:
        if not doc.has_annotation("DEP"):
            return [None] * len(doc), [""] * len(doc)
        heads = [t.head.i for t in doc]
        deps = [t.dep_ for t in doc]
        return nonproj.projectivize(heads, deps)

    def gold(self, example: Example) -> Tuple[numpy.ndarray, numpy.ndarray]:
        """Projectivised gold (heads, label ids) on the predicted tokens: head
        = i for a root, -1 where unknown; label -1 for roots and unknown."""
        n = len(example.predicted)
        if not example.reference.has_annotation("DEP"):
            return numpy.full((n,), -1, dtype="int32"), numpy.full((n,), -1, dtype="int32")
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
        return h, labels

    # --- inputs --------------------------------------------------------------
    def _inputs(self, docs: List[Doc], examples: Optional[List[Example]] = None) -> list:
        inputs = []
        for k, doc in enumerate(docs):
            atoms = self._atoms.doc_atoms(doc)
            self._tag_column(doc, atoms, examples[k] if examples else None, "parsing")
            item: Dict[str, Any] = {"atoms": atoms}
            if self.cfg["respect_sent_starts"] and doc.has_annotation("SENT_START") and len(doc):
                starts = doc.to_array("SENT_START") == 1
                starts[0] = True
                item["sent_ids"] = numpy.cumsum(starts).astype("int32")
            inputs.append(item)
        return inputs

    # --- prediction ----------------------------------------------------------
    def _search_args(self) -> dict:
        search = self.cfg["search"]
        return {"search": search, "depth": self.cfg["depth"] if search == "lookahead" else 0,
                "beam_width": self.cfg["beam_width"]}

    def predict(self, docs: Iterable[Doc]) -> List[Tuple[numpy.ndarray, numpy.ndarray]]:
        docs = list(docs)
        self._require_labels()
        return self.system.predict(self._inputs(docs), self.averaged_weights, **self._search_args())

    def set_annotations(self, docs: Iterable[Doc], trees) -> None:
        strings = self.vocab.strings
        label_hashes = numpy.asarray([strings.add(label) for label in self.labels]
                                     + [strings.add(self.cfg["root_label"])], dtype="uint64")
        for doc, (heads, labels) in zip(docs, trees):
            n = len(doc)
            if not n:
                continue
            arr = numpy.zeros((n, 2), dtype="uint64")
            arr[:, 0] = (heads - numpy.arange(n, dtype="int32")).astype("int64").view("uint64")
            arr[:, 1] = label_hashes[labels]  # -1: the root label, last
            doc.from_array(["HEAD", "DEP"], arr)
            nonproj.deprojectivize(doc)

    # --- training ------------------------------------------------------------
    def update(self, examples: Iterable[Example], *, drop: float = 0.0, sgd=None,
               losses: Optional[dict] = None) -> dict:
        """One pass over the examples: the margin perceptron along the oracle
        path (greedy/lookahead; loss = mistakes), or beam search with the
        violation-fixing update (loss = updates)."""
        if losses is None:
            losses = {}
        losses.setdefault(self.name, 0.0)
        examples = list(examples)
        validate_examples(examples, "ArcStandardParser.update")
        self._require_labels()
        golds = [self.gold(eg) for eg in examples]
        inputs = self._inputs([eg.predicted for eg in examples], examples)
        if self.cfg["search"] == "beam":
            stats = self.system.train_beam(inputs, golds, self.weights, self.cfg["beam_width"],
                                           self.cfg["update"])
            for key, value in stats.items():
                self.update_stats[key] += value
            losses[self.name] += stats["updates"]
        else:
            mistakes, _ = self.system.train(inputs, golds, self.weights, self._search_args()["depth"],
                                            self.cfg["margin"])
            losses[self.name] += mistakes
        return losses

    def get_loss(self, examples, scores):
        raise NotImplementedError(f"[{self.name}] the loss is the number of perceptron "
                                  "mistakes or beam updates, reported by update()")
