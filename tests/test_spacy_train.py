"""`spacy train` with configs/tagger_ewt.cfg: model-last holds the averaged
weights (spaCy's use_params cannot be relied on for this)."""
import sys
from pathlib import Path

import spacy
import srsly
from spacy.tokens import Doc, DocBin
from spacy.training.initialize import init_nlp
from spacy.training.loop import train
from spacy.util import load_config

from ewt import ewt_examples
from engine import predict

CONFIG = Path(__file__).resolve().parents[1] / "configs" / "tagger_ewt.cfg"


def write_corpus(path, examples):
    DocBin(docs=[eg.reference for eg in examples], attrs=["TAG", "POS"]).to_disk(path)


def spacy_train(tmp_path, out: str, n_train: int, n_dev: int, stdout=sys.stdout, **overrides):
    """`spacy train` of CONFIG on EWT slices (2 epochs) into tmp_path / out."""
    vocab = spacy.blank("en").vocab
    write_corpus(tmp_path / "train.spacy", ewt_examples(vocab, "train", n_train))
    write_corpus(tmp_path / "dev.spacy", ewt_examples(vocab, "dev", n_dev))
    config = load_config(CONFIG, overrides={
        "paths.train": str(tmp_path / "train.spacy"),
        "paths.dev": str(tmp_path / "dev.spacy"),
        "training.max_epochs": 2,
        "training.eval_frequency": 3,
        **overrides,
    }, interpolate=False)
    nlp = init_nlp(config)
    (tmp_path / out).mkdir()
    nlp, _ = train(nlp, tmp_path / out, stdout=stdout, stderr=sys.stderr)
    return nlp


def test_spacy_train_saves_averaged_weights(tmp_path):
    import io
    vocab = spacy.blank("en").vocab
    out = io.StringIO()
    nlp = spacy_train(tmp_path, "out", 400, 100, stdout=out)
    # the configs' optimizer: nothing to optimise, and the header says so
    assert "Initial learn rate: 0.0" in out.getvalue(), out.getvalue()
    trained = nlp.get_pipe("lookahead_tagger")
    assert trained.weights.time > 0  # it has trained: raw and averaged differ
    assert trained.weights.to_bytes() != trained.weights.average().to_bytes()
    for name in ("model-last", "model-best"):
        assert (tmp_path / "out" / name / "lookahead_tagger" / "weights").exists()
    loaded = spacy.load(tmp_path / "out" / "model-last").get_pipe("lookahead_tagger")
    assert loaded.averaged_weights.to_bytes() == trained.weights.average().to_bytes()
    docs = [eg.predicted for eg in ewt_examples(vocab, "dev", 100)]
    atoms = [loaded._atoms.doc_atoms(d) for d in docs]
    expected = predict(trained.system, atoms, trained.weights.average(), "lookahead",
                       trained.search.depth)
    assert [p.best.tolist() for p in loaded.predict(docs)] == [p.tolist() for p in expected]


def test_spacy_train_logs_curves_for_sapo(tmp_path):
    """`spacy train` with the SAPO learner and the curves logger: one JSON
    line per evaluation with the dev score and the mean |w|; the saved model
    predicts with the trained (not averaged) weights, and gives probabilities."""
    curves = tmp_path / "curves.jsonl"
    nlp = spacy_train(tmp_path, "out", 300, 100, **{
        "components.lookahead_tagger.learner": {"@learners": "spacy_lookahead.SAPO.v1"},
        "components.lookahead_tagger.search": {"@search": "spacy_lookahead.TopN.v1"},
        "training.logger": {"@loggers": "spacy_lookahead.curves_logger.v1", "path": str(curves)}})
    rows = [srsly.json_loads(line) for line in curves.read_text().splitlines()]
    assert len(rows) >= 2 and {r["epoch"] for r in rows} == {0, 1}
    assert all(0 < r["scores"]["lookahead_tagger_w_mean_abs"] < 1 for r in rows)
    assert rows[-1]["scores"]["tag_acc"] > 0.5 and rows[-1]["losses"]["lookahead_tagger"] > 0
    loaded = spacy.load(tmp_path / "out" / "model-last")
    trained = nlp.get_pipe("lookahead_tagger")
    # the trained weights themselves (not averaged), frozen for prediction
    assert loaded.get_pipe("lookahead_tagger").weights.to_bytes() == \
        trained.weights.frozen_copy().to_bytes()
    assert trained.weights.frozen_copy().to_bytes() != trained.weights.average().to_bytes()
    doc = loaded(Doc(loaded.vocab, words="This is great .".split()))
    assert all(0 < t._.tag_prob <= 1 + 1e-9 for t in doc)


def test_spacy_train_is_deterministic(tmp_path):
    """Two `spacy train` runs with the same config and seed (shuffled
    batches) save byte-identical weights files."""
    saved = []
    for run in ("a", "b"):
        spacy_train(tmp_path, run, 200, 50)
        saved.append((tmp_path / run / "model-last" / "lookahead_tagger" / "weights").read_bytes())
    assert saved[0] == saved[1]
