"""Jackknifing: a training corpus annotated by models that never saw it.

    python -m spacy_lookahead jackknife CONFIG TRAIN.spacy OUTPUT.spacy
        [--folds 10] [--jobs 2] [--model best|last] [--work-dir DIR] [--code F]
        [--section.key value ...]

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

The same goes for a second stage of any kind: a first NER's entities on
the training docs (a span group, e.g. doc.spans["ner_stage1"]), for a
second NER that reads them (Krishnan and Manning 2006; configs/
ner_jnlpba_stage1.cfg and ner_jnlpba_stacked.cfg).

The overrides go to every fold's `spacy train` (e.g. `--paths.dev
corpus/ewt/dev.spacy`: model selection on dev, never on the held-out fold).
`--model last` annotates with each fold's model-last instead of its
model-best: for a data set without a dev split, whose folds train for a
fixed number of epochs.
Folds train in `--jobs` processes, from a copy of CONFIG in WORK_DIR (an
edit of CONFIG during a run changes no fold); a fold whose training
finished (its `trained` file, written once `spacy train` exits cleanly) is
not trained again, so an interrupted run resumes. WORK_DIR records what its
folds were made from (jackknife.json: the config's, the corpus's and the
code file's sha256, the folds and the overrides), and a run with other
inputs or settings is refused there rather than reusing a stale fold. A
finished fold has both models, so --model may differ between runs;
OUTPUT's .json says which one labelled it."""
import argparse
import hashlib
import json
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Sequence, TextIO

import spacy
from spacy.tokens import Doc, DocBin
from spacy.training import Example

from .scoring import score_chunks


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


MODELS = ("best", "last")


def train_fold(config: Path, train: Path, model_dir: Path, overrides: List[str],
               code: Optional[Path], model: str = "best") -> Path:
    """The fold's model-best or model-last, trained unless its training
    finished before (`trained`: spaCy writes both models from the first
    evaluation on, and again when training fails, so they alone do not say
    that it finished)."""
    chosen = model_dir / f"model-{model}"
    done = model_dir / "trained"
    if done.exists():
        return chosen
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
    done.write_text(" ".join(cmd) + "\n")
    return chosen


def span_f1(docs: Sequence[Doc], gold: Sequence[Doc], keys: Iterable[str]
            ) -> Dict[str, Optional[float]]:
    """The F1 of each span group of `keys` that the annotated docs have,
    against the gold (the project's span scorer, spaCy's spancat one; a doc
    without the group has it empty, on either side): what a first-stage
    span labeller got right on the parts it never saw. None where neither
    side has a span."""
    examples = [Example(doc, ref) for doc, ref in zip(docs, gold)]
    return {key: score_chunks(examples, spans_key=key, has_annotation=lambda doc: True)[
                f"spans_{key}_f"]
            for key in sorted(set(keys)) if any(key in doc.spans for doc in docs)}


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
              code: Optional[Path] = None, progress: Optional[TextIO] = None,
              model: str = "best") -> Dict[str, Any]:
    """Write OUTPUT (see the module docstring); returns the held-out tag
    accuracy per fold and overall where the gold has tags, and the F1 of
    each span group of the gold that the output has (e.g. "ner_stage1_f";
    their keys in "span_keys").
    progress: a line per fold as it is trained (or reused) and as it tags
    its part. model: annotate with each fold's model-best or model-last."""
    if model not in MODELS:
        raise ValueError(f"jackknife: model must be one of {MODELS}, got {model!r}")
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
    # the folds train from this copy: an edit of CONFIG meanwhile changes none
    fold_config = work / "config.cfg"
    if not fold_config.exists():
        fold_config.write_bytes(Path(config).read_bytes())
    rests = []
    for k, fold in enumerate(bounds):
        rest = work / f"rest{k}.spacy"
        if not rest.exists():
            DocBin(docs=gold[:fold.start] + gold[fold.stop:], store_user_data=True).to_disk(rest)
        rests.append(rest)
    def trained(k: int) -> Path:
        start = time.perf_counter()
        reused = (work / f"fold{k}" / "trained").exists()
        path = train_fold(fold_config, rests[k], work / f"fold{k}", list(overrides), code, model)
        say(f"fold {k + 1}/{folds} " + ("reused" if reused else
            f"trained in {time.perf_counter() - start:.0f} s (log: {work / f'fold{k}.log'})"))
        return path

    say(f"{len(gold)} docs in {folds} folds, {max(jobs, 1)} trained at once, in {work}")
    with ThreadPoolExecutor(max_workers=max(jobs, 1)) as pool:
        models = list(pool.map(trained, range(folds)))
    annotated: List[Doc] = []
    report: Dict[str, Any] = {}
    right = total = 0
    keys = {key for doc in gold for key in doc.spans}
    for k, (fold, path) in enumerate(zip(bounds, models)):
        nlp = spacy.load(path)
        docs = annotate_fold(nlp, gold[fold.start:fold.stop])
        annotated.extend(docs)
        for key, f in span_f1(docs, gold[fold.start:fold.stop], keys).items():
            report[f"fold{k}_{key}_f"] = f
            say(f"fold {k + 1}/{folds} labelled its {len(docs)} docs: held-out "
                f"doc.spans[{key!r}] F1 {100 * (f or 0):.2f}")
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
    pooled = span_f1(annotated, gold, keys)
    report.update({f"{key}_f": f for key, f in pooled.items()})
    report["span_keys"] = sorted(pooled)
    DocBin(docs=annotated, store_user_data=True).to_disk(output)
    output.with_suffix(".json").write_text(json.dumps(
        {"config": str(config), "train": str(train), "folds": folds, "overrides": list(overrides),
         "model": f"model-{model}", **report}, indent=2) + "\n")
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
    ap.add_argument("--model", choices=MODELS, default="best",
                    help="annotate with each fold's model-best (default) or model-last (no dev "
                         "split: a fixed number of epochs)")
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
                       progress=sys.stderr, model=args.model)
    summary = f", held-out tag accuracy {100 * report['tag_acc']:.2f}" if "tag_acc" in report else ""
    summary += "".join(f", held-out doc.spans[{key!r}] F1 {100 * (report[key + '_f'] or 0):.2f}"
                       for key in report.get("span_keys", ()))
    print(f"jackknifed {args.train} in {args.folds} folds -> {args.output}{summary}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
