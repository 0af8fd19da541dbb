"""Learning curves from the JSONL files of the curves logger
(`spacy_lookahead.curves_logger.v1`, metrics/curves/NAME.jsonl), per epoch:
what the report's tables and the plots read."""
import json
from pathlib import Path
from typing import Dict, List, Optional

# score keys before spaCy's span-group keys: logs written earlier still read
LEGACY_KEYS = {"spans_chunks_f": "chunks_f", "spans_clauses_f": "clauses_f"}


def read_curve(path: Path) -> List[dict]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def score_of(scores: dict, key: str) -> Optional[float]:
    """scores[key], or its pre-spaCy-keys name in an older log."""
    return scores[key] if key in scores else scores.get(LEGACY_KEYS.get(key, key))


def epoch_points(rows: List[dict]) -> List[dict]:
    """The last evaluation logged in each epoch (step > 0: spaCy also scores
    the untrained model), as logged, with `epoch` counted from 1."""
    last: Dict[int, dict] = {row["epoch"]: row for row in rows if row["step"] > 0}
    return [{**last[epoch], "epoch": epoch + 1} for epoch in sorted(last)]


def per_epoch(rows: List[dict], score_key: str, component: str) -> List[Dict[str, Optional[float]]]:
    """One point per epoch: its score, the mean |w| of the training weights,
    and the time spent in update() in that epoch (the growth of the total)."""
    out, before = [], 0.0
    for point in epoch_points(rows):
        scores = point["scores"]
        spent = scores.get(f"{component}_update_seconds")
        out.append({"epoch": point["epoch"], "score": score_of(scores, score_key),
                    "w_mean_abs": scores.get(f"{component}_w_mean_abs"),
                    "update_seconds": None if spent is None else spent - before})
        before = spent if spent is not None else before
    return out


def best_evaluation(rows: List[dict]) -> Optional[dict]:
    """The evaluation `spacy train` saved as model-best: the highest score,
    the latest on ties (spaCy saves again on a tie), `epoch` counted from 1;
    None for an empty log."""
    if not rows:
        return None
    best = max(rows, key=lambda r: (r["score"], r["step"]))
    return {**best, "epoch": best["epoch"] + 1}
