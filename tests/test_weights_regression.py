"""Moving code must not move weights: every (system, learner) setting trained
on a fixed slice with a fixed order gives bitwise the weights recorded in
fixtures/weights_golden.json (training weights: values, running totals and
ticks). A deliberate change of the learner regenerates the file:

    python tests/test_weights_regression.py --write
"""
import hashlib
import json
import random
import sys
from pathlib import Path

import pytest
import spacy

import spacy_lookahead.pipes.phrases  # noqa: F401  (factories, when not pip-installed)
import spacy_lookahead.pipes.parser  # noqa: F401
import spacy_lookahead.pipes.spans  # noqa: F401
import spacy_lookahead.pipes.tagger  # noqa: F401

from conftest import SHARED_DATA
from ewt import ewt_examples
from parse_data import parse_examples
from spacy_lookahead.readers.clauses import ClauseCorpus
from spacy_lookahead.readers.columns import ColumnCorpus

GOLDEN = Path(__file__).parent / "fixtures" / "weights_golden.json"
SAPO = {"learner": "sapo", "n": 5}
BEAM = {"search": "beam", "beam_width": 4}

# name: (factory, config, data, slice size)
SETTINGS = {
    "tagger_d1": ("lookahead_tagger", {"depth": 1}, "ewt", 150),
    "tagger_d0_rtl_trigrams": ("lookahead_tagger", {"depth": 0, "direction": "rtl",
                                                    "tag_trigrams": True}, "ewt", 150),
    "tagger_sapo": ("lookahead_tagger", SAPO, "ewt", 150),
    # update = standard: Sun et al.'s complete-output update with the n-best beam
    "tagger_sapo_trigrams": ("lookahead_tagger", {**SAPO, "tag_trigrams": True,
                                                  "update": "standard"}, "ewt", 100),
    "chunker_d1": ("lookahead_chunker", {"depth": 1}, "conll2000", 150),
    "chunker_biluo_rtl_trigrams": ("lookahead_chunker", {"depth": 1, "scheme": "biluo",
                                                         "direction": "rtl",
                                                         "label_trigrams": True}, "conll2000", 100),
    "chunker_sapo": ("lookahead_chunker", SAPO, "conll2000", 150),
    "ner_d1_rtl": ("lookahead_ner", {"depth": 1, "direction": "rtl"}, "jnlpba", 150),
    "ner_sapo_rtl": ("lookahead_ner", {**SAPO, "direction": "rtl"}, "jnlpba", 150),
    "parser_greedy": ("arc_standard_parser", {"search": "greedy", "min_label_freq": 1}, "parse", 80),
    "parser_d1": ("arc_standard_parser", {"search": "lookahead", "depth": 1}, "parse", 50),
    **{f"parser_beam_{u}": ("arc_standard_parser", {**BEAM, "update": u}, "parse", 80)
       for u in ("standard", "early", "max_violation", "hybrid", "latest")},
    "fr_chunker": ("fr_chunker", {}, "conll2000", 150),
    "fr_clauses": ("fr_clause_finder", {}, "clauses", 150),
    "fr_clauses_classification": ("fr_clause_finder", {"feedback": "classification"}, "clauses", 100),
}


def examples(vocab, data, limit):
    if data == "ewt":
        return ewt_examples(vocab, "train", limit)
    if data == "parse":
        return parse_examples(vocab, "ewt", "train", limit, 2)
    if data == "clauses":
        corpus = ClauseCorpus(SHARED_DATA / "wsj_clauses" / "train.txt")
    elif data == "conll2000":
        corpus = ColumnCorpus(SHARED_DATA / "conll2000" / "train.txt", ["word", "pos", "chunk"], "chunk")
    else:
        corpus = ColumnCorpus(SHARED_DATA / "jnlpba" / "train.iob2", ["word", "ent"], "ent")
    return [eg for _, eg in zip(range(limit), corpus.read(vocab))]


def trained_weights_digest(name: str) -> str:
    factory, config, data, limit = SETTINGS[name]
    nlp = spacy.blank("en")
    pipe = nlp.add_pipe(factory, config=config)
    train = examples(nlp.vocab, data, limit)
    nlp.initialize(lambda: train)
    rng = random.Random(0)
    for _ in range(2):
        rng.shuffle(train)
        for i in range(0, len(train), 16):
            pipe.update(train[i:i + 16])
    return hashlib.sha256(pipe.weights.to_bytes()).hexdigest()


@pytest.mark.parametrize("name", sorted(SETTINGS))
def test_weights_are_bitwise_those_recorded(name, shared_data):
    golden = json.loads(GOLDEN.read_text())
    assert name in golden, f"no recorded weights for {name}: run this file with --write"
    assert trained_weights_digest(name) == golden[name]


if __name__ == "__main__" and "--write" in sys.argv:
    GOLDEN.write_text(json.dumps({name: trained_weights_digest(name) for name in sorted(SETTINGS)},
                                 indent=1) + "\n")
    print(f"wrote {GOLDEN}")
