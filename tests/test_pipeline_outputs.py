"""What the installable pipelines give beyond tags, spans and trees (issue
37, item 2): calibrated perceptrons write the probabilities of their tags
and spans (checked against sums over every labelling), `doc.noun_chunks` on
UD labels, and the chunk scores under the key `spacy evaluate` shows."""
import itertools

import numpy
import pytest
import spacy
from spacy.tokens import Doc, DocBin, Span
from spacy.training import Example

import spacy_lookahead.pipes.parser  # noqa: F401  (factories, when not pip-installed)
import spacy_lookahead.pipes.spans  # noqa: F401
import spacy_lookahead.pipes.tagger  # noqa: F401
from spacy_lookahead.core.marginals import Lattice
from spacy_lookahead.pipes import noun_chunks
from spacy_lookahead.optimizer import no_optimizer
from spacy_lookahead.scoring import make_chunk_scorer_v2
from spacy_lookahead.systems.schemes import ids_to_spans

from conftest import reload_pipeline
from ewt import ewt_examples

TAGS = ["DT", "NN", "VBZ", "JJ", "."]
SENTENCES = [("The dog barks .", ["DT", "NN", "VBZ", "."]),
             ("A big dog sleeps .", ["DT", "JJ", "NN", "VBZ", "."]),
             ("The cat is old .", ["DT", "NN", "VBZ", "JJ", "."]),
             ("A cat barks .", ["DT", "NN", "VBZ", "."])]


def tag_examples(vocab):
    return [Example(Doc(vocab, words=text.split()), Doc(vocab, words=text.split(), tags=tags))
            for text, tags in SENTENCES * 3]


def every_labelling(pipe, doc):
    """(output in document order, p) of every labelling of a one-doc
    instance, p from the lattice's log-probability of its derivation: the
    brute-force distribution the marginals sum."""
    inputs, indexes = pipe.inputs_and_indexes([doc])
    inst = list(pipe.instances([doc], None, indexes, inputs))[0]
    lattice = Lattice(inst, pipe.averaged_weights, pipe.temperature)
    rtl = pipe.cfg["direction"] == "rtl"
    for actions in itertools.product(range(lattice.C), repeat=lattice.T):
        p = numpy.exp(lattice.log_probability(numpy.asarray(actions, dtype="int32")))
        if p > 0:
            yield numpy.asarray(actions[::-1] if rtl else actions), p


@pytest.mark.parametrize("direction", ["ltr", "rtl"])
def test_a_calibrated_perceptron_tagger_writes_its_tags_marginals(direction, tmp_path):
    nlp = spacy.blank("en")
    tagger = nlp.add_pipe("lookahead_tagger", config={"direction": direction})
    examples = tag_examples(nlp.vocab)
    nlp.initialize(lambda: examples)
    assert sorted(tagger.labels) == sorted(TAGS)
    for _ in range(3):
        nlp.update(examples, sgd=no_optimizer())
    assert nlp("The dog sleeps .")[0]._.tag_prob is None  # not calibrated: none
    tau = tagger.fit_temperature(examples)
    assert tagger.calibrated and tau == tagger.cfg["fitted_temperature"] and tau != 1.0
    for loaded in (nlp, reload_pipeline(nlp, "disk", tmp_path / "saved")):
        doc = loaded("A dog is big .")
        pipe = loaded.get_pipe("lookahead_tagger")
        tags = [t.tag_ for t in doc]
        marginal = numpy.zeros(len(doc))
        for output, p in every_labelling(pipe, loaded.make_doc(doc.text)):
            marginal += p * (numpy.asarray([pipe.labels[i] for i in output]) == tags)
        assert [t._.tag_prob for t in doc] == pytest.approx(marginal.tolist(), abs=1e-9)


def calibrated_tagger(alternatives):
    """A tagger trained one epoch on 150 EWT sentences, its temperature
    fitted on 40 dev sentences."""
    nlp = spacy.blank("en")
    tagger = nlp.add_pipe("lookahead_tagger", config={"alternatives": alternatives})
    examples = ewt_examples(nlp.vocab, "train", 150)
    nlp.initialize(lambda: examples)
    nlp.update(examples, sgd=no_optimizer())
    tagger.fit_temperature(ewt_examples(nlp.vocab, "dev", 40))
    return nlp, tagger


def test_a_calibrated_tagger_with_alternatives_reads_both_from_one_lattice():
    """Each token's tag probability, its most probable other tag and that
    tag's probability are the marginals of its doc's own lattice (Lattice:
    the tag's, and the largest of the others', first in tag order on ties),
    whitespace aside (1, none), whether the batch is decoded at once or one
    doc at a time."""
    from spacy_lookahead.pipes.transition import TransitionPipe
    nlp, tagger = calibrated_tagger(alternatives=True)
    texts = ["Two  spaces here .\n", *[eg.reference.text for eg in ewt_examples(nlp.vocab, "dev", 40)]]
    for decode_docs in (True, False):
        with pytest.MonkeyPatch.context() as patch:
            if not decode_docs:
                patch.setattr(TransitionPipe, "_decodes_docs", lambda self, run, args: False)
            docs = list(nlp.pipe(texts, batch_size=8))
        ids = {label: i for i, label in enumerate(tagger.labels)}
        for doc, text in zip(docs, texts):
            plain = nlp.make_doc(text)
            inputs, indexes = tagger.inputs_and_indexes([plain])
            inst = tagger.instances([plain], None, indexes, inputs)[0]
            m = Lattice(inst, tagger.averaged_weights, tagger.temperature).marginals()
            content = [t for t in doc if not t.is_space]
            assert len(content) == len(m)
            for t, row in zip(content, m):
                own = ids[t.tag_]
                assert t._.tag_prob == row[own]
                others = row.copy()
                others[own] = -1.0
                alt = int(others.argmax())
                assert t._.tag_alternative == (tagger.labels[alt], row[alt])
            assert all(t._.tag_prob == 1.0 and t._.tag_alternative is None
                       for t in doc if t.is_space)
            assert any(t.is_space for t in doc) == ("  " in text or "\n" in text)


def test_joint_tagging_gives_the_written_tags_probability():
    """Where the parser's joint tagging writes the tagger's alternative tag,
    token._.tag_prob is the tagger's probability of that tag."""
    from spacy_lookahead.pipes.parser import ArcStandardParser
    from spacy_lookahead.pipes.tagger import TAG_ALTERNATIVE, TAG_ALTERNATIVE_PROB, TAG_PROBS

    vocab = spacy.blank("en").vocab
    doc = Doc(vocab, words=["Time", "flies"], tags=["NN", "VBZ"])
    doc.user_data[TAG_PROBS] = numpy.array([0.6, 0.9])
    doc.user_data[TAG_ALTERNATIVE] = numpy.array([vocab.strings.add("VB"), vocab.strings.add("NNS")],
                                                 dtype="uint64")
    doc.user_data[TAG_ALTERNATIVE_PROB] = numpy.array([0.3, 0.05])
    ArcStandardParser._write_alternative_tags(doc, numpy.array([True, False]))
    assert [t.tag_ for t in doc] == ["VB", "VBZ"]
    assert [t._.tag_prob for t in doc] == [0.3, 0.9]


def chunk_examples(vocab):
    chunks = {"The dog barks .": [(0, 2, "NP"), (2, 3, "VP")],
              "A big dog sleeps .": [(0, 3, "NP"), (3, 4, "VP")],
              "The cat is old .": [(0, 2, "NP"), (2, 3, "VP")]}
    out = []
    for text, tags in SENTENCES[:3] * 4:
        ref = Doc(vocab, words=text.split(), tags=tags)
        ref.spans["chunks"] = [Span(ref, s, e, label=label) for s, e, label in chunks[text]]
        out.append(Example(Doc(vocab, words=text.split()), ref))
    return out


@pytest.fixture(scope="module")
def chunks_pipeline():
    """A tagger and a calibrated chunker (the chunker trains on the gold tags)."""
    nlp = spacy.blank("en")
    nlp.add_pipe("lookahead_tagger")
    chunker = nlp.add_pipe("lookahead_chunker", config={"scheme": "biluo"})
    examples = chunk_examples(nlp.vocab)
    nlp.initialize(lambda: examples)
    for _ in range(3):
        nlp.update(examples, sgd=no_optimizer())
    with nlp.select_pipes(enable=["lookahead_tagger"]):
        tagged = [Example(nlp(eg.predicted.copy()), eg.reference) for eg in examples]
    chunker.fit_temperature(tagged)
    return nlp, examples


def test_a_calibrated_perceptron_chunker_writes_each_spans_probability(chunks_pipeline):
    nlp, _ = chunks_pipeline
    chunker = nlp.get_pipe("lookahead_chunker")
    assert chunker.calibrated
    words, tags = "The big cat barks .".split(), ["DT", "JJ", "NN", "VBZ", "."]
    with nlp.select_pipes(enable=["lookahead_chunker"]):
        doc = nlp(Doc(nlp.vocab, words=words, tags=tags))
    group = doc.spans["chunks"]
    assert len(group) and len(group.attrs["scores"]) == len(group)
    kinds, types = chunker._kinds_types()
    brute = dict.fromkeys(((s.start, s.end, s.label_) for s in group), 0.0)
    for output, p in every_labelling(chunker, Doc(nlp.vocab, words=words, tags=tags)):
        for start, end, t in ids_to_spans(output, kinds, types):
            if (start, end, chunker.labels[t]) in brute:
                brute[(start, end, chunker.labels[t])] += p
    assert list(group.attrs["scores"]) == pytest.approx(list(brute.values()), abs=1e-6)


def test_the_chunk_scorer_v2_gives_the_scores_spacy_evaluate_shows(chunks_pipeline, tmp_path):
    """spacy evaluate shows spans_sc_* unless given --spans-key: scorer v2
    gives the chunk scores under that key too (v1 does not)."""
    from spacy.cli.evaluate import evaluate

    nlp, examples = chunks_pipeline
    scores = make_chunk_scorer_v2("sc")([Example(nlp(eg.predicted.copy()), eg.reference)
                                         for eg in examples], spans_key="chunks")
    assert scores["spans_sc_f"] == scores["spans_chunks_f"] > 0
    assert scores["spans_sc_per_type"] == scores["spans_chunks_per_type"]
    DocBin(docs=[eg.reference for eg in examples]).to_disk(tmp_path / "test.spacy")
    nlp.to_disk(tmp_path / "saved")
    for version, shown in (("v1", False), ("v2", True)):
        scorer = {"@scorers": f"spacy_lookahead.chunk_scorer.{version}"}
        spacy.load(tmp_path / "saved", config={"components": {"lookahead_chunker": {
            "scorer": scorer}}}).to_disk(tmp_path / version)
        data = evaluate(str(tmp_path / version), tmp_path / "test.spacy")  # no --spans-key
        assert ("spans_sc_f" in data) is shown
        if shown:
            assert data["spans_sc_f"] == data["spans_chunks_f"]
            pickled = reload_pipeline(spacy.load(tmp_path / version), "pickle", tmp_path)
            assert pickled.get_pipe("lookahead_chunker").scorer.keywords == {"also_as": "sc"}


UD_PARSE = {  # "The old parser reads raw text in the big house and a garden of John 's friend ."
    "words": "The old parser reads raw text in the big house and a garden of John 's friend .".split(),
    "pos": ["DET", "ADJ", "NOUN", "VERB", "ADJ", "NOUN", "ADP", "DET", "ADJ", "NOUN", "CCONJ",
            "DET", "NOUN", "ADP", "PROPN", "PART", "NOUN", "PUNCT"],
    "heads": [2, 2, 3, 3, 5, 3, 9, 9, 9, 3, 12, 12, 9, 16, 16, 14, 12, 3],
    "deps": ["det", "amod", "nsubj", "ROOT", "amod", "obj", "case", "det", "amod", "obl", "cc",
             "det", "conj", "case", "nmod:poss", "case", "nmod", "punct"]}


def test_noun_chunks_read_ud_labels_in_an_english_pipeline_with_the_parser():
    plain = Doc(spacy.blank("en").vocab, **UD_PARSE)
    assert [c.text for c in plain.noun_chunks] == ["The old parser"]  # spaCy's: ClearNLP labels
    nlp = spacy.blank("en")
    nlp.add_pipe("arc_standard_parser")
    doc = Doc(nlp.vocab, **UD_PARSE)
    assert [c.text for c in doc.noun_chunks] == ["The old parser", "raw text", "the big house",
                                                 "a garden", "John 's friend"]
    assert [c.text for c in doc[3:10].noun_chunks] == ["raw text", "the big house"]
    copular = {"words": "John Donovan is a nice search engine .".split(),
               "pos": ["PROPN", "PROPN", "AUX", "DET", "ADJ", "NOUN", "NOUN", "PUNCT"],
               "heads": [6, 0, 6, 6, 6, 6, 6, 6],
               "deps": ["nsubj", "flat", "cop", "det", "amod", "compound", "ROOT", "punct"]}
    assert [c.text for c in Doc(spacy.blank("en").vocab, **copular).noun_chunks] == ["John"]
    assert [c.text for c in Doc(nlp.vocab, **copular).noun_chunks] == ["John Donovan",
                                                                       "a nice search engine"]


def test_noun_chunks_of_a_clearnlp_parse_are_spacys():
    from spacy.lang.en.syntax_iterators import noun_chunks as english
    vocab = spacy.blank("en").vocab
    doc = Doc(vocab, words="The dog chased a cat in the park .".split(),
              pos=["DET", "NOUN", "VERB", "DET", "NOUN", "ADP", "DET", "NOUN", "PUNCT"],
              heads=[1, 2, 2, 4, 2, 2, 7, 5, 2],
              deps=["det", "nsubj", "ROOT", "det", "dobj", "prep", "det", "pobj", "punct"])
    assert list(noun_chunks.noun_chunks(doc)) == list(english(doc))
    assert len(list(english(doc))) == 3
    other = spacy.blank("de")
    other.add_pipe("arc_standard_parser")  # another language keeps its own iterator
    assert other.vocab.get_noun_chunks is not noun_chunks.noun_chunks


def _written(doc):
    """Everything a calibrated component writes, bit for bit."""
    return ([t.tag_ for t in doc], [t._.tag_prob for t in doc], [t._.tag_alternative for t in doc],
            {k: ([(s.start, s.end, s.label_) for s in g], list(g.attrs.get("scores", [])))
             for k, g in doc.spans.items()})


@pytest.mark.parametrize("alternatives", [False, True])
def test_calibrated_outputs_come_alike_from_a_batch_decoded_at_once(chunks_pipeline, alternatives,
                                                                     monkeypatch):
    """A calibrated tagger (with or without alternatives) and chunker decode
    a batch at once and read their probabilities from lattices over the
    decoded batch (its cached scores): the tags, spans, probabilities and
    alternatives are those of the instance path, whitespace included."""
    from spacy_lookahead.pipes.transition import TransitionPipe
    nlp, tagger = calibrated_tagger(alternatives)
    assert tagger.calibrated
    texts = ["Two  spaces here .\n", "", *[eg.reference.text for eg in ewt_examples(nlp.vocab, "dev", 60)]]
    chunks, _ = chunks_pipeline
    chunk_texts = ["The big cat barks .", "A  dog is old .", "The cat sleeps ."] * 5
    batch = ([_written(d) for d in nlp.pipe(texts, batch_size=16)],
             [_written(d) for d in chunks.pipe(chunk_texts, batch_size=4)])
    monkeypatch.setattr(TransitionPipe, "_decodes_docs", lambda self, run, args: False)
    one_by_one = ([_written(d) for d in nlp.pipe(texts, batch_size=16)],
                  [_written(d) for d in chunks.pipe(chunk_texts, batch_size=4)])
    assert batch == one_by_one
    assert any(p is not None and p < 1 for doc in batch[0] for p in doc[1])
    assert any(doc[3]["chunks"][1] for doc in batch[1])
