"""Installable pipelines: assemble, calibrate, score, describe and build one wheel each.

    python -m benchmarks.package {full,quick} [--only NAME ...] [--output packages]
        [--source NAME.SLOT=MODEL_DIR ...] [--test NAME=DATA.spacy] [--metrics DIR]
        [--calibration NAME.COMPONENT=DATA.spacy ...]

For each pipeline of PIPELINES (the `package` step of benchmarks/experiments.py
runs this at the workflow's scale): `spacy assemble` of its config
(configs/pipeline_*.cfg: the trained components sourced unchanged, spaCy's
attribute_ruler with configs/tag_map_en.json from benchmarks/tag_map.py for
pos_ and morph, the rule lemmatizer with spacy-lookups-data's tables), then
its runtime `settings`; each perceptron tagger, chunker or NER without a
temperature gets one fitted on held-out data its model never trained on (its
docs' words through the earlier components), and writes the probabilities of
its tags or spans, or none where there is no such data (and says so). A
model trained on all of a task's data without a dev set takes the
temperature of its `twin`: the same recipe trained without the last tenth,
fitted on that tenth (cross-fitting: the full model sees a tenth more data,
so it may be a little more sure of itself than the twin);
spaCy's evaluate on the test set from raw words (`performance` in meta.json,
with `speed`), the benchmark's figures of its components (`benchmark`), and
`spacy package --build wheel` (requirements: spacy-lookahead; the spaCy range
the plugin's own; no absolute path in the meta or the config). Wheels land
in OUTPUT/<name>-<version>/dist/."""
import argparse
import json
import subprocess
import sys
import time
from importlib.metadata import PackageNotFoundError, requires
from pathlib import Path
from typing import Any, Dict, List, Optional

import spacy
import srsly
from spacy.tokens import Doc, DocBin
from spacy.training import Example

ROOT = Path(__file__).resolve().parents[1]
VERSION = "0.1.0"
PLUGIN = "spacy-lookahead"
REQUIREMENT = f"{PLUGIN}>={VERSION}"
# as LICENSE names them; the project has no public URL yet (meta "url" stays empty)
AUTHOR = "the spacy-lookahead authors"
# the data behind each pipeline (meta "sources")
EWT = {"name": "UD English EWT (tags, dependencies; the tag map's POS, morphology and lemmas)",
       "url": "https://github.com/UniversalDependencies/UD_English-EWT", "license": "CC BY-SA 4.0"}
CONLL2000 = {"name": "CoNLL-2000 chunking (WSJ sections 15-18)",
             "url": "https://www.clips.uantwerpen.be/conll2000/chunking/",
             "license": "none stated (derived from the Penn Treebank)"}
JNLPBA = {"name": "JNLPBA 2004 bio-entity recognition (GENIA)", "url": "https://github.com/spyysalo/jnlpba",
          "license": "GENIA annotation license (CC BY 3.0)"}
LOOKUPS = {"name": "spacy-lookups-data (English lemma tables; Brown clusters and word probabilities)",
           "url": "https://github.com/explosion/spacy-lookups-data", "license": "MIT"}
# held-out data for calibration: a DocBin, or its last share of docs (and
# the twin model that fits the temperature there, when the shipped one
# trained on those docs)
EWT_DEV = {"path": "corpus/ewt/dev.spacy"}
BEAM_SATURATES = ("off by default: a beam perceptron's head probabilities saturate (p = 1 where its "
                  "final beam's parses agree; on the quick beam-8 EWT parser, test ECE 0.24, p = 1 "
                  "right 73% of the time); parser.fit_temperature(held-out examples) turns them on")

# name -> config, model dirs per setting ({metrics} = metrics/ or metrics/quick/),
# runtime settings, test set, benchmark figures (file in the metrics dir,
# dotted key, meta key), calibration data per setting and component (a
# string: why there is none), the data (meta "sources")
PIPELINES: Dict[str, Dict[str, Any]] = {
    "en_lookahead_ewt": {
        "config": "configs/package_ewt.cfg",
        "sources": {
            # tagger and parser trained together by configs/pipeline_ewt.cfg
            # (the parser on jackknifed tags): project command pipeline-ewt
            "full": {"tagger": "training/pipeline_ewt/model-best",
                     "parser": "training/pipeline_ewt/model-best"},
            "quick": {"tagger": "training/quick/tagger_d1/model-best",
                      "parser": "training/quick/parser_ewt_greedy/model-best"},
        },
        # the parser was trained on one sentence per doc: the config's
        # sentencizer splits raw text and the parser keeps its sentences
        "settings": {"components.arc_standard_parser.respect_sent_starts": True},
        "test": "corpus/ewt/test.spacy",
        "benchmark": {
            "full": [("pipeline_ewt.json", "tag_acc", "tag_acc"),
                     ("pipeline_ewt.json", "uas_nopunct", "dep_uas_nopunct_words_only"),
                     ("pipeline_ewt.json", "las_nopunct", "dep_las_nopunct_words_only"),
                     ("tagger_speed.json", "models.tagger_d1.tokens_per_second",
                      "tagger_tokens_per_second")],
            "quick": [("tagger_d1.json", "tag_acc", "tag_acc"),
                      ("parser_ewt_greedy.json", "uas", "dep_uas_gold_pos"),
                      ("parser_ewt_greedy.json", "las", "dep_las_gold_pos"),
                      ("tagger_speed.json", "models.tagger_d1.tokens_per_second",
                       "tagger_tokens_per_second")],
        },
        # the full tagger fitted its temperature on EWT dev while training
        # (alternatives = true); the quick one trained on the first 1,500
        # sentences of train
        # the parser's head probabilities (the n best of a beam) stay off: they
        # saturate, and would cost 15% of its speed (the meta says why)
        "calibration": {setting: {"lookahead_tagger": EWT_DEV, "arc_standard_parser": BEAM_SATURATES}
                        for setting in ("full", "quick")},
        "data": [EWT, LOOKUPS],
        "description": "POS tags (PTB in token.tag_, with their probabilities; UPOS, morphology "
                       "and lemmas), labelled dependencies (UD, arc-standard parser with lookahead "
                       "search), noun chunks and sentences, from raw English text.",
    },
    "en_lookahead_chunks": {
        "config": "configs/pipeline_chunks.cfg",
        "sources": {
            "full": {"tagger": "training/tagger_conll2000/model-last",
                     "chunker": "training/chunker_d1_biluo_lexicon_koo_near_full/model-last"},
            "quick": {"tagger": "training/quick/tagger_conll2000/model-last",
                      "chunker": "training/quick/chunker_d1_biluo_lexicon_koo_near_full/model-last"},
        },
        # spacy evaluate shows the spans of key "sc" unless given --spans-key:
        # the chunk scores also under it (scoring.py, chunk_scorer.v2)
        "settings": {"components.lookahead_chunker.scorer": {
            "@scorers": "spacy_lookahead.chunk_scorer.v2", "also_as": "sc"}},
        "test": "corpus/conll2000/test.spacy",
        "spans_key": "chunks",
        # the quick models trained on the first 1,000 sentences of train: its
        # last tenth is held out
        # the full tagger and chunker: the temperatures of their twins on the
        # held-out tenth (tagger_conll2000_heldout, chunker_d1_lexicon_biluo_koo_near:
        # the same recipes, trained on the other nine tenths)
        "calibration": {"full": {"lookahead_tagger": {
                                     "path": "corpus/conll2000/train.spacy", "last": 0.1,
                                     "twin": "training/tagger_conll2000_heldout/model-last"},
                                 "lookahead_chunker": {
                                     "path": "corpus/conll2000/train.spacy", "last": 0.1,
                                     "twin": "training/chunker_d1_lexicon_biluo_koo_near/model-best"}},
                        "quick": {"lookahead_tagger": {"path": "corpus/conll2000/train.spacy",
                                                       "last": 0.1},
                                  "lookahead_chunker": {"path": "corpus/conll2000/train.spacy",
                                                        "last": 0.1}}},
        "data": [CONLL2000, EWT, LOOKUPS],
        "benchmark": {
            setting: [("chunker_d1_biluo_lexicon_koo_near_full.json", "f", "spans_chunks_f_gold_pos"),
                      ("chunk_speed.json", "models.chunker_d1_biluo_lexicon_koo_near_full.tokens_per_second",
                       "chunker_tokens_per_second")]
            for setting in ("full", "quick")},
        "description": "Base phrases (CoNLL-2000 chunks: NP, VP, PP, ...) in "
                       "doc.spans['chunks'], with the POS tags they are read from (and UPOS, "
                       "morphology and lemmas).",
    },
    "en_lookahead_bionlp": {
        "config": "configs/pipeline_bionlp.cfg",
        "sources": {
            "full": {"ner": "training/ner_rtl_d1_biluo_pos_affixes_full/model-last"},
            "quick": {"ner": "training/quick/ner_rtl_d1_biluo_pos_affixes_full/model-last"},
        },
        "settings": {},
        "test": "corpus/jnlpba/test.spacy",
        # the tagger is EWT's (model-best on EWT dev); the quick NER trained
        # on the first 1,000 sentences of train: its last tenth is held out
        # the full NER: its twin ner_rtl_d1_biluo_pos_affixes (the same
        # templates, trained on the other nine tenths, tagged by the same
        # EWT tagger) on the held-out tenth
        "calibration": {"full": {"lookahead_tagger": EWT_DEV,
                                 "lookahead_ner": {
                                     "path": "corpus/jnlpba/train.spacy", "last": 0.1,
                                     "twin": "training/ner_rtl_d1_biluo_pos_affixes/model-best"}},
                        "quick": {"lookahead_tagger": EWT_DEV,
                                  "lookahead_ner": {"path": "corpus/jnlpba/train.spacy",
                                                    "last": 0.1}}},
        "data": [JNLPBA, EWT, LOOKUPS],
        "benchmark": {
            setting: [("ner_rtl_d1_biluo_pos_affixes_full.json", "f", "ents_f"),
                      ("ner_speed.json", "models.ner_rtl_d1_biluo_pos_affixes_full.tokens_per_second",
                       "ner_tokens_per_second")]
            for setting in ("full", "quick")},
        "description": "Bio-entities (JNLPBA: protein, DNA, RNA, cell_line, cell_type) in "
                       "doc.ents, right-to-left lookahead NER reading the POS tags of the "
                       "EWT tagger before it (token.tag_; and UPOS, morphology and lemmas).",
    },
}


def run(cmd: List[str]) -> None:
    print("+", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True, cwd=ROOT)


def shown(path: Any) -> str:
    """A path as the meta and the shipped config give it: relative to the
    repository where it is inside it, else its last two parts (no build
    machine's absolute paths)."""
    path = Path(path)
    try:
        return (path if not path.is_absolute() else path.resolve().relative_to(ROOT)).as_posix()
    except ValueError:
        return Path(*path.parts[-2:]).as_posix()


def spacy_range() -> Optional[str]:
    """The spaCy versions the plugin supports (its installed metadata, from
    setup.cfg), e.g. ">=3.8,<3.9"; None if it is not installed."""
    from packaging.requirements import Requirement
    try:
        wanted = requires(PLUGIN) or []
    except PackageNotFoundError:
        return None
    for line in wanted:
        req = Requirement(line)
        if req.name == "spacy" and not req.marker:
            return ",".join(sorted((str(s) for s in req.specifier), key=lambda s: s[0] != ">"))
    return None


def dotted(data: Any, key: str) -> Optional[Any]:
    for part in key.split("."):
        if not isinstance(data, dict) or part not in data:
            return None
        data = data[part]
    return data


def benchmark_figures(rows, metrics: Path) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    for file, key, name in rows:
        path = metrics / file
        value = dotted(srsly.read_json(path), key) if path.exists() else None
        if value is None:
            why = f"no {key} in {shown(path)}" if path.exists() else f"no {shown(path)}"
            print(f"package.py: {why}: {name} left out of the meta", file=sys.stderr)
            continue
        out[name] = value
        out.setdefault("sources", []).append(shown(path))
    if "sources" in out:
        out["sources"] = sorted(set(out["sources"]))
    return out


def assemble(name: str, spec: Dict[str, Any], sources: Dict[str, str], out: Path) -> None:
    for slot, path in sources.items():
        if not (ROOT / path / "config.cfg").exists():
            sys.exit(f"package.py: {name}: no trained pipeline at {path} (the `{slot}` of "
                     f"{spec['config']}): run its training first, or pass --source {name}.{slot}=DIR")
    run([sys.executable, "-m", "spacy", "assemble", spec["config"], str(out)]
        + [arg for slot, path in sources.items() for arg in (f"--paths.{slot}", str(path))])


def finish(spec: Dict[str, Any], plan: Dict[str, Any], out: Path) -> Dict[str, Any]:
    """The runtime settings and the calibration (`plan`: component -> its
    held-out data, or why none) of the assembled pipeline at `out`, saved
    there, with the source paths of its config made relative; returns
    what each component writes as probabilities."""
    nlp = spacy.load(ROOT / out, config=spacy.util.dot_to_dict(spec["settings"]))
    probabilities = calibrate(nlp, plan)
    nlp.to_disk(ROOT / out)
    config = spacy.util.load_config(ROOT / out / "config.cfg", interpolate=False)
    for key, value in config["paths"].items():
        if isinstance(value, str) and value:
            config["paths"][key] = shown(value)
    config.to_disk(ROOT / out / "config.cfg")
    return probabilities


def held_out(data: Dict[str, Any], vocab) -> List[Doc]:
    """The docs of data["path"] (a DocBin), or its last data["last"] share."""
    path = ROOT / data["path"]
    if not path.exists():
        sys.exit(f"package.py: no calibration data at {shown(path)}: run the `convert` step, "
                 "or pass --calibration NAME.COMPONENT=DATA.spacy")
    docs = list(DocBin().from_disk(path).get_docs(vocab))
    return docs[len(docs) - round(len(docs) * data["last"]):] if "last" in data else docs


def calibrate(nlp, plan: Dict[str, Any]) -> Dict[str, Any]:
    """Fit the temperature of each perceptron component (tagger, chunker,
    NER; a beam parser: its head probabilities) that has none on its
    held-out data in `plan` (its docs' words through the pipeline's earlier
    components, as at prediction time); returns per component what it
    writes: where its probabilities go, the temperature and the data it
    was fitted on, or why none (a greedy or lookahead parser: its parse is
    not the best of a beam's n best)."""
    from spacy_lookahead.pipes.sequence import SequencePipe
    from spacy_lookahead.pipes.transition import TransitionPipe
    out: Dict[str, Any] = {}
    for i, (name, pipe) in enumerate(nlp.pipeline):
        if not isinstance(pipe, TransitionPipe):
            continue
        if "scores_key" in pipe.cfg:
            what = f"doc.spans[{pipe.cfg['scores_key']!r}].attrs['scores']"
        elif "spans_key" in pipe.cfg:
            what = f"doc.spans[{pipe.cfg['spans_key']!r}].attrs['scores']"
        else:
            what = "token._.tag_prob" if isinstance(pipe, SequencePipe) else "token._.head_prob"
        data = plan.get(name)
        if not isinstance(pipe, SequencePipe) and not pipe.learner.probabilistic \
                and pipe.search.kind != "beam":  # the parser: the n best of its beam
            out[name] = (f"none: a {pipe.search.kind} perceptron parser (head probabilities come "
                         "from the n best of its beam: search Beam.v1, or learner SAPO.v1)")
        elif pipe.learner.probabilistic or pipe.cfg.get("fitted_temperature") is not None:
            out[name] = {"writes": what, "temperature": pipe.temperature,
                         "fitted": "with the model (on its dev data while training)"}
        elif isinstance(data, dict):
            gold = held_out(data, nlp.vocab)
            docs = [Doc(nlp.vocab, words=[t.text for t in g], spaces=[bool(t.whitespace_) for t in g])
                    for g in gold]
            with nlp.select_pipes(enable=nlp.pipe_names[:i]):
                docs = list(nlp.pipe(docs))
            fitter = twin(pipe, name, data["twin"]) if "twin" in data else pipe
            fitter.fit_temperature([Example(d, g) for d, g in zip(docs, gold)])
            where = shown(data["path"]) + (f", its last {data['last']:.0%} of docs"
                                           if "last" in data else "")
            if fitter is not pipe:
                pipe.cfg["fitted_temperature"] = fitter.cfg.get("fitted_temperature")
                where += f", by {shown(data['twin'])} (the same recipe, without those docs)"
            out[name] = ({"writes": what, "temperature": pipe.temperature, "fitted": where}
                         if pipe.cfg.get("fitted_temperature") is not None else
                         f"none: no doc of {where} has a fully known gold")
        else:
            out[name] = f"none: {data or 'no held-out data named in benchmarks/package.py'}"
        print(f"package.py: {name}: " + (f"{what} at temperature {out[name]['temperature']:g}"
                                         if isinstance(out[name], dict) else out[name]),
              file=sys.stderr)
    return out


def twin(pipe, name: str, path: str):
    """The component `name` of the twin model at path: the same recipe as
    pipe (features, scheme, search, learner), trained without the held-out
    docs (so its labels may lack a rare one of pipe's)."""
    if not (ROOT / path / "config.cfg").exists():
        sys.exit(f"package.py: no twin model at {path} to fit {name}'s temperature: train it "
                 "first (python -m benchmarks.run train NAME), or pass --calibration")
    other = spacy.load(ROOT / path).get_pipe(name)
    differ = [key for key in ("features", "scheme", "depth", "direction", "search", "learner")
              if other.cfg.get(key) != pipe.cfg.get(key)]
    if differ:
        sys.exit(f"package.py: the twin {path} of {name} has other {', '.join(differ)}: not the "
                 "same recipe")
    return other


def evaluate(model: Path, data: Path, spans_key: str) -> Dict[str, Any]:
    from spacy.cli.evaluate import evaluate as spacy_evaluate
    scores = spacy_evaluate(str(model), data, spans_key=spans_key, silent=True)
    training_figures = ("_w_mean_abs", "_update_seconds", "_beam_")  # logged by the pipes for curves
    return {k: v for k, v in scores.items() if isinstance(v, (int, float))
            and not any(part in k for part in training_figures)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("setting", choices=("full", "quick"))
    ap.add_argument("--only", nargs="*", default=None, choices=sorted(PIPELINES))
    ap.add_argument("--output", type=Path, default=Path("packages"))
    ap.add_argument("--metrics", type=Path, default=None, help="default: metrics[/quick]")
    ap.add_argument("--source", action="append", default=[], help="NAME.SLOT=MODEL_DIR")
    ap.add_argument("--test", action="append", default=[], help="NAME=DATA.spacy")
    ap.add_argument("--calibration", action="append", default=[],
                    help="NAME.COMPONENT=DATA.spacy: held-out docs to fit the component's "
                         "temperature on, instead of the table's")
    args = ap.parse_args(argv)
    metrics = ROOT / (args.metrics or Path("metrics" if args.setting == "full" else "metrics/quick"))
    overrides: Dict[str, Dict[str, str]] = {}
    for item in args.source:
        key, _, path = item.partition("=")
        name, _, slot = key.partition(".")
        if name not in PIPELINES or slot not in PIPELINES[name]["sources"][args.setting] or not path:
            ap.error(f"--source {item!r}: expected NAME.SLOT=DIR with NAME.SLOT one of "
                     + ", ".join(f"{n}.{s}" for n, p in PIPELINES.items() for s in p["sources"]["full"]))
        overrides.setdefault(name, {})[slot] = str(Path(path).resolve())
    tests = dict(item.partition("=")[::2] for item in args.test)
    calibration: Dict[str, Dict[str, Dict[str, Any]]] = {}
    for item in args.calibration:
        key, _, path = item.partition("=")
        name, _, component = key.partition(".")
        if name not in PIPELINES or not component or not path:
            ap.error(f"--calibration {item!r}: expected NAME.COMPONENT=DATA.spacy, NAME one of "
                     + ", ".join(PIPELINES))
        calibration.setdefault(name, {})[component] = {"path": str(Path(path).resolve())}
    for name in args.only or PIPELINES:
        spec = PIPELINES[name]
        sources = {**spec["sources"][args.setting], **overrides.get(name, {})}
        out = args.output / name
        start = time.perf_counter()
        assemble(name, spec, sources, out / "pipeline")
        plan = {**spec.get("calibration", {}).get(args.setting, {}), **calibration.get(name, {})}
        probabilities = finish(spec, plan, out / "pipeline")
        meta = srsly.read_json(ROOT / out / "pipeline" / "meta.json")
        test = Path(tests.get(name, spec["test"]))
        performance = evaluate(ROOT / out / "pipeline", ROOT / test, spec.get("spans_key", "sc"))
        meta.update({
            "name": name[len("en_"):], "version": VERSION, "description": spec["description"],
            "license": "MIT", "author": AUTHOR, "email": "", "url": "",
            "spacy_version": spacy_range() or meta.get("spacy_version", ""),
            "sources": spec.get("data", []),
            "requirements": [REQUIREMENT],
            "performance": performance,
            "probabilities": probabilities,
            "benchmark": {**benchmark_figures(spec["benchmark"][args.setting], metrics),
                          "setting": args.setting, "test": shown(test),
                          "components": {slot: shown(path) for slot, path in sources.items()}},
        })
        srsly.write_json(ROOT / out / "meta.json", meta)
        run([sys.executable, "-m", "spacy", "package", str(out / "pipeline"), str(out),
             "--meta-path", str(out / "meta.json"), "--build", "wheel", "--force"])
        wheels = sorted((ROOT / out).glob(f"{name}-{VERSION}/dist/*.whl"))
        summary = {k: performance.get(k) for k in ("tag_acc", "pos_acc", "lemma_acc", "dep_uas",
                                                   "dep_las", "sents_f", "spans_chunks_f", "ents_f",
                                                   "speed") if k in performance}
        print(json.dumps({"package": name, "wheel": [str(w) for w in wheels],
                          "seconds": round(time.perf_counter() - start, 1), **summary}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
