"""The chunk and entity scorers against an independent port of conlleval's
chunk counting (conlleval.pl: startOfChunk, endOfChunk and the main loop)."""
from collections import defaultdict
from pathlib import Path

import pytest
import spacy
from hypothesis import given, settings
from hypothesis import strategies as st
from spacy.scorer import get_ner_prf
from spacy.tokens import Doc
from spacy.training import Example
from spacy.util import registry

from spacy_lookahead.readers import ColumnCorpus, create_iob_reader, iob_to_spans, write_columns
from spacy_lookahead.scoring import score_chunks, score_entities

FIXTURES = Path(__file__).parent / "fixtures"
VOCAB = spacy.blank("en").vocab


# --- conlleval.pl, ported line by line (no spaCy, no project code) ----------

def split_tag(tag):
    # conlleval: /^([^-]*)-(.*)$/ (hyphens allowed in types), else (tag, "")
    if "-" in tag:
        prefix, type_ = tag.split("-", 1)
        return prefix, type_
    return tag, ""


def end_of_chunk(prev_tag, tag, prev_type, type_):
    end = False
    end |= prev_tag == "B" and tag == "B"
    end |= prev_tag == "B" and tag == "O"
    end |= prev_tag == "I" and tag == "B"
    end |= prev_tag == "I" and tag == "O"
    end |= prev_tag == "E" and tag == "E"
    end |= prev_tag == "E" and tag == "I"
    end |= prev_tag == "E" and tag == "O"
    end |= prev_tag == "I" and tag == "O"
    end |= prev_tag != "O" and prev_tag != "." and prev_type != type_
    end |= prev_tag == "]"
    end |= prev_tag == "["
    return end


def start_of_chunk(prev_tag, tag, prev_type, type_):
    start = False
    start |= prev_tag == "B" and tag == "B"
    start |= prev_tag == "I" and tag == "B"
    start |= prev_tag == "O" and tag == "B"
    start |= prev_tag == "O" and tag == "I"
    start |= prev_tag == "E" and tag == "E"
    start |= prev_tag == "E" and tag == "I"
    start |= prev_tag == "O" and tag == "E"
    start |= prev_tag == "O" and tag == "I"
    start |= tag != "O" and tag != "." and prev_type != type_
    start |= tag == "["
    start |= tag == "]"
    return start


def conlleval(lines):
    """conlleval.pl's counts over `... gold guessed` lines: (correct chunks,
    gold chunks (foundCorrect), guessed chunks (foundGuessed)), overall and per type."""
    counts = defaultdict(lambda: [0, 0, 0])
    correct_chunk = found_correct = found_guessed = 0
    in_correct = False
    last_correct, last_correct_type = "O", ""
    last_guessed, last_guessed_type = "O", ""
    for line in lines:
        features = line.split()
        if not features or features[0] == "-X-":
            features = ["-X-", "O", "O"]
        guessed, guessed_type = split_tag(features.pop())
        correct, correct_type = split_tag(features.pop())
        if features[0] == "-X-":
            guessed = "O"
        if in_correct:
            end_c = end_of_chunk(last_correct, correct, last_correct_type, correct_type)
            end_g = end_of_chunk(last_guessed, guessed, last_guessed_type, guessed_type)
            if end_c and end_g and last_guessed_type == last_correct_type:
                in_correct = False
                correct_chunk += 1
                counts[last_correct_type][0] += 1
            elif end_c != end_g or guessed_type != correct_type:
                in_correct = False
        start_c = start_of_chunk(last_correct, correct, last_correct_type, correct_type)
        start_g = start_of_chunk(last_guessed, guessed, last_guessed_type, guessed_type)
        if start_c and start_g and guessed_type == correct_type:
            in_correct = True
        if start_c:
            found_correct += 1
            counts[correct_type][1] += 1
        if start_g:
            found_guessed += 1
            counts[guessed_type][2] += 1
        last_guessed, last_correct = guessed, correct
        last_guessed_type, last_correct_type = guessed_type, correct_type
    if in_correct:
        correct_chunk += 1
        counts[last_correct_type][0] += 1
    return (correct_chunk, found_correct, found_guessed), dict(counts)


def prf(correct, found_correct, found_guessed):
    p = correct / found_guessed if found_guessed else 0.0
    r = correct / found_correct if found_correct else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return p, r, f


def conlleval_chunks(tags):
    """The chunks conlleval sees in one tag sequence: (type, start, end)."""
    chunks, start = [], None
    prev_tag, prev_type = "O", ""
    for i, full in enumerate(list(tags) + ["O"]):
        tag, type_ = split_tag(full)
        if start is not None and end_of_chunk(prev_tag, tag, prev_type, type_):
            chunks.append((prev_type, start, i))
            start = None
        if start_of_chunk(prev_tag, tag, prev_type, type_):
            start = i
        prev_tag, prev_type = tag, type_
    return chunks


# --- the reference implementation itself, on hand-counted fixtures ---------

def fixture_lines(name):
    return (FIXTURES / name).read_text(encoding="utf8").splitlines()


def test_conlleval_port_on_hand_counted_fixtures():
    # chunk_eval.txt: 19 gold chunks, 18 guessed, 13 correct (counted by hand:
    # a wrong type, two wrong boundaries, a missed PP, a spurious ADVP, an
    # I- without B- in gold and in the guess, a missed chunk at sentence end)
    totals, per_type = conlleval(fixture_lines("chunk_eval.txt"))
    assert totals == (13, 19, 18)
    assert per_type["PP"] == [0, 2, 0]
    assert per_type["ADVP"] == [0, 0, 2]
    # ner_eval.txt: 7 gold entities, 6 guessed, 3 correct
    totals, per_type = conlleval(fixture_lines("ner_eval.txt"))
    assert totals == (3, 7, 6)
    assert per_type["protein"] == [1, 3, 4]
    assert conlleval_chunks(["I-NP", "B-NP", "O", "I-VP", "I-NP"]) == [("NP", 0, 1), ("NP", 1, 2),
                                                                       ("VP", 3, 4), ("NP", 4, 5)]


# --- the scorers --------------------------------------------------------

def chunk_examples(nlp, name):
    """Examples from a `word POS gold pred` file, read with the project's reader."""
    path = FIXTURES / name
    gold = ColumnCorpus(path, ["word", "pos", "chunk", "_"], "chunk")(nlp)
    pred = ColumnCorpus(path, ["word", "pos", "_", "chunk"], "chunk")(nlp)
    return [Example(p.reference, g.reference) for p, g in zip(pred, gold)]


def ner_examples(nlp, name):
    gold = create_iob_reader(FIXTURES / name, columns=["word", "ent", "_"])(nlp)
    pred = create_iob_reader(FIXTURES / name, columns=["word", "_", "ent"])(nlp)
    return [Example(p.reference, g.reference) for p, g in zip(pred, gold)]


def assert_same_as_conlleval(scores, prefix, lines):
    (correct, found_correct, found_guessed), per_type = conlleval(lines)
    p, r, f = prf(correct, found_correct, found_guessed)
    assert scores[f"{prefix}_p"] == pytest.approx(p)
    assert scores[f"{prefix}_r"] == pytest.approx(r)
    assert scores[f"{prefix}_f"] == pytest.approx(f)
    assert set(scores[f"{prefix}_per_type"]) == set(per_type)
    for type_, counts in per_type.items():
        expected = dict(zip("prf", prf(*counts)))
        assert scores[f"{prefix}_per_type"][type_] == pytest.approx(expected), type_


def test_chunk_scorer_equals_conlleval():
    nlp = spacy.blank("en")
    scores = score_chunks(chunk_examples(nlp, "chunk_eval.txt"))
    assert_same_as_conlleval(scores, "spans_chunks", fixture_lines("chunk_eval.txt"))
    assert scores["spans_chunks_p"] == pytest.approx(13 / 18)
    assert scores["spans_chunks_r"] == pytest.approx(13 / 19)


def test_entity_scorer_equals_conlleval():
    nlp = spacy.blank("en")
    examples = ner_examples(nlp, "ner_eval.txt")
    scores = score_entities(examples)
    assert_same_as_conlleval(scores, "ents", fixture_lines("ner_eval.txt"))
    assert scores["ents_p"] == pytest.approx(3 / 6) and scores["ents_r"] == pytest.approx(3 / 7)
    # and spaCy's own NER scorer agrees on fully annotated data
    spacy_scores = get_ner_prf(examples)
    for key in ("ents_p", "ents_r", "ents_f"):
        assert scores[key] == pytest.approx(spacy_scores[key])


def test_written_output_scores_the_same_with_conlleval(tmp_path):
    nlp = spacy.blank("en")
    examples = chunk_examples(nlp, "chunk_eval.txt")
    write_columns(examples, tmp_path / "chunks.txt")
    written = (tmp_path / "chunks.txt").read_text(encoding="utf8").splitlines()
    assert conlleval(written) == conlleval(fixture_lines("chunk_eval.txt"))
    assert_same_as_conlleval(score_chunks(examples), "spans_chunks", written)
    examples = ner_examples(nlp, "ner_eval.txt")
    write_columns(examples, tmp_path / "ents.txt", spans="ents", scheme="iob1")
    written = (tmp_path / "ents.txt").read_text(encoding="utf8").splitlines()
    assert conlleval(written) == conlleval(fixture_lines("ner_eval.txt"))


def test_chunk_scorer_spans_key_and_missing_groups():
    nlp = spacy.blank("en")
    examples = chunk_examples(nlp, "chunk_eval.txt")
    for eg in examples:
        for doc in (eg.predicted, eg.reference):
            doc.spans["np"] = [s for s in doc.spans["chunks"] if s.label_ == "NP"]
    scores = score_chunks(examples, spans_key="np")
    assert set(scores) == {"spans_np_p", "spans_np_r", "spans_np_f", "spans_np_per_type"}
    assert set(scores["spans_np_per_type"]) == {"NP"}
    assert scores["spans_np_f"] == pytest.approx(score_chunks(examples)["spans_chunks_per_type"]["NP"]["f"])
    # a reference without the group is skipped; a prediction without it finds nothing
    del examples[0].reference.spans["chunks"]
    del examples[1].predicted.spans["chunks"]
    lines = fixture_lines("chunk_eval.txt")
    blank = [i for i, line in enumerate(lines) if not line]
    second = [" ".join(line.split()[:3] + ["O"]) for line in lines[blank[0] + 1:blank[1]]]
    assert_same_as_conlleval(score_chunks(examples), "spans_chunks", second + [""] + lines[blank[1] + 1:])


def test_scorers_are_registered():
    assert registry.scorers.get("spacy_lookahead.chunk_scorer.v1")() is score_chunks
    assert registry.scorers.get("spacy_lookahead.entity_scorer.v1")() is score_entities


tag_lists = st.lists(st.sampled_from(["O", "B-A", "I-A", "B-B", "I-B", "I-C"]), min_size=1, max_size=10)


@settings(max_examples=400, deadline=None)
@given(pairs=st.lists(tag_lists.flatmap(lambda gold: st.tuples(
    st.just(gold), st.lists(st.sampled_from(["O", "B-A", "I-A", "B-B", "I-B", "I-C"]),
                            min_size=len(gold), max_size=len(gold)))), min_size=1, max_size=4),
       scheme=st.sampled_from(["iob1", "iob2"]))
def test_spacy_decoding_and_scores_equal_conlleval(pairs, scheme):
    """On random (also invalid) IOB sequences: spaCy's iob_to_biluo decodes
    exactly the chunks conlleval sees, and the chunk scorer gives its P/R/F."""
    examples, lines = [], []
    for gold, pred in pairs:
        words = [f"w{i}" for i in range(len(gold))]
        docs = []
        for tags in (gold, pred):
            doc = Doc(VOCAB, words=words)
            spans = iob_to_spans(doc, tags, scheme)
            assert [(s.label_, s.start, s.end) for s in spans] == conlleval_chunks(tags)
            doc.spans["chunks"] = spans
            docs.append(doc)
        examples.append(Example(docs[1], docs[0]))
        lines.extend(f"{w} X {g} {p}" for w, g, p in zip(words, gold, pred))
        lines.append("")
    (correct, found_correct, found_guessed), _ = conlleval(lines)
    scores = score_chunks(examples)
    if found_correct + found_guessed == 0:
        assert scores["spans_chunks_f"] is None  # spaCy reports no score; conlleval 0
    else:
        p, r, f = prf(correct, found_correct, found_guessed)
        assert (scores["spans_chunks_p"], scores["spans_chunks_r"], scores["spans_chunks_f"]) == pytest.approx((p, r, f))


def corrupt(tags, types):
    """A deterministic, imperfect "prediction" of real gold tags: dropped,
    split, retyped and spurious chunks (also I- without B-)."""
    out = []
    for i, tag in enumerate(tags):
        if i % 7 == 3:
            tag = "O" if tag != "O" else f"I-{types[i % len(types)]}"
        elif i % 11 == 5 and tag != "O":
            tag = f"B-{types[(i // 11) % len(types)]}"
        elif i % 13 == 0 and tag.startswith("I-"):
            tag = "B-" + tag[2:]
        out.append(tag)
    return out


@pytest.mark.parametrize("task", ["chunk", "ner"])
def test_spacy_span_scorer_equals_conlleval_on_real_data(shared_data, tmp_path, task):
    """spaCy's span scorer (under spaCy's keys) gives conlleval's figures on
    the first 400 sentences of the CoNLL-2000 / JNLPBA test sets, so the
    benchmark figures do not change with the keys."""
    src = shared_data / ("conll2000/test.txt" if task == "chunk" else "jnlpba/test.iob2")
    blocks = src.read_text(encoding="utf8").split("\n\n")[:400]
    lines = []
    for block in blocks:
        rows = [line.split() for line in block.splitlines() if line.strip()]
        gold = [r[-1] for r in rows]
        types = sorted({t[2:] for t in gold if t != "O"}) or ["NP"]
        pred = corrupt(gold, types)
        lines += [f"{r[0]} X {g} {p}" for r, g, p in zip(rows, gold, pred)] + [""]
    (tmp_path / "eval.txt").write_text("\n".join(lines) + "\n", encoding="utf8")
    nlp = spacy.blank("en")
    if task == "chunk":
        scores, prefix = score_chunks(chunk_examples(nlp, tmp_path / "eval.txt")), "spans_chunks"
    else:
        gold = ColumnCorpus(tmp_path / "eval.txt", ["word", "_", "ent", "_"], "ent")(nlp)
        pred = ColumnCorpus(tmp_path / "eval.txt", ["word", "_", "_", "ent"], "ent")(nlp)
        examples = [Example(p.reference, g.reference) for p, g in zip(pred, gold)]
        scores, prefix = score_entities(examples), "ents"
    (correct, found_correct, found_guessed), _ = conlleval(lines)
    assert found_correct > 800 and 0.3 < correct / found_correct < 0.95  # a real, imperfect test
    assert_same_as_conlleval(scores, prefix, lines)
