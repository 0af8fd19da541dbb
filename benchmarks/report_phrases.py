"""The results.md section of the FR phrase recognisers (Carreras et al. 2005):
clause identification (FR-Perceptron vs classification feedback), the
filtering layer per epoch (Figure 5), the FR chunker next to the
lookahead_chunker, and prediction speed. Reads what benchmarks/fr_bench.py
wrote under metrics/ (full run, then metrics/quick/); missing files leave a
row out. `phrases_section(metrics_root)` returns markdown."""
import json
from pathlib import Path
from typing import Dict, List, Optional


def _read(path: Path) -> Optional[Dict]:
    try:
        return json.loads(path.read_text(encoding="utf8"))
    except (OSError, ValueError):
        return None


def _prf(scores: Optional[Dict]) -> str:
    if not scores:
        return "- | - | -"
    return " | ".join(f"{scores[k]:.2f}" for k in ("p", "r", "f"))


def _clause_rows(root: Path, setting: str) -> List[str]:
    rows = []
    for feedback, name, model in (("recognition", "FR-Perceptron (recognition feedback)", "clauses_fr"),
                                  ("classification", "classification feedback (CO-VP)", "clauses_co")):
        curve = _read(root / f"clauses_curve_{feedback}.json")
        final = _read(root / f"{model}.json")
        if not curve and not final:
            continue
        best = f"{curve['best_epoch']} of {len(curve['epochs'])}" if curve else "-"
        rows.append(f"| {name} | {setting} | {best} | {_prf(curve and curve['dev_at_best'])} | "
                    f"{_prf(curve and curve.get('test_at_best'))} | {_prf(final)} |")
    return rows


def _filter_rows(root: Path) -> List[str]:
    curves = {fb: _read(root / f"clauses_curve_{fb}.json") for fb in ("recognition", "classification")}
    if not all(curves.values()):
        return []
    rows = [("| epoch | FR: candidates | FR: gold among them | FR: F1 bound | FR: dev F1 | "
            "CO: candidates | CO: gold among them | CO: F1 bound | CO: dev F1 |"),
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for fr, co in zip(curves["recognition"]["epochs"], curves["classification"]["epochs"]):
        cells = [str(fr["epoch"])]
        for row in (fr, co):
            f = row["dev_filters"]
            cells += [f"{f['candidates']:,}", f"{100 * f['candidate_recall']:.1f}%",
                      f"{100 * f['upper_bound_f']:.2f}", f"{row['dev']['f']:.2f}"]
        rows.append("| " + " | ".join(cells) + " |")
    return rows


def _chunk_rows(root: Path, setting: str) -> List[str]:
    rows = []
    curve = _read(root / "fr_chunker_curve.json")
    final = _read(root / "fr_chunker.json")
    if curve or final:
        best = f"{curve['best_epoch']} of {len(curve['epochs'])} (held-out 10% of train)" if curve else "-"
        rows.append(f"| fr_chunker (FR-Perceptron) | {setting} | {best} | {_prf(final)} |")
    look = _read(root / "chunker_d1.json")
    if look and "p" in look:
        scale = 100 if look["p"] <= 1 else 1
        rows.append(f"| lookahead_chunker, depth 1 | {setting} | 10 (fixed) | "
                    + " | ".join(f"{scale * look[k]:.2f}" for k in ("p", "r", "f")) + " |")
    return rows


def _speed_rows(root: Path, setting: str) -> List[str]:
    rows = []
    for name, file in (("fr_clause_finder", "clauses_speed.json"), ("fr_chunker", "fr_chunker_speed.json")):
        record = _read(root / file)
        if record:
            rows.append(f"| {name} | {setting} | {record['tokens']:,} | {record['tokens_per_second']:,} | "
                        f"{record['peak_memory_mb']} MB |")
    return rows


def phrases_section(metrics_root: Path) -> str:
    """Markdown for results.md; empty when nothing was measured."""
    metrics_root = Path(metrics_root)
    settings = (("full", metrics_root), ("quick", metrics_root / "quick"))
    clauses = [r for s, root in settings for r in _clause_rows(root, s)]
    chunks = [r for s, root in settings for r in _chunk_rows(root, s)]
    speed = [r for s, root in settings for r in _speed_rows(root, s)]
    filters = _filter_rows(metrics_root)
    if not (clauses or chunks or speed):
        return ""
    out = ["## FR phrase recognisers (Carreras et al. 2005)", ""]
    if clauses:
        out += [("Clause identification on wsj_clauses (the NLTK WSJ sample in the CoNLL-2001 format, "
                "gold POS and approximate chunks as input; NOT the CoNLL-2001 data of the paper's "
                "Table 3). Exact clause spans, micro-averaged. Curves: `benchmarks/fr_bench.py curve` "
                "(epoch chosen on dev); last columns: the `spacy train` model (model-last, same "
                "number of epochs) on test."), "",
                ("| model | setting | epochs (best on dev) | dev P | dev R | dev F1 | test P | test R | test F1 "
                "| spacy train: test P | R | F1 |"),
                "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"] + clauses + [""]
    if filters:
        out += [("The filtering layer on dev after each epoch (the paper's Figure 5): candidates "
                "(s, e) generated by the start/end filters, the share of gold clauses among them, "
                "and the F1 a perfect ranker could reach on them."), ""] + filters + [""]
    if chunks:
        out += ["Chunking on CoNLL-2000 test (the paper's Table 6: FR-Perceptron 93.71).", "",
                "| model | setting | epochs | P | R | F1 |", "| --- | --- | --- | --- | --- | --- |"] + chunks + [""]
    if speed:
        out += [("Prediction speed (`benchmarks/fr_bench.py speed`: nlp.pipe on docs with the inputs "
                "only, median of the repeats) and peak memory of the process."), "",
                "| component | setting | test tokens | tokens/s | peak memory |",
                "| --- | --- | --- | --- | --- |"] + speed + [""]
    return "\n".join(out)
