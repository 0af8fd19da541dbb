"""spacy_lookahead.distributed on a real LocalCluster of 2 worker processes:
annotation (exactly once, resume, bad lines, a killed worker) and training
by parameter mixing (one shard = spacy train, determinism through a killed
worker, accuracy floors, one-shot vs iterative, the FR chunker)."""
import io
import os
import sys
from pathlib import Path
from typing import List

import numpy
import pytest
import spacy
import srsly
from spacy.tokens import Doc, DocBin
from spacy.training.initialize import init_nlp
from spacy.training.loop import train as spacy_train
from spacy.util import load_config

from conftest import SHARED_DATA
from ewt import ewt_examples

distributed = pytest.importorskip("distributed")

from spacy_lookahead.core.weights import Weights  # noqa: E402
from spacy_lookahead.distributed.annotate import annotate, auto_shard_size  # noqa: E402
from spacy_lookahead.distributed.mixing import (coefficients, mix, prediction_weights,  # noqa: E402
                                                table_from_bytes, table_of, table_to_bytes)
from spacy_lookahead.distributed.train import train  # noqa: E402

CONFIGS = Path(__file__).resolve().parents[1] / "configs"
CONLL2000 = SHARED_DATA / "conll2000"

# the hooks below run in the workers: pickle them by value (the workers need
# not import this test module)
import cloudpickle  # noqa: E402

cloudpickle.register_pickle_by_value(sys.modules[__name__])


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        yield client


@pytest.fixture(scope="module")
def ewt_corpus(tmp_path_factory):
    """EWT slices as DocBins: train (600), dev (200)."""
    path = tmp_path_factory.mktemp("ewt")
    vocab = spacy.blank("en").vocab
    for split, n in (("train", 600), ("dev", 200)):
        docs = [eg.reference for eg in ewt_examples(vocab, split, n)]
        DocBin(docs=docs, attrs=["TAG", "POS"]).to_disk(path / f"{split}.spacy")
    return path


@pytest.fixture(scope="module")
def tagger_model(tmp_path_factory, ewt_corpus):
    """A small trained tagger pipeline directory (one epoch of spacy train)."""
    out = tmp_path_factory.mktemp("tagger")
    serial_train(ewt_corpus, out, 1)
    return out / "model-last"


@pytest.fixture(scope="module")
def jsonl(tmp_path_factory):
    """60 EWT dev sentences as {"text", "id"} lines, and two bad lines:
    line 3 is not JSON, line 7 has no "text"."""
    vocab = spacy.blank("en").vocab
    lines = [srsly.json_dumps({"text": eg.reference.text, "id": i})
             for i, eg in enumerate(ewt_examples(vocab, "dev", 60))]
    lines.insert(2, '{"text": "unterminated')
    lines.insert(6, srsly.json_dumps({"txt": "no text key", "id": -1}))
    path = tmp_path_factory.mktemp("jsonl") / "input.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf8")
    return path


def tagger_overrides(corpus: Path, epochs: int):
    return {"paths.train": str(corpus / "train.spacy"), "paths.dev": str(corpus / "dev.spacy"),
            "training.max_epochs": epochs, "paths.curves": None}


def serial_train(corpus: Path, out: Path, epochs: int, **overrides):
    config = load_config(CONFIGS / "tagger_ewt.cfg",
                         overrides={**tagger_overrides(corpus, epochs), **overrides},
                         interpolate=False)
    nlp = init_nlp(config)
    out.mkdir(parents=True, exist_ok=True)
    spacy_train(nlp, out, stdout=io.StringIO(), stderr=io.StringIO())


def read_output(out: Path):
    vocab = spacy.blank("en").vocab
    docs = []
    for shard in sorted(out.glob("shard-*.spacy")):
        docs.extend(DocBin(store_user_data=True).from_disk(shard).get_docs(vocab))
    return docs


def saved_weights(model: Path, name: str) -> Weights:
    return spacy.load(model).get_pipe(name).averaged_weights


def difference(a: Weights, b: Weights) -> float:
    d = mix([table_of(a), table_of(b)], [1.0, -1.0])[3]
    return float(numpy.abs(d).max()) if len(d) else 0.0


# --- hooks run in the workers -------------------------------------------------
def record_run(marks: str):
    def hook(*index):
        Path(marks, "ran-" + "-".join(map(str, index))).touch()
    return hook


def die_once(marks: str, at):
    """Kill the worker process (no cleanup, as a crash) the first time the
    task `at` starts; later attempts run."""
    def hook(*index):
        marker = Path(marks, "died")
        if tuple(index) == tuple(at) and not marker.exists():
            marker.touch()
            os._exit(1)
    return hook


# --- mixing ------------------------------------------------------------------
def test_mix_is_the_weighted_sum_of_the_tables():
    rng = numpy.random.default_rng(0)
    tables, brute = [], {}
    coefs = [0.2, 0.3, 0.5]
    for c in coefs:
        w = Weights()
        for _ in range(200):
            feat, clas, delta = int(rng.integers(1, 40)), int(rng.integers(0, 5)), float(rng.normal())
            w.add(feat, clas, delta)
        w.shrink(0.5)  # a lazy L2 scale: true weights are scale * w
        tables.append(table_of(w))
        for (f, k), v in {(f, k): w.get(f, k) for f in range(1, 40) for k in range(5)}.items():
            brute[f, k] = brute.get((f, k), 0.0) + c * v
    keys, lengths, classes, ws = mix(tables, coefs)
    got = dict(zip(zip(numpy.repeat(keys, lengths).tolist(), classes.tolist()), ws.tolist()))
    assert set(got) == {k for k, v in brute.items() if v != 0.0}
    assert all(abs(got[k] - brute[k]) < 1e-12 for k in got)
    # the tables read from and written as Weights bytes, against Weights itself
    w = Weights().from_bytes(table_to_bytes((keys, lengths, classes, ws)))
    w.shrink(0.5)
    w.tick(3)
    assert all(numpy.array_equal(a, b) for a, b in zip(table_from_bytes(w.to_bytes()), table_of(w)))
    fresh = Weights().from_bytes(table_to_bytes(table_of(w)))
    frozen = prediction_weights(table_of(w))
    assert fresh.time == 0 and frozen.frozen
    for f, k in got:
        assert fresh.get(f, k) == frozen.get(f, k) == w.get(f, k) == 0.5 * got[f, k]
    assert coefficients("updates", [1, 3]) == [0.25, 0.75]
    assert coefficients("uniform", [1, 3]) == [0.5, 0.5]
    with pytest.raises(ValueError, match="unknown weighting"):
        coefficients("votes", [1])


# --- annotate ----------------------------------------------------------------
def test_annotate_writes_every_doc_once_and_reports_bad_lines(client, tagger_model, jsonl, tmp_path):
    out = tmp_path / "out"
    log = io.StringIO()
    manifest = annotate(tagger_model, jsonl, out, shard_size=7, client=client, stdout=log)
    docs = read_output(out)
    assert sorted(d.user_data["id"] for d in docs) == list(range(60))  # docs in = docs out
    assert all(d.has_annotation("TAG") for d in docs)
    assert [b["line"] for b in manifest["bad_inputs"]] == [3, 7]
    assert "lines 3, 7" in log.getvalue()
    assert len(manifest["shards"]) == 9  # ceil(60 / 7)
    assert sum(s["docs"] for s in manifest["shards"].values()) == 60
    assert srsly.read_json(out / "manifest.json")["model_checksum"] == manifest["model_checksum"]
    # input line ranges: the first shard holds lines 1, 2, 4, 5, 6, 8, 9
    assert manifest["shards"]["shard-00000.spacy"]["sources"] == [1, 9]


def test_the_default_shard_size_gives_every_worker_several_shards(client, tagger_model, jsonl,
                                                                    tmp_path):
    """Without --shard-size: 4 shards per worker where the input allows (the
    2-worker cluster and 60 lines: 8 shards of 8), never above 1M characters
    (on average) nor 50,000 inputs a shard, a multiple of the workers in all;
    a resumed run keeps the shard size its manifest records."""
    assert auto_shard_size(60, 2, 60 * 40) == 8
    assert auto_shard_size(3, 16, 300) == 1
    # 10M inputs of 60 characters: the character cap, 600 shards, rounded
    # up to a multiple of the workers: 608 of 16,448 inputs
    assert auto_shard_size(10_000_000, 16, 600_000_000) == 16_448
    assert auto_shard_size(249_240, 2, 15_000_001) == 15_578  # 16 shards, not 15
    # short inputs: 4 shards per worker, however many inputs that makes
    assert auto_shard_size(249_240, 2, 5_000_000) == 31_155
    # long inputs: 100 of 100,000 characters each: 10 a shard
    assert auto_shard_size(1_000, 1, 100_000_000) == 10
    assert auto_shard_size(1_000, 1, 10**12) == 1
    # empty inputs: the input cap
    assert auto_shard_size(10_000_000, 1, 0) == 50_000
    assert auto_shard_size(0, 4, 0) == 1
    out = tmp_path / "out"
    manifest = annotate(tagger_model, jsonl, out, client=client, stdout=io.StringIO())
    assert manifest["shard_size"] == 8 and len(manifest["shards"]) == 8
    (out / "shard-00003.spacy").unlink()
    log = io.StringIO()
    again = annotate(tagger_model, jsonl, out, client=client, stdout=log)
    assert again["shard_size"] == 8 and "7 already done, 1 to do" in log.getvalue()
    assert sorted(d.user_data["id"] for d in read_output(out)) == list(range(60))
    # a running cluster named by its address: its workers are counted
    other = annotate(tagger_model, jsonl, tmp_path / "other", scheduler=client.scheduler.address,
                     stdout=io.StringIO())
    assert other["shard_size"] == 8


def test_the_workers_load_the_model_first_and_write_the_shards(client, tagger_model, jsonl,
                                                               tmp_path, monkeypatch):
    """Every worker has loaded the pipeline before the first partition
    (even a worker that gets no partition: one shard here); the shard files
    are written by the workers, not the client; the fixed costs are timed
    apart from annotating (manifest "timings", and the closing line), the
    loading overlapping the reading of the input."""
    from spacy_lookahead.distributed import annotate as module

    write_atomic = module.write_atomic

    def client_writes(path, data):
        assert not Path(path).name.startswith("shard-"), f"the client wrote {path}"
        write_atomic(path, data)
    monkeypatch.setattr(module, "write_atomic", client_writes)
    client.run(lambda: module._PIPELINES.clear())
    log = io.StringIO()
    manifest = annotate(tagger_model, jsonl, tmp_path / "out", shard_size=100, client=client,
                        stdout=log)
    loaded = client.run(lambda: len(module._PIPELINES))
    assert len(loaded) == 2 and set(loaded.values()) == {1}
    assert sorted(d.user_data["id"] for d in read_output(tmp_path / "out")) == list(range(60))
    assert not list((tmp_path / "out").glob(".annotate-run-*"))  # the token is gone
    t = manifest["timings"]
    assert t["workers"] == 2 and t["tokens"] == sum(d["tokens"] for d in manifest["shards"].values())
    assert t["model"] > 0 and t["annotate"] > 0 and t["cluster"] == 0.0  # (a given client)
    # a new run: the model is shipped and loaded while the input is read
    assert t["model"] >= t["read"] > 0 and t["whole"] >= t["model"] + t["annotate"]
    # srsly writes floats with 9 decimals: a tiny time (an import already
    # done, microseconds) keeps only a few digits
    assert srsly.read_json(tmp_path / "out" / "manifest.json")["timings"] == pytest.approx(
        t, abs=1e-9)
    assert "model shipped and loaded on 2 workers" in log.getvalue()


def test_a_worker_that_cannot_see_the_output_sends_the_shard_back(tagger_model, tmp_path):
    """A worker without the client's OUTPUT_DIR (no token file there: a
    cluster without a shared disk) returns the shard's bytes for the
    client to write; one that sees it writes the file and returns none."""
    from spacy_lookahead.distributed import annotate as module
    from spacy_lookahead.distributed.inputs import Inputs, partition_payload
    from spacy_lookahead.distributed.manifest import model_checksum

    files, checksum = module.model_files(tagger_model), model_checksum(tagger_model)
    payload = partition_payload(Inputs("jsonl", items=[("The dog barks .", {"id": 3})],
                                       sources=[1]), 0, 1)
    (tmp_path / ".token").write_bytes(b"")
    away = module.annotate_partition(files, checksum, payload, 8, 1, 4,
                                     output=(str(tmp_path), ".other-token"))
    assert away["bytes"] and not (tmp_path / "shard-00004.spacy").exists()
    here = module.annotate_partition(files, checksum, payload, 8, 1, 4,
                                     output=(str(tmp_path), ".token"))
    assert here["bytes"] is None and here["docs"] == 1
    assert (tmp_path / "shard-00004.spacy").read_bytes() == away["bytes"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [".token", "shard-00004.spacy"]


def test_annotate_keeps_numpy_user_data(client, ewt_corpus, jsonl, tmp_path):
    """A tagger with alternatives (as configs/pipeline_ewt.cfg's) keeps
    numpy arrays in doc.user_data: annotate packs them as spaCy does
    (msgpack without numpy support raised TypeError and stopped the run)."""
    from spacy_lookahead.pipes.tagger import TAG_ALTERNATIVE, TAG_ALTERNATIVE_PROB
    model = tmp_path / "alternatives"
    serial_train(ewt_corpus, model, 1, **{"components.lookahead_tagger.alternatives": True})
    out = tmp_path / "out"
    annotate(model / "model-last", jsonl, out, shard_size=20, client=client, stdout=io.StringIO())
    docs = read_output(out)
    assert sorted(d.user_data["id"] for d in docs) == list(range(60))
    assert all(len(d.user_data[TAG_ALTERNATIVE_PROB]) == len(d) for d in docs)
    assert any(numpy.asarray(d.user_data[TAG_ALTERNATIVE]).any() for d in docs)


def test_inputs_are_read_as_written_and_bad_bytes_reported(tmp_path):
    """JSONL lines end at "\\n" only (a text may hold U+2028, U+0085, a form
    feed; a line may end in "\\r\\n"); a line that is not UTF-8 is a bad
    input with its number, the lines after it keep theirs; a byte order mark
    starts a file harmlessly; .TXT files are text files."""
    from spacy_lookahead.distributed.inputs import n_chars, read_inputs
    odd = srsly.json_dumps({"text": "a\u2028b\u0085c\x0cd", "id": 1}).encode("utf8")
    lines = [odd, b'{"text": "\xff"}', b'{"text": "ok", "id": 3}\r', b"", b'{"id": 5}']
    path = tmp_path / "input.JSONL"
    path.write_bytes(b"\xef\xbb\xbf" + b"\n".join(lines) + b"\n")
    inputs = read_inputs(path)
    assert inputs.items == [("a\u2028b\u0085c\x0cd", {"id": 1}), ("ok", {"id": 3})]
    assert inputs.sources == [1, 3]
    assert [(b["line"], b["error"][:10]) for b in inputs.bad] == [(2, "not UTF-8 "),
                                                                   (5, 'no "text" ')]
    folder = tmp_path / "texts"
    folder.mkdir()
    (folder / "A.TXT").write_bytes(b"\xef\xbb\xbfhello")
    (folder / "b.txt").write_bytes(b"\xff")
    inputs = read_inputs(folder)
    assert inputs.items == [("hello", {"file": "A.TXT"})]
    assert inputs.bad[0]["file"] == "b.txt"
    assert n_chars(inputs) == 5  # the good inputs' text, for the shard size


def test_reading_leaves_the_cycle_collector_as_it_was(tmp_path, monkeypatch):
    """The collector is off while the input is read (it rescanned every
    input read so far) and back as it was after: on, off, or after a read
    that failed."""
    import gc

    from spacy_lookahead.distributed import inputs as inputs_module
    path = tmp_path / "input.jsonl"
    path.write_text('{"text": "a"}\n')
    seen = []
    real = inputs_module._read_jsonl
    monkeypatch.setattr(inputs_module, "_read_jsonl",
                        lambda p: seen.append(gc.isenabled()) or real(p))
    enabled = gc.isenabled()
    try:
        gc.enable()
        assert inputs_module.read_inputs(path).items == [("a", {})]
        assert gc.isenabled()
        gc.disable()
        inputs_module.read_inputs(path)
        assert not gc.isenabled()
        gc.enable()
        monkeypatch.setattr(inputs_module, "_read_jsonl", lambda p: 1 / 0)
        with pytest.raises(ZeroDivisionError):
            inputs_module.read_inputs(path)
        assert gc.isenabled()
    finally:
        (gc.enable if enabled else gc.disable)()
    assert seen == [False, False]


def test_a_doc_the_pipeline_rejects_is_listed_and_the_run_goes_on(client, tagger_model, jsonl,
                                                                   tmp_path):
    """One input the pipeline raises on (a text over spaCy's max_length):
    its partition keeps the other docs, the input goes to rejects.jsonl with
    its line and the error, and a resumed run keeps the list: docs in =
    docs out + bad inputs + rejects."""
    lines = jsonl.read_text(encoding="utf8").splitlines()
    lines.insert(10, srsly.json_dumps({"text": "a " * 500_001, "id": 999}))
    path = tmp_path / "input.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf8")
    out = tmp_path / "out"
    log = io.StringIO()
    manifest = annotate(tagger_model, path, out, shard_size=7, client=client, stdout=log)
    assert sorted(d.user_data["id"] for d in read_output(out)) == list(range(60))
    rejects = list(srsly.read_jsonl(out / "rejects.jsonl"))
    assert [r["line"] for r in rejects] == [11] and "E088" in rejects[0]["error"]
    assert "1 inputs rejected" in log.getvalue()
    again = annotate(tagger_model, path, out, shard_size=7, client=client, stdout=io.StringIO())
    assert list(srsly.read_jsonl(out / "rejects.jsonl")) == rejects
    assert sum(len(s["rejected"]) for s in again["shards"].values()) == 1


ODD_TEXT = "a\u2028b\u0085c\x0cd"  # splitlines() would break a JSONL line at each


def odd_lines_file(jsonl: Path, path: Path) -> List[int]:
    """The 60-line input with a line of every odd kind (a byte order mark,
    "\\r\\n", a text holding U+2028, U+0085 and a form feed, bytes that are
    not UTF-8, an empty line, a text over spaCy's max_length): the ids that
    must come out annotated."""
    lines = [line.encode("utf8") for line in jsonl.read_text(encoding="utf8").splitlines()]
    lines[0] = b"\xef\xbb\xbf" + lines[0]
    lines[4] += b"\r"
    lines.insert(12, srsly.json_dumps({"text": ODD_TEXT, "id": 100}).encode("utf8"))
    lines.insert(20, b'{"text": "\xff", "id": 101}')
    lines.insert(25, b"")
    lines.insert(30, srsly.json_dumps({"text": "a " * 500_001, "id": 102}).encode("utf8"))
    path.write_bytes(b"\n".join(lines) + b"\n")
    return sorted([*range(60), 100])


@pytest.mark.parametrize("settings", [{"components.lookahead_tagger.alternatives": True},
                                      {"components.lookahead_tagger.learner": {
                                          "@learners": "spacy_lookahead.SAPO.v1"},
                                       "components.lookahead_tagger.search": {
                                          "@search": "spacy_lookahead.TopN.v1"}}],
                         ids=["alternatives", "sapo"])
def test_annotate_loses_nothing_with_odd_lines_a_reject_and_a_killed_worker(
        client, ewt_corpus, jsonl, tmp_path, settings):
    """Every fault of issue 35 in one run, on the models whose user data is
    numpy (a tagger with alternatives, as pipeline_ewt's; a SAPO tagger):
    docs in = docs out + bad inputs + rejects, every doc written once,
    though a worker dies in the middle."""
    model = tmp_path / "model"
    serial_train(ewt_corpus, model, 1, **settings)
    expected = odd_lines_file(jsonl, tmp_path / "input.jsonl")
    out, marks = tmp_path / "out", tmp_path / "marks"
    marks.mkdir()
    manifest = annotate(model / "model-last", tmp_path / "input.jsonl", out, shard_size=7,
                        client=client, stdout=io.StringIO(), before=die_once(str(marks), (2,)))
    assert (marks / "died").exists()
    docs = read_output(out)
    assert sorted(d.user_data["id"] for d in docs) == expected
    assert [d.text for d in docs if d.user_data["id"] == 100] == [ODD_TEXT]
    bad = [b["line"] for b in manifest["bad_inputs"]]
    rejects = [r["line"] for r in srsly.read_jsonl(out / "rejects.jsonl")]
    assert bad == [3, 7, 21] and rejects == [31]  # not JSON, no "text", not UTF-8
    n_lines = len((tmp_path / "input.jsonl").read_bytes().split(b"\n")) - 1
    assert len(docs) + len(bad) + len(rejects) + 1 == n_lines  # (+ the empty line)
    assert all(d.has_annotation("TAG") for d in docs)


def test_settings_and_files_are_checked_before_any_work(tagger_model, jsonl, tmp_path,
                                                       monkeypatch):
    """A damaged manifest.json is named with the fix; train refuses an
    output it cannot write before its first round; annotate says Dask is
    missing before it writes a manifest (so a retry may change settings)."""
    from spacy_lookahead.distributed import annotate as annotate_module
    from spacy_lookahead.distributed.train import train
    out = tmp_path / "out"
    out.mkdir()
    (out / "manifest.json").write_text("{not json", encoding="utf8")
    with pytest.raises(ValueError, match=r"manifest.json is damaged.*another output folder"):
        annotate(tagger_model, jsonl, out, client=object(), stdout=io.StringIO())
    blocker = tmp_path / "a-file"
    blocker.write_text("x", encoding="utf8")
    with pytest.raises(FileExistsError, match="is a file, not a folder"):
        train(CONFIGS / "tagger_ewt.cfg", blocker, client=object())

    def no_dask():
        raise ImportError("spacy_lookahead.distributed needs Dask")
    monkeypatch.setattr(annotate_module, "require_distributed", no_dask)
    with pytest.raises(ImportError):
        annotate(tagger_model, jsonl, tmp_path / "fresh", stdout=io.StringIO())
    assert not (tmp_path / "fresh").exists()


def test_the_cli_refuses_bad_arguments_in_one_line(tmp_path, capsys):
    """0 workers or shards is an error, not the default; a user error is
    one line and exit status 2, with a traceback only under --verbose."""
    from spacy_lookahead.distributed.__main__ import main
    for argv in (["annotate", "m", "i.jsonl", "out", "--workers", "0"],
                 ["train", "c.cfg", "--shards", "0"], ["train", "c.cfg", "--mixing", "foo"],
                 ["train", "c.cfg", "--scorers", "-1"]):
        with pytest.raises(SystemExit) as info:
            main(argv)
        assert info.value.code == 2, argv
    assert main(["annotate", str(tmp_path / "missing"), str(tmp_path / "i.jsonl"),
                 str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("python -m spacy_lookahead.distributed annotate: error: model")
    assert "Traceback" not in "\n".join(err) and not (tmp_path / "out").exists()
    with pytest.raises(FileNotFoundError):
        main(["annotate", str(tmp_path / "missing"), str(tmp_path / "i.jsonl"),
              str(tmp_path / "out"), "--verbose"])


def test_annotate_resumes_and_skips_finished_shards(client, tagger_model, jsonl, tmp_path):
    out, marks = tmp_path / "out", tmp_path / "marks"
    marks.mkdir()
    annotate(tagger_model, jsonl, out, shard_size=20, client=client, stdout=io.StringIO())
    before = {p.name: p.stat().st_mtime_ns for p in out.glob("shard-*.spacy")}
    # an interrupted run: shard 1 was never listed
    manifest = srsly.read_json(out / "manifest.json")
    del manifest["shards"]["shard-00001.spacy"]
    srsly.write_json(out / "manifest.json", manifest)
    annotate(tagger_model, jsonl, out, shard_size=20, client=client, stdout=io.StringIO(),
             before=record_run(str(marks)))
    assert sorted(p.name for p in marks.iterdir()) == ["ran-1"]
    after = {p.name: p.stat().st_mtime_ns for p in out.glob("shard-*.spacy")}
    assert {k: v for k, v in after.items() if k != "shard-00001.spacy"} == \
        {k: v for k, v in before.items() if k != "shard-00001.spacy"}
    assert sorted(d.user_data["id"] for d in read_output(out)) == list(range(60))
    with pytest.raises(ValueError, match="another shard size"):
        annotate(tagger_model, jsonl, out, shard_size=10, client=client, stdout=io.StringIO())


def test_annotate_redoes_the_partition_of_a_killed_worker(client, tagger_model, jsonl, tmp_path):
    out, marks = tmp_path / "out", tmp_path / "marks"
    marks.mkdir()
    annotate(tagger_model, jsonl, out, shard_size=10, client=client, stdout=io.StringIO(),
             before=die_once(str(marks), (2,)))
    assert (marks / "died").exists()  # a worker did die in the run
    ids = [d.user_data["id"] for d in read_output(out)]
    assert sorted(ids) == list(range(60))  # every doc exactly once


def test_annotate_reads_txt_folders_and_docbins(client, tagger_model, tmp_path):
    texts = tmp_path / "texts"
    texts.mkdir()
    for i in range(5):
        (texts / f"{i}.txt").write_text(f"Text number {i} is here .", encoding="utf8")
    (texts / "bad.txt").write_bytes(b"\xff\xfe not utf-8 \xff")
    manifest = annotate(tagger_model, texts, tmp_path / "out1", shard_size=2, client=client,
                        stdout=io.StringIO())
    docs = read_output(tmp_path / "out1")
    assert sorted(d.user_data["file"] for d in docs) == [f"{i}.txt" for i in range(5)]
    assert [b["file"] for b in manifest["bad_inputs"]] == ["bad.txt"]
    # a DocBin in: the same docs (words) out, tagged
    vocab = spacy.blank("en").vocab
    gold = [eg.predicted for eg in ewt_examples(vocab, "dev", 25)]
    DocBin(docs=gold).to_disk(tmp_path / "in.spacy")
    annotate(tagger_model, tmp_path / "in.spacy", tmp_path / "out2", shard_size=10,
             client=client, stdout=io.StringIO())
    docs = read_output(tmp_path / "out2")
    assert [[t.text for t in d] for d in docs] == [[t.text for t in d] for d in gold]
    assert all(d.has_annotation("TAG") for d in docs)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        annotate(tagger_model, tmp_path / "missing.jsonl", tmp_path / "out3", client=client)


def test_a_worker_loads_the_shipped_model_without_its_path(tagger_model, tmp_path, monkeypatch):
    """The task gets the model's files, not a path the worker may not see:
    the model directory is gone, the worker writes the files to its own
    temporary directory and tags with them."""
    import shutil
    import tempfile

    from spacy_lookahead.distributed import annotate as module
    from spacy_lookahead.distributed.inputs import Inputs, partition_payload
    from spacy_lookahead.distributed.manifest import model_checksum

    copy = tmp_path / "client-model"
    shutil.copytree(tagger_model, copy)
    files, checksum = module.model_files(copy), model_checksum(copy)
    shutil.rmtree(copy)
    (tmp_path / "worker-tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "worker-tmp"))
    monkeypatch.setattr(module, "_PIPELINES", {})
    payload = partition_payload(Inputs("jsonl", items=[("The dog barks .", {"id": 3})],
                                       sources=[1]), 0, 1)
    out = module.annotate_partition(files, checksum, payload, 8, 1, 0)
    doc, = DocBin(store_user_data=True).from_bytes(out["bytes"]).get_docs(spacy.blank("en").vocab)
    assert doc.has_annotation("TAG") and doc.user_data["id"] == 3
    cache = tmp_path / "worker-tmp" / f"spacy-lookahead-models-{os.getuid()}"
    assert (cache / checksum / "meta.json").exists()
    assert cache.stat().st_mode & 0o777 == 0o700


def test_shipping_trusts_no_name_link_or_cache_entry(tagger_model, tmp_path, monkeypatch):
    """A link out of the model directory is refused (it would ship a private
    file); a shipped name with ".." is refused; a cache entry planted under
    the checksum, or one that lost a file, is replaced by the shipped files;
    a cache folder that is not private is refused."""
    import shutil
    import tempfile

    from spacy_lookahead.distributed import annotate as module
    from spacy_lookahead.distributed.manifest import model_checksum

    copy = tmp_path / "client-model"
    shutil.copytree(tagger_model, copy)
    secret = tmp_path / "secret.txt"
    secret.write_text("private", encoding="utf8")
    (copy / "notes.txt").symlink_to(secret)
    with pytest.raises(ValueError, match="outside the model directory"):
        module.model_files(copy)
    (copy / "notes.txt").unlink()
    files, checksum = module.model_files(copy), model_checksum(copy)
    (tmp_path / "worker-tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "worker-tmp"))
    with pytest.raises(ValueError, match="not a path inside"):
        module._materialize({**files, "../escape.txt": b"x"},
                            module.files_checksum({**files, "../escape.txt": b"x"}))
    assert not (tmp_path / "worker-tmp" / "escape.txt").exists()
    cache = module._cache_root()
    planted = cache / checksum
    planted.mkdir()
    (planted / "meta.json").write_text("{}", encoding="utf8")
    assert model_checksum(module._materialize(files, checksum)) == checksum
    (planted / "meta.json").unlink()  # an entry that lost a file
    assert model_checksum(module._materialize(files, checksum)) == checksum
    cache.chmod(0o777)
    with pytest.raises(PermissionError, match="not a private folder"):
        module._materialize(files, checksum)
    cache.chmod(0o700)


# --- train -------------------------------------------------------------------
def test_the_workers_mix_in_pairs_as_tree_mix_does(client):
    """mix_tree on the cluster: the leaves and pairs run on the workers and
    give tree_mix's tables bitwise (the flat mix within 1e-12:
    tests/test_distributed_tree.py)."""
    from spacy_lookahead.distributed.cluster import _data
    from spacy_lookahead.distributed.train import _coefficients, mix_tree, tree_mix
    from test_distributed_tree import tables_of

    tables = tables_of(5, 5)
    results = [client.submit(_data, {"components": {n: {"raw": t} for n, t in shard.items()}})
               for shard in tables]
    stats = [{"components": {n: {"updates": float(i + 1), "ticks": 1} for n in shard}}
             for i, shard in enumerate(tables)]
    mus = _coefficients("updates", stats)
    root = mix_tree(client, results, {n: "raw" for n in tables[0]}, client.submit(_data, mus),
                    "test-tree").result()
    want = tree_mix(tables, mus)
    for name in want:
        assert all(a.tobytes() == b.tobytes() for a, b in zip(root[name], want[name]))


SAPO_AVERAGED = {"components.lookahead_tagger.learner": {"@learners": "spacy_lookahead.SAPO.v1",
                                                          "average": True},
                 "components.lookahead_tagger.search": {"@search": "spacy_lookahead.TopN.v1"},
                 "corpora.train.limit": 300}


@pytest.mark.parametrize("learner", [{}, SAPO_AVERAGED], ids=["perceptron", "sapo-averaged"])
def test_one_shard_reproduces_spacy_train(client, ewt_corpus, tmp_path, learner):
    """One shard, one round = one epoch of spacy train, bitwise; two rounds
    = two epochs up to rounding (the average is summed per round); for SAPO
    with averaging too, whose L2 shrinks the weights between updates."""
    for epochs in (1, 2):
        serial_train(ewt_corpus, tmp_path / f"serial{epochs}", epochs, **learner)
        train(CONFIGS / "tagger_ewt.cfg", tmp_path / f"ipm{epochs}", client=client, shards=1,
              overrides={**tagger_overrides(ewt_corpus, epochs), **learner}, stdout=io.StringIO())
        a = saved_weights(tmp_path / f"serial{epochs}" / "model-last", "lookahead_tagger")
        b = saved_weights(tmp_path / f"ipm{epochs}" / "model-last", "lookahead_tagger")
        if epochs == 1:
            assert a.to_bytes() == b.to_bytes()
        else:  # SAPO's real-valued sums may leave ±1e-18 where the other has 0 (no entry)
            assert (len(a) == len(b) or learner) and difference(a, b) < 1e-9


def test_ipm_starts_before_any_worker_has_joined(client, ewt_corpus, tmp_path, monkeypatch):
    """Where the scheduler lists no worker yet when the shards are sent
    (a cluster still starting, a worker restarting), they go unpinned to
    whichever worker joins: Dask refuses allow_other_workers without
    workers, and once failed a run of the suite so."""
    listed = client.scheduler_info
    monkeypatch.setattr(client, "scheduler_info",
                        lambda *a, **k: {**listed(*a, **k), "workers": {}})
    train(CONFIGS / "tagger_ewt.cfg", tmp_path / "ipm", client=client, shards=2,
          overrides=tagger_overrides(ewt_corpus, 1), stdout=io.StringIO())
    assert saved_weights(tmp_path / "ipm" / "model-last", "lookahead_tagger")


def test_ipm_is_deterministic_through_a_killed_worker(client, ewt_corpus, tmp_path):
    """Same config, seed and shards: the same weights, even when a worker
    dies mid-round (its shard is retrained from the same start); and the
    IPM tagger reaches a floor of accuracy on dev."""
    marks = tmp_path / "marks"
    marks.mkdir()
    runs = []
    for run, hook in (("a", None), ("b", die_once(str(marks), (1, 1)))):
        history = train(CONFIGS / "tagger_ewt.cfg", tmp_path / run, client=client, shards=3,
                        overrides=tagger_overrides(ewt_corpus, 2), before=hook,
                        stdout=io.StringIO())
        runs.append((history, saved_weights(tmp_path / run / "model-last", "lookahead_tagger")))
    assert (marks / "died").exists()
    assert runs[0][1].to_bytes() == runs[1][1].to_bytes()
    history = runs[0][0]
    assert history[-1]["scores"]["tag_acc"] > 0.85  # 600 sentences, 2 rounds (serial: ~0.87)
    # model-best is an ordinary pipeline: spacy.load + evaluate give its score
    best = max(h["score"] for h in history)
    nlp = spacy.load(tmp_path / "a" / "model-best")
    from spacy.training import Corpus
    dev = Corpus(ewt_corpus / "dev.spacy", gold_preproc=True)(nlp)
    assert abs(nlp.evaluate(dev)["tag_acc"] - best) < 1e-12


def test_a_shards_epoch_order_ignores_other_draws_from_the_global_rng(ewt_corpus, monkeypatch):
    """A worker runs Dask's event loop in another thread, which draws from
    Python's global random generator: a draw between the task's seeding and
    its shuffle must not change the shard's epoch (it did: runs on 2
    workers differed from round 3 on)."""
    import pickle
    import random

    import spacy.util
    from spacy_lookahead.distributed import train as ipm

    job = ipm.Job.create(CONFIGS / "tagger_ewt.cfg", tagger_overrides(ewt_corpus, 2), 2, 2,
                          io.StringIO())
    setup = pickle.dumps(job.nlp)

    def epoch():
        ipm._RUNS.clear()
        out = ipm.train_shard("rng", setup, job.shards[1], ["lookahead_tagger"], "mix", [], 1, 1)
        return b"".join(a.tobytes() for a in out["components"]["lookahead_tagger"]["raw"])

    alone = epoch()
    seed = spacy.util.fix_random_seed

    def seed_then_another_thread_draws(value):
        seed(value)
        random.random()

    monkeypatch.setattr(spacy.util, "fix_random_seed", seed_then_another_thread_draws)
    assert epoch() == alone
    ipm._RUNS.clear()


_PASSED = []  # examples through the counting augmenter, in this process


@spacy.registry.augmenters("test_lookahead.counting.v1")
def counting_augmenter():
    def augment(nlp, example):
        _PASSED.append(example.reference.text)
        yield example
    return augment


@pytest.mark.parametrize("max_epochs,passed", [(2, 600), (-1, 100 + 600)])
def test_the_training_corpus_is_read_once(ewt_corpus, tmp_path, max_epochs, passed):
    """The shards are cut from the examples init_nlp reads (the reader costs
    ~1 ms a doc); if init_nlp reads only part of the corpus (max_epochs -1:
    the first 100 examples), the corpus is read again. The pipeline's config
    names the user's reader either way, and the shards hold every example."""
    from spacy_lookahead.distributed import train as ipm

    text = (CONFIGS / "tagger_ewt.cfg").read_text(encoding="utf8")
    end = "augmenter = null\n\n[corpora.dev]"  # the end of the train corpus's block
    assert end in text
    config = tmp_path / "counting.cfg"
    config.write_text(text.replace(end, "\n[corpora.train.augmenter]\n@augmenters = "
                                   "\"test_lookahead.counting.v1\"\n\n[corpora.dev]"),
                      encoding="utf8")
    _PASSED.clear()
    job = ipm.Job.create(config, {**tagger_overrides(ewt_corpus, max_epochs)}, 2, 1, io.StringIO())
    assert len(_PASSED) == passed
    assert job.nlp.config["corpora"]["train"]["@readers"] == "spacy.Corpus.v1"
    assert job.nlp.config["corpora"]["train"]["augmenter"] == {
        "@augmenters": "test_lookahead.counting.v1"}
    assert "remembered" not in job.nlp.config.to_str()
    texts = [doc.text for shard in job.shards
             for doc in DocBin().from_bytes(shard["reference"]).get_docs(job.nlp.vocab)]
    assert sorted(texts) == sorted(_PASSED[-600:])


def test_fixed_msgpack_registries_look_up_once_and_change_nothing(ewt_corpus, monkeypatch):
    """Within the block, reading a DocBin with user data and span groups
    looks up srsly's msgpack registries once, not per doc (~0.5 ms each:
    half of reading a corpus); the docs are the same; after it the
    registries look up again (and a registered decoder still applies)."""
    import catalogue

    from spacy_lookahead.distributed.lookups import fixed_msgpack_registries

    vocab = spacy.blank("en").vocab
    docs = list(DocBin().from_disk(ewt_corpus / "dev.spacy").get_docs(vocab))[:40]
    for i, doc in enumerate(docs):
        doc.user_data["i"] = i
        doc.spans["first"] = [doc[:1]]
    data = DocBin(docs=docs, store_user_data=True).to_bytes()
    lookups = []
    real = catalogue.Registry.get_all
    monkeypatch.setattr(catalogue.Registry, "get_all",
                        lambda self: lookups.append(self.namespace) or real(self))

    def read():
        lookups.clear()
        out = list(DocBin().from_bytes(data).get_docs(vocab))
        return [(d.to_bytes(), d.user_data["i"], [s.text for s in d.spans["first"]]) for d in out], \
            len(lookups)

    plain, plain_lookups = read()
    with fixed_msgpack_registries():
        fixed, fixed_lookups = read()
        with fixed_msgpack_registries():  # nested: still fixed
            assert read()[1] == 0
        assert read()[1] == 0
    assert plain_lookups >= 2 * len(docs) and fixed_lookups == 0
    assert fixed == plain
    assert read()[1] == plain_lookups  # the registries' own lookups again
    array = numpy.arange(3.0)
    with fixed_msgpack_registries():  # srsly's numpy encoder and decoder still apply
        assert (srsly.msgpack_loads(srsly.msgpack_dumps(array)) == array).all()


def chunker_overrides(n_train: int, n_dev: int, epochs: int):
    return {"paths.train": str(CONLL2000 / "train.txt"), "paths.dev": str(CONLL2000 / "test.txt"),
            "corpora.train.limit": n_train, "corpora.dev.limit": n_dev,
            "training.max_epochs": epochs, "paths.curves": None}


def test_iterative_and_oneshot_mixing_of_the_chunker(client, tmp_path):
    """Round 1 is the same for both (every shard starts from zero); then
    iterative mixing restarts from the mix and one-shot does not."""
    results = {}
    for mixing, weighting in (("iterative", "uniform"), ("oneshot", "uniform"),
                              ("iterative", "updates")):
        history = train(CONFIGS / "chunker_conll2000.cfg", tmp_path / f"{mixing}-{weighting}",
                        client=client, shards=2, mixing=mixing, weighting=weighting,
                        overrides=chunker_overrides(400, 150, 2), stdout=io.StringIO())
        results[mixing, weighting] = history
        assert history[-1]["scores"]["spans_chunks_f"] > 0.75
    iterative, oneshot = results["iterative", "uniform"], results["oneshot", "uniform"]
    assert iterative[0]["score"] == oneshot[0]["score"]
    assert iterative[1]["losses"] != oneshot[1]["losses"]
    # mixing by update counts (the shards differ in them) starts round 2 elsewhere
    assert results["iterative", "updates"][1]["losses"] != iterative[1]["losses"]
    a, b = (saved_weights(tmp_path / f"{m}-uniform" / "model-last", "lookahead_chunker")
            for m in ("iterative", "oneshot"))
    assert difference(a, b) > 0
    with pytest.raises(ValueError, match="unknown mixing"):
        train(CONFIGS / "chunker_conll2000.cfg", None, client=client, mixing="twice")


def test_ipm_trains_the_fr_chunker(client, tmp_path):
    history = train(CONFIGS / "fr_chunker_conll2000.cfg", tmp_path / "fr", client=client,
                    shards=2, overrides=chunker_overrides(200, 100, 1), stdout=io.StringIO())
    assert history[-1]["scores"]["spans_chunks_f"] > 0.5
    assert spacy.load(tmp_path / "fr" / "model-best").pipe_names == ["fr_chunker"]


@pytest.mark.parametrize("learner", [
    {"components.lookahead_tagger.learner": {"@learners": "spacy_lookahead.SAPO.v1"},
     "components.lookahead_tagger.search": {"@search": "spacy_lookahead.TopN.v1"}},
    # SAPO with averaging: the rounds' mixed averages, as the perceptron's
    {"components.lookahead_tagger.learner": {"@learners": "spacy_lookahead.SAPO.v1", "average": True},
     "components.lookahead_tagger.search": {"@search": "spacy_lookahead.TopN.v1"}},
    {"components.lookahead_tagger.search": {"@search": "spacy_lookahead.Beam.v1", "width": 4},
     "components.lookahead_tagger.learner": {"@learners": "spacy_lookahead.ViolationFixing.v1"}},
], ids=["sapo", "sapo-averaged", "beam-max-violation"])
def test_ipm_trains_every_learner(client, ewt_corpus, tmp_path, learner):
    history = train(CONFIGS / "tagger_ewt.cfg", tmp_path / "out", client=client, shards=2,
                    overrides={**tagger_overrides(ewt_corpus, 1), **learner,
                               "corpora.train.limit": 300, "corpora.dev.limit": 100},
                    stdout=io.StringIO())
    assert history[-1]["scores"]["tag_acc"] > 0.7
    loaded = spacy.load(tmp_path / "out" / "model-last").get_pipe("lookahead_tagger")
    assert loaded.learner.kind == ("sapo" if "SAPO" in str(learner) else "perceptron")
    assert loaded.learner.averages == ("SAPO" not in str(learner) or "'average': True" in str(learner))


@pytest.mark.parametrize("config,overrides", [
    ("chunker_conll2000.cfg", lambda corpus: chunker_overrides(300, 101, 2)),
    ("tagger_ewt.cfg", lambda corpus: {**tagger_overrides(corpus, 2), "corpora.train.limit": 300}),
], ids=["chunker", "tagger"])
def test_the_workers_annotate_dev_and_the_scores_are_the_drivers(client, ewt_corpus, tmp_path,
                                                                 config, overrides):
    """evaluate = "workers": each round's model annotates a part of dev on
    each worker; what comes back is scored by processes beside the driver
    (scorers, rounds side by side) or by the driver (0): the same scores,
    every round, as annotating on the driver (speed aside), and the same
    models saved."""
    runs = {}
    for where, scorers in (("workers", 2), ("workers", 0), ("driver", 2)):
        runs[where, scorers] = train(CONFIGS / config, tmp_path / f"{where}{scorers}",
                                     client=client, shards=2, overrides=overrides(ewt_corpus),
                                     evaluate=where, scorers=scorers, stdout=io.StringIO())
    for run in (("workers", 2), ("workers", 0)):
        assert [h["round"] for h in runs[run]] == [1, 2]
        for a, b in zip(runs[run], runs["driver", 2]):
            assert a["score"] == b["score"] > 0.5
            assert {k: v for k, v in a["scores"].items() if k != "speed"} == \
                {k: v for k, v in b["scores"].items() if k != "speed"}
            assert a["scores"]["speed"] > 0
        for kind in ("model-best", "model-last"):
            assert (tmp_path / f"{run[0]}{run[1]}" / kind / "meta.json").read_bytes() != b""
            name = "lookahead_chunker" if "chunker" in config else "lookahead_tagger"
            a = saved_weights(tmp_path / f"{run[0]}{run[1]}" / kind, name)
            b = saved_weights(tmp_path / "driver2" / kind, name)
            assert a.to_bytes() == b.to_bytes()
    with pytest.raises(ValueError, match="--scorers"):
        train(CONFIGS / config, None, client=client, scorers=-1)
    with pytest.raises(ValueError, match="unknown evaluate"):
        train(CONFIGS / config, None, client=client, evaluate="nowhere")


def test_the_client_of_a_run_on_texts_does_not_import_spacy(tmp_path):
    """Reading and cutting a JSONL input needs no spaCy: the client of a run
    on texts does not pay its import (seconds on a many-core machine's
    cold start); the workers import it to annotate."""
    import subprocess
    import sys

    path = tmp_path / "in.jsonl"
    path.write_text('{"text": "A dog barks."}\n{"text": "Cats too."}\n', encoding="utf8")
    code = ("import sys; from spacy_lookahead.distributed import annotate, inputs; "
            f"i = inputs.read_inputs({str(path)!r}); inputs.partition_payload(i, 0, 2); "
            "annotate.auto_shard_size(2, 2, inputs.n_chars(i)); "
            "print(sorted(m for m in sys.modules if m == 'spacy' or m.startswith('spacy.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_an_input_with_nothing_to_annotate_needs_no_cluster(client, tagger_model, tmp_path):
    """An empty input file starts no cluster (nothing to load the model
    for); an input of bad lines only, on a running cluster, cancels the
    model's loading it had started and lists the bad lines."""
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    manifest = annotate(tagger_model, empty, tmp_path / "out", workers=1, stdout=io.StringIO())
    assert manifest["shards"] == {} and manifest["timings"]["cluster"] == 0.0
    assert manifest["timings"]["model"] == 0.0
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"no text": 1}\nnot json\n', encoding="utf8")
    manifest = annotate(tagger_model, bad, tmp_path / "out2", client=client, stdout=io.StringIO())
    assert manifest["shards"] == {} and [b["line"] for b in manifest["bad_inputs"]] == [1, 2]
    assert manifest["timings"]["model"] == 0.0


def test_the_characters_of_a_docbin_input_are_its_texts(tmp_path):
    """n_chars of a .spacy input (for the shard size) is the length of its
    docs' texts, trailing spaces and empty docs included."""
    from spacy_lookahead.distributed.inputs import n_chars, read_inputs

    vocab = spacy.blank("en").vocab
    docs = [Doc(vocab, words=["A", "dog", "."], spaces=[True, False, True]),
            Doc(vocab, words=[]), Doc(vocab, words=["x"], spaces=[False])]
    DocBin(docs=docs).to_disk(tmp_path / "in.spacy")
    assert n_chars(read_inputs(tmp_path / "in.spacy")) == sum(len(d.text) for d in docs) == 8
