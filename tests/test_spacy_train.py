"""`spacy train` with configs/tagger_ewt.cfg: model-last holds the averaged
weights (spaCy's use_params cannot be relied on for this)."""
import sys
from pathlib import Path

import spacy
from spacy.tokens import DocBin
from spacy.training.initialize import init_nlp
from spacy.training.loop import train
from spacy.util import load_config

from ewt import ewt_examples

CONFIG = Path(__file__).resolve().parents[1] / "configs" / "tagger_ewt.cfg"


def write_corpus(path, examples):
    DocBin(docs=[eg.reference for eg in examples], attrs=["TAG", "POS"]).to_disk(path)


def test_spacy_train_saves_averaged_weights(tmp_path):
    vocab = spacy.blank("en").vocab
    write_corpus(tmp_path / "train.spacy", ewt_examples(vocab, "train", 400))
    write_corpus(tmp_path / "dev.spacy", ewt_examples(vocab, "dev", 100))
    config = load_config(CONFIG, overrides={
        "paths.train": str(tmp_path / "train.spacy"),
        "paths.dev": str(tmp_path / "dev.spacy"),
        "training.max_epochs": 2,
        "training.eval_frequency": 3,
    }, interpolate=False)
    nlp = init_nlp(config)
    (tmp_path / "out").mkdir()
    nlp, _ = train(nlp, tmp_path / "out", stdout=sys.stdout, stderr=sys.stderr)
    trained = nlp.get_pipe("lookahead_tagger")
    assert trained.weights.time > 0  # it has trained: raw and averaged differ
    assert trained.weights.to_bytes() != trained.weights.average().to_bytes()
    for name in ("model-last", "model-best"):
        assert (tmp_path / "out" / name / "lookahead_tagger" / "weights").exists()
    loaded = spacy.load(tmp_path / "out" / "model-last").get_pipe("lookahead_tagger")
    assert loaded.averaged_weights.to_bytes() == trained.weights.average().to_bytes()
    docs = [eg.predicted for eg in ewt_examples(vocab, "dev", 100)]
    atoms = [loaded._atoms.doc_atoms(d) for d in docs]
    expected = trained.system.predict(atoms, trained.weights.average(), trained.cfg["depth"])
    assert [p.tolist() for p in loaded.predict(docs)] == [p.tolist() for p in expected]
