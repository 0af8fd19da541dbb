"""lookahead_tagger as a spaCy component: training, prediction with averaged
weights, serialisation, bad input."""
import pickle

import pytest
import spacy
from spacy.tokens import Doc
from spacy.training import Example

from conftest import reload_pipeline
from ewt import ewt_examples
from engine import predict
from blocks import blocks


def train_tagger(examples, epochs=3, **config):
    nlp = spacy.blank("en")
    nlp.add_pipe("lookahead_tagger", config=blocks("lookahead_tagger", config))
    nlp.initialize(lambda: examples)
    for _ in range(epochs):
        nlp.update(examples)
    return nlp


@pytest.fixture(scope="module")
def small_nlp():
    nlp = spacy.blank("en")
    return train_tagger(ewt_examples(nlp.vocab, "train", 300), epochs=2, depth=1)


def texts_of(examples):
    return [eg.predicted for eg in examples]


def tags(nlp, docs):
    return [[t.tag_ for t in doc] for doc in nlp.pipe(Doc(nlp.vocab, words=[t.text for t in d]) for d in docs)]


def test_accuracy_floor_on_ewt_slice():
    nlp = spacy.blank("en")
    train = ewt_examples(nlp.vocab, "train", 2000)
    nlp = train_tagger(train, epochs=3, depth=1)
    dev = ewt_examples(nlp.vocab, "dev", 500)
    scores = nlp.evaluate(dev)
    assert scores["tag_acc"] > 0.87, scores


def test_predicts_with_averaged_weights(small_nlp):
    tagger = small_nlp.get_pipe("lookahead_tagger")
    docs = [Doc(small_nlp.vocab, words="The service was great .".split())]
    atoms = [tagger._atoms.doc_atoms(d) for d in docs]
    averaged = predict(tagger.system, atoms, tagger.weights.average(), "lookahead", 1)
    assert [a.best.tolist() for a in tagger.predict(docs)] == [a.tolist() for a in averaged]
    assert tagger.averaged_weights.to_bytes() != tagger.weights.to_bytes()


@pytest.mark.parametrize("how", ["bytes", "disk", "pickle"])
def test_serialisation_round_trip_gives_identical_predictions(small_nlp, tmp_path, how):
    dev = ewt_examples(small_nlp.vocab, "dev", 200)
    before = tags(small_nlp, texts_of(dev))
    nlp2 = reload_pipeline(small_nlp, how, tmp_path / "model")
    assert tags(nlp2, texts_of(dev)) == before
    saved = nlp2.get_pipe("lookahead_tagger").averaged_weights.to_bytes()
    assert saved == small_nlp.get_pipe("lookahead_tagger").averaged_weights.to_bytes()


def test_multiprocessing_pipe(small_nlp):
    docs = ["The service was great .", "I love it !"] * 4
    serial = [[t.tag_ for t in d] for d in small_nlp.pipe(docs)]
    parallel = [[t.tag_ for t in d] for d in small_nlp.pipe(docs, n_process=2, batch_size=2)]
    assert serial == parallel


def test_depth_can_change_at_load_time(small_nlp, tmp_path):
    small_nlp.to_disk(tmp_path / "m")
    nlp2 = spacy.load(tmp_path / "m", config={"components": {"lookahead_tagger": {
        "search": {"depth": 0}}}})
    assert nlp2.get_pipe("lookahead_tagger").search.depth == 0
    assert all(t.tag_ for t in nlp2("A short test ."))


def test_feature_settings_must_match_the_weights(small_nlp, tmp_path):
    small_nlp.to_disk(tmp_path / "m")
    with pytest.raises(ValueError, match="direction"):
        spacy.load(tmp_path / "m", config={"components": {"lookahead_tagger": {"direction": "rtl"}}})


@pytest.mark.parametrize("words", [
    [],
    ["Hello"],
    ["Ünïcödé", "😀", "日本語", "x" * 300, "-", "3.14"],
    ["Hello", " ", "\n", "world", "\t\t"],
])
def test_odd_docs_are_tagged(small_nlp, words):
    doc = small_nlp(Doc(small_nlp.vocab, words=words))
    assert len(doc) == len(words)
    labels = small_nlp.get_pipe("lookahead_tagger").labels
    assert all(t.tag_ == "_SP" if t.is_space else t.tag_ in labels for t in doc)


def test_very_long_doc(small_nlp):
    words = ("The old man the boats and we went home .".split()) * 1000
    doc = small_nlp(Doc(small_nlp.vocab, words=words))
    assert len(doc) == 10000 and all(t.tag_ for t in doc)
    assert doc[0].tag_ == doc[10].tag_  # the same context gives the same tag


@pytest.mark.parametrize("config,match", [
    ({"depth": -1}, "depth must be an integer in 0..3"),
    ({"depth": 9}, "depth must be an integer in 0..3"),
    ({"direction": "up"}, r"direction[\s\S]*up"),
    ({"target": "lemma"}, r"target[\s\S]*lemma"),
    ({"margin": -1.0}, "margin must be a number >= 0"),
])
def test_wrong_config_values_raise(config, match):
    nlp = spacy.blank("en")
    with pytest.raises(ValueError, match=match):
        nlp.add_pipe("lookahead_tagger", config=blocks("lookahead_tagger", config))


def test_uninitialised_tagger_says_what_to_do():
    nlp = spacy.blank("en")
    nlp.add_pipe("lookahead_tagger")
    with pytest.raises(ValueError, match="initialize"):
        nlp("Hello world")


def test_training_without_tags_raises():
    nlp = spacy.blank("en")
    nlp.add_pipe("lookahead_tagger")
    eg = Example.from_dict(nlp.make_doc("no tags here"), {})
    with pytest.raises(ValueError, match="no 'tag' annotation"):
        nlp.initialize(lambda: [eg])


def test_unseen_gold_label_is_ignored_not_fatal(small_nlp):
    tagger = small_nlp.get_pipe("lookahead_tagger")
    doc = small_nlp.make_doc("Brand new label")
    eg = Example.from_dict(doc, {"tags": ["NEWTAG", "JJ", "NN"]})
    losses = tagger.update([eg])
    # the loss counts mistakes on the two tokens whose gold tag is known
    assert "NEWTAG" not in tagger.labels and 0 <= losses["lookahead_tagger"] <= 2


@pytest.mark.parametrize("damage", ["weights", "cfg", "missing"])
def test_corrupt_model_directory_raises_a_clear_error(small_nlp, tmp_path, damage):
    path = tmp_path / "model"
    small_nlp.to_disk(path)
    part = path / "lookahead_tagger" / ("cfg" if damage == "cfg" else "weights")
    if damage == "missing":
        part.unlink()
    else:
        part.write_bytes(b"\x00garbage")
    with pytest.raises(ValueError, match="lookahead_tagger.*(corrupt|damaged|incomplete)"):
        spacy.load(path)


def test_pos_target_writes_pos():
    nlp = spacy.blank("en")
    train = ewt_examples(nlp.vocab, "train", 200)
    nlp = train_tagger(train, epochs=2, depth=0, target="pos")
    doc = nlp("The dog barks .")
    assert all(t.pos_ for t in doc)
    assert "pos_acc" in nlp.evaluate(ewt_examples(nlp.vocab, "dev", 50))


def test_threads_predict_like_one_thread(small_nlp):
    from concurrent.futures import ThreadPoolExecutor

    texts = [f"Sentence number {i} has {'many ' * (i % 7)}words ." for i in range(200)]
    serial = [[t.tag_ for t in small_nlp(text)] for text in texts]
    fresh = pickle.loads(pickle.dumps(small_nlp))  # cold caches: threads race to fill them
    with ThreadPoolExecutor(4) as pool:
        parallel = list(pool.map(lambda text: [t.tag_ for t in fresh(text)], texts))
    assert parallel == serial


@pytest.mark.parametrize("direction", ["ltr", "rtl"])
def test_alternatives_are_the_most_probable_other_tags_under_the_exact_marginals(direction,
                                                                              tmp_path):
    """A perceptron tagger with alternatives: each token's alternative is
    argmax over the other tags of the lattice marginals at the temperature
    fitted on the scored data, which the model keeps after a round trip."""
    import numpy
    from spacy_lookahead.core.marginals import Lattice
    nlp = spacy.blank("en")
    train = ewt_examples(nlp.vocab, "train", 200)
    nlp = train_tagger(train, epochs=2, depth=1, direction=direction, alternatives=True)
    tagger = nlp.get_pipe("lookahead_tagger")
    assert tagger.cfg.get("fitted_temperature") is None
    nlp.evaluate(ewt_examples(nlp.vocab, "dev", 60))  # as spacy train scores dev: fits tau
    tau = tagger.cfg["fitted_temperature"]
    assert tau > 0 and tau != 1.0 and tagger.temperature == tau
    docs = list(nlp.pipe(eg.predicted for eg in ewt_examples(nlp.vocab, "dev", 8)))
    names = tagger.actions
    for doc in docs:
        (inst,) = tagger.instances([Doc(nlp.vocab, words=[t.text for t in doc])])
        m = Lattice(inst, tagger.averaged_weights, tau, True).marginals()
        if direction == "rtl":
            m = m[::-1]
        for i, token in enumerate(doc):
            other, p = token._.tag_alternative
            chosen = names.index(token.tag_)
            row = m[i].copy()
            row[chosen] = -1
            assert other == names[int(row.argmax())] != token.tag_
            assert p == pytest.approx(row.max(), abs=1e-12)
            assert p + m[i, chosen] <= 1 + 1e-9
    # n_threads = 2 pipelines the batches of pipe() (another path): the same
    threaded = spacy.load(nlp.to_disk(tmp_path / "t") or tmp_path / "t",
                          config={"components": {"lookahead_tagger": {"n_threads": 2}}})
    redo = list(threaded.pipe((Doc(threaded.vocab, words=[t.text for t in d]) for d in docs),
                              batch_size=3))
    for a, b in zip(docs, redo):
        assert [t._.tag_alternative for t in a] == [t._.tag_alternative for t in b]
    again = reload_pipeline(nlp, "disk", tmp_path)
    assert again.get_pipe("lookahead_tagger").temperature == tau
    redo = list(again.pipe(Doc(again.vocab, words=[t.text for t in d]) for d in docs))
    for a, b in zip(docs, redo):
        assert [t._.tag_alternative for t in a] == [t._.tag_alternative for t in b]


def test_alternatives_need_a_first_order_tagger_and_are_off_by_default(small_nlp):
    nlp = spacy.blank("en")
    with pytest.raises(ValueError, match="tag_trigrams = false"):
        nlp.add_pipe("lookahead_tagger", config={"alternatives": True, "tag_trigrams": True})
    doc = small_nlp("A plain sentence.")
    assert all(t._.tag_alternative is None for t in doc)
    assert "tag_alternative" not in doc.user_data
