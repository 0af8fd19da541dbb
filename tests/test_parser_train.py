"""`spacy train` with configs/parser_ewt.cfg and parser_wsj.cfg on slices of
the real data: the saved model parses with a UAS a broken model would not
reach, and holds the averaged weights."""
import sys
from pathlib import Path

import pytest
import spacy
from spacy.tokens import DocBin
from spacy.training import Example
from spacy.training.initialize import init_nlp
from spacy.training.loop import train
from spacy.util import load_config
from spacy_lookahead.readers.conllx import create_gold_tags_corpus  # noqa: F401 (registers the reader)
from spacy_lookahead.pipes.parser import ArcStandardParser  # noqa: F401 (registers the factory)

from parse_data import ATTRS, gold_docs, words_only

CONFIGS = Path(__file__).resolve().parents[1] / "configs"


@pytest.mark.parametrize("config_name,corpus,search", [("parser_ewt.cfg", "ewt", "greedy"),
                                                        ("parser_wsj.cfg", "wsj", "beam")])
def test_spacy_train(shared_data, tmp_path, config_name, corpus, search):
    vocab = spacy.blank("en").vocab
    for split, n in (("train", 800), ("dev", 200)):
        DocBin(docs=gold_docs(vocab, corpus, split, n), attrs=ATTRS).to_disk(tmp_path / f"{split}.spacy")
    config = load_config(CONFIGS / config_name, overrides={
        "paths.train": str(tmp_path / "train.spacy"), "paths.dev": str(tmp_path / "dev.spacy"),
        "training.max_epochs": 2, "training.eval_frequency": 20,
        "components.arc_standard_parser.search": search,
        "components.arc_standard_parser.beam_width": 4}, interpolate=False)
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
