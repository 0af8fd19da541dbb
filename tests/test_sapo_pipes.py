"""SAPO as a learner of the sequence components: training on real data,
probabilities for users (span scores, tag probabilities, n-best), training
curves, serialisation and bad settings."""
import math

import numpy
import pytest
import spacy
from spacy.tokens import Doc

from conftest import reload_pipeline
from ewt import ewt_examples
from span_data import conll2000, jnlpba, train, words_only
from spacy_lookahead.systems.span_ids import ids_to_spans
from blocks import blocks

SAPO = {"learner": "sapo", "n": 5, "learning_rate": 0.1, "l2": 1.0}


@pytest.fixture(scope="module")
def chunker(shared_data):
    nlp = spacy.blank("en")
    nlp.add_pipe("lookahead_chunker", config=blocks("lookahead_chunker", SAPO))
    return train(nlp, conll2000(shared_data, nlp.vocab, "train", 1500), 3)


@pytest.fixture(scope="module")
def held_out(chunker, shared_data):
    """Test docs with POS only, chunked by the model, and their gold chunks."""
    examples = conll2000(shared_data, chunker.vocab, "test", 400)
    docs = list(chunker.pipe(eg.predicted for eg in examples))
    return docs, [eg.reference for eg in examples]


def test_sapo_chunker_f1_floor(chunker, shared_data):
    scores = chunker.evaluate(conll2000(shared_data, chunker.vocab, "test", 500))
    assert scores["spans_chunks_f"] > 0.88, scores


def test_span_scores_are_probabilities_that_track_correctness(held_out):
    """attrs["scores"] holds one probability per chunk, in [0, 1]; chunks the
    model gets right score higher than the ones it gets wrong."""
    docs, golds = held_out
    right, wrong = [], []
    for doc, gold in zip(docs, golds):
        group = doc.spans["chunks"]
        scores = group.attrs["scores"]
        assert len(scores) == len(group)
        assert numpy.all((scores >= 0) & (scores <= 1 + 1e-6))
        gold_spans = {(s.start, s.end, s.label_) for s in gold.spans["chunks"]}
        for span, score in zip(group, scores):
            (right if (span.start, span.end, span.label_) in gold_spans else wrong).append(score)
    assert len(wrong) > 20
    assert numpy.mean(right) > numpy.mean(wrong) + 0.15, (numpy.mean(right), numpy.mean(wrong))
    # Calibration: spans with a probability above 0.95 are mostly right.
    confident = [1 for s in right if s > 0.95] + [0 for s in wrong if s > 0.95]
    assert numpy.mean(confident) > 0.95


def test_predict_nbest_gives_a_distribution(chunker, held_out):
    docs, _ = held_out
    pipe = chunker.get_pipe("lookahead_chunker")
    for doc, nbest in zip(docs[:50], pipe.predict_nbest(docs[:50], n=5)):
        probs = [p for _, p in nbest]
        assert sum(probs) == pytest.approx(1.0)
        assert probs == sorted(probs, reverse=True)
        assert len({tuple(labels) for labels, _ in nbest}) == len(nbest)  # unique
        assert all(len(labels) == len(doc) for labels, _ in nbest)
        best = nbest[0][0]  # the written chunks are the best labelling
        starts = [i for i, label in enumerate(best) if label.startswith("B-")]
        assert starts == [s.start for s in doc.spans["chunks"]]


def test_sapo_weights_stay_bounded_and_are_logged(chunker, shared_data):
    """score() reports the mean |w| of the training weights (Sun et al. Fig. 3)."""
    scores = chunker.evaluate(conll2000(shared_data, chunker.vocab, "test", 50))
    assert 0 < scores["lookahead_chunker_w_mean_abs"] < 1.0


@pytest.mark.parametrize("how", ["bytes", "disk", "pickle"])
def test_sapo_round_trip_keeps_predictions_and_probabilities(chunker, held_out, tmp_path, how):
    docs, _ = held_out
    other = reload_pipeline(chunker, how, tmp_path / "model")
    again = list(other.pipe(Doc(other.vocab, words=[t.text for t in d], tags=[t.tag_ for t in d])
                            for d in docs[:100]))
    for a, b in zip(docs, again):
        assert [(s.start, s.end, s.label_) for s in a.spans["chunks"]] == \
            [(s.start, s.end, s.label_) for s in b.spans["chunks"]]
        numpy.testing.assert_allclose(a.spans["chunks"].attrs["scores"],
                                      b.spans["chunks"].attrs["scores"], rtol=1e-6)


def test_sapo_tagger_gives_tag_probabilities():
    """Tag probabilities (exact marginals, the default) at the temperature
    fitted on held-out data, as spacy train fits it on the dev set."""
    nlp = spacy.blank("en")
    nlp.add_pipe("lookahead_tagger", config=blocks("lookahead_tagger", SAPO))
    train(nlp, ewt_examples(nlp.vocab, "train", 1000)[:800], 2)
    nlp.evaluate(ewt_examples(nlp.vocab, "train", 1000)[800:])
    assert nlp.get_pipe("lookahead_tagger").temperature < 1.0  # 2 epochs of SAPO: flat
    docs = list(nlp.pipe(Doc(nlp.vocab, words=[t.text for t in eg.reference])
                         for eg in ewt_examples(nlp.vocab, "dev", 200)))
    golds = [eg.reference for eg in ewt_examples(nlp.vocab, "dev", 200)]
    right, wrong = [], []
    for doc, gold in zip(docs, golds):
        for t, g in zip(doc, gold):
            assert 0.0 <= t._.tag_prob <= 1.0 + 1e-9
            (right if t.tag_ == g.tag_ else wrong).append(t._.tag_prob)
    assert len(right) / (len(right) + len(wrong)) > 0.85
    assert numpy.mean(right) > numpy.mean(wrong) + 0.15
    assert Doc(nlp.vocab, words=["a"])[0]._.tag_prob is None  # not tagged yet


def test_sapo_ner_scores_its_entities(shared_data):
    nlp = spacy.blank("en")
    nlp.add_pipe("lookahead_ner", config=blocks("lookahead_ner", {**SAPO, "direction": "rtl"}))
    train(nlp, words_only(jnlpba(shared_data, nlp.vocab, "train", 600)), 2)
    docs = list(nlp.pipe(Doc(nlp.vocab, words=[t.text for t in eg.reference])
                         for eg in jnlpba(shared_data, nlp.vocab, "test", 100)))
    assert sum(len(d.ents) for d in docs) > 20
    for doc in docs:
        group = doc.spans["ents"]
        assert [(e.start, e.end, e.label_) for e in doc.ents] == \
            [(s.start, s.end, s.label_) for s in group]
        assert numpy.all((group.attrs["scores"] >= 0) & (group.attrs["scores"] <= 1 + 1e-6))


@pytest.fixture(scope="module")
def ner_to_calibrate(shared_data):
    nlp = spacy.blank("en")
    nlp.add_pipe("lookahead_ner", config=blocks("lookahead_ner", {**SAPO, "direction": "rtl", "probabilities": "marginals"}))
    train(nlp, words_only(jnlpba(shared_data, nlp.vocab, "train", 600)), 2)
    return nlp


def span_log_loss(nlp, examples, tau):
    """The log-loss of the entity probabilities the model writes at
    temperature tau against whether each entity is a gold one."""
    ner = nlp.get_pipe("lookahead_ner")
    saved = ner.cfg["temperature"]
    ner.cfg["temperature"] = tau
    try:
        total = 0.0
        for eg, doc in zip(examples, nlp.pipe(eg.predicted.copy() for eg in examples)):
            gold = {(e.start, e.end, e.label_) for e in eg.reference.ents}
            for span, p in zip(doc.spans["ents"], doc.spans["ents"].attrs["scores"]):
                p = min(max(float(p), 1e-12), 1.0 - 1e-12)
                total -= math.log(p) if (span.start, span.end, span.label_) in gold \
                    else math.log1p(-p)
        return total
    finally:
        ner.cfg["temperature"] = saved


def test_temperature_is_fitted_on_what_is_scored_while_training_and_saved(ner_to_calibrate,
                                                                          shared_data, tmp_path):
    """temperature = null: the first scoring after training fits tau (with
    exact marginals: the least log-loss of the entity probabilities the
    model writes, against whether each entity is right) and the model
    keeps it: a second scoring, the saved model and its scoring of other
    data do not change it."""
    nlp = ner_to_calibrate
    ner = nlp.get_pipe("lookahead_ner")
    assert ner.temperature == 1.0 and "fitted_temperature" not in ner.cfg
    dev = words_only(jnlpba(shared_data, nlp.vocab, "train", 800)[600:])
    scores = nlp.evaluate(dev)
    tau = ner.temperature
    assert tau != 1.0 and scores["lookahead_ner_temperature"] == tau
    loss = lambda t: span_log_loss(nlp, dev, t)
    assert loss(tau) < min(loss(tau * 1.05), loss(tau / 1.05), loss(1.0))
    test = words_only(jnlpba(shared_data, nlp.vocab, "test", 100))
    nlp.evaluate(test)
    assert ner.temperature == tau
    nlp.to_disk(tmp_path / "model")
    loaded = spacy.load(tmp_path / "model")
    assert loaded.get_pipe("lookahead_ner").temperature == tau
    loaded.evaluate(test)
    assert loaded.get_pipe("lookahead_ner").temperature == tau
    docs = [eg.predicted for eg in test[:30]]
    for a, b in zip(nlp.pipe(d.copy() for d in docs), loaded.pipe(d.copy() for d in docs)):
        numpy.testing.assert_allclose(a.spans["ents"].attrs["scores"], b.spans["ents"].attrs["scores"])


def test_with_the_n_best_the_temperature_fits_the_gold_outputs(ner_to_calibrate, shared_data):
    """probabilities = "nbest" (no marginals to calibrate part by part):
    tau is the least NLL of the gold outputs under p(y | x)."""
    from spacy_lookahead.core.calibration import gold_derivations, negative_log_likelihood
    ner = ner_to_calibrate.get_pipe("lookahead_ner")
    saved = dict(ner.cfg)
    dev = words_only(jnlpba(shared_data, ner_to_calibrate.vocab, "train", 800)[600:])
    try:
        ner.cfg["probabilities"] = "nbest"
        tau = ner.fit_temperature(dev)
        golds = gold_derivations(ner.instances([eg.predicted for eg in dev], dev))
        assert len(golds) > 150
        nll = lambda t: negative_log_likelihood(golds, ner.averaged_weights, t)
        assert nll(tau) < min(nll(tau * 1.05), nll(tau / 1.05), nll(1.0))
        ner.cfg["probabilities"] = "marginals"
        assert abs(ner.fit_temperature(dev) - tau) > 0.01  # the parts' fit is another
    finally:
        ner.cfg.clear()
        ner.cfg.update(saved)


def test_a_fixed_temperature_is_kept_and_averaging_is_a_setting(shared_data):
    nlp = spacy.blank("en")
    ner = nlp.add_pipe("lookahead_ner", config=blocks("lookahead_ner", {**SAPO, "temperature": 1.5, "average": True}))
    train(nlp, words_only(jnlpba(shared_data, nlp.vocab, "train", 200)), 1)
    nlp.evaluate(words_only(jnlpba(shared_data, nlp.vocab, "test", 50)))
    assert ner.temperature == 1.5 and "fitted_temperature" not in ner.cfg
    # averaged: not the training weights, and saved as the averaged ones
    assert ner.averaged_weights is not ner.weights
    assert ner.averaged_weights.to_bytes() == ner.weights.average().to_bytes()


@pytest.mark.parametrize("config,message", [
    ({"temperature": 0}, "temperature must be null"),
    ({"temperature": "fit"}, "temperature"),
    ({"learner": "perceptron", "temperature": 1.0}, "temperature = 1.0 is read with "
                                                     "@learners = \"spacy_lookahead.SAPO.v1\""),
    ({"learner": "perceptron", "average": True}, "average"),
])
def test_bad_temperature_and_average_settings(config, message):
    nlp = spacy.blank("en")
    with pytest.raises(ValueError, match=message):
        nlp.add_pipe("lookahead_ner", config=blocks("lookahead_ner", {**SAPO, **config}))


def test_average_is_a_setting_of_sapo_only():
    """A perceptron averages by construction: its block has no `average`."""
    with pytest.raises(ValueError, match="unexpected argument: 'average'"):
        spacy.blank("en").add_pipe("lookahead_ner", config={"learner": {
            "@learners": "spacy_lookahead.MarginPerceptron.v1", "average": True}})


def test_perceptron_components_also_rank_nbest(shared_data):
    nlp = spacy.blank("en")
    nlp.add_pipe("lookahead_chunker", config=blocks("lookahead_chunker", {"depth": 0}))
    train(nlp, conll2000(shared_data, nlp.vocab, "train", 200), 1)
    doc = conll2000(shared_data, nlp.vocab, "test", 1)[0].predicted
    [nbest] = nlp.get_pipe("lookahead_chunker").predict_nbest([doc], n=3)
    assert len(nbest) == 3 and sum(p for _, p in nbest) == pytest.approx(1.0)
    assert "scores" not in nlp(doc).spans["chunks"].attrs  # perceptron: no probabilities


@pytest.mark.parametrize("setting, value", [
    ("n", 0), ("n", 2.5), ("learning_rate", 0), ("learning_rate", "fast"),
    ("learning_rate_decay", 1.5), ("learning_rate_decay", 0.0), ("l2", -1.0)])
def test_bad_learner_settings_are_named(setting, value):
    nlp = spacy.blank("en")
    with pytest.raises(ValueError, match=setting):
        nlp.add_pipe("lookahead_tagger", config=blocks("lookahead_tagger", {"learner": "sapo", setting: value}))


def test_sapo_update_before_initialize_is_a_clear_error():
    nlp = spacy.blank("en")
    tagger = nlp.add_pipe("lookahead_tagger", config=blocks("lookahead_tagger", SAPO))
    examples = ewt_examples(nlp.vocab, "train", 5)
    tagger.add_label("NN")
    with pytest.raises(ValueError, match="initialize"):
        tagger.update(examples)


def test_sapo_handles_empty_and_one_token_docs():
    nlp = spacy.blank("en")
    nlp.add_pipe("lookahead_tagger", config=blocks("lookahead_tagger", SAPO))
    train(nlp, ewt_examples(nlp.vocab, "train", 50), 1)
    assert len(nlp(Doc(nlp.vocab, words=[]))) == 0
    doc = nlp(Doc(nlp.vocab, words=["Hello"]))
    assert doc[0].tag_ and doc[0]._.tag_prob > 0
    long_doc = nlp(Doc(nlp.vocab, words=["word"] * 5000))
    assert all(t.tag_ for t in long_doc)


def _many_label_examples(nlp, n_labels=12, n_docs=30):
    """Random tags: every one of n_labels occurs."""
    from spacy.training import Example
    rng = numpy.random.default_rng(0)
    out = []
    for d in range(n_docs):
        words = [f"w{rng.integers(40)}" for _ in range(6)]
        tags = [f"T{(d * 6 + i) % n_labels}" for i in range(6)]
        out.append(Example(Doc(nlp.vocab, words=words), Doc(nlp.vocab, words=words, tags=tags)))
    return out


def test_exact_search_is_refused_above_its_label_limit(monkeypatch):
    """A* top-n and the lattice cost T * C^2 (issue 35: 2,262 labels took 39 s
    an epoch of 200 sentences with A*, 52 s to tag them with the lattice's
    marginals against 0.6 s): above the limits, errors at initialize that
    name the fix; "auto" probabilities and the temperature fit step aside
    (the n best, temperature 1); beam search trains and predicts."""
    from spacy.util import ConfigValidationError
    from spacy_lookahead.pipes import search, settings
    monkeypatch.setattr(search, "MAX_LABELS_EXACT_TOPN", 10)
    monkeypatch.setattr(settings, "MAX_LABELS_LATTICE", 10)
    for config, key, fix in [({**SAPO}, "search", '@search = "spacy_lookahead.Beam.v1"'),
                             ({**SAPO, "search": "beam", "probabilities": "marginals"},
                              "probabilities", 'probabilities = "nbest"'),
                             ({"alternatives": True}, "alternatives", "alternatives = false")]:
        nlp = spacy.blank("en")
        nlp.add_pipe("lookahead_tagger", config=blocks("lookahead_tagger", config))
        examples = _many_label_examples(nlp)
        with pytest.raises(ConfigValidationError, match=fix) as err:
            nlp.initialize(lambda: examples)
        assert err.value.errors[0]["loc"] == ["components", "lookahead_tagger", key]
        assert "12 labels (at most 10)" in str(err.value)
    nlp = spacy.blank("en")
    pipe = nlp.add_pipe("lookahead_tagger", config=blocks("lookahead_tagger", {**SAPO, "search": "beam"}))
    examples = _many_label_examples(nlp)
    nlp.initialize(lambda: examples)
    nlp.update(examples)
    assert not pipe.uses_marginals and not pipe._fits_temperature()
    scores = nlp.evaluate(examples)  # scores without a temperature fit
    assert pipe.temperature == 1.0 and scores["tag_acc"] > 0
    with pytest.raises(ValueError, match="set temperature to a number"):
        pipe.fit_temperature(examples)
    docs = list(nlp.pipe(eg.predicted.copy() for eg in examples))
    probs = [p for doc in docs for p in doc.user_data["tag_probs"]]
    assert all(0.0 <= p <= 1.0 for p in probs)
    # within the limits the same settings use the exact search and the lattice
    monkeypatch.setattr(search, "MAX_LABELS_EXACT_TOPN", 12)
    monkeypatch.setattr(settings, "MAX_LABELS_LATTICE", 12)
    assert pipe.uses_marginals and pipe._fits_temperature()
    assert search.TopN().exact_topn(pipe.system, pipe.name)


def test_sapo_with_marginals_writes_each_docs_own_lattice_figures(ner_to_calibrate, shared_data):
    """SAPO's best with its parts' probabilities decoded per batch
    (span_ids.BestParts, its threads taking the docs in turn): each doc's
    entities are the Viterbi best of its own lattice and their scores that lattice's span
    probabilities (span_scores), bit for bit, on one thread and on two,
    whitespace and empty docs included; a tagger's tag probabilities
    likewise (its lattice's step marginals, 1 on whitespace)."""
    from spacy_lookahead.core.marginals import Lattice, Transitions
    from spacy_lookahead.systems.span_ids import span_scores
    nlp = ner_to_calibrate
    ner = nlp.get_pipe("lookahead_ner")
    texts = [[t.text for t in eg.reference] for eg in jnlpba(shared_data, nlp.vocab, "test", 90)]
    texts[3:3] = [["IL-2", " ", "binds", "\n"], [], [" "]]
    kinds, types, parts, closed, biluo = ner.span_parts()
    W, tau = ner.averaged_weights, ner.temperature
    for threads in (1, 2):
        ner.cfg["n_threads"] = threads
        docs = list(nlp.pipe((Doc(nlp.vocab, words=w) for w in texts), batch_size=32))
        assert sum(len(d.ents) for d in docs) > 10
        for doc, words in zip(docs, texts):
            plain = Doc(nlp.vocab, words=words)
            inputs, indexes = ner.inputs_and_indexes([plain])
            [inst] = ner.instances([plain], None, indexes, inputs)
            lattice = Lattice(inst, W, tau, True, Transitions(ner.system, W, tau))
            path, _ = lattice.best()
            best = inst.output(path)
            want = span_scores(lattice, best, kinds, types, parts, closed, biluo, True)
            group = doc.spans["ents"]
            assert group.attrs["scores"].tobytes() == want.tobytes()
            content = [i for i, t in enumerate(doc) if not t.is_space]
            spans = [(content[s], content[e - 1] + 1) for s, e, _ in ids_to_spans(best, kinds, types)]
            assert [(e.start, e.end) for e in doc.ents] == spans
    ner.cfg["n_threads"] = 1
    tagger = spacy.blank("en")
    tagger.add_pipe("lookahead_tagger", config=blocks("lookahead_tagger", {**SAPO, "direction": "rtl"}))
    train(tagger, ewt_examples(tagger.vocab, "train", 300), 1)
    pipe = tagger.get_pipe("lookahead_tagger")
    words = [[t.text for t in eg.reference] for eg in ewt_examples(tagger.vocab, "dev", 40)]
    words[1:1] = [["Two", " ", "spaces"], []]
    for doc, w in zip(tagger.pipe((Doc(tagger.vocab, words=x) for x in words), batch_size=8), words):
        plain = Doc(tagger.vocab, words=w)
        inputs, indexes = pipe.inputs_and_indexes([plain])
        [inst] = pipe.instances([plain], None, indexes, inputs)
        lattice = Lattice(inst, pipe.averaged_weights, pipe.temperature)
        path, _ = lattice.best()
        probs = lattice.step_probabilities(path)[::-1].tolist()  # rtl: document order
        assert [t._.tag_prob for t in doc if not t.is_space] == probs
        assert all(t._.tag_prob == 1.0 for t in doc if t.is_space)
        assert [t.tag_ for t in doc if not t.is_space] == [pipe.labels[a] for a in path[::-1]]


def written_per_doc(pipe, docs):
    """What the component wrote before its n best were kept per batch: each
    doc's n best (decoding.nbest, the learner's decoder), its Prediction
    (nbest_prediction, whitespace filled in) and set_annotations per doc."""
    from spacy_lookahead.pipes.transition import TransitionPipe
    run, args = pipe._decoder()
    inputs, indexes = pipe.inputs_and_indexes(docs)
    results = run(list(pipe.instances(docs, None, indexes, inputs)), *args)
    pipe.set_annotations(docs, TransitionPipe._predictions(pipe, docs, indexes, results))
    return docs


@pytest.mark.parametrize("exact", [True, False])
def test_n_best_kept_per_batch_give_each_docs_own_probabilities(ner_to_calibrate, shared_data,
                                                                monkeypatch, exact):
    """probabilities = "nbest": the batch's n best kept by decode_docs (A*,
    or a beam where the search is not exact) give each doc what its own n
    best gave it (written_per_doc): the same entities and, bit for bit, their
    scores (the mass of the n best that hold each), on one thread and on
    two, whitespace and empty docs included; a tagger's tags and their
    probabilities (the mass of the n best that agree) likewise."""
    from spacy_lookahead.pipes import search
    if not exact:
        monkeypatch.setattr(search.Search, "exact_topn", lambda self, system, name: False)
    nlp = ner_to_calibrate
    ner = nlp.get_pipe("lookahead_ner")
    saved = dict(ner.cfg)
    texts = [[t.text for t in eg.reference] for eg in jnlpba(shared_data, nlp.vocab, "test", 90)]
    texts[3:3] = [["IL-2", " ", "binds", "\n"], [], [" "]]

    def entities(docs):
        return [([(e.start, e.end, e.label_) for e in d.ents],
                 d.spans["ents"].attrs["scores"].tobytes()) for d in docs]

    try:
        ner.cfg["probabilities"] = "nbest"
        want = entities(written_per_doc(ner, [Doc(nlp.vocab, words=w) for w in texts]))
        assert sum(len(e) for e, _ in want) > 20
        for threads in (1, 2):
            ner.cfg["n_threads"] = threads
            got = entities(nlp.pipe((Doc(nlp.vocab, words=w) for w in texts), batch_size=32))
            assert got == want
    finally:
        ner.cfg.clear()
        ner.cfg.update(saved)
    tagger = spacy.blank("en")
    tagger.add_pipe("lookahead_tagger", config=blocks("lookahead_tagger",
                                                      {**SAPO, "probabilities": "nbest"}))
    train(tagger, ewt_examples(tagger.vocab, "train", 300), 1)
    pipe = tagger.get_pipe("lookahead_tagger")
    words = [[t.text for t in eg.reference] for eg in ewt_examples(tagger.vocab, "dev", 60)]
    words[1:1] = [["Two", " ", "spaces"], [], ["\n"]]

    def tags(docs):
        return [([t.tag_ for t in d], d.user_data["tag_probs"].tobytes()) for d in docs]

    want = tags(written_per_doc(pipe, [Doc(tagger.vocab, words=w) for w in words]))
    assert len({p for _, p in want}) > 10
    for threads in (1, 2):
        pipe.cfg["n_threads"] = threads
        assert tags(tagger.pipe((Doc(tagger.vocab, words=w) for w in words), batch_size=16)) == want
