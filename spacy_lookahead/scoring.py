"""Scorers registered in spaCy's registry (exposed through the
`spacy_scorers` entry point)."""
from typing import Any, Callable, Dict, Iterable

from spacy.scorer import Scorer
from spacy.training import Example


def score_tagging(examples: Iterable[Example], *, target: str = "tag", **kwargs: Any) -> Dict[str, Any]:
    """Token accuracy of the tagger's target attribute: `tag_acc` or `pos_acc`."""
    return Scorer.score_token_attr(examples, target, **kwargs)


def make_tagger_scorer() -> Callable[..., Dict[str, Any]]:
    return score_tagging
