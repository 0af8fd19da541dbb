"""A pipeline saved before the search and learner blocks (flat settings in
its config.cfg, the learner's name in the component's cfg): spacy.load
refuses it naming `migrate-config`; after that command it loads and
predicts exactly as before."""
import subprocess
import sys

import pytest
import spacy
import srsly
from thinc.api import Config

from spacy_lookahead.pipes.legacy import flat_of

from ewt import ewt_examples
from span_data import train


def as_saved_before(path, name):
    """Rewrite a saved pipeline as the earlier version wrote it."""
    config = Config().from_disk(path / "config.cfg", interpolate=False)
    section = config["components"][name]
    pipe = spacy.load(path).get_pipe(name)
    flat = flat_of(pipe.search, pipe.learner)
    del section["search"], section["learner"]
    section.update({"depth": 1, "margin": 1.0, "beam_width": 16, "update": "max_violation",
                    "n": 5, "learning_rate": 0.1, "learning_rate_decay": 0.8, "l2": 1.0,
                    "average": False, **flat})  # (every setting spelt out, as saved)
    config.to_disk(path / "config.cfg")
    cfg = srsly.read_json(path / name / "cfg")
    cfg.update(learner=pipe.learner.kind, search=flat["search"])
    srsly.write_json(path / name / "cfg", cfg)


@pytest.mark.parametrize("settings", [
    {"search": {"@search": "spacy_lookahead.Lookahead.v1", "depth": 1}},
    {"search": {"@search": "spacy_lookahead.TopN.v1", "width": 16, "update": "max_violation"},
     "learner": {"@learners": "spacy_lookahead.SAPO.v1", "l2": 2.0}},
], ids=["perceptron", "sapo"])
def test_a_pipeline_saved_before_the_blocks_loads_after_migrate_config(tmp_path, settings):
    nlp = spacy.blank("en")
    nlp.add_pipe("lookahead_tagger", config=settings)
    train(nlp, ewt_examples(nlp.vocab, "train", 100), 1)
    nlp.to_disk(tmp_path / "m")
    docs = [nlp.make_doc("The old man the boats ."), nlp.make_doc("It works .")]
    expected = [[t.tag_ for t in nlp(d.copy())] for d in docs]
    as_saved_before(tmp_path / "m", "lookahead_tagger")
    with pytest.raises(ValueError, match="migrate-config"):
        spacy.load(tmp_path / "m")
    result = subprocess.run([sys.executable, "-m", "spacy_lookahead", "migrate-config",
                             str(tmp_path / "m")], capture_output=True, text=True)
    assert result.returncode == 0 and "rewrote lookahead_tagger" in result.stdout, result
    loaded = spacy.load(tmp_path / "m")
    pipe = loaded.get_pipe("lookahead_tagger")
    assert pipe.search == nlp.get_pipe("lookahead_tagger").search
    assert pipe.learner == nlp.get_pipe("lookahead_tagger").learner
    assert [[t.tag_ for t in loaded(d.copy())] for d in docs] == expected
    again = subprocess.run([sys.executable, "-m", "spacy_lookahead", "migrate-config",
                            str(tmp_path / "m")], capture_output=True, text=True)
    assert "nothing to rewrite" in again.stdout


def test_a_model_loads_only_with_the_kind_of_learner_that_trained_it(tmp_path):
    nlp = spacy.blank("en")
    nlp.add_pipe("lookahead_tagger", config={
        "search": {"@search": "spacy_lookahead.TopN.v1"},
        "learner": {"@learners": "spacy_lookahead.SAPO.v1"}})
    train(nlp, ewt_examples(nlp.vocab, "train", 50), 1)
    nlp.get_pipe("lookahead_tagger").to_disk(tmp_path / "tagger")
    other = spacy.blank("en").add_pipe("lookahead_tagger")  # a perceptron
    with pytest.raises(ValueError, match="trained by a 'sapo' learner[\\s\\S]*SAPO.v1"):
        other.from_disk(tmp_path / "tagger")
