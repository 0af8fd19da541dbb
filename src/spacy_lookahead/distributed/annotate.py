"""`annotate`: run a pipeline over a corpus in partitions on a Dask cluster.

Each partition (`--shard-size` consecutive inputs; by default sized so that
every worker gets several) is one task, which writes its docs as one shard
file into OUTPUT_DIR itself (under a temporary name, then renamed), so the
client only collects the manifest and is no bottleneck. A task that runs
twice (a worker lost after it finished) writes the same shard again: nothing
lost, nothing doubled. Where a worker cannot see OUTPUT_DIR (a cluster
without a shared disk), its task sends the shard's bytes back and the client
writes it. A lost worker's running tasks are rescheduled by Dask's scheduler
(up to `distributed.scheduler.allowed-failures` times); `retries` re-runs a
task that raised.

The client ships the model's files with the tasks (ship_model), so the
workers of a cluster need not see the client's disk; every worker loads the
pipeline once, all at once, before the first partition, while the client
reads the input (start_loading). The run's
fixed costs (cluster start, shipping and loading the model) are timed apart
from annotating: manifest["timings"]."""
import hashlib
import importlib
import os
from contextlib import ExitStack
import stat
import sys
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

import srsly

from .cluster import _data, dask_client, require_distributed
from .inputs import (Inputs, check_input, n_chars, n_inputs, partition_payload,
                     payload_items, read_inputs)
from .manifest import (check_resumable, model_checksum, read_manifest, write_atomic,
                       write_manifest)

RETRIES = 2
# The default shard size: at least this many shards per worker where the
# input allows (a worker that finishes early takes the next one, so the tail
# is one small shard, not a worker's whole share), and no more text in a
# shard on average than MAX_SHARD_CHARS (what a task holds in memory: about
# 200,000 tokens and their docs) nor more than MAX_SHARD_SIZE inputs. The cap
# is in characters, not inputs: each task costs the client and the scheduler
# ~8 ms whatever its size, which on a small machine competes with the
# workers, so shards of short inputs should be large.
SHARDS_PER_WORKER = 4
MAX_SHARD_CHARS = 1_000_000
MAX_SHARD_SIZE = 50_000
# Seconds between two writes of the manifest while shards come in: a write
# (a rename) cost the client 2.5 ms a shard; a run stopped meanwhile redoes
# at most the shards of that last second.
MANIFEST_EVERY = 1.0

# One pipeline per worker process and model: loaded by the first task that
# needs it, reused by the next ones.
_PIPELINES: Dict[Tuple[str, int], Any] = {}


def model_files(model: Path) -> Dict[str, bytes]:
    """The files of a pipeline directory, by relative path: what the client
    ships to the workers, so that a cluster's workers need not see the
    client's disk. A link is followed only to a file inside the directory
    (a link out of it could ship a private file to every worker)."""
    model = Path(model)
    root = model.resolve()
    out = {}
    for f in sorted(model.rglob("*")):
        if f.is_symlink() and root not in f.resolve().parents:
            raise ValueError(f"model {model}: {f.relative_to(model)} links to {f.resolve()}, "
                             "outside the model directory; copy the file in instead of the link.")
        if f.is_file():
            out[str(f.relative_to(model))] = f.read_bytes()
    return out


def files_checksum(files: Dict[str, bytes]) -> str:
    """manifest.model_checksum of the shipped files (the same sum)."""
    digest = hashlib.sha256()
    for name in sorted(files, key=lambda n: Path(n)):
        digest.update(name.encode("utf8") + b"\0")
        digest.update(files[name])
    return digest.hexdigest()


def _cache_root() -> Path:
    """This user's model cache on the worker's machine: private (0700) and
    owned by the user, else refused (another user could plant a model)."""
    import tempfile

    uid = os.getuid() if hasattr(os, "getuid") else None  # (Windows: no uids nor modes)
    owner = uid if uid is not None else "user"
    root = Path(tempfile.gettempdir()) / f"spacy-lookahead-models-{owner}"
    root.mkdir(mode=0o700, exist_ok=True)
    info = root.lstat()
    if not stat.S_ISDIR(info.st_mode) or (uid is not None and (info.st_uid != uid
                                                                or info.st_mode & 0o077)):
        raise PermissionError(f"the model cache {root} is not a private folder of this user "
                              "(0700): remove it, and the next run makes it again.")
    return root


def _materialize(files: Dict[str, bytes], checksum: str) -> Path:
    """The pipeline's directory on this worker's disk (once per machine and
    model: written under a temporary name, checked against the checksum,
    then renamed; an entry there is checked before use and written again
    if it does not hold these files)."""
    import shutil

    if files_checksum(files) != checksum:
        raise ValueError("the shipped model's files do not match their checksum")
    for name in files:
        parts = Path(name).parts
        if Path(name).is_absolute() or ".." in parts or not parts:
            raise ValueError(f"the shipped model holds a file named {name!r}: not a path "
                             "inside the model directory.")
    target = _cache_root() / checksum
    if target.is_symlink() or target.is_file():
        target.unlink()
    elif target.is_dir() and model_checksum(target) != checksum:
        shutil.rmtree(target)  # planted, or lost files: written again below
    if not target.exists():
        tmp = target.with_name(f".{checksum}.tmp-{os.getpid()}")
        for name, data in files.items():
            (tmp / name).parent.mkdir(parents=True, exist_ok=True)
            (tmp / name).write_bytes(data)
        if model_checksum(tmp) != checksum:
            shutil.rmtree(tmp, ignore_errors=True)
            raise OSError(f"writing the model to {tmp} did not give its files back (disk full?)")
        try:
            os.replace(tmp, target)
        except OSError:  # another worker of this machine renamed its copy first
            shutil.rmtree(tmp, ignore_errors=True)
    return target


def worker_pipeline(files: Dict[str, bytes], checksum: str, n_threads: int):
    """The pipeline of the shipped model files in this worker process,
    loaded once (one model per process) with its components' n_threads."""
    key = (checksum, n_threads)
    if key not in _PIPELINES:
        import spacy
        nlp = spacy.load(_materialize(files, checksum))
        for _, pipe in nlp.pipeline:
            cfg = getattr(pipe, "cfg", None)
            if isinstance(cfg, dict) and "n_threads" in cfg:
                cfg["n_threads"] = n_threads
        _PIPELINES.clear()  # one model per process
        _PIPELINES[key] = nlp
    return _PIPELINES[key]


def ship_model(client, model: Path, checksum: str):
    """The model's files on the cluster, as the result of a task (not
    scattered data): if the worker holding them dies, the scheduler
    recomputes them."""
    import warnings

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*(Large object|Sending large graph).*")
        return client.submit(_data, model_files(model), key=f"annotate-model-{checksum[:16]}-"
                             f"{os.urandom(4).hex()}")


def load_pipeline(model: Dict[str, bytes], checksum: str, n_threads: int) -> Dict[str, Any]:
    """The preload task: this worker's pipeline (worker_pipeline), loaded
    before the first partition; returns what it cost here: in all, and
    importing spaCy (if this task does), and when it began (the epoch's
    seconds: the model's files and the task reach a worker after a while)."""
    began = time.time()
    start = time.perf_counter()
    importlib.import_module("spacy")  # timed apart from loading
    imported = time.perf_counter()
    worker_pipeline(model, checksum, n_threads)
    return {"pid": os.getpid(), "seconds": time.perf_counter() - start,
            "import_seconds": imported - start, "began": began}


def annotate_partition(model: Dict[str, bytes], checksum: str, payload: Tuple[str, Any],
                       batch_size: int, n_threads: int, index: int,
                       before: Optional[Callable[[int], None]] = None,
                       output: Optional[Tuple[str, str]] = None) -> Dict[str, Any]:
    """The task: annotate one partition with the pipeline whose files are
    `model` (ship_model). With `output` (OUTPUT_DIR, the run's token file)
    and the token visible from this worker, the task writes the shard file
    itself and returns its counts; otherwise (`bytes`) its DocBin bytes for
    the client to write. `before(index)` runs first in the worker (a hook
    for logging, and for the tests that kill a worker mid-partition)."""
    if before is not None:
        before(index)
    nlp = worker_pipeline(model, checksum, n_threads)

    def items():  # (text or doc, user data) of the partition, afresh
        return payload_items(payload, nlp.vocab)

    start = time.perf_counter()
    rejected: List[Dict[str, Any]] = []
    try:
        docs = _annotated(nlp, items(), batch_size)
    except Exception:  # a doc the pipeline rejects: find it, keep the others
        docs = []
        for k, item in enumerate(items()):
            try:
                docs.extend(_annotated(nlp, [item], 1))
            except Exception as err:
                rejected.append({"position": k, "error": f"{type(err).__name__}: {err}"[:500]})
    data = _docbin_bytes(docs)
    target = _visible_output(output)
    if target is not None:
        _write_shard(target / _shard_name(index), data)
    return {"index": index, "bytes": None if target is not None else data, "docs": len(docs),
            "tokens": sum(len(d) for d in docs), "seconds": time.perf_counter() - start,
            "pid": os.getpid(), "rejected": rejected}


def _visible_output(output: Optional[Tuple[str, str]]) -> Optional[Path]:
    """OUTPUT_DIR if this worker sees the client's copy of it (the run's
    token file is there), else None."""
    if output is None:
        return None
    folder, token = output
    return Path(folder) if (Path(folder) / token).is_file() else None


def _write_shard(path: Path, data: bytes) -> None:
    """write_atomic under a name of this task's own: two attempts of one
    task (on two workers of one machine) never write the same temporary file."""
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}-{os.urandom(4).hex()}")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def _annotated(nlp, items: list, batch_size: int) -> list:
    docs = []
    for doc, user_data in nlp.pipe(items, as_tuples=True, batch_size=batch_size):
        doc.user_data.update(user_data)
        docs.append(doc)
    return docs


def _docbin_bytes(docs: list) -> bytes:
    """The docs as DocBin bytes, user data included, packed by srsly's
    msgpack as spaCy packs it (numpy arrays too: a tagger's alternatives,
    SAPO's probabilities), its registries looked up once for the shard
    (a lookup per doc cost more than tagging a sentence)."""
    from spacy.tokens import DocBin

    from .lookups import fixed_msgpack_registries

    with fixed_msgpack_registries():
        return DocBin(docs=docs, store_user_data=True).to_bytes()


def auto_shard_size(n: int, n_workers: int, n_chars: int) -> int:
    """Inputs per shard for n inputs of n_chars characters in all on
    n_workers workers: at least SHARDS_PER_WORKER shards a worker, at most
    MAX_SHARD_CHARS characters (on average: the shards are ranges of equal
    count) and MAX_SHARD_SIZE inputs a shard, and a multiple of the workers
    in all (else one worker's extra shard is the run's tail)."""
    workers = max(1, n_workers)
    shards = max(workers * SHARDS_PER_WORKER, -(-n_chars // MAX_SHARD_CHARS),
                 -(-n // MAX_SHARD_SIZE))
    shards = -(-shards // workers) * workers
    return max(1, -(-n // shards))


def annotate(model: Path, input_path: Path, output_dir: Path, *, scheduler: Optional[str] = None,
             workers: Optional[int] = None, batch_size: int = 256, n_threads: int = 1,
             shard_size: Optional[int] = None, client: Any = None,
             before: Optional[Callable[[int], None]] = None, stdout=sys.stdout) -> Dict[str, Any]:
    """Annotate INPUT into DocBin shards in OUTPUT_DIR (see the module doc);
    returns the manifest, with the run's `timings` (seconds): `read`
    (the input), `cluster` (starting a LocalCluster; 0 on a given client or
    scheduler), `model` (shipping and loading the model on every worker:
    on a new run, while the input is read), `annotate` (the partitions, from the
    first submitted to the last listed), `close` (stopping the LocalCluster)
    and `whole`. With `client`, runs on it (scheduler and workers are then
    ignored). shard_size None: the resumed run's, else auto_shard_size of
    the input and the cluster's workers."""
    began = time.perf_counter()
    if (shard_size is not None and shard_size < 1) or batch_size < 1 or n_threads < 0:
        raise ValueError("--shard-size and --batch-size must be at least 1, --n-threads at least 0 "
                         f"(got {shard_size}, {batch_size}, {n_threads}).")
    if client is None:
        require_distributed()  # before anything is written: a retry may change the settings
    model = Path(model).resolve()
    checksum = model_checksum(model)
    check_input(Path(input_path))  # a wrong path or kind fails before a cluster starts
    output_dir = Path(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    old = read_manifest(output_dir)
    timings = {"read": 0.0, "cluster": 0.0, "model": 0.0, "annotate": 0.0, "close": 0.0}
    with ExitStack() as stack:
        def connect():  # the cluster, started once and only when needed
            nonlocal client
            if client is None:
                start = time.perf_counter()
                client = stack.enter_context(dask_client(scheduler, workers))
                timings["cluster"] = time.perf_counter() - start
            return client

        # A new run needs the cluster and the model whatever the input: the
        # workers import, receive and load it while the client reads the
        # input (on a 16-core machine loading took 7 s, reading 3 s). A
        # resumed run reads first: it may have nothing left to do.
        early = not old and _has_bytes(Path(input_path))
        loading = start_loading(connect(), model, checksum, n_threads) if early else None
        reading = time.perf_counter()
        inputs = read_inputs(Path(input_path))
        timings["read"] = time.perf_counter() - reading
        if shard_size is None:
            shard_size = (old.get("shard_size") if old else None) or auto_shard_size(
                n_inputs(inputs), _worker_count(client, scheduler, workers, connect),
                n_chars(inputs))
        manifest = _plan(model, checksum, input_path, inputs, shard_size, old, output_dir)
        todo = [(index, start, min(start + shard_size, n_inputs(inputs)))
                for index, start in enumerate(range(0, n_inputs(inputs), shard_size))
                if _shard_name(index) not in manifest["shards"]]
        _report_bad(inputs, stdout)
        total = -(-n_inputs(inputs) // shard_size)
        print(f"annotate: {n_inputs(inputs)} inputs in {total} shards of {shard_size}; "
              f"{total - len(todo)} already done, {len(todo)} to do", file=stdout)
        write_manifest(output_dir, manifest)
        if not todo and loading is not None:  # (every input bad: nothing to load it for)
            client.cancel([loading[0], *loading[2]])
        if todo:
            if loading is None:
                loading = start_loading(connect(), model, checksum, n_threads)
            timings.update(_run(connect(), loading, inputs, todo, manifest, output_dir,
                                batch_size, n_threads, before, stdout))
        closing = time.perf_counter()
    if timings["cluster"]:  # the LocalCluster this call started has stopped
        timings["close"] = time.perf_counter() - closing
    timings["whole"] = time.perf_counter() - began
    manifest["timings"] = timings
    write_manifest(output_dir, manifest)
    _report_timings(manifest, stdout)
    if rejected_count(manifest):
        print(f"annotate: {rejected_count(manifest)} inputs rejected by the pipeline (an "
              f"error while annotating them), listed with their errors in "
              f"{output_dir / REJECTS}", file=stdout)
    return manifest


def _report_timings(manifest: Dict[str, Any], stdout) -> None:
    t = manifest["timings"]
    tokens = t.get("tokens", 0)
    rate = f" ({tokens / t['annotate']:,.0f} tokens/s)" if t["annotate"] else ""
    print(f"annotate: {t['whole']:.1f} s in all: reading {t['read']:.1f} s, cluster start "
          f"{t['cluster']:.1f} s, model shipped and loaded on {t.get('workers', 0)} workers "
          f"{t['model']:.1f} s, annotating {tokens:,} tokens {t['annotate']:.1f} s{rate}, "
          f"cluster stop {t['close']:.1f} s", file=stdout)


def _worker_count(client: Any, scheduler: Optional[str], workers: Optional[int], connect) -> int:
    """The workers the run will have: a running cluster's are counted (that
    needs the client), a LocalCluster's are `workers` or the cores."""
    if client is not None or scheduler:
        return len(connect().scheduler_info()["workers"])
    return workers or os.cpu_count() or 1


def _plan(model: Path, checksum: str, input_path: Path, inputs: Inputs, shard_size: int,
          old: Optional[Dict[str, Any]], output_dir: Path) -> Dict[str, Any]:
    """The run's manifest, with the shards a resumed run already wrote."""
    meta = srsly.read_json(model / "meta.json") if (model / "meta.json").exists() else {}
    manifest = {
        "model": str(model), "model_name": f"{meta.get('lang', '')}_{meta.get('name', model.name)}",
        "model_checksum": checksum, "input": str(Path(input_path).resolve()),
        "input_kind": inputs.kind, "input_checksum": inputs.checksum,
        "n_inputs": n_inputs(inputs), "bad_inputs": inputs.bad, "shard_size": shard_size,
        "shards": {},
    }
    if old:
        check_resumable(old, manifest, output_dir)
        manifest["shards"] = {name: entry for name, entry in old.get("shards", {}).items()
                              if (output_dir / name).exists()}
    return manifest


def _run(client, loading: tuple, inputs: Inputs, todo: List[Tuple[int, int, int]],
         manifest: Dict[str, Any], output_dir: Path, batch_size: int, n_threads: int,
         before, stdout) -> Dict[str, Any]:
    """Wait for the model on every worker (start_loading), then annotate
    the partitions of `todo`, listing each shard in the manifest as its
    task reports; returns the timings of the two phases."""
    distributed = require_distributed()
    shipped, checksum, loads, start, began_wall = loading
    loads = client.gather(loads)
    timings: Dict[str, Any] = {"model": time.perf_counter() - start, "workers": len(loads),
                               "model_load_max": max((x["seconds"] for x in loads), default=0.0),
                               # of that: importing spaCy there, and the last load's start
                               # after the shipping began (the files and the task in transit)
                               "model_import_max": max((x.get("import_seconds", 0.0)
                                                        for x in loads), default=0.0),
                               "model_start_max": max((x["began"] - began_wall for x in loads
                                                       if "began" in x), default=0.0)}
    token = f".annotate-run-{os.urandom(8).hex()}"  # what a worker that sees output_dir sees
    (output_dir / token).write_bytes(b"")
    _write_rejects(output_dir, manifest)  # the resumed run's shards' rejects
    began, cpu = time.perf_counter(), time.process_time()
    docs = tokens = 0
    busy = 0.0
    try:
        futures = {}
        for index, first, end in todo:
            future = client.submit(annotate_partition, shipped, checksum,
                                   partition_payload(inputs, first, end), batch_size, n_threads,
                                   index, before, (str(output_dir.resolve()), token), pure=False,
                                   retries=RETRIES,
                                   key=f"annotate-{checksum[:8]}-{index}-{os.urandom(4).hex()}")
            futures[future] = (index, first, end)
        listed = time.perf_counter()
        for done, future in enumerate(distributed.as_completed(futures), start=1):
            result = future.result()
            index, first, end = futures[future]
            name = _shard_name(index)
            if result["bytes"] is not None:  # a worker that does not see output_dir
                write_atomic(output_dir / name, result["bytes"])
            manifest["shards"][name] = _shard_entry(inputs, first, end, result)
            if result["rejected"]:  # (written once before the loop; rewritten when it grows)
                _write_rejects(output_dir, manifest)
            if time.perf_counter() - listed >= MANIFEST_EVERY:
                # after the shards: a listed shard is complete (an unlisted one is redone)
                write_manifest(output_dir, manifest)
                listed = time.perf_counter()
            docs += result["docs"]
            tokens += result["tokens"]
            busy += result["seconds"]
            elapsed = time.perf_counter() - began
            print(f"  [{done}/{len(todo)}] {name}: {result['docs']} docs; total {docs} docs, "
                  f"{tokens / elapsed:,.0f} tokens/s", file=stdout, flush=True)
    finally:  # (also when a task failed: the shards written so far are listed)
        write_manifest(output_dir, manifest)
        (output_dir / token).unlink()
    timings["annotate"], timings["tokens"] = time.perf_counter() - began, tokens
    # the shards' time in the workers, summed: against workers x annotate, the
    # share of the phase the workers spent annotating (the rest: waiting
    # for tasks, the tail); tokens / busy, their speed while they did
    timings["shards_busy"] = busy
    # the client's (and a LocalCluster's scheduler's) CPU time meanwhile: its serial share
    timings["client_cpu"] = time.process_time() - cpu
    return timings


def _has_bytes(path: Path) -> bool:
    """Whether the input holds anything (a folder: check_input saw a .txt
    file); an empty file needs no cluster."""
    return path.is_dir() or path.stat().st_size > 0


def start_loading(client, model: Path, checksum: str, n_threads: int) -> tuple:
    """Ship the model and start loading it on every worker at once (one
    task pinned to each, loosely: a worker that dies hands its task on),
    without waiting: loading is a fixed cost, not part of annotating, and a
    worker's first partition no longer waits for it. Returns what _run
    waits for: (the shipped files, the checksum, the loads' futures, when
    it started: perf_counter's and the epoch's seconds)."""
    start, began_wall = time.perf_counter(), time.time()
    shipped = ship_model(client, model, checksum)
    workers = sorted(client.scheduler_info()["workers"])
    loads = [client.submit(load_pipeline, shipped, checksum, n_threads, pure=False,
                           key=f"annotate-load-{checksum[:8]}-{i}-{os.urandom(4).hex()}",
                           workers=[address], allow_other_workers=True)
             for i, address in enumerate(workers)]
    return shipped, checksum, loads, start, began_wall


def _shard_entry(inputs: Inputs, first: int, end: int, result: Dict[str, Any]) -> Dict[str, Any]:
    """The manifest's entry of a written shard."""
    return {
        "inputs": [first, end], "sources": [inputs.sources[first], inputs.sources[end - 1]],
        "docs": result["docs"], "tokens": result["tokens"],
        "rejected": [{_SOURCE[inputs.kind]: inputs.sources[first + r["position"]],
                      "error": r["error"]} for r in result["rejected"]],
    }


# what names an input in the reports, by the input's kind
_SOURCE = {"jsonl": "line", "txt": "file", "docbin": "doc"}
REJECTS = "rejects.jsonl"


def _write_rejects(output_dir: Path, manifest: Dict[str, Any]) -> None:
    """rejects.jsonl: every input the pipeline rejected (raised on), with
    where it comes from and the error, in input order (the shards' lists
    of manifest.json, so a resumed run keeps them)."""
    rows = [row for _, entry in sorted(manifest["shards"].items())
            for row in entry.get("rejected", [])]
    write_atomic(output_dir / REJECTS, "".join(srsly.json_dumps(r) + "\n" for r in rows)
                 .encode("utf8"))


def rejected_count(manifest: Dict[str, Any]) -> int:
    return sum(len(entry.get("rejected", [])) for entry in manifest["shards"].values())


def _shard_name(index: int) -> str:
    return f"shard-{index:05d}.spacy"


def _report_bad(inputs: Inputs, stdout) -> None:
    if not inputs.bad:
        return
    where = ", ".join(str(b.get("line", b.get("file"))) for b in inputs.bad[:10])
    more = f" (and {len(inputs.bad) - 10} more)" if len(inputs.bad) > 10 else ""
    print(f"annotate: {len(inputs.bad)} bad inputs skipped, listed in manifest.json "
          f"'bad_inputs': {'lines' if inputs.kind == 'jsonl' else 'files'} {where}{more}",
          file=stdout)
