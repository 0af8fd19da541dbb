"""Time and peak memory per 1k tokens of every component on ONE long doc of
1k, 10k and 100k tokens: a bounded cost per token gives flat rows.

    python -m benchmarks.scale_bench [--data ../shared/data] [--sizes 1000 10000 100000]
        [--components lookahead_tagger ...] [--train-sentences 1000] [--epochs 3] [--workdir DIR]
        [--timeout 600] [--memory-limit-mb MB] [--min-seconds 1.0] [--output metrics/scale.json]

A small model per component (default settings, trained here on the first
--train-sentences of --data's training set); per size one doc of the test
sentences joined and cut at `size` tokens, without sentence boundaries
(the worst case), with the task's inputs (benchmarks/gold.py). Each
(component, size) in a fresh process calls the component on copies of the
doc until --min-seconds are timed; peak memory is the first call's peak RSS
(VmHWM, reset before it; else ru_maxrss) minus the RSS before. Ratios to
the smallest size, and gold.py's check of the long doc beside that of its
sentences as separate docs. Over --timeout, or an error (e.g. over
--memory-limit-mb of address space): the component's larger sizes are not run."""
import argparse
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

from benchmarks import gold as G
from benchmarks.harness import isolated, one_thread, peak_rss_mb, stamp

ROOT = Path(__file__).resolve().parents[1]
# component factory -> (data set, gold.py's task: the doc's inputs and the check)
COMPONENTS = {"lookahead_tagger": ("ewt", "tag"), "arc_standard_parser": ("ewt", "parse"),
              "lookahead_chunker": ("conll2000", "chunk"), "fr_chunker": ("conll2000", "chunk"),
              "lookahead_ner": ("jnlpba", "ner"), "fr_clause_finder": ("wsj_clauses", "clauses")}
FILES = {"ewt": "ud_ewt/en_ewt-ud-{split}.conllu", "conll2000": "conll2000/{split}.txt",
         "jnlpba": "jnlpba/{split}.iob2", "wsj_clauses": "wsj_clauses/{split}.txt"}


def sentences_of(factory: str, data: Path, split: str, vocab, limit: int = 0):
    dataset, task = COMPONENTS[factory]
    path = data / FILES[dataset].format(split=split)
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found: give the data directory with --data")
    return G.read_gold(path, limit=limit, vocab=vocab, task=task), task


def model_input(vocab, gold, task: str):
    """What the component reads: the gold doc's inputs for its task (no sentence starts)."""
    return G.make_doc(vocab, G.inputs_of(gold, task))


def long_gold(sents, size: int):
    """One gold doc of exactly `size` tokens from the sentences in order (cycling)."""
    from spacy.tokens import Doc, Span
    chosen, n = [], 0
    while n < size:
        chosen.append(sents[len(chosen) % len(sents)])
        n += len(chosen[-1])
    whole = Doc.from_docs(chosen)
    doc = whole[:size].as_doc()  # (drops the entities across the cut, and the span groups)
    for key, group in whole.spans.items():
        doc.spans[key] = [Span(doc, s.start, s.end, label=s.label_) for s in group if s.end <= size]
    return doc, {"sentences": len(chosen), "test_set_passes": round(len(chosen) / len(sents), 2)}


def train(factory: str, data: Path, n_sentences: int, epochs: int, out: str) -> dict:
    import spacy
    from spacy.tokens import Doc
    from spacy.training import Example

    nlp = spacy.blank("en")
    nlp.add_pipe(factory, config={"min_label_freq": 1} if factory == "arc_standard_parser" else {})
    golds, task = sentences_of(factory, data, "train", nlp.vocab, n_sentences)
    if factory == "arc_standard_parser":  # 4 sentences a doc: it learns to leave several roots
        golds = [Doc.from_docs(golds[i:i + 4]) for i in range(0, len(golds), 4)]
    examples = [Example(model_input(nlp.vocab, g, task), g) for g in golds]
    start = time.perf_counter()
    nlp.initialize(lambda: examples)
    rng = random.Random(0)
    for _ in range(epochs):
        rng.shuffle(examples)
        for i in range(0, len(examples), 32):
            nlp.update(examples[i:i + 32])
    seconds = time.perf_counter() - start
    nlp.to_disk(out)
    return {"factory": factory, "train_sentences": n_sentences, "epochs": epochs,
            "train_seconds": round(seconds, 1), "config": dict(nlp.config["components"][factory])}


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
    """The C heap's free memory back to the system (glibc), so that the
    call's allocations raise the RSS instead of reusing what reading the
    data freed (which would hide them)."""
    try:
        import ctypes
        ctypes.CDLL("libc.so.6").malloc_trim(0)
        return True
    except (OSError, AttributeError):
        return False


def hwm_mb() -> float:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) / 1024 for line in f if line.startswith("VmHWM:"))


def measure(factory: str, model: str, data: Path, size: int, min_seconds: float, memory_limit_mb: int) -> dict:
    import gc

    if memory_limit_mb > 0:  # a component whose memory blows up fails instead of the machine
        resource.setrlimit(resource.RLIMIT_AS, (memory_limit_mb * 2 ** 20, memory_limit_mb * 2 ** 20))
    import spacy

    t0 = time.perf_counter()
    nlp = spacy.load(model)
    load_seconds = time.perf_counter() - t0
    pipe = nlp.get_pipe(factory)
    sents, task = sentences_of(factory, data, "test", nlp.vocab)
    t0 = time.perf_counter()
    gold, made_of = long_gold(sents, size)
    doc = model_input(nlp.vocab, gold, task)
    build_seconds = time.perf_counter() - t0
    pipe(model_input(nlp.vocab, long_gold(sents, min(size, 200))[0], task))  # first-call costs
    # the same check on the same sentences as separate docs (at most one pass
    # over the test set): what the component gives when not handed one long doc
    sent_golds = []
    for s in sents:
        if sum(len(g) for g in sent_golds) >= size:
            break
        sent_golds.append(s)
    sent_check = G.check([pipe(model_input(nlp.vocab, s, task)) for s in sent_golds], sent_golds, task)
    first = doc.copy()
    gc.collect()
    trimmed, rss_before, reset = trim_heap(), rss_mb(), reset_peak()
    t0 = time.perf_counter()
    pipe(first)
    seconds = [time.perf_counter() - t0]
    peak_after = hwm_mb() if reset else peak_rss_mb()
    ru_delta = peak_rss_mb() - rss_before
    check = G.check([first], [gold], task)
    del first
    while sum(seconds) < min_seconds:
        fresh = doc.copy()
        t0 = time.perf_counter()
        pipe(fresh)
        seconds.append(time.perf_counter() - t0)
        del fresh
    mean, peak, n = sum(seconds) / len(seconds), max(0.0, peak_after - rss_before), len(doc)
    return {"status": "ok", "factory": factory, "pipe": factory, "model": model, "tokens": n, **made_of,
            "sentence_starts": False, "calls": len(seconds), "seconds_first_call": round(seconds[0], 4),
            "seconds_mean": round(mean, 5), "seconds_min": round(min(seconds), 5),
            "tokens_per_second": round(n / mean, 1), "seconds_per_1k": round(mean / (n / 1000), 6),
            "rss_before_mb": round(rss_before, 1), "peak_mb": round(peak, 2),
            "peak_mb_per_1k": round(peak / (n / 1000), 4),
            "peak_method": ("VmHWM after clear_refs reset" if reset else "ru_maxrss (no reset)")
                           + (", heap trimmed before" if trimmed else ""),
            "ru_maxrss_delta_mb": round(ru_delta, 2), "load_seconds": round(load_seconds, 2),
            "build_doc_seconds": round(build_seconds, 2), "check": check,
            "check_sentence_docs": {"tokens": sum(len(g) for g in sent_golds), "sentences": len(sent_golds),
                                    **sent_check},
            "memory_limit_mb": memory_limit_mb or None, "spacy": spacy.__version__}


def run(fn, *args, timeout: float) -> dict:
    """fn's result in a process of its own, with its wall time, or its
    status ("timeout", "error") and why."""
    start = time.perf_counter()
    try:
        result = isolated(fn, *args, timeout=timeout)
    except TimeoutError:
        return {"status": "timeout", "timeout_seconds": timeout}
    except RuntimeError as err:
        return {"status": "error", "error": str(err), "wall_seconds": round(time.perf_counter() - start, 1)}
    return {"status": "ok", **result, "wall_seconds": round(time.perf_counter() - start, 1)}


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
    return {"commit": git("rev-parse", "HEAD"), "uncommitted_package_files": changed.splitlines() if changed else [],
            "newest_extension_built": (datetime.fromtimestamp(max(built), timezone.utc).isoformat(timespec="seconds")
                                       if built else None)}


def print_table(rows) -> None:
    lines = [("component", "tokens", "status", "tokens/s", "s/1k tok", "peak MB", "MB/1k tok", "time x", "mem x",
              "score (sentence docs)")]
    for r in rows:
        if r.get("status") != "ok":
            lines.append((r["row"], f"{r['size']:,}", r.get("status", "?"), *[""] * 6,
                          (r.get("error") or r.get("reason") or "")[:60]))
            continue
        key = next(k for k in r["check"] if k.endswith("_check"))
        lines.append((r["row"], f"{r['tokens']:,}", "ok", f"{r['tokens_per_second']:,.0f}", f"{r['seconds_per_1k']:.4f}",
                      f"{r['peak_mb']:.1f}", f"{r['peak_mb_per_1k']:.3f}",
                      *("-" if r.get(k) is None else f"{r[k]:.2f}" for k in ("time_ratio", "memory_ratio")),
                      f"{key} {r['check'][key]} ({r['check_sentence_docs'].get(key)})"))
    widths = [max(len(str(line[i])) for line in lines) for i in range(len(lines[0]))]
    for line in lines:
        print("  ".join(str(c).ljust(w) for c, w in zip(line, widths)).rstrip(), flush=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data",
                    help="directory laid out like shared/data (the project's assets/ is)")
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000], help="tokens per doc")
    ap.add_argument("--components", nargs="+", choices=list(COMPONENTS), default=list(COMPONENTS))
    ap.add_argument("--train-sentences", type=int, default=1000)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--workdir", type=Path, default=None,
                    help="where the models go (reused if there; default: a temporary directory)")
    ap.add_argument("--timeout", type=float, default=600, help="seconds per (component, size) process")
    ap.add_argument("--memory-limit-mb", type=int, default=None,
                    help="address-space cap of each measuring process (default: half the RAM; 0: none)")
    ap.add_argument("--min-seconds", type=float, default=1.0,
                    help="call the component on fresh copies of the doc until this much is timed")
    ap.add_argument("--output", type=Path, default=Path("metrics/scale.json"))
    args = ap.parse_args(argv)
    data, sizes = args.data.resolve(), sorted(args.sizes)
    if not data.is_dir():
        sys.exit(f"scale_bench.py: data directory not found: {data} (give --data)")
    memory_limit = args.memory_limit_mb
    if memory_limit is None:  # half the machine's RAM
        memory_limit = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2 ** 21
    threads, training, rows = one_thread(), {}, []
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="scale_bench_"))
    for i, factory in enumerate(args.components, 1):
        model = workdir / factory
        print(f"scale_bench.py train [{i}/{len(args.components)}] {factory}", flush=True)
        if (model / "config.cfg").exists():
            training[factory] = {"reused": str(model)}
        else:
            training[factory] = run(train, factory, data, args.train_sentences, args.epochs, str(model),
                                    timeout=3 * args.timeout)
            print(f"  {training[factory]['status']}: {training[factory].get('error', '')}", flush=True)
            if training[factory]["status"] != "ok":
                continue
        given_up, base = None, None
        for size in sizes:
            if given_up:
                rows.append({"row": factory, "factory": factory, "size": size, "status": "not run",
                             "reason": given_up})
                continue
            res = run(measure, factory, str(model), data, size, args.min_seconds, memory_limit,
                      timeout=args.timeout)
            rows.append({**res, "row": factory, "factory": factory, "size": size})
            print(f"  {size:,} tokens: {res['status']} {res.get('error', '')}", flush=True)
            if res["status"] != "ok":
                given_up = f"{'timed out' if res['status'] == 'timeout' else 'error'} at {size:,} tokens"
                continue
            base = base or res
            rows[-1].update({"ratio_base_tokens": base["tokens"],
                             "time_ratio": round(res["seconds_per_1k"] / base["seconds_per_1k"], 3),
                             # below ~0.1 MB the base's peak is page/arena noise: no ratio
                             "memory_ratio": round(res["peak_mb_per_1k"] / base["peak_mb_per_1k"], 3)
                             if base["peak_mb"] >= 0.1 else None})
    print_table(rows)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps({
        **stamp(), "code": code_state(), "threads": threads, "data": str(data), "sizes": sizes,
        "sentence_starts": False,
        "min_seconds": args.min_seconds, "timeout_seconds": args.timeout, "memory_limit_mb": memory_limit or None,
        "models": "self-trained", "training": training, "train_sentences": args.train_sentences,
        "epochs": args.epochs, "rows": rows}, indent=2) + "\n")
    print(f"scale_bench.py: wrote {args.output}", file=sys.stderr)
    if args.workdir is None:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
