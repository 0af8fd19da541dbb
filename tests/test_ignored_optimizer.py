"""Dropout and the optimizer from training do nothing to these components
(they learn in update()); `spacy init fill-config` adds both, so with
dropout a component says once that they are ignored and how to write that in
the config; nlp.update(examples) in Python (no dropout, spaCy's implicit
optimizer) says nothing."""
import warnings

import pytest
import spacy
from spacy.training import Example
from thinc.api import Adam

from spacy_lookahead.optimizer import no_optimizer


def updates(optimizer, drop):
    nlp = spacy.blank("en")
    nlp.add_pipe("lookahead_tagger")
    nlp.add_pipe("lookahead_ner")
    examples = [Example.from_dict(nlp.make_doc("Ada wrote"), {"tags": ["NNP", "VBD"],
                                                              "entities": ["U-PER", "O"]})]
    nlp.initialize(lambda: examples)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(3):
            nlp.update(examples, sgd=optimizer, drop=drop)
    return [str(w.message) for w in caught if "learns in update()" in str(w.message)]


@pytest.mark.parametrize("optimizer", [Adam(0.001), no_optimizer()])
def test_dropout_and_the_optimizer_are_explained_once_per_component(optimizer):
    messages = updates(optimizer, 0.1)
    assert [m.split("]")[0] for m in messages] == ["[lookahead_tagger", "[lookahead_ner"]
    assert all("dropout (0.1)" in m and "[training.optimizer]" in m and "dropout = 0.0" in m
               and "spacy_lookahead.no_optimizer.v1" in m for m in messages)


@pytest.mark.parametrize("optimizer", [Adam(0.001), None, no_optimizer()])
def test_no_dropout_says_nothing(optimizer):
    """The configs' own setting, and the Python pattern of the README."""
    assert updates(optimizer, 0.0) == []
