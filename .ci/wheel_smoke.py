"""What an installed wheel must do, run in a fresh environment outside the
repository (.ci/wheel here, cibuildwheel's test-command on a public CI):
import the compiled engine from site-packages, train the tagger, NER and
parser on a toy example, predict, and round-trip through bytes.

    python .ci/wheel_smoke.py [PIPELINE_NAME_OR_PATH]

With a pipeline (an installed package name or a directory), it also times
`spacy.load` and one `nlp(text)` on raw text and prints what the doc carries.
Exits non-zero on any failure.
"""
import sys
import time
from pathlib import Path

import spacy
from spacy.tokens import Doc
from spacy.training import Example

import spacy_lookahead
from spacy_lookahead.core import weights

TEXT = "The quick brown fox jumps over the lazy dog. It was not amused."


def installed_copy() -> Path:
    """The package must come from this environment's site-packages, compiled,
    not from a source tree."""
    package = Path(spacy_lookahead.__file__).resolve().parent
    if "site-packages" not in package.parts or Path(sys.prefix).resolve() not in package.parents:
        sys.exit(f"wheel smoke: spacy_lookahead imported from {package}, not {sys.prefix}")
    compiled = Path(weights.__file__)
    if compiled.suffix not in (".so", ".pyd"):
        sys.exit(f"wheel smoke: the engine is not compiled: {compiled}")
    return package


def toy_pipeline() -> None:
    nlp = spacy.blank("en")
    nlp.add_pipe("lookahead_tagger", config={
        "search": {"@search": "spacy_lookahead.Lookahead.v1", "depth": 1}})
    nlp.add_pipe("lookahead_ner", config={"search": {"@search": "spacy_lookahead.TopN.v1"},
                                          "learner": {"@learners": "spacy_lookahead.SAPO.v1"}})
    nlp.add_pipe("arc_standard_parser")
    words, tags = ["Ada", "Lovelace", "wrote", "programs", "."], ["NNP", "NNP", "VBD", "NNS", "."]
    gold = {"tags": tags, "heads": [1, 2, 2, 2, 2], "deps": ["compound", "nsubj", "ROOT", "obj", "punct"],
            "entities": ["B-PERSON", "L-PERSON", "O", "O", "O"]}
    examples = [Example.from_dict(Doc(nlp.vocab, words=words), gold)]
    nlp.initialize(lambda: examples)
    for _ in range(10):
        nlp.update(examples)
    doc = nlp(Doc(nlp.vocab, words=words))
    got = ([t.tag_ for t in doc], [(e.text, e.label_) for e in doc.ents], [t.head.i for t in doc])
    want = (tags, [("Ada Lovelace", "PERSON")], gold["heads"])
    if got != want:
        sys.exit(f"wheel smoke: the toy pipeline learned {got}, expected {want}")
    again = spacy.blank("en")
    for name in nlp.pipe_names:
        config = {k: v for k, v in nlp.get_pipe_config(name).items() if k != "factory"}
        again.add_pipe(nlp.get_pipe_meta(name).factory, name=name, config=config)
    again.from_bytes(nlp.to_bytes())
    redo = again(Doc(again.vocab, words=words))
    if [t.tag_ for t in redo] != tags or [t.head.i for t in redo] != gold["heads"]:
        sys.exit("wheel smoke: predictions changed after to_bytes / from_bytes")
    # pipe() on 2 threads: the C threads of a batch's search (core/decode.pyx)
    for name in again.pipe_names:
        again.get_pipe(name).cfg["n_threads"] = 2
    docs = list(again.pipe(Doc(again.vocab, words=words) for _ in range(300)))
    if any([t.tag_ for t in d] != tags or [t.head.i for t in d] != gold["heads"] for d in docs):
        sys.exit("wheel smoke: predictions on 2 threads differ from one thread's")
    print("toy tagger + NER + parser: trained, predicted, round-tripped, on 2 threads")


def load_pipeline(name: str) -> None:
    start = time.perf_counter()
    nlp = spacy.load(name)
    loaded = time.perf_counter() - start
    start = time.perf_counter()
    doc = nlp(TEXT)
    first = time.perf_counter() - start
    print(f"spacy.load({name!r}): {loaded:.2f} s; first nlp(text): {first:.3f} s; pipes {nlp.pipe_names}")
    for token in doc[:5]:
        print(f"  {token.text:8} tag_={token.tag_!r} pos_={token.pos_!r} lemma_={token.lemma_!r} "
              f"dep_={token.dep_!r} head={token.head.i}")
    print(f"  ents={[(e.text, e.label_) for e in doc.ents]} spans={ {k: len(v) for k, v in doc.spans.items()} }")


if __name__ == "__main__":
    print(f"spacy_lookahead {spacy_lookahead.__version__} from {installed_copy()}")
    toy_pipeline()
    if len(sys.argv) > 1:
        load_pipeline(sys.argv[1])
