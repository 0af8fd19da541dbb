"""`spacy train` with configs/parser_ewt.cfg and parser_wsj.cfg on slices of
the real data: the saved model parses with a UAS a broken model would not
reach, and holds the averaged weights."""
import sys
from pathlib import Path

import pytest
import spacy
from spacy.tokens import Doc, DocBin
from spacy.training import Example
from spacy.training.initialize import init_nlp
from spacy.training.loop import train
from spacy.util import load_config
from spacy_lookahead.readers.conllx import create_gold_tags_corpus  # noqa: F401 (registers the reader)
from spacy_lookahead.pipes.parser import ArcStandardParser  # noqa: F401 (registers the factory)

from parse_data import ATTRS, gold_docs, words_only

CONFIGS = Path(__file__).resolve().parents[1] / "configs"


@pytest.mark.parametrize("config_name,corpus,search", [
    ("parser_ewt.cfg", "ewt", {"@search": "spacy_lookahead.Greedy.v1"}),
    ("parser_wsj.cfg", "wsj", {"@search": "spacy_lookahead.Beam.v1", "width": 4})],
    ids=["ewt-greedy", "wsj-beam"])
def test_spacy_train(shared_data, tmp_path, config_name, corpus, search):
    vocab = spacy.blank("en").vocab
    for split, n in (("train", 800), ("dev", 200)):
        DocBin(docs=gold_docs(vocab, corpus, split, n), attrs=ATTRS).to_disk(tmp_path / f"{split}.spacy")
    config = load_config(CONFIGS / config_name, overrides={
        "paths.train": str(tmp_path / "train.spacy"), "paths.dev": str(tmp_path / "dev.spacy"),
        "training.max_epochs": 2, "training.eval_frequency": 20,
        "components.arc_standard_parser.search": search,
        **({"components.arc_standard_parser.learner": {
            "@learners": "spacy_lookahead.ViolationFixing.v1"}} if "width" in search else {})},
        interpolate=False)
    nlp = init_nlp(config)
    (tmp_path / "out").mkdir()
    nlp, _ = train(nlp, tmp_path / "out", stdout=sys.stdout, stderr=sys.stderr)
    trained = nlp.get_pipe("arc_standard_parser")
    loaded = spacy.load(tmp_path / "out" / "model-last")
    assert loaded.get_pipe("arc_standard_parser").averaged_weights.to_bytes() == \
        trained.weights.average().to_bytes()
    gold = gold_docs(loaded.vocab, corpus, "dev", 200)
    docs = list(loaded.pipe(words_only(loaded.vocab, d, tags=True) for d in gold))
    scores = loaded.get_pipe("arc_standard_parser").scorer([Example(p, g) for p, g in zip(docs, gold)])
    # 800 sentences, 2 epochs: about 0.75 (EWT) / 0.8 (WSJ); chance is far below
    assert scores["dep_uas"] > 0.68, scores["dep_uas"]


def test_parser_behind_a_trained_tagger(shared_data, tmp_path):
    """configs/parser_ewt_tagger.cfg: the frozen lookahead_tagger annotates
    the docs, the parser trains and parses on its predicted tags."""
    import spacy_lookahead.pipes.tagger  # noqa: F401 (registers the factory)

    vocab = spacy.blank("en").vocab
    for split, n in (("train", 400), ("dev", 100)):
        DocBin(docs=gold_docs(vocab, "ewt", split, n), attrs=ATTRS).to_disk(tmp_path / f"{split}.spacy")
    paths = {"paths.train": str(tmp_path / "train.spacy"), "paths.dev": str(tmp_path / "dev.spacy"),
             "training.max_epochs": 1, "training.eval_frequency": 10}
    tagger_config = load_config(CONFIGS / "tagger_ewt.cfg", overrides={
        **paths, "components.lookahead_tagger.search.depth": 0}, interpolate=False)
    (tmp_path / "tagger").mkdir()
    train(init_nlp(tagger_config), tmp_path / "tagger", stdout=sys.stdout, stderr=sys.stderr)
    config = load_config(CONFIGS / "parser_ewt_tagger.cfg", overrides={
        **paths, "paths.tagger": str(tmp_path / "tagger" / "model-last")}, interpolate=False)
    (tmp_path / "out").mkdir()
    train(init_nlp(config), tmp_path / "out", stdout=sys.stdout, stderr=sys.stderr)
    nlp = spacy.load(tmp_path / "out" / "model-last")
    assert nlp.pipe_names == ["lookahead_tagger", "arc_standard_parser"]
    doc = nlp(Doc(nlp.vocab, words=["I", "saw", "the", "old", "man", "."]))
    assert all(t.tag_ for t in doc) and all(t.dep_ for t in doc)
    assert sum(t.head.i == t.i for t in doc) >= 1
