"""initialize() reads the training corpus once (each read of a DocBin costs
~1 ms a doc) and keeps what later steps need: the labels, |S| (SAPO's L2
step) and the input tags seen (the unseen-tag warning)."""
import pytest
import spacy
from spacy.tokens import Doc, Span
from spacy.training import Example

import spacy_lookahead.pipes  # noqa: F401  (factories, when not pip-installed)
from blocks import blocks


class Corpus:
    """get_examples that counts how often the corpus is read to its end."""

    def __init__(self, examples):
        self.examples, self.reads = examples, 0

    def __call__(self):
        for eg in self.examples:
            yield eg
        self.reads += 1


def examples(vocab, n=5):
    out = []
    for i in range(n):
        words, tags = ["The", "dog", "barks", "."], ["DT", "NN", "VBZ" if i % 2 else "VBD", "."]
        ref = Doc(vocab, words=words, tags=tags, heads=[1, 2, 2, 2],
                  deps=["det", "nsubj", "ROOT", "punct"])
        ref.spans["chunks"] = [Span(ref, 0, 2, "NP"), Span(ref, 2, 3, "VP")]
        out.append(Example(Doc(vocab, words=words, tags=tags), ref))
    return out


TAGS = [".", "DT", "NN", "VBD", "VBZ"]


@pytest.mark.parametrize("factory,config,labels,tags,size", [
    ("lookahead_tagger", {}, ["., DT, NN, VBD, VBZ"], None, 5),
    ("lookahead_chunker", {}, ["NP, VP"], TAGS, 5),
    ("fr_chunker", {}, ["NP, VP"], TAGS, None),  # the FR perceptron has no |S|
    ("arc_standard_parser", {"min_label_freq": 1}, ["det, nsubj, punct"], TAGS, 5),
])
def test_initialize_reads_the_corpus_once(factory, config, labels, tags, size):
    nlp = spacy.blank("en")
    pipe = nlp.add_pipe(factory, config=blocks(factory, config))
    corpus = Corpus(examples(nlp.vocab))
    pipe.initialize(corpus)
    assert corpus.reads == 1
    assert [", ".join(pipe.labels)] == labels
    assert pipe.cfg.get("train_size") == size
    assert pipe.cfg.get("input_tags") == tags


def test_initialize_still_names_a_wrong_example_type():
    pipe = spacy.blank("en").add_pipe("lookahead_tagger")
    with pytest.raises(TypeError, match="Example"):
        pipe.initialize(lambda: ["not an example"])
