"""The shared search and learner settings on every transition-system
component: each combination trains and predicts through spaCy, the ones
that make no sense (or would silently ignore a setting) are clear errors."""
import pytest
import spacy
from spacy.training import Example

import spacy_lookahead.pipes.parser  # noqa: F401  (factories, when not pip-installed)
import spacy_lookahead.pipes.spans  # noqa: F401
import spacy_lookahead.pipes.tagger  # noqa: F401

from ewt import ewt_examples
from parse_data import parse_examples, words_only
from span_data import conll2000, jnlpba, train

COMBINATIONS = [
    {"search": "greedy"},
    {"search": "lookahead", "depth": 1},
    {"search": "beam", "beam_width": 4, "update": "early"},
    {"learner": "sapo"},
    {"learner": "sapo", "search": "beam", "beam_width": 4, "update": "max_violation"},
]


def data(factory, vocab, shared_data):
    if factory == "lookahead_tagger":
        return ewt_examples(vocab, "train", 60)
    if factory == "lookahead_chunker":
        return conll2000(shared_data, vocab, "train", 60)
    if factory == "lookahead_ner":
        return jnlpba(shared_data, vocab, "train", 60)
    return parse_examples(vocab, "ewt", "train", 60)


@pytest.mark.parametrize("factory", ["lookahead_tagger", "lookahead_chunker", "lookahead_ner",
                                     "arc_standard_parser", "arc_standard_parser:rich"])
@pytest.mark.parametrize("config", COMBINATIONS)
def test_every_search_and_learner_trains_and_predicts(factory, config, shared_data):
    factory, _, features = factory.partition(":")  # the parser's rich feature set too
    if features:
        config = {**config, "features": features}
    nlp = spacy.blank("en")
    pipe = nlp.add_pipe(factory, config=config)
    examples = data(factory, nlp.vocab, shared_data)
    train(nlp, examples, 2)
    evaluated = examples[:20]
    if factory == "arc_standard_parser":  # the parser reads POS tags
        evaluated = [Example(words_only(nlp.vocab, eg.reference, tags=True), eg.reference)
                     for eg in evaluated]
    scores = nlp.evaluate(evaluated)
    main = {"lookahead_tagger": "tag_acc", "lookahead_chunker": "spans_chunks_f",
            "lookahead_ner": "ents_f", "arc_standard_parser": "dep_las"}[factory]
    assert scores[main] > 0.3, scores  # it learnt its training data
    if config.get("search") == "beam" and config.get("learner") != "sapo":
        assert pipe.update_stats["docs"] == 2 * len(examples) and pipe.update_stats["updates"] > 0
    # inputs as a user gives them: text, or docs with the input annotations
    docs = [words_only(nlp.vocab, eg.reference, tags=factory != "lookahead_tagger")
            for eg in examples[:2]]
    if factory == "lookahead_ner":
        docs = [nlp.make_doc(eg.reference.text) for eg in examples[:2]]
    nbest = pipe.predict_nbest(docs[:1], n=3)[0]
    assert 1 <= len(nbest) <= 3 and sum(p for _, p in nbest) == pytest.approx(1.0)
    assert nbest == sorted(nbest, key=lambda x: -x[1])
    doc = nlp(docs[1])
    if config.get("learner") == "sapo" and factory == "lookahead_tagger":
        assert all(0 < t._.tag_prob <= 1 + 1e-9 for t in doc)
    if config.get("learner") == "sapo" and factory == "arc_standard_parser":
        assert all(0 < t._.head_prob <= 1 + 1e-9 for t in doc)


@pytest.mark.parametrize("factory", ["lookahead_tagger", "arc_standard_parser"])
@pytest.mark.parametrize("config,message", [
    ({"search": "greedy", "depth": 2}, "depth = 2 is not used with search = 'greedy'"),
    ({"search": "beam", "depth": 2}, "depth = 2 is not used"),
    ({"search": "beam", "margin": 5.0}, "margin = 5.0 is not used"),
    ({"search": "lookahead", "beam_width": 3}, "beam_width = 3 is not used"),
    ({"search": "lookahead", "update": "early"}, "update = 'early' is not used"),
    ({"learner": "sapo", "depth": 2}, "depth = 2 is not used with search = 'lookahead' and "
                                      "learner = 'sapo'"),
    ({"learner": "sapo", "search": "greedy"}, "learner = sapo searches the n best"),
    ({"learner": "perceptron", "n": 10}, "n = 10 is not used"),
    ({"learner": "perceptron", "l2": 2.0}, "l2 = 2.0 is not used"),
    ({"learner": "crf"}, r"learner[\s\S]*crf"),
    ({"search": "astar"}, r"search[\s\S]*astar"),
    ({"update": "late", "search": "beam"}, r"update[\s\S]*late"),
    ({"depth": 4}, "depth must be an integer 0-3"),
    ({"beam_width": 0, "search": "beam"}, "beam_width must be an integer in 1..1000"),
    ({"n": 0, "learner": "sapo"}, "n must be an integer in 1..1000"),
])
def test_settings_that_make_no_sense_are_errors(factory, config, message):
    nlp = spacy.blank("en")
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        nlp.add_pipe(factory, config=config)


def test_unused_settings_at_their_defaults_are_fine():
    nlp = spacy.blank("en")
    nlp.add_pipe("lookahead_tagger", config={"search": "greedy", "depth": 0})
    nlp.add_pipe("arc_standard_parser", config={"search": "beam", "depth": 1, "margin": 1.0})
    assert nlp.pipe_names == ["lookahead_tagger", "arc_standard_parser"]
    assert nlp.get_pipe("lookahead_tagger").cfg["search"] == "greedy"
    assert nlp.get_pipe("arc_standard_parser").cfg["beam_width"] == 8


def test_a_perceptron_saved_with_the_former_probabilities_default_loads(tmp_path):
    """Saved configs spell out every setting: a perceptron saved when the
    probabilities default was "nbest" still loads; a value that was never a
    default is still an error."""
    nlp = spacy.blank("en")
    nlp.add_pipe("lookahead_ner", config={"probabilities": "nbest"})
    with pytest.raises(ValueError, match="probabilities = 'marginals' is not used"):
        spacy.blank("en").add_pipe("lookahead_ner", config={"probabilities": "marginals"})
