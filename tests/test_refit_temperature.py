"""benchmarks/refit_temperature.py: the temperature of a saved SAPO model
fitted again on its config's dev corpus, with prediction settings changed
at load (`MODEL@n=...`)."""
import spacy
from spacy.tokens import DocBin

import spacy_lookahead.pipes.tagger  # noqa: F401  (factories, when not pip-installed)
from ewt import ewt_examples

from benchmarks import refit_temperature
from blocks import blocks


def test_refit_replaces_a_stale_temperature_by_the_dev_fit(shared_data, tmp_path):
    nlp = spacy.blank("en")
    tagger = nlp.add_pipe("lookahead_tagger", config=blocks("lookahead_tagger", {"learner": "sapo", "n": 5,
                                                      "probabilities": "nbest"}))
    train = ewt_examples(nlp.vocab, "train", 200)
    dev = ewt_examples(nlp.vocab, "dev", 60)
    nlp.initialize(lambda: train)
    for i in range(0, len(train), 20):
        tagger.update(train[i:i + 20])
    DocBin(docs=[eg.reference for eg in dev]).to_disk(tmp_path / "dev.spacy")
    nlp.config["corpora"] = {"dev": {"@readers": "spacy.Corpus.v1",
                                     "path": str(tmp_path / "dev.spacy"),
                                     "gold_preproc": True}}
    nlp.config["training"]["dev_corpus"] = "corpora.dev"
    nlp.evaluate(dev)  # spacy train's scoring: fits the temperature on dev
    fitted = tagger.cfg["fitted_temperature"]
    assert fitted is not None and fitted != 1.0
    tagger.cfg["fitted_temperature"] = 1.0  # a stale temperature, saved
    nlp.to_disk(tmp_path / "model")
    assert refit_temperature.main([str(tmp_path / "model"), str(tmp_path / "refit")]) == 0
    assert spacy.load(tmp_path / "refit").get_pipe("lookahead_tagger").temperature == fitted
    # a setting changed at load is saved with the refitted model (n does not
    # move a first-order model's fit: its NLL is exact over all sequences)
    assert refit_temperature.main([f"{tmp_path / 'model'}@n=2", str(tmp_path / "n2")]) == 0
    refit = spacy.load(tmp_path / "n2").get_pipe("lookahead_tagger")
    assert refit.learner.n == 2 and refit.temperature == fitted
