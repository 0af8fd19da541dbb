"""Time and peak memory per 1k tokens of every component on ONE long doc of
1k, 10k and 100k tokens: bounded per-token cost means flat rows.

    python benchmarks/scale_bench.py [NAME=MODEL_DIR ...] [--data ../shared/data]
        [--sizes 1000 10000 100000] [--components lookahead_tagger ...]
        [--train-sentences 1000] [--epochs 3] [--workdir DIR] [--sentences]
        [--timeout 600] [--memory-limit-mb MB] [--min-seconds 1.0] [--quick]
        [--output metrics/scale.json]

Models: trained pipelines given as NAME=MODEL_DIR (every one of the six
components found in a pipeline is measured), or, with none given, a small
model per component that the script trains itself (the component's default
settings, `nlp.initialize` + `nlp.update` over the first --train-sentences
training sentences for --epochs epochs, one subprocess each) and saves under
--workdir (a temporary directory by default; a model already there is reused,
so empty the directory after changing the components or their defaults):

    component            data (under --data)        inputs set from the gold
    lookahead_tagger     ud_ewt/ (CoNLL-U)          words
    arc_standard_parser  ud_ewt/ (CoNLL-U)          words, token.tag_
    lookahead_chunker    conll2000/                 words, token.tag_
    fr_chunker           conll2000/                 words, token.tag_
    lookahead_ner        jnlpba/                    words
    fr_clause_finder     wsj_clauses/               words, token.tag_, doc.spans["chunks"]

Docs: for each size, ONE Doc made by concatenating the sentences of the
component's test set (cycling through it again if it is shorter than the
size) and cutting it at exactly `size` tokens, with NO sentence boundaries
(the worst case: nothing to split the work on). --sentences sets the gold
sentence starts instead (and makes the parser respect them).

Measurement: each (component, size) runs in a fresh subprocess, which loads
the model, builds the doc and calls the component (`nlp.get_pipe(name)(doc)`,
i.e. predict + set_annotations) on fresh copies of it, until at least
--min-seconds have been measured (one call if it alone takes longer; copying
the doc is not timed). Peak memory is that of the first call: the process's
peak RSS after the call minus its RSS just before it (/proc/self/statm). The
peak is read as VmHWM after resetting it just before the call (writing 5 to
/proc/self/clear_refs): ru_maxrss cannot be reset, includes the process's
earlier peaks (reading the data) and, in a child, even the parent's peak
inherited through exec. ru_maxrss minus RSS before is recorded beside it
(`ru_maxrss_delta_mb`) and used when the reset is not permitted.

Each row gives tokens/s, seconds per 1k tokens, peak MB per 1k tokens, and
their ratios to the smallest size's row ("flat" = ratios near 1), plus a
check of the output against the gold (tag accuracy, UAS, span F1), so a fast
row that does nothing shows; the same check on the same sentences given as
separate docs (at most one pass over the test set) sits beside it, so a
component that gets worse on one long doc shows too. A subprocess that runs
longer than --timeout seconds is killed and recorded as "timeout"; one that
fails (e.g. over --memory-limit-mb of address space) as "error"; the larger
sizes of that component are then not run. A progress line is printed per
setting.
"""
import argparse
import configparser
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from speed import machine_info  # noqa: E402  (the speed harness's machine record)

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = ROOT.parent / "shared" / "data"
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
               "BLIS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")

# component factory -> (data set, inputs the doc carries)
COMPONENTS = {
    "lookahead_tagger": ("ewt", "words"),
    "arc_standard_parser": ("ewt", "words + tags"),
    "lookahead_chunker": ("conll2000", "words + tags"),
    "fr_chunker": ("conll2000", "words + tags"),
    "lookahead_ner": ("jnlpba", "words"),
    "fr_clause_finder": ("wsj_clauses", "words + tags + chunks"),
}
FILES = {
    "ewt": "ud_ewt/en_ewt-ud-{split}.conllu",
    "conll2000": "conll2000/{split}.txt",
    "jnlpba": "jnlpba/{split}.iob2",
    "wsj_clauses": "wsj_clauses/{split}.txt",
}


# ------------------------------------------------------------------ data --
def read_examples(dataset: str, data: Path, split: str, vocab, limit: int = 0):
    """Examples of a split, one sentence each: words only (plus the inputs the
    file gives: tags, chunks) on the predicted doc, gold on the reference."""
    from spacy.tokens import Doc
    from spacy.training import Example

    path = data / FILES[dataset].format(split=split)
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found: give the data directory with --data")
    if dataset == "ewt":
        from spacy.training.converters import conllu_to_docs
        out = []
        for doc in conllu_to_docs(path.read_text(encoding="utf8"), n_sents=1, no_print=True):
            doc = Doc(vocab).from_bytes(doc.to_bytes())  # into this vocab
            words = Doc(vocab, words=[t.text for t in doc], spaces=[bool(t.whitespace_) for t in doc])
            out.append(Example(words, doc))
            if limit and len(out) >= limit:
                break
        return out
    from spacy_lookahead.readers.clauses import ClauseCorpus
    from spacy_lookahead.readers.columns import ColumnCorpus
    if dataset == "wsj_clauses":
        corpus = ClauseCorpus(path, limit=limit)
    elif dataset == "conll2000":
        corpus = ColumnCorpus(path, ["word", "pos", "chunk"], "chunk", limit=limit)
    else:
        corpus = ColumnCorpus(path, ["word", "ent"], "ent", limit=limit)
    return [eg for i, eg in enumerate(corpus.read(vocab)) if not limit or i < limit]


def sentence_rows(factory: str, examples):
    """(words, spaces, tags, chunks, gold) per sentence; gold is what the
    component predicts: tags, heads (sentence offsets) or (start, end, label)."""
    rows = []
    for eg in examples:
        ref = eg.reference
        words = [t.text for t in ref]
        spaces = [bool(t.whitespace_) for t in ref]
        spaces[-1] = True  # sentences are joined with a space
        tags = [t.tag_ for t in ref]
        chunks = [(s.start, s.end, s.label_) for s in ref.spans["chunks"]] if "chunks" in ref.spans else []
        if factory == "lookahead_tagger":
            gold = tags
        elif factory == "arc_standard_parser":
            gold = [t.head.i for t in ref]
        elif factory == "lookahead_ner":
            gold = [(s.start, s.end, s.label_) for s in ref.ents]
        elif factory == "fr_clause_finder":
            gold = [(s.start, s.end, s.label_) for s in ref.spans["clauses"]]
        else:  # the chunkers
            gold = chunks
        rows.append((words, spaces, tags, chunks, gold))
    return rows


def build_doc(vocab, factory: str, rows, size: int, sentences: bool):
    """One doc of exactly `size` tokens from the sentences in order (cycling),
    with the inputs the component needs; and its gold, cut alike."""
    from spacy.tokens import Doc, Span

    words, spaces, tags, starts, chunks, gold = [], [], [], [], [], []
    n_sents, i = 0, 0
    while len(words) < size:
        w, sp, tg, ch, gd = rows[i % len(rows)]
        off = len(words)
        words += w
        spaces += sp
        tags += tg
        starts += [True] + [False] * (len(w) - 1)
        chunks += [(s + off, e + off, label) for s, e, label in ch]
        if factory in ("lookahead_tagger", "arc_standard_parser"):
            gold += [g + off for g in gd] if factory == "arc_standard_parser" else gd
        else:
            gold += [(s + off, e + off, label) for s, e, label in gd]
        n_sents += 1
        i += 1
    del words[size:], spaces[size:], tags[size:], starts[size:]
    needs_tags = COMPONENTS[factory][1] != "words"
    doc = Doc(vocab, words=words, spaces=spaces, tags=tags if needs_tags else None,
              sent_starts=starts if sentences else None)
    if factory == "fr_clause_finder":
        doc.spans["chunks"] = [Span(doc, s, e, label) for s, e, label in chunks if e <= size]
    if factory in ("lookahead_tagger", "arc_standard_parser"):
        gold = gold[:size]
    else:
        gold = [g for g in gold if g[1] <= size]
    return doc, gold, {"sentences": n_sents, "test_set_passes": round(n_sents / len(rows), 2)}


# ------------------------------------------------------------- training --
def train_worker(factory: str, data: Path, n_sentences: int, epochs: int, out: Path) -> dict:
    import spacy
    from spacy.tokens import Doc
    from spacy.training import Example

    nlp = spacy.blank("en")
    config = {"min_label_freq": 1} if factory == "arc_standard_parser" else {}
    nlp.add_pipe(factory, config=config)
    examples = read_examples(COMPONENTS[factory][0], data, "train", nlp.vocab, n_sentences)
    if factory == "arc_standard_parser":
        # several sentences per doc, so that it learns to leave several roots
        # (as tests/test_parser.py trains it)
        golds = [eg.reference for eg in examples]
        examples = []
        for i in range(0, len(golds), 4):
            ref = Doc.from_docs(golds[i:i + 4])
            examples.append(Example(Doc(nlp.vocab, words=[t.text for t in ref],
                                        spaces=[bool(t.whitespace_) for t in ref]), ref))
    start = time.perf_counter()
    nlp.initialize(lambda: examples)
    rng = random.Random(0)
    for _ in range(epochs):
        examples = examples[:]
        rng.shuffle(examples)
        for i in range(0, len(examples), 32):
            nlp.update(examples[i:i + 32])
    seconds = time.perf_counter() - start
    nlp.to_disk(out)
    return {"factory": factory, "train_sentences": n_sentences, "epochs": epochs,
            "train_seconds": round(seconds, 1), "config": dict(nlp.config["components"][factory])}


# -------------------------------------------------------------- measure --
def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2 ** 20


def reset_peak() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")  # resets VmHWM (the peak RSS) to the current RSS
        return True
    except OSError:
        return False


def trim_heap() -> bool:
    """Give the C heap's free memory back to the system (glibc), so that the
    call's allocations raise the RSS instead of reusing what reading the
    data freed (which would hide them)."""
    try:
        import ctypes
        return bool(ctypes.CDLL("libc.so.6").malloc_trim(0) or True)
    except (OSError, AttributeError):
        return False


def hwm_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    raise OSError("no VmHWM in /proc/self/status")


def ru_maxrss_mb() -> float:
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def f1(pred, gold) -> float:
    pred, gold = set(pred), set(gold)
    tp = len(pred & gold)
    return round(2 * tp / (len(pred) + len(gold)), 4) if pred or gold else 1.0


def check_docs(factory: str, pipe, docs, golds) -> dict:
    """The output against the gold: so that a row which is fast because it
    wrote nothing, or which degrades on long docs, shows."""
    if factory == "lookahead_tagger":
        pairs = [(t.tag_, g) for doc, gold in zip(docs, golds) for t, g in zip(doc, gold)]
        return {"tag_acc": round(sum(p == g for p, g in pairs) / len(pairs), 4)}
    if factory == "arc_standard_parser":
        pairs = [(t.head.i, g) for doc, gold in zip(docs, golds) for t, g in zip(doc, gold)
                 if g < len(doc)]
        return {"uas": round(sum(h == g for h, g in pairs) / len(pairs), 4),
                "sentences_out": sum(1 for doc in docs for _ in doc.sents)}
    if factory == "lookahead_ner":
        spans = [[(s.start, s.end, s.label_) for s in doc.ents] for doc in docs]
    else:
        key = getattr(pipe, "cfg", {}).get("spans_key") or (
            "clauses" if factory == "fr_clause_finder" else "chunks")
        spans = [[(s.start, s.end, s.label_) for s in doc.spans[key]] if key in doc.spans else []
                 for doc in docs]
    pred = {(i, *s) for i, ss in enumerate(spans) for s in ss}
    gold = {(i, *g) for i, gs in enumerate(golds) for g in gs}
    name = {"lookahead_ner": "ents"}.get(factory) or (
        "clauses" if factory == "fr_clause_finder" else "chunks")
    return {f"{name}_f": f1(pred, gold), "spans_out": len(pred), "spans_gold": len(gold)}


def limit_memory(mb: int) -> None:
    """Cap the address space, so that a component whose memory blows up on a
    long doc fails with MemoryError instead of taking the machine down."""
    if mb > 0:
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (mb * 2 ** 20, mb * 2 ** 20))


def default_memory_limit_mb() -> int:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) // 1024 // 2
    except OSError:
        pass
    return 0


def measure_worker(factory: str, name: str, model: str, data: Path, size: int, sentences: bool,
                   min_seconds: float, memory_limit_mb: int = 0) -> dict:
    import gc

    limit_memory(memory_limit_mb)
    import spacy

    t0 = time.perf_counter()
    nlp = spacy.load(model)
    load_seconds = time.perf_counter() - t0
    pipe = nlp.get_pipe(name)
    if sentences and factory == "arc_standard_parser":
        pipe.cfg["respect_sent_starts"] = True
    rows = sentence_rows(factory, read_examples(COMPONENTS[factory][0], data, "test", nlp.vocab))
    t0 = time.perf_counter()
    doc, gold, made_of = build_doc(nlp.vocab, factory, rows, size, sentences)
    build_seconds = time.perf_counter() - t0
    warm, _, _ = build_doc(nlp.vocab, factory, rows, min(size, 200), sentences)
    pipe(warm)  # first-call costs (lazy tables) are not the doc's
    del warm

    # the same check on the same sentences as separate docs (at most one pass
    # over the test set): what the component gives when it is not asked to
    # handle one long doc
    sent_rows, n_sent_tokens = [], 0
    for r in rows:
        if n_sent_tokens >= size:
            break
        sent_rows.append(r)
        n_sent_tokens += len(r[0])
    sent_docs = [build_doc(nlp.vocab, factory, [r], len(r[0]), sentences) for r in sent_rows]
    for d, _, _ in sent_docs:
        pipe(d)
    sent_golds = [g for _, g, _ in sent_docs]
    check_sentence_docs = check_docs(factory, pipe, [d for d, _, _ in sent_docs], sent_golds)
    del sent_docs, sent_rows

    first = doc.copy()
    gc.collect()
    trimmed = trim_heap()
    rss_before = rss_mb()
    reset = reset_peak()
    t0 = time.perf_counter()
    pipe(first)
    seconds = [time.perf_counter() - t0]
    peak_after = hwm_mb() if reset else ru_maxrss_mb()
    ru_delta = ru_maxrss_mb() - rss_before
    result_check = check_docs(factory, pipe, [first], [gold])
    del first
    while sum(seconds) < min_seconds:
        fresh = doc.copy()
        t0 = time.perf_counter()
        pipe(fresh)
        seconds.append(time.perf_counter() - t0)
        del fresh
    mean = sum(seconds) / len(seconds)
    peak = max(0.0, peak_after - rss_before)
    n = len(doc)
    return {
        "status": "ok", "factory": factory, "pipe": name, "model": model, "tokens": n,
        **made_of, "sentence_starts": sentences,
        "calls": len(seconds), "seconds_first_call": round(seconds[0], 4),
        "seconds_mean": round(mean, 5), "seconds_min": round(min(seconds), 5),
        "tokens_per_second": round(n / mean, 1),
        "seconds_per_1k": round(mean / (n / 1000), 6),
        "rss_before_mb": round(rss_before, 1),
        "peak_mb": round(peak, 2),
        "peak_mb_per_1k": round(peak / (n / 1000), 4),
        "peak_method": ("VmHWM after clear_refs reset" if reset else "ru_maxrss (no reset)")
                       + (", heap trimmed before" if trimmed else ""),
        "ru_maxrss_delta_mb": round(ru_delta, 2),
        "load_seconds": round(load_seconds, 2), "build_doc_seconds": round(build_seconds, 2),
        "check": result_check,
        "extensions_built": code_state()["newest_extension_built"],
        "check_sentence_docs": {"tokens": n_sent_tokens, "sentences": len(sent_golds),
                                **check_sentence_docs},
        "memory_limit_mb": memory_limit_mb or None,
        "spacy": spacy.__version__,
    }


# --------------------------------------------------------------- parent --
def pipeline_components(model: Path) -> dict:
    """pipe name -> factory for the six components of a saved pipeline (read
    from config.cfg without importing spaCy: the parent stays small)."""
    cfg = configparser.ConfigParser(interpolation=None)
    cfg.read(model / "config.cfg", encoding="utf8")
    pipeline = json.loads(cfg.get("nlp", "pipeline", fallback="[]"))
    out = {}
    for name in pipeline:
        section = f"components.{name}"
        if cfg.has_option(section, "factory"):
            factory = json.loads(cfg.get(section, "factory"))
            if factory in COMPONENTS:
                out[name] = factory
    return out


def run_child(args_list, timeout, env):
    """Run a worker; (status, result or message)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "result.json"
        cmd = [sys.executable, str(Path(__file__).resolve()), *args_list, "--result", str(out)]
        start = time.perf_counter()
        try:
            proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return "timeout", {"status": "timeout", "timeout_seconds": timeout}
        wall = round(time.perf_counter() - start, 1)
        if proc.returncode != 0 or not out.exists():
            tail = (proc.stderr or "").strip().splitlines()[-1:] or [f"exit code {proc.returncode}"]
            return "error", {"status": "error", "error": tail[0][:300],
                             "stderr_tail": (proc.stderr or "")[-2000:], "wall_seconds": wall}
        result = json.loads(out.read_text())
        result["wall_seconds"] = wall
        return "ok", result


def fmt(v, spec):
    return "-" if v is None else format(v, spec)


def print_table(rows):
    head = ("component", "tokens", "status", "tokens/s", "s/1k tok", "peak MB", "MB/1k tok",
            "time x", "mem x", "score (sentence docs)")
    lines = [head]
    for r in rows:
        if r.get("status") != "ok":
            lines.append((r["row"], f"{r['size']:,}", r.get("status", "?"), "", "", "", "", "", "",
                          (r.get("error") or r.get("reason") or "")[:60]))
            continue
        key = next(iter(r["check"]))  # the score: long doc (the same sentences as docs)
        chk = f"{key} {r['check'][key]} ({r['check_sentence_docs'].get(key)})"
        lines.append((r["row"], f"{r['tokens']:,}", "ok", f"{r['tokens_per_second']:,.0f}",
                      f"{r['seconds_per_1k']:.4f}", f"{r['peak_mb']:.1f}",
                      f"{r['peak_mb_per_1k']:.3f}", fmt(r.get("time_ratio"), ".2f"),
                      fmt(r.get("memory_ratio"), ".2f"), chk))
    widths = [max(len(str(line[i])) for line in lines) for i in range(len(head))]
    for line in lines:
        print("  ".join(str(c).ljust(w) for c, w in zip(line, widths)).rstrip(), flush=True)


def code_state() -> dict:
    """The commit and the uncommitted changes of the package measured."""
    def git(*cmd):
        try:
            return subprocess.run(["git", "-C", str(ROOT), *cmd], capture_output=True, text=True,
                                  timeout=30).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return None
    changed = git("status", "--porcelain", "--", "src/spacy_lookahead")
    built = [p.stat().st_mtime for p in (ROOT / "src" / "spacy_lookahead").rglob("*.so")]
    return {"commit": git("rev-parse", "HEAD"),
            "uncommitted_package_files": changed.splitlines() if changed else [],
            "newest_extension_built": (datetime.fromtimestamp(max(built), timezone.utc)
                                       .isoformat(timespec="seconds") if built else None)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("models", nargs="*", help="NAME=MODEL_DIR of trained pipelines (default: train "
                                              "a small model per component)")
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA,
                    help="directory laid out like shared/data (ud_ewt/, conll2000/, jnlpba/, "
                         "wsj_clauses/); the project's assets/ is")
    ap.add_argument("--sizes", type=int, nargs="+", default=None,
                    help="tokens per doc (default 1000 10000 100000; --quick: 1000 10000)")
    ap.add_argument("--components", nargs="+", choices=list(COMPONENTS), default=list(COMPONENTS),
                    help="the components to train and measure (default: all six)")
    ap.add_argument("--train-sentences", type=int, default=None,
                    help="training sentences per self-trained model (default 1000; --quick: 300)")
    ap.add_argument("--epochs", type=int, default=None, help="default 3; --quick: 2")
    ap.add_argument("--workdir", type=Path, default=None,
                    help="where the self-trained models go (reused if present; default: a "
                         "temporary directory, removed at the end)")
    ap.add_argument("--sentences", action="store_true",
                    help="set the gold sentence starts on the docs (default: none, the worst case)")
    ap.add_argument("--timeout", type=float, default=600,
                    help="seconds per (component, size) subprocess; killed and recorded as timeout")
    ap.add_argument("--memory-limit-mb", type=int, default=None,
                    help="address-space cap of each measuring subprocess (default: half the "
                         "machine's RAM; 0: none); going over it is recorded as an error")
    ap.add_argument("--train-timeout", type=float, default=1800, help="seconds per training subprocess")
    ap.add_argument("--min-seconds", type=float, default=1.0,
                    help="call the component on fresh copies of the doc until this much is timed")
    ap.add_argument("--quick", action="store_true", help="sizes 1000 10000, smaller training")
    ap.add_argument("--output", type=Path, default=Path("metrics/scale.json"))
    ap.add_argument("--train-worker", nargs=2, metavar=("FACTORY", "OUT"), help=argparse.SUPPRESS)
    ap.add_argument("--measure-worker", nargs=5, metavar=("FACTORY", "NAME", "MODEL", "SIZE", "SENTS"),
                    help=argparse.SUPPRESS)
    ap.add_argument("--result", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    sizes = args.sizes or ([1000, 10000] if args.quick else [1000, 10000, 100000])
    n_train = args.train_sentences or (300 if args.quick else 1000)
    epochs = args.epochs or (2 if args.quick else 3)
    data = args.data.resolve()

    if args.train_worker:
        factory, out = args.train_worker
        args.result.write_text(json.dumps(train_worker(factory, data, n_train, epochs, Path(out))))
        return 0
    if args.measure_worker:
        factory, name, model, size, sents = args.measure_worker
        args.result.write_text(json.dumps(measure_worker(factory, name, model, data, int(size),
                                                         sents == "1", args.min_seconds,
                                                         args.memory_limit_mb or 0)))
        return 0

    memory_limit = default_memory_limit_mb() if args.memory_limit_mb is None else args.memory_limit_mb
    if not data.is_dir():
        sys.exit(f"scale_bench.py: data directory not found: {data} (give --data)")
    env = dict(os.environ)
    for var in THREAD_VARS:
        env.setdefault(var, "1")
    sys.path.insert(0, str(ROOT))

    # (row name, factory, pipe name, model dir)
    targets, training = [], {}
    workdir, made_tmp = args.workdir, False
    if args.models:
        for spec in args.models:
            name, sep, model = spec.partition("=")
            if not sep:
                name, model = Path(spec).name, spec
            model = Path(model)
            if not (model / "config.cfg").exists():
                sys.exit(f"scale_bench.py: no trained pipeline at {model}")
            found = {p: f for p, f in pipeline_components(model).items() if f in args.components}
            if not found:
                print(f"scale_bench.py: {name}: none of {args.components} in {model}", file=sys.stderr)
            for pipe, factory in found.items():
                row = name if len(found) == 1 else f"{name}:{pipe}"
                targets.append((row, factory, pipe, str(model.resolve())))
    else:
        if workdir is None:
            workdir, made_tmp = Path(tempfile.mkdtemp(prefix="scale_bench_")), True
        workdir.mkdir(parents=True, exist_ok=True)
        for i, factory in enumerate(args.components, 1):
            model = workdir / factory
            if (model / "config.cfg").exists():
                print(f"scale_bench.py train [{i}/{len(args.components)}] {factory}: reusing {model}",
                      flush=True)
                training[factory] = {"reused": str(model)}
            else:
                print(f"scale_bench.py train [{i}/{len(args.components)}] {factory}: {n_train} "
                      f"{COMPONENTS[factory][0]} sentences x {epochs} epochs ...", flush=True)
                status, res = run_child(["--train-worker", factory, str(model), "--data", str(data),
                                         "--train-sentences", str(n_train), "--epochs", str(epochs)],
                                        args.train_timeout, env)
                training[factory] = res
                if status != "ok":
                    print(f"  training failed ({status}): {res.get('error', '')}", flush=True)
                    continue
                print(f"  trained in {res['train_seconds']} s", flush=True)
            targets.append((factory, factory, factory, str(model)))

    rows = []
    n_settings = len(targets) * len(sizes)
    k = 0
    for row_name, factory, pipe, model in targets:
        given_up = None
        for size in sorted(sizes):
            k += 1
            prefix = f"scale_bench.py [{k}/{n_settings}] {row_name} {size:,} tokens"
            if given_up:
                rows.append({"row": row_name, "factory": factory, "size": size,
                             "status": "not run", "reason": given_up})
                print(f"{prefix}: not run ({given_up})", flush=True)
                continue
            print(f"{prefix} ...", flush=True)
            status, res = run_child(["--measure-worker", factory, pipe, model, str(size),
                                     "1" if args.sentences else "0", "--data", str(data),
                                     "--min-seconds", str(args.min_seconds),
                                     "--memory-limit-mb", str(memory_limit)], args.timeout, env)
            res.update({"row": row_name, "factory": factory, "size": size})
            rows.append(res)
            if status == "ok":
                print(f"  {res['tokens_per_second']:,.0f} tokens/s, {res['seconds_per_1k']:.4f} s/1k, "
                      f"peak {res['peak_mb']:.1f} MB ({res['peak_mb_per_1k']:.3f} MB/1k), "
                      f"{res['calls']} call(s); {res['check']}", flush=True)
            elif status == "timeout":
                given_up = f"timed out at {size:,} tokens"
                print(f"  timeout after {args.timeout:.0f} s", flush=True)
            else:
                given_up = f"error at {size:,} tokens"
                print(f"  error: {res['error']}", flush=True)
        base = next((r for r in rows if r["row"] == row_name and r.get("status") == "ok"), None)
        for r in rows:
            if r["row"] == row_name and r.get("status") == "ok" and base:
                r["ratio_base_tokens"] = base["tokens"]
                r["time_ratio"] = round(r["seconds_per_1k"] / base["seconds_per_1k"], 3)
                # below ~0.1 MB the base's peak is page/arena noise: no ratio
                r["memory_ratio"] = (round(r["peak_mb_per_1k"] / base["peak_mb_per_1k"], 3)
                                     if base["peak_mb"] >= 0.1 else None)

    print()
    print_table(rows)
    report = {
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "machine": machine_info(), "code": code_state(), "threads": {v: env[v] for v in THREAD_VARS},
        "data": str(data), "sizes": sorted(sizes), "sentence_starts": args.sentences,
        "min_seconds": args.min_seconds, "timeout_seconds": args.timeout,
        "memory_limit_mb": memory_limit or None,
        "models": "given" if args.models else "self-trained",
        "training": training if not args.models else None,
        "train_sentences": None if args.models else n_train, "epochs": None if args.models else epochs,
        "rows": rows,
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(report, indent=2) + "\n")
    print(f"scale_bench.py: wrote {args.output}", file=sys.stderr)
    if made_tmp:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
