"""Read the training corpus once: keep the examples spaCy's `init_nlp`
reads to initialize the pipeline, to cut the shards from them.

spaCy's corpus reader costs about 1 ms a doc (EWT train: about 10 s), and
`init_nlp` gives no access to what it read. So for the duration of
`init_nlp` the config's train corpus is wrapped in a reader that remembers
its first complete pass (`remembered_corpus`); the pipeline's config is
then given its own reader back, so the saved models' configs are the
user's. Without a complete pass (e.g. `max_epochs = -1`: spaCy initializes
from the first 100 examples only) the corpus is read again."""
import os
from contextlib import contextmanager
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Tuple

from spacy.language import Language
from spacy.training import Example
from spacy.util import registry

READER = "spacy_lookahead.remembered_corpus.v1"
# key -> the examples of a complete pass, until the caller takes them
_PASSES: Dict[str, List[Example]] = {}


class RememberedCorpus:
    """A train corpus that yields what `corpus` yields and keeps the first
    complete pass under `key`."""

    def __init__(self, corpus: Callable[[Language], Iterable[Example]], key: str) -> None:
        self.corpus, self.key = corpus, key

    def __call__(self, nlp: Language) -> Iterator[Example]:
        seen = []
        for eg in self.corpus(nlp):
            seen.append(eg)
            yield eg
        _PASSES.setdefault(self.key, seen)


@registry.readers(READER)
def remembered_corpus(corpus: Callable[[Language], Iterable[Example]], key: str) -> RememberedCorpus:
    return RememberedCorpus(corpus, key)


def _block(config: Dict[str, Any], dot_name: str) -> Tuple[Dict[str, Any], str]:
    """The section holding the block at `dot_name`, and the block's key in it."""
    *path, last = dot_name.split(".")
    for part in path:
        config = config[part]
    return config, last


@contextmanager
def remembering_train_corpus(config) -> Iterator[Callable[[Any], Optional[List[Example]]]]:
    """Wrap the raw (not interpolated) `config`'s train corpus for the block;
    yields `take(nlp)`: the examples of the first complete pass, if any, after
    giving `nlp.config` its own reader back."""
    dot_name = config.interpolate().get("training", {}).get("train_corpus", "corpora.train")
    try:
        parent, last = _block(config, dot_name)
        original = parent[last]
    except (KeyError, TypeError, AttributeError):  # no such block: init_nlp says so
        yield lambda nlp: None
        return
    key = os.urandom(8).hex()
    parent[last] = {"@readers": READER, "corpus": original, "key": key}

    def take(nlp: Language) -> Optional[List[Example]]:
        filled, name = _block(nlp.config, dot_name)
        if isinstance(filled[name], dict) and filled[name].get("@readers") == READER:
            filled[name] = filled[name]["corpus"]
        return _PASSES.pop(key, None)

    try:
        yield take
    finally:
        parent[last] = original
        _PASSES.pop(key, None)

