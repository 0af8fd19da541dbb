"""spaCy's score keys through `spacy evaluate`: the keep_inputs reader and
`python -m spacy_lookahead evaluate` (spaCy's evaluate with gold inputs)."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import spacy
from spacy.tokens import Doc, DocBin

import spacy_lookahead.pipes.spans  # noqa: F401  (factories, when not pip-installed)
from spacy_lookahead.readers.columns import ColumnCorpus
from spacy_lookahead.readers.inputs import create_keep_inputs_reader
from blocks import blocks

REPO = Path(__file__).resolve().parents[1]


def conll2000_docbin(shared_data, path, start, n):
    corpus = ColumnCorpus(shared_data / "conll2000" / "train.txt", ["word", "pos", "chunk"], "chunk")
    refs = [eg.reference for i, eg in zip(range(start + n), corpus.read(spacy.blank("en").vocab)) if i >= start]
    for doc in refs:  # an output the reader must not copy
        doc.set_ents([s for s in doc.spans["chunks"] if s.label_ == "NP"][:1])
    DocBin(docs=refs, store_user_data=True).to_disk(path)
    return refs


def run(*args):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-m", *args], capture_output=True, text=True, env=env,
                          cwd=REPO, timeout=300)


def test_keep_inputs_copies_the_named_inputs_only(shared_data, tmp_path):
    refs = conll2000_docbin(shared_data, tmp_path / "d.spacy", 0, 20)
    nlp = spacy.blank("en")
    examples = list(create_keep_inputs_reader(tmp_path / "d.spacy", inputs=["tag", "chunks"])(nlp))
    assert len(examples) == 20
    for eg, ref in zip(examples, refs):
        pred = eg.predicted
        assert [t.tag_ for t in pred] == [t.tag_ for t in ref]
        assert [(s.start, s.end, s.label_) for s in pred.spans["chunks"]] == \
               [(s.start, s.end, s.label_) for s in ref.spans["chunks"]]
        assert not pred.has_annotation("ENT_IOB") and ref.ents  # outputs stay on the reference
    only_tags = next(iter(create_keep_inputs_reader(tmp_path / "d.spacy", inputs=["tag"])(nlp)))
    assert only_tags.predicted.has_annotation("TAG") and "chunks" not in only_tags.predicted.spans


@pytest.mark.parametrize("inputs_path", [False, True])
def test_an_empty_span_group_is_an_input_not_a_missing_one(tmp_path, inputs_path):
    """A sentence without chunks holds an empty `chunks` group in the
    DocBin: the reader gives it (empty) to the predicted doc, in sentences
    (gold_preproc, where Span.as_doc drops empty groups) and with inputs
    from a second corpus; training stopped there with "a gold doc has no
    span group 'chunks'"."""
    nlp = spacy.blank("en")
    with_chunks = Doc(nlp.vocab, words=["The", "dog", "barks", "."], tags=["DT", "NN", "VBZ", "."],
                      sent_starts=[True, False, False, False])
    with_chunks.spans["chunks"] = [with_chunks[0:2]]
    without = Doc(nlp.vocab, words=["Oh", "!"], tags=["UH", "."], sent_starts=[True, False])
    without.spans["chunks"] = []
    DocBin(docs=[with_chunks, without]).to_disk(tmp_path / "d.spacy")
    extra = {"inputs_path": tmp_path / "d.spacy"} if inputs_path else {}
    examples = list(create_keep_inputs_reader(tmp_path / "d.spacy", inputs=["tag", "chunks"],
                                              **extra)(nlp))
    assert [len(eg.predicted.spans["chunks"]) for eg in examples] == [1, 0]


def test_keep_inputs_bad_input_names_the_problem(shared_data, tmp_path):
    conll2000_docbin(shared_data, tmp_path / "d.spacy", 0, 3)
    nlp = spacy.blank("en")
    with pytest.raises(ValueError, match="no span group 'clauses'.*chunks"):
        list(create_keep_inputs_reader(tmp_path / "d.spacy", inputs=["tag", "clauses"])(nlp))
    with pytest.raises(ValueError, match="'lemma' is missing"):
        list(create_keep_inputs_reader(tmp_path / "d.spacy", inputs=["lemma"])(nlp))
    with pytest.raises(ValueError, match="non-empty list"):
        create_keep_inputs_reader(tmp_path / "d.spacy", inputs="tag")


def test_spacy_evaluate_with_gold_inputs_gives_spacys_keys(shared_data, tmp_path):
    """A stand-alone chunker: `spacy evaluate` refuses the words-only docs
    (pointing to the wrapper); `python -m spacy_lookahead evaluate --inputs
    tag` gives spaCy's table and JSON with spans_chunks_p/r/f, the figures of
    Language.evaluate on the keep_inputs reader."""
    conll2000_docbin(shared_data, tmp_path / "train.spacy", 0, 300)
    conll2000_docbin(shared_data, tmp_path / "test.spacy", 300, 60)
    nlp = spacy.blank("en")
    nlp.add_pipe("lookahead_chunker", config=blocks("lookahead_chunker", {"search": "greedy"}))
    train = list(create_keep_inputs_reader(tmp_path / "train.spacy", inputs=["tag"])(nlp))
    nlp.initialize(lambda: train)
    for i in range(0, len(train), 32):
        nlp.update(train[i:i + 32])
    nlp.to_disk(tmp_path / "model")
    expected = nlp.evaluate(create_keep_inputs_reader(tmp_path / "test.spacy", inputs=["tag"])(nlp))
    assert expected["spans_chunks_f"] > 0.6, expected

    plain = run("spacy", "evaluate", str(tmp_path / "model"), str(tmp_path / "test.spacy"))
    assert plain.returncode != 0 and "--inputs tag" in plain.stderr

    out = tmp_path / "scores.json"
    done = run("spacy_lookahead", "evaluate", str(tmp_path / "model"), str(tmp_path / "test.spacy"),
               "--inputs", "tag", "--spans-key", "chunks", "--output", str(out))
    assert done.returncode == 0, done.stderr
    assert "SPAN F" in done.stdout and "SPANS (per type)" in done.stdout
    scores = json.loads(out.read_text())
    for key in ("spans_chunks_p", "spans_chunks_r", "spans_chunks_f"):
        assert scores[key] == pytest.approx(expected[key]), key
    assert set(scores["spans_chunks_per_type"]) >= {"NP", "VP", "PP"}


def test_parser_scorer_adds_conll_nopunct_figures_to_spacys():
    """spacy_lookahead.parser_scorer.v1 = spaCy's parser scores (punctuation
    by label) + dep_uas/las_nopunct (punctuation by label or PTB tag)."""
    from spacy.pipeline.dep_parser import parser_score
    from spacy.tokens import Doc
    from spacy.training import Example
    from spacy.util import registry

    from spacy_lookahead.scoring import score_parse

    vocab = spacy.blank("en").vocab
    words = ["He", "saw", "it", "--", "fast", "."]
    tags = ["PRP", "VBD", "PRP", ":", "RB", "."]
    gold = Doc(vocab, words=words, tags=tags, heads=[1, 1, 1, 1, 1, 1],
               deps=["nsubj", "ROOT", "obj", "dep", "advmod", "punct"])
    pred = Doc(vocab, words=words, tags=tags, heads=[1, 1, 0, 2, 1, 0],
               deps=["NSUBJ", "ROOT", "obj", "dep", "obj", "punct"])
    scores = score_parse([Example(pred, gold)])
    # not punctuation: He, saw, it, fast; heads right: He, saw, fast; labels right: He, saw
    assert scores["dep_uas_nopunct"] == pytest.approx(3 / 4)
    assert scores["dep_las_nopunct"] == pytest.approx(2 / 4)
    spacy_scores = parser_score([Example(pred, gold)])
    assert {k: v for k, v in scores.items() if not k.endswith("_nopunct")} == spacy_scores
    assert scores["dep_uas"] != scores["dep_uas_nopunct"]  # "--" counts for spaCy (label dep)
    assert registry.scorers.get("spacy_lookahead.parser_scorer.v1")() is score_parse
    # other words on the predicted doc: spaCy's figures only
    other = Doc(vocab, words=["He", "saw", "it--fast", "."], heads=[1, 1, 1, 1],
                deps=["nsubj", "ROOT", "obj", "punct"])
    assert "dep_uas_nopunct" not in score_parse([Example(other, gold)])


def test_curves_read_logs_written_before_spacys_keys():
    """benchmarks/curves.py (report and plots) reads the chunk F1 of a curve
    log under spaCy's key, and under the old key in logs written before it."""
    from benchmarks.curves import per_epoch
    from benchmarks.report import SAPO_PAIRS

    key = dict((p[0], p[3]) for p in SAPO_PAIRS)["chunker_d1"]
    assert key == "spans_chunks_f"
    old = [{"step": 5, "epoch": 0, "scores": {"chunks_f": 0.5}}]
    new = [{"step": 5, "epoch": 0, "scores": {"spans_chunks_f": 0.75, "chunks_f": 0.1}}]
    assert per_epoch(old, key, "lookahead_chunker")[0]["score"] == 0.5
    assert per_epoch(new, key, "lookahead_chunker")[0]["score"] == 0.75


def test_keep_inputs_sent_starts_gives_the_gold_sentences(tmp_path):
    """`sent_starts` puts the reference's sentence boundaries on the
    predicted doc (the parser's respect_sent_starts reads them), nothing else."""
    nlp = spacy.blank("en")
    ref = Doc(nlp.vocab, words="It rained . We left".split(), heads=[1, 1, 1, 4, 4],
              deps=["nsubj", "ROOT", "punct", "nsubj", "ROOT"])
    DocBin(docs=[ref], attrs=["ORTH", "HEAD", "DEP", "SENT_START"]).to_disk(tmp_path / "d.spacy")
    eg = next(iter(create_keep_inputs_reader(tmp_path / "d.spacy", inputs=["sent_starts"],
                                             gold_preproc=False)(nlp)))
    assert [t.is_sent_start for t in eg.predicted] == [True, False, False, True, False]
    assert not eg.predicted.has_annotation("DEP")
