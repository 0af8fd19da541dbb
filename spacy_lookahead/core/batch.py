"""Decoding the docs of a batch on several threads.

The engine's decoders (`decode.decode`, `decode.nbest`,
`fr_perceptron.recognise`) release the GIL for the search of each doc, and
each call owns its scratch memory (workspace, beam, n-best buffers; the
weights are only read), so contiguous chunks of a batch decode in parallel
on plain Python threads: no OpenMP, no process start-up, no pickling of docs.
"""
import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Iterable, List

# chunks per thread: docs differ in length, so a few chunks each keep the
# threads busy to the end of the batch
CHUNKS_PER_THREAD = 4


def thread_count(n_threads: int) -> int:
    """The number of threads `n_threads` asks for: 0 = every core this
    process may run on."""
    if n_threads:
        return n_threads
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS
        return os.cpu_count() or 1


def in_threads(run: Callable[..., List[Any]], instances: Iterable, n_threads: int,
               *args: Any) -> List[Any]:
    """run(chunk, *args) over contiguous chunks of the instances on
    `n_threads` threads (1: in this thread, the instances made one at a
    time); the results in the instances' order, as run(instances, *args)
    gives them."""
    threads = thread_count(n_threads)
    if threads <= 1:
        return run(instances, *args)
    instances = list(instances)
    if len(instances) < 2:
        return run(instances, *args)
    parts = min(len(instances), threads * CHUNKS_PER_THREAD)
    size = -(-len(instances) // parts)
    chunks = [instances[i:i + size] for i in range(0, len(instances), size)]
    with ThreadPoolExecutor(max_workers=min(threads, len(chunks))) as pool:
        results = pool.map(lambda chunk: run(chunk, *args), chunks)
        return [out for part in results for out in part]
