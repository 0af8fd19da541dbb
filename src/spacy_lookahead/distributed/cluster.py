"""A Dask client: on an existing cluster (scheduler address), or on a
LocalCluster of worker processes started for the run."""
import logging
import os
from contextlib import contextmanager
from typing import Iterator, Optional


def require_distributed():
    """The `distributed` module, or an error that says how to install it."""
    try:
        import distributed
    except ImportError as err:
        raise ImportError(
            "spacy_lookahead.distributed needs Dask: install the optional extra with "
            "pip install \"spacy-lookahead[distributed]\" (or pip install \"dask[distributed]\")."
        ) from err
    return distributed


@contextmanager
def dask_client(scheduler: Optional[str] = None, workers: Optional[int] = None) -> Iterator:
    """A client of the cluster at `scheduler`, else of a LocalCluster with
    `workers` processes (default: the cores) of one thread each: the
    components release the GIL in C, but Python runs per doc, so processes,
    not threads, are what scales."""
    distributed = require_distributed()
    if scheduler:
        if workers:
            raise ValueError("--workers sizes a LocalCluster; with --scheduler the cluster "
                             "is already running: drop one of the two options.")
        with distributed.Client(scheduler) as client:
            yield client
        return
    n = workers or os.cpu_count() or 1
    if n < 1:
        raise ValueError(f"--workers must be at least 1, got {n}")
    import dask

    # No dashboard, so no use for the workers' statistical profiler, which
    # takes the GIL from the task every 10 ms to sample its stack (the
    # tasks run Python per doc), nor for the host statistics sampled every
    # 0.5 s. Every process's event loop wakes each tick (20 ms) only to see
    # whether it was blocked, and the workers check their memory every
    # 0.1 s: on a 2-core machine those wake-ups (scheduler, nannies,
    # workers) took 0.6 s of CPU from 12 s of annotating on two workers, and
    # the workers' GIL. Memory limits are still enforced, within a second.
    # The workers keep the config they start with.
    with dask.config.set({"distributed.worker.profile.enabled": False,
                          "distributed.admin.tick.interval": "1s",
                          "distributed.admin.system-monitor.interval": "5s",
                          "distributed.worker.memory.monitor-interval": "1s"}):
        cluster = distributed.LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                                           dashboard_address=None, silence_logs=logging.ERROR)
    with cluster, distributed.Client(cluster) as client:
        yield client


def _data(data):
    """A task that returns its argument: data put on the cluster this way is
    a task result, which the scheduler recomputes if its worker dies
    (scattered data would be lost with the worker)."""
    return data
