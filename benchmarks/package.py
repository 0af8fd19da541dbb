"""Installable pipelines: assemble, score, describe and build one wheel each.

    python benchmarks/package.py {full,quick} [--only NAME ...] [--output packages]
        [--source NAME.SLOT=MODEL_DIR ...] [--test NAME=DATA.spacy] [--metrics DIR]

For each pipeline of PIPELINES (the one table; the `package` step of
benchmarks/experiments.py runs this script at the workflow's scale):

1. `spacy assemble` its pipeline config (configs/pipeline_*.cfg: trained
   components brought in with `source = ...`, unchanged), then the runtime
   `settings` (spaCy config overrides of settings that are not part of the
   trained model, e.g. the parser keeping the sentencizer's sentences);
2. spaCy's evaluate of the assembled pipeline on the test set, from raw words
   (its own tags feed the chunker and parser): `performance` in meta.json,
   spaCy's keys plus `speed` (words/s, whole pipeline);
3. the benchmark's figures of its components (gold inputs, the project's
   speed harness) from the metrics files, under `benchmark` in meta.json;
4. `spacy package --build wheel` with that meta (requirements name
   spacy-lookahead, whose entry points register the components).

Wheels land in OUTPUT/<name>-<version>/dist/."""
import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

import spacy
import srsly

ROOT = Path(__file__).resolve().parents[1]
VERSION = "0.1.0"
REQUIREMENT = f"spacy-lookahead>={VERSION}"

# name -> config, model dirs per setting ({metrics} = metrics/ or metrics/quick/),
# runtime settings, test set, benchmark figures (file in the metrics dir,
# dotted key, meta key)
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
        "description": "POS tags (PTB, UD English EWT), labelled dependencies (UD, arc-standard "
                       "parser with lookahead search) and sentences, from raw English text.",
    },
    "en_lookahead_chunks": {
        "config": "configs/pipeline_chunks.cfg",
        "sources": {
            "full": {"tagger": "training/tagger_conll2000/model-last",
                     "chunker": "training/chunker_d1_biluo_lexicon_full/model-last"},
            "quick": {"tagger": "training/quick/tagger_conll2000/model-last",
                      "chunker": "training/quick/chunker_d1_biluo_lexicon_full/model-last"},
        },
        "settings": {},
        "test": "corpus/conll2000/test.spacy",
        "spans_key": "chunks",
        "benchmark": {
            setting: [("chunker_d1_biluo_lexicon_full.json", "f", "spans_chunks_f_gold_pos"),
                      ("chunk_speed.json", "models.chunker_d1_biluo_lexicon_full.tokens_per_second",
                       "chunker_tokens_per_second")]
            for setting in ("full", "quick")},
        "description": "Base phrases (CoNLL-2000 chunks: NP, VP, PP, ...) in "
                       "doc.spans['chunks'], with the POS tags they are read from.",
    },
    "en_lookahead_bionlp": {
        "config": "configs/pipeline_bionlp.cfg",
        "sources": {
            "full": {"ner": "training/ner_rtl_d1_biluo_pos_affixes_full/model-last"},
            "quick": {"ner": "training/quick/ner_rtl_d1_biluo_pos_affixes_full/model-last"},
        },
        "settings": {},
        "test": "corpus/jnlpba/test.spacy",
        "benchmark": {
            setting: [("ner_rtl_d1_biluo_pos_affixes_full.json", "f", "ents_f"),
                      ("ner_speed.json", "models.ner_rtl_d1_biluo_pos_affixes_full.tokens_per_second",
                       "ner_tokens_per_second")]
            for setting in ("full", "quick")},
        "description": "Bio-entities (JNLPBA: protein, DNA, RNA, cell_line, cell_type) in "
                       "doc.ents, right-to-left lookahead NER reading the POS tags of the "
                       "EWT tagger before it (token.tag_).",
    },
}


def run(cmd: List[str]) -> None:
    print("+", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True, cwd=ROOT)


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
            why = f"no {key} in {path}" if path.exists() else f"no {path}"
            print(f"package.py: {why}: {name} left out of the meta", file=sys.stderr)
            continue
        out[name] = value
        out.setdefault("sources", []).append(str(path))
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
    if spec["settings"]:
        nlp = spacy.load(ROOT / out, config=spacy.util.dot_to_dict(spec["settings"]))
        nlp.to_disk(ROOT / out)


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
    for name in args.only or PIPELINES:
        spec = PIPELINES[name]
        sources = {**spec["sources"][args.setting], **overrides.get(name, {})}
        out = args.output / name
        start = time.perf_counter()
        assemble(name, spec, sources, out / "pipeline")
        meta = srsly.read_json(ROOT / out / "pipeline" / "meta.json")
        test = Path(tests.get(name, spec["test"]))
        performance = evaluate(ROOT / out / "pipeline", ROOT / test, spec.get("spans_key", "sc"))
        meta.update({
            "name": name[len("en_"):], "version": VERSION, "description": spec["description"],
            "license": "MIT",
            "requirements": [REQUIREMENT],
            "performance": performance,
            "benchmark": {**benchmark_figures(spec["benchmark"][args.setting], metrics),
                          "setting": args.setting, "test": str(test),
                          "components": {slot: str(path) for slot, path in sources.items()}},
        })
        srsly.write_json(ROOT / out / "meta.json", meta)
        run([sys.executable, "-m", "spacy", "package", str(out / "pipeline"), str(out),
             "--meta-path", str(out / "meta.json"), "--build", "wheel", "--force"])
        wheels = sorted((ROOT / out).glob(f"{name}-{VERSION}/dist/*.whl"))
        summary = {k: performance.get(k) for k in ("tag_acc", "dep_uas", "dep_las", "sents_f",
                                                   "spans_chunks_f", "ents_f", "speed") if k in performance}
        print(json.dumps({"package": name, "wheel": [str(w) for w in wheels],
                          "seconds": round(time.perf_counter() - start, 1), **summary}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
