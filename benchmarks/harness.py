"""How a measurement runs: models named with settings changed at load, one
BLAS thread, each measurement in a fresh process of its own (so that its
peak memory is its own), the record of the machine, and digests of what
the components wrote (the same outputs, run to run).

A model argument is `NAME=MODEL_DIR`, optionally `NAME=MODEL_DIR@depth=2,n_threads=2`:
each key is set on every component whose config has it, as its own setting
or as one of a block's (`depth` of its search block; a dotted key names the
path: `learner.n`), so one trained model can be timed at every depth;
`n_process` is an argument of nlp.pipe, taken by the harnesses."""
import hashlib
import json
import multiprocessing
import os
import platform
import resource
import sys
from pathlib import Path
from typing import Any, Callable, Dict, Optional, Tuple

import numpy
import srsly

THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
               "BLIS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")


def one_thread() -> Dict[str, str]:
    """One thread for numpy/BLAS in the processes started from here, unless
    the environment says otherwise; returns those settings."""
    for var in THREAD_VARS:
        os.environ.setdefault(var, "1")
    return {var: os.environ[var] for var in THREAD_VARS}


def peak_rss_mb(who: int = resource.RUSAGE_SELF) -> float:
    rss = resource.getrusage(who).ru_maxrss  # KiB (Linux), bytes (macOS)
    return round(rss / (1024 * 1024 if sys.platform == "darwin" else 1024), 1)


def machine_info() -> Dict[str, Any]:
    cpu = platform.processor() or platform.machine()
    try:
        cpu = next(line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                   if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {"cpu": cpu, "cores": os.cpu_count(), "usable_cores": usable,
            "platform": platform.platform(), "python": platform.python_version(),
            **package_versions()}


def stamp() -> Dict[str, Any]:
    """The head of a benchmark's record: when (UTC) and on what machine it
    was measured; report.py lists both for every record in results.md."""
    from datetime import datetime, timezone

    return {"date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "machine": machine_info()}


def model_name(model: str) -> str:
    """training/NAME/model-best -> NAME; a bundle's m/NAME -> NAME (how the
    benchmarks' tables name a model directory)."""
    path = Path(model)
    return path.parent.name if path.name in ("model-best", "model-last") else path.name


def package_versions() -> Dict[str, Optional[str]]:
    """spaCy's and thinc's versions. With the Python version they decide
    the speed of spaCy's own components: its parser and NER ran 1.5-1.7x
    faster on Python 3.12 than on 3.11 with the same releases, where their
    builds take the GIL at every decision (benchmarks/NOTES.md, 2026-12-06)."""
    from importlib.metadata import PackageNotFoundError, version

    def of(name: str) -> Optional[str]:
        try:
            return version(name)
        except PackageNotFoundError:
            return None
    return {"spacy": of("spacy"), "thinc": of("thinc")}


def versions_line() -> str:
    """'Python 3.12.1, spaCy 3.8.18, thinc 8.3.14': what a speed table's
    ratios against spaCy's components hold for."""
    v = package_versions()
    return f"Python {platform.python_version()}, spaCy {v['spacy']}, thinc {v['thinc']}"


def _call(conn, fn: Callable, args: tuple) -> None:
    # the processes fn starts (nlp.pipe's n_process) start as in a plain run,
    # not as this spawned one
    multiprocessing.set_start_method(multiprocessing.get_all_start_methods()[0], force=True)
    try:
        conn.send((True, json.dumps(fn(*args))))  # what a record can hold (spaCy's lists are not picklable)
    except BaseException as err:  # the parent says why; the traceback goes to stderr
        conn.send((False, f"{type(err).__name__}: {err}"[:300]))
        raise


def isolated(fn: Callable, *args, timeout: Optional[float] = None):
    """fn(*args) in a fresh interpreter (spawned: nothing of this process's
    memory or threads); its result (through JSON), RuntimeError with its
    error, or TimeoutError after `timeout` seconds (the process killed)."""
    ctx = multiprocessing.get_context("spawn")
    here, there = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_call, args=(there, fn, args))
    proc.start()
    there.close()
    try:
        if not here.poll(timeout):
            proc.kill()
            raise TimeoutError(f"killed after {timeout} s")
        ok, value = here.recv()
    except EOFError:  # died without a word (a signal, the OOM killer)
        ok, value = False, None
    finally:
        proc.join()
    if not ok:
        raise RuntimeError(value or f"exit code {proc.exitcode}")
    return json.loads(value)


def parse_spec(spec: str) -> Tuple[str, str, Dict[str, Any]]:
    """(name, model directory, {key: value}) of a model argument."""
    name, sep, rest = spec.partition("=")
    if not sep:
        name, rest = Path(spec.split("@")[0]).name, spec
    model, _, settings = rest.partition("@")
    overrides = {}
    for item in filter(None, settings.split(",")):
        key, eq, value = item.partition("=")
        if not eq:
            raise ValueError(f"setting {item!r} of {spec!r} is not KEY=VALUE")
        try:
            overrides[key] = srsly.json_loads(value)
        except ValueError:
            overrides[key] = value
    return name, model, overrides


def load(model: str, overrides: Dict[str, Any]):
    """spacy.load(model) with each override set on every component that has
    the setting; an override no component takes is an error."""
    import spacy
    from spacy.util import dot_to_dict, load_config

    components = load_config(Path(model) / "config.cfg", interpolate=False)["components"]
    changes: Dict[str, Any] = {}
    for key, value in overrides.items():
        hit = {c: path for c, block in components.items() if (path := _where(block, key))}
        if not hit:
            raise ValueError(f"no component of {model} has a setting {key!r}")
        changes.update({f"components.{c}.{path}": value for c, path in hit.items()})
    return spacy.load(model, config=dot_to_dict(changes))


def _where(block: Dict[str, Any], key: str) -> Optional[str]:
    """Where a component's config holds `key`: the key itself (dotted: a path
    into its blocks), or a block's setting of that name (depth in search)."""
    node = block
    for part in key.split("."):
        if not isinstance(node, dict) or part not in node:
            break
        node = node[part]
    else:
        return key
    return next((f"{name}.{key}" for name, sub in block.items() if isinstance(sub, dict) and key in sub), None)


def digest(docs) -> str:
    """What the components wrote: tags, heads, labels, entities and span groups."""
    from spacy.attrs import DEP, ENT_IOB, ENT_TYPE, HEAD, TAG

    h = hashlib.sha1()
    for doc in docs:
        h.update(doc.to_array([TAG, HEAD, DEP, ENT_IOB, ENT_TYPE]).tobytes())
        for key in sorted(doc.spans):
            h.update(repr([(s.start, s.end, s.label_) for s in doc.spans[key]]).encode())
    return h.hexdigest()


# where the components write probabilities (tagger.py, parser.py; the span
# groups' attrs["scores"])
PROBABILITY_KEYS = ("tag_probs", "tag_alternative", "tag_alternative_prob", "head_probs")


def probabilities_digest(docs) -> str:
    """What the components wrote with their outputs' probabilities: the
    docs' user_data entries and the span groups' scores, bit for bit (apart
    from `digest`, so that its figures stay comparable)."""
    h = hashlib.sha1()
    for doc in docs:
        for key in PROBABILITY_KEYS:
            value = doc.user_data.get(key)
            h.update(key.encode() + (b"-" if value is None else numpy.asarray(value).tobytes()))
        for key in sorted(doc.spans):
            scores = doc.spans[key].attrs.get("scores")
            h.update(b"-" if scores is None else numpy.asarray(scores).tobytes())
    return h.hexdigest()
