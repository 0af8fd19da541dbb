"""The dev scores of parameter mixing's rounds, in processes beside the
driver's: spaCy's Scorer runs Python per token (~0.2-0.4 s a round for
EWT's dev set), which on the driver's thread paced every round once the
workers' rounds got as short (and took the GIL from a LocalCluster's
scheduler, which shares that process). Each round is scored on its own,
so rounds are scored side by side, and the driver only receives, saves
and reports."""
import multiprocessing
import pickle
import time
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any, Dict, List, Tuple

from .mixing import Table, prediction_weights

# per scoring process: its pipeline, the dev set's reference docs, the score weights
_STATE: Dict[str, Any] = {}


def score_parts(nlp, references: list, parts: List[Tuple[bytes, float]],
                score_weights: Dict[str, Any]) -> Tuple[float, Dict[str, Any]]:
    """spaCy's evaluation callback (its weighted score) over the dev set,
    each reference doc with the doc the workers annotated (part i holds
    docs i, i + P, ... as DocBin bytes, and the seconds its pipeline took)."""
    from spacy.tokens import DocBin
    from spacy.training import Example
    from spacy.training.loop import create_evaluation_callback

    from .lookups import fixed_msgpack_registries

    predicted: List[Any] = [None] * len(references)
    with fixed_msgpack_registries():
        for i, (data, _) in enumerate(parts):
            docs = DocBin(store_user_data=True).from_bytes(data).get_docs(nlp.vocab)
            for k, doc in zip(range(i, len(references), len(parts)), docs):
                predicted[k] = doc
    examples = [Example(doc, ref) for doc, ref in zip(predicted, references)]
    annotated: Any = Annotated(nlp, sum(seconds for _, seconds in parts))  # (spaCy wants a Language)
    return create_evaluation_callback(annotated, lambda nlp: examples, score_weights)()


class Annotated:
    """What spaCy's evaluation callback calls `nlp`: its `evaluate` scores
    examples the workers annotated (Language.evaluate without running the
    pipeline; "speed" from the workers' pipeline seconds)."""

    def __init__(self, nlp, seconds: float):
        self.nlp, self.seconds = nlp, seconds

    def evaluate(self, examples: list) -> Dict[str, Any]:
        from spacy.language import _replace_numpy_floats
        from spacy.scorer import Scorer

        results = Scorer(nlp=self.nlp).score(examples)
        results["speed"] = sum(len(eg.predicted) for eg in examples) / max(self.seconds, 1e-9)
        return _replace_numpy_floats(results)


def _start(setup: bytes, references: bytes, score_weights: Dict[str, Any]) -> None:
    from spacy.tokens import DocBin

    from .lookups import fixed_msgpack_registries

    nlp = pickle.loads(setup)
    with fixed_msgpack_registries():
        docs = list(DocBin(store_user_data=True).from_bytes(references).get_docs(nlp.vocab))
    _STATE.update(nlp=nlp, references=docs, score_weights=score_weights)


def _score(parts: List[Tuple[bytes, float]],
           model: Dict[str, Table]) -> Tuple[float, Dict[str, Any], float]:
    """A round's scores and the seconds they took: its model in the
    process's pipeline (the score hooks read the weights: w_mean_abs),
    then score_parts."""
    began = time.perf_counter()
    nlp = _STATE["nlp"]
    for name, table in model.items():
        nlp.get_pipe(name).set_weights(prediction_weights(table))
    score, scores = score_parts(nlp, _STATE["references"], parts, _STATE["score_weights"])
    return score, scores, time.perf_counter() - began


class Scorers:
    """`n` processes (spawned: the driver runs Dask's threads) holding the
    pipeline and the dev set's references; submit() scores a round."""

    def __init__(self, n: int, setup: bytes, references: bytes,
                 score_weights: Dict[str, Any]):
        if n < 1:
            raise ValueError(f"Scorers needs at least one process, got {n}")
        self.pool = ProcessPoolExecutor(max_workers=n, mp_context=multiprocessing.get_context("spawn"),
                                        initializer=_start,
                                        initargs=(setup, references, score_weights))
        self.n = n

    def submit(self, parts: List[Tuple[bytes, float]], model: Dict[str, Table]) -> Future:
        return self.pool.submit(_score, parts, model)

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)

    def __enter__(self) -> "Scorers":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
