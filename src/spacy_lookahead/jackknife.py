"""Jackknifing: a training corpus annotated by models that never saw it.

    python -m spacy_lookahead jackknife CONFIG TRAIN.spacy OUTPUT.spacy
        [--folds 10] [--jobs 2] [--work-dir DIR] [--code F] [--section.key value ...]

A parser trained on gold POS tags has never seen a tagging mistake, and
parses worse from a tagger's tags than it should. The standard remedy
(k-fold jackknifing, k = 10 in the parsing literature): split the training
docs into k contiguous folds, train the pipeline of CONFIG (e.g.
configs/tagger_ewt.cfg) with `spacy train` on the other k - 1 folds, and
annotate the held-out fold with it. OUTPUT holds every training doc, in
order, with the words, the gold sentence boundaries and what the fold's
pipeline predicted (e.g. `token.tag_`); the gold annotation stays in TRAIN.
`spacy_lookahead.keep_inputs.v1` with `inputs_path = OUTPUT` then trains a
parser on those tags against TRAIN's trees.

The overrides go to every fold's `spacy train` (e.g. `--paths.dev
corpus/ewt/dev.spacy`: model selection on dev, never on the held-out fold).
Folds train in `--jobs` processes; a fold whose model is already in
WORK_DIR is not trained again, so an interrupted run resumes. WORK_DIR
records what its folds were made from (jackknife.json: the config's, the
corpus's and the code file's sha256, the folds and the overrides), and a
run with other inputs or settings is refused there rather than reusing a
stale fold."""
import argparse
import hashlib
import json
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Dict, List, Optional, Sequence, TextIO

import spacy
from spacy.tokens import Doc, DocBin


def fold_bounds(n_docs: int, folds: int) -> List[range]:
    """k contiguous folds of the docs, sizes differing by one at most."""
    if not 2 <= folds <= max(n_docs, 2):
        raise ValueError(f"jackknife: --folds must be between 2 and the number of docs "
                         f"({n_docs}), got {folds}")
    edges = [n_docs * k // folds for k in range(folds + 1)]
    return [range(edges[k], edges[k + 1]) for k in range(folds)]


def annotate_fold(nlp, gold: Sequence[Doc]) -> List[Doc]:
    """`nlp` over the words of the gold docs; the gold sentence boundaries
    are copied onto the output (the reader splits both corpora alike)."""
    words = [Doc(nlp.vocab, words=[t.text for t in d], spaces=[bool(t.whitespace_) for t in d])
             for d in gold]
    out = []
    for doc, ref in zip(nlp.pipe(words), gold):
        if ref.has_annotation("SENT_START") and not doc.has_annotation("DEP"):
            for token, gold_token in zip(doc, ref):
                token.is_sent_start = gold_token.is_sent_start
        out.append(doc)
    return out


def train_fold(config: Path, train: Path, model_dir: Path, overrides: List[str],
               code: Optional[Path]) -> Path:
    best = model_dir / "model-best"
    if (best / "meta.json").exists():
        return best
    cmd = [sys.executable, "-m", "spacy", "train", str(config), "--output", str(model_dir),
           "--paths.train", str(train), *overrides]
    if code:
        cmd += ["--code", str(code)]
    log = model_dir.with_suffix(".log")
    with log.open("w") as f:
        result = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT)
    if result.returncode != 0:
        raise RuntimeError(f"jackknife: training {model_dir.name} failed (exit "
                           f"{result.returncode}); see {log}")
    return best


def _sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _check_work_dir(work: Path, made_from: Dict[str, object]) -> None:
    """Record what the folds in `work` are made from, or refuse a work dir
    whose folds were made from other inputs or settings (or say nothing
    of theirs): reusing them would mix stale models into the output."""
    record = work / "jackknife.json"
    fix = f"remove {work}, or give another --work-dir"
    if record.exists():
        old = json.loads(record.read_text())
        changed = [key for key in made_from if old.get(key) != made_from[key]]
        if changed:
            raise ValueError(f"jackknife: {work} holds folds made from other inputs or settings "
                             f"({', '.join(changed)} differ): {fix}, so that no stale fold is "
                             "reused.")
        return
    if any(work.glob("fold*")) or any(work.glob("rest*.spacy")):
        raise ValueError(f"jackknife: {work} holds folds that do not say what they were made "
                         f"from: {fix}.")
    record.write_text(json.dumps(made_from, indent=2) + "\n")


def jackknife(config: Path, train: Path, output: Path, *, folds: int = 10, jobs: int = 1,
              work_dir: Optional[Path] = None, overrides: Sequence[str] = (),
              code: Optional[Path] = None, progress: Optional[TextIO] = None) -> Dict[str, float]:
    """Write OUTPUT (see the module docstring); returns the held-out tag
    accuracy per fold and overall where the gold has tags. progress: a
    line per fold as it is trained (or reused) and as it tags its part."""
    def say(line: str) -> None:
        if progress is not None:
            print(f"jackknife: {line}", file=progress, flush=True)

    nlp0 = spacy.blank("en")
    gold = list(DocBin().from_disk(train).get_docs(nlp0.vocab))
    bounds = fold_bounds(len(gold), folds)
    work = Path(work_dir or output.with_suffix(".folds"))
    work.mkdir(parents=True, exist_ok=True)
    _check_work_dir(work, {"config_sha256": _sha256(config), "train_sha256": _sha256(train),
                           "code_sha256": _sha256(code) if code else None, "folds": folds,
                           "overrides": list(overrides)})
    rests = []
    for k, fold in enumerate(bounds):
        rest = work / f"rest{k}.spacy"
        if not rest.exists():
            DocBin(docs=gold[:fold.start] + gold[fold.stop:], store_user_data=True).to_disk(rest)
        rests.append(rest)
    def trained(k: int) -> Path:
        start = time.perf_counter()
        reused = (work / f"fold{k}" / "model-best" / "meta.json").exists()
        model = train_fold(config, rests[k], work / f"fold{k}", list(overrides), code)
        say(f"fold {k + 1}/{folds} " + ("reused" if reused else
            f"trained in {time.perf_counter() - start:.0f} s (log: {work / f'fold{k}.log'})"))
        return model

    say(f"{len(gold)} docs in {folds} folds, {max(jobs, 1)} trained at once, in {work}")
    with ThreadPoolExecutor(max_workers=max(jobs, 1)) as pool:
        models = list(pool.map(trained, range(folds)))
    annotated: List[Doc] = []
    report: Dict[str, float] = {}
    right = total = 0
    for k, (fold, model) in enumerate(zip(bounds, models)):
        nlp = spacy.load(model)
        docs = annotate_fold(nlp, gold[fold.start:fold.stop])
        annotated.extend(docs)
        pairs = [(t.tag_, g.tag_) for d, r in zip(docs, gold[fold.start:fold.stop])
                 for t, g in zip(d, r) if g.tag_]
        if pairs:
            fold_right = sum(p == g for p, g in pairs)
            report[f"fold{k}_tag_acc"] = fold_right / len(pairs)
            right += fold_right
            total += len(pairs)
            say(f"fold {k + 1}/{folds} tagged its {len(docs)} docs: held-out tag accuracy "
                f"{100 * fold_right / len(pairs):.2f}")
    if total:
        report["tag_acc"] = right / total
    DocBin(docs=annotated, store_user_data=True).to_disk(output)
    output.with_suffix(".json").write_text(json.dumps(
        {"config": str(config), "train": str(train), "folds": folds, "overrides": list(overrides),
         **report}, indent=2) + "\n")
    return report


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m spacy_lookahead jackknife",
                                 description=__doc__.split("\n\n")[1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("config", type=Path, help="the training config of the annotating pipeline")
    ap.add_argument("train", type=Path, help="the training corpus (DocBin)")
    ap.add_argument("output", type=Path, help="the jackknifed corpus to write (DocBin)")
    ap.add_argument("--folds", type=int, default=10)
    ap.add_argument("--jobs", type=int, default=1, help="folds trained at once")
    ap.add_argument("--work-dir", type=Path, default=None,
                    help="the folds' corpora and models (default: OUTPUT with suffix .folds)")
    ap.add_argument("--code", "-c", type=Path, default=None)
    args, overrides = ap.parse_known_args(argv)
    bad = [o for o in overrides if o.startswith("-") and not o.startswith("--")]
    if bad or any(o.startswith("--paths.train") for o in overrides):
        ap.error(f"overrides are spaCy's --section.key value; --paths.train is set per fold "
                 f"(got {bad or '--paths.train'})")
    for path, what in ((args.config, "config"), (args.train, "training corpus")):
        if not path.exists():
            ap.error(f"{what} not found: {path}")
    report = jackknife(args.config, args.train, args.output, folds=args.folds, jobs=args.jobs,
                       work_dir=args.work_dir, overrides=overrides, code=args.code,
                       progress=sys.stderr)
    summary = f", held-out tag accuracy {100 * report['tag_acc']:.2f}" if "tag_acc" in report else ""
    print(f"jackknifed {args.train} in {args.folds} folds -> {args.output}{summary}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
