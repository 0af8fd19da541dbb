"""Decoding the docs of a batch on several threads.

The engine's decoders (`decode.decode`, `decode.nbest`,
`fr_perceptron.recognise`) release the GIL for the search of each doc, and
each call owns its scratch memory (workspace, beam, n-best buffers; the
weights are only read), so contiguous chunks of a batch decode in parallel
on plain Python threads: no OpenMP, no process start-up, no pickling of docs.
A batch decoded at once (`decode.decode_docs`, a lattice pass, the phrase
recognisers' units) goes to C threads instead (`threads.RunsStarted`), which
never take the GIL.
"""
import os
import threading
from concurrent.futures import ThreadPoolExecutor, wait
from typing import Any, Callable, Dict, Iterable, List, Tuple

from .threads import CHUNKS_PER_THREAD


def thread_count(n_threads: int) -> int:
    """The number of threads `n_threads` asks for: 0 = every core this
    process may run on."""
    if n_threads:
        return n_threads
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS
        return os.cpu_count() or 1


def chunks_for(instances: list, threads: int) -> List[list]:
    """Contiguous chunks of the instances for `threads` threads."""
    parts = max(1, min(len(instances), threads * CHUNKS_PER_THREAD))
    size = max(1, -(-len(instances) // parts))
    return [instances[i:i + size] for i in range(0, len(instances), size)]


def ranges_for(n: int, threads: int) -> List[Tuple[int, int]]:
    """Contiguous ranges [lo, hi) over n items for `threads` threads, cut as
    chunks_for cuts a list (one range for one thread)."""
    if threads <= 1 or n < 2:
        return [(0, n)]
    parts = min(n, threads * CHUNKS_PER_THREAD)
    size = -(-n // parts)
    return [(lo, min(n, lo + size)) for lo in range(0, n, size)]


def in_threads(run: Callable[..., List[Any]], instances: Iterable, n_threads: int,
               *args: Any) -> List[Any]:
    """run(chunk, *args) over contiguous chunks of the instances on
    `n_threads` threads (1: in this thread, the instances made one at a
    time); the results in the instances' order, as run(instances, *args)
    gives them."""
    threads = thread_count(n_threads)
    if threads <= 1 or in_a_pool_thread():  # (a task waiting on its own pool could deadlock)
        return run(instances, *args)
    instances = list(instances)
    if len(instances) < 2:
        return run(instances, *args)
    return Started(shared_pool(threads), run, chunks_for(instances, threads), args).results()


# One pool of each size per process, kept across batches: starting
# `threads` threads for every batch cost more than decoding a batch of short
# docs on 8+ threads. Keyed by the process too: a child forked by
# nlp.pipe(n_process=...) inherits the pool but not its threads.
_POOLS: Dict[Tuple[int, int], ThreadPoolExecutor] = {}
_POOLS_LOCK = threading.Lock()
POOL_THREAD_NAME = "spacy-lookahead-decode"


def _forget_pools() -> None:
    """In a forked child: no pools (their threads stayed in the parent), and
    a fresh lock (the parent's may have been held by another thread)."""
    global _POOLS_LOCK
    _POOLS.clear()
    _POOLS_LOCK = threading.Lock()


if hasattr(os, "register_at_fork"):  # (not on Windows, which does not fork)
    os.register_at_fork(after_in_child=_forget_pools)


def in_a_pool_thread() -> bool:
    """Whether this thread is one of the shared pools' threads."""
    return threading.current_thread().name.startswith(POOL_THREAD_NAME)


def shared_pool(threads: int) -> ThreadPoolExecutor:
    """This process's pool of `threads` threads (made on first use)."""
    key = (os.getpid(), threads)
    with _POOLS_LOCK:
        pool = _POOLS.get(key)
        if pool is None:
            for old in [k for k in _POOLS if k[0] != key[0]]:
                del _POOLS[old]  # a parent's, without its threads here
            pool = _POOLS[key] = ThreadPoolExecutor(max_workers=threads,
                                                    thread_name_prefix=POOL_THREAD_NAME)
        return pool


class Started:
    """run(chunk, *args) of each chunk submitted to a pool of threads; the
    results, in the chunks' order, when asked for."""

    def __init__(self, pool: ThreadPoolExecutor, run: Callable[..., List[Any]], chunks: List[list],
                 args: tuple) -> None:
        self.futures = [pool.submit(run, chunk, *args) for chunk in chunks]

    def results(self) -> List[Any]:
        # every chunk finished before an error is raised: none is left
        # running on the shared pool ahead of the next batch
        wait(self.futures)
        return [out for future in self.futures for out in future.result()]
