"""A new learner is one registered function (issue 36): a plain perceptron
(Rosenblatt's update along the greedy path, no margin, no averaging),
defined here and nowhere else, trains a spaCy tagger through `@learners`,
predicts with its own weights, saves and loads."""
from dataclasses import dataclass
from typing import ClassVar, Tuple

import spacy

from spacy_lookahead.core import learners as engine
from spacy_lookahead.pipes.learners import Learner
from spacy_lookahead.pipes.search import Greedy, Lookahead
from spacy_lookahead.registry import learners

from ewt import ewt_examples
from span_data import train


@dataclass(frozen=True)
class PlainPerceptron(Learner):
    registered: ClassVar[str] = "test.PlainPerceptron.v1"
    kind: ClassVar[str] = "plain_perceptron"
    searches: ClassVar[Tuple[type, ...]] = (Greedy, Lookahead)

    @property
    def averages(self) -> bool:
        return False

    def learn(self, pipe, instances) -> float:
        mistakes, _ = engine.margin_perceptron(instances, pipe.weights, pipe.search.depth, 0.0)
        return mistakes


@learners(PlainPerceptron.registered)
def plain_perceptron() -> PlainPerceptron:
    return PlainPerceptron()


def test_a_toy_learner_trains_predicts_and_round_trips(tmp_path):
    nlp = spacy.blank("en")
    tagger = nlp.add_pipe("lookahead_tagger", config={
        "search": {"@search": "spacy_lookahead.Greedy.v1"},
        "learner": {"@learners": PlainPerceptron.registered}})
    examples = ewt_examples(nlp.vocab, "train", 200)
    train(nlp, examples, 2)
    assert isinstance(tagger.learner, PlainPerceptron)
    assert tagger.averaged_weights is tagger.weights  # no averaging: its own weights predict
    assert nlp.evaluate(ewt_examples(nlp.vocab, "dev", 100))["tag_acc"] > 0.6
    nlp.to_disk(tmp_path / "m")
    loaded = spacy.load(tmp_path / "m")
    assert loaded.get_pipe("lookahead_tagger").cfg["learner"] == {
        "@learners": PlainPerceptron.registered}
    doc = nlp.make_doc("The old man the boats .")
    assert [t.tag_ for t in loaded(doc.copy())] == [t.tag_ for t in nlp(doc.copy())]
