"""The arc_standard_parser component: learning on real slices (floors a
broken model fails), outputs on odd docs, sentence boundaries, inputs,
round trips and bad configs."""
import dataclasses
import random
import warnings

import numpy
import pytest
import spacy
from spacy.tokens import Doc
from spacy.training import Example
from spacy_lookahead.pipes.parser import ArcStandardParser  # noqa: F401 (registers the factory)
from spacy_lookahead.pipes.prediction import Trees
from spacy_lookahead.pipes.transition import Prediction, TransitionPipe

from conftest import reload_pipeline
from engine import predict
from parse_data import gold_docs, parse_examples, words_only
from blocks import blocks
from spacy_lookahead.pipes.search import Beam, Greedy, Lookahead


def train_parser(config, n_train=800, epochs=2, n_sents=4):
    nlp = spacy.blank("en")
    parser = nlp.add_pipe("arc_standard_parser", config=blocks("arc_standard_parser", config))
    # several sentences per doc, so that it learns to leave several roots
    train = parse_examples(nlp.vocab, "ewt", "train", n_train, n_sents)
    parser.initialize(lambda: train)
    rng = random.Random(0)
    for _ in range(epochs):
        rng.shuffle(train)
        for i in range(0, len(train), 25):
            parser.update(train[i:i + 25])
    return nlp


def dev_scores(nlp, n=300):
    gold = gold_docs(nlp.vocab, "ewt", "dev", n)
    docs = list(nlp.pipe(words_only(nlp.vocab, d, tags=True) for d in gold))
    return nlp.get_pipe("arc_standard_parser").scorer([Example(p, g) for p, g in zip(docs, gold)])


@pytest.fixture(scope="module")
def greedy_nlp(shared_data):
    return train_parser({"search": "greedy", "min_label_freq": 1})


@pytest.fixture(scope="module")
def beam_nlp(shared_data):
    # one update per doc: single-sentence docs learn faster
    return train_parser({"search": "beam", "beam_width": 4, "update": "max_violation"}, 600, 2,
                        n_sents=1)


@pytest.fixture(scope="module")
def rich_nlp(shared_data):
    return train_parser({"search": "greedy", "min_label_freq": 1, "features": "rich"})


def test_greedy_learns(greedy_nlp):
    scores = dev_scores(greedy_nlp)
    # 800 sentences, 2 epochs: about 0.74 UAS (a parser always attaching to
    # the next word gets about 0.3); sentence boundaries come from the trees.
    assert scores["dep_uas"] > 0.68 and scores["dep_las"] > 0.6
    assert scores["sents_f"] > 0.8


def test_rich_features_learn(rich_nlp):
    """features = "rich" (third-order, label sets, suffixes): the floors of
    the base set's greedy parser, on the same data."""
    parser = rich_nlp.get_pipe("arc_standard_parser")
    assert parser.cfg["features"] == "rich" and parser.system.rich
    scores = dev_scores(rich_nlp)
    assert scores["dep_uas"] > 0.68 and scores["dep_las"] > 0.6
    assert scores["sents_f"] > 0.8


def test_beam_learns_and_counts_updates(beam_nlp):
    scores = dev_scores(beam_nlp)
    assert scores["dep_uas"] > 0.6
    stats = beam_nlp.get_pipe("arc_standard_parser").update_stats
    assert stats["docs"] == 1200 and stats["updates"] > 0 and stats["invalid"] == 0


def test_lookahead_setting_predicts_with_depth(greedy_nlp):
    parser = greedy_nlp.get_pipe("arc_standard_parser")
    gold = gold_docs(greedy_nlp.vocab, "ewt", "dev", 30)
    docs = [words_only(greedy_nlp.vocab, d, tags=True) for d in gold]
    inputs = parser._inputs(docs)
    W = parser.averaged_weights
    d1 = predict(parser.system, inputs, W, search="lookahead", depth=1)
    d0 = predict(parser.system, inputs, W, search="greedy")
    assert any((a[0] != b[0]).any() for a, b in zip(d0, d1))  # the search changes decisions
    for heads, _ in d1:
        assert ((heads >= 0) & (heads < len(heads))).all()


def test_predict_width_is_the_beam_at_prediction_only(shared_data):
    """Beam.v1's predict_width: training runs the beam of `width` (the same
    weights, bit for bit), prediction the wider beam (the same parses as a
    parser whose training width is that wide, given those weights)."""
    beam = {"@search": "spacy_lookahead.Beam.v1", "width": 2, "update": "early"}
    learner = {"@learners": "spacy_lookahead.ViolationFixing.v1"}
    narrow = train_parser({"search": beam, "learner": learner}, 200, 1, n_sents=1)
    wide = train_parser({"search": {**beam, "predict_width": 16}, "learner": learner}, 200, 1,
                        n_sents=1)
    a, b = narrow.get_pipe("arc_standard_parser"), wide.get_pipe("arc_standard_parser")
    assert b.search == Beam(width=2, update="early", predict_width=16)
    assert b.cfg["search"]["predict_width"] == 16 and "predict_width" not in a.cfg["search"]
    assert a.weights.to_bytes() == b.weights.to_bytes()
    gold = gold_docs(narrow.vocab, "ewt", "dev", 100)
    inputs = a._inputs([words_only(narrow.vocab, d, tags=True) for d in gold])
    W = a.averaged_weights
    k2, k16 = (predict(a.system, inputs, W, search="beam", beam_width=k) for k in (2, 16))
    assert any((x[0] != y[0]).any() for x, y in zip(k2, k16))  # the width matters here

    def parses(nlp):
        docs = nlp.pipe(words_only(nlp.vocab, d, tags=True) for d in gold)
        return [[t.head.i for t in doc] for doc in docs]
    assert parses(wide) == [list(heads) for heads, _ in k16]
    assert parses(narrow) == [list(heads) for heads, _ in k2]
    # the n best come from the beam at prediction too (their best: its parse)
    docs = [words_only(wide.vocab, d, tags=True) for d in gold]
    best = [list(outputs[0][0]) for outputs, _ in b.nbest_scores(docs, 3)]
    assert best == [list(heads) for heads, _ in k16]
    # a beam at prediction narrower than training's is allowed (faster), with
    # a warning: a config that widens `width` alone would otherwise narrow it
    with pytest.warns(UserWarning, match="predict_width = null"):
        spacy.blank("en").add_pipe("arc_standard_parser", config={
            "search": {**beam, "width": 16, "predict_width": 10}, "learner": learner})


def check_tree(doc):
    heads = numpy.array([t.head.i for t in doc])
    for t in doc:  # no cycles: every token reaches a root
        seen, i = 0, t.i
        while heads[i] != i:
            i = heads[i]
            seen += 1
            assert seen <= len(doc)
    assert all(t.dep_ and "||" not in t.dep_ for t in doc)
    assert all(t.dep_ == "ROOT" for t in doc if t.head.i == t.i)
    assert doc.has_annotation("SENT_START") and len(list(doc.sents)) >= 1


@pytest.mark.parametrize("search", [Greedy(), Lookahead(depth=1), Beam(width=8)])
def test_odd_docs(greedy_nlp, search):
    parser = greedy_nlp.get_pipe("arc_standard_parser")
    before, parser.search = parser.search, search  # (prediction reads the search)
    try:
        vocab = greedy_nlp.vocab
        empty = Doc(vocab, words=[], tags=[])
        one = Doc(vocab, words=["Hello"], tags=["UH"])
        sents = gold_docs(vocab, "ewt", "dev", 80)
        words = [t.text for d in sents for t in d][:1000]
        tags = [t.tag_ for d in sents for t in d][:1000]
        long_doc = Doc(vocab, words=words, tags=tags)
        assert len(long_doc) == 1000
        out = list(greedy_nlp.pipe([empty, one, long_doc]))
        assert len(out[0]) == 0
        assert out[1][0].head.i == 0 and out[1][0].dep_ == "ROOT" and out[1][0].is_sent_start
        check_tree(out[2])
        assert len(list(out[2].sents)) > 20  # a multi-sentence doc gets several roots
    finally:
        parser.search = before


def test_respect_sent_starts(greedy_nlp):
    parser = greedy_nlp.get_pipe("arc_standard_parser")
    gold = gold_docs(greedy_nlp.vocab, "ewt", "dev", 12)
    words = [t.text for d in gold for t in d]
    starts = [t.i == 0 for d in gold for t in d]
    tags = [t.tag_ for d in gold for t in d]
    parser.cfg["respect_sent_starts"] = True
    try:
        doc = parser(Doc(greedy_nlp.vocab, words=words, tags=tags, sent_starts=starts))
    finally:
        parser.cfg["respect_sent_starts"] = False
    check_tree(doc)
    assert [s.start for s in doc.sents] == [i for i, s in enumerate(starts) if s]


def test_non_projective_training_trees_are_lifted_and_restored(greedy_nlp):
    parser = greedy_nlp.get_pipe("arc_standard_parser")
    assert any("||" in label for label in parser.labels)  # decorated labels were learnt
    # a decorated label in the output is de-projectivised on the doc
    doc = Doc(greedy_nlp.vocab, words=["a", "b", "c", "d"], tags=["DT", "NN", "VBZ", "RB"])
    deco = next(label for label in parser.labels if "||" in label)
    base, head_label = deco.split("||")
    lid = {label: i for i, label in enumerate(parser.labels)}
    heads = numpy.array([1, 2, 2, 2], dtype="int32")
    labels = numpy.array([lid[deco], lid.get(head_label, 0), -1, lid[base]], dtype="int32")
    parser.set_annotations([doc], [Prediction((heads, labels))])
    assert all("||" not in t.dep_ for t in doc)
    assert doc[0].dep_ == base


def test_tags_taken_from_the_gold_while_training_required_at_prediction(greedy_nlp):
    parser = greedy_nlp.get_pipe("arc_standard_parser")
    eg = parse_examples(greedy_nlp.vocab, "ewt", "train", 1)[0]
    assert not eg.predicted.has_annotation("TAG")
    parser.update([eg])  # tags come from the reference
    with pytest.raises(ValueError, match="needs POS tags"):
        parser(eg.predicted.copy())


@pytest.mark.parametrize("how", ["bytes", "disk", "pickle"])
def test_round_trip(greedy_nlp, tmp_path, how):
    gold = gold_docs(greedy_nlp.vocab, "ewt", "dev", 100)
    docs = [words_only(greedy_nlp.vocab, d, tags=True) for d in gold]
    before = [[(t.head.i, t.dep_) for t in d] for d in greedy_nlp.pipe([d.copy() for d in docs])]
    if how == "bytes":  # search settings come from the config, as with spacy.load
        other = spacy.blank("en")
        other.add_pipe("arc_standard_parser", config=blocks("arc_standard_parser", {"search": "greedy", "min_label_freq": 1}))
        other.from_bytes(greedy_nlp.to_bytes())
    else:
        other = reload_pipeline(greedy_nlp, how, tmp_path / "model")
    after = [[(t.head.i, t.dep_) for t in d] for d in other.pipe([d.copy() for d in docs])]
    assert before == after
    p1, p2 = greedy_nlp.get_pipe("arc_standard_parser"), other.get_pipe("arc_standard_parser")
    assert p2.labels == p1.labels and p2.cfg["root_label"] == p1.cfg["root_label"]
    assert p2.averaged_weights.to_bytes() == p1.averaged_weights.to_bytes()


@pytest.mark.parametrize("how", ["bytes", "disk", "pickle"])
def test_rich_round_trip_restores_the_feature_set(rich_nlp, tmp_path, how):
    """A rich model predicts the same after a round trip and keeps its
    feature set, even where the loading config says "base"."""
    gold = gold_docs(rich_nlp.vocab, "ewt", "dev", 60)
    docs = [words_only(rich_nlp.vocab, d, tags=True) for d in gold]
    before = [[(t.head.i, t.dep_) for t in d] for d in rich_nlp.pipe([d.copy() for d in docs])]
    if how == "bytes":  # a config with the default feature set
        other = spacy.blank("en")
        other.add_pipe("arc_standard_parser", config=blocks("arc_standard_parser", {"search": "greedy", "min_label_freq": 1}))
        assert other.get_pipe("arc_standard_parser").cfg["features"] == "base"
        other.from_bytes(rich_nlp.to_bytes())
    else:
        other = reload_pipeline(rich_nlp, how, tmp_path / "model")
    parser = other.get_pipe("arc_standard_parser")
    assert parser.cfg["features"] == "rich" and parser.system.rich
    after = [[(t.head.i, t.dep_) for t in d] for d in other.pipe([d.copy() for d in docs])]
    assert before == after


def test_a_model_saved_before_the_feature_setting_loads_as_base(greedy_nlp, tmp_path):
    """A model whose cfg has no `features` (saved before the setting) was
    trained with the base set: it loads as "base" whatever the config says."""
    import srsly
    greedy_nlp.to_disk(tmp_path / "model")
    cfg_path = tmp_path / "model" / "arc_standard_parser" / "cfg"
    cfg = srsly.read_json(cfg_path)
    assert cfg.pop("features") == "base"
    srsly.write_json(cfg_path, cfg)
    nlp = spacy.load(tmp_path / "model",
                     config={"components": {"arc_standard_parser": {"features": "rich"}}})
    parser = nlp.get_pipe("arc_standard_parser")
    assert parser.cfg["features"] == "base" and not parser.system.rich
    gold = gold_docs(nlp.vocab, "ewt", "dev", 30)
    docs = [words_only(nlp.vocab, d, tags=True) for d in gold]
    before = [[(t.head.i, t.dep_) for t in d] for d in greedy_nlp.pipe([d.copy() for d in docs])]
    after = [[(t.head.i, t.dep_) for t in d] for d in nlp.pipe([d.copy() for d in docs])]
    assert before == after


def test_a_rich_model_whose_cfg_says_base_is_refused(rich_nlp, tmp_path):
    """The weights' checksum covers a feature set that is not the default:
    a saved cfg edited from rich to base (or with the setting removed)
    would predict with the wrong features, and is refused instead."""
    import srsly
    from spacy_lookahead.pipes.integrity import ModelFileError
    rich_nlp.to_disk(tmp_path / "model")
    cfg_path = tmp_path / "model" / "arc_standard_parser" / "cfg"
    cfg = srsly.read_json(cfg_path)
    for edit in ("base", None):
        if edit is None:
            cfg.pop("features")
        else:
            cfg["features"] = edit
        srsly.write_json(cfg_path, cfg)
        with pytest.raises(ModelFileError):
            spacy.load(tmp_path / "model")


@pytest.mark.parametrize("setting,value,message", [
    ("search", "dfs", r"search[\s\S]*dfs"),
    ("search", {"@search": "spacy_lookahead.Lookahead.v1", "depth": -1},
     "depth must be an integer in 0..3"),
    ("search", {"@search": "spacy_lookahead.Lookahead.v1", "depth": 9},
     "depth must be an integer in 0..3"),
    ("learner", {"@learners": "spacy_lookahead.MarginPerceptron.v1", "margin": -2},
     "margin must be a number >= 0"),
    ("search", {"@search": "spacy_lookahead.Beam.v1", "width": 0},
     "width must be an integer in 1..1000"),
    ("search", {"@search": "spacy_lookahead.Beam.v1", "update": "late"}, r"update[\s\S]*late"),
    ("search", {"@search": "spacy_lookahead.Beam.v1", "predict_width": 0},
     r"predict_width must be an integer in 1..1000 or null"),
    ("min_label_freq", 0, "min_label_freq must be an integer >= 1"),
    ("features", "richer", r"features[\s\S]*richer"),
])
def test_bad_config(setting, value, message):
    with pytest.raises(ValueError, match=message):
        spacy.blank("en").add_pipe("arc_standard_parser", config={setting: value})


def test_a_wrong_feature_set_names_the_choices():
    with pytest.raises(ValueError, match='got \'richer\'. Set features = "base"'):
        ArcStandardParser(spacy.blank("en").vocab, features="richer")


def test_untrained_and_unannotated():
    nlp = spacy.blank("en")
    parser = nlp.add_pipe("arc_standard_parser")
    with pytest.raises(ValueError, match="has no labels"):
        parser(Doc(nlp.vocab, words=["a"], tags=["DT"]))
    eg = Example(Doc(nlp.vocab, words=["a"]), Doc(nlp.vocab, words=["a"]))
    with pytest.raises(ValueError, match="no dependency annotation"):
        parser.initialize(lambda: [eg])


@pytest.fixture(scope="module")
def tagged_with_alternatives(shared_data):
    """A small tagger with alternatives, and EWT sentences it tagged."""
    nlp = spacy.blank("en")
    tagger = nlp.add_pipe("lookahead_tagger", config=blocks("lookahead_tagger", {"alternatives": True, "depth": 0,
                                                      "search": "greedy"}))
    train = parse_examples(nlp.vocab, "ewt", "train", 400)
    tagger.initialize(lambda: train)
    for _ in range(2):
        tagger.update(train)
    nlp.evaluate(parse_examples(nlp.vocab, "ewt", "dev", 100))  # fits its temperature

    def tagged(split, n):
        gold = gold_docs(nlp.vocab, "ewt", split, n)
        return [Example(d, g) for d, g in zip(nlp.pipe(words_only(nlp.vocab, g) for g in gold), gold)]
    return nlp, tagged


def test_tag_alternatives_learn_from_a_tagger_and_are_required(tagged_with_alternatives,
                                                               tmp_path):
    """A parser with tag_alternatives trains on a tagger's tags and
    alternatives, parses above a floor from them, keeps the setting in a
    round trip, and refuses docs whose tags come without alternatives."""
    tagger_nlp, tagged = tagged_with_alternatives
    train, dev = tagged("train", 800), tagged("dev", 300)
    assert any(t._.tag_alternative for eg in train[:20] for t in eg.predicted)
    nlp = spacy.blank("en", vocab=tagger_nlp.vocab)
    parser = nlp.add_pipe("arc_standard_parser", config=blocks("arc_standard_parser", {"search": "greedy", "min_label_freq": 1,
                                                         "tag_alternatives": True}))
    parser.initialize(lambda: train)
    for _ in range(2):
        for i in range(0, len(train), 25):
            parser.update(train[i:i + 25])
    assert parser.system.alternatives
    scores = nlp.evaluate(dev)
    assert scores["dep_uas"] > 0.6, scores
    again = reload_pipeline(nlp, "disk", tmp_path)
    assert again.get_pipe("arc_standard_parser").cfg["tag_alternatives"] is True
    parsed = [again(eg.predicted.copy()) for eg in dev[:30]]
    original = [nlp(eg.predicted.copy()) for eg in dev[:30]]
    assert [[t.head.i for t in d] for d in parsed] == [[t.head.i for t in d] for d in original]
    plain = words_only(nlp.vocab, dev[0].reference, tags=True)
    with pytest.raises(ValueError, match="alternatives = true on the lookahead_tagger"):
        nlp(plain)


def test_gil_benchmark_feeds_a_joint_parser_its_taggers_outputs(tagged_with_alternatives,
                                                                shared_data, tmp_path):
    """benchmarks.gil times a parser that reads a tagger's alternatives
    (the shipped pipeline's) on the words through the components before it,
    which gold docs cannot stand in for (they have no alternatives: the
    parser would refuse them); other components keep their gold inputs."""
    import json
    import platform
    from datetime import datetime

    from benchmarks import gil
    tagger_nlp, tagged = tagged_with_alternatives
    nlp = spacy.blank("en", vocab=tagger_nlp.vocab)
    nlp.add_pipe("lookahead_tagger", source=tagger_nlp)
    parser = nlp.add_pipe("arc_standard_parser", config=blocks("arc_standard_parser", {
        "search": "greedy", "min_label_freq": 1, "tag_alternatives": True}))
    train = tagged("train", 200)
    parser.initialize(lambda: train)
    parser.update(train)
    nlp.to_disk(tmp_path / "model")
    assert gil.main([str(tmp_path / "model"), "--data", str(shared_data), "--copies", "1",
                     "--min-seconds", "0", "--repeats", "1", "--threads", "1", "2",
                     "--output", str(tmp_path / "gil.json")]) == 0
    record = json.loads((tmp_path / "gil.json").read_text())
    # dated and placed like the speed runs' records (results.md lists both)
    assert datetime.fromisoformat(record["date"]).tzinfo is not None
    assert record["machine"]["python"] == platform.python_version()
    rows = {r["component"]: r for r in record["rows"]}
    assert rows["lookahead_tagger"]["inputs"] == "gold"
    assert rows["arc_standard_parser"]["inputs"] == "pipeline"
    assert rows["arc_standard_parser"]["tokens"] == rows["lookahead_tagger"]["tokens"] > 20000
    for row in rows.values():
        assert row["identical"] and 0 <= row["gil_share"] < 1


def test_joint_tagging_chooses_between_the_taggers_tags(tagged_with_alternatives, tmp_path):
    """joint_tagging: one more action (SHIFT-ALT); the parser trains on a
    tagger's tags and alternatives with the gold tags as the gold of its
    shifts, parses above a floor, writes the tag it chose (the tagger's
    or, where likely, its alternative; some of each), keeps the setting and
    the outputs in a round trip, and needs tag_alternatives."""
    from spacy_lookahead.pipes.parser import ALTERNATIVE_MIN_PROB
    tagger_nlp, tagged = tagged_with_alternatives
    train, dev = tagged("train", 800), tagged("dev", 200)
    nlp = spacy.blank("en", vocab=tagger_nlp.vocab)
    parser = nlp.add_pipe("arc_standard_parser", config=blocks("arc_standard_parser", {
        "search": "beam", "beam_width": 4, "update": "early", "min_label_freq": 1,
        "tag_alternatives": True, "joint_tagging": True}))
    parser.initialize(lambda: train)
    gold_alt = [parser.gold(eg)[2] for eg in train]
    assert 0 < sum(a.sum() for a in gold_alt) < 0.2 * sum(len(a) for a in gold_alt)
    for _ in range(2):
        for i in range(0, len(train), 25):
            parser.update(train[i:i + 25])
    assert parser.system.joint and parser.system.nr_class == 2 + 2 * len(parser.labels)
    assert nlp.evaluate(dev)["dep_uas"] > 0.5
    changed = kept = 0
    parsed = [nlp(eg.predicted.copy()) for eg in dev]
    for doc, eg in zip(parsed, dev):
        for t, before in zip(doc, eg.predicted):
            alternative, p = before._.tag_alternative or (None, 0.0)
            if t.tag_ != before.tag_:
                assert t.tag_ == alternative and p >= ALTERNATIVE_MIN_PROB
                changed += 1
            elif alternative is not None and p >= ALTERNATIVE_MIN_PROB:
                kept += 1
    assert changed > 0 and kept > changed
    again = reload_pipeline(nlp, "disk", tmp_path)
    assert again.get_pipe("arc_standard_parser").cfg["joint_tagging"] is True
    for doc, eg in zip(parsed[:30], dev[:30]):
        other = again(eg.predicted.copy())
        assert [(t.head.i, t.dep_, t.tag_) for t in other] == \
            [(t.head.i, t.dep_, t.tag_) for t in doc]
    with pytest.raises(ValueError, match="set tag_alternatives = true"):
        spacy.blank("en").add_pipe("arc_standard_parser", config={"joint_tagging": True})


def head_log_loss(nlp, examples, tau):
    """The log-loss of the head probabilities the parser writes at
    temperature tau (token._.head_prob) against whether each token's
    written head and label are the gold ones."""
    parser = nlp.get_pipe("arc_standard_parser")
    saved = parser.cfg["temperature"]
    parser.cfg["temperature"] = tau
    try:
        total = 0.0
        for eg, doc in zip(examples, nlp.pipe(words_only(nlp.vocab, eg.reference, tags=True)
                                              for eg in examples)):
            for t, g in zip(doc, eg.reference):
                p = min(max(t._.head_prob, 1e-12), 1.0 - 1e-12)
                right = t.head.i == g.head.i and t.dep_.lower() == g.dep_.lower()
                total -= numpy.log(p) if right else numpy.log1p(-p)
        return total
    finally:
        parser.cfg["temperature"] = saved


def test_sapo_fits_the_temperature_of_its_head_probabilities_on_dev_and_keeps_it(tmp_path):
    """SAPO with temperature = null: the first scoring after training fits
    tau to the least log-loss of the head probabilities the parser writes
    (against whether the head and label are right); the model keeps it
    through a second scoring and a round trip. A fixed temperature is
    kept; a perceptron refuses one."""
    nlp = train_parser({"learner": "sapo", "search": "beam", "beam_width": 8})
    parser = nlp.get_pipe("arc_standard_parser")
    assert parser.temperature == 1.0 and "fitted_temperature" not in parser.cfg
    dev = [Example(words_only(nlp.vocab, g, tags=True), g)
           for g in gold_docs(nlp.vocab, "ewt", "dev", 150)]
    scores = nlp.evaluate(dev)
    tau = parser.temperature
    assert tau != 1.0 and scores["arc_standard_parser_temperature"] == tau
    loss = lambda t: head_log_loss(nlp, dev, t)
    assert loss(tau) < min(loss(tau * 1.05), loss(tau / 1.05), loss(1.0))
    nlp.evaluate(dev[:40])
    assert parser.temperature == tau
    loaded = reload_pipeline(nlp, "disk", tmp_path)
    assert loaded.get_pipe("arc_standard_parser").temperature == tau
    docs = [words_only(nlp.vocab, eg.reference, tags=True) for eg in dev[:20]]
    for a, b in zip(nlp.pipe(docs), loaded.pipe(d.copy() for d in docs)):
        assert [t._.head_prob for t in a] == [t._.head_prob for t in b]
    # a batch decoded at once keeps each beam's n best (DocsOutput's keep):
    # the docs decoded one by one get the same, bit for bit, and each
    # head_prob is the softmax mass (at tau) of the n best that agree
    batch = parsed_alike_in_batch_and_one_by_one(nlp, docs, 8)
    for doc, (trees, found) in zip(batch, parser.nbest_scores([d.copy() for d in docs], 5)):
        agree = numpy.asarray([(tree[0] == trees[0][0]) & (tree[1] == trees[0][1])
                               for tree in trees])
        e = numpy.exp((found - found.max()) / tau)
        assert numpy.allclose([t._.head_prob for t in doc], e / e.sum() @ agree)
    fixed = train_parser({"learner": "sapo", "search": "beam", "temperature": 2.0},
                         n_train=100, epochs=1)
    fixed.evaluate(dev[:40])
    assert fixed.get_pipe("arc_standard_parser").temperature == 2.0
    assert "fitted_temperature" not in fixed.get_pipe("arc_standard_parser").cfg
    with pytest.raises(ValueError, match="temperature = 2.0 is read with @learners"):
        spacy.blank("en").add_pipe("arc_standard_parser", config={"temperature": 2.0})


def test_a_doc_parses_alike_in_a_batch_and_alone(beam_nlp):
    """The beam keeps its score cache from doc to doc of a batch while the
    docs' memory is freed and reused: short docs of one length must not get
    each other's scores (keyed by each doc's own number, not its address).
    Every dev doc of up to 3 words parses the same in one batch as alone."""
    gold = [d for d in gold_docs(beam_nlp.vocab, "ewt", "dev", 2001) if len(d) <= 3]
    assert len(gold) > 200
    batch = list(beam_nlp.pipe((words_only(beam_nlp.vocab, d, tags=True) for d in gold),
                               batch_size=1000))
    for doc, g in zip(batch, gold):
        alone = beam_nlp(words_only(beam_nlp.vocab, g, tags=True))
        assert [(t.head.i, t.dep_) for t in doc] == [(t.head.i, t.dep_) for t in alone]


def test_a_parser_with_cluster_templates_learns_and_round_trips(shared_data, tmp_path):
    """features as a list: the rich set plus Koo et al.'s cluster templates
    over stack and buffer positions, reading the vocab's table (here one
    made from the words' own tags); the model keeps them when loaded."""
    features = ["preset:rich", "cluster6[s0]", "cluster6[q0]", "cluster6[s0] cluster6[q0]",
                "cluster6[s1] tag[s0]"]
    nlp = spacy.blank("en")
    clusters, tags = {}, {}
    for doc in gold_docs(nlp.vocab, "ewt", "train", 800):
        for t in doc:
            clusters.setdefault(t.text, 0b1000000 | tags.setdefault(t.tag_, len(tags) + 1))
    nlp.vocab.lookups.add_table("lexeme_cluster", clusters)
    parser = nlp.add_pipe("arc_standard_parser", config=blocks("arc_standard_parser", {"search": "greedy",
                                                         "min_label_freq": 1,
                                                         "features": features}))
    train = parse_examples(nlp.vocab, "ewt", "train", 800, 4)
    parser.initialize(lambda: train)
    for _ in range(2):
        for i in range(0, len(train), 25):
            parser.update(train[i:i + 25])
    assert parser.system.templates == features[1:] and parser.rich_features
    assert dev_scores(nlp)["dep_uas"] > 0.70
    nlp.to_disk(tmp_path / "m")
    loaded = spacy.load(tmp_path / "m")
    gold = gold_docs(nlp.vocab, "ewt", "dev", 30)
    heads = [[t.head.i for t in d] for d in nlp.pipe(words_only(nlp.vocab, d, tags=True)
                                                     for d in gold)]
    again = [[t.head.i for t in d] for d in loaded.pipe(words_only(loaded.vocab, d, tags=True)
                                                        for d in gold)]
    assert again == heads and loaded.get_pipe("arc_standard_parser").cfg["features"] == features
    # ... sourced into a pipeline whose vocab has another cluster table: it
    # reads its own, the table it was trained with
    other = spacy.blank("en")
    other.vocab.lookups.add_table("lexeme_cluster", {word: 0b1000001 for word in clusters})
    other.add_pipe("arc_standard_parser", source=loaded)
    sourced = [[t.head.i for t in d] for d in other.pipe(words_only(other.vocab, d, tags=True)
                                                         for d in gold)]
    assert sourced == heads and other.vocab["the"].cluster == 0b1000001


@pytest.mark.parametrize("features,words", [
    (["preset:rich", "lowr[s0]"], "unknown atom 'lowr'"),
    (["preset:rich", "lower[s5]"], "'s5' is not a position"),
    (["preset:base", "preset:rich"], "one preset"),
])
def test_a_bad_parser_template_is_named(features, words):
    with pytest.raises(ValueError, match=words):
        spacy.blank("en").add_pipe("arc_standard_parser", config={"features": features})


def arcs(docs):
    return [[(t.head.i, t.dep_, t.is_sent_start) for t in d] for d in docs]


def parsed_alike_in_batch_and_one_by_one(nlp, docs, batch_size):
    """Copies of the docs parsed with the batch decoded at once: the same
    arcs and head probabilities, bit for bit, as the docs decoded one by one."""
    batch = list(nlp.pipe((d.copy() for d in docs), batch_size=batch_size))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(TransitionPipe, "_decodes_docs", lambda self, run, args: False)
        one_by_one = list(nlp.pipe((d.copy() for d in docs), batch_size=batch_size))
    assert arcs(batch) == arcs(one_by_one)
    assert [[t._.head_prob for t in d] for d in batch] == \
        [[t._.head_prob for t in d] for d in one_by_one]
    return batch


def test_a_calibrated_beam_perceptron_writes_head_probabilities(beam_nlp, tmp_path):
    """A beam perceptron (ViolationFixing, width 4) writes no head
    probabilities, and keeps no n best, until fit_temperature fits tau on
    held-out docs; then each token's head_prob is the softmax mass (at tau)
    of the final beam's parses that give it the written head and label: in
    (0, 1], 1 where the whole beam agrees. The parses stay as they were;
    tau minimises the held-out log-loss; it survives bytes and disk."""
    nlp = reload_pipeline(beam_nlp, "bytes", tmp_path)  # (the fixture stays uncalibrated)
    parser = nlp.get_pipe("arc_standard_parser")
    dev = [Example(words_only(nlp.vocab, g, tags=True), g)
           for g in gold_docs(nlp.vocab, "ewt", "dev", 300)]
    fit, held = dev[:150], [eg.predicted for eg in dev[150:]]
    plain = list(nlp.pipe(d.copy() for d in held))
    assert all(t._.head_prob is None for d in plain for t in d)
    assert parser.predict(held[:3])[0].nbest is None and not parser.calibrated
    tau = parser.fit_temperature(fit)
    assert parser.calibrated and tau == parser.cfg["fitted_temperature"] and tau != 1.0
    calibrated = list(nlp.pipe(d.copy() for d in held))
    assert arcs(calibrated) == arcs(plain)
    found = parser.nbest_scores([d.copy() for d in held], 4)
    everywhere_agreed = 0
    for doc, (trees, scores) in zip(calibrated, found):
        probs = numpy.asarray([t._.head_prob for t in doc])
        assert ((probs > 0) & (probs <= 1)).all()
        agree = numpy.asarray([(tree[0] == trees[0][0]) & (tree[1] == trees[0][1])
                               for tree in trees])
        e = numpy.exp((scores - scores.max()) / tau)
        assert numpy.allclose(probs, e / e.sum() @ agree)
        assert (probs[agree.all(axis=0)] == 1.0).all()
        everywhere_agreed += agree.all(axis=0).sum()
        assert [t.head.i for t in doc] == [int(h) for h in trees[0][0]]  # the beam's best
    assert 0 < everywhere_agreed < sum(len(d) for d in held)
    # the batch decoded at once (its beams' n best kept, DocsOutput) writes
    # what the docs decoded one by one get, bit for bit, whitespace and
    # empty docs included
    spaced = [Doc(nlp.vocab, words=w, spaces=[False] * len(w), tags=t) for w, t in [
        (["The", " ", "dog", "barks", "\n"], ["DT", "_SP", "NN", "VBZ", "_SP"]), ([], []),
        ([" "], ["_SP"]), (["Dogs"], ["NNS"])]]
    mixed = [*spaced, *held[:40]]
    batch = parsed_alike_in_batch_and_one_by_one(nlp, mixed, 16)
    assert [t._.head_prob for t in batch[0]][1::3] == [1.0, 1.0]  # the whitespace
    assert batch[1].user_data.get("head_probs") is None
    parser.cfg["n_threads"] = 2  # the pipelined batches: the same
    threaded = list(nlp.pipe((d.copy() for d in held), batch_size=40))
    parser.cfg["n_threads"] = 1
    assert arcs(threaded) == arcs(plain)
    assert [[t._.head_prob for t in d] for d in threaded] == \
        [[t._.head_prob for t in d] for d in calibrated]
    loss = lambda t: head_log_loss(nlp, fit, t)
    assert loss(tau) < min(loss(tau * 1.05), loss(tau / 1.05), loss(1.0))
    for how in ("bytes", "disk"):
        again = reload_pipeline(nlp, how, tmp_path / how)
        assert again.get_pipe("arc_standard_parser").temperature == tau
        assert again.get_pipe("arc_standard_parser").cfg["fitted_width"] == 4
        with warnings.catch_warnings():
            warnings.filterwarnings("error", ".*temperature was fitted")  # (fitted for this beam)
            docs = list(again.pipe(d.copy() for d in held))
        assert arcs(docs) == arcs(plain)
        assert [[t._.head_prob for t in d] for d in docs] == \
            [[t._.head_prob for t in d] for d in calibrated]
    # predicting with another beam: the temperature was fitted on the n best
    # of the beam of 4, and a warning says so
    parser.search = dataclasses.replace(parser.search, predict_width=8)
    with pytest.warns(UserWarning, match="fitted on the n best of a beam of 4"):
        list(nlp.pipe(d.copy() for d in held[:5]))


def test_a_greedy_perceptron_parser_is_not_calibrated(greedy_nlp):
    """Its n best would come from a wider search than the one that chose
    its parse: the error names the beam."""
    parser = greedy_nlp.get_pipe("arc_standard_parser")
    dev = [Example(words_only(greedy_nlp.vocab, g, tags=True), g)
           for g in gold_docs(greedy_nlp.vocab, "ewt", "dev", 5)]
    with pytest.raises(ValueError, match="Beam.v1"):
        parser.fit_temperature(dev)
    assert parser.cfg.get("fitted_temperature") is None and not parser.calibrated


def spaced(vocab, gold, k):
    """A words-and-tags copy of a gold doc; every third doc with a
    whitespace token inserted (the parser attaches it by rule)."""
    doc = words_only(vocab, gold, tags=True)
    if k % 3 or len(doc) < 2:
        return doc
    words = [t.text for t in doc]
    tags = [t.tag_ for t in doc]
    at = 1 + k % (len(doc) - 1)
    return Doc(vocab, words=words[:at] + ["\n"] + words[at:], tags=tags[:at] + ["_SP"] + tags[at:])


@pytest.mark.parametrize("search", [Greedy(), Lookahead(depth=2), Beam(width=4)])
@pytest.mark.parametrize("sent_starts", [False, True])
def test_a_batch_decoded_at_once_parses_as_each_doc_alone(greedy_nlp, search, sent_starts):
    """pipe() decodes a batch at once (decode_docs: no instance or
    Prediction per doc) and writes it whole; the arcs, labels and sentences
    are those of the decoder's instances one by one, with whitespace tokens,
    empty docs, given sentences and lifted (decorated) labels."""
    parser = greedy_nlp.get_pipe("arc_standard_parser")
    vocab = greedy_nlp.vocab
    gold = gold_docs(vocab, "ewt", "dev", 150)
    docs = [spaced(vocab, g, k) for k, g in enumerate(gold)]
    docs.insert(40, Doc(vocab, words=[], tags=[]))
    if sent_starts:  # several given sentences per doc
        docs = [Doc(vocab, words=[t.text for d in docs[k:k + 3] for t in d],
                    tags=[t.tag_ for d in docs[k:k + 3] for t in d],
                    sent_starts=[t.i == 0 for d in docs[k:k + 3] for t in d])
                for k in range(0, len(docs), 3)]
    before = parser.search, parser.cfg["respect_sent_starts"]
    parser.search, parser.cfg["respect_sent_starts"] = search, sent_starts
    try:
        predicted = parser.predict([d.copy() for d in docs])
        assert isinstance(predicted, Trees)
        batch = [arcs_and_sents(d) for d in parser.pipe([d.copy() for d in docs], batch_size=64)]
        alone = type(parser)._decodes_docs
        type(parser)._decodes_docs = lambda self, run, args: False
        try:
            expected = parser.predict([d.copy() for d in docs])
            one_by_one = [arcs_and_sents(d) for d in parser.pipe([d.copy() for d in docs],
                                                                  batch_size=64)]
        finally:
            type(parser)._decodes_docs = alone
    finally:
        parser.search, parser.cfg["respect_sent_starts"] = before
    assert not isinstance(expected, Trees) and len(predicted) == len(expected) == len(docs)
    lifted = [i for i, label in enumerate(parser.labels) if "||" in label]
    assert numpy.isin(predicted.labels, lifted).any()  # some arcs deprojectivized
    for tree, want in zip(predicted, expected):
        assert [x.tolist() for x in tree.best] == [x.tolist() for x in want.best]
    assert batch == one_by_one
    assert any("dep" in labels for _, labels, _ in batch)  # whitespace attached
    if sent_starts:
        assert [starts for _, _, starts in batch] == [
            [t.is_sent_start for t in d] for d in docs]


def arcs_and_sents(doc):
    return ([t.head.i for t in doc], [t.dep_ for t in doc], [t.is_sent_start for t in doc])


def test_the_alternative_columns_of_a_batch_are_each_docs(greedy_nlp):
    """_alternative_columns (one numpy pass over the docs whose tagger kept
    its alternatives as arrays) writes what _alternative_column writes doc
    by doc: the likely alternatives, SURE elsewhere, lists read too."""
    from spacy_lookahead.core.features import A_TAG_ALT_COLUMN, ATOMS_PER_TOKEN, SURE
    from spacy_lookahead.pipes.parser import ALTERNATIVE_MIN_PROB
    from spacy_lookahead.pipes.tagger import TAG_ALTERNATIVE, TAG_ALTERNATIVE_PROB
    parser, vocab = greedy_nlp.get_pipe("arc_standard_parser"), greedy_nlp.vocab
    rng = numpy.random.default_rng(0)
    docs = []
    for k, n in enumerate([3, 0, 5, 1, 4, 6]):
        doc = Doc(vocab, words=["w"] * n, tags=["NN"] * n)
        alts = rng.integers(1, 10 ** 6, n).astype("uint64")
        probs = rng.choice([0.0, ALTERNATIVE_MIN_PROB / 2, ALTERNATIVE_MIN_PROB, 0.3], n)
        doc.user_data[TAG_ALTERNATIVE] = alts.tolist() if k == 4 else alts
        doc.user_data[TAG_ALTERNATIVE_PROB] = probs
        docs.append(doc)
    starts = numpy.zeros((len(docs) + 1,), dtype="int64")
    numpy.cumsum([len(d) for d in docs], out=starts[1:])
    for some in (docs, docs[:1] + docs[2:4]):
        bounds = starts[:len(some) + 1] if some is docs else numpy.cumsum([0, 3, 5, 1])
        atoms = numpy.zeros((bounds[-1], ATOMS_PER_TOKEN), dtype="uint64")
        parser._alternative_columns(some, atoms, bounds, None)
        each = numpy.zeros_like(atoms)
        for k, doc in enumerate(some):
            parser._alternative_column(doc, each[bounds[k]:bounds[k + 1]], None)
        assert (atoms == each).all()
        assert (atoms[:, A_TAG_ALT_COLUMN] == SURE).any() and (atoms[:, A_TAG_ALT_COLUMN] != SURE).any()
    with pytest.raises(ValueError, match="alternatives = true on the lookahead_tagger"):
        parser._alternative_columns([Doc(vocab, words=["a"], tags=["NN"])],
                                    numpy.zeros((1, ATOMS_PER_TOKEN), dtype="uint64"),
                                    numpy.array([0, 1]), None)
