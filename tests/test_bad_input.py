"""The bad-input matrix: every component on odd texts (empty, whitespace,
one token, unicode, a 5,000-character token, whitespace tokens, 100k
tokens), odd annotations, wrong settings and damaged model files, and round
trips. Each case works or raises an error that names the problem and the
fix; outputs are checked for what would be silently wrong."""
import subprocess
import sys
import warnings

import numpy
import pytest
import spacy
from spacy.tokens import Doc
from spacy.training import Example
from spacy.vocab import Vocab
from thinc.api import ConfigValidationError

import spacy_lookahead.pipes.phrases  # noqa: F401  (factories, when not pip-installed)
import spacy_lookahead.pipes.parser  # noqa: F401
import spacy_lookahead.pipes.spans  # noqa: F401
import spacy_lookahead.pipes.tagger  # noqa: F401
from spacy_lookahead.core.weights import Weights

from conftest import reload_pipeline
from ewt import ewt_examples
from parse_data import parse_examples
from clause_data import wsj
from span_data import conll2000, jnlpba, train as fit, trained
from blocks import blocks
from spacy_lookahead.pipes.search import Beam, Greedy, Lookahead

SPACY_COMPONENTS = ("lookahead_tagger", "lookahead_chunker", "arc_standard_parser",
                    "lookahead_ner", "fr_clause_finder")
SPAN_KEYS = {"lookahead_chunker": "chunks", "fr_clause_finder": "clauses", "fr_chunker": "chunks"}


@pytest.fixture(scope="module")
def parts(shared_data):
    """Each component trained on its own data set, in its own pipeline (as
    the README's nlp.update pattern makes them)."""
    return {
        "lookahead_tagger": trained("lookahead_tagger", {"depth": 1},
                                    lambda v: ewt_examples(v, "train", 1000)),
        "lookahead_chunker": trained("lookahead_chunker", {"depth": 1},
                                     lambda v: conll2000(shared_data, v, "train", 800)),
        "arc_standard_parser": trained("arc_standard_parser",
                                       {"search": "greedy", "min_label_freq": 1},
                                       lambda v: parse_examples(v, "ewt", "train", 800, 4)),
        "lookahead_ner": trained("lookahead_ner", {"direction": "rtl", "depth": 1},
                                 lambda v: jnlpba(shared_data, v, "train", 600)),
        "fr_clause_finder": trained("fr_clause_finder", {},
                                    lambda v: wsj(shared_data, v, "train", 600), 3),
        "fr_chunker": trained("fr_chunker", {},
                              lambda v: conll2000(shared_data, v, "train", 600)),
    }


def assemble(parts, names):
    """A raw-text pipeline of components trained elsewhere (add_pipe with
    source=: the strings they write must come with them)."""
    nlp = spacy.blank("en")
    for name in names:
        nlp.add_pipe(name, source=parts[name])
    return nlp


@pytest.fixture(scope="module")
def full(parts):
    return assemble(parts, SPACY_COMPONENTS)


@pytest.fixture(scope="module")
def fr_chunking(parts):
    return assemble(parts, ("lookahead_tagger", "fr_chunker"))


def check(nlp, doc):
    """What must hold of any doc the pipeline annotates."""
    space = numpy.asarray([t.is_space for t in doc], dtype=bool)
    names = nlp.pipe_names
    if "lookahead_tagger" in names:
        labels = set(nlp.get_pipe("lookahead_tagger").labels)
        for t in doc:
            assert (t.tag_ == "_SP") if t.is_space else (t.tag_ in labels), (t.i, t.text, t.tag_)
    for name, key in SPAN_KEYS.items():
        if name in names:
            labels = set(nlp.get_pipe(name).labels)
            for span in doc.spans[key]:
                assert not space[span.start] and not space[span.end - 1], (name, span)
                assert span.label_ in labels
    if "lookahead_ner" in names:
        labels = set(nlp.get_pipe("lookahead_ner").labels)
        for ent in doc.ents:
            assert not space[ent.start] and not space[ent.end - 1] and ent.label_ in labels
    if "arc_standard_parser" in names and len(doc):
        parser = nlp.get_pipe("arc_standard_parser")
        allowed = set(parser.output_strings())
        heads = numpy.asarray([t.head.i for t in doc])
        for t in doc:
            assert t.dep_ in allowed  # readable: the string is in the doc's vocab
            if t.is_space and not space.all():
                assert t.dep_ == "dep" and not space[t.head.i] and t.head.i != t.i
        for i in range(len(doc)):  # a forest: every token reaches a root
            j, steps = i, 0
            while heads[j] != j:
                j = heads[j]
                steps += 1
                assert steps <= len(doc), "cycle"
            assert not space[j] or space.all(), "a whitespace token is a root"
        assert sum(len(s) for s in doc.sents) == len(doc)


ODD_TEXTS = [
    "",
    "   ",
    "\n\n\t ",
    "Hello",
    "Ünïcödé 😀 日本語 naïve café — “quoted” 3.14 .",
    "x" * 5000 + " is a long token .",
    "Done today.\n\nThe   firm said so.\n",
    "  \n  Leading whitespace , then words .",
]


@pytest.mark.parametrize("text", ODD_TEXTS, ids=range(len(ODD_TEXTS)))
def test_odd_texts(full, fr_chunking, text):
    for nlp in (full, fr_chunking):
        doc = nlp(text)
        assert doc.text == text
        check(nlp, doc)


def test_whitespace_tokens_as_spacy_treats_them(full):
    doc = full("Done today.\n\nThe   firm said so.")
    spaces = [t for t in doc if t.is_space]
    assert len(spaces) == 2
    assert all(t.tag_ == "_SP" and t.dep_ == "dep" and t.head.i == t.i - 1 for t in spaces)
    # the words around a line break are tagged as without it
    plain = full("Done today. The firm said so.")
    assert [t.tag_ for t in doc if not t.is_space] == [t.tag_ for t in plain]


def test_whitespace_in_training_data(shared_data):
    nlp = spacy.blank("en")
    nlp.add_pipe("lookahead_tagger", config=blocks("lookahead_tagger", {"depth": 0}))
    nlp.add_pipe("arc_standard_parser", config=blocks("arc_standard_parser", {"search": "greedy", "min_label_freq": 1}))
    words = ["Hello", "\n\n", "world", "."]
    ex = Example.from_dict(Doc(nlp.vocab, words=words), {
        "tags": ["UH", "_SP", "NN", "."], "heads": [2, 0, 2, 2],
        "deps": ["discourse", "dep", "ROOT", "punct"]})
    fit(nlp, [ex] * 4, 3)
    assert "_SP" not in nlp.get_pipe("lookahead_tagger").labels
    assert "dep" not in nlp.get_pipe("arc_standard_parser").labels
    doc = nlp(Doc(nlp.vocab, words=words))
    assert [t.tag_ for t in doc] == ["UH", "_SP", "NN", "."]
    assert doc[1].head.i == 0 and doc[1].dep_ == "dep"


def test_100k_token_doc(full, parts):
    words = "The board said on Monday that it would sell its stake in the company .".split()
    n = 100_000 // len(words) + 1
    text = " ".join(words * n)
    doc = full(text)
    assert len(doc) >= 100_000
    check(full, doc)
    assert len(list(doc.sents)) > 1000 and len(doc.spans["clauses"]) > 1000


def test_docs_from_another_vocab(full):
    """Strings written into a doc go to the doc's own vocab (a parser put
    into another pipeline used to write ROOT hashes the doc could not read)."""
    words = ["The", "firm", "said", "so", "."]
    doc = Doc(Vocab(), words=words, tags=["DT", "NN", "VBD", "RB", "."])
    full.get_pipe("arc_standard_parser")(doc)
    assert [t.dep_ for t in doc].count("ROOT") + [t.dep_ for t in doc].count("root") >= 1
    doc = full.get_pipe("lookahead_tagger")(Doc(Vocab(), words=words))
    assert all(t.tag_ for t in doc)


def test_a_keyerror_is_not_reported_as_missing_initialize(full, monkeypatch):
    tagger = full.get_pipe("lookahead_tagger")

    def broken(docs):
        raise KeyError("something")

    monkeypatch.setattr(tagger, "predict", broken)
    with pytest.raises(RuntimeError, match="internal error") as info:
        full("Some text .")
    assert "E109" not in str(info.value)


# --- input annotations ------------------------------------------------------------

def test_missing_input_annotations_name_the_fix(parts):
    words = ["The", "firm", "said", "so", "."]
    for name in ("lookahead_chunker", "arc_standard_parser", "fr_chunker"):
        pipe = parts[name].get_pipe(name)
        with pytest.raises(ValueError, match=r"needs POS tags.*tagger"):
            pipe(Doc(pipe.vocab, words=words))
    clauses = parts["fr_clause_finder"].get_pipe("fr_clause_finder")
    with pytest.raises(ValueError, match=r"needs chunks.*chunker"):
        clauses(Doc(clauses.vocab, words=words, tags=["DT", "NN", "VBD", "RB", "."]))


def test_empty_input_tag_is_an_error(parts):
    pipe = parts["arc_standard_parser"].get_pipe("arc_standard_parser")
    doc = Doc(pipe.vocab, words=["The", "firm", "said"], tags=["DT", "", "VBD"])
    with pytest.raises(ValueError, match=r"token 1 \('firm'\).*no POS tag"):
        pipe(doc)


@pytest.mark.parametrize("n_threads", [1, 2])
def test_unseen_input_tags_warn_once_with_the_rate(parts, n_threads):
    """One warning per pipe() call, over all its batches (one per batch
    broke spaCy's training table), and per __call__."""
    pipe = parts["lookahead_chunker"].get_pipe("lookahead_chunker")
    pipe.cfg["n_threads"] = n_threads
    docs = [Doc(pipe.vocab, words=["The", "firm", "said"], tags=["DT", "NOVELTAG", "VBD"])
            for _ in range(10)]
    try:
        for batch_size in (100, 3):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                list(parts["lookahead_chunker"].pipe(docs, batch_size=batch_size))
            unseen = [w for w in caught if "never seen in training" in str(w.message)]
            assert len(unseen) == 1 and "10 of 30" in str(unseen[0].message)
            assert "NOVELTAG" in str(unseen[0].message)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            pipe(docs[0])
        assert [str(w.message)[:40] for w in caught if "never seen" in str(w.message)] == [
            "[lookahead_chunker] 1 of 3 input words ("]
    finally:
        pipe.cfg["n_threads"] = 1
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pipe(Doc(pipe.vocab, words=["The", "firm"], tags=["DT", "NN"]))
    assert not [w for w in caught if "never seen" in str(w.message)]


def test_unseen_gold_labels_in_training_are_ignored(parts):
    nlp = spacy.blank("en")
    nlp.add_pipe("lookahead_ner", config=blocks("lookahead_ner", {"depth": 0}))
    ex = Example.from_dict(nlp.make_doc("IL-2 binds the receptor ."),
                           {"entities": [(0, 4, "protein")]})
    fit(nlp, [ex], 1)
    other = Example.from_dict(nlp.make_doc("NF-kB is in T cells ."),
                              {"entities": [(0, 5, "NEWTYPE"), (12, 19, "protein")]})
    nlp.update([other])
    assert nlp.get_pipe("lookahead_ner").labels == ("protein",)


# --- settings -------------------------------------------------------------------

BAD_SETTINGS = [
    ("lookahead_chunker", "spans_key", ""), ("lookahead_ner", "scores_key", ""),
    ("lookahead_tagger", "search", "bean"),
    ("lookahead_tagger", "target", "lemma"), ("lookahead_tagger", "direction", "up"),
    ("lookahead_chunker", "scheme", "bioes"),
    ("arc_standard_parser", "min_label_freq", 0),
    ("fr_clause_finder", "feedback", "mistakes"), ("fr_clause_finder", "max_length", -2),
    ("fr_clause_finder", "chunk_boundaries", "yes"), ("fr_chunker", "spans_key", ""),
]


@pytest.mark.parametrize("factory,key,value", BAD_SETTINGS)
def test_bad_settings_are_config_errors(factory, key, value):
    nlp = spacy.blank("en")
    with pytest.raises(ConfigValidationError) as info:
        nlp.add_pipe(factory, config={key: value})
    assert key in str(info.value)


# a wrong value inside a search or learner block: the error names the block's setting
BAD_BLOCKS = [
    ("lookahead_tagger", "search", {"@search": "spacy_lookahead.Lookahead.v1", "depth": 7},
     "depth"),
    ("arc_standard_parser", "search", {"@search": "spacy_lookahead.Lookahead.v1", "depth": "1"},
     "depth"),
    ("lookahead_tagger", "search", {"@search": "spacy_lookahead.Beam.v1", "width": 0}, "width"),
    ("lookahead_chunker", "search", {"@search": "spacy_lookahead.Beam.v1", "update": "late"},
     "update"),
    ("lookahead_tagger", "learner", {"@learners": "spacy_lookahead.MarginPerceptron.v1",
                                     "margin": -1}, "margin"),
    ("lookahead_tagger", "learner", {"@learners": "spacy_lookahead.SAPO.v1", "n": 0}, "n"),
    ("lookahead_ner", "learner", {"@learners": "spacy_lookahead.SAPO.v1", "l2": -1.0}, "l2"),
    ("lookahead_ner", "learner", {"@learners": "spacy_lookahead.SAPO.v1", "learning_rate": 0},
     "learning_rate"),
]


@pytest.mark.parametrize("factory,key,value,setting", BAD_BLOCKS)
def test_bad_block_settings_are_config_errors(factory, key, value, setting):
    with pytest.raises(ConfigValidationError) as info:
        spacy.blank("en").add_pipe(factory, config={key: value})
    assert f"{setting} must be" in str(info.value) or f"{setting}\t" in str(info.value), \
        str(info.value)


def test_a_search_the_learner_does_not_take_is_a_config_error():
    with pytest.raises(ConfigValidationError, match="ViolationFixing.v1 trains with @search"):
        spacy.blank("en").add_pipe("lookahead_tagger", config={
            "learner": {"@learners": "spacy_lookahead.ViolationFixing.v1"}})


def test_spacy_train_prints_a_config_error_without_traceback(tmp_path, shared_data):
    from pathlib import Path
    config = Path(__file__).resolve().parents[1] / "configs" / "tagger_ewt.cfg"
    result = subprocess.run(
        [sys.executable, "-m", "spacy", "train", str(config), "--paths.train", "x.spacy",
         "--paths.dev", "x.spacy", "--components.lookahead_tagger.search.depth", "9"],
        capture_output=True, text=True, cwd=tmp_path)
    out = result.stdout + result.stderr
    assert result.returncode != 0
    assert "depth must be an integer in 0..3" in out and "Traceback" not in out, out


def test_choice_settings_are_typed():
    """The factories' choice settings are Literal types (for spaCy's config
    validation, type checkers and IDEs), with the choices the components take."""
    import inspect
    from typing import get_args
    from spacy.util import registry
    from spacy_lookahead.pipes.learners import Learner
    from spacy_lookahead.pipes.search import Search
    expected = {"direction": {"ltr", "rtl"}, "feedback": {"recognition", "classification"},
                "target": {"tag", "pos"}, "scheme": {"iob2", "biluo", "iob"}}
    seen = set()
    for factory in ("lookahead_tagger", "lookahead_chunker", "lookahead_ner",
                    "arc_standard_parser", "fr_chunker", "fr_clause_finder"):
        params = inspect.signature(registry.factories.get(factory)).parameters
        for key, choices in expected.items():
            if key in params:
                assert set(get_args(params[key].annotation)) == choices, (factory, key)
                seen.add(key)
        if factory.startswith(("lookahead", "arc")):  # the blocks, typed as such
            assert (params["search"].annotation, params["learner"].annotation) == (Search, Learner)
    assert seen == set(expected)
    for name in ("spacy_lookahead.Beam.v1", "spacy_lookahead.TopN.v1"):
        update = inspect.signature(registry.search.get(name)).parameters["update"]
        assert set(get_args(update.annotation)) == {"standard", "early", "max_violation",
                                                    "hybrid", "latest"}


def test_spacy_debug_config_names_a_wrong_choice(tmp_path):
    """`spacy debug config` catches a typo in a choice before anything is
    trained, naming the setting and the value."""
    from pathlib import Path
    config = Path(__file__).resolve().parents[1] / "configs" / "tagger_ewt.cfg"
    result = subprocess.run(
        [sys.executable, "-m", "spacy", "debug", "config", str(config), "--paths.train", "x.spacy",
         "--paths.dev", "x.spacy", "--components.lookahead_tagger.search.@search",
         "spacy_lookahead.Lookahed.v1"],
        capture_output=True, text=True, cwd=tmp_path)
    out = result.stdout + result.stderr
    assert result.returncode != 0
    assert "Lookahed" in out and "search" in out, out


# --- model files ------------------------------------------------------------------

def saved(nlp, path):
    nlp.to_disk(path)
    return path


def test_damaged_weights_are_refused(parts, tmp_path):
    nlp = parts["arc_standard_parser"]
    weights = saved(nlp, tmp_path / "m") / "arc_standard_parser" / "weights"
    data = weights.read_bytes()
    cases = {
        "truncated": data[:len(data) // 2],
        "garbled": data[:len(data) // 2] + bytes(b ^ 0x5A for b in data[len(data) // 2:]),
        "one byte": data[:-100] + bytes([data[-100] ^ 1]) + data[-99:],
        "unsealed": Weights().to_bytes(),
        "empty": b"",
    }
    for what, damaged in cases.items():
        weights.write_bytes(damaged)
        with pytest.raises(ValueError, match=r"arc_standard_parser.*weights.*(damaged|checksum|sealed)"
                           ) as info:
            spacy.load(tmp_path / "m")
        assert str(weights) in str(info.value), what
        assert "re-train" in str(info.value), what


def _crafted(msg, what):
    """The weights message (to_bytes' arrays) changed as a hostile file would."""
    arrays = {k: numpy.frombuffer(msg[k], dtype=t).copy() for k, t in
              (("keys", "uint64"), ("lengths", "int32"), ("classes", "int32"), ("w", "float64"))}
    if what == "class id past the classes":
        arrays["classes"][0] = 10_000
    elif what == "negative row length":  # the total unchanged
        k = int(arrays["lengths"][0]) + 1
        arrays["lengths"][0] -= k
        arrays["lengths"][1] += k
    elif what == "NaN weight":
        arrays["w"][0] = numpy.nan
    elif what == "a row twice":
        arrays["keys"][1] = arrays["keys"][0]
    return {**msg, **{k: v.tobytes() for k, v in arrays.items()}}


@pytest.mark.parametrize("name", ["arc_standard_parser", "lookahead_ner", "fr_chunker"])
@pytest.mark.parametrize("what,says", [
    ("class id past the classes", "class ids"), ("negative row length", "negative length"),
    ("NaN weight", "not finite"), ("a row twice", "given twice")])
def test_a_crafted_weights_file_that_is_sealed_is_refused(parts, fr_chunking, tmp_path, name,
                                                          what, says):
    """A file re-sealed after its arrays were changed passes the checksum
    (it is not a signature): loading checks every length, class id and
    value before using it, and refuses the file instead of corrupting
    memory (a class id past the scores made dot() write out of bounds)."""
    import srsly
    from spacy_lookahead.pipes.integrity import seal, unseal
    nlp = fr_chunking if name == "fr_chunker" else parts[name]
    pipe = nlp.get_pipe(name)
    path = saved(nlp, tmp_path / "m") / name
    cfg = srsly.read_json(path / "cfg")
    settings = pipe._feature_values(cfg)
    raw = unseal(pipe.component_type, cfg["labels"], settings, (path / "weights").read_bytes(),
                 "weights")
    msg = _crafted(srsly.msgpack_loads(raw), what)
    (path / "weights").write_bytes(seal(pipe.component_type, cfg["labels"], settings,
                                        srsly.msgpack_dumps(msg)))
    with pytest.raises(ValueError, match=f"{name}.*{says}"):
        spacy.load(tmp_path / "m")


def test_sealed_weights_that_are_not_a_table_are_refused(parts, tmp_path):
    """A payload that passes the seal but is not a map of the table's
    fields: refused with the file named, and the component's cfg as it was."""
    import srsly
    from spacy_lookahead.pipes.integrity import seal
    pipe = parts["lookahead_tagger"].get_pipe("lookahead_tagger")
    path = saved(parts["lookahead_tagger"], tmp_path / "m") / "lookahead_tagger"
    cfg = srsly.read_json(path / "cfg")
    (path / "weights").write_bytes(seal(pipe.component_type, cfg["labels"],
                                        pipe._feature_values(cfg), srsly.msgpack_dumps([1, 2])))
    fresh = spacy.blank("en").add_pipe("lookahead_tagger")
    before = dict(fresh.cfg)
    with pytest.raises(ValueError, match="lookahead_tagger.*Corrupt or incompatible weights data"
                       ) as info:
        fresh.from_disk(path)
    assert str(path / "weights") in str(info.value)
    assert fresh.cfg == before


def test_swapped_weights_are_refused(parts, tmp_path):
    tagger_dir = saved(parts["lookahead_tagger"], tmp_path / "t")
    parser_dir = saved(parts["arc_standard_parser"], tmp_path / "p")
    (tagger_dir / "lookahead_tagger" / "weights").write_bytes(
        (parser_dir / "arc_standard_parser" / "weights").read_bytes())
    with pytest.raises(ValueError, match="ArcStandardParser.*not of a 'LookaheadTagger'.*swapped"):
        spacy.load(tagger_dir)
    parser_bytes = parts["arc_standard_parser"].get_pipe("arc_standard_parser").to_bytes()
    fresh = spacy.blank("en").add_pipe("lookahead_tagger")
    with pytest.raises(ValueError):
        fresh.from_bytes(parser_bytes)
    # the same type, other labels: the checksum covers the label set
    other = trained("lookahead_tagger", {"depth": 0}, lambda v: ewt_examples(v, "train", 30), 1)
    other_dir = saved(other, tmp_path / "o")
    (other_dir / "lookahead_tagger" / "weights").write_bytes(
        (saved(parts["lookahead_tagger"], tmp_path / "t2") / "lookahead_tagger" / "weights").read_bytes())
    with pytest.raises(ValueError, match="checksum"):
        spacy.load(other_dir)


@pytest.mark.parametrize("damage", ["not msgpack", "no weights", "no cfg", "not a map"])
def test_damaged_component_bytes_are_refused(parts, damage):
    import srsly
    data = parts["lookahead_tagger"].get_pipe("lookahead_tagger").to_bytes(exclude=["vocab"])
    msg = srsly.msgpack_loads(data)
    damaged = {"not msgpack": data[:len(data) // 2],
               "no weights": srsly.msgpack_dumps({k: v for k, v in msg.items() if k != "weights"}),
               "no cfg": srsly.msgpack_dumps({k: v for k, v in msg.items() if k != "cfg"}),
               "not a map": srsly.msgpack_dumps([msg["cfg"], msg["weights"]])}[damage]
    fresh = spacy.blank("en").add_pipe("lookahead_tagger")
    with pytest.raises(ValueError, match=r"\[lookahead_tagger\] corrupt component bytes.*"
                                         r"Serialise the component again with to_bytes"):
        fresh.from_bytes(damaged, exclude=["vocab"])


def test_from_bytes_hands_the_weights_over(parts, tmp_path, monkeypatch):
    """from_bytes keeps no reference to the sealed weights while they are
    unsealed and built into a table (a copy fewer at the loading peak): the
    bytes reach unseal as from_disk's file bytes do, held by nothing else."""
    import spacy_lookahead.pipes.base as base
    refs, unseal = {}, base.unseal

    def counting(component, labels, settings, data, source):
        refs[source.split()[-1]] = sys.getrefcount(data)
        return unseal(component, labels, settings, data, source)

    monkeypatch.setattr(base, "unseal", counting)
    pipe = parts["lookahead_tagger"].get_pipe("lookahead_tagger")
    path = saved(parts["lookahead_tagger"], tmp_path / "m") / "lookahead_tagger"
    spacy.blank("en").add_pipe("lookahead_tagger").from_disk(path)
    spacy.blank("en").add_pipe("lookahead_tagger").from_bytes(pipe.to_bytes())
    assert set(refs) == {str(path / "weights"), "bytes"}
    assert refs["bytes"] == refs[str(path / "weights")]


# --- round trips ---------------------------------------------------------------------

TEXTS = ["The firm said on Monday that it would sell its stake .",
         "Done today.\n\nThe   firm said so.", "", "IL-2 gene expression requires NF-kB ."]


def annotations(doc):
    return ([t.tag_ for t in doc], [(t.head.i, t.dep_) for t in doc],
            [(e.start, e.end, e.label_) for e in doc.ents],
            {k: [(s.start, s.end, s.label_) for s in doc.spans[k]] for k in doc.spans})


@pytest.mark.parametrize("how", ["bytes", "disk", "pickle"])
def test_round_trips_give_the_same_annotations(full, tmp_path, how):
    other = reload_pipeline(full, how, tmp_path / "m")
    assert [annotations(d) for d in other.pipe(TEXTS)] == [annotations(d) for d in full.pipe(TEXTS)]


def test_n_process_2_gives_the_same_annotations(full):
    texts = TEXTS * 4
    ours = [annotations(d) for d in full.pipe(texts)]
    assert [annotations(d) for d in full.pipe(texts, n_process=2, batch_size=4)] == ours


def test_n_process_2_under_spawn(full):
    """spaCy's n_process pickles the token extensions for processes that a
    spawn start method makes afresh (macOS, Windows, Linux from Python
    3.14): the probability getters must pickle."""
    import multiprocessing
    before = multiprocessing.get_start_method(allow_none=True)
    multiprocessing.set_start_method("spawn", force=True)
    try:
        texts = TEXTS * 2
        ours = [annotations(d) for d in full.pipe(texts)]
        assert [annotations(d) for d in full.pipe(texts, n_process=2, batch_size=4)] == ours
    finally:
        multiprocessing.set_start_method(before, force=True)


def test_preset_entities_with_whitespace_edges(parts):
    """Preset entities are kept (as spaCy's ner keeps them); one that starts
    on a whitespace token is planned around without it."""
    nlp = parts["lookahead_ner"]
    words = ["\n", "IL-2", "gene", "expression", "in", "T", "cells", "."]
    doc = Doc(nlp.vocab, words=words, ents=["B-protein", "I-protein", "O", "O", "O",
                                            "B-cell_type", "I-cell_type", "O"])
    doc = nlp.get_pipe("lookahead_ner")(doc)
    ents = [(e.start, e.end, e.label_) for e in doc.ents]
    assert (1, 2, "protein") in ents and (5, 7, "cell_type") in ents


@pytest.mark.parametrize("search", [Greedy(), Beam(width=4), Lookahead(depth=1)])
def test_a_preset_outside_token_decodes_in_every_search(parts, shared_data, search):
    """One token of each doc preset as outside (ent_iob O): every search
    decodes every doc and keeps the preset (greedy right to left refused
    most such docs with NoValidOutput: a label before the preset that the
    scheme cannot end there)."""
    nlp = parts["lookahead_ner"]
    ner = nlp.get_pipe("lookahead_ner")
    rng = numpy.random.default_rng(0)
    docs, kept = [], []
    for eg in jnlpba(shared_data, nlp.vocab, "test", 120):
        doc = Doc(nlp.vocab, words=[t.text for t in eg.reference])
        spans = [e for e in eg.reference.ents if len(e) > 1]
        if not spans:
            continue
        span = spans[int(rng.integers(len(spans)))]
        k = span.start + int(rng.integers(1, len(span)))  # inside a gold name
        doc.set_ents([], outside=[doc[k:k + 1]], default="unmodified")
        docs.append(doc)
        kept.append(k)
    before, ner.search = ner.search, search  # (prediction reads the search; rtl, depth 1)
    try:
        out = list(ner.pipe(docs, batch_size=16))
    finally:
        ner.search = before
    assert len(out) == len(docs) > 40
    assert all(doc[k].ent_iob_ == "O" for doc, k in zip(out, kept))


@pytest.mark.parametrize("n_threads,lookup", [(1, False), (2, False), (2, True)])
def test_no_valid_output_names_the_doc_and_drops_its_batch(parts, monkeypatch, n_threads, lookup):
    """A doc with no valid output (preset labels that contradict the
    scheme, which spaCy's entities cannot make: forced here): the error
    names it (its place in the batch and its text), and with an error
    handler its batch is left out of pipe(), with one thread as with two:
    searched on the threads, or (lookup: the searching threads look the
    words up, and leave a doc with preset annotation) predicted again
    after the threads wrote the other docs."""
    nlp = parts["lookahead_ner"]
    ner = nlp.get_pipe("lookahead_ner")
    good = [Doc(nlp.vocab, words=["IL-2", "binds", "."]) for _ in range(3)]
    bad = Doc(nlp.vocab, words=["IL-2", "gene", "binds", ".", "T", "cells"])
    if lookup:  # (preset annotation: where the threads' look-up leaves presets to _finish)
        bad.set_ents([], default="outside")
    else:
        monkeypatch.setattr(type(ner), "_looks_up_on_threads", lambda self, docs: False)
    begin, inside = (a for a in ner.actions if a.startswith("B-")), \
        (a for a in ner.actions if a.startswith("I-"))
    b = next(begin)
    i = next(a for a in inside if a[2:] != b[2:])  # I- of another type after B-
    contradiction = numpy.full((6,), -1, dtype="int32")
    contradiction[:2] = ner.actions.index(b), ner.actions.index(i)
    monkeypatch.setattr(type(ner), "forced_ids",
                        lambda self, doc: contradiction if len(doc) == 6 else None)
    # (docs without token.ent_iob are not asked for presets: ask every doc)
    monkeypatch.setattr(type(ner), "preset_docs", lambda self, docs, batch: range(len(docs)))
    before = dict(ner.cfg)
    ner.cfg["n_threads"] = n_threads
    try:
        with pytest.raises(ValueError, match=r"doc 1 of the batch \(6 tokens: 'IL-2 gene binds"):
            list(ner.pipe([good[0], bad, good[1]], batch_size=4))
        seen = []
        ner.set_error_handler(lambda name, pipe, docs, err: seen.append(len(docs)))
        out = list(ner.pipe([good[0], good[1], bad, good[2]], batch_size=2))
    finally:
        ner.set_error_handler(spacy.util.raise_error)
        ner.cfg.clear()
        ner.cfg.update(before)
    assert seen == [2] and len(out) == 2
    # (the dropped batch's other doc as it was, though the threads had written it)
    assert not good[2].has_annotation("ENT_IOB")


def test_predict_nbest_on_an_annotated_doc_reads_no_presets(parts):
    """ner.predict_nbest([nlp(text)]) (the README's pattern): the doc's
    entities are the NER's own output, not preset annotation, so its n best
    are those of the bare doc; with presets=True they constrain (every token
    is then fixed: one output). n is bounded."""
    nlp = parts["lookahead_ner"]
    ner = nlp.get_pipe("lookahead_ner")
    text = "IL-2 gene expression requires NF-kB in activated T cells ."
    annotated, bare = nlp(text), nlp.make_doc(text)
    assert len(annotated.ents) > 0
    nbest = ner.predict_nbest([annotated], n=5)[0]
    assert len(nbest) == 5 and nbest == ner.predict_nbest([bare], n=5)[0]
    assert len(ner.predict_nbest([annotated], n=5, presets=True)[0]) == 1
    spans = [(e.start, e.end, e.label_) for e in annotated.ents]
    assert spans == [(e.start, e.end, e.label_) for e in nlp(text).ents]  # the doc is as it was
    with pytest.raises(ValueError, match=r"n must be an integer in 1\.\.1000"):
        ner.predict_nbest([bare], n=1001)


def test_fr_units_follow_sentences_that_start_on_whitespace(parts):
    """A sentencizer starts a sentence on the whitespace token after a full
    stop: the FR components still decode sentence by sentence."""
    nlp = assemble(parts, ("lookahead_tagger", "fr_chunker"))
    nlp.add_pipe("sentencizer", first=True)
    doc = nlp.make_doc("\n".join(["The cat sat on the mat ."] * 50))
    for name, proc in nlp.pipeline[:2]:
        doc = proc(doc)
    units = nlp.get_pipe("fr_chunker").units(doc)
    assert len(units) == 50 and max(len(u) for u in units) == 7
    doc = nlp.get_pipe("fr_chunker")(doc)
    assert all(s.sent == doc[s.start].sent for s in doc.spans["chunks"])
    assert all(s.start // 8 == (s.end - 1) // 8 for s in doc.spans["chunks"])
    spaces = Doc(doc.vocab, words=["\n", "\n"], spaces=[False, False], sent_starts=[1, 1])
    assert len(nlp.get_pipe("fr_chunker")(spaces).spans["chunks"]) == 0


def test_given_sentences_keep_one_root_past_the_stack_bound(parts):
    """respect_sent_starts: a given sentence longer than the parser's stack
    bound (256 words) still gets one root."""
    nlp = parts["arc_standard_parser"]
    pipe = nlp.get_pipe("arc_standard_parser")
    pipe.cfg["respect_sent_starts"] = True
    try:
        words = ["the", "very", "old"] * 100 + ["."]
        tags = ["DT", "RB", "JJ"] * 100 + ["."]
        doc = pipe(Doc(nlp.vocab, words=words, tags=tags, sent_starts=[1] + [0] * 300))
    finally:
        pipe.cfg["respect_sent_starts"] = False
    assert sum(t.head.i == t.i for t in doc) == 1 and len(list(doc.sents)) == 1


def test_the_unseen_tag_tally_does_not_leak_into_the_next_call(parts):
    pipe = parts["lookahead_chunker"].get_pipe("lookahead_chunker")
    with pytest.raises(ValueError, match="no POS tag"):
        list(pipe.pipe([Doc(pipe.vocab, words=["The", "cat"], tags=["DT", "NOVELTAG"]),
                        Doc(pipe.vocab, words=["The", "cat"], tags=["DT", ""])]))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pipe(Doc(pipe.vocab, words=["The", "cat"], tags=["DT", "NN"]))
    assert not [w for w in caught if "never seen" in str(w.message)]


def test_weights_of_other_feature_settings_are_refused(tmp_path):
    """The checksum covers the feature settings: a weights file moved to a
    component of the same type and labels but another direction is refused."""
    make = lambda v: ewt_examples(v, "train", 30)  # noqa: E731
    ltr = saved(trained("lookahead_tagger", {"depth": 0}, make, 1), tmp_path / "ltr")
    rtl = saved(trained("lookahead_tagger", {"depth": 0, "direction": "rtl"}, make, 1),
                tmp_path / "rtl")
    (ltr / "lookahead_tagger" / "weights").write_bytes(
        (rtl / "lookahead_tagger" / "weights").read_bytes())
    with pytest.raises(ValueError, match="checksum.*feature settings"):
        spacy.load(ltr)


def test_weights_saved_before_the_checksum_covered_settings_say_so(tmp_path):
    """A file sealed with the earlier checksum (weights and labels only) is
    refused with an error that says it comes from an earlier version, not
    that it is damaged."""
    import srsly
    from spacy_lookahead.pipes import integrity
    make = lambda v: ewt_examples(v, "train", 30)  # noqa: E731
    path = saved(trained("lookahead_tagger", {"depth": 0}, make, 1), tmp_path / "old")
    weights_file = path / "lookahead_tagger" / "weights"
    msg = srsly.msgpack_loads(weights_file.read_bytes())
    labels = srsly.read_json(path / "lookahead_tagger" / "cfg")["labels"]
    msg["header"]["sha256"] = integrity._checksum_without_settings(msg["weights"], labels)
    weights_file.write_bytes(srsly.msgpack_dumps(msg))
    with pytest.raises(ValueError, match="saved by an earlier spacy-lookahead.*Re-train"):
        spacy.load(path)


def test_the_seal_covers_the_header_and_version_1_files_still_load(tmp_path):
    """Versions 2 and 3 seal the header's fields too: a file whose
    `written_by` (or component, or label count) was changed fails its
    checksum. A file sealed as version 1 (no header in the checksum) loads
    and predicts as before; so does a file of version 2, whose weights
    spell out their running totals and clocks of 0 (version 3 leaves
    them out). A version it does not know is refused as such."""
    import srsly
    from spacy_lookahead.pipes import integrity
    make = lambda v: ewt_examples(v, "train", 30)  # noqa: E731
    nlp = trained("lookahead_tagger", {"depth": 0}, make, 1)
    path = saved(nlp, tmp_path / "m")
    weights_file = path / "lookahead_tagger" / "weights"
    sealed = weights_file.read_bytes()
    msg = srsly.msgpack_loads(sealed)
    assert msg["header"]["version"] == 3
    assert not {"total", "times", "clocks"} & set(srsly.msgpack_loads(msg["weights"]))
    msg["header"]["written_by"] = "spacy-lookahead 99"
    weights_file.write_bytes(srsly.msgpack_dumps(msg))
    with pytest.raises(ValueError, match="fails its checksum"):
        spacy.load(path)
    msg = srsly.msgpack_loads(sealed)
    cfg = srsly.read_json(path / "lookahead_tagger" / "cfg")
    pipe = nlp.get_pipe("lookahead_tagger")
    msg["header"]["version"] = 1
    msg["header"]["sha256"] = integrity._checksum(msg["weights"], cfg["labels"],
                                                  pipe._feature_values(cfg))
    weights_file.write_bytes(srsly.msgpack_dumps(msg))
    docs = [eg.predicted for eg in ewt_examples(nlp.vocab, "dev", 20)]
    expected = [[t.tag_ for t in d] for d in nlp.pipe([d.copy() for d in docs])]
    old = spacy.load(path)
    assert [[t.tag_ for t in d] for d in old.pipe([d.copy() for d in docs])] == expected
    msg = srsly.msgpack_loads(sealed)
    weights = srsly.msgpack_loads(msg["weights"])
    n = len(weights["w"]) // 8
    weights["total"], weights["times"] = bytes(8 * n), bytes(8 * n)
    msg["weights"] = srsly.msgpack_dumps(weights)
    msg["header"]["version"] = 2
    msg["header"]["sha256"] = integrity._checksum(msg["weights"], cfg["labels"],
                                                  pipe._feature_values(cfg), msg["header"])
    weights_file.write_bytes(srsly.msgpack_dumps(msg))
    two = spacy.load(path)
    assert [[t.tag_ for t in d] for d in two.pipe([d.copy() for d in docs])] == expected
    # a version this one does not know (a later one's file): refused by it
    msg["header"]["version"] = 4
    weights_file.write_bytes(srsly.msgpack_dumps(msg))
    with pytest.raises(ValueError, match="weights format version 4 .*reads versions 1, 2, 3"):
        spacy.load(path)
