"""Scorers registered in spaCy's registry (exposed through the
`spacy_scorers` entry point)."""
from typing import Any, Callable, Dict, Iterable

from spacy.scorer import Scorer
from spacy.training import Example
from spacy.util import registry


def score_tagging(examples: Iterable[Example], *, target: str = "tag", **kwargs: Any) -> Dict[str, Any]:
    """Token accuracy of the tagger's target attribute: `tag_acc` or `pos_acc`."""
    return Scorer.score_token_attr(examples, target, **kwargs)


def make_tagger_scorer() -> Callable[..., Dict[str, Any]]:
    return score_tagging


def score_chunks(examples: Iterable[Example], *, spans_key: str = "chunks", **kwargs: Any) -> Dict[str, Any]:
    """Exact-match, micro-averaged P/R/F1 of the spans in `doc.spans[spans_key]`
    (conlleval's chunk scores) as `chunks_p/r/f` and `chunks_per_type`.
    Reference docs without the span group are skipped, as spancat's scorer does."""
    kwargs.setdefault("getter", lambda doc, key: doc.spans.get(key, []))
    kwargs.setdefault("has_annotation", lambda doc: spans_key in doc.spans)
    kwargs.setdefault("allow_overlap", True)
    scores = Scorer.score_spans(examples, spans_key, **kwargs)
    return {"chunks" + key[len(spans_key):]: value for key, value in scores.items()}


@registry.scorers("spacy_lookahead.chunk_scorer.v1")
def make_chunk_scorer() -> Callable[..., Dict[str, Any]]:
    return score_chunks


def score_entities(examples: Iterable[Example], **kwargs: Any) -> Dict[str, Any]:
    """Exact-match, micro-averaged P/R/F1 of `doc.ents`: `ents_p/r/f`, `ents_per_type`."""
    kwargs.setdefault("has_annotation", lambda doc: doc.has_annotation("ENT_IOB"))
    return Scorer.score_spans(examples, "ents", **kwargs)


@registry.scorers("spacy_lookahead.entity_scorer.v1")
def make_entity_scorer() -> Callable[..., Dict[str, Any]]:
    return score_entities


def score_clauses(examples: Iterable[Example], *, spans_key: str = "clauses", **kwargs: Any) -> Dict[str, Any]:
    """Exact-match P/R/F1 of the (nested) clause spans in `doc.spans[spans_key]`,
    as the CoNLL-2001 evaluation: `clauses_p/r/f` (and `clauses_per_type`)."""
    kwargs.setdefault("getter", lambda doc, key: doc.spans.get(key, []))
    kwargs.setdefault("has_annotation", lambda doc: spans_key in doc.spans)
    kwargs.setdefault("allow_overlap", True)
    scores = Scorer.score_spans(examples, spans_key, **kwargs)
    return {"clauses" + key[len(spans_key):]: value for key, value in scores.items()}


@registry.scorers("spacy_lookahead.clause_scorer.v1")
def make_clause_scorer() -> Callable[..., Dict[str, Any]]:
    return score_clauses
