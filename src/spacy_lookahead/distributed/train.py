"""`train`: iterative parameter mixing (IPM, McDonald, Hall & Mann 2010,
Figure 3) on a Dask cluster, from the config `spacy train` reads.

The training corpus is cut into S shards (example i goes to shard i mod S).
Each round, every shard trains one epoch, as `spacy train` runs an epoch
(shuffled with the config's seed, the config's batcher, `nlp.update`),
starting from the mixed weights; the shards' training weights are then mixed
(uniformly, or by each shard's number of updates: §4) and the next round
starts from the mix. One-shot mixing (§2.2) lets every shard train on its own
and mixes only for evaluation and saving.

Averaged weights. Training mixes the raw perceptron weights, as the paper
does; the model we evaluate and save holds averaged weights, as everywhere in
the project. Each shard's round starts a fresh average (time 0, see
Weights.begin_round), so its average is the mean of its weight vectors over
that round; the round's average is the mix of these, and the model is the
mean of the round averages weighted by the round's ticks (examples). This is
the average of every weight vector the run went through, as serial averaging
is over every epoch, and with one shard it is the serial average (the same
sum, up to rounding; bitwise after one round). SAPO predicts with its own
weights (no averaging): its model is the mix.

Changes, not tables. A shard sends what its epoch changed (the rows it
updated, as differences from the round's start: Weights.round_changes), and
the mixing tree sums those: with uniform or update-weighted coefficients
(they sum to 1), sum_i mu_i w_i = start + sum_i mu_i (w_i - start). A
round's changes are a small part of the table (10-20% of the tagger's rows
after the first round), and every worker keeps its table from round to
round (Weights.end_round puts it back, apply_changes moves it on), so
serialising, shipping and mixing cost what the shards changed, not the
model. The start and the model as whole tables are built off the shards'
path (priority below the next start), for the model only.

Evaluation. Each round's model annotates the dev set on the workers, a
part each (`evaluate = "workers"`, the default), where the model already
is; the driver only scores what comes back (spaCy's Scorer and weighted
score, the components' score hooks) and saves. "driver" annotates there
too, as `spacy train` does: the same scores, but a serial share of every
round that caps the speed-up (about 5x, whatever the workers).
"""
import collections
import os
import pickle
import random
import shutil
import sys
import threading
import time
import warnings
from concurrent.futures import Future
from contextlib import ExitStack
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

from .cluster import _data, dask_client
from .mixing import Table, coefficients, mix, plus, prediction_weights, table_of
from .scoring import Scorers, score_parts

RETRIES = 2
_TRAINING = threading.Lock()
MIXINGS = ("iterative", "oneshot")
WEIGHTINGS = ("uniform", "updates")
EVALUATIONS = ("workers", "driver")
# processes scoring the rounds beside the driver (distributed/scoring.py): two
# keep up with rounds twice as short as one scoring (~0.2-0.4 s a round for
# EWT's dev set), which 8 workers make
SCORERS = 2

# per worker process: the pipeline and training settings of the run under way
_RUNS: Dict[str, Any] = {}


def _worker_setup(run_id: str, setup: bytes):
    if run_id not in _RUNS:
        from spacy.schemas import ConfigSchemaTraining
        from spacy.util import registry

        nlp = pickle.loads(setup)
        T = registry.resolve(nlp.config.interpolate()["training"], schema=ConfigSchemaTraining)
        _RUNS.clear()
        _RUNS[run_id] = (nlp, T, {})  # the pipeline, settings, examples of each shard
    return _RUNS[run_id]


def _start(cache: Dict[Any, Any], nlp, name: str, chain: str, changes: List[Dict[str, Table]]):
    """The worker's training table of component `name` at the start of a
    round: the pipeline's initial weights plus `changes` (each round's
    changes so far, in order). The worker keeps the table of each chain
    (the mix's in iterative mixing; a shard's own in one-shot) and applies
    only the changes it has not applied yet; a worker that never saw the
    chain, or is ahead of it (a task of an earlier round recomputed),
    starts over from the initial weights. The same changes in the same
    order give the same table bitwise, so it does not matter which
    worker a shard lands on."""
    from ..core.weights import Weights

    initial = cache.setdefault("initial", {})
    if name not in initial:  # before this worker trains it
        initial[name] = nlp.get_pipe(name).weights.to_bytes()
    tables = cache.setdefault("tables", {})
    weights, applied = tables.get((chain, name), (None, 0))
    if weights is None or applied > len(changes):
        weights, applied = Weights().from_bytes(initial[name]), 0
    tables.pop((chain, name), None)  # (an error while applying: started over next time)
    for change in changes[applied:]:
        weights.apply_changes(*change[name])
    tables[(chain, name)] = (weights, len(changes))
    return weights


def train_shard(run_id: str, setup: bytes, shard: Dict[str, bytes], names: List[str], chain: str,
                changes: List[Dict[str, Table]], round_index: int, shard_index: int,
                before: Optional[Callable[[int, int], None]] = None) -> Dict[str, Any]:
    """The task: one epoch of `spacy train` on one shard, from the initial
    weights plus `changes` (see _start; iterative mixing: the mixes of
    every earlier round's changes); returns what the epoch changed in each
    component (Weights.round_changes: raw and averaged, as differences from
    the start, only the rows it updated), its ticks and updates. The
    worker's table is put back as it was (end_round), ready for the next
    shard or round."""
    from spacy.tokens import DocBin
    from spacy.training import Example

    from .lookups import fixed_msgpack_registries

    if before is not None:
        before(round_index, shard_index)
    nlp, T, cache = _worker_setup(run_id, setup)
    with _TRAINING:  # one shard at a time per process: they share the tables
        began = time.perf_counter()
        if shard_index not in cache:  # spacy train too keeps its examples across epochs
            with fixed_msgpack_registries():
                predicted = DocBin(store_user_data=True).from_bytes(shard["predicted"]).get_docs(nlp.vocab)
                reference = DocBin(store_user_data=True).from_bytes(shard["reference"]).get_docs(nlp.vocab)
                cache[shard_index] = [Example(p, r) for p, r in zip(predicted, reference)]
        examples = cache[shard_index]
        tables = {name: _start(cache, nlp, name, chain, changes) for name in names}
        for name, weights in tables.items():
            pipe = nlp.get_pipe(name)
            if pipe.weights is not weights:
                pipe.set_weights(weights)
            if hasattr(pipe, "_seen") and pipe.cfg.get("train_size"):
                # SAPO's learning rate decays per epoch of the whole training set
                pipe._seen = round_index * pipe.cfg["train_size"]
        begun = []
        try:
            for weights in tables.values():
                weights.begin_round()
                begun.append(weights)
            losses = _epoch(nlp, T, examples, round_index, shard_index)
            out = {}
            for name, weights in tables.items():
                raw = predicts_with_raw_weights(nlp.get_pipe(name))
                out[name] = {"raw": weights.round_changes(False),
                             "avg": None if raw else weights.round_changes(True),
                             "ticks": int(weights.time), "updates": float(losses.get(name, 0.0))}
        finally:
            for weights in begun:
                weights.end_round()
        return {"components": out, "examples": len(examples), "pid": os.getpid(),
                "seconds": time.perf_counter() - began}


def _epoch(nlp, T: Dict[str, Any], examples: list, round_index: int,
           shard_index: int) -> Dict[str, float]:
    """One epoch of spacy train's loop over a shard's examples; its losses."""
    from spacy.training.loop import subdivide_batch
    from spacy.util import fix_random_seed

    # spacy train shuffles once per epoch after fix_random_seed(seed): the
    # round-th shuffle of shard 0 is its epoch's order (shards differ by seed).
    # A private generator in the same state as the seeded global one: the
    # worker's other threads (Dask's event loop) draw from the global one,
    # and a draw between seeding and shuffling changed the order (runs on 2
    # workers differed from round 3 on).
    seed = None if T["seed"] is None else T["seed"] + shard_index
    if seed is not None:
        fix_random_seed(seed)
    rng = random.Random(seed)
    order = list(range(len(examples)))
    for _ in range(round_index + 1):
        rng.shuffle(order)
    losses: Dict[str, float] = {}
    for batch in T["batcher"]([examples[i] for i in order]):
        # as spacy train's loop: each batch sorted by length (subdivide_batch)
        for subbatch in subdivide_batch(batch, T["accumulate_gradient"]):
            nlp.update(subbatch, drop=T["dropout"], losses=losses, sgd=False,
                       exclude=T["frozen_components"], annotates=T["annotating_components"])
    return losses


def annotate_dev_part(run_id: str, setup: bytes, model: tuple, part: bytes) -> tuple:
    """The task: a part of the dev set (DocBin bytes of its docs as read)
    annotated by the round's model (`_running_model`'s result); returns
    their DocBin bytes and the seconds the pipeline took."""
    from spacy.tokens import DocBin

    from .lookups import fixed_msgpack_registries

    _, _, cache = _worker_setup(run_id, setup)
    if "evaluation" not in cache:  # its own pipeline: a shard may train beside it
        cache["evaluation"] = pickle.loads(setup)
    nlp = cache["evaluation"]
    for name, table in model[0].items():
        nlp.get_pipe(name).set_weights(prediction_weights(table))
    with fixed_msgpack_registries():
        docs = list(DocBin(store_user_data=True).from_bytes(part).get_docs(nlp.vocab))
    began = time.perf_counter()
    docs = list(nlp.pipe(docs))
    return _docbin(docs), time.perf_counter() - began


def predicts_with_raw_weights(pipe: Any) -> bool:
    """Whether the component predicts with its current weights, not their
    average (a transition component's learner says; SAPO's by default)."""
    learner = getattr(pipe, "learner", None)
    return learner is not None and not learner.averages


def _stats(result: Dict[str, Any]) -> Dict[str, Any]:
    """The task picking a shard's counts out of its result, on the worker
    holding it: what the coefficients and the driver's record need, without
    the tables."""
    return {"components": {name: {"ticks": c["ticks"], "updates": c["updates"]}
                           for name, c in result["components"].items()},
            "examples": result["examples"], "pid": result["pid"], "seconds": result["seconds"]}


def _coefficients(weighting: str, stats: List[Dict[str, Any]]) -> Dict[str, List[float]]:
    """The round's mixing coefficients per component (mixing.coefficients
    of the shards' updates, in shard order)."""
    return {name: coefficients(weighting, [st["components"][name]["updates"] for st in stats])
            for name in stats[0]["components"]}


def _scaled(result: Dict[str, Any], sides: Dict[str, str], mus: Dict[str, List[float]],
            index: int, base: Optional[Dict[str, Table]] = None) -> Dict[str, Table]:
    """A leaf of the mixing tree: shard `index`'s changes of each component
    (sides[name]: "raw" or "avg"; with `base`, its start table: base +
    changes) times its coefficient, the product mixing.mix takes (1: the
    table as it is)."""
    out = {}
    for name, side in sides.items():
        table = result["components"][name][side]
        if base is not None:
            table = plus(base[name], table)
        keys, lengths, classes, ws = table
        mu = mus[name][index]
        out[name] = (keys, lengths, classes, ws if mu == 1.0 else ws * mu)
    return out


def _mix_pair(a: Dict[str, Table], b: Dict[str, Table]) -> Dict[str, Table]:
    """A node of the mixing tree: the sum of two (scaled) tables per component."""
    return {name: mix([a[name], b[name]], [1.0, 1.0]) for name in a}


def pairwise(items: List[Any], combine: Callable[[Any, Any, int, int], Any]) -> Any:
    """A tree reduction in shard order: items 2k and 2k+1 combined level
    by level (an odd one out goes up as it is); combine(a, b, level, k).
    Floating point: the flat mix sums every entry left to right, the tree
    in pairs; the same sum for 1 or 2 shards (bitwise), within rounding
    (1e-12 relative, tests/test_distributed_tree.py) for more."""
    if not items:
        raise ValueError("pairwise() needs at least one item")
    level = 0
    while len(items) > 1:
        paired = [combine(items[i], items[i + 1], level, i // 2)
                  for i in range(0, len(items) - 1, 2)]
        items = paired + items[len(paired) * 2:]
        level += 1
    return items[0]


def tree_mix(tables: List[Dict[str, Table]], mus: Dict[str, List[float]]) -> Dict[str, Table]:
    """mixing.mix of each component's tables with coefficients `mus`, as
    the workers compute it (the leaves and nodes of mix_tree), in one
    process: the reference for the tests."""
    leaves = [{name: (t[0], t[1], t[2], t[3] if mus[name][i] == 1.0 else t[3] * mus[name][i])
               for name, t in shard.items()} for i, shard in enumerate(tables)]
    return pairwise(leaves, lambda a, b, level, k: _mix_pair(a, b))


def mix_tree(client, results: list, sides: Dict[str, str], mus, key: str, priority: int = 0,
             bases: Optional[list] = None):
    """The future of the round's mix of the shards' changes (`results`, in
    shard order; coefficients `mus`, a future; with `bases`, of their start
    tables plus changes), reduced in pairs on the workers: the driver
    neither receives nor mixes the shards' tables, and no worker mixes more
    than two at a time."""
    leaves = [client.submit(_scaled, res, sides, mus, i, None if bases is None else bases[i],
                            key=f"{key}-leaf-{i}", priority=priority)
              for i, res in enumerate(results)]
    return pairwise(leaves, lambda a, b, level, k: client.submit(
        _mix_pair, a, b, key=f"{key}-{level}-{k}", priority=priority))


def _plus(start: Dict[str, Table], changes: Dict[str, Table]) -> Dict[str, Table]:
    """Start tables plus changes, per component (mixing.plus): the next
    round's start as a table (what the workers' tables hold, up to
    entries of 0), or a round's average."""
    return {name: plus(table, changes[name]) for name, table in start.items()}


def _own_changes(result: Dict[str, Any]) -> Dict[str, Table]:
    """One-shot mixing: a shard goes on from its own start plus its own
    raw changes."""
    return {name: c["raw"] for name, c in result["components"].items()}


def _running_model(previous: Optional[tuple], round_avg: Dict[str, Table],
                   stats: List[Dict[str, Any]], mus: Dict[str, List[float]],
                   sapo: Dict[str, bool]) -> tuple:
    """The model after a round, and the ticks it has seen: per component
    the mix of the model so far (`previous`: the last round's result) and
    the round's average, weighted by their ticks (SAPO and the first round:
    the round's table alone). The round's ticks are each shard's ticks
    weighted by its coefficient (the last component's count the round)."""
    model, seen = previous if previous is not None else (None, 0.0)
    out, ticks = {}, 0.0
    for name, table in round_avg.items():
        ticks = sum(m * st["components"][name]["ticks"] for m, st in zip(mus[name], stats))
        if seen and not sapo[name]:
            total = seen + ticks
            out[name] = mix([model[name], table], [seen / total, ticks / total])
        else:
            out[name] = table
    return out, seen + ticks


def train(config_path: Path, output: Optional[Path], *, overrides: Optional[Dict[str, Any]] = None,
          scheduler: Optional[str] = None, workers: Optional[int] = None, shards: int = 2,
          mixing: str = "iterative", rounds: Optional[int] = None, weighting: str = "uniform",
          client: Any = None, before: Optional[Callable[[int, int], None]] = None,
          evaluate: str = "workers", scorers: int = SCORERS,
          stdout=sys.stdout) -> List[Dict[str, Any]]:
    """Train the config's pipeline by parameter mixing; write model-best and
    model-last into `output` (if given); return one record per round.
    `scorers`: processes beside the driver that score the rounds' dev
    sets the workers annotated (0: the driver scores each round itself)."""
    if mixing not in MIXINGS:
        raise ValueError(f"unknown mixing {mixing!r}: use one of {', '.join(MIXINGS)}.")
    if evaluate not in EVALUATIONS:
        raise ValueError(f"unknown evaluate {evaluate!r}: use one of {', '.join(EVALUATIONS)}.")
    if weighting not in WEIGHTINGS:
        raise ValueError(f"unknown weighting {weighting!r}: use one of {', '.join(WEIGHTINGS)}.")
    if shards < 1:
        raise ValueError(f"--shards must be at least 1, got {shards}")
    if scorers < 0:
        raise ValueError(f"--scorers must be at least 0, got {scorers}")
    if not Path(config_path).exists():
        raise FileNotFoundError(f"config {config_path} does not exist.")
    if output is not None:  # before round 1, not after it
        _check_output(Path(output))
    job = Job.create(Path(config_path), overrides or {}, shards, rounds, stdout)
    if client is None:
        with dask_client(scheduler, workers) as own:
            return job.run(own, output, mixing, weighting, before, stdout, evaluate, scorers)
    return job.run(client, output, mixing, weighting, before, stdout, evaluate, scorers)


def _check_output(output: Path) -> None:
    """An output folder that can be made and written to."""
    if output.exists() and not output.is_dir():
        raise FileExistsError(f"--output {output} is a file, not a folder: give a folder for "
                              "model-best and model-last.")
    try:
        output.mkdir(parents=True, exist_ok=True)
        probe = output / f".write-test-{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as err:
        raise OSError(f"--output {output} cannot be written to ({err}): give a folder you "
                      "can write to.") from None


class Job:
    """The driver's side: the initialized pipeline (to evaluate and save),
    the shards and the rounds."""

    def __init__(self, nlp, T, dev_corpus, names, shards, rounds):
        self.nlp, self.T, self.dev_corpus = nlp, T, dev_corpus
        self.names, self.shards, self.rounds = names, shards, rounds

    @classmethod
    def create(cls, config_path: Path, overrides: Dict[str, Any], n_shards: int,
               rounds: Optional[int], stdout) -> "Job":
        from spacy.schemas import ConfigSchemaTraining
        from spacy.training.initialize import init_nlp
        from spacy.util import load_config, registry, resolve_dot_names

        from ..pipes.base import SearchPipe
        from .lookups import fixed_msgpack_registries
        from .reading import remembering_train_corpus

        config = load_config(config_path, overrides=overrides, interpolate=False)
        with remembering_train_corpus(config) as take, fixed_msgpack_registries():
            nlp = init_nlp(config)  # as spacy train: seed, labels, the components' settings
            examples = take(nlp)  # the examples init_nlp read: the corpus is read once
        config = nlp.config.interpolate()
        T = registry.resolve(config["training"], schema=ConfigSchemaTraining)
        train_corpus, dev_corpus = resolve_dot_names(config, [T["train_corpus"], T["dev_corpus"]])
        frozen = set(T["frozen_components"])
        names = [name for name, pipe in nlp.pipeline if name not in frozen
                 and isinstance(pipe, SearchPipe)]
        others = [name for name, pipe in nlp.pipeline if name not in frozen and name not in names
                  and getattr(pipe, "is_trainable", False)]
        if others:
            raise ValueError(f"components {others} are trainable but not spacy-lookahead "
                             "components: parameter mixing cannot mix them. Freeze them "
                             "(training.frozen_components) or train them with spacy train.")
        if not names:
            raise ValueError("the config trains no spacy-lookahead component: nothing to mix.")
        if rounds is None:
            rounds = T["max_epochs"]
        if rounds < 1:
            raise ValueError(f"the number of rounds must be at least 1 (got {rounds}; "
                             "training.max_epochs <= 0 means no limit in spacy train: give --rounds).")
        with fixed_msgpack_registries():
            if examples is None:
                examples = list(train_corpus(nlp))
            if len(examples) < n_shards:
                raise ValueError(f"{len(examples)} training examples cannot fill {n_shards} shards.")
            shards = []
            for i in range(n_shards):
                part = examples[i::n_shards]
                shards.append({side: _docbin([getattr(eg, side) for eg in part])
                               for side in ("predicted", "reference")})
        print(f"train: {len(examples)} examples in {n_shards} shards, {rounds} rounds; "
              f"components {', '.join(names)}", file=stdout)
        return cls(nlp, T, dev_corpus, names, shards, rounds)

    def run(self, client, output: Optional[Path], mixing: str, weighting: str, before,
            stdout, evaluate_on: str = "workers", n_scorers: int = 0) -> List[Dict[str, Any]]:
        """The rounds. The workers chain them without the driver: round r+1's
        shards start from round r's mix (iterative; one-shot: each shard
        from its own raw tables), reduced in pairs on the workers (mix_tree).
        The model (the running average of the rounds' mixed averages) is
        reduced and updated on the workers too, and annotates the dev set
        there, a part per worker (evaluate_on = "workers"); the driver
        receives the shards' counts, the one mixed model of each round and
        the annotated dev set, has them scored (by `n_scorers` processes
        beside it, rounds side by side; 0: itself) and saves while the next
        rounds train."""
        from spacy.training.loop import create_evaluation_callback

        from .lookups import fixed_msgpack_registries

        run_id = os.urandom(8).hex()
        began = time.perf_counter()  # round 1 counts from here: shipping the data, reading dev
        cpu = time.process_time()
        # The pipeline, the shards and the first start live on the workers as
        # results of tasks, not scattered data: if the worker holding them
        # dies, the scheduler recomputes them (scattered data would be lost).
        # Later starts and models are task results too; a lost worker's are
        # recomputed from their lineage.
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*(Large object|Sending large graph).*")
            setup_bytes = pickle.dumps(self.nlp)
            setup = client.submit(_data, setup_bytes, key=f"ipm-setup-{run_id}")
            shard_data = [client.submit(_data, shard, key=f"ipm-shard-{run_id}-{i}")
                          for i, shard in enumerate(self.shards)]
            initial = client.submit(
                _data, {name: table_of(self.nlp.get_pipe(name).weights) for name in self.names},
                key=f"ipm-start-{run_id}-0")
        # spaCy's evaluation on dev examples read once: the corpus reader
        # costs ~1 ms a doc (more than tagging it). Language.evaluate copies
        # the predicted docs it annotates, so the examples stay as read.
        with fixed_msgpack_registries():
            dev = list(self.dev_corpus(self.nlp))
        evaluate = create_evaluation_callback(self.nlp, lambda nlp: dev, self.T["score_weights"])
        # the learners that predict with their current weights (SAPO's): their
        # model is the mix of the raw tables; the others', of the averages
        sapo = {name: predicts_with_raw_weights(self.nlp.get_pipe(name)) for name in self.names}
        model_sides = {name: "raw" if sapo[name] else "avg" for name in self.names}

        # Shard i trains on worker i mod W in every round: a worker keeps its
        # shards' examples (reading a shard costs ~1 s), and left free, the
        # scheduler moves shards to where their largest input (a table) is.
        # The restriction is loose: if that worker dies, another one takes over.
        workers = sorted(client.scheduler_info()["workers"])
        # the dev set's docs as read, a part per worker (example i in part i mod P)
        n_parts = min(max(1, len(workers)), len(dev)) if evaluate_on == "workers" else 0
        dev_parts = [client.submit(_data, _docbin([eg.predicted for eg in dev[i::n_parts]]),
                                   key=f"ipm-dev-{run_id}-{i}") for i in range(n_parts)]

        def submit(r: int, chains: list) -> list:
            """Round r's shards; shard i starts from the initial weights plus
            chains[i] (its chain's changes of rounds 0..r-1)."""
            return [client.submit(train_shard, run_id, setup, shard_data[i], self.names,
                                  "mix" if mixing == "iterative" else f"shard-{i}", chains[i],
                                  r, i, before, pure=False, retries=RETRIES,
                                  key=f"ipm-{run_id}-{r}-{i}",
                                  priority=3 if mixing == "iterative" else 0,
                                  workers=[workers[i % len(workers)]] if workers else None,
                                  # (Dask refuses it without workers: none had joined yet)
                                  allow_other_workers=bool(workers))
                    for i in range(len(self.shards))]

        # Priorities (iterative mixing): the shards first, then the mix they
        # start from, then the model and its dev parts (off the shards' path:
        # a worker that has both a dev part and its next shard ready trains
        # first, and annotates while it waits for the round's mix). One-shot
        # shards wait for no mix: first, they would train every round before
        # any round's model, so they come last.
        def coefficients_of(r: int, results: list):
            stats = [client.submit(_stats, res, key=f"ipm-stats-{run_id}-{r}-{i}", priority=2)
                     for i, res in enumerate(results)]
            if weighting == "uniform":  # known now: a shard's leaf of the mix need not
                # wait for every shard's counts (the mix's path: the last shard's leaf
                # and the tree above it)
                return stats, {name: coefficients(weighting, [0.0] * len(results))
                               for name in self.names}
            return stats, client.submit(_coefficients, weighting, stats,
                                        key=f"ipm-mu-{run_id}-{r}", priority=2)

        # What the workers start from is their tables plus the chain of
        # changes (iterative: every round's mix of the shards' raw changes,
        # reduced in pairs; one-shot: each shard's own); the model needs the
        # start as a table too: `starts` (per shard, a future) follows the
        # chains, off the shards' path.
        n = len(self.shards)
        chains: List[list] = [[] for _ in range(n)]
        starts = [initial] * n
        pending: List[Any] = []  # per round: the shards' counts and the model (futures)
        model = None
        futures = submit(0, chains)
        for r in range(self.rounds):
            stats, mus = coefficients_of(r, futures)
            last = r + 1 == self.rounds  # (no next round to start: no next start)
            if mixing == "iterative":
                if not last or all(sapo.values()):
                    mixed = mix_tree(client, futures, {name: "raw" for name in self.names}, mus,
                                     f"ipm-mix-{run_id}-{r}", priority=2)
                    chains = [chain + [mixed] for chain in chains]
                    after = client.submit(_plus, starts[0], mixed,
                                          key=f"ipm-start-{run_id}-{r + 1}", priority=1)
                    next_starts = [after] * n
                if all(sapo.values()):  # the model is the mix of the raw tables: the next start
                    round_avg = after
                else:
                    changes = mix_tree(client, futures, model_sides, mus,
                                       f"ipm-avg-{run_id}-{r}", priority=1)
                    round_avg = client.submit(_plus, starts[0], changes,
                                              key=f"ipm-avgtable-{run_id}-{r}", priority=1)
            else:
                round_avg = mix_tree(client, futures, model_sides, mus, f"ipm-avg-{run_id}-{r}",
                                     priority=1, bases=starts)
                if not last:
                    own = [client.submit(_own_changes, res, key=f"ipm-own-{run_id}-{r}-{i}",
                                         priority=2) for i, res in enumerate(futures)]
                    chains = [chain + [o] for chain, o in zip(chains, own)]
                    next_starts = [client.submit(_plus, st, o,
                                                 key=f"ipm-start-{run_id}-{r + 1}-{i}", priority=1)
                                   for i, (st, o) in enumerate(zip(starts, own))]
            model = client.submit(_running_model, model, round_avg, stats, mus, sapo,
                                  key=f"ipm-model-{run_id}-{r}", priority=1)
            annotated = [client.submit(annotate_dev_part, run_id, setup, model, part,
                                       key=f"ipm-dev-{run_id}-{r}-{i}", priority=1)
                         for i, part in enumerate(dev_parts)]
            pending.append((stats, model, annotated))
            if not last:
                starts = next_starts
                futures = submit(r + 1, chains)
        del futures, round_avg, model, annotated, starts, chains
        history: List[Dict[str, Any]] = []
        best: List[Optional[float]] = [None]
        clock = {"began": began, "cpu": cpu}
        waiting: collections.deque = collections.deque()  # rounds whose scores are on the way

        def finish(r: int, counts: list, tables: Dict[str, Table], scoring: Any,
                   record: Dict[str, Any]) -> None:
            """Round r's record once its scores are in: best so far or last,
            the model is saved (the driver's pipeline holding it); the
            driver's rhythm and CPU are counted from the last round's end."""
            score, scores, seconds = scoring.result() if isinstance(scoring, Future) else scoring
            record.update(round=r + 1, score=score, scores=scores, evaluate_seconds=seconds,
                          losses={n: sum(c["components"][n]["updates"] for c in counts)
                                  for n in self.names},
                          # each shard's epoch in its worker: the round's critical path is the max
                          shard_seconds=[c["seconds"] for c in counts])
            history.append(record)
            is_best = best[0] is None or score > best[0]
            best[0] = score if is_best else best[0]
            if output is not None and (is_best or r + 1 == self.rounds):
                self._hold(tables)
                self._save(Path(output), is_best, r + 1 == self.rounds)
            # the driver's rhythm: since the last round's record (its score came in)
            record["seconds"] = time.perf_counter() - clock["began"]
            # the driver's CPU (with a LocalCluster: its scheduler's too) since the last round
            record["driver_cpu_seconds"] = time.process_time() - clock["cpu"]
            print(f"  round {r + 1}/{self.rounds}: score {score:.4f}"
                  f"{' (best)' if is_best else ''}; losses "
                  + ", ".join(f"{n} {v:.0f}" for n, v in record["losses"].items())
                  + f"; {record['train_seconds']:.1f}s waiting for the shards, "
                  f"{record['seconds']:.1f}s after the last round's score", file=stdout, flush=True)
            clock["began"], clock["cpu"] = time.perf_counter(), time.process_time()

        received = began
        with ExitStack() as stack:
            scorers = None
            if dev_parts and n_scorers:
                scorers = stack.enter_context(Scorers(
                    n_scorers, setup_bytes, _docbin([eg.reference for eg in dev]),
                    self.T["score_weights"]))
            for r in range(self.rounds):
                stats, model, annotated = pending[r]
                pending[r] = None  # (the model so far is freed once the next one is made)
                counts = client.gather(stats)  # in shard order
                # waiting for the round's shards, since the last round was received
                record = {"train_seconds": time.perf_counter() - received}
                waited = time.perf_counter()
                tables = model.result()[0]
                del stats, model
                received = time.perf_counter()
                record["model_seconds"] = received - waited
                if scorers is not None:  # scored beside the driver, rounds side by side
                    scoring: Any = scorers.submit(client.gather(annotated), tables)
                else:  # the driver's pipeline holds the model: the score hooks read it
                    self._hold(tables)
                    evaluating = time.perf_counter()
                    score, scores = (score_parts(self.nlp, [eg.reference for eg in dev],
                                                 client.gather(annotated), self.T["score_weights"])
                                     if annotated else evaluate())
                    scoring = (score, scores, time.perf_counter() - evaluating)
                del annotated
                waiting.append((r, counts, tables, scoring, record))
                # in round order; no more rounds in flight than processes scoring them
                while waiting and (len(waiting) > (scorers.n if scorers else 0)
                                   or r + 1 == self.rounds
                                   or (isinstance(waiting[0][3], Future) and waiting[0][3].done())):
                    finish(*waiting.popleft())
        return history

    def _hold(self, tables: Dict[str, Table]) -> None:
        """A round's model (its tables) into the driver's pipeline."""
        for name, table in tables.items():
            self.nlp.get_pipe(name).set_weights(prediction_weights(table))

    def _save(self, output: Path, is_best: bool, is_last: bool) -> None:
        """model-best when the round scores best, model-last after the last
        round (spacy train's layout): ordinary pipeline directories, each
        written under a temporary name and renamed."""
        output.mkdir(parents=True, exist_ok=True)
        for name, wanted in (("model-best", is_best), ("model-last", is_last)):
            if not wanted:
                continue
            tmp = output / f".{name}.tmp"
            shutil.rmtree(tmp, ignore_errors=True)
            self.nlp.to_disk(tmp)
            shutil.rmtree(output / name, ignore_errors=True)
            os.replace(tmp, output / name)


def _docbin(docs: list) -> bytes:
    """DocBin bytes; user data only when there is some (srsly packs it at
    ~0.2 ms a doc)."""
    from spacy.tokens import DocBin
    return DocBin(docs=docs, store_user_data=any(d.user_data for d in docs)).to_bytes()
