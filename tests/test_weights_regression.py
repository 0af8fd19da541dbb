"""Moving code must not move weights: every (system, learner) setting trained
on a fixed slice with a fixed order gives bitwise the weights recorded in
fixtures/weights_golden.json (training weights: values, running totals and
ticks). A deliberate change of the learner regenerates the file:

    python tests/test_weights_regression.py --write [NAME ...]

(with names: records those settings only, e.g. new ones, and keeps the rest).
"""
import hashlib
import json
import random
import sys
from pathlib import Path

import pytest
import spacy
from spacy.training import Example

import spacy_lookahead.pipes.phrases  # noqa: F401  (factories, when not pip-installed)
import spacy_lookahead.pipes.parser  # noqa: F401
import spacy_lookahead.pipes.spans  # noqa: F401
import spacy_lookahead.pipes.tagger  # noqa: F401

from conftest import SHARED_DATA
from ewt import ewt_examples
from parse_data import parse_examples, words_only
from spacy_lookahead.pipes.tagger import TAG_ALTERNATIVE, TAG_ALTERNATIVE_PROB
from spacy_lookahead.readers.clauses import ClauseCorpus
from spacy_lookahead.readers.columns import ColumnCorpus
from blocks import blocks

GOLDEN = Path(__file__).parent / "fixtures" / "weights_golden.json"
SAPO = {"learner": "sapo", "n": 5}
BEAM = {"search": "beam", "beam_width": 4}
PARSER_TEMPLATES = ["suf2[s0] tag[q0]", "lower[s0l]", "pre4[s1]", "shape[q1] tag[s0]"]

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
    # what configs/pipeline_ewt.cfg trains: rich features, the tagger's
    # alternative tags, joint tagging (on the fixed tags of tagged_examples)
    "parser_beam_early_rich": ("arc_standard_parser", {**BEAM, "update": "early",
                                                       "features": "rich"}, "parse", 80),
    "parser_beam_early_rich_alternatives": ("arc_standard_parser", {
        **BEAM, "update": "early", "features": "rich", "tag_alternatives": True}, "tagged", 80),
    "parser_beam_early_rich_joint": ("arc_standard_parser", {
        **BEAM, "update": "early", "features": "rich", "tag_alternatives": True,
        "joint_tagging": True}, "tagged", 80),
    # templates on top of the fixed sets: a word-length atom that is absent
    # at short words (pre4), a dependent's position, a buffer position
    "parser_beam_early_rich_joint_templates": ("arc_standard_parser", {
        **BEAM, "update": "early", "tag_alternatives": True, "joint_tagging": True,
        "features": ["preset:rich", *PARSER_TEMPLATES]}, "tagged", 80),
    "parser_d1_templates": ("arc_standard_parser", {
        "search": "lookahead", "depth": 1, "features": PARSER_TEMPLATES}, "parse", 50),
    # templates over the state: chosen tags, valency, distance, labels
    "parser_beam_early_joint_state_templates": ("arc_standard_parser", {
        **BEAM, "update": "early", "tag_alternatives": True, "joint_tagging": True,
        "features": ["preset:base", "ctag[s0l2] lower[s0]", "nr[s1] ctag[s1]",
                     "dist[s1] depth[s0] tag[q0]", "label[s0l] lower[q0]", "lset[s1] ctag[s1]"]},
        "tagged", 80),
    "fr_chunker": ("fr_chunker", {}, "conll2000", 150),
    "fr_clauses": ("fr_clause_finder", {}, "clauses", 150),
    "fr_clauses_classification": ("fr_clause_finder", {"feedback": "classification"}, "clauses", 100),
}


def tagged_examples(vocab, limit):
    """Parse examples whose predicted docs carry tags and a tagger's
    alternatives, fixed by position (no tagger in the loop): every 7th word
    gets a wrong tag with the gold one as its alternative (p 0.4: joint
    tagging's gold SHIFT-ALT), every 5th other word its gold tag with a
    wrong alternative (p 0.1, still above ALTERNATIVE_MIN_PROB)."""
    out = []
    for eg in parse_examples(vocab, "ewt", "train", limit, 2):
        gold = [t.tag_ for t in eg.reference]
        tags, alts, probs = list(gold), [0] * len(gold), [0.0] * len(gold)
        for i, tag in enumerate(gold):
            other = "NN" if tag != "NN" else "JJ"
            if i % 7 == 3:
                tags[i], alts[i], probs[i] = other, vocab.strings.add(tag), 0.4
            elif i % 5 == 1:
                alts[i], probs[i] = vocab.strings.add(other), 0.1
        doc = words_only(vocab, eg.reference)
        for token, tag in zip(doc, tags):
            token.tag_ = tag
        doc.user_data[TAG_ALTERNATIVE], doc.user_data[TAG_ALTERNATIVE_PROB] = alts, probs
        out.append(Example(doc, eg.reference))
    return out


def examples(vocab, data, limit):
    if data == "tagged":
        return tagged_examples(vocab, limit)
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
    pipe = nlp.add_pipe(factory, config=blocks(factory, config))
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
    # --write NAME ...: record only these (new settings), keeping the others
    only = [a for a in sys.argv[1:] if a != "--write"] or sorted(SETTINGS)
    golden = json.loads(GOLDEN.read_text()) if GOLDEN.exists() else {}
    golden.update({name: trained_weights_digest(name) for name in only})
    GOLDEN.write_text(json.dumps(dict(sorted(golden.items())), indent=1) + "\n")
    print(f"wrote {GOLDEN}")
