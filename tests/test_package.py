"""An installable pipeline: benchmarks/package.py assembles tiny trained
components with configs/package_ewt.cfg, calibrates the tagger, scores it,
writes the meta and builds a wheel with `spacy package`; the wheel,
installed into an empty directory, loads by name in a fresh process and
analyses raw text: tags with their probabilities, UPOS, morphology, lemmas,
a parse and its noun chunks, sentences."""
import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import spacy
from spacy.tokens import DocBin
from spacy.training.converters import conllu_to_docs

import spacy_lookahead.pipes.parser  # noqa: F401  (factories, when not pip-installed)
import spacy_lookahead.pipes.tagger  # noqa: F401

from blocks import blocks
from conftest import SHARED_DATA
from ewt import ewt_examples
from parse_data import parse_examples

REPO = Path(__file__).resolve().parents[1]
CHECK = """
import json, spacy
nlp = spacy.load("en_lookahead_ewt")
doc = nlp("The parser reads raw text. It finds two sentences here.")
print(json.dumps({"pipeline": nlp.pipe_names, "module": spacy.util.get_package_path("en_lookahead_ewt").as_posix(),
                  "words": [t.text for t in doc], "tags": [t.tag_ for t in doc],
                  "heads": [t.head.i for t in doc],
                  "deps": [t.dep_ for t in doc], "sents": [[s.start, s.end] for s in doc.sents],
                  "pos": [t.pos_ for t in doc], "lemmas": [t.lemma_ for t in doc],
                  "morph": [str(t.morph) for t in doc], "tag_probs": [t._.tag_prob for t in doc],
                  "noun_chunks": [[c.start, c.end] for c in doc.noun_chunks],
                  "chunker": nlp.vocab.get_noun_chunks.__module__}))
"""


def train_tiny(tmp_path: Path) -> None:
    tagger = spacy.blank("en")
    tagger.add_pipe("lookahead_tagger", config=blocks("lookahead_tagger", {"depth": 0}))
    examples = ewt_examples(tagger.vocab, "train", 200)
    tagger.initialize(lambda: examples)
    tagger.update(examples)
    tagger.to_disk(tmp_path / "tagger")
    parser = spacy.blank("en")
    parser.add_pipe("arc_standard_parser", config=blocks("arc_standard_parser", {"search": "greedy", "min_label_freq": 1}))
    examples = parse_examples(parser.vocab, "ewt", "train", 200, 1)
    parser.initialize(lambda: examples)
    parser.update(examples)
    parser.to_disk(tmp_path / "parser")
    # EWT dev with everything the pipeline is scored on (tags, UPOS, morphology,
    # lemmas, trees): 40 sentences to test, 40 to calibrate the tagger on
    text = (SHARED_DATA / "ud_ewt" / "en_ewt-ud-dev.conllu").read_text(encoding="utf8")
    dev = list(itertools.islice(conllu_to_docs(text, n_sents=1, no_print=True), 80))
    DocBin(docs=dev[:40]).to_disk(tmp_path / "test.spacy")
    DocBin(docs=dev[40:]).to_disk(tmp_path / "held_out.spacy")


def test_package_builds_a_wheel_that_loads_by_name(tmp_path):
    # the lemmatizer's tables come from spacy-lookups-data at build time (the
    # `lookups` extra); the pipeline carries them
    pytest.importorskip("spacy_lookups_data", reason="building a pipeline needs the lookups extra")
    train_tiny(tmp_path)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    built = subprocess.run(
        [sys.executable, "-m", "benchmarks.package", "quick", "--only", "en_lookahead_ewt",
         "--output", str(tmp_path / "packages"), "--metrics", str(tmp_path / "no_metrics"),
         "--source", f"en_lookahead_ewt.tagger={tmp_path / 'tagger'}",
         "--source", f"en_lookahead_ewt.parser={tmp_path / 'parser'}",
         "--test", f"en_lookahead_ewt={tmp_path / 'test.spacy'}",
         "--calibration", f"en_lookahead_ewt.lookahead_tagger={tmp_path / 'held_out.spacy'}"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stdout[-2000:] + built.stderr[-2000:]
    wheels = list((tmp_path / "packages").glob("en_lookahead_ewt/*/dist/en_lookahead_ewt-*.whl"))
    assert len(wheels) == 1, built.stdout[-2000:]
    meta = json.loads((tmp_path / "packages" / "en_lookahead_ewt" / "meta.json").read_text())
    assert meta["requirements"][0].startswith("spacy-lookahead")
    assert {"tag_acc", "dep_uas", "dep_las", "sents_f", "speed"} <= set(meta["performance"])
    assert 0.3 < meta["performance"]["tag_acc"] <= 1 and meta["performance"]["speed"] > 0
    assert {"pos_acc", "morph_acc", "lemma_acc"} <= set(meta["performance"])
    assert "tag_acc left out of the meta" in built.stderr  # a missing metrics file is said, not invented
    # no build machine's paths, in the meta or the shipped config; the plugin's spaCy range
    config = next((tmp_path / "packages").glob("en_lookahead_ewt/*/dist")).parent
    shipped = [json.dumps(meta), *(p.read_text() for p in config.rglob("*.cfg")),
               *(p.read_text() for p in config.rglob("meta.json"))]
    assert not any(str(tmp_path) in text or str(REPO) in text for text in shipped)
    assert meta["author"] and meta["url"] == "" and meta["sources"]
    assert meta["spacy_version"] == _plugin_spacy_range()
    tagger = meta["probabilities"]["lookahead_tagger"]
    assert tagger["writes"] == "token._.tag_prob" and tagger["temperature"] > 0
    assert tagger["fitted"].endswith("held_out.spacy")

    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "-q",
                    "--target", str(site), str(wheels[0])], check=True, timeout=120)
    env["PYTHONPATH"] = os.pathsep.join([str(site), str(REPO)])
    out = subprocess.run([sys.executable, "-c", CHECK], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    doc = json.loads(out.stdout.strip().splitlines()[-1])
    assert doc["module"].startswith(site.as_posix())  # the installed package, by name
    assert doc["pipeline"] == ["sentencizer", "lookahead_tagger", "arc_standard_parser",
                               "attribute_ruler", "lemmatizer"]
    assert doc["sents"] == [[0, 6], [6, 12]]
    assert all(doc["tags"]) and all(doc["deps"])
    assert all(doc["pos"]) and all(doc["lemmas"]) and doc["pos"][-1] == "PUNCT"
    inflected = [(w, lemma) for w, lemma, t in zip(doc["words"], doc["lemmas"], doc["tags"])
                 if t in ("VBZ", "NNS")]  # reads, finds, sentences as the tiny tagger tags them
    assert inflected and all(lemma == w[:-1] for w, lemma in inflected)
    assert any(doc["morph"])
    assert all(0 < p <= 1 for p in doc["tag_probs"])  # the calibrated tagger's
    assert doc["chunker"] == "spacy_lookahead.pipes.noun_chunks"  # UD labels
    assert all(start <= end for start, end in doc["noun_chunks"])
    for start, end in doc["sents"]:  # one tree per sentence
        assert all(start <= h < end for h in doc["heads"][start:end])
        assert [doc["deps"][i] for i in range(start, end) if doc["heads"][i] == i] == ["ROOT"]


def _plugin_spacy_range():
    """setup.cfg's spaCy requirement, as spaCy's meta writes a range."""
    import configparser
    cfg = configparser.ConfigParser()
    cfg.read(REPO / "setup.cfg")
    line = next(r.strip() for r in cfg["options"]["install_requires"].splitlines()
                if r.strip().startswith("spacy") and r.strip()[5:6] in "<>=!~")
    return ",".join(sorted(line[len("spacy"):].split(","), key=lambda s: s[0] != ">"))


def test_the_package_says_its_version_and_licence():
    """__version__ is the installed distribution's (setup.cfg's version);
    the LICENSE file beside setup.cfg is the licence the metadata names."""
    import configparser
    from importlib.metadata import metadata

    import spacy_lookahead
    cfg = configparser.ConfigParser()
    cfg.read(REPO / "setup.cfg")
    assert spacy_lookahead.__version__ == cfg["metadata"]["version"]
    assert metadata("spacy-lookahead")["License"] == cfg["metadata"]["license"] == "MIT"
    assert (REPO / "LICENSE").read_text(encoding="utf8").startswith("MIT License")


def test_a_model_without_held_out_data_takes_its_twins_temperature(tmp_path):
    """Cross-fitting (benchmarks/package.py, `twin`): the shipped model
    trained on every doc; the twin, the same recipe without the held-out
    docs, fits the temperature there and the shipped model takes it."""
    from benchmarks.package import calibrate

    def tagger(first: int, features=None):
        nlp = spacy.blank("en")
        settings = {"depth": 0, **({"features": features} if features else {})}
        nlp.add_pipe("lookahead_tagger", config=blocks("lookahead_tagger", settings))
        examples = ewt_examples(nlp.vocab, "train", first + 200)[first:]
        nlp.initialize(lambda: examples)
        nlp.update(examples)
        return nlp

    text = (SHARED_DATA / "ud_ewt" / "en_ewt-ud-dev.conllu").read_text(encoding="utf8")
    DocBin(docs=list(itertools.islice(conllu_to_docs(text, n_sents=1, no_print=True), 60))).to_disk(
        tmp_path / "held_out.spacy")
    twin = tagger(200)
    twin.to_disk(tmp_path / "twin")
    shipped = tagger(0)
    plan = {"lookahead_tagger": {"path": str(tmp_path / "held_out.spacy"), "twin": str(tmp_path / "twin")}}
    written = calibrate(shipped, plan)["lookahead_tagger"]
    reloaded = spacy.load(tmp_path / "twin").get_pipe("lookahead_tagger")
    docs = list(DocBin().from_disk(tmp_path / "held_out.spacy").get_docs(twin.vocab))
    from spacy.tokens import Doc
    from spacy.training import Example
    expected = reloaded.fit_temperature([Example(Doc(twin.vocab, words=[t.text for t in d]), d)
                                         for d in docs])
    assert written["temperature"] == expected != 1.0
    assert shipped.get_pipe("lookahead_tagger").temperature == expected
    assert "by " in written["fitted"] and "twin" in written["fitted"]
    other = tagger(200, features=["lower[0]", "suf3[0]"])
    other.to_disk(tmp_path / "other")
    plan["lookahead_tagger"]["twin"] = str(tmp_path / "other")
    with pytest.raises(SystemExit, match="not the same recipe"):
        calibrate(tagger(0), plan)


def test_the_parser_is_calibrated_where_it_has_a_beam(tmp_path):
    """calibrate() fits a beam perceptron parser's temperature on its
    held-out docs, tagged by the pipeline's tagger (its head probabilities
    come from the beam's n best); a greedy one's meta entry says why it
    has none, without reading the data."""
    from benchmarks.package import calibrate

    tagger = spacy.blank("en")
    tagger.add_pipe("lookahead_tagger", config=blocks("lookahead_tagger", {"depth": 0}))
    examples = ewt_examples(tagger.vocab, "train", 200)
    tagger.initialize(lambda: examples)
    tagger.update(examples)
    text = (SHARED_DATA / "ud_ewt" / "en_ewt-ud-dev.conllu").read_text(encoding="utf8")
    DocBin(docs=list(itertools.islice(conllu_to_docs(text, n_sents=1, no_print=True), 60))).to_disk(
        tmp_path / "held_out.spacy")
    plan = {"arc_standard_parser": {"path": str(tmp_path / "held_out.spacy")}}
    written = {}
    for search in ("beam", "greedy"):
        parser = spacy.blank("en")
        width = {"beam_width": 4} if search == "beam" else {}
        parser.add_pipe("arc_standard_parser", config=blocks(
            "arc_standard_parser", {"search": search, "min_label_freq": 1, **width}))
        examples = parse_examples(parser.vocab, "ewt", "train", 200, 1)
        parser.initialize(lambda: examples)
        parser.update(examples)
        nlp = spacy.blank("en")
        nlp.add_pipe("lookahead_tagger", source=tagger)
        nlp.add_pipe("arc_standard_parser", source=parser)
        written[search] = calibrate(nlp, plan if search == "beam" else
                                    {"arc_standard_parser": {"path": "nowhere.spacy"}})
        if search == "beam":
            doc = nlp("The parser reads raw text.")
            assert all(0 < t._.head_prob <= 1 for t in doc)
            tau = nlp.get_pipe("arc_standard_parser").temperature
    beam = written["beam"]["arc_standard_parser"]
    assert beam["writes"] == "token._.head_prob" and beam["temperature"] == tau > 0
    assert beam["fitted"].endswith("held_out.spacy")
    assert written["greedy"]["arc_standard_parser"].startswith("none: a greedy perceptron parser")


def test_the_supported_pythons_agree_everywhere_they_are_named():
    """setup.cfg's python_requires, the wheels the release builds
    (pyproject's [tool.cibuildwheel] build), the README's install section and
    .ci/pythons's default list name the same Pythons: every minor version
    from python_requires's lowest to the highest wheel's."""
    import configparser
    import re

    cfg = configparser.ConfigParser()
    cfg.read(REPO / "setup.cfg")
    lowest = re.fullmatch(r">=3\.(\d+)", cfg["options"]["python_requires"].strip())
    assert lowest, cfg["options"]["python_requires"]
    lowest = int(lowest.group(1))
    pyproject = (REPO / "pyproject.toml").read_text(encoding="utf8")
    build = re.search(r'^build = "([^"]*)"', pyproject, re.M).group(1)
    wheels = [int(m) for m in re.findall(r"cp3(\d+)-\*", build)]
    assert wheels == list(range(lowest, max(wheels) + 1)), build
    readme = (REPO / "README.md").read_text(encoding="utf8")
    assert f"Python >= 3.{lowest}" in readme.replace("\n", " ")
    assert f"Python 3.{lowest}-3.{max(wheels)}," in readme.replace("\n", " ")
    script = (REPO / ".ci" / "pythons").read_text(encoding="utf8")
    asked = re.search(r"asked=\((python3[^)]*)\)", script).group(1).split()  # (the default list)
    assert asked == [f"python3.{m}" for m in wheels]
