"""The FR phrase recognisers on the benchmark's table path: the filtering
layer as score keys (what `spacy train`'s curves logger records), a tiny
`spacy train` run of configs/clauses_wsj.cfg with its curve, its test score
(benchmarks/fr_eval.py), its speed (benchmarks/speed.py --task clauses),
the checks of the speed harness's other tasks and the report section."""
import json
from pathlib import Path

import numpy
import pytest
import spacy
import thinc
from spacy.tokens import Doc, DocBin, Span
from spacy.training import Example

import spacy_lookahead.pipes.phrases  # noqa: F401  (factories, when not pip-installed)
from spacy_lookahead.core.fr_perceptron import recognise
from spacy_lookahead.readers.clauses import ClauseCorpus

from benchmarks import experiments as X, fr_eval, report, speed
from benchmarks import gold as G
from benchmarks.curves import best_evaluation, epoch_points, read_curve
from clause_data import NESTED  # two sentences of nested clauses

ROOT = Path(__file__).resolve().parents[1]

FILTER_KEYS = ["candidates", "candidates_recall", "f_bound", "start_p", "start_r", "end_p", "end_r"]


@pytest.fixture(scope="module")
def nested_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("fr") / "nested.txt"
    path.write_text(NESTED, encoding="utf8")
    return path


def brute_force_filters(pipe, examples):
    """Figure 5's figures counted here from the filters' decisions (which
    words the start and end filters fire on, per type), over every (s, e)."""
    instances, golds = pipe._training_instances(examples)
    L = pipe.cfg["max_length"] or 10 ** 9
    candidates = reachable = n_gold = 0
    fired = {"start": [0, 0, 0], "end": [0, 0, 0]}  # fired, gold boundaries, both
    for gold, (_, _, start, end) in zip(golds, recognise(instances, pipe.averaged_weights, details=True)):
        n, K = start.shape
        candidates += sum(1 for k in range(K) for s in range(n) for e in range(s, min(n, s + L))
                          if start[s, k] and end[e, k])
        n_gold += len(gold)
        reachable += sum(1 for s, e, k in gold if start[s, k] and end[e, k] and e - s + 1 <= L)
        for name, filt, col in (("start", start, 0), ("end", end, 1)):
            boundary = numpy.zeros_like(filt)
            boundary[gold[:, col], gold[:, 2]] = True
            for i, v in enumerate((filt.sum(), boundary.sum(), (filt & boundary).sum())):
                fired[name][i] += int(v)
    recall = reachable / n_gold
    out = {"candidates": candidates, "candidates_recall": recall,
           "f_bound": 2 * recall / (1 + recall) if recall else 0.0}
    for name, (f, b, both) in fired.items():
        out[f"{name}_p"] = both / f if f else 0.0
        out[f"{name}_r"] = both / b if b else 0.0
    return out


def test_the_filtering_layer_comes_out_of_the_scorer(nested_file):
    """max_length 5: the 9-word gold clause can never be a candidate, so the
    recall of the candidates is below 1 however the filters are trained."""
    nlp = spacy.blank("en")
    pipe = nlp.add_pipe("fr_clause_finder", config={"max_length": 5})
    examples = list(ClauseCorpus(nested_file).read(nlp.vocab))
    nlp.initialize(lambda: examples)
    # zero weights: no filter fires, nothing is a candidate
    scores = nlp.evaluate(examples)
    assert {k: scores[f"spans_clauses_{k}"] for k in FILTER_KEYS} == dict.fromkeys(FILTER_KEYS, 0)
    for _ in range(3):
        nlp.update(examples)
        scores = nlp.evaluate(examples)
        expected = brute_force_filters(pipe, examples)
        got = {k: scores[f"spans_clauses_{k}"] for k in FILTER_KEYS}
        assert got == pytest.approx(expected), (got, expected)
        assert 0 < got["candidates_recall"] < 1 and got["candidates"] > 0
        assert all(isinstance(v, (int, float)) for v in got.values())
    # the F1 bound: precision 1 at the candidates' recall (4 of the 5 gold clauses)
    assert got["candidates_recall"] == pytest.approx(4 / 5)
    assert got["f_bound"] == pytest.approx(2 * 0.8 / 1.8)
    assert scores["spans_clauses_f"] <= got["f_bound"]


def test_fr_chunker_scores_its_filters_under_its_key(tmp_path):
    nlp = spacy.blank("en")
    nlp.add_pipe("fr_chunker")
    words, tags = ["The", "cat", "sat", "on", "the", "mat", "."], ["DT", "NN", "VBD", "IN", "DT", "NN", "."]
    ref = Doc(nlp.vocab, words=words, tags=tags)
    ref.spans["chunks"] = [Span(ref, 0, 2, "NP"), Span(ref, 2, 3, "VP"), Span(ref, 3, 4, "PP"),
                           Span(ref, 4, 6, "NP")]
    examples = [Example(Doc(nlp.vocab, words=words, tags=tags), ref)]
    nlp.initialize(lambda: examples)
    for _ in range(5):
        nlp.update(examples)
    scores = nlp.evaluate(examples)
    assert all(f"spans_chunks_{k}" in scores for k in FILTER_KEYS)
    assert scores["spans_chunks_candidates_recall"] == 1.0 and scores["spans_chunks_f_bound"] == 1.0
    # without gold chunks (e.g. spacy evaluate on raw text) the keys are left out
    plain = nlp.get_pipe("fr_chunker").score([Example(nlp(Doc(nlp.vocab, words=words, tags=tags)),
                                                      Doc(nlp.vocab, words=words))])
    assert "spans_chunks_candidates" not in plain
    # fr_eval: the same test score from the column file and from its .spacy twin
    nlp.to_disk(tmp_path / "model")
    (tmp_path / "test.txt").write_text(
        "The DT B-NP\ncat NN I-NP\nsat VBD B-VP\non IN B-PP\nthe DT B-NP\nmat NN I-NP\n. . O\n\n")
    DocBin(docs=[ref], store_user_data=True).to_disk(tmp_path / "test.spacy")
    records = []
    for data in ("test.txt", "test.spacy"):
        fr_eval.main(["chunker", str(tmp_path / "model"), str(tmp_path / data), "--output",
                      str(tmp_path / f"{data}.json")])
        records.append(json.loads((tmp_path / f"{data}.json").read_text()))
    assert records[0]["tokens"] == records[1]["tokens"] == 7
    assert {k: v for k, v in records[0].items() if k not in ("data",)} == \
        {k: v for k, v in records[1].items() if k not in ("data",)}
    assert records[0]["f"] == pytest.approx(100 * scores["spans_chunks_f"], abs=0.01)


# --- the table path: spacy train with the curves logger, fr_eval, speed, report -----

@pytest.fixture(scope="module")
def trained(nested_file, tmp_path_factory):
    """configs/clauses_wsj.cfg trained by `spacy train` on the toy file."""
    from spacy.cli.train import train
    out = tmp_path_factory.mktemp("fr_train")
    curves = out / "metrics" / "curves" / "clauses_fr.jsonl"
    train(ROOT / "configs" / "clauses_wsj.cfg", out / "model", overrides={
        "paths.train": str(nested_file), "paths.dev": str(nested_file), "paths.curves": str(curves),
        "training.max_epochs": 3, "training.eval_frequency": 1})
    return out


def test_spacy_train_logs_the_filtering_layer(trained):
    rows = read_curve(trained / "metrics" / "curves" / "clauses_fr.jsonl")
    assert len(rows) == 3  # one batch an epoch, an evaluation every step
    for row in rows:
        assert {f"spans_clauses_{k}" for k in FILTER_KEYS + ["p", "r", "f"]} <= set(row["scores"])
        assert row["scores"]["spans_clauses_f"] <= row["scores"]["spans_clauses_f_bound"] + 1e-9
    assert [p["epoch"] for p in epoch_points(rows)] == [2, 3]  # step 0 is not an epoch's point
    best = best_evaluation(rows)
    assert best["score"] == max(r["score"] for r in rows)
    assert (trained / "model" / "model-best" / "config.cfg").exists()


def test_fr_eval_scores_a_model_on_the_column_file(trained, nested_file, tmp_path):
    out = tmp_path / "clauses_fr.json"
    assert fr_eval.main(["clauses", str(trained / "model" / "model-best"), str(nested_file),
                         "--output", str(out)]) == 0
    record = json.loads(out.read_text())
    assert record["sentences"] == 2 and record["tokens"] == 10
    assert record["f"] == pytest.approx(100 * record["spans_clauses_f"], abs=0.01)
    assert set(record["filters"]) == set(FILTER_KEYS)


def test_speed_times_the_clause_finder(trained, nested_file, tmp_path):
    out = tmp_path / "clauses_speed.json"
    model = trained / "model" / "model-best"
    assert speed.main([str(nested_file), f"clauses_fr={model}", "--task", "clauses", "--reference",
                       "clauses_fr", "--repeats", "1", "--min-seconds", "0.01", "--warmup", "1",
                       "--output", str(out)]) == 0
    r = json.loads(out.read_text())["models"]["clauses_fr"]
    assert "skipped" not in r, r
    assert r["inputs"] == "words + POS tags + chunks" and r["n_tokens"] == 10
    assert r["predictions_from"] == ['doc.spans["clauses"]']
    scores = spacy.load(model).evaluate(list(ClauseCorpus(nested_file).read(spacy.blank("en").vocab)))
    assert r["f1_check"] == pytest.approx(scores["spans_clauses_f"], abs=1e-4)
    # the digests of what the timed pass wrote: the model's outputs on the same inputs
    from benchmarks import gold as G
    from benchmarks.harness import digest, probabilities_digest
    nlp = spacy.load(model)
    docs = list(nlp.pipe([G.make_doc(nlp.vocab, G.inputs_of(g, "clauses"))
                          for g in G.read_gold(str(nested_file), task="clauses")]))
    assert (r["digest"], r["probabilities_digest"]) == (digest(docs), probabilities_digest(docs))

    # --pairs: the models also timed side by side, each round one pass of each
    assert speed.main([str(nested_file), f"clauses_fr={model}", f"again={model}", "--task",
                       "clauses", "--reference", "clauses_fr", "--repeats", "1", "--min-seconds",
                       "0.01", "--warmup", "1", "--pairs", "3", "--output", str(out)]) == 0
    report = json.loads(out.read_text())
    models = report["models"]
    # what spaCy's components' speed depends on, beside the machine
    assert (report["machine"]["spacy"], report["machine"]["thinc"]) == \
        (spacy.__version__, thinc.__version__)
    assert report["interleaved_rounds"] == 4  # 3 rounded up to whole rotations of 2 models
    assert models["clauses_fr"]["ratio_interleaved"] == models["clauses_fr"]["ratio_rotations"] == 1.0
    assert len(models["again"]["interleaved_seconds"]) == 4
    assert models["again"]["digest"] == models["clauses_fr"]["digest"] == r["digest"]
    base, again = models["clauses_fr"]["interleaved_seconds"], models["again"]["interleaved_seconds"]
    import statistics
    assert models["again"]["ratio_interleaved"] == pytest.approx(
        statistics.median(b / t for b, t in zip(base, again)), abs=1e-3)
    # each rotation: the reference first once, second once; its summed times
    assert models["again"]["ratio_rotations"] == pytest.approx(statistics.median(
        [(base[0] + base[1]) / (again[0] + again[1]), (base[2] + base[3]) / (again[2] + again[3])]),
        abs=1e-3)


def test_report_reads_the_table_outputs(trained, nested_file, tmp_path):
    metrics = tmp_path / "metrics"
    quick = metrics / "quick"
    (quick / "curves").mkdir(parents=True)
    rows = read_curve(trained / "metrics" / "curves" / "clauses_fr.jsonl")
    (quick / "curves" / "clauses_fr.jsonl").write_text(
        (trained / "metrics" / "curves" / "clauses_fr.jsonl").read_text())
    fr_eval.main(["clauses", str(trained / "model" / "model-best"), str(nested_file),
                  "--output", str(quick / "clauses_fr.json")])
    speed.main([str(nested_file), f"clauses_fr={trained / 'model' / 'model-best'}", "--task", "clauses",
                "--repeats", "1", "--min-seconds", "0.01", "--warmup", "1",
                "--output", str(quick / "clauses_speed.json")])
    text = "\n".join(report.phrases_section(quick, "quick"))
    best = best_evaluation(rows)
    test = json.loads((quick / "clauses_fr.json").read_text())
    clause_row = next(line for line in text.splitlines()
                      if line.startswith(f"| {X.EXPERIMENTS['clauses_fr'].label} | quick |"))
    assert f"| {best['epoch']} of 3 |" in clause_row and f"{test['f']:.2f}" in clause_row
    assert "| FR: candidates | FR: gold among them | FR: F1 bound | FR: dev F1 |" in text
    assert "| clauses_fr | quick | 10 |" in text  # the speed row
    for e in X.group("phrases"):  # the command that reproduces each row
        assert f"* `{e.name}`: `python -m spacy train {e.config}" in text


# --- the speed harness's parser checks ------------------------------------------------

def test_speed_inputs_and_checks_of_the_parser_tasks():
    vocab = spacy.blank("en").vocab
    gold = Doc(vocab, words=["She", "left", "."], tags=["PRP", "VBD", "."], heads=[1, 1, 1],
               deps=["nsubj", "ROOT", "punct"])
    parse, pipeline = G.inputs_of(gold, "parse"), G.inputs_of(gold, "pipeline")
    assert parse.tags == ["PRP", "VBD", "."] and pipeline.tags is None
    doc = G.make_doc(vocab, parse)
    assert not doc.has_annotation("DEP") and [t.tag_ for t in doc] == ["PRP", "VBD", "."]
    assert G.check([gold], [gold], "parse") == {"uas_check": 1.0}
    wrong = Doc(vocab, words=["She", "left", "."], heads=[1, 1, 0], deps=["nsubj", "ROOT", "punct"])
    assert G.check([wrong], [gold], "pipeline") == {"uas_check": round(2 / 3, 4)}
    assert G.CHECK_KEYS["parse"] == G.CHECK_KEYS["pipeline"] == "uas_check"


def test_every_speed_row_names_a_task_of_the_harness():
    for s in X.SPEEDS.values():
        assert s.task in G.SPEED_TASKS, s.name
