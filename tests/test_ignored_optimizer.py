"""An optimizer or dropout from training does nothing to these components
(they learn in update()); `spacy init fill-config` adds both, so a component
says once that they are ignored and how to write that in the config."""
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


@pytest.mark.parametrize("optimizer,drop,given", [
    (Adam(0.001), 0.0, "an optimizer with learn rate 0.001"),
    (no_optimizer(), 0.1, "dropout 0.1"),
])
def test_an_ignored_optimizer_or_dropout_is_explained_once_per_component(optimizer, drop, given):
    messages = updates(optimizer, drop)
    assert [m.split("]")[0] for m in messages] == ["[lookahead_tagger", "[lookahead_ner"]
    assert all(given in m and "spacy_lookahead.no_optimizer.v1" in m and "dropout = 0.0" in m
               for m in messages)


def test_the_configs_setting_says_nothing():
    assert updates(no_optimizer(), 0.0) == []
