"""lookahead_chunker and lookahead_ner as spaCy components."""

import pytest
import spacy
from spacy.tokens import Doc, Span
from spacy.training import Example

import spacy_lookahead.pipes.spans  # noqa: F401  (factories, when not pip-installed)
import spacy_lookahead.scoring  # noqa: F401

from conftest import reload_pipeline
from span_data import conll2000, jnlpba, train, words_only  # noqa: F401
from blocks import blocks


@pytest.fixture(scope="module")
def chunker_nlp(shared_data):
    nlp = spacy.blank("en")
    nlp.add_pipe("lookahead_chunker", config=blocks("lookahead_chunker", {"depth": 1}))
    return train(nlp, conll2000(shared_data, nlp.vocab, "train", 1500), 3)


def test_chunker_f1_floor_on_conll2000_slice(chunker_nlp, shared_data):
    test = conll2000(shared_data, chunker_nlp.vocab, "test", 500)
    scores = chunker_nlp.evaluate(test)
    assert scores["spans_chunks_f"] > 0.88, scores
    assert set(scores["spans_chunks_per_type"]) >= {"NP", "VP", "PP"}


def test_chunker_learns_from_words_only_docs(shared_data):
    """spacy.Corpus.v1 gives update() docs without tags: the chunker takes its
    POS input from the aligned gold doc."""
    nlp = spacy.blank("en")
    nlp.add_pipe("lookahead_chunker", config=blocks("lookahead_chunker", {"depth": 0}))
    examples = words_only(conll2000(shared_data, nlp.vocab, "train", 300))
    assert not examples[0].predicted.has_annotation("TAG")
    train(nlp, examples, 2)
    test = conll2000(shared_data, nlp.vocab, "test", 200)
    assert nlp.evaluate(test)["spans_chunks_f"] > 0.8


def test_chunker_without_pos_tags_says_what_to_do(chunker_nlp):
    with pytest.raises(ValueError, match="needs POS tags.*lookahead_tagger"):
        chunker_nlp("The old man saw the boats .")


def test_chunker_writes_spans(chunker_nlp):
    words = "He reckons the current account deficit will narrow .".split()
    tags = ["PRP", "VBZ", "DT", "JJ", "NN", "NN", "MD", "VB", "."]
    doc = chunker_nlp(Doc(chunker_nlp.vocab, words=words, tags=tags))
    chunks = [(s.text, s.label_) for s in doc.spans["chunks"]]
    assert ("the current account deficit", "NP") in chunks and ("He", "NP") in chunks
    empty = chunker_nlp(Doc(chunker_nlp.vocab, words=[], tags=[]))
    assert "chunks" in empty.spans and len(empty.spans["chunks"]) == 0


@pytest.mark.parametrize("how", ["bytes", "disk", "pickle"])
def test_chunker_round_trip(chunker_nlp, shared_data, tmp_path, how):
    test = conll2000(shared_data, chunker_nlp.vocab, "test", 100)

    def run(nlp):
        docs = nlp.pipe(Doc(nlp.vocab, words=[t.text for t in eg.reference],
                            tags=[t.tag_ for t in eg.reference]) for eg in test)
        return [[(s.start, s.end, s.label_) for s in d.spans["chunks"]] for d in docs]

    assert run(reload_pipeline(chunker_nlp, how, tmp_path / "m")) == run(chunker_nlp)


def test_overlapping_gold_spans_and_unseen_types_do_not_break_training():
    nlp = spacy.blank("en")
    nlp.add_pipe("lookahead_chunker", config=blocks("lookahead_chunker", {"depth": 1}))
    doc = Doc(nlp.vocab, words="the big dog barks".split(), tags=["DT", "JJ", "NN", "VBZ"])
    ref = doc.copy()
    ref.spans["chunks"] = [Span(ref, 0, 3, "NP"), Span(ref, 1, 3, "NP"), Span(ref, 3, 4, "VP")]
    nlp.initialize(lambda: [Example(doc, ref)])
    assert nlp.get_pipe("lookahead_chunker").labels == ("NP", "VP")
    ref2 = ref.copy()
    ref2.spans["chunks"] = [Span(ref2, 0, 3, "NP"), Span(ref2, 3, 4, "XP")]  # XP: unseen
    for _ in range(3):
        nlp.update([Example(doc.copy(), ref), Example(doc.copy(), ref2)])
    out = nlp(doc.copy())
    assert [(s.start, s.end, s.label_) for s in out.spans["chunks"]][0] == (0, 3, "NP")


@pytest.mark.parametrize("direction", ["ltr", "rtl"])
@pytest.mark.parametrize("scheme", ["iob2", "biluo"])
def test_ner_on_jnlpba_slice(shared_data, direction, scheme):
    nlp = spacy.blank("en")
    nlp.add_pipe("lookahead_ner", config=blocks("lookahead_ner", {"depth": 1, "direction": direction, "scheme": scheme}))
    train(nlp, jnlpba(shared_data, nlp.vocab, "train", 1000), 2)
    scores = nlp.evaluate(jnlpba(shared_data, nlp.vocab, "test", 300))
    assert scores["ents_f"] > 0.45, scores


@pytest.fixture(scope="module")
def toy_ner():
    nlp = spacy.blank("en")
    nlp.add_pipe("lookahead_ner", config=blocks("lookahead_ner", {"depth": 1, "direction": "rtl"}))
    examples = []
    for text, ents in [("IL-2 activates T cells", [(0, 1, "protein"), (2, 4, "cell_type")]),
                       ("NF-kappa B binds DNA", [(0, 2, "protein")]),
                       ("T cells express IL-2", [(0, 2, "cell_type"), (3, 4, "protein")])]:
        doc = Doc(nlp.vocab, words=text.split())
        ref = doc.copy()
        ref.set_ents([Span(ref, s, e, label) for s, e, label in ents], default="outside")
        examples.append(Example(doc, ref))
    return train(nlp, examples, 10)


def test_ner_writes_ents(toy_ner):
    doc = toy_ner(Doc(toy_ner.vocab, words="IL-2 activates T cells".split()))
    assert [(e.text, e.label_) for e in doc.ents] == [("IL-2", "protein"), ("T cells", "cell_type")]


def test_ner_respects_preset_entities(toy_ner):
    doc = Doc(toy_ner.vocab, words="IL-2 activates T cells".split())
    doc.set_ents([Span(doc, 0, 1, "GENE"), Span(doc, 2, 3, "protein")])  # unknown and known types
    out = toy_ner(doc)
    ents = [(e.start, e.end, e.label_) for e in out.ents]
    assert (0, 1, "GENE") in ents and (2, 3, "protein") in ents
    assert all(not (s < 3 and e > 2) or (s, e) == (2, 3) for s, e, _ in ents)


def test_ner_feature_inputs_required_when_configured():
    nlp = spacy.blank("en")
    nlp.add_pipe("lookahead_ner", config={"chunk_features": True})
    nlp.get_pipe("lookahead_ner").add_label("protein")
    with pytest.raises(ValueError, match="needs chunks in doc.spans.*chunk_features = false"):
        nlp("IL-2 activates T cells")


@pytest.mark.parametrize("factory,config,match", [
    ("lookahead_chunker", {"scheme": "bio"}, r"scheme[\s\S]*bio"),
    ("lookahead_chunker", {"depth": -1}, "depth must be"),
    ("lookahead_ner", {"direction": "up"}, r"direction[\s\S]*up"),
])
def test_wrong_config_values(factory, config, match):
    with pytest.raises(ValueError, match=match):
        spacy.blank("en").add_pipe(factory, config=blocks(factory, config))


@pytest.mark.parametrize("words", [[], ["IL-2"], ["IL-2", " ", "\n", "cells", "\t"],
                                   ["Ünïcödé", "😀", "日本語", "x" * 300],
                                   ("IL-2 activates T cells and NF-kappa B .".split()) * 1250])
def test_ner_odd_and_long_docs(toy_ner, words):
    doc = toy_ner(Doc(toy_ner.vocab, words=list(words)))
    assert len(doc) == len(words)
    assert all(e.label_ in ("protein", "cell_type") for e in doc.ents)


def test_chunker_long_doc(chunker_nlp):
    words = "He reckons the current account deficit will narrow .".split() * 1100
    tags = ["PRP", "VBZ", "DT", "JJ", "NN", "NN", "MD", "VB", "."] * 1100
    doc = chunker_nlp(Doc(chunker_nlp.vocab, words=words, tags=tags))
    assert len(doc) == 9900 and len(doc.spans["chunks"]) >= 4 * 1100


@pytest.mark.parametrize("factory", ["lookahead_chunker", "lookahead_ner"])
def test_corrupt_span_model_raises_a_clear_error(toy_ner, chunker_nlp, tmp_path, factory):
    nlp = chunker_nlp if factory == "lookahead_chunker" else toy_ner
    nlp.to_disk(tmp_path / "m")
    (tmp_path / "m" / factory / "weights").write_bytes(b"\x00garbage")
    with pytest.raises(ValueError, match=f"{factory}.*weights.*damaged"):
        spacy.load(tmp_path / "m")


def test_models_saved_with_the_old_scheme_name_load(shared_data):
    """The span labellers' scheme "iob" is now "iob2", the readers' name; a
    model saved with the old name loads and predicts the same."""
    import srsly
    nlp = spacy.blank("en")
    nlp.add_pipe("lookahead_chunker", config=blocks("lookahead_chunker", {"depth": 0}))
    train(nlp, conll2000(shared_data, nlp.vocab, "train", 100), 1)
    pipe = nlp.get_pipe("lookahead_chunker")
    msg = srsly.msgpack_loads(pipe.to_bytes(exclude=["vocab"]))
    cfg = srsly.json_loads(msg["cfg"])
    assert cfg["scheme"] == "iob2"
    msg["cfg"] = srsly.json_dumps({**cfg, "scheme": "iob"})
    other = spacy.blank("en", vocab=nlp.vocab).add_pipe("lookahead_chunker", config=blocks("lookahead_chunker", {"depth": 0}))
    other.from_bytes(srsly.msgpack_dumps(msg), exclude=["vocab"])
    docs = [eg.predicted for eg in conll2000(shared_data, nlp.vocab, "test", 30)]
    def chunks(component):
        out = [component(d.copy()) for d in docs]
        return [[(s.start, s.end, s.label_) for s in d.spans["chunks"]] for d in out]

    ours, theirs = chunks(pipe), chunks(other)
    assert ours == theirs and any(ours)


def test_a_calibrated_ner_writes_alike_from_a_batch_decoded_at_once(shared_data, monkeypatch):
    """A calibrated NER (rtl, IOB2) decodes a batch at once and scores its
    entities from each doc's lattice after its search (SpanScores):
    doc.ents and the scores group (the same entities, their probabilities
    in attrs["scores"]) are those of the docs decoded one by one, bit for
    bit, whitespace, empty docs and a doc with preset entities (the Python
    path) included."""
    from spacy_lookahead.pipes.transition import TransitionPipe
    nlp = spacy.blank("en")
    ner = nlp.add_pipe("lookahead_ner", config=blocks("lookahead_ner", {"depth": 1,
                                                                         "direction": "rtl"}))
    train(nlp, jnlpba(shared_data, nlp.vocab, "train", 400), 1)
    ner.fit_temperature(jnlpba(shared_data, nlp.vocab, "test", 60))
    assert ner.calibrated
    held = [eg.reference for eg in jnlpba(shared_data, nlp.vocab, "test", 120)[60:]]
    preset = Doc(nlp.vocab, words="IL-2 activates T cells".split())
    preset.set_ents([Span(preset, 0, 1, "GENE")])
    docs = [Doc(nlp.vocab, words=["IL-2", " ", "binds", "\n"]), Doc(nlp.vocab, words=[]),
            *[Doc(nlp.vocab, words=[t.text for t in d]) for d in held], preset]

    def written(docs):
        return [([(e.start, e.end, e.label_) for e in d.ents],
                 {k: ([(s.start, s.end, s.label_) for s in g], g.attrs.get("scores").tobytes())
                  for k, g in d.spans.items()}) for d in docs]

    batch = written(nlp.pipe((d.copy() for d in docs), batch_size=16))
    monkeypatch.setattr(TransitionPipe, "_decodes_docs", lambda self, run, args: False)
    assert batch == written(nlp.pipe((d.copy() for d in docs), batch_size=16))
    scored = [s for _, groups in batch for s in groups["ents"][0]]
    assert len(scored) > 20 and batch[-1][0][0] == (0, 1, "GENE")
    assert all(groups["ents"][0] == ents for ents, groups in batch[:-1])
