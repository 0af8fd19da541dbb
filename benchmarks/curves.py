"""Per-epoch learning curves from the JSONL files of the curves logger
(`spacy_lookahead.curves_logger.v1`, metrics/curves/NAME.jsonl): shared by
report_sapo.py (tables) and plots.py (figures)."""
import json
from pathlib import Path
from typing import Dict, List, Optional

# (perceptron run, SAPO run, task title, score key, component name)
SAPO_PAIRS = [
    ("tagger_d1", "tagger_sapo", "POS tagging, EWT (dev tag accuracy)", "tag_acc", "lookahead_tagger"),
    ("chunker_d1", "chunker_sapo", "Chunking, CoNLL-2000 (test F1, logged curve)", "spans_chunks_f",
     "lookahead_chunker"),
    ("ner_rtl_d1", "ner_rtl_sapo", "Bio-NER, JNLPBA right-to-left (test F1, logged curve)", "ents_f",
     "lookahead_ner"),
]


# score keys before spaCy's span-group keys: logs written earlier still read
LEGACY_KEYS = {"spans_chunks_f": "chunks_f", "spans_clauses_f": "clauses_f"}


def score_of(scores: dict, key: str) -> Optional[float]:
    """scores[key], or its pre-spaCy-keys name in an older log."""
    return scores[key] if key in scores else scores.get(LEGACY_KEYS.get(key, key))


def read_curve(path: Path) -> List[dict]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def per_epoch(rows: List[dict], score_key: str, component: str) -> List[Dict[str, Optional[float]]]:
    """One point per epoch: the last evaluation logged in that epoch; the
    epoch's training time is the growth of the time spent in update()."""
    last: Dict[int, dict] = {}
    for row in rows:
        if row["step"] > 0:
            last[row["epoch"]] = row
    out, before = [], 0.0
    for epoch in sorted(last):
        scores = last[epoch]["scores"]
        spent = scores.get(f"{component}_update_seconds")
        out.append({"epoch": epoch + 1, "score": score_of(scores, score_key),
                    "w_mean_abs": scores.get(f"{component}_w_mean_abs"),
                    "update_seconds": None if spent is None else spent - before})
        before = spent if spent is not None else before
    return out


def epoch_points(rows: List[dict]) -> List[dict]:
    """The last evaluation logged in each epoch (step > 0), as logged, with
    `epoch` counted from 1: a run's per-epoch curve of any logged key."""
    last: Dict[int, dict] = {}
    for row in rows:
        if row["step"] > 0:
            last[row["epoch"]] = row
    return [{**last[epoch], "epoch": epoch + 1} for epoch in sorted(last)]


def best_evaluation(rows: List[dict]) -> Optional[dict]:
    """The evaluation `spacy train` saved as model-best: the highest score,
    the latest on ties (spaCy saves again on a tie), `epoch` counted from 1;
    None for an empty log."""
    if not rows:
        return None
    best = max(rows, key=lambda r: (r["score"], r["step"]))
    return {**best, "epoch": best["epoch"] + 1}
