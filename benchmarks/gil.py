"""The GIL-held share of each component's pipe() and its thread scaling.

    python -m benchmarks.gil MODEL_DIR [MODEL_DIR ...] [--data ../shared/data] [--split dev]
        [--copies 4] [--min-seconds 1.0] [--threads 1 2] [--repeats 3] [--batch-size 256]
        [--output metrics/gil.json] [--paragraphs 1] [--cold]

For each of this project's components in each pipeline: its task's input
docs (benchmarks/gold.py: gold words, and the gold tags or chunk inputs the
task reads) from --split, --copies times, or as many more times as make one
thread's pass last --min-seconds (a fast component's pass over 4 copies
lasts 0.03-0.2 s, and a thread's start and end, and the machine's noise,
then weigh as much as its search: the tagger's 2 threads gave 1.77x over
4 copies and 1.95x over 40); a component that reads what no
gold doc has (a joint parser's tag_alternatives: the tagger's alternative
tags) gets the gold words through the components before it instead
("inputs": "pipeline"). `pipe.pipe(docs)` alone is timed (the tokenizer
and other components are not), on one thread with the
engine's nogil clock on (core/clock.pyx: every nogil section adds its wall
time), then at each --threads count. The GIL-held share is
1 - nogil seconds / wall seconds on one thread; the serial fraction from the
speed-up S at t threads (Amdahl: S = 1 / (s + (1 - s) / t)) is
s = (t / S - 1) / (t - 1), and 1 / s the ceiling it implies. Where a
speed-up below t goes (the process's CPU time, every thread's): the cores
busy (CPU / (t x wall): below 1, threads waited, as Amdahl's serial part
makes them) and the CPU a token took against one thread's (above 1, each
token cost more, e.g. its inputs read cold on another core than the one
that made them; Amdahl does not extrapolate that); and the calling
thread's share (its CPU a token over one thread's whole: pipe() reads
and writes the docs there while the threads search, so its speed-up
stays below 1 / that share). Interleaved repeats, medians; the outputs at
every thread count must equal one thread's (digests of the written
annotations and of their probabilities). "engine
S": the engine alone at each thread count (`engine_timed`: the decoder
over pipe()'s batches, their inputs made before the clock (but for the
rows the tagging systems' searching threads copy per doc), nothing
written), apart from pipe()'s batches and the Python per batch around
them; "-" for a component that does not decode a batch at once.
--cold: fresh text, each pass over the split once with the component's
word cache emptied first (every word type is new to it once: the calling
share of a stream's first words)."""
import argparse
import gc
import json
import math
import statistics
import sys
import time
from pathlib import Path
from typing import Dict, List


from benchmarks import gold as G
from benchmarks.harness import digest, model_name, peak_rss_mb, probabilities_digest, stamp
from benchmarks.scale_bench import COMPONENTS, FILES

ROOT = Path(__file__).resolve().parents[1]


def upstream(nlp, name: str) -> list:
    """The components that make `name`'s input docs where gold docs cannot
    stand in for them: a parser with tag_alternatives reads the tagger's
    alternative tags (doc.user_data), which no gold doc has, so every
    component before it in the pipeline runs on the words (before the
    clock). Otherwise none: the gold inputs are used."""
    pipe = nlp.get_pipe(name)
    if not getattr(pipe, "tag_alternatives", False):
        return []
    return [p for n, p in nlp.pipeline[:nlp.pipe_names.index(name)]]


def task_docs(nlp, name: str, factory: str, data: Path, split: str, copies: int,
              paragraphs: int = 1):
    """The component's input docs for `split` (`copies` times), their task
    and where their inputs come from ("gold" or "pipeline": upstream());
    paragraphs > 1: that many sentences a doc, a line-break token after
    each (gold.paragraphs)."""
    dataset, task = COMPONENTS[factory]
    path = data / FILES[dataset].format(split=split)
    if not path.is_file():
        path = data / FILES[dataset].format(split="test")
    golds = G.read_gold(path, vocab=nlp.vocab, task=task)
    before = upstream(nlp, name)
    inputs = G.paragraphs([G.inputs_of(g, task) for g in golds], paragraphs)
    if before:
        inputs = [x._replace(tags=None) for x in inputs]  # the words alone, as from raw text

    def make_docs(copies: int = copies):
        docs = [G.make_doc(nlp.vocab, x) for _ in range(copies) for x in inputs]
        for pipe in before:
            docs = list(pipe.pipe(docs))
        return docs
    return make_docs, task, "pipeline" if before else "gold"


class _NoClock:
    def start(self) -> None:
        pass

    def stop(self) -> float:
        return float("nan")


def emptied(pipe) -> bool:
    """The component's word cache emptied (a pass over fresh text: every
    word new to it, as a stream's first words are); False where it has
    none."""
    atoms = getattr(pipe, "_atoms", None)
    if atoms is None:
        return False
    if hasattr(atoms, "clear"):
        atoms.clear()
    else:  # (code before LexemeAtoms.clear: the classes set again empty it)
        atoms.set_classes(atoms.classes)
    return True


def timed(pipe, make_docs, n_threads: int, batch_size: int, clock,
          cold: bool = False) -> Dict[str, float]:
    docs = make_docs()
    pipe.cfg["n_threads"] = n_threads
    if cold and not emptied(pipe):
        raise SystemExit(f"--cold: {type(pipe).__name__} has no word cache to empty")
    # The inputs are made before the clock and frozen out of the garbage
    # collector: the collections the component's allocations trigger would
    # otherwise scan every doc the benchmark holds (a cost that grows with
    # --copies, not with the component's work).
    gc.collect()
    gc.freeze()
    clock.start()
    t0, c0, m0 = time.perf_counter(), time.process_time(), time.thread_time()
    out = list(pipe.pipe(docs, batch_size=batch_size))
    # cpu: every thread's; calling: this thread's (with threads, its own work beside theirs)
    wall, cpu, calling = time.perf_counter() - t0, time.process_time() - c0, time.thread_time() - m0
    nogil = clock.stop()
    gc.unfreeze()
    return {"wall": wall, "cpu": cpu, "calling": calling, "nogil": nogil,
            "tokens": sum(len(d) for d in out), "digest": digest(out),
            "probabilities": probabilities_digest(out)}


def engine_timed(pipe, make_docs, n_threads: int, batch_size: int):
    """Tokens per second of the component's decoder alone over the docs in
    pipe()'s batches (TransitionPipe._decoding: decode_docs with its
    lattice pass, or a lattice pass, on n_threads C threads: on_c_threads),
    every batch's inputs made before the clock (the tagging systems' rows
    are copied by the searching threads, in the clock); None where the component
    does not decode a batch at once. (One batch of all the docs, as timed
    before, is a regime pipe() never runs: its arrays outgrow the caches.)"""
    from spacy_lookahead.pipes.base import pipelined_batch_size
    from spacy_lookahead.pipes.transition import on_c_threads
    decoding = getattr(pipe, "_decoding", None)
    if decoding is None:
        return None
    docs = make_docs()
    pipe.cfg["n_threads"] = n_threads
    size = batch_size if n_threads <= 1 else pipelined_batch_size(batch_size, n_threads)
    batches = []
    for lo in range(0, len(docs), size):
        _, run, runs, _ = decoding(docs[lo:lo + size])
        if run is not on_c_threads:
            return None
        batches.append(runs)
    gc.collect()
    gc.freeze()
    wall = 0.0
    for runs in batches:
        t0 = time.perf_counter()
        on_c_threads(runs)
        wall += time.perf_counter() - t0
    gc.unfreeze()
    return sum(len(d) for d in docs) / wall


def scaling(runs: Dict[int, List[dict]], engine: Dict[int, list], threads: List[int]) -> dict:
    """A row's fields per thread count from its timed passes (runs: timed()'s
    per count; engine: engine_timed()'s): tokens/s; the speed-up S over the
    first count, its serial fraction s and 1 / s; where a speed-up below t
    goes: the cores busy (busy < 1: threads waited, as a serial part makes
    them) or more CPU a token (cpu ratio > 1: e.g. inputs read cold on
    another core than the one that made them), S = t * busy_t / (busy_1 * cpu
    ratio) up to the medians, and the serial fraction of the waiting alone
    (Amdahl on t * busy_t / busy_1); the calling thread's share (its CPU a
    token at t threads over one thread's whole CPU a token: pipe()'s
    speed-up stays below 1 / that share); the engine's tokens/s and
    speed-up alone."""
    row: dict = {}
    one = runs[threads[0]]
    base = statistics.median(r["tokens"] / r["wall"] for r in one)
    cpu_base = statistics.median(r["cpu"] / r["tokens"] for r in one)
    for t in threads:
        tps = statistics.median(r["tokens"] / r["wall"] for r in runs[t])
        row[f"tokens_per_second_{t}"] = round(tps)
        row[f"busy_{t}"] = round(statistics.median(r["cpu"] / (t * r["wall"]) for r in runs[t]), 3)
        if t > threads[0]:
            row[f"cpu_ratio_{t}"] = round(
                statistics.median(r["cpu"] / r["tokens"] for r in runs[t]) / cpu_base, 3)
            speedup = tps / base
            row[f"speedup_{t}"] = round(speedup, 3)
            s = (t / speedup - 1) / (t - 1)
            row[f"serial_fraction_{t}"] = round(s, 3)
            row[f"ceiling_{t}"] = round(1 / s, 1) if s > 0 else None
            # the serial fraction of the waiting alone (Amdahl on t * busy_t / busy_1): what
            # a serial part costs, apart from the threads slowing each other
            row[f"idle_serial_fraction_{t}"] = round((row[f"busy_{threads[0]}"] / row[f"busy_{t}"] - 1)
                                                     / (t - 1), 4)
            # the calling thread's CPU a token against one thread's whole: pipe() makes the
            # inputs and writes the outputs there (GIL-held, and its own nogil sections) while
            # the threads search, so the speed-up stays below 1 / that share at any count
            if all("calling" in r for r in runs[t]):
                row[f"calling_share_{t}"] = round(
                    statistics.median(r["calling"] / r["tokens"] for r in runs[t]) / cpu_base, 4)
        alone = None if None in engine[t] else statistics.median(engine[t])
        row[f"engine_tokens_per_second_{t}"] = None if alone is None else round(alone)
        if t > threads[0]:
            first = row[f"engine_tokens_per_second_{threads[0]}"]
            row[f"engine_speedup_{t}"] = None if alone is None or not first \
                else round(alone / first, 3)
    return row


def copies_for(pipe, make_docs, copies: int, min_seconds: float, batch_size: int) -> int:
    """How many copies of the inputs make one thread's pipe() pass last
    min_seconds (at least `copies`), from a pass over `copies` (after the
    first call's costs)."""
    pipe.cfg["n_threads"] = 1
    list(pipe.pipe(make_docs(copies), batch_size=batch_size))  # first-call costs, word caches
    if min_seconds <= 0:
        return copies
    docs = make_docs(copies)
    gc.collect()
    t0 = time.perf_counter()
    list(pipe.pipe(docs, batch_size=batch_size))
    seconds = time.perf_counter() - t0
    return max(copies, math.ceil(copies * min_seconds / max(seconds, 1e-6)))


def measure(model: str, data: Path, split: str, copies: int, threads: List[int], repeats: int,
            batch_size: int, min_seconds: float = 0.0, paragraphs: int = 1,
            cold: bool = False) -> List[dict]:
    import spacy
    try:
        from spacy_lookahead.core import clock
    except ImportError:  # code before the clock (issue 38): speeds only
        clock = _NoClock()

    nlp = spacy.load(model)
    rows = []
    for name, pipe in nlp.pipeline:
        factory = nlp.get_pipe_meta(name).factory
        if factory not in COMPONENTS:
            continue
        make_copies, task, source = task_docs(nlp, name, factory, data, split, copies,
                                              paragraphs)
        # cold: one copy (a second would find its words cached), the cache emptied each pass
        n_copies = 1 if cold else copies_for(pipe, make_copies, copies, min_seconds, batch_size)

        def make_docs():
            return make_copies(n_copies)
        runs: Dict[int, List[dict]] = {t: [] for t in threads}
        engine: Dict[int, list] = {t: [] for t in threads}
        for _ in range(repeats):  # interleaved: a noisy moment hits every count alike
            for t in threads:
                runs[t].append(timed(pipe, make_docs, t, batch_size, clock, cold))
                engine[t].append(engine_timed(pipe, make_docs, t, batch_size))
        one = runs[threads[0]]
        row = {"model": model, "component": name, "factory": factory, "task": task,
               "inputs": source, "tokens": one[0]["tokens"], "copies": n_copies,
               "seconds_per_pass": round(statistics.median(r["wall"] for r in one), 3),
               "batch_size": batch_size, "paragraphs": paragraphs, "cold": cold,
               "gil_share": round(1 - statistics.median(r["nogil"] / r["wall"] for r in one), 4),
               "identical": all((r["digest"], r["probabilities"])
                                == (one[0]["digest"], one[0]["probabilities"])
                                for t in threads for r in runs[t]),
               "digest": one[0]["digest"], "probabilities_digest": one[0]["probabilities"]}
        row.update(scaling(runs, engine, threads))
        row["peak_rss_mb"] = round(peak_rss_mb(), 1)  # the process so far: this model and those before
        rows.append(row)
    return rows


def print_table(rows: List[dict], threads: List[int]) -> None:
    more = [t for t in threads[1:]]
    head = ["component", "model", f"GIL share ({threads[0]} thread)"] + \
        [f"tok/s x{t}" for t in threads] + [f"S{t} / s / 1/s" for t in more] + \
        [f"calling x{t}" for t in more] + [f"engine S{t}" for t in more] + \
        ["identical", "digest", "probabilities", "peak RSS"]
    print("| " + " | ".join(head) + " |")
    print("|" + " --- |" * len(head))
    for r in rows:
        cells = [r["component"] + (" (pipeline inputs)" if r.get("inputs") == "pipeline" else "")
                 + (" (cold)" if r.get("cold") else ""),
                 model_name(r["model"]),
                 "-" if r["gil_share"] != r["gil_share"] else f"{100 * r['gil_share']:.1f}%"]
        cells += [f"{r[f'tokens_per_second_{t}']:,}" for t in threads]
        cells += [f"{r[f'speedup_{t}']:.2f} / {r[f'serial_fraction_{t}']:.2f} / {r[f'ceiling_{t}']}x"
                  for t in more]
        cells += ["-" if r.get(f"calling_share_{t}") is None else f"{100 * r[f'calling_share_{t}']:.1f}%"
                  for t in more]
        cells += ["-" if r.get(f"engine_speedup_{t}") is None else f"{r[f'engine_speedup_{t}']:.2f}"
                  for t in more]
        cells.append("yes" if r["identical"] else "NO")
        cells.append(r["digest"][:12])
        cells.append(r["probabilities_digest"][:12])
        cells.append(f"{r['peak_rss_mb']:,.0f} MB")
        print("| " + " | ".join(cells) + " |")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("models", nargs="+")
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--split", default="dev")
    ap.add_argument("--copies", type=int, default=4, help="the least copies of the inputs")
    ap.add_argument("--min-seconds", type=float, default=1.0,
                    help="more copies until one thread's pass lasts this long (0: --copies)")
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--output", type=Path)
    ap.add_argument("--paragraphs", type=int, default=1,
                    help="sentences a doc, with a line-break token after each (raw text's "
                         "whitespace tokens); 1: one sentence a doc, as the data has them")
    ap.add_argument("--cold", action="store_true",
                    help="fresh text: each pass over the split's docs once, the component's "
                         "word cache emptied before it (every word new; --copies and "
                         "--min-seconds unused: take a large split, e.g. --split train)")
    args = ap.parse_args(argv)
    rows = []
    for model in args.models:
        rows.extend(measure(model, args.data, args.split, args.copies, args.threads, args.repeats,
                            args.batch_size, args.min_seconds, args.paragraphs, args.cold))
    print_table(rows, args.threads)
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(json.dumps({**stamp(), "min_seconds": args.min_seconds, "rows": rows},
                                          indent=2))
    return 0 if all(r["identical"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
