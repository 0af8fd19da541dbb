"""The one-engine benchmark: learners that each component could not use
before (beam search for the sequence labellers, SAPO for the parser), next
to the settings they are compared with, in one run.

    python benchmarks/engine_bench.py train [NAME ...]      # train (all, or the named runs)
    python benchmarks/engine_bench.py evaluate [NAME ...]   # score them on test
    python benchmarks/engine_bench.py list                  # the table, as commands

The runs are the table RUNS below: one `spacy train` (or, for the parser,
benchmarks/parser_bench.py) command per setting, timed by benchmarks/timed.py
(metrics/time_NAME.json), with per-epoch curves from the curves logger
(metrics/curves/NAME.jsonl: dev score, time, beam updates and invalid
updates). Test scores: `spacy benchmark accuracy` on model-best (EWT, dev
selection) or benchmarks/evaluate.py on model-last (CoNLL-2000, JNLPBA: no
dev set, fixed budget, as the other rows of results.md).
"""
import subprocess
import sys
from pathlib import Path

PY = sys.executable
TAGGER = ("python -m spacy train configs/tagger_ewt.cfg --paths.train corpus/ewt/train.spacy "
          "--paths.dev corpus/ewt/dev.spacy --gpu-id -1")
CHUNKER = ("python -m spacy train configs/chunker_conll2000.cfg --paths.train "
           "assets/conll2000/train.txt --paths.dev assets/conll2000/test.txt --gpu-id -1")
NER = ("python -m spacy train configs/ner_jnlpba.cfg --paths.train assets/jnlpba/train.iob2 "
       "--paths.dev assets/jnlpba/test.iob2 --gpu-id -1 --components.lookahead_ner.direction rtl")
PARSER = ("python benchmarks/parser_bench.py {name} --train corpus/ewt/train.spacy --dev "
          "corpus/ewt/dev.spacy --test corpus/ewt/test.spacy")


def beam(component: str, k: int, update: str) -> str:
    c = f"--components.{component}"
    return f"{c}.search beam {c}.beam_width {k} {c}.update {update}"


RUNS = {}  # name -> (task, training command)
for k in (1, 2, 4, 8):
    for update in ("early", "max_violation", "standard"):
        RUNS[f"tagger_beam{k}_{update}"] = ("tag", f"{TAGGER} {beam('lookahead_tagger', k, update)}")
RUNS["tagger_d1"] = ("tag", f"{TAGGER} --components.lookahead_tagger.depth 1")
RUNS["chunker_beam8_max_violation"] = ("chunk", f"{CHUNKER} {beam('lookahead_chunker', 8, 'max_violation')}")
RUNS["chunker_d1"] = ("chunk", f"{CHUNKER} --components.lookahead_chunker.depth 1")
RUNS["ner_rtl_beam8_max_violation"] = ("ner", f"{NER} {beam('lookahead_ner', 8, 'max_violation')}")
RUNS["ner_rtl_d1"] = ("ner", f"{NER} --components.lookahead_ner.depth 1")
RUNS["parser_ewt_sapo"] = ("parse", PARSER.format(name="ewt_sapo") + " --learner sapo --search beam "
                           "--beam-width 8 --update max_violation --epochs 30 --patience 5 "
                           "--model-dir training/parser_ewt_sapo")
RUNS["parser_ewt_sapo_early"] = ("parse", PARSER.format(name="ewt_sapo_early") + " --learner sapo "
                                 "--search beam --beam-width 8 --update early --epochs 30 "
                                 "--patience 5 --model-dir training/parser_ewt_sapo_early")
RUNS["parser_ewt_greedy"] = ("parse", PARSER.format(name="ewt_greedy") + " --search greedy --epochs 12 "
                             "--model-dir training/parser_ewt_greedy")
RUNS["parser_ewt_d1"] = ("parse", PARSER.format(name="ewt_d1") + " --search lookahead --depth 1 "
                         "--margin 50 --epochs 15 --patience 3 --model-dir training/parser_ewt_d1")


def train_command(name: str) -> str:
    task, cmd = RUNS[name]
    if task == "parse":  # parser_bench writes metrics/parser_<name>.json itself
        return f"python benchmarks/timed.py {name} -- {cmd}"
    return (f"python benchmarks/timed.py {name} -- {cmd} --output training/{name} "
            f"--paths.curves metrics/curves/{name}.jsonl")


def evaluate_command(name: str):
    task, _ = RUNS[name]
    if task == "tag":
        return (f"python -m spacy benchmark accuracy training/{name}/model-best corpus/ewt/test.spacy "
                f"--output metrics/{name}.json --gpu-id -1 --gold-preproc")
    if task in ("chunk", "ner"):
        test = "conll2000" if task == "chunk" else "jnlpba"
        return (f"python benchmarks/evaluate.py training/{name}/model-last corpus/{test}/test.spacy "
                f"--task {task} --output metrics/{name}.json")
    return None  # the parser's test scores come with its training run


def run(cmd: str) -> None:
    print(f"$ {cmd}", flush=True)
    argv = cmd.split()
    if argv[0] == "python":
        argv[0] = PY
    subprocess.run(argv, check=True)


def main(argv) -> int:
    if not argv or argv[0] not in ("train", "evaluate", "list"):
        sys.exit(__doc__)
    names = argv[1:] or list(RUNS)
    unknown = [n for n in names if n not in RUNS]
    if unknown:
        sys.exit(f"unknown runs {unknown}; known: {sorted(RUNS)}")
    for name in names:
        if argv[0] == "list":
            print(f"{name}: {train_command(name)}")
        elif argv[0] == "train":
            run(train_command(name))
        elif evaluate_command(name):
            if Path(f"training/{name}").exists():
                run(evaluate_command(name))
            else:
                print(f"{name}: not trained, skipped", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
