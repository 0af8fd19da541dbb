"""Scorers registered in spaCy's registry (exposed through the
`spacy_scorers` entry point), all under spaCy's own score keys so that
`spacy train`'s table, `spacy evaluate` and `[training.score_weights]` see
them: `tag_acc`, `ents_p/r/f`, `spans_<key>_p/r/f` (and `_per_type`),
`dep_uas`/`dep_las` (spaCy's `spacy.parser_scorer.v1`, used as is)."""
from typing import Any, Callable, Dict, Iterable

from spacy.pipeline.spancat import spancat_score
from spacy.scorer import Scorer
from spacy.training import Example
from spacy.util import registry


def score_tagging(examples: Iterable[Example], *, target: str = "tag", **kwargs: Any) -> Dict[str, Any]:
    """Token accuracy of the tagger's target attribute: `tag_acc` or `pos_acc`."""
    return Scorer.score_token_attr(examples, target, **kwargs)


def make_tagger_scorer() -> Callable[..., Dict[str, Any]]:
    return score_tagging


def score_chunks(examples: Iterable[Example], *, spans_key: str = "chunks", **kwargs: Any) -> Dict[str, Any]:
    """spaCy's span-group scorer (spancat's): exact-match, micro-averaged
    P/R/F1 of `doc.spans[spans_key]` as `spans_<key>_p/r/f` and
    `spans_<key>_per_type` -- conlleval's chunk counts (tests/test_span_scoring.py).
    Reference docs without the span group are skipped."""
    return spancat_score(examples, spans_key=spans_key, **kwargs)


@registry.scorers("spacy_lookahead.chunk_scorer.v1")
def make_chunk_scorer() -> Callable[..., Dict[str, Any]]:
    return score_chunks


def score_entities(examples: Iterable[Example], **kwargs: Any) -> Dict[str, Any]:
    """Exact-match, micro-averaged P/R/F1 of `doc.ents`: `ents_p/r/f`, `ents_per_type`."""
    kwargs.pop("spans_key", None)  # doc.ents has no key
    kwargs.setdefault("has_annotation", lambda doc: doc.has_annotation("ENT_IOB"))
    return Scorer.score_spans(examples, "ents", **kwargs)


@registry.scorers("spacy_lookahead.entity_scorer.v1")
def make_entity_scorer() -> Callable[..., Dict[str, Any]]:
    return score_entities


def score_clauses(examples: Iterable[Example], *, spans_key: str = "clauses", **kwargs: Any) -> Dict[str, Any]:
    """The same span scorer over the nested clauses (overlaps allowed), as
    the CoNLL-2001 evaluation: `spans_clauses_p/r/f`, `spans_clauses_per_type`."""
    return spancat_score(examples, spans_key=spans_key, **kwargs)


@registry.scorers("spacy_lookahead.clause_scorer.v1")
def make_clause_scorer() -> Callable[..., Dict[str, Any]]:
    return score_clauses
