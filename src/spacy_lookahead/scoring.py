"""Scorers registered in spaCy's registry (exposed through the
`spacy_scorers` entry point), all under spaCy's own score keys so that
`spacy train`'s table, `spacy evaluate` and `[training.score_weights]` see
them: `tag_acc`, `ents_p/r/f`, `spans_<key>_p/r/f` (and `_per_type`; the
chunk scorer v2 also as `spans_sc_*`, the key `spacy evaluate` shows),
`dep_uas`/`dep_las` (spaCy's parser scorer), plus the parser benchmarks'
CoNLL-style `dep_uas_nopunct`/`dep_las_nopunct`."""
import functools
from typing import Any, Callable, Dict, Iterable, Optional

from spacy.pipeline.dep_parser import parser_score
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


def also_under(scores: Dict[str, Any], key: str, other: str) -> Dict[str, Any]:
    """The scores of span group `key` (spans_<key>_*) also as those of span
    group `other` (spans_<other>_*)."""
    prefix = f"spans_{key}_"
    scores.update({f"spans_{other}_{name[len(prefix):]}": value
                   for name, value in list(scores.items()) if name.startswith(prefix)})
    return scores


def score_chunks_also_as(examples: Iterable[Example], *, spans_key: str = "chunks",
                         also_as: Optional[str] = "sc", **kwargs: Any) -> Dict[str, Any]:
    """score_chunks, and the same scores again as `spans_<also_as>_*`."""
    scores = score_chunks(examples, spans_key=spans_key, **kwargs)
    return scores if not also_as or also_as == spans_key else also_under(scores, spans_key, also_as)


@registry.scorers("spacy_lookahead.chunk_scorer.v2")
def make_chunk_scorer_v2(also_as: Optional[str] = "sc") -> Callable[..., Dict[str, Any]]:
    """v1's chunk scores, `spans_<spans_key>_p/r/f` and `_per_type`, and the
    same again as `spans_<also_as>_*`: `spacy evaluate` shows the span
    scores of one key, "sc" (spancat's) unless given `--spans-key`, so with
    also_as = "sc" a pipeline's chunk scores appear in its table as SPAN
    P/R/F and its per-type table as SPANS, without flags (the installable
    en_lookahead_chunks). null: v1. (A partial, not a closure: the
    component pickles with its scorer.)"""
    return functools.partial(score_chunks_also_as, also_as=also_as)


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
    the CoNLL-2001 evaluation: `spans_clauses_p/r/f`, `spans_clauses_per_type`.
    The FR components' `score()` adds their filtering layer on the same
    examples (`spans_<key>_candidates`, `_candidates_recall`, `_f_bound`,
    `_start_p/_start_r/_end_p/_end_r`: spacy_lookahead/pipes/phrases.py)."""
    return spancat_score(examples, spans_key=spans_key, **kwargs)


@registry.scorers("spacy_lookahead.clause_scorer.v1")
def make_clause_scorer() -> Callable[..., Dict[str, Any]]:
    return score_clauses


# Punctuation by PTB tag, the CoNLL-X evaluation convention of the parser
# benchmarks (spaCy's scorer goes by the label: p/punct).
PUNCT_TAGS = frozenset({"``", "''", ",", ".", ":"})


def score_parse(examples: Iterable[Example], **kwargs: Any) -> Dict[str, Any]:
    """spaCy's parser scores, unchanged (`spacy.parser_scorer.v1`: `dep_uas`,
    `dep_las`, `dep_las_per_type` over the tokens not labelled p/punct;
    `sents_p/r/f`), plus two project-specific keys, the parser benchmarks'
    figures: `dep_uas_nopunct`, `dep_las_nopunct`, per-token attachment
    accuracy (labels compared case-insensitively) over the gold tokens that
    are neither labelled punct nor tagged as PTB punctuation (PUNCT_TAGS).
    Those two need the gold tokenisation on the predicted docs (a corpus
    with gold_preproc, or spacy_lookahead.keep_inputs.v1); they are left out
    when a predicted doc's words differ from the gold ones."""
    examples = list(examples)
    scores = parser_score(examples, **kwargs)
    n = heads = labelled = 0
    for eg in examples:
        pred, gold = eg.predicted, eg.reference
        if [t.text for t in pred] != [t.text for t in gold]:
            return scores
        for p, g in zip(pred, gold):
            if g.dep_ == "punct" or g.tag_ in PUNCT_TAGS:
                continue
            n += 1
            if p.head.i == g.head.i:
                heads += 1
                labelled += p.dep_.lower() == g.dep_.lower()
    if n:
        scores.update({"dep_uas_nopunct": heads / n, "dep_las_nopunct": labelled / n})
    return scores


@registry.scorers("spacy_lookahead.parser_scorer.v1")
def make_parser_scorer() -> Callable[..., Dict[str, Any]]:
    return score_parse
