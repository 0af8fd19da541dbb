"""Every shipped config trains with `spacy train` (tiny slices of the real
data), including the NER pipeline behind a frozen tagger and chunker."""
import json
import sys
from pathlib import Path

import pytest
import spacy
from spacy.training.initialize import init_nlp
from spacy.training.loop import train
from spacy.util import load_config

CONFIGS = Path(__file__).resolve().parents[1] / "configs"


def spacy_train(config_name, output, **overrides):
    config = load_config(CONFIGS / config_name, overrides={
        "training.max_epochs": 1, "corpora.train.limit": 60, "corpora.dev.limit": 30,
        **overrides}, interpolate=False)
    nlp = init_nlp(config)
    output.mkdir()
    nlp, _ = train(nlp, output, stdout=sys.stdout, stderr=sys.stderr)
    return output / "model-last"


@pytest.fixture(scope="module")
def conll_models(shared_data, tmp_path_factory):
    root = tmp_path_factory.mktemp("conll")
    paths = {"paths.train": str(shared_data / "conll2000" / "train.txt"),
             "paths.dev": str(shared_data / "conll2000" / "test.txt")}
    return {"tagger": spacy_train("tagger_conll2000.cfg", root / "tagger", **paths),
            "chunker": spacy_train("chunker_conll2000.cfg", root / "chunker", **paths)}


def test_conll2000_configs(conll_models):
    nlp = spacy.load(conll_models["chunker"])
    assert nlp.pipe_names == ["lookahead_chunker"]
    doc = spacy.load(conll_models["tagger"])("The old man saw the boats .")
    assert all(t.tag_ for t in doc)


@pytest.mark.parametrize("config_name", ["ner_jnlpba.cfg", "ner_jnlpba_pipeline.cfg",
                                         "ner_jnlpba_tagged.cfg"])
def test_ner_configs(shared_data, conll_models, tmp_path, config_name):
    train = str(shared_data / "jnlpba" / "train.iob2")
    extra = {}
    if config_name != "ner_jnlpba.cfg":
        extra = {"paths.tagger": str(conll_models["tagger"])}
    if config_name == "ner_jnlpba_pipeline.cfg":
        extra["paths.chunker"] = str(conll_models["chunker"])
    if config_name == "ner_jnlpba_tagged.cfg":  # stand-ins for the lexicon tables (tests/word_tables.py)
        extra["initialize.lookups"] = {"@misc": "test_lookahead.word_tables.v1", "path": train}
    model = spacy_train(config_name, tmp_path / "ner", **{
        "paths.train": train, "paths.dev": str(shared_data / "jnlpba" / "test.iob2")}, **extra)
    nlp = spacy.load(model)
    doc = nlp("IL-2 gene expression requires NF-kappa B activation .")
    ner = nlp.get_pipe("lookahead_ner")
    assert nlp.pipe_names[-1] == "lookahead_ner"
    assert set(ner.labels) == {"DNA", "RNA", "cell_line", "cell_type", "protein"}
    assert doc.has_annotation("ENT_IOB") and {e.label_ for e in doc.ents} <= set(ner.labels)
    if config_name != "ner_jnlpba.cfg":
        assert all(t.tag_ for t in doc)
    if config_name == "ner_jnlpba_pipeline.cfg":
        assert "chunks" in doc.spans
    if config_name == "ner_jnlpba_tagged.cfg":  # the NER reads the tagger's tags, and the tables
        assert nlp.get_pipe("lookahead_ner").cfg["pos_features"]
        assert nlp.vocab["the"].cluster == 0b101


def test_pipeline_chunks_config_assembles_raw_text_to_chunks(conll_models, tmp_path):
    """configs/pipeline_chunks.cfg (what `spacy assemble` and package.py
    read): the sourced tagger feeds the sourced chunker on raw text, and
    the attribute_ruler (the tag map) and the lemmatizer after them give
    UPOS and lemmas. Initialised as `spacy assemble` does (the sourced
    components as they are), the lemmatizer with tiny stand-in tables
    instead of spacy-lookups-data's."""
    from spacy.lookups import Lookups
    config = load_config(CONFIGS / "pipeline_chunks.cfg", overrides={
        "paths.tagger": str(conll_models["tagger"]), "paths.chunker": str(conll_models["chunker"]),
        "paths.tag_map": str(CONFIGS / "tag_map_en.json")})
    nlp = spacy.util.load_model_from_config(config, auto_fill=True)
    lookups = Lookups()
    lookups.add_table("lemma_rules", {"noun": [["s", ""]]})
    for table in ("lemma_index", "lemma_exc"):
        lookups.add_table(table, {})
    with nlp.select_pipes(enable=["attribute_ruler"]):
        nlp.initialize()  # the patterns of [initialize.components.attribute_ruler]
    nlp.get_pipe("lemmatizer").initialize(lookups=lookups)
    nlp.to_disk(tmp_path / "assembled")
    doc = spacy.load(tmp_path / "assembled")("The old man saw the boats in the harbour.")
    assert all(t.tag_ for t in doc) and len(doc.spans["chunks"]) > 0
    assert doc[0].pos_ == "DET" and all(t.pos_ for t in doc) and doc[0].lemma_ == "the"
    plurals = [t for t in doc if t.tag_ == "NNS"]  # NOUN, Number=Plur: the stand-in rule
    assert plurals and all(t.lemma_ == t.text[:-1] for t in plurals)
    assert {s.label_ for s in doc.spans["chunks"]} <= {"NP", "VP", "PP", "ADJP", "ADVP", "SBAR", "PRT",
                                                      "CONJP", "INTJ", "LST", "UCP"}


def test_two_stage_ner_trains_on_jackknifed_first_stage_labels(shared_data, conll_models, tmp_path):
    """configs/ner_jnlpba_stage1.cfg jackknifed, then configs/ner_jnlpba_stacked.cfg:
    the first stage labels every training doc with a model that never saw
    it (doc.spans["ner_stage1"]), the second trains on those labels and, at
    prediction, reads the first stage's labels of the same doc."""
    from benchmarks.columns_to_docbin import convert
    from spacy_lookahead.jackknife import jackknife
    from spacy.tokens import DocBin
    for part, dest in (("rest", "train.spacy"), ("held_out", "dev.spacy")):
        convert("ner", shared_data / "jnlpba" / "train.iob2", tmp_path / dest, limit=400,
                spans_key="ner_stage1", held_out=0.25, part=part)
    tables = {"@misc": "test_lookahead.word_tables.v1", "path": str(tmp_path / "train.spacy")}
    shared = {"paths.tagger": str(conll_models["tagger"]), "paths.dev": str(tmp_path / "dev.spacy"),
              "training.max_epochs": 3}
    report = jackknife(CONFIGS / "ner_jnlpba_stage1.cfg", tmp_path / "train.spacy",
                       tmp_path / "jk.spacy", folds=2, jobs=2, model="last",
                       code=CONFIGS.parent / "tests" / "word_tables.py",
                       overrides=[*(x for k, v in shared.items() for x in (f"--{k}", str(v))),
                                  "--initialize.lookups", json.dumps(tables)])
    assert (tmp_path / "jk.folds" / "fold0" / "model-last").exists()
    vocab = spacy.blank("en").vocab
    gold = list(DocBin().from_disk(tmp_path / "train.spacy").get_docs(vocab))
    out = list(DocBin().from_disk(tmp_path / "jk.spacy").get_docs(vocab))
    assert [[t.text for t in d] for d in out] == [[t.text for t in d] for d in gold]
    assert all("ner_stage1" in d.spans and d.has_annotation("TAG") for d in out)
    # 150 sentences a fold, 3 epochs: far from the gold, far from nothing
    found = sum(len(d.spans["ner_stage1"]) for d in out)
    assert found > 0.3 * sum(len(d.ents) for d in gold)
    assert 0.1 < report["ner_stage1_f"] < 0.8, report
    # the second stage's training docs carry the jackknifed labels, not the gold
    stacked = {**shared, "paths.train": str(tmp_path / "train.spacy"),
               "paths.train_stage1": str(tmp_path / "jk.spacy"), "initialize.lookups": tables}
    config = load_config(CONFIGS / "ner_jnlpba_stacked.cfg", overrides=stacked, interpolate=True)
    reader = spacy.util.registry.resolve(config["corpora"])["train"]
    examples = list(reader(spacy.blank("en")))
    spans = lambda d: [(s.start, s.end, s.label_) for s in d.spans["ner_stage1"]]  # noqa: E731
    assert [spans(eg.predicted) for eg in examples] == [spans(d) for d in out]
    assert any(spans(eg.predicted) != spans(eg.reference) for eg in examples)
    model = spacy_train("ner_jnlpba_stacked.cfg", tmp_path / "stacked", **{
        **shared, "paths.train": str(tmp_path / "train.spacy"),
        "paths.train_stage1": str(tmp_path / "jk.spacy"), "corpora.train.limit": 0,
        "corpora.dev.limit": 0, "initialize.lookups": tables})
    nlp = spacy.load(model)
    assert nlp.pipe_names == ["lookahead_tagger", "ner_stage1", "lookahead_ner"]
    ner = nlp.get_pipe("lookahead_ner")
    assert ner.cfg["chunk_features"] and ner.cfg["chunks_key"] == "ner_stage1"
    doc = nlp("IL-2 gene expression requires NF-kappa B activation in T cells .")
    assert "ner_stage1" in doc.spans and doc.has_annotation("ENT_IOB")
    from spacy.tokens import Doc
    from spacy.training import Example
    dev = list(DocBin().from_disk(tmp_path / "dev.spacy").get_docs(nlp.vocab))
    scores = nlp.evaluate([Example(Doc(nlp.vocab, words=[t.text for t in d]), d) for d in dev])
    # both stages learn from 300 sentences: the second at least near the first
    print("two-stage:", report["ner_stage1_f"], scores["spans_ner_stage1_f"], scores["ents_f"])
    assert scores["ents_f"] > 0.2, scores
    assert scores["ents_f"] > scores["spans_ner_stage1_f"] - 0.05, scores
    # ... and it reads them: without the first stage's labels it labels otherwise
    words = [Doc(nlp.vocab, words=[t.text for t in d]) for d in dev]
    with nlp.select_pipes(enable=["lookahead_tagger", "ner_stage1"]):
        first = list(nlp.pipe(words))
    with_labels = [[(e.start, e.end, e.label_) for e in d.ents] for d in ner.pipe(first)]
    for d in first:
        d.spans["ner_stage1"] = []
        d.set_ents([], default="missing")
    without = [[(e.start, e.end, e.label_) for e in d.ents] for d in ner.pipe(first)]
    assert with_labels != without


def test_the_two_stage_configs_share_one_first_stage():
    """ner_jnlpba_stacked.cfg trains the first stage that ner_jnlpba_stage1.cfg
    jackknifes: the same block, or the second stage learns from labels of
    another model than the one that labels at prediction."""
    stage1 = load_config(CONFIGS / "ner_jnlpba_stage1.cfg", interpolate=False)
    stacked = load_config(CONFIGS / "ner_jnlpba_stacked.cfg", interpolate=False)
    assert stage1["components"]["ner_stage1"] == stacked["components"]["ner_stage1"]
    assert stage1["components"]["lookahead_tagger"] == stacked["components"]["lookahead_tagger"]
    ner = stacked["components"]["lookahead_ner"]
    assert ner["chunk_features"] and ner["chunks_key"] == stage1["components"]["ner_stage1"]["spans_key"]
