"""Corpus readers (CoNLL-2000, IOB columns), the column writer and the
span <-> IOB1/IOB2/BILUO helpers."""
from collections import Counter
from pathlib import Path

import pytest
import spacy
from hypothesis import given, settings
from hypothesis import strategies as st
from spacy.tokens import Doc, Span
from spacy.util import registry
from thinc.api import Config

from spacy_lookahead.readers import (ColumnCorpus, TagError, check_tags, create_conll2000_reader,
                                     create_iob_reader, doc_to_iob, iob_to_spans, write_columns)

FIXTURES = Path(__file__).parent / "fixtures"
VOCAB = spacy.blank("en").vocab


@pytest.fixture(scope="module")
def nlp():
    return spacy.blank("en")


def spans_of(spans):
    return [(s.label_, s.start, s.end) for s in spans]


def chunks(doc, key="chunks"):
    return spans_of(doc.spans[key])


def make_doc(nlp, n):
    return Doc(nlp.vocab, words=[f"w{i}" for i in range(n)])


# --- CoNLL-2000 -------------------------------------------------------------

CONLL2000_CHUNKS = [
    [("NP", 0, 1), ("PP", 1, 2), ("NP", 2, 4), ("VP", 4, 9), ("NP", 9, 12)],
    [("NP", 0, 1), ("VP", 1, 2), ("NP", 2, 4), ("NP", 4, 6), ("PP", 6, 7), ("NP", 7, 8)],
    [("VP", 0, 1), ("NP", 1, 2)],
]


def test_conll2000_reader(nlp):
    examples = list(create_conll2000_reader(str(FIXTURES / "conll2000_sample.txt"))(nlp))
    assert len(examples) == 3
    assert [t.text for t in examples[1].predicted] == "He gave the man a book in June .".split()
    assert [chunks(eg.reference) for eg in examples] == CONLL2000_CHUNKS
    for eg in examples:
        # POS is an input: on the predicted doc as on the reference
        assert eg.predicted.has_annotation("TAG")
        assert [t.tag_ for t in eg.predicted] == [t.tag_ for t in eg.reference]
        # the chunks are the target: only on the reference
        assert "chunks" not in eg.predicted.spans
        assert not eg.predicted.has_annotation("ENT_IOB")
    assert [t.tag_ for t in examples[0].predicted][:4] == ["NN", "IN", "DT", "NN"]
    # the copy Language.evaluate/update makes keeps the input columns
    assert [t.tag_ for t in examples[2].predicted.copy()] == ["VB", "PRP"]


def test_conll2000_reader_accepts_iob1(nlp):
    examples = list(create_conll2000_reader(FIXTURES / "conll2000_sample_iob1.txt")(nlp))
    assert [chunks(eg.reference) for eg in examples] == CONLL2000_CHUNKS


def test_conll2000_reader_spans_key_and_limit(nlp):
    reader = create_conll2000_reader(FIXTURES / "conll2000_sample.txt", spans_key="np", limit=2)
    examples = list(reader(nlp))
    assert len(examples) == 2
    assert chunks(examples[0].reference, "np") == CONLL2000_CHUNKS[0]
    # a corpus is re-read on each call (one call per epoch)
    assert len(list(reader(nlp))) == 2


# --- IOB columns: JNLPBA, CoNLL-2003 ---------------------------------------

def test_iob_reader_jnlpba(nlp):
    examples = list(create_iob_reader(FIXTURES / "jnlpba_sample.iob2")(nlp))
    assert len(examples) == 3  # ###MEDLINE: lines are skipped
    assert [spans_of(eg.reference.ents) for eg in examples] == [
        [("protein", 2, 4), ("cell_type", 5, 6)],
        # adjacent proteins; I-cell_line after B-protein and I-RNA after O
        # start new chunks, as conlleval reads them
        [("protein", 0, 1), ("protein", 1, 2), ("cell_line", 2, 4), ("DNA", 5, 7), ("RNA", 8, 9)],
        [("protein", 0, 2)],
    ]
    for eg in examples:
        assert [t.ent_iob_ for t in eg.reference].count("") == 0  # all tokens annotated
        assert not eg.predicted.has_annotation("ENT_IOB")
        assert not eg.predicted.has_annotation("TAG")
        assert "chunks" not in eg.predicted.spans
    assert [t.text for t in examples[0].predicted] == "Number of glucocorticoid receptors in lymphocytes .".split()


CONLL2003_ENTS = [
    [("ORG", 0, 1), ("MISC", 2, 3), ("MISC", 6, 7)],
    [("PER", 0, 2)],
    [("LOC", 0, 1)],
    [("LOC", 0, 1), ("LOC", 1, 2), ("LOC", 3, 4)],
]
CONLL2003_CHUNKS = [
    [("NP", 0, 1), ("VP", 1, 2), ("NP", 2, 4), ("VP", 4, 6), ("NP", 6, 8)],
    [("NP", 0, 2)],
    [("NP", 0, 2)],
    [("NP", 0, 1), ("NP", 1, 2), ("NP", 3, 4)],
]


@pytest.mark.parametrize("scheme", ["iob1", "iob2"])
def test_iob_reader_conll2003(nlp, scheme):
    reader = create_iob_reader(FIXTURES / "conll2003_sample.txt", columns=["word", "pos", "chunk", "ent"],
                               scheme=scheme)
    examples = list(reader(nlp))
    # -DOCSTART- lines separate documents (even without blank lines around them) and are skipped
    assert len(examples) == 4
    assert [spans_of(eg.reference.ents) for eg in examples] == CONLL2003_ENTS
    for eg, expected in zip(examples, CONLL2003_CHUNKS):
        # POS and chunks are inputs: on both docs
        assert chunks(eg.predicted) == chunks(eg.reference) == expected
        assert [t.tag_ for t in eg.predicted] == [t.tag_ for t in eg.reference]
        assert not eg.predicted.has_annotation("ENT_IOB")
    assert [t.tag_ for t in examples[0].predicted][:3] == ["NNP", "VBZ", "JJ"]
    copy = examples[3].predicted.copy()
    assert chunks(copy) == CONLL2003_CHUNKS[3] and copy[0].tag_ == "NNP"


def test_iob_reader_ignored_columns(nlp):
    reader = create_iob_reader(FIXTURES / "conll2003_sample.txt", columns=["word", "_", "_", "ent"])
    examples = list(reader(nlp))
    assert [spans_of(eg.reference.ents) for eg in examples] == CONLL2003_ENTS
    assert not examples[0].predicted.has_annotation("TAG")
    assert "chunks" not in examples[0].predicted.spans


def test_iob_reader_any_whitespace(nlp, tmp_path):
    path = tmp_path / "mixed.txt"
    path.write_text("IL-2 \t B-protein\r\nR\tI-protein  \n\n\n  \nT  B-cell_type\n", encoding="utf8")
    examples = list(create_iob_reader(path)(nlp))
    assert [spans_of(eg.reference.ents) for eg in examples] == [[("protein", 0, 2)], [("cell_type", 0, 1)]]
    assert [t.text for t in examples[0].reference] == ["IL-2", "R"]


def test_empty_files_give_no_examples(nlp, tmp_path):
    (tmp_path / "empty.txt").write_text("", encoding="utf8")
    (tmp_path / "blank.txt").write_text("\n\n-DOCSTART- -X- O O\n\n", encoding="utf8")
    for name in ("empty.txt", "blank.txt"):
        assert list(create_conll2000_reader(tmp_path / name)(nlp)) == []
        assert list(create_iob_reader(tmp_path / name)(nlp)) == []


def test_missing_file(nlp, tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.txt"):
        list(create_conll2000_reader(tmp_path / "nope.txt")(nlp))


def test_held_out_part_is_the_last_sentences_and_the_rest_the_others(nlp, tmp_path):
    # 7 sentences with separators of every kind between them; a tenth of 7
    # rounds to 1, 0.3 of 7 to 2
    lines = ["-DOCSTART- O", ""]
    for i in range(7):
        lines += [f"w{i} O", f"x{i} B-protein", "", "###MEDLINE:1" if i == 3 else ""]
    path = tmp_path / "seven.iob2"
    path.write_text("\n".join(lines[:-2]), encoding="utf8")  # no blank line at the end

    def firsts(**kwargs):
        return [eg.reference[0].text for eg in create_iob_reader(path, **kwargs)(nlp)]

    everything = [f"w{i}" for i in range(7)]
    assert firsts() == everything
    assert firsts(held_out=0.1, part="held_out") == ["w6"]
    assert firsts(held_out=0.3, part="held_out") == ["w5", "w6"]
    assert firsts(held_out=0.3, part="rest") == everything[:5]
    assert firsts(held_out=0.3, part="rest", limit=2) == ["w0", "w1"]


def test_n_sents_joins_sentences_in_a_row_into_docs_after_the_held_out_cut(nlp, tmp_path):
    lines = []
    for i in range(7):
        lines += [f"w{i} O", f"x{i} B-protein", ""]
    path = tmp_path / "seven.iob2"
    path.write_text("\n".join(lines), encoding="utf8")
    docs = [eg for eg in create_iob_reader(path, n_sents=3)(nlp)]
    assert [[t.text for t in eg.reference] for eg in docs] == [
        ["w0", "x0", "w1", "x1", "w2", "x2"], ["w3", "x3", "w4", "x4", "w5", "x5"], ["w6", "x6"]]
    for eg in docs:
        assert [t.text for t in eg.predicted] == [t.text for t in eg.reference]
        assert [t.is_sent_start for t in eg.reference][::2] == [True] * (len(eg.reference) // 2)
        assert [e.text for e in eg.reference.ents] == [t.text for t in eg.reference][1::2]
        assert not eg.predicted.ents
    # the held-out tenth (1 of 7 sentences) is cut in sentences first
    rest = [eg.reference.text for eg in create_iob_reader(path, n_sents=3, held_out=0.1,
                                                          part="rest")(nlp)]
    assert len(rest) == 2 and rest[1].split()[-2:] == ["w5", "x5"]
    assert len(list(create_iob_reader(path, n_sents=3, limit=1)(nlp))) == 1
    with pytest.raises(ValueError, match="n_sents"):
        create_iob_reader(path, n_sents=0)


def test_held_out_parts_of_real_data_split_it(nlp, shared_data):
    path = shared_data / "conll2000" / "test.txt"
    reader = lambda part: [eg.reference.text for eg in create_conll2000_reader(path, held_out=0.1, part=part)(nlp)]
    rest, held = reader("rest"), reader("held_out")
    assert rest + held == [eg.reference.text for eg in create_conll2000_reader(path)(nlp)]
    assert len(held) == round(0.1 * (len(rest) + len(held)))


@pytest.mark.parametrize("kwargs,match", [
    ({"part": "dev"}, "part must be one of"),
    ({"part": "rest"}, "needs held_out > 0"),
    ({"held_out": 1.0, "part": "rest"}, r"in \[0, 1\)"),
    ({"columns": ["word", "lemma", "ent"]}, "unknown column"),
    ({"columns": ["word", "pos"]}, "no 'ent' column"),
    ({"columns": ["pos", "ent"]}, "no 'word' column"),
    ({"columns": ["word", "ent", "ent"]}, "more than once"),
    ({"scheme": "bio"}, "scheme"),
])
def test_iob_reader_bad_settings(kwargs, match):
    with pytest.raises(ValueError, match=match):
        create_iob_reader("x.txt", **kwargs)


GOOD_CONLL2000 = "He PRP B-NP\nreckons VBZ B-VP\n\n"


@pytest.mark.parametrize("bad_line,problem", [
    ("the DT B-NP extra", "expected 3 columns, found 4"),
    ("the DT", "expected 3 columns, found 2"),
    ("the DT X-NP", "malformed IOB2 tag 'X-NP'"),
    ("the DT B-", "malformed IOB2 tag 'B-'"),
    ("the DT I-", "malformed IOB2 tag 'I-'"),
    ("the DT NP", "malformed IOB2 tag 'NP'"),
    ("the DT B_NP", "malformed IOB2 tag 'B_NP'"),
    ("the DT U-NP", "malformed IOB2 tag 'U-NP'"),
])
def test_conll2000_malformed_line(nlp, tmp_path, bad_line, problem):
    path = tmp_path / "bad.txt"
    path.write_text(GOOD_CONLL2000 + "current JJ B-NP\n" + bad_line + "\n", encoding="utf8")
    with pytest.raises(ValueError) as err:
        list(create_conll2000_reader(path)(nlp))
    message = str(err.value)
    assert f"{path}:5:" in message  # the file and the 1-based line number
    assert problem in message
    assert repr(bad_line) in message  # the line itself


@pytest.mark.parametrize("columns,content,lineno,problem", [
    (["word", "ent"], "IL-2\tB-protein\nR\tI-protein\textra\n", 2, "expected 2 columns, found 3"),
    (["word", "ent"], "###MEDLINE:1\n\nIL-2\tB-\n", 3, "malformed IOB2 tag 'B-'"),
    (["word", "ent"], "IL-2\n", 1, "expected 2 columns, found 1"),
    (["word", "pos", "chunk", "ent"], "-DOCSTART- -X- O O\n\nEU NNP I-NP X-ORG\n", 3,
     "malformed IOB2 tag 'X-ORG' in column 4"),
    (["word", "pos", "chunk", "ent"], "EU NNP I-NP I-ORG\nrejects VBZ V O\n", 2,
     "malformed IOB2 tag 'V' in column 3"),
])
def test_iob_malformed_line(nlp, tmp_path, columns, content, lineno, problem):
    path = tmp_path / "bad.iob2"
    path.write_text(content, encoding="utf8")
    with pytest.raises(ValueError) as err:
        list(create_iob_reader(path, columns=columns)(nlp))
    message = str(err.value)
    assert f"{path}:{lineno}:" in message and problem in message
    assert repr(content.splitlines()[lineno - 1]) in message


def test_biluo_columns_strictly_checked(nlp, tmp_path):
    path = tmp_path / "biluo.txt"
    path.write_text("a\tB-X\nb\tL-X\nc\tU-Y\n\nd\tB-X\ne\tO\n", encoding="utf8")
    reader = create_iob_reader(path, scheme="biluo")
    with pytest.raises(ValueError) as err:
        list(reader(nlp))
    assert f"{path}:6:" in str(err.value) and "'O' after 'B-X'" in str(err.value)
    reader = create_iob_reader(path, scheme="biluo", limit=1)
    assert spans_of(next(iter(reader(nlp))).reference.ents) == [("X", 0, 2), ("Y", 2, 3)]


def test_readers_are_registered_and_resolve_from_config(nlp):
    config = Config().from_str(f"""
    [corpora]
    [corpora.chunks]
    @readers = "spacy_lookahead.conll2000.v1"
    path = "{FIXTURES / 'conll2000_sample.txt'}"
    limit = 1

    [corpora.ner]
    @readers = "spacy_lookahead.iob.v1"
    path = "{FIXTURES / 'conll2003_sample.txt'}"
    columns = ["word", "pos", "chunk", "ent"]
    scheme = "iob1"
    """)
    corpora = registry.resolve(config)["corpora"]
    assert [chunks(eg.reference) for eg in corpora["chunks"](nlp)] == CONLL2000_CHUNKS[:1]
    assert [spans_of(eg.reference.ents) for eg in corpora["ner"](nlp)] == CONLL2003_ENTS
    assert registry.readers.get("spacy_lookahead.conll2000.v1") is create_conll2000_reader
    assert registry.readers.get("spacy_lookahead.iob.v1") is create_iob_reader


# --- spans <-> tags ---------------------------------------------------------

# adjacent same-type chunks (NP NP) and a single-token chunk after a longer one
ROUND_TRIP_SPANS = [("NP", 0, 2), ("NP", 2, 3), ("VP", 3, 5), ("PP", 6, 7), ("NP", 7, 8)]
ROUND_TRIP_TAGS = {
    "iob2": ["B-NP", "I-NP", "B-NP", "B-VP", "I-VP", "O", "B-PP", "B-NP"],
    "iob1": ["I-NP", "I-NP", "B-NP", "I-VP", "I-VP", "O", "I-PP", "I-NP"],
    "biluo": ["B-NP", "L-NP", "U-NP", "B-VP", "L-VP", "O", "U-PP", "U-NP"],
}


@pytest.mark.parametrize("scheme", ["iob2", "iob1", "biluo"])
def test_round_trip_spans_tags_spans(nlp, scheme):
    doc = make_doc(nlp, 8)
    doc.spans["chunks"] = [Span(doc, s, e, label=label) for label, s, e in ROUND_TRIP_SPANS]
    tags = doc_to_iob(doc, "chunks", scheme)
    assert tags == ROUND_TRIP_TAGS[scheme]
    assert spans_of(iob_to_spans(doc, tags, scheme)) == ROUND_TRIP_SPANS
    # spans given as a list, and doc.ents (the default)
    assert doc_to_iob(doc, list(doc.spans["chunks"]), scheme) == tags
    doc.ents = list(doc.spans["chunks"])
    assert doc_to_iob(doc, scheme=scheme) == tags


def test_i_without_b_is_repaired_as_conlleval_does(nlp):
    doc = make_doc(nlp, 7)
    tags = ["I-NP", "I-NP", "O", "I-VP", "B-NP", "I-VP", "I-NP"]
    expected = [("NP", 0, 2), ("VP", 3, 4), ("NP", 4, 5), ("VP", 5, 6), ("NP", 6, 7)]
    assert spans_of(iob_to_spans(doc, tags, "iob2")) == expected
    assert spans_of(iob_to_spans(doc, tags, "iob1")) == expected
    # and they are written back as valid IOB2
    doc.spans["x"] = iob_to_spans(doc, tags)
    assert doc_to_iob(doc, "x") == ["B-NP", "I-NP", "O", "B-VP", "B-NP", "B-VP", "B-NP"]


@pytest.mark.parametrize("tags", [
    ["B-X", "O"], ["B-X", "L-Y"], ["I-X", "L-X"], ["O", "L-X"], ["U-X", "I-X", "L-X"], ["B-X", "I-X"],
])
def test_invalid_biluo_sequences_raise(nlp, tags):
    with pytest.raises(TagError):
        iob_to_spans(make_doc(nlp, len(tags)), tags, "biluo")


@pytest.mark.parametrize("tag,scheme", [("B-", "iob2"), ("X-NP", "iob1"), ("L-NP", "iob2"), ("B-X", "bio")])
def test_malformed_tags_raise(tag, scheme):
    with pytest.raises(ValueError):
        check_tags(["O", tag], scheme)


def test_wrong_number_of_tags(nlp):
    with pytest.raises(ValueError, match="2 tags for a doc of 3 tokens"):
        iob_to_spans(make_doc(nlp, 3), ["O", "O"])


segments = st.lists(st.tuples(st.sampled_from(["O", "NP", "VP"]), st.integers(1, 3)), max_size=8)


@settings(max_examples=300, deadline=None)
@given(segments=segments, scheme=st.sampled_from(["iob1", "iob2", "biluo"]))
def test_round_trip_property(segments, scheme):
    n = sum(length for _, length in segments)
    doc = Doc(VOCAB, words=[f"w{i}" for i in range(n)])
    spans, i = [], 0
    for label, length in segments:
        if label != "O":
            spans.append((label, i, i + length))
        i += length
    doc.spans["chunks"] = [Span(doc, s, e, label=label) for label, s, e in spans]
    tags = doc_to_iob(doc, "chunks", scheme)
    assert spans_of(iob_to_spans(doc, tags, scheme)) == spans
    if scheme == "iob1":  # B- only separates two chunks of the same type
        for prev, tag in zip(["O"] + tags, tags):
            assert not tag.startswith("B-") or prev[2:] == tag[2:]


# --- writer -------------------------------------------------------------

def test_write_examples_and_read_back_chunks(nlp, tmp_path):
    examples = list(create_conll2000_reader(FIXTURES / "conll2000_sample.txt")(nlp))
    predicted = [[("NP", 0, 2), ("NP", 2, 4)], [("NP", 0, 1), ("VP", 1, 2), ("NP", 2, 6)], []]
    for eg, spans in zip(examples, predicted):
        eg.predicted.spans["chunks"] = [Span(eg.predicted, s, e, label=label) for label, s, e in spans]
    path = tmp_path / "out.txt"
    assert write_columns(examples, path) == 3
    lines = path.read_text(encoding="utf8").split("\n")
    assert lines[:3] == ["Confidence NN B-NP B-NP", "in IN B-PP I-NP", "the DT B-NP B-NP"]
    assert lines[13] == ""
    gold = list(ColumnCorpus(path, ["word", "pos", "chunk", "_"], "chunk")(nlp))
    pred = list(ColumnCorpus(path, ["word", "pos", "_", "chunk"], "chunk")(nlp))
    assert [chunks(eg.reference) for eg in gold] == CONLL2000_CHUNKS
    assert [chunks(eg.reference) for eg in pred] == predicted
    assert [[t.tag_ for t in eg.reference] for eg in gold] == [[t.tag_ for t in eg.reference] for eg in examples]


@pytest.mark.parametrize("scheme", ["iob1", "iob2"])
def test_write_docs_and_read_back(nlp, tmp_path, scheme):
    examples = list(create_conll2000_reader(FIXTURES / "conll2000_sample.txt")(nlp))
    path = tmp_path / "docs.txt"
    write_columns([eg.reference for eg in examples], path, scheme=scheme)
    if scheme == "iob2":
        assert path.read_text(encoding="utf8") == (FIXTURES / "conll2000_sample.txt").read_text(
            encoding="utf8").replace("\n\n\n", "\n\n") + "\n"
    again = list(create_conll2000_reader(path)(nlp))
    assert [chunks(eg.reference) for eg in again] == CONLL2000_CHUNKS


def test_write_ner_examples_and_read_back(nlp, tmp_path):
    examples = list(create_iob_reader(FIXTURES / "jnlpba_sample.iob2")(nlp))
    for eg in examples:  # predict the first gold entity of each sentence only
        eg.predicted.set_ents([Span(eg.predicted, e.start, e.end, label=e.label_) for e in eg.reference.ents[:1]],
                              default="outside")
    path = tmp_path / "ner.txt"
    write_columns(examples, path, spans="ents", sep="\t")
    assert path.read_text(encoding="utf8").splitlines()[2] == "glucocorticoid\tB-protein\tB-protein"
    gold = list(create_iob_reader(path, columns=["word", "ent", "_"])(nlp))
    pred = list(create_iob_reader(path, columns=["word", "_", "ent"])(nlp))
    assert [spans_of(g.reference.ents) for g in gold] == [spans_of(eg.reference.ents) for eg in examples]
    assert [spans_of(p.reference.ents) for p in pred] == [spans_of(eg.predicted.ents) for eg in examples]
    # with a POS column (CoNLL-2003): word POS gold pred
    examples = list(create_iob_reader(FIXTURES / "conll2003_sample.txt",
                                      columns=["word", "pos", "chunk", "ent"])(nlp))
    write_columns(examples, path, spans="ents")
    assert path.read_text(encoding="utf8").splitlines()[0] == "EU NNP B-ORG O"
    gold = list(create_iob_reader(path, columns=["word", "pos", "ent", "_"])(nlp))
    assert [spans_of(g.reference.ents) for g in gold] == CONLL2003_ENTS


# --- the real files -----------------------------------------------------

def count_file(path):
    """Sentences, tokens and chunks counted straight from the text: a chunk
    starts at B-X, or at I-X not preceded by B-X/I-X (conlleval)."""
    sentences = tokens = 0
    types = Counter()
    prev = "O"
    in_sentence = False
    for line in path.read_text(encoding="utf8").splitlines():
        fields = line.split()
        if not fields:
            sentences += in_sentence
            in_sentence, prev = False, "O"
            continue
        in_sentence = True
        tokens += 1
        tag = fields[-1]
        if tag.startswith("B-") or (tag.startswith("I-") and prev[2:] != tag[2:]):
            types[tag[2:]] += 1
        prev = tag
    return sentences + in_sentence, tokens, types


def read_counts(examples, key):
    n = tokens = 0
    types = Counter()
    for eg in examples:
        n += 1
        tokens += len(eg.reference)
        types.update(s.label_ for s in (eg.reference.ents if key == "ents" else eg.reference.spans[key]))
        assert [t.text for t in eg.predicted] == [t.text for t in eg.reference]
    return n, tokens, types


def test_real_conll2000(nlp, shared_data):
    path = shared_data / "conll2000" / "train.txt"
    n, tokens, types = read_counts(create_conll2000_reader(path)(nlp), "chunks")
    # the counts of shared/data/README.md
    assert (n, tokens, sum(types.values())) == (8936, 211727, 106978)
    assert types == {"NP": 55081, "VP": 21467, "PP": 21281, "ADVP": 4227, "SBAR": 2207, "ADJP": 2060,
                     "PRT": 556, "CONJP": 56, "INTJ": 31, "LST": 10, "UCP": 2}
    assert (n, tokens, types) == count_file(path)
    test = shared_data / "conll2000" / "test.txt"
    n, tokens, types = read_counts(create_conll2000_reader(test)(nlp), "chunks")
    assert (n, tokens, sum(types.values())) == (2012, 47377, 23852)
    first = next(iter(create_conll2000_reader(path, limit=1)(nlp)))
    assert [t.tag_ for t in first.predicted][:3] == ["NN", "IN", "DT"]  # Confidence in the


def test_real_jnlpba(nlp, shared_data):
    path = shared_data / "jnlpba" / "test.iob2"
    n, tokens, types = read_counts(create_iob_reader(path)(nlp), "ents")
    assert (n, tokens, types) == count_file(path)
    # the counts of shared/data/README.md
    assert (n, tokens, sum(types.values())) == (3856, 101039, 8662)
    assert types == {"protein": 5067, "DNA": 1056, "cell_type": 1921, "cell_line": 500, "RNA": 118}


def test_docbin_parts_are_the_readers_parts_and_carry_the_first_stage_gold(shared_data, tmp_path):
    """benchmarks/columns_to_docbin.py --held-out/--part: the rest and the
    held-out sentences, disjoint and in order, are the whole file, as the
    readers split it; --spans-key copies the entities to a span group."""
    from spacy.tokens import DocBin
    from benchmarks.columns_to_docbin import convert
    from spacy_lookahead.readers.columns import create_iob_reader
    # the first 200 sentences of JNLPBA's training file
    text = (shared_data / "jnlpba" / "train.iob2").read_text(encoding="utf8")
    src = tmp_path / "train.iob2"
    src.write_text("\n\n".join(text.strip().split("\n\n")[:200]) + "\n", encoding="utf8")
    nlp = spacy.blank("en")
    words = lambda docs: [[t.text for t in d] for d in docs]  # noqa: E731
    parts = {}
    for part in ("rest", "held_out"):
        convert("ner", src, tmp_path / f"{part}.spacy", spans_key="s1", held_out=0.1, part=part)
        parts[part] = list(DocBin().from_disk(tmp_path / f"{part}.spacy").get_docs(nlp.vocab))
        read = [eg.reference for eg in create_iob_reader(src, held_out=0.1, part=part)(nlp)]
        assert words(parts[part]) == words(read)
        assert all([(s.start, s.end, s.label_) for s in d.spans["s1"]]
                   == [(e.start, e.end, e.label_) for e in d.ents] for d in parts[part])
    whole = [eg.reference for eg in create_iob_reader(src)(nlp)]
    assert words(parts["rest"]) + words(parts["held_out"]) == words(whole)
    assert len(parts["held_out"]) == 20 and any(d.ents for d in parts["held_out"])
    with pytest.raises(ValueError, match="needs --held-out"):
        convert("ner", src, tmp_path / "x.spacy", part="rest")
