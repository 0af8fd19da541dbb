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

def search(name, **settings):
    return {"@search": f"spacy_lookahead.{name}.v1", **settings}


def learner(name, **settings):
    return {"@learners": f"spacy_lookahead.{name}.v1", **settings}


# every search with every learner that trains with it
COMBINATIONS = [
    {"search": search("Greedy")},
    {"search": search("Lookahead", depth=1)},
    {"search": search("Beam", width=4, update="early"), "learner": learner("ViolationFixing")},
    {"search": search("TopN"), "learner": learner("SAPO")},
    {"search": search("Beam", width=4, update="max_violation"), "learner": learner("SAPO")},
]
SAPO = learner("SAPO")


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
    if config.get("learner", {}).get("@learners") == "spacy_lookahead.ViolationFixing.v1":
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
    if config.get("learner") == SAPO and factory == "lookahead_tagger":
        assert all(0 < t._.tag_prob <= 1 + 1e-9 for t in doc)
    if config.get("learner") == SAPO and factory == "arc_standard_parser":
        assert all(0 < t._.head_prob <= 1 + 1e-9 for t in doc)


@pytest.mark.parametrize("factory", ["lookahead_tagger", "arc_standard_parser"])
@pytest.mark.parametrize("config,message", [
    # a learner with a search it does not train with: the searches it takes
    ({"search": search("Beam")}, 'MarginPerceptron.v1 trains with @search = '
                                 '"spacy_lookahead.Greedy.v1" or "spacy_lookahead.Lookahead.v1"'),
    ({"learner": learner("ViolationFixing")}, 'ViolationFixing.v1 trains with @search = '
                                              '"spacy_lookahead.Beam.v1", not'),
    ({"learner": SAPO}, "SAPO.v1 trains with @search = \"spacy_lookahead.TopN.v1\" or"),
    ({"learner": SAPO, "search": search("Greedy")}, "SAPO.v1 trains with"),
    # a setting the block does not read cannot be written
    ({"search": search("Greedy", depth=2)}, "unexpected argument: 'depth'"),
    ({"search": search("Beam", margin=5.0), "learner": learner("ViolationFixing")},
     "unexpected argument: 'margin'"),
    ({"search": search("Lookahead", width=3)}, "unexpected argument: 'width'"),
    ({"learner": learner("MarginPerceptron", n=10)}, "unexpected argument: 'n'"),
    ({"learner": learner("ViolationFixing", l2=2.0), "search": search("Beam")},
     "unexpected argument: 'l2'"),
    # values
    ({"learner": learner("CRF")}, r"CRF[\s\S]*learners"),
    ({"search": search("AStar")}, r"AStar[\s\S]*search"),
    ({"search": search("Beam", update="late"), "learner": learner("ViolationFixing")},
     r"update[\s\S]*late"),
    ({"search": search("Lookahead", depth=4)}, "depth must be an integer in 0..3"),
    ({"search": search("Beam", width=0), "learner": learner("ViolationFixing")},
     "width must be an integer in 1..1000"),
    ({"search": search("TopN"), "learner": learner("SAPO", n=0)},
     "n must be an integer in 1..1000"),
    ({"learner": learner("MarginPerceptron", margin=-1)}, "margin must be a number >= 0"),
    # the flat settings of earlier versions: the command that rewrites them
    ({"search": "beam", "beam_width": 4}, "migrate-config"),
])
def test_settings_that_make_no_sense_are_errors(factory, config, message):
    nlp = spacy.blank("en")
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        nlp.add_pipe(factory, config=config)


def test_the_blocks_are_kept_with_the_component():
    """The cfg holds the blocks as config sections (saved, pickled); the
    component holds them as objects, chosen once."""
    nlp = spacy.blank("en")
    tagger = nlp.add_pipe("lookahead_tagger", config={"search": search("Greedy")})
    parser = nlp.add_pipe("arc_standard_parser", config={
        "search": search("Beam", update="early"), "learner": learner("ViolationFixing")})
    assert tagger.cfg["search"] == search("Greedy")
    assert tagger.cfg["learner"] == learner("MarginPerceptron", margin=1.0)
    assert parser.cfg["search"] == search("Beam", width=8, update="early")
    assert (parser.search.kind, parser.search.width, parser.learner.kind) == ("beam", 8,
                                                                                 "perceptron")
    ner = spacy.blank("en").add_pipe("lookahead_ner")  # the span labellers' own margin
    assert ner.learner.margin == 50.0


def test_a_perceptron_saved_with_the_former_probabilities_default_loads(tmp_path):
    """Saved configs spell out every setting: a perceptron saved when the
    probabilities default was "nbest" still loads; a value that was never a
    default is still an error."""
    nlp = spacy.blank("en")
    nlp.add_pipe("lookahead_ner", config={"probabilities": "nbest"})
    with pytest.raises(ValueError, match="probabilities = 'marginals' is read with @learners"):
        spacy.blank("en").add_pipe("lookahead_ner", config={"probabilities": "marginals"})
