"""fr_clause_finder and fr_chunker as spaCy components; the CoNLL-2001
reader and writer."""

import sys
from pathlib import Path

import pytest
import spacy
from conftest import reload_pipeline
from spacy.tokens import Doc, Span
from spacy.training import Example
from clause_data import NESTED, wsj  # noqa: F401
from span_data import train

import spacy_lookahead.pipes.phrases  # noqa: F401  (factories, when not pip-installed)
import spacy_lookahead.scoring  # noqa: F401
from spacy_lookahead.readers.clauses import (
    ClauseCorpus,
    clause_column,
    parse_clauses,
    write_clauses,
)
from spacy_lookahead.readers.columns import ColumnCorpus

CONFIGS = Path(__file__).resolve().parents[1] / "configs"

# --- reader and writer -------------------------------------------------------------

def test_reader_nested_brackets_and_round_trip(tmp_path):
    path = tmp_path / "nested.txt"
    path.write_text(NESTED, encoding="utf8")
    vocab = spacy.blank("en").vocab
    examples = list(ClauseCorpus(path).read(vocab))
    assert len(examples) == 2
    ref = examples[0].reference
    clauses = sorted((s.start, s.end, s.label_) for s in ref.spans["clauses"])
    assert clauses == [(0, 9, "S"), (2, 5, "S"), (3, 5, "S"), (7, 8, "S")]
    # Inputs on the predicted doc, the target only on the reference.
    pred = examples[0].predicted
    assert [t.tag_ for t in pred][:3] == ["PRP", "VBD", "IN"]
    assert [(s.start, s.end, s.label_) for s in pred.spans["chunks"]][:3] == [(0, 1, "NP"), (1, 2, "VP"),
                                                                             (2, 3, "SBAR")]
    assert "clauses" not in pred.spans
    out = tmp_path / "out.txt"
    assert write_clauses([eg.reference for eg in examples], out) == 2
    assert out.read_text(encoding="utf8") == NESTED


def test_round_trip_on_the_real_file(shared_data, tmp_path):
    src = shared_data / "wsj_clauses" / "dev.txt"
    vocab = spacy.blank("en").vocab
    docs = [eg.reference for eg in ClauseCorpus(src).read(vocab)]
    assert len(docs) == 273 and sum(len(d.spans["clauses"]) for d in docs) == 740
    write_clauses(docs, tmp_path / "dev.txt")
    assert (tmp_path / "dev.txt").read_text(encoding="utf8") == src.read_text(encoding="utf8")


@pytest.mark.parametrize("column, message", [
    (["(S*", "*"], "never closed"),
    (["*", "*S)"], "never opened"),
    (["(S*", "S*)"], "malformed"),
])
def test_bad_brackets_raise(column, message):
    with pytest.raises(ValueError, match=message):
        parse_clauses(column)


def test_bad_file_names_the_line(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_text("He PRP B-NP (S*\nleft VBD B-VP *\n", encoding="utf8")
    with pytest.raises(ValueError, match=r"bad.txt:1: .*never closed"):
        list(ClauseCorpus(path).read(spacy.blank("en").vocab))


def test_clause_column_orders_nested_brackets():
    doc = Doc(spacy.blank("en").vocab, words=["a", "b", "c"])
    spans = [Span(doc, 0, 3, "S"), Span(doc, 0, 2, "S"), Span(doc, 1, 2, "S")]
    assert clause_column(spans, 3) == ["(S(S*", "(S*S)S)", "*S)"]
    assert parse_clauses(clause_column(spans, 3)) == [(1, 2, "S"), (0, 2, "S"), (0, 3, "S")]


# --- the clause finder ---------------------------------------------------------------

@pytest.fixture(scope="module")
def clause_nlp(shared_data):
    nlp = spacy.blank("en")
    nlp.add_pipe("fr_clause_finder")
    return train(nlp, wsj(shared_data, nlp.vocab, "train", 1200), 4)


def test_clause_finder_f1_floor(clause_nlp, shared_data):
    scores = clause_nlp.evaluate(wsj(shared_data, clause_nlp.vocab, "dev"))
    assert scores["spans_clauses_f"] > 0.70, scores
    stats = clause_nlp.get_pipe("fr_clause_finder").filter_stats(wsj(shared_data, clause_nlp.vocab, "dev"))
    assert stats["candidate_recall"] > 0.8 and stats["upper_bound_f"] >= scores["spans_clauses_f"]
    # Filters, not classifiers: they keep (almost) every gold boundary.
    assert stats["start_r"] > 0.85 and stats["end_r"] > 0.85


def test_clause_finder_writes_nested_spans(clause_nlp, shared_data):
    docs = [eg.predicted for eg in wsj(shared_data, clause_nlp.vocab, "dev")]
    docs = list(clause_nlp.pipe(docs))
    spans = [(s.start, s.end) for d in docs for s in d.spans["clauses"]]
    assert spans
    nested = 0
    for doc in docs:
        group = [(s.start, s.end) for s in doc.spans["clauses"]]
        for a in group:
            for b in group:
                assert not (a[0] < b[0] < a[1] < b[1]), "clauses overlap"
                nested += a != b and a[0] <= b[0] and b[1] <= a[1]
    assert nested > 0


def test_clause_finder_without_chunks_raises(clause_nlp):
    doc = Doc(clause_nlp.vocab, words=["He", "left"], tags=["PRP", "VBD"])
    with pytest.raises(ValueError, match=r"needs chunks in doc.spans\['chunks'\].*chunker"):
        clause_nlp(doc)
    doc = Doc(clause_nlp.vocab, words=["He", "left"])
    with pytest.raises(ValueError, match="needs POS tags"):
        clause_nlp(doc)


def test_training_takes_inputs_from_the_gold_doc(shared_data):
    """spacy.Corpus.v1 gives update() docs with words only: POS tags and
    chunks come from the aligned reference."""
    nlp = spacy.blank("en")
    nlp.add_pipe("fr_clause_finder")
    examples = wsj(shared_data, nlp.vocab, "train", 300)
    bare = [Example(Doc(nlp.vocab, words=[t.text for t in eg.reference]), eg.reference) for eg in examples]
    train(nlp, bare, 2)
    pipe = nlp.get_pipe("fr_clause_finder")
    assert pipe.weights.time == 2 * 300
    scores = nlp.evaluate(wsj(shared_data, nlp.vocab, "dev"))
    assert scores["spans_clauses_f"] > 0.5


@pytest.mark.parametrize("how", ["bytes", "disk", "pickle"])
def test_serialisation_round_trip(clause_nlp, shared_data, tmp_path, how):
    docs = [eg.predicted for eg in wsj(shared_data, clause_nlp.vocab, "dev", 80)]
    before = [[(s.start, s.end) for s in d.spans["clauses"]] for d in clause_nlp.pipe(d.copy() for d in docs)]
    other = reload_pipeline(clause_nlp, how, tmp_path / "model")
    after = [[(s.start, s.end) for s in d.spans["clauses"]] for d in other.pipe(d.copy() for d in docs)]
    assert before == after and any(before)
    assert other.get_pipe("fr_clause_finder").to_bytes() == clause_nlp.get_pipe("fr_clause_finder").to_bytes()


def test_empty_and_one_token_docs(clause_nlp):
    empty = Doc(clause_nlp.vocab, words=[])
    assert list(clause_nlp(empty).spans["clauses"]) == []
    one = Doc(clause_nlp.vocab, words=["Go"], tags=["VB"])
    one.spans["chunks"] = [Span(one, 0, 1, "VP")]
    spans = [(s.start, s.end) for s in clause_nlp(one).spans["clauses"]]
    assert spans in ([], [(0, 1)])


@pytest.mark.parametrize("config, message", [
    ({"feedback": "global"}, r"feedback[\s\S]*global"),
    ({"max_length": -1}, "max_length must be an integer >= 0"),
    ({"chunks_key": ""}, "chunks_key must be a non-empty"),
])
def test_bad_config_values_raise(config, message):
    nlp = spacy.blank("en")
    with pytest.raises(ValueError, match=message):
        nlp.add_pipe("fr_clause_finder", config=config)


def test_untrained_component_says_how_to_fix():
    nlp = spacy.blank("en")
    nlp.add_pipe("fr_clause_finder")
    with pytest.raises(ValueError, match="initialize it first"):
        nlp(Doc(nlp.vocab, words=["Go"], tags=["VB"]))


# --- the FR chunker ------------------------------------------------------------------

def test_fr_chunker_on_conll2000_slice(shared_data):
    nlp = spacy.blank("en")
    nlp.add_pipe("fr_chunker")
    corpus = ColumnCorpus(shared_data / "conll2000" / "train.txt", ["word", "pos", "chunk"], "chunk")
    examples = [eg for _, eg in zip(range(1000), corpus.read(nlp.vocab))]
    train(nlp, examples, 3)
    test = ColumnCorpus(shared_data / "conll2000" / "test.txt", ["word", "pos", "chunk"], "chunk")
    scores = nlp.evaluate([eg for _, eg in zip(range(400), test.read(nlp.vocab))])
    assert scores["spans_chunks_f"] > 0.88, scores
    # Flat: no two chunks share a token.
    doc = nlp(Doc(nlp.vocab, words=["The", "cat", "sat", "on", "the", "mat", "."],
                  tags=["DT", "NN", "VBD", "IN", "DT", "NN", "."]))
    covered = [i for s in doc.spans["chunks"] for i in range(s.start, s.end)]
    assert len(covered) == len(set(covered)) and covered
    assert pickle_round_trip(nlp, doc)


def pickle_round_trip(nlp, doc):
    import pickle
    other = pickle.loads(pickle.dumps(nlp))
    again = other(Doc(nlp.vocab, words=[t.text for t in doc], tags=[t.tag_ for t in doc]))
    return [(s.start, s.end, s.label_) for s in again.spans["chunks"]] == \
        [(s.start, s.end, s.label_) for s in doc.spans["chunks"]]


# --- spacy train ---------------------------------------------------------------------------

def test_spacy_train_clauses_config(shared_data, tmp_path):
    from spacy.training.initialize import init_nlp
    from spacy.training.loop import train as spacy_train
    from spacy.util import load_config

    lines = (shared_data / "wsj_clauses" / "train.txt").read_text(encoding="utf8").split("\n\n")
    (tmp_path / "train.txt").write_text("\n\n".join(lines[:800]) + "\n", encoding="utf8")
    config = load_config(CONFIGS / "clauses_wsj.cfg", overrides={
        "paths.train": str(tmp_path / "train.txt"),
        "paths.dev": str(shared_data / "wsj_clauses" / "dev.txt"),
        "training.max_epochs": 3,
        "training.eval_frequency": 20,
    }, interpolate=False)
    nlp = init_nlp(config)
    (tmp_path / "out").mkdir()
    nlp, _ = spacy_train(nlp, tmp_path / "out", stdout=sys.stdout, stderr=sys.stderr)
    loaded = spacy.load(tmp_path / "out" / "model-last")
    scores = loaded.evaluate(wsj(shared_data, loaded.vocab, "dev"))
    assert scores["spans_clauses_f"] > 0.65, scores
    pipe = nlp.get_pipe("clauses")
    assert loaded.get_pipe("clauses").averaged_weights.to_bytes() == pipe.weights.average().to_bytes()
