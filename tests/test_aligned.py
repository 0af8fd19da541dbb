"""pipes/aligned.py: the reference's annotation on the predicted tokens,
by array where the words are the same on both sides, as spaCy's
Example.get_aligned gives it."""
import numpy
import spacy
from spacy.tokens import Doc
from spacy.training import Example

from spacy_lookahead.pipes.aligned import LabelHashes, aligned_values, one_to_one


def example(pred_words, ref_words, tags):
    vocab = spacy.blank("en").vocab
    return Example(Doc(vocab, words=pred_words), Doc(vocab, words=ref_words, tags=tags))


def test_same_words_give_the_reference_array_as_get_aligned_does():
    eg = example(["A", "dog", "barks", "."], ["A", "dog", "barks", "."], ["DT", "NN", "", "."])
    assert one_to_one(eg)
    values = aligned_values(eg, "TAG")
    assert values.dtype == numpy.uint64
    assert [v or None for v in values.tolist()] == [t or None for t in eg.get_aligned("TAG")]
    assert values[2] == 0  # an empty tag: no value


def test_other_words_fall_back_to_spacys_alignment():
    eg = example(["A", "dog", "barks."], ["A", "dog", "barks", "."], ["DT", "NN", "VBZ", "."])
    assert not one_to_one(eg)
    values = aligned_values(eg, "TAG")
    assert values.dtype == numpy.uint64
    assert [v or None for v in values.tolist()] == eg.get_aligned("TAG")
    assert values[2] == 0  # one predicted token, two gold ones: no value
    eg = example([], [], [])
    assert one_to_one(eg) and aligned_values(eg, "TAG").tolist() == []


def test_label_hashes_map_hashes_to_ids_and_the_rest_to_minus_one():
    vocab = spacy.blank("en").vocab
    ids = {"NN": 0, "VBZ": 1, "NOUN": 2}
    table = LabelHashes(vocab, ids)
    values = numpy.asarray([vocab.strings["VBZ"], 0, vocab.strings.add("JJ"), 92,
                            vocab.strings["NN"], 2 ** 64 - 1], dtype="uint64")
    assert table.ids_of(values).tolist() == [1, -1, -1, 2, 0, -1]  # 92: the symbol NOUN
    assert LabelHashes(vocab, {}).ids_of(values).tolist() == [-1] * 6


def test_the_taggers_gold_ids_are_those_of_the_strings(shared_data):
    """The tagger's gold label ids by hashes equal those of the aligned tag
    strings (the former code), on EWT sentences, for tags and for POS, with
    a label the tagger does not know and words that do not align."""
    from ewt import ewt_examples

    nlp = spacy.blank("en")
    examples = ewt_examples(nlp.vocab, "dev", 60)
    words = [t.text for t in examples[0].reference]
    joined = Example(Doc(nlp.vocab, words=[words[0] + words[1]] + words[2:]), examples[0].reference)
    assert not one_to_one(joined) and one_to_one(examples[0])
    for target, attr in (("tag", "TAG"), ("pos", "POS")):
        tagger = nlp.add_pipe("lookahead_tagger", name=f"t_{target}", config={"target": target})
        tagger.initialize(lambda: examples[:10])  # labels of 10 sentences: some unseen
        unseen = 0
        for eg in examples + [joined]:
            ids = tagger.label_ids
            old = [ids.get(t, -1) if t else -1 for t in eg.get_aligned(attr, as_string=True)]
            assert tagger.gold_ids(eg).tolist() == old
            unseen += old.count(-1)
        assert unseen > 0


def test_the_taggers_gold_reads_tags_in_the_references_vocab():
    """Words that do not align and a reference doc from another vocab (as
    DocBin.get_docs(Vocab()) gives): the tag strings come from the
    reference's StringStore, as get_aligned(as_string=True) reads them; a
    tag the tagger does not know is -1, not an error."""
    from spacy.vocab import Vocab

    nlp = spacy.blank("en")
    tagger = nlp.add_pipe("lookahead_tagger")
    train = [Example(Doc(nlp.vocab, words=["A", "dog"]), Doc(nlp.vocab, words=["A", "dog"],
                                                             tags=["DT", "NN"]))]
    tagger.initialize(lambda: train)
    reference = Doc(Vocab(), words=["A", "dog", "barks"], tags=["DT", "NN", "ZZTOP"])
    assert "ZZTOP" not in nlp.vocab.strings
    eg = Example(Doc(nlp.vocab, words=["A", "dogbarks"]), reference)
    assert not one_to_one(eg)
    ids = tagger.label_ids
    assert tagger.gold_ids(eg).tolist() == [ids["DT"], -1]
