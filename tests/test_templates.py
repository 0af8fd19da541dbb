"""Feature templates as data (systems/templates.py, core/features.pxd) and
the lexicon tables they read (lexicon.py): what each atom means, the errors
a bad `features` setting gets, and a tagger that learns from clusters."""
from collections import Counter, defaultdict

import numpy
import pytest
import spacy
from spacy.lookups import Lookups, Table
from spacy.tokens import Doc

from spacy_lookahead.core import views
from spacy_lookahead.core.features import A_COLUMNS, token_atoms
from spacy_lookahead.lexicon import create_lexeme_tables, prune_tables
from spacy_lookahead.systems.tagging import TaggingSystem
from spacy_lookahead.systems.templates import (FLAG_BITS, PARSER_SLOTS, PRESETS, TemplateError,
                                               canonical, expand, parse_template)

from ewt import ewt_examples
from blocks import blocks

NO_LEXEME = [0] * 7  # A_NORM .. A_PROB


def lexeme(cluster=0, prob=0, flags=0):
    """The vocab's atoms of a word: NORM, SHAPE, PREFIX, SUFFIX, flags, cluster, prob bin."""
    return [0, 0, 0, 0, flags, cluster, prob]


def doc_atoms(rows):
    """rows: (word, tag or None, lexeme atoms or None)."""
    return numpy.asarray([token_atoms(w, t, None, None, lex) for w, t, lex in rows], dtype="uint64")


def static(templates, atoms, position):
    """The template features at `position` (the tagging history before it;
    the previous-label feature, the last one, left out)."""
    system = TaggingSystem(2, templates=templates)
    return list(views.features(system, atoms, [0] * position)[:-1])


def test_a_template_reads_its_offset_and_is_absent_where_an_atom_is():
    atoms = doc_atoms([("a", None, None), ("cats", None, None), ("dog", None, None)])
    # before the doc: the sentinel, one feature
    assert len(static(["suf3[-1]"], atoms, 0)) == 1
    # "a" has no 3-letter suffix: no feature
    assert static(["suf3[-1]"], atoms, 1) == []
    # "cats" has one: the same in another doc with "cats" before, not with "dogs"
    same = doc_atoms([("x", None, None), ("cats", None, None), ("y", None, None)])
    other = doc_atoms([("x", None, None), ("dogs", None, None), ("y", None, None)])
    assert static(["suf3[-1]"], atoms, 2) == static(["suf3[-1]"], same, 2)
    assert static(["suf3[-1]"], atoms, 2) != static(["suf3[-1]"], other, 2)
    assert len(static(["suf3[1]"], atoms, 2)) == 1  # after the doc: the sentinel
    assert static(["suf3[1]"], atoms, 2) != static(["suf3[-1]"], atoms, 0)  # after != before


def test_cluster_prefixes_share_a_feature_exactly_where_the_paths_share_the_bits():
    atoms = doc_atoms([("x", None, lexeme(cluster=0b1011)), ("y", None, lexeme(cluster=0b0011)),
                       ("z", None, lexeme(cluster=0)), ("w", None, lexeme(cluster=0b11))])
    # paths are stored first bit lowest: 0b1011 and 0b0011 share their first 3 bits
    assert static(["cluster3[0]"], atoms, 0) == static(["cluster3[0]"], atoms, 1)
    assert static(["cluster4[0]"], atoms, 0) != static(["cluster4[0]"], atoms, 1)
    assert static(["cluster4[0]"], atoms, 2) == []  # no cluster: no feature
    assert static(["cluster2[0]"], atoms, 3) == static(["cluster2[0]"], atoms, 1)
    assert static(["cluster[0]"], atoms, 0) != static(["cluster[0]"], atoms, 1)


def test_flags_and_probability_bins():
    digit = 1 << FLAG_BITS["IS_DIGIT"]
    atoms = doc_atoms([("1", None, lexeme(flags=digit, prob=20)), ("a", None, lexeme(prob=20)),
                       ("b", None, lexeme(prob=21))])
    assert len(static(["IS_DIGIT[0]"], atoms, 0)) == 1
    assert static(["IS_DIGIT[0]"], atoms, 1) == []
    assert static(["prob[0]"], atoms, 0) == static(["prob[0]"], atoms, 1)
    assert static(["prob[0]"], atoms, 1) != static(["prob[0]"], atoms, 2)


def test_conjunctions_keep_their_order_and_inputs_the_doc_lacks_are_absent():
    atoms = doc_atoms([("a", "DT", None), ("b", "NN", None), ("c", "VB", None)])
    one, other = static(["lower[-1] lower[0]"], atoms, 1), static(["lower[0] lower[-1]"], atoms, 1)
    assert len(one) == len(other) == 1 and one != other
    assert len(static(["tag[-2] tag[-1]"], atoms, 0)) == 1  # sentinels, the doc has tags
    untagged = doc_atoms([("a", None, None), ("b", None, None)])
    assert static(["tag[-2] tag[-1]"], untagged, 0) == []  # no tags: no tag feature anywhere


def test_a_template_is_hashed_the_same_in_any_list():
    atoms = doc_atoms([("a", None, lexeme(cluster=5)), ("b", None, lexeme(cluster=6))])
    alone = static(["cluster4[0]"], atoms, 1)
    with_preset = static(["preset:pos", "cluster4[0]"], atoms, 1)
    assert with_preset[-1:] == alone and with_preset[:-1] == static(["preset:pos"], atoms, 1)


def test_a_doc_template_pools_the_word_s_other_occurrences_nearest_first():
    words = "IL-2 binds . IL-2 was . il-2 binds".split()
    atoms = doc_atoms([(w, None, None) for w in words])
    # at 3, the other occurrences of "il-2" are 0 and 6, both before "binds"
    middle = static(["lower[doc+1]"], atoms, 3)
    assert len(middle) == 2 and middle[0] == middle[1]
    # at 0: 3 (before "was") and 6 (before "binds")
    first = static(["lower[doc+1]"], atoms, 0)
    assert len(first) == 2 and middle[0] in first and len(set(first)) == 2
    assert static(["lower[doc+1]"], atoms, 4) == []  # "was" occurs once
    # at 6: 3 ("was" after it) and 0 ("binds"), what 0 reads at 3 and 6
    assert sorted(static(["lower[doc+1]"], atoms, 6)) == sorted(first)
    # two before and two after, the nearest: at 3 of 7 occurrences, 4
    many = doc_atoms([("a", None, None)] * 7)
    assert len(static(["lower[doc-1]"], many, 3)) == 4
    assert len(static(["lower[doc-1]"], many, 0)) == 2
    # with window atoms; and beside other templates, the same features
    assert len(static(["lower[0] lower[doc-1]"], atoms, 3)) == 2
    assert static(["suf2[0]", "lower[doc+1]"], atoms, 3) == static(["suf2[0]"], atoms, 3) + middle


def _nonce_docs(vocab, n, seed):
    """Docs in which a made-up word is named twice: first in a context that
    says nothing ("the W binds ."), then after its kind ("protein W" or
    "cell W"), which is also its entity label both times."""
    rng = numpy.random.default_rng(seed)
    out = []
    for _ in range(n):
        word = "".join(rng.choice(list("bcdfgklmnprstvz"), 6))
        kind = str(rng.choice(["protein", "cell"]))
        label = "B-protein" if kind == "protein" else "B-cell_type"
        words = ["the", word, "binds", ".", kind, word, "was", "seen", "."]
        out.append(Doc(vocab, words=words, ents=["O", label, "O", "O", "O", label, "O", "O", "O"]))
    return out


@pytest.mark.parametrize("features,least,most", [
    (["preset:ner"], 0.0, 0.75),  # the first mention: a guess
    (["preset:ner", "lower[doc-1]"], 0.95, 1.0),  # ... read from the second
])
def test_an_ner_reads_the_other_mention_of_a_name(features, least, most):
    from spacy.training import Example
    nlp = spacy.blank("en")
    nlp.add_pipe("lookahead_ner", config={"features": features})
    train = [Example(Doc(nlp.vocab, words=[t.text for t in d]), d)
             for d in _nonce_docs(nlp.vocab, 300, 0)]
    nlp.initialize(lambda: train)
    for _ in range(5):
        nlp.update(train)
    test = _nonce_docs(nlp.vocab, 200, 1)
    right = sum(nlp(Doc(nlp.vocab, words=[t.text for t in d]))[1].ent_type_ == d[1].ent_type_
                for d in test)
    assert least <= right / len(test) <= most, right


def test_the_presets_are_the_old_feature_sets():
    assert TaggingSystem(3).templates == ["preset:pos"]
    assert [t for t, _ in TaggingSystem(3, feature_set="ner").expanded] == PRESETS["ner"]
    # the ids of the enum the systems used (the weights regression test checks the bits)
    ids = dict(expand(["preset:chunk"], "chunk"))
    assert ids["bias"] == 1 and ids["lower[-2]"] == 26 and ids["tag[0] tag[1] tag[2]"] == 46
    assert dict(expand(["preset:pos"], "pos"))["lower[-2]"] == 6


@pytest.mark.parametrize("template,words", [
    ("lowr[0]", "unknown atom 'lowr'"),
    ("lower[-1]lower[0]", "is not an atom"),
    ("lower", "is not an atom"),
    ("lower[-9]", "beyond"),
    ("lower[0] lower[1] lower[2] lower[3] lower[4]", "at most 4"),
    ("substrings[0] lower[0]", "stands alone"),
    ("cluster63[0]", "unknown atom 'cluster63'"),
    ("", "is not a template"),
    ("lower[doc1]", "is not an offset"),
    ("lower[doc-9]", "beyond"),
])
def test_a_bad_template_is_named(template, words):
    with pytest.raises(TemplateError, match=words):
        parse_template(template)


def test_the_parser_reads_no_doc_offsets():
    with pytest.raises(TemplateError, match="not a position"):
        parse_template("lower[doc-1]", PARSER_SLOTS)


def test_canonical_text():
    assert canonical("  lower[-1]   lower[+0] ") == "lower[-1] lower[0]"
    assert canonical("lower[doc1]".replace("doc1", "doc+1")) == "lower[doc+1]"
    assert canonical("init_cap[doc-0]") == "init_cap[doc+0]"


@pytest.mark.parametrize("features,words", [
    (["preset:pos", "lowr[0]"], "'lowr\\[0\\]'.*unknown atom"),
    (["preset:pos", "lower[0]"], "given twice"),
    (["preset:tagging"], "unknown preset"),
    ("preset:pos", "List\\[str\\]"),  # spaCy's validation of the factory's signature
])
def test_a_bad_features_setting_is_a_config_error_naming_it(features, words):
    nlp = spacy.blank("en")
    with pytest.raises(Exception, match=words) as info:
        nlp.add_pipe("lookahead_tagger", config={"features": features})
    assert "features" in str(info.value)


def test_templates_reading_clusters_need_the_tables():
    nlp = spacy.blank("en")
    nlp.add_pipe("lookahead_tagger", config={"features": ["preset:pos", "cluster4[0]"]})
    examples = ewt_examples(nlp.vocab, "train", 20)
    with pytest.raises(ValueError, match=r"lexeme_cluster.*\[initialize.lookups\]"):
        nlp.initialize(lambda: examples)
        nlp.update(examples)


def test_prune_tables_keeps_the_most_probable_words():
    lookups = Lookups()
    lookups.add_table("lexeme_prob", {"the": -3.0, "cat": -9.0, "zyx": -19.0, "of": -4.0})
    lookups.add_table("lexeme_cluster", {"the": 11, "cat": 37, "zyx": 5, "of": 0})
    lookups.add_table("lexeme_settings", {"oov_prob": -20.0})
    cut = prune_tables(lookups, 2)
    assert set(cut.get_table("lexeme_prob").keys()) == {spacy.strings.get_string_id(w)
                                                        for w in ("the", "of")}
    # "of" is kept by probability, but cluster 0 is no cluster: not stored
    assert dict(cut.get_table("lexeme_cluster")) == {spacy.strings.get_string_id("the"): 11}
    assert len(cut.get_table("lexeme_settings")) == 1
    assert len(prune_tables(lookups, None).get_table("lexeme_cluster")) == 3


def test_the_loader_names_the_package_for_a_language_without_tables():
    with pytest.raises(ValueError, match="spacy-lookups-data"):
        create_lexeme_tables("xx", 10)
    with pytest.raises(ValueError, match="max_words"):
        create_lexeme_tables("en", 0)


def _tag_clusters(vocab, n):
    """A cluster table as unlabelled text could give it, made here from
    words' tags in EWT train: the words of one most frequent tag share a
    cluster path (so clusters carry over to words the tagger never saw)."""
    counts = defaultdict(Counter)
    for eg in ewt_examples(vocab, "train", n):
        for t in eg.reference:
            counts[t.text][t.tag_] += 1
    tags = sorted({tag for c in counts.values() for tag in c})
    path = {tag: 0b100000 | (k + 1) for k, tag in enumerate(tags)}  # 6-bit paths
    return {word: path[c.most_common(1)[0][0]] for word, c in counts.items()}


def _train(features, clusters):
    """A tagger trained on 300 EWT sentences; its examples, in its vocab."""
    nlp = spacy.blank("en")
    nlp.add_pipe("lookahead_tagger", config=blocks("lookahead_tagger", {"features": features, "depth": 0}))
    if clusters is not None:
        nlp.vocab.lookups.add_table("lexeme_cluster", clusters)
    examples = ewt_examples(nlp.vocab, "train", 300)
    nlp.initialize(lambda: examples)
    for _ in range(3):
        nlp.update(examples)
    return nlp, examples


def _unseen_accuracy(nlp, train, table):
    """Tag accuracy on the dev words the tagger never saw and the table has."""
    seen = {t.text for eg in train for t in eg.reference}
    dev = ewt_examples(nlp.vocab, "dev", 400)
    right = total = 0
    for eg in dev:
        doc = nlp(Doc(nlp.vocab, words=[t.text for t in eg.reference]))
        for p, g in zip(doc, eg.reference):
            if g.text not in seen and g.text in table:
                total += 1
                right += p.tag_ == g.tag_
    return right / total


def test_a_tagger_learns_from_clusters_and_carries_its_table(shared_data, tmp_path):
    clusters = _tag_clusters(spacy.blank("en").vocab, 4000)
    plain, train = _train(["preset:pos"], None)
    with_clusters, _ = _train(["preset:pos", "cluster6[0]", "cluster6[-1]", "cluster6[1]"],
                              clusters)
    base = _unseen_accuracy(plain, train, clusters)
    better = _unseen_accuracy(with_clusters, train, clusters)
    assert better > base + 0.1, (base, better)
    dev = ewt_examples(with_clusters.vocab, "dev", 50)
    docs = [Doc(with_clusters.vocab, words=[t.text for t in eg.reference]) for eg in dev]
    tags = [[t.tag_ for t in doc] for doc in with_clusters.pipe(docs)]
    with_clusters.to_disk(tmp_path / "model")
    loaded = spacy.load(tmp_path / "model")
    assert loaded.vocab.lookups.has_table("lexeme_cluster")  # the pipeline carries the table
    # ... in its vocab and in the component, and keeps one of them in memory
    assert loaded.get_pipe("lookahead_tagger").lexicon.get_table("lexeme_cluster") is \
        loaded.vocab.lookups.get_table("lexeme_cluster")
    again = [Doc(loaded.vocab, words=[t.text for t in eg.reference]) for eg in dev]
    assert [[t.tag_ for t in doc] for doc in loaded.pipe(again)] == tags
    assert loaded.vocab["the"].cluster == clusters["the"]
    # sourced into another pipeline (spaCy copies no lookups tables): the
    # component brings its own copy of the table
    other = spacy.blank("en")
    other.add_pipe("lookahead_tagger", source=loaded)
    docs = [Doc(other.vocab, words=[t.text for t in eg.reference]) for eg in dev]
    assert [[t.tag_ for t in doc] for doc in other.pipe(docs)] == tags
    assert other.vocab["the"].cluster == clusters["the"]
    # ... into a pipeline whose vocab has another table of that name (another
    # component's, say, with more words): it reads its own, the one it was
    # trained with, and never reads the whole of the vocab's per batch
    third = spacy.blank("en")
    theirs = CountedTable("lexeme_cluster", {word: 0b111111 for word in clusters})
    third.vocab.lookups.set_table("lexeme_cluster", theirs)
    third.add_pipe("lookahead_tagger", source=loaded)
    CountedTable.whole_reads = 0
    docs = [Doc(third.vocab, words=[t.text for t in eg.reference]) for eg in dev]
    assert [[t.tag_ for t in doc] for doc in third.pipe(docs, batch_size=5)] == tags
    assert third.vocab["the"].cluster == 0b111111 and CountedTable.whole_reads == 0


def test_a_loaded_component_keeps_the_vocabs_table_only_where_it_is_the_same():
    """Loading a component whose lexicon table the vocab has too (a saved
    pipeline has both): the same entries, in any order, are the vocab's
    table, kept once; entries that differ (one value, a table of the same
    length) stay the component's own, with its values; a vocab without the
    table gets the component's."""
    nlp = spacy.blank("en")
    pipe = nlp.add_pipe("lookahead_tagger")
    words = {"the": 3, "cat": 5, "sat": 9}
    pipe.lexicon.set_table("lexeme_cluster", Table("lexeme_cluster", words))
    data = pipe.to_bytes(exclude=["vocab"])
    cases = {"same": dict(words), "reordered": dict(reversed(list(words.items()))),
             "one value differs": {**words, "cat": 6}, "none": None}
    for case, theirs in cases.items():
        other = spacy.blank("en")
        if theirs is not None:
            other.vocab.lookups.set_table("lexeme_cluster", Table("lexeme_cluster", theirs))
        loaded = other.add_pipe("lookahead_tagger").from_bytes(data, exclude=["vocab"])
        own = loaded.lexicon.get_table("lexeme_cluster")
        vocabs = other.vocab.lookups.get_table("lexeme_cluster")
        assert (own is vocabs) == (case != "one value differs"), case
        assert dict(own) == dict(Table("lexeme_cluster", words)), case


class CountedTable(Table):
    """A lookups table that counts the reads of all its words at once."""
    whole_reads = 0

    def keys(self):
        CountedTable.whole_reads += 1
        return super().keys()

    def items(self):
        CountedTable.whole_reads += 1
        return super().items()

    def __iter__(self):
        CountedTable.whole_reads += 1
        return super().__iter__()


def test_ambiguity_classes_are_learnt_at_initialize_and_saved(shared_data, tmp_path):
    nlp = spacy.blank("en")
    nlp.add_pipe("lookahead_tagger", config=blocks("lookahead_tagger", {"features": ["preset:pos", "ambiguity[-1]",
                                                          "ambiguity[0]"], "depth": 0}))
    examples = ewt_examples(nlp.vocab, "train", 200)
    nlp.initialize(lambda: examples)
    classes = nlp.get_pipe("lookahead_tagger").cfg["word_classes"]
    counts = Counter(t.text for eg in examples for t in eg.reference)
    tags = defaultdict(Counter)
    for eg in examples:
        for t in eg.reference:
            tags[t.text][t.tag_] += 1
    # every word seen 3 times has its class, the tags of >= 5% of its uses
    assert set(classes) == {w for w, k in counts.items() if k >= 3}
    assert classes["the"] == "DT" and set(classes["that"].split("|")) == {
        tag for tag, k in tags["that"].items() if k >= 0.05 * counts["that"]}
    # the atom: the same for two words of one class, absent for a rare word
    tagger = nlp.get_pipe("lookahead_tagger")
    doc = Doc(nlp.vocab, words=["the", "a", "xylophonist"])
    atoms = tagger._atoms.docs_inputs([doc])["atoms"]
    column = A_COLUMNS["ambiguity"]
    assert classes["a"] == "DT" and atoms[0, column] == atoms[1, column] != 0
    assert atoms[2, column] == 0
    for _ in range(2):
        nlp.update(examples)
    dev = [Doc(nlp.vocab, words=[t.text for t in eg.reference])
           for eg in ewt_examples(nlp.vocab, "dev", 40)]
    tags_before = [[t.tag_ for t in d] for d in nlp.pipe(dev)]
    nlp.to_disk(tmp_path / "m")
    loaded = spacy.load(tmp_path / "m")
    assert loaded.get_pipe("lookahead_tagger").cfg["word_classes"] == classes
    again = [Doc(loaded.vocab, words=[t.text for t in d]) for d in dev]
    assert [[t.tag_ for t in d] for d in loaded.pipe(again)] == tags_before


@pytest.mark.parametrize("factory,preset", [("lookahead_tagger", "pos"), ("lookahead_ner", "ner")])
def test_a_model_saved_before_the_features_settings_loads_as_its_preset(factory, preset, tmp_path,
                                                                        shared_data):
    """A model saved before `features` and `respect_sent_starts` existed:
    its cfg lacks them and its checksum covers only the settings it had.
    It loads, as its preset, and predicts as it did."""
    import srsly
    from spacy_lookahead.pipes.integrity import seal, unseal
    if factory == "lookahead_tagger":
        nlp, examples = _train(["preset:pos"], None)
    else:
        from test_spans import jnlpba
        nlp = spacy.blank("en")
        nlp.add_pipe(factory)
        examples = jnlpba(shared_data, nlp.vocab, "train", 100)
        nlp.initialize(lambda: examples)
        nlp.update(examples)
    docs = [Doc(nlp.vocab, words=[t.text for t in eg.reference]) for eg in examples[:40]]
    before = [[(t.tag_, t.ent_iob_, t.ent_type_) for t in d] for d in nlp.pipe(docs)]
    nlp.to_disk(tmp_path / "model")
    path = tmp_path / "model" / factory
    cfg = srsly.read_json(path / "cfg")
    pipe = nlp.get_pipe(factory)
    weights = unseal(pipe.component_type, cfg["labels"], pipe._feature_values(cfg),
                     (path / "weights").read_bytes(), "weights")
    for key in ("features", "respect_sent_starts", "word_classes"):
        cfg.pop(key)
    old = {key: cfg[key] for key in pipe.feature_settings if key in cfg}
    (path / "weights").write_bytes(seal(pipe.component_type, cfg["labels"], old, weights))
    srsly.write_json(path / "cfg", cfg)
    loaded = spacy.load(tmp_path / "model")
    assert loaded.get_pipe(factory).cfg["features"] == [f"preset:{preset}"]
    again = [Doc(loaded.vocab, words=[t.text for t in d]) for d in docs]
    assert [[(t.tag_, t.ent_iob_, t.ent_type_) for t in d] for d in loaded.pipe(again)] == before
