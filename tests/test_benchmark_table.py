"""The benchmark's experiment table (benchmarks/experiments.py) and its
runner: every row is a config spaCy accepts, at both scales; every speed run
and project command names rows and groups that exist; the quick scale trains
what the quick packages are built from."""
import json
from pathlib import Path

import pytest
import srsly
from spacy.util import load_config, load_model_from_config, registry

from benchmarks import experiments as X, run

ROOT = Path(__file__).resolve().parents[1]

ROWS = [(e, scale) for e in X.EXPERIMENTS.values() if e.trainer == "spacy"
        for scale in X.SCALES if X.in_scale(e, scale)]


@pytest.fixture(scope="module", autouse=True)
def fr_factories():
    import benchmarks.fr_components  # noqa: F401  (the FR factories, reader and scorer)


@pytest.fixture(scope="module")
def tiny_tagger(tmp_path_factory):
    """A trained tagger to source where a row's tagger is not trained here."""
    import spacy
    from spacy.tokens import Doc
    from spacy.training import Example
    nlp = spacy.blank("en")
    nlp.add_pipe("lookahead_tagger")
    examples = [Example(Doc(nlp.vocab, words=["a", "b"]), Doc(nlp.vocab, words=["a", "b"],
                                                               tags=["X", "Y"]))]
    nlp.initialize(lambda: examples)
    path = tmp_path_factory.mktemp("tagger") / "model"
    nlp.to_disk(path)
    return path


@pytest.mark.parametrize("row,scale", ROWS, ids=[f"{e.name}-{s}" for e, s in ROWS])
def test_every_row_is_a_config_spacy_train_accepts(row, scale, monkeypatch, tiny_tagger):
    """The overrides name settings that exist, with values the components
    and spaCy's training section validate (a typo would fail `spacy train`)."""
    monkeypatch.chdir(ROOT)
    cmd = X.train_command(row, scale)
    assert cmd[:4] == ["python", "-m", "spacy", "train"] and cmd[4] == row.config
    overrides = dict(row.overrides(scale))
    if "paths.tagger" in overrides and not Path(overrides["paths.tagger"]).exists():
        overrides["paths.tagger"] = str(tiny_tagger)  # a sourced tagger the row trains first
    if row.curves:
        overrides["paths.curves"] = "curve.jsonl"
    config = load_config(row.config, overrides=overrides, interpolate=False)
    if row.curves:  # the row's curve is written: the config's logger reads paths.curves
        assert config["training"]["logger"].get("path") == "${paths.curves}", row.config
    load_model_from_config(config, auto_fill=True, validate=True)
    registry.resolve(config.interpolate()["training"], validate=True)
    for key, value in overrides.items():  # no override is silently dropped
        section = config.interpolate()
        for part in key.split("."):
            section = section[part]
        assert section == value or str(section) == str(value), key


def test_the_quick_scale_is_smaller():
    for e, scale in ROWS:
        if scale == "quick":
            quick = e.overrides("quick")
            assert "training.max_epochs" in quick and "corpora.train.limit" in quick, e.name


def test_speed_runs_time_rows_of_the_table():
    for s in X.SPEEDS.values():
        models = X.speed_models(s)
        assert len({k for k, _ in models}) == len(models), s.name
        for key, spec in models:
            e = X.EXPERIMENTS[spec.split("@")[0]]
            assert e.task == s.task or (s.task, e.task) in {("chunk", "fr_chunk"), ("pipeline", "parse")}, \
                (s.name, e.name)
        cmd = X.speed_command(s, "full")
        assert cmd[cmd.index("--reference") + 1] == models[0][0]
        assert f"{models[0][0]}={X.model_path(models[0][1], 'full')}" in cmd


def test_project_commands_are_the_groups():
    project = srsly.read_yaml(ROOT / "project.yml")
    names = [c["name"] for c in project["commands"]]
    assert len(names) <= 25 and len(names) == len(set(names))
    staged = {c["name"] for c in project["commands"]
              if any("python -m benchmarks.run stage" in line for line in c["script"])}
    assert staged == set(X.GROUPS)
    assert set(X.GROUPS) <= set(project["workflows"]["all"])
    quick = next(c for c in project["commands"] if c["name"] == "quick")
    assert "project run all" in quick["script"][0] and "--vars.scale quick" in quick["script"][0]


@pytest.mark.parametrize("scale", X.SCALES)
def test_every_stage_runs_dry(scale, capsys, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)  # nothing trained here: every row's command is printed
    for group in X.GROUPS:
        run.main(["stage", group, "--scale", scale, "--dry-run"])
    out = capsys.readouterr().out
    trained = [line for line in out.splitlines() if line.startswith("$ ") and "benchmarks.timed" in line]
    assert len(trained) == sum(1 for e in X.EXPERIMENTS.values() if X.in_scale(e, scale))


def test_the_quick_packages_are_made_of_quick_rows():
    from benchmarks import package
    quick_dirs = {X.training_dir(e.name, "quick") for e in X.EXPERIMENTS.values()
                  if X.in_scale(e, "quick")}
    for name, p in package.PIPELINES.items():
        for slot, model in p["sources"]["quick"].items():
            assert str(Path(model).parent) in quick_dirs or model in quick_dirs, (name, slot, model)


def test_parser_report_reads_the_logged_curve(tmp_path):
    """Best dev evaluation, epochs run, time per epoch and the beam's invalid
    updates come from the curves logger's rows (counters are cumulative)."""
    from benchmarks import report
    row = X.EXPERIMENTS["parser_ewt_beam8_standard"]
    (tmp_path / "curves").mkdir()
    logged = [(0, 0, 0.1, 0.0, 0, 0), (0, 100, 0.80, 10.0, 50, 20), (1, 200, 0.85, 20.0, 100, 45),
              (2, 300, 0.84, 30.0, 150, 70)]
    (tmp_path / "curves" / f"{row.name}.jsonl").write_text("".join(
        srsly.json_dumps({"epoch": e, "step": s, "score": sc, "losses": {},
                          "scores": {"dep_las_nopunct": sc, "arc_standard_parser_update_seconds": t,
                                     "arc_standard_parser_beam_updates": u,
                                     "arc_standard_parser_beam_invalid": i}}) + "\n"
        for e, s, sc, t, u, i in logged))
    summary = report.curve_summary(tmp_path, row)
    assert summary == {"best_dev": 0.85, "best_epoch": 2, "epochs_run": 3,
                       "update_seconds_per_epoch": 10.0, "updates": 150, "invalid": 70}
    per_epoch = report.parser_curves(tmp_path)[row.name]
    assert [(p["epoch"], p["score"]) for p in per_epoch] == [(1, 0.80), (2, 0.85), (3, 0.84)]


def test_parser_eval_scores_punctuation_apart():
    from benchmarks.gold import attachment_scores
    from spacy.tokens import Doc
    from spacy.vocab import Vocab
    vocab = Vocab()
    gold = Doc(vocab, words=["We", "left", "."], heads=[1, 1, 1], deps=["nsubj", "ROOT", "punct"],
               tags=["PRP", "VBD", "."])
    pred = Doc(vocab, words=["We", "left", "."], heads=[1, 1, 0], deps=["obj", "ROOT", "punct"])
    s = attachment_scores([pred], [gold])
    assert (s["uas"], s["las"], s["uas_nopunct"], s["las_nopunct"]) == (2 / 3, 1 / 3, 1.0, 0.5)


def test_the_feature_speed_runs_are_reported_as_ratios_without_test_scores(tmp_path):
    """report.py shows each component's speed with and without the new
    features (the speed harness's ratios, the reference first) and leaves
    out the test score the harness checks: the rows are held-out rows."""
    from benchmarks import report
    models = {"chunker_d1_heldout": {"tokens_per_second": 600000.0, "ratio_vs_reference": 1.0,
                                     "ratio_interleaved": 1.0, "peak_rss_mb": 200, "f1_check": 0.9364},
              "chunker_d1_lexicon_biluo_koo_near": {"tokens_per_second": 420000.0,
                                                    "ratio_vs_reference": 0.7,
                                                    "ratio_interleaved": 0.744, "peak_rss_mb": 330,
                                                    "f1_check": 0.9407}}
    srsly.write_json(tmp_path / "lexicon_speed_chunk.json",
                     {"reference": "chunker_d1_heldout", "interleaved_rounds": 11, "models": models})
    lines = report.feature_speed_section(tmp_path)
    text = "\n".join(lines)
    assert "`lexicon_speed_chunk`, 11 interleaved rounds; against `chunker_d1_heldout`" in text
    koo = next(line for line in lines if line.startswith("| `chunker_d1_lexicon_biluo_koo_near`"))
    label = X.EXPERIMENTS["chunker_d1_lexicon_biluo_koo_near"].label
    assert koo.split(" | ")[1:] == [label, "420,000", "0.70", "0.74", "330 |"]
    assert "0.9407" not in text and "94.07" not in text
    assert "over rotations" not in text  # records from before speed.py's ratio_rotations
    assert report.feature_speed_section(tmp_path / "none") == []
    models["chunker_d1_heldout"]["ratio_rotations"] = 1.0
    models["chunker_d1_lexicon_biluo_koo_near"]["ratio_rotations"] = 0.712
    srsly.write_json(tmp_path / "lexicon_speed_chunk.json",
                     {"reference": "chunker_d1_heldout", "interleaved_rounds": 12, "models": models})
    lines = report.feature_speed_section(tmp_path)
    head = next(line for line in lines if line.startswith("| model |"))
    assert head.split(" | ")[4:] == ["x without, interleaved", "x without, over rotations",
                                     "peak RSS MB |"]
    koo = next(line for line in lines if line.startswith("| `chunker_d1_lexicon_biluo_koo_near`"))
    assert koo.split(" | ")[1:] == [label, "420,000", "0.70", "0.74", "0.71", "330 |"]


def annotate_run(workers: int, whole: float, phase: float, threads: int = 1, name: str = "tagger") -> dict:
    """A run of `distributed_bench annotate` as one_annotate() records it."""
    timings = {"read": 0.05, "cluster": 0.4, "model": 0.7, "annotate": phase, "close": 0.2, "workers": workers,
               "shards_busy": 0.9 * workers * phase, "tokens": 500000}
    return {"name": name, "model": "training/tagger_d1/model-best", "data": "corpus/ewt/test.spacy",
            "repeat": 20, "workers": workers, "threads": threads, "docs_out": 41540, "shards": 4 * workers,
            "tokens": 500000, "command_seconds": whole, "timings": timings, "fixed_seconds": 1.3,
            "tokens_per_s": 500000 / whole, "annotate_tokens_per_s": 500000 / phase,
            "peak_rss_mb_children": 280.0 + workers}


def test_the_annotate_table_gives_medians_and_speed_ups_over_one_worker():
    """report.py's annotate table from distributed_bench's runs: medians per
    (model, workers, threads) of the whole command and of the annotate
    phase, each against the model's one worker (by hand: 10 s against
    4.5, 5 and 6 s is 2.00x; 8 s against 4 s is 2.00x), the workers' busy
    share, and a setting that failed with its error."""
    from benchmarks import report
    rows = [annotate_run(1, 10.0, 8.0), annotate_run(2, 4.5, 3.0), annotate_run(2, 6.0, 4.0),
            annotate_run(2, 5.0, 5.0), annotate_run(1, 12.0, 6.0, threads=2),
            {**annotate_run(1, 1.0, 1.0, name="ner"), "error": "worker died"}]
    lines = report.annotate_rows(rows)
    two = next(line for line in lines if line.startswith("| tagger | corpus/ewt/test.spacy | 2 | 1 |"))
    assert two.split(" | ")[4:] == ["500,000", "8", "5.0 (3 runs)", "2.00", "4.0", "2.00", "1.3", "90%", "282 |"]
    threads = next(line for line in lines if line.startswith("| tagger | corpus/ewt/test.spacy | 1 | 2 |"))
    assert threads.split(" | ")[6:10] == ["12.0", "0.83", "6.0", "1.33"]
    assert any(line.startswith("| ner | corpus/ewt/test.spacy | 1 | 1 | worker died |") for line in lines)


def test_the_scale_out_records_are_dated_and_still_read_as_bare_lists(tmp_path):
    """benchmarks.distributed_bench's records carry harness.stamp()'s date
    and machine, which the report's header lists, so that a table measured
    on a lent 16-core machine says so; the section reads its rows the same
    from such a record and from a list of rows (the records before it)."""
    from benchmarks import report
    from benchmarks.harness import stamp
    rows = [annotate_run(w, whole=10.0 / w, phase=8.0 / w) for w in (1, 2)]
    (tmp_path / "old").mkdir()
    srsly.write_json(tmp_path / "old" / "distributed_annotate.json", rows)
    head = stamp()
    srsly.write_json(tmp_path / "distributed_annotate.json", {**head, "rows": rows})
    section = report.distributed_section(tmp_path)
    assert section == report.distributed_section(tmp_path / "old")
    two = next(line for line in section if line.startswith("| tagger | corpus/ewt/test.spacy | 2 |"))
    assert two.split(" | ")[6:9] == ["5.0", "2.00", "4.0"]
    dates, machines = report.recorded(tmp_path)
    assert dates == [head["date"]]
    (where, files), = machines.items()
    assert f"Python {head['machine']['python']}" in where
    assert files == [f"distributed_annotate {head['date']}"]


def test_the_gil_record_is_reported_with_the_ceilings_its_serial_fraction_implies(tmp_path):
    """benchmarks.gil's record becomes a table of the GIL-held share g,
    the speed-up at 2 threads, where the rest went, the serial fraction s
    of the waiting and what s allows at 8 and 16 threads (Amdahl: 1 / (s +
    (1 - s) / t)), by hand: the cores 90% busy at 2 threads (100% at 1)
    give 1.8x, s = 0.1111: 1 / 0.2222 = 4.5x at 8 and 1 / 0.1667 = 6.0x at
    16; the calling thread's share 0.125 caps it at 8.0x. A record without CPU times takes s from
    the speed-up: s = 0.2 gives 1 / 0.3 = 3.3x at 8 and 1 / 0.25 = 4.0x
    at 16."""
    from benchmarks import report
    from benchmarks.harness import stamp
    tagger = {"model": "training/tagger_d1/model-best", "component": "lookahead_tagger", "inputs": "gold",
              "gil_share": 0.0512, "identical": True, "tokens_per_second_1": 400000, "seconds_per_pass": 1.234,
              "tokens_per_second_2": 666667, "speedup_2": 1.667, "serial_fraction_2": 0.2, "ceiling_2": 5.0,
              "engine_speedup_2": 1.9}
    parser = {"model": "training/pipeline_ewt/model-best", "component": "arc_standard_parser",
              "inputs": "pipeline", "gil_share": float("nan"), "identical": False,
              "tokens_per_second_1": 20000, "tokens_per_second_2": 40000, "speedup_2": 2.0,
              "serial_fraction_2": 0.0, "ceiling_2": None, "engine_speedup_2": None}
    # as gil.py wrote it before its CPU times and --min-seconds (json: a
    # share is NaN where the engine has no clock)
    (tmp_path / "gil.json").write_text(json.dumps({**stamp(), "rows": [tagger, parser]}))
    old = report.gil_section(tmp_path)
    assert "pass last" not in "".join(old) and "implies (Amdahl" in "".join(old)
    first = next(line for line in old if line.startswith("| lookahead_tagger |"))
    assert first.split(" | ")[1:] == ["tagger_d1", "gold", "5.1%", "400,000", "1.23", "1.67", "-", "-", "0.200",
                                      "3.3x", "4.0x", "-", "-", "1.90", "yes |"]
    tagger.update({"busy_1": 1.0, "busy_2": 0.9, "cpu_ratio_2": 1.08, "idle_serial_fraction_2": 0.1111,
                   "calling_share_2": 0.125})
    (tmp_path / "gil.json").write_text(json.dumps({**stamp(), "min_seconds": 1.0, "rows": [tagger, parser]}))
    lines = report.gil_section(tmp_path)
    assert "one thread's pass last about 1 s" in "".join(lines)
    head = next(line for line in lines if line.startswith("| component |"))
    assert head.split(" | ")[3:15] == ["GIL-held g, 1 thread", "tokens/s, 1 thread", "s a pass, 1 thread",
                                       "x 2 threads", "cores busy, 2 threads", "CPU a token, x 1 thread's",
                                       "serial fraction s", "Amdahl at 8 threads", "Amdahl at 16 threads",
                                       "calling thread's share, 2 threads", "ceiling 1 / that share",
                                       "engine alone x 2"]
    first = next(line for line in lines if line.startswith("| lookahead_tagger |"))
    assert first.split(" | ")[1:] == ["tagger_d1", "gold", "5.1%", "400,000", "1.23", "1.67", "90%", "1.08",
                                      "0.111", "4.5x", "6.0x", "12.5%", "8.0x", "1.90", "yes |"]
    second = next(line for line in lines if line.startswith("| arc_standard_parser |"))
    assert second.split(" | ")[1:] == ["pipeline_ewt", "pipeline", "-", "20,000", "-", "2.00", "-", "-", "-",
                                       "-", "-", "-", "-", "-", "NO |"]
    assert report.amdahl(-0.05, 8) == 8.0  # a speed-up above t threads allows no more than t
    assert report.gil_section(tmp_path / "none") == []
    assert "### The GIL-held share" in report.render(tmp_path, "full")


def test_the_fresh_text_record_has_a_table_of_its_own(tmp_path):
    """benchmarks.gil --cold's record (gil_cold.json) is reported as the
    warm record is, in a section of its own after it; none without it."""
    from benchmarks import report
    from benchmarks.harness import stamp
    row = {"model": "training/ner_rtl_d1/model-last", "component": "lookahead_ner", "inputs": "gold",
           "gil_share": 0.0645, "identical": True, "tokens_per_second_1": 450000, "seconds_per_pass": 1.1,
           "tokens_per_second_2": 800000, "speedup_2": 1.778, "busy_1": 1.0, "busy_2": 0.95,
           "cpu_ratio_2": 1.07, "idle_serial_fraction_2": 0.0526, "calling_share_2": 0.08,
           "engine_speedup_2": 1.8, "cold": True}
    assert report.gil_section(tmp_path, fresh=True) == []
    (tmp_path / "gil_cold.json").write_text(json.dumps({**stamp(), "rows": [row]}))
    lines = report.gil_section(tmp_path, fresh=True)
    assert lines[0] == "### The same on fresh text" and "--cold" in lines[2]
    first = next(line for line in lines if line.startswith("| lookahead_ner |"))
    assert first.split(" | ")[1:] == ["ner_rtl_d1", "gold", "6.5%", "450,000", "1.10", "1.78", "95%", "1.07",
                                      "0.053", "5.8x", "8.9x", "8.0%", "12.5x", "1.80", "yes |"]
    assert report.gil_section(tmp_path) == []  # (the warm record is gil.json)
    rendered = report.render(tmp_path, "full")
    assert "### The same on fresh text" in rendered


def test_the_gil_step_tells_waiting_cores_from_slower_ones():
    """benchmarks.gil splits a speed-up below t threads, by hand: 1 thread
    1,000 tokens in 1.0 s of wall and 1.0 s of CPU; 2 threads in 0.6 s of
    wall and 1.08 s of CPU, 0.125 s of it the calling thread's: S = 1.667
    (s = 0.2), the cores busy 1.08 / (2 x 0.6) = 90%, 1.08x one thread's
    CPU a token (S = 2 x 0.9 / (1.0 x 1.08)), and the calling thread's
    share 0.125 (medians)."""
    from benchmarks import gil
    runs = {1: [{"tokens": 1000, "wall": 1.0, "cpu": 1.0, "calling": 1.0}] * 3,
            2: [{"tokens": 1000, "wall": 0.6, "cpu": 1.08, "calling": 0.125},
                {"tokens": 1000, "wall": 0.5, "cpu": 1.2, "calling": 0.1},
                {"tokens": 1000, "wall": 0.7, "cpu": 1.0, "calling": 0.2}]}
    row = gil.scaling(runs, {1: [500.0] * 3, 2: [900.0, 950.0, None]}, [1, 2])
    assert row["tokens_per_second_1"] == 1000 and row["tokens_per_second_2"] == 1667
    assert (row["speedup_2"], row["serial_fraction_2"], row["ceiling_2"]) == (1.667, 0.2, 5.0)
    assert (row["busy_1"], row["busy_2"], row["cpu_ratio_2"]) == (1.0, 0.9, 1.08)  # (medians)
    # the waiting alone: Amdahl on 2 x 0.9 / 1.0 = 1.8x, s = 2 / 1.8 - 1 = 0.1111
    assert row["idle_serial_fraction_2"] == 0.1111
    # the calling thread's CPU a token at 2 threads over one thread's whole: 0.125 (a
    # speed-up below 8 at any thread count)
    assert row["calling_share_2"] == 0.125
    assert row["engine_speedup_2"] is None  # (a count without the engine's figure)


def test_the_gil_step_copies_the_inputs_until_a_pass_lasts_its_minimum(monkeypatch):
    """benchmarks.gil times passes of at least --min-seconds on one thread:
    a fast component's pass over 4 copies lasted 0.03-0.2 s, and its
    2-thread speed-up was then the threads' start and end and the noise
    (the tagger 1.77x over 4 copies, 1.95x over 40). On a clock that a
    pass moves by 0.03 s a copy: 1 s needs ceil(4 x 1 / 0.12) = 34 copies
    from a pass over 4."""
    from benchmarks import gil

    now = [0.0]
    monkeypatch.setattr(gil.time, "perf_counter", lambda: now[0])

    class Slow:  # a component whose pass takes 0.03 s a copy on that clock
        cfg = {"n_threads": 1}

        def pipe(self, docs, batch_size):
            now[0] += 0.03 * len(docs)
            return docs

    def make_docs(copies):
        return [object()] * copies

    assert gil.copies_for(Slow(), make_docs, 4, 0.0, 256) == 4  # (no minimum: --copies)
    assert gil.copies_for(Slow(), make_docs, 4, 1.0, 256) == 34
    assert gil.copies_for(Slow(), make_docs, 40, 1.0, 256) == 40  # never fewer than --copies


def test_the_gil_steps_cold_pass_finds_every_word_new():
    """benchmarks.gil --cold empties the component's word cache before each
    timed pass (LexemeAtoms.clear, or the classes set again before it
    existed); a component without one is refused, not timed warm."""
    import pytest
    import spacy

    from benchmarks import gil
    from spacy_lookahead.spacy_io import LexemeAtoms

    nlp = spacy.blank("en")
    doc = spacy.tokens.Doc(nlp.vocab, words=["a", "fresh", "stream"])

    class Pipe:
        cfg = {"n_threads": 1}
        _atoms = LexemeAtoms()

        def pipe(self, docs, batch_size):
            self.found = len(self._atoms)  # (the words cached when the pass begins)
            self._atoms.cache_words(docs)
            return docs

    pipe = Pipe()
    pipe._atoms.cache_words([doc])
    assert len(pipe._atoms) == 3
    gil.timed(pipe, lambda: [doc.copy()], 1, 256, gil._NoClock(), cold=True)
    assert pipe.found == 0 and len(pipe._atoms) == 3
    gil.timed(pipe, lambda: [doc.copy()], 1, 256, gil._NoClock())
    assert pipe.found == 3

    class Older:  # (LexemeAtoms before clear())
        def __init__(self):
            self.classes, self.set = {"a": 1}, []

        def set_classes(self, classes):
            self.set.append(classes)

    older = type("P", (), {"_atoms": Older()})()
    assert gil.emptied(older) and older._atoms.set == [{"a": 1}]
    with pytest.raises(SystemExit, match="no word cache"):
        gil.timed(type("P", (), {"cfg": {}})(), lambda: [], 1, 256, gil._NoClock(), cold=True)


def test_the_pipeline_against_spacys_parser_is_reported_interleaved(tmp_path):
    """raw_parser_speed (the shipped pipeline against spaCy's parser, issue
    38) is a table under the parser-from-words section with both ratios
    and the rotations' one; a model the run did not find says so."""
    from benchmarks import report
    models = {"spacy_parser": {"tokens_per_second": 20000.0, "ratio_vs_reference": 1.0,
                               "ratio_interleaved": 1.0, "ratio_rotations": 1.0, "peak_rss_mb": 400.4,
                               "uas_check": 0.85},
              "greedy": {"name": "greedy", "model": "training/raw_parser/jk_greedy/model-best",
                         "skipped": "model not found"},
              "beam8_predict10_rich_alt_joint": {"tokens_per_second": 24000.0, "ratio_vs_reference": 1.2,
                                                 "ratio_interleaved": 1.1, "ratio_rotations": 1.05,
                                                 "peak_rss_mb": 1150.0, "uas_check": 0.8777}}
    srsly.write_json(tmp_path / "raw_parser_speed.json",
                     {"reference": "spacy_parser", "interleaved_rounds": 6, "models": models})
    lines = report.raw_parser_section(tmp_path, "full")
    assert any("then 6 interleaved rounds" in line for line in lines)
    joint = next(line for line in lines if line.startswith("| beam8_predict10_rich_alt_joint |"))
    assert joint.split(" | ")[1:] == ["24,000", "1.20", "1.10", "1.05", "1150", "0.8777 |"]
    assert "| greedy | skipped: model not found | - | - | - | - | - |" in lines
    assert report.pipeline_speed_table(tmp_path / "none") == []
    speed = X.SPEEDS["raw_parser_speed"]
    assert speed.pairs > 0 and speed.models[0] == "spacy_parser"


def test_annotate_inputs_of_two_data_files_with_one_name_are_their_own_texts(tmp_path):
    """distributed_bench annotate makes each run's JSONL once per data file:
    two test.spacy files in different folders (EWT's and JNLPBA's) give
    two inputs, each with its own texts, and the same file is made once."""
    import spacy
    from spacy.tokens import Doc, DocBin
    from benchmarks.distributed_bench import annotate_input
    vocab = spacy.blank("en").vocab
    for corpus, words in (("ewt", ["The", "cat", "sleeps"]), ("jnlpba", ["IL-2", "gene", "expression"])):
        (tmp_path / corpus).mkdir()
        DocBin(docs=[Doc(vocab, words=words)]).to_disk(tmp_path / corpus / "test.spacy")
    first = annotate_input(str(tmp_path / "ewt" / "test.spacy"), 2, tmp_path)
    second = annotate_input(str(tmp_path / "jnlpba" / "test.spacy"), 2, tmp_path)
    assert first != second
    assert [r["text"] for r in srsly.read_jsonl(first)] == ["The cat sleeps "] * 2
    assert [r["text"] for r in srsly.read_jsonl(second)] == ["IL-2 gene expression "] * 2
    assert annotate_input(str(tmp_path / "ewt" / "test.spacy"), 2, tmp_path) == first


def test_the_engine_section_lists_each_command_once(tmp_path):
    """The one-engine section's commands: the engine group's rows and the
    parser's SAPO rows, each once (those rows joined the group and were
    listed twice)."""
    from benchmarks import report
    bullets = [line for line in report.engine_section(tmp_path) if line.startswith("* `")]
    assert any(line.startswith("* `parser_ewt_sapo`:") for line in bullets)
    assert len(bullets) == len(set(bullets))


def test_the_gil_step_times_each_rows_own_model():
    """benchmarks.gil times the model each row reports: model-last for the
    fixed budgets (chunker_d1 and ner_rtl_d1 log their curve on test, so
    their model-best is chosen on test and must not be used); at full
    scale, on warm text (gil.json) and on fresh text (gil_cold.json: a
    training split, --cold)."""
    for scale in ("full", "quick"):
        steps = [s for s in X.STEPS if scale in s.scales and "benchmarks.gil" in s.command]
        outputs = [s.command[s.command.index("--output") + 1] for s in steps]
        assert outputs == (["{metrics}/gil.json", "{metrics}/gil_cold.json"] if scale == "full"
                           else ["{metrics}/gil.json"])
        for step in steps:
            models = [part for part in step.command if part.startswith("{training}/")]
            names = [m.split("/")[1] for m in models]
            assert names[:len(X.GIL_ROWS)] == list(X.GIL_ROWS)
            assert models == [f"{{training}}/{n}/{X.EXPERIMENTS[n].model}" for n in names]
            assert "{training}/chunker_d1/model-last" in models
            assert "{training}/ner_rtl_d1/model-last" in models
            cold = "--cold" in step.command
            assert cold == step.command[-1].endswith("gil_cold.json")
            assert not cold or step.command[step.command.index("--split") + 1] == "train"


def test_paragraphs_put_sentences_in_one_doc_with_line_breaks():
    """benchmarks.gil --paragraphs: k sentences a doc, a "\\n" token after
    each (spaCy's is_space), the tags and the chunks where they were."""
    import spacy

    from benchmarks.gold import Gold, make_doc, paragraphs

    nlp = spacy.blank("en")
    inputs = [Gold(["The", "cat", "sat", "."], [True, True, False, False], ["DT", "NN", "VBD", "."],
                   [(0, 2, "NP")]),
              Gold(["It", "ran"], [True, False], ["PRP", "VBD"], [(0, 1, "NP"), (1, 2, "VP")]),
              Gold(["Dogs"], [False], ["NNS"], [(0, 1, "NP")])]
    assert paragraphs(inputs, 1) == inputs
    docs = [make_doc(nlp.vocab, gold) for gold in paragraphs(inputs, 2)]
    assert [d.text for d in docs] == ["The cat sat.\nIt ran\n", "Dogs\n"]
    assert [[t.i for t in d if t.is_space] for d in docs] == [[4, 7], [1]]
    assert [t.tag_ for t in docs[0]] == ["DT", "NN", "VBD", ".", "_SP", "PRP", "VBD", "_SP"]
    assert [(s.text, s.label_) for s in docs[0].spans["chunks"]] == [
        ("The cat", "NP"), ("It", "NP"), ("ran", "VP")]
    words = paragraphs([g._replace(tags=None, chunks=None) for g in inputs], 3)
    assert len(words) == 1 and words[0].tags is None and words[0].chunks is None
