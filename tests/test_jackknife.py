"""Jackknifing (spacy_lookahead/jackknife.py) and the reader that trains a
parser on its tags (keep_inputs.v1 with inputs_path)."""
import io
import sys
from pathlib import Path

import pytest
import spacy
from spacy.tokens import Doc, DocBin
from spacy.training import Example

from spacy_lookahead.jackknife import fold_bounds, jackknife
from spacy_lookahead.readers.inputs import create_keep_inputs_reader

from ewt import ewt_examples

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("n,k", [(10, 10), (12544, 10), (7, 3), (100, 2)])
def test_folds_are_contiguous_cover_every_doc_once_and_differ_by_one_at_most(n, k):
    bounds = fold_bounds(n, k)
    assert len(bounds) == k
    assert [i for fold in bounds for i in fold] == list(range(n))
    sizes = [len(fold) for fold in bounds]
    assert max(sizes) - min(sizes) <= 1


@pytest.mark.parametrize("n,k", [(10, 1), (5, 6)])
def test_bad_fold_counts_are_refused(n, k):
    with pytest.raises(ValueError, match="--folds"):
        fold_bounds(n, k)


def sentences(nlp, tags_list):
    words = ["a", "b", "c"]
    return [Doc(nlp.vocab, words=words, tags=tags, heads=[1, 1, 1], deps=["x", "ROOT", "y"])
            for tags in tags_list]


def test_inputs_path_puts_the_second_corpus_tags_on_the_predicted_docs(tmp_path):
    nlp = spacy.blank("en")
    gold = sentences(nlp, [["G1", "G2", "G3"], ["G4", "G5", "G6"]])
    DocBin(docs=gold).to_disk(tmp_path / "gold.spacy")
    other = [Doc(nlp.vocab, words=["a", "b", "c"], tags=tags)
             for tags in (["P1", "P2", "P3"], ["P4", "P5", "P6"])]
    DocBin(docs=other).to_disk(tmp_path / "tags.spacy")
    reader = create_keep_inputs_reader(tmp_path / "gold.spacy", inputs=["tag"],
                                       inputs_path=tmp_path / "tags.spacy")
    examples = list(reader(nlp))
    assert [[t.tag_ for t in eg.predicted] for eg in examples] == [["P1", "P2", "P3"],
                                                                   ["P4", "P5", "P6"]]
    assert [[t.tag_ for t in eg.reference] for eg in examples] == [["G1", "G2", "G3"],
                                                                   ["G4", "G5", "G6"]]
    assert [t.dep_ for t in examples[0].reference] == ["x", "ROOT", "y"]
    assert not examples[0].predicted.has_annotation("DEP")


def test_inputs_path_that_does_not_match_the_corpus_is_an_error(tmp_path):
    nlp = spacy.blank("en")
    DocBin(docs=sentences(nlp, [["G"] * 3, ["G"] * 3])).to_disk(tmp_path / "gold.spacy")
    DocBin(docs=[Doc(nlp.vocab, words=["a", "b", "c"], tags=["P"] * 3)]).to_disk(tmp_path / "one.spacy")
    DocBin(docs=[Doc(nlp.vocab, words=["a", "x", "c"], tags=["P"] * 3)] * 2).to_disk(tmp_path / "x.spacy")
    with pytest.raises(ValueError, match="fewer docs"):
        list(create_keep_inputs_reader(tmp_path / "gold.spacy", inputs=["tag"],
                                       inputs_path=tmp_path / "one.spacy")(nlp))
    with pytest.raises(ValueError, match="other words"):
        list(create_keep_inputs_reader(tmp_path / "gold.spacy", inputs=["tag"],
                                       inputs_path=tmp_path / "x.spacy")(nlp))
    with pytest.raises(ValueError, match="not found.*jackknife"):
        create_keep_inputs_reader(tmp_path / "gold.spacy", inputs=["tag"],
                                  inputs_path=tmp_path / "missing.spacy")


ALTERNATIVES = ["--components.lookahead_tagger.alternatives", "true"]


def test_jackknife_tags_every_training_doc_with_a_model_that_never_saw_it(tmp_path, shared_data):
    from parse_data import gold_docs
    nlp = spacy.blank("en")
    gold = gold_docs(nlp.vocab, "ewt", "train", 150)
    DocBin(docs=gold).to_disk(tmp_path / "train.spacy")
    DocBin(docs=gold_docs(nlp.vocab, "ewt", "dev", 40)).to_disk(tmp_path / "dev.spacy")
    args = dict(folds=3, jobs=2, overrides=["--paths.dev", str(tmp_path / "dev.spacy"),
                                            "--training.max_epochs", "2", *ALTERNATIVES])
    progress = io.StringIO()
    report = jackknife(ROOT / "configs" / "tagger_ewt.cfg", tmp_path / "train.spacy",
                       tmp_path / "jk.spacy", progress=progress, **args)
    lines = progress.getvalue().splitlines()  # a line per fold trained and per fold tagged
    assert sorted(line.split(" trained in ")[0] for line in lines if " trained in " in line) == [
        f"jackknife: fold {k}/3" for k in (1, 2, 3)]
    assert sum(" tagged its " in line for line in lines) == 3
    out = list(DocBin().from_disk(tmp_path / "jk.spacy").get_docs(nlp.vocab))
    assert [[t.text for t in d] for d in out] == [[t.text for t in d] for d in gold]
    assert [[t.is_sent_start for t in d] for d in out] == [[t.is_sent_start for t in d] for d in gold]
    assert all(d.has_annotation("TAG") for d in out)
    assert all(len(d.user_data["tag_alternative"]) == len(d) for d in out)
    # a tagger trained on 100 sentences tags the other 50 far from perfectly;
    # one trained on all 150 would tag them almost perfectly
    assert 0.5 < report["tag_acc"] < 0.95
    right = sum(t.tag_ == g.tag_ for d, r in zip(out, gold) for t, g in zip(d, r))
    assert right == pytest.approx(report["tag_acc"] * sum(len(d) for d in gold))
    assert (tmp_path / "jk.json").exists()
    # a re-run trains nothing again
    model = tmp_path / "jk.folds" / "fold0" / "model-best" / "meta.json"
    before = model.stat().st_mtime_ns
    progress = io.StringIO()
    jackknife(ROOT / "configs" / "tagger_ewt.cfg", tmp_path / "train.spacy", tmp_path / "jk.spacy",
              progress=progress, **args)
    assert model.stat().st_mtime_ns == before
    assert sum(line.endswith(" reused") for line in progress.getvalue().splitlines()) == 3
    # ... but other settings or another corpus never reuse those folds
    with pytest.raises(ValueError, match="overrides differ"):
        jackknife(ROOT / "configs" / "tagger_ewt.cfg", tmp_path / "train.spacy",
                  tmp_path / "jk.spacy", **{**args, "overrides": args["overrides"][:-2]})
    DocBin(docs=gold[:-1]).to_disk(tmp_path / "other.spacy")
    with pytest.raises(ValueError, match="train_sha256 differ"):
        jackknife(ROOT / "configs" / "tagger_ewt.cfg", tmp_path / "other.spacy",
                  tmp_path / "jk.spacy", **args)
    assert model.stat().st_mtime_ns == before
    # configs/pipeline_ewt.cfg trains tagger and parser on it, the parser on
    # the jackknifed tags and their alternatives, and parses raw text
    from spacy.training.initialize import init_nlp
    from spacy.training.loop import train
    from spacy.util import load_config
    P = "components.arc_standard_parser."
    # ... with its cluster and probability templates, on tables made from
    # the training words (stand-ins for spacy-lookups-data's, which CI lacks)
    config = load_config(ROOT / "configs" / "pipeline_ewt.cfg", overrides={
        "paths.train": str(tmp_path / "train.spacy"), "paths.dev": str(tmp_path / "dev.spacy"),
        "paths.train_tags": str(tmp_path / "jk.spacy"), "training.max_epochs": 5,
        "training.eval_frequency": 3, "corpora.train.inputs": ["tag", "tag_alternatives"],
        "components.lookahead_tagger.alternatives": True, P + "tag_alternatives": True,
        # (a small beam, predicting with it too: the shipped predict_width
        # was chosen on dev for the full model)
        P + "search.width": 4, P + "search.predict_width": None,
        "initialize.lookups": {"@misc": "test_lookahead.word_tables.v1",
                               "path": str(tmp_path / "train.spacy")}},
        interpolate=False)
    assert any(f.startswith("cluster") for f in config["components"]["lookahead_tagger"]["features"])
    assert any(f.startswith("cluster") for f in config["components"]["arc_standard_parser"]["features"])
    (tmp_path / "pipeline").mkdir()
    pipeline, _ = train(init_nlp(config), tmp_path / "pipeline", stdout=sys.stdout,
                        stderr=sys.stderr)
    parsed = spacy.load(tmp_path / "pipeline" / "model-best")
    doc = parsed("The dog barked. Then it slept in the sun.")
    assert len(list(doc.sents)) == 2 and all(t.tag_ and t.dep_ for t in doc)
    assert any(t._.tag_alternative for t in doc)
    # the tables travel with the pipeline (token.cluster, token.prob)
    assert parsed.vocab["the"].cluster == 0b101 and parsed.vocab["the"].prob < -1
    scores = parsed.evaluate([Example(Doc(parsed.vocab, words=[t.text for t in d]), d)
                              for d in gold_docs(parsed.vocab, "ewt", "dev", 40)])
    # 150 sentences, 5 epochs: about 0.42 UAS (attaching each word to the next: 0.3)
    assert scores["dep_uas"] > 0.4, scores


def test_jackknife_command_refuses_a_paths_train_override(tmp_path, capsys):
    from spacy_lookahead.jackknife import main
    with pytest.raises(SystemExit):
        main([str(ROOT / "configs" / "tagger_ewt.cfg"), str(tmp_path / "t.spacy"),
              str(tmp_path / "o.spacy"), "--paths.train", "x"])
    assert "--paths.train is set per fold" in capsys.readouterr().err


def test_tag_alternatives_travel_with_their_sentence(tmp_path):
    """A tagger's per-token alternatives (doc.user_data arrays) reach the
    predicted doc of each sentence, sliced to it (Span.as_doc drops them)."""
    import numpy
    nlp = spacy.blank("en")
    words = ["a", "b", ".", "c", "d", "."]
    starts = [True, False, False, True, False, False]
    gold = Doc(nlp.vocab, words=words, tags=["G"] * 6, sent_starts=starts)
    DocBin(docs=[gold]).to_disk(tmp_path / "gold.spacy")
    tagged = Doc(nlp.vocab, words=words, tags=["P"] * 6, sent_starts=starts)
    alts = numpy.asarray([nlp.vocab.strings.add(t) for t in "UVWXYZ"], dtype="uint64")
    tagged.user_data["tag_alternative"] = alts
    tagged.user_data["tag_alternative_prob"] = numpy.linspace(0.1, 0.6, 6)
    DocBin(docs=[tagged], store_user_data=True).to_disk(tmp_path / "tagged.spacy")
    reader = create_keep_inputs_reader(tmp_path / "gold.spacy", inputs=["tag", "tag_alternatives"],
                                       inputs_path=tmp_path / "tagged.spacy")
    first, second = list(reader(nlp))
    assert [t.text for t in second.predicted] == ["c", "d", "."]
    assert list(second.predicted.user_data["tag_alternative"]) == list(alts[3:])
    assert list(first.predicted.user_data["tag_alternative_prob"]) == pytest.approx([0.1, 0.2, 0.3])
    assert [t._.tag_alternative[0] for t in second.predicted] == ["X", "Y", "Z"]
    plain = create_keep_inputs_reader(tmp_path / "gold.spacy", inputs=["tag", "tag_alternatives"])
    with pytest.raises(ValueError, match="alternatives = true"):
        list(plain(nlp))


def test_span_f1_scores_each_gold_group_the_annotated_docs_have():
    from spacy_lookahead.jackknife import span_f1
    nlp = spacy.blank("en")

    def doc(spans, other=True):
        d = Doc(nlp.vocab, words=list("abcdef"))
        d.spans["ner_stage1"] = [d.char_span(2 * s, 2 * e - 1, label=l) for s, e, l in spans]
        if other:
            d.spans["other"] = []
        return d
    keys = ["ner_stage1", "other", "gold_only"]
    # 1 of 2 found right (a wrong label, then a right span), 3 gold
    f = span_f1([doc([(0, 2, "P"), (3, 4, "D")])], [doc([(0, 2, "D"), (3, 4, "D"), (5, 6, "P")])],
                keys)
    assert f["ner_stage1"] == pytest.approx(2 * 1 / (2 + 3))
    assert f["other"] is None  # nothing predicted, nothing to find
    assert "gold_only" not in f  # nothing labelled it
    # a key the gold lacks is not scored; two docs pool their counts
    extra = doc([(1, 3, "R")])
    extra.spans["only_here"] = [extra[0:1]]
    f = span_f1([extra, doc([(0, 1, "P")])], [doc([(1, 3, "R")]), doc([(0, 1, "P"), (2, 3, "P")])],
                keys)
    assert f["ner_stage1"] == pytest.approx(2 * 2 / (2 + 3)) and "only_here" not in f
    # a gold doc without the group has it empty: what was labelled there is wrong
    f = span_f1([doc([(0, 1, "P")]), doc([(2, 3, "P")])],
                [doc([(0, 1, "P")]), Doc(nlp.vocab, words=list("abcdef"))], ["ner_stage1"])
    assert f["ner_stage1"] == pytest.approx(2 * 1 / (2 + 1))


def fake_folds(monkeypatch, tmp_path, calls):
    """train_fold, recording what it was asked for, returning a blank
    pipeline (its folds "trained" already): the jackknife's own logic only."""
    import spacy_lookahead.jackknife as jk
    blank = tmp_path / "blank"
    spacy.blank("en").to_disk(blank)

    def train_fold(config, train, model_dir, overrides, code, model="best"):
        calls.append((Path(config).name, model))
        return blank
    monkeypatch.setattr(jk, "train_fold", train_fold)


def test_model_last_labels_with_each_folds_model_last_and_says_so(tmp_path, monkeypatch):
    import json
    nlp = spacy.blank("en")
    DocBin(docs=sentences(nlp, [["A", "B", "C"]] * 4)).to_disk(tmp_path / "t.spacy")
    calls = []
    fake_folds(monkeypatch, tmp_path, calls)
    config = tmp_path / "c.cfg"
    config.write_text((ROOT / "configs" / "tagger_ewt.cfg").read_text())
    jackknife(config, tmp_path / "t.spacy", tmp_path / "o.spacy", folds=2, model="last")
    # the folds train from the work dir's copy of the config, not the config
    assert calls == [("config.cfg", "last")] * 2
    assert (tmp_path / "o.folds" / "config.cfg").read_text() == config.read_text()
    assert json.loads((tmp_path / "o.json").read_text())["model"] == "model-last"
    # a finished fold has both models: the same folds serve --model best
    jackknife(config, tmp_path / "t.spacy", tmp_path / "o.spacy", folds=2, model="best")
    assert calls[2:] == [("config.cfg", "best")] * 2
    assert json.loads((tmp_path / "o.json").read_text())["model"] == "model-best"
    # ... but folds of another config are not reused
    config.write_text("# edited\n" + config.read_text())
    with pytest.raises(ValueError, match="config_sha256 differ"):
        jackknife(config, tmp_path / "t.spacy", tmp_path / "o.spacy", folds=2)


def test_a_fold_whose_training_did_not_finish_is_trained_again(tmp_path, monkeypatch):
    """spaCy writes model-best and model-last from the first evaluation on
    (and again when training fails): only `trained` says a fold finished."""
    import subprocess
    import spacy_lookahead.jackknife as jk
    fold = tmp_path / "fold0"
    (fold / "model-last").mkdir(parents=True)
    (fold / "model-last" / "meta.json").write_text("{}")  # left by a failed run
    runs = []

    def run(cmd, stdout=None, stderr=None):
        runs.append(cmd)
        return subprocess.CompletedProcess(cmd, 0)
    monkeypatch.setattr(jk.subprocess, "run", run)
    assert jk.train_fold(tmp_path / "c.cfg", tmp_path / "r.spacy", fold, [], None, "last") == \
        fold / "model-last"
    assert len(runs) == 1 and (fold / "trained").exists()
    jk.train_fold(tmp_path / "c.cfg", tmp_path / "r.spacy", fold, [], None, "best")
    assert len(runs) == 1  # finished: not trained again, for either model

    def failed(cmd, stdout=None, stderr=None):
        return subprocess.CompletedProcess(cmd, 1)
    monkeypatch.setattr(jk.subprocess, "run", failed)
    with pytest.raises(RuntimeError, match="failed"):
        jk.train_fold(tmp_path / "c.cfg", tmp_path / "r.spacy", tmp_path / "fold1", [], None)
    assert not (tmp_path / "fold1" / "trained").exists()


def test_jackknife_refuses_an_unknown_model_and_names_the_choices(tmp_path):
    with pytest.raises(ValueError, match=r"\('best', 'last'\)"):
        jackknife(ROOT / "configs" / "tagger_ewt.cfg", tmp_path / "t.spacy", tmp_path / "o.spacy",
                  model="final")
