"""The parser from raw text (words in, no tags): every setting is `spacy
train configs/pipeline_ewt.cfg` (tagger and parser trained together; the
dev set scored from its words, model-best by dev LAS without punctuation)
with the settings of one row of RUNS; WSJ_RUNS are the unlabelled WSJ
sample with gold POS (configs/parser_wsj.cfg), the paper's setting.

    python benchmarks/raw_parser.py run [NAME ...]     # train + score on test once
    python benchmarks/raw_parser.py report [--output F]
    python benchmarks/raw_parser.py commands

`run` trains each named row (all by default) that has no test score yet,
then scores model-best on the test set once (benchmarks/parser_eval.py:
UAS/LAS with and without punctuation, from the words only). The jackknifed
corpus (`paths.train_tags`) comes first: project command pipeline-ewt."""
import argparse
import json
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Tuple

OUT = Path("training/raw_parser")
METRICS = Path("metrics/raw_parser")
EWT = "corpus/ewt"
WSJ = "corpus/wsj"
P = "components.arc_standard_parser."
# the settings every EWT row states, so that a row does not depend on the
# config's defaults: base features, beam 8, early update, jackknifed tags
# without the tagger's alternatives
EWT_BASE = {P + "search": "beam", P + "beam_width": 8, P + "update": "early",
            P + "features": "base", P + "tag_alternatives": False,
            "components.lookahead_tagger.alternatives": False, "corpora.train.inputs": ["tag"],
            "paths.train_tags": f"{EWT}/train.jackknifed.spacy", "training.max_epochs": 30}
GREEDY = {P + "search": "greedy", P + "update": "max_violation"}
GOLD_TAGS = {"paths.train_tags": None}  # the parser trains on the gold tags
RICH = {P + "features": "rich", "training.max_epochs": 25}
ALTERNATIVES = {"corpora.train.inputs": ["tag", "tag_alternatives"],
                "components.lookahead_tagger.alternatives": True, P + "tag_alternatives": True}

# name: (what it shows, settings over EWT_BASE)
RUNS: Dict[str, Tuple[str, Dict[str, object]]] = {
    "gold_greedy": ("greedy, trained on gold tags", {**GREEDY, **GOLD_TAGS}),
    "jk_greedy": ("greedy, jackknifed tags", GREEDY),
    "gold_b8_early": ("beam 8, early update, trained on gold tags", GOLD_TAGS),
    "jk_b8_early": ("beam 8, early update, jackknifed tags", {}),
    "jk_rich_b8_early": ("+ rich features (Zhang and Nivre 2011)", RICH),
    "jk_rich_b16_early": ("+ rich features, beam 16",
                          {**RICH, P + "beam_width": 16, "training.max_epochs": 20}),
    "jk_rich_b8_mv": ("rich features, beam 8, max-violation update",
                      {**RICH, P + "update": "max_violation", "training.max_epochs": 15}),
    "jkalt_rich_b8_early": ("+ rich features + the tagger's alternative tags",
                            {**RICH, **ALTERNATIVES}),
    "jkalt_rich_b8_mv": ("+ rich features + the tagger's alternative tags, max-violation",
                         {**RICH, **ALTERNATIVES, P + "update": "max_violation",
                          "training.max_epochs": 15}),
    "jkalt_rich_b16_early": ("+ rich features, beam 16 + the tagger's alternative tags",
                             {**RICH, **ALTERNATIVES, P + "beam_width": 16,
                              "training.max_epochs": 20}),
}
WSJ_RUNS: Dict[str, Tuple[str, Dict[str, object]]] = {
    "wsj_b16_mv": ("beam 16, max-violation", {P + "beam_width": 16}),
    "wsj_rich_b16_mv": ("beam 16, max-violation, rich features",
                        {P + "beam_width": 16, P + "features": "rich"}),
    "wsj_rich_b32_mv": ("beam 32, max-violation, rich features",
                        {P + "beam_width": 32, P + "features": "rich"}),
    "wsj_rich_b16_early": ("beam 16, early update, rich features",
                           {P + "beam_width": 16, P + "update": "early", P + "features": "rich"}),
}
WSJ_BASE = {P + "search": "beam", P + "update": "max_violation", "training.max_epochs": 30,
            "training.patience": 2000, "training.score_weights.dep_uas": 0.0,
            "training.score_weights.dep_uas_nopunct": 1.0}


def override(key: str, value: object) -> List[str]:
    return [f"--{key}", "null" if value is None else json.dumps(value) if not isinstance(value, str)
            else value]


def train_command(name: str) -> List[str]:
    if name in RUNS:
        config, data, settings = "configs/pipeline_ewt.cfg", EWT, {**EWT_BASE, **RUNS[name][1]}
    else:
        config, data, settings = "configs/parser_wsj.cfg", WSJ, {**WSJ_BASE, **WSJ_RUNS[name][1]}
    cmd = ["python", "-m", "spacy", "train", config, "--output", str(OUT / name),
           "--paths.train", f"{data}/train.spacy", "--paths.dev", f"{data}/dev.spacy"]
    if name in RUNS:
        cmd += ["--paths.curves", f"metrics/curves/raw_parser_{name}.jsonl"]
    for key, value in settings.items():
        cmd += override(key, value)
    return cmd


def test_command(name: str) -> List[str]:
    data = EWT if name in RUNS else WSJ
    cmd = ["python", "benchmarks/parser_eval.py", str(OUT / name / "model-best"),
           f"{data}/test.spacy", str(METRICS / f"{name}.json")]
    return cmd + (["--gold-tags"] if name in WSJ_RUNS else [])


def run(args) -> int:
    names = args.names or [*RUNS, *WSJ_RUNS]
    unknown = [n for n in names if n not in RUNS and n not in WSJ_RUNS]
    if unknown:
        sys.exit(f"unknown runs {unknown}: choose from {sorted([*RUNS, *WSJ_RUNS])}")
    METRICS.mkdir(parents=True, exist_ok=True)
    for name in names:
        if (METRICS / f"{name}.json").exists():
            print(f"{name}: scored already ({METRICS / name}.json)")
            continue
        for cmd in ([sys.executable, "benchmarks/timed.py", f"raw_parser/{name}", "--",
                     *train_command(name)], test_command(name)):
            print("+", shlex.join(cmd), flush=True)
            if cmd[0] == "python":
                cmd[0] = sys.executable
            subprocess.run(cmd, check=True)
    return 0


def best_dev(name: str) -> Tuple[object, object]:
    """(best dev score, its epoch) from the run's curve, if it has one."""
    path = Path(f"metrics/curves/raw_parser_{name}.jsonl")
    if not path.exists():
        return None, None
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    best = max(rows, key=lambda r: r["score"])
    return round(100 * best["score"], 2), best["epoch"] + 1


def report(args) -> int:
    lines = ["| setting | UAS | LAS | UAS no punct | LAS no punct | best dev (LAS no punct) | epoch |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for name, (what, _) in RUNS.items():
        path = METRICS / f"{name}.json"
        if not path.exists():
            continue
        s = json.loads(path.read_text())
        dev, epoch = best_dev(name)
        lines.append(f"| {what} (`{name}`) | {100 * s['uas']:.2f} | {100 * s['las']:.2f} | "
                     f"{100 * s['uas_nopunct']:.2f} | {100 * s['las_nopunct']:.2f} | {dev} | {epoch} |")
    spacy_path = Path("metrics/parser_test_spacy_parser.json")
    if spacy_path.exists():
        s = json.loads(spacy_path.read_text())
        lines.append(f"| spaCy's parser, words only (`train-baseline-parser`) | {100 * s['uas']:.2f} | "
                     f"{100 * s['las']:.2f} | {100 * s['uas_nopunct']:.2f} | "
                     f"{100 * s['las_nopunct']:.2f} | - | - |")
    lines += ["", "| WSJ sample, gold POS, unlabelled | UAS | UAS no punct |", "| --- | --- | --- |"]
    for name, (what, _) in WSJ_RUNS.items():
        path = METRICS / f"{name}.json"
        if path.exists():
            s = json.loads(path.read_text())
            lines.append(f"| {what} (`{name}`) | {100 * s['uas']:.2f} | {100 * s['uas_nopunct']:.2f} |")
    text = "\n".join(lines) + "\n"
    if args.output:
        Path(args.output).write_text(text)
    print(text)
    return 0


def commands(args) -> int:
    for name in [*RUNS, *WSJ_RUNS]:
        print(f"* `{name}`: `{shlex.join(train_command(name))}`")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run")
    r.add_argument("names", nargs="*")
    r.set_defaults(func=run)
    rep = sub.add_parser("report")
    rep.add_argument("--output", default=None)
    rep.set_defaults(func=report)
    sub.add_parser("commands").set_defaults(func=commands)
    args = ap.parse_args()
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
