"""Write docs/settings.md, the settings reference of the six components.

    python docs/generate_settings.py            # rewrite docs/settings.md
    python docs/generate_settings.py --check    # exit 1 if it is stale
    python -m spacy project run docs            # the same as the first

What the reference says about each setting comes from the code, not from a
copy: the components and their factories from the package's
`spacy_factories` entry points; each component's settings and their
defaults from its factory's `default_config`; what a setting accepts from
the factory's type hints (the `Literal` choices of
src/spacy_lookahead/pipes/settings.py) and from the validators themselves
(`settings.check_values`, `phrases.validate_fr_settings`: the rule a wrong
value's error states); the search and learner blocks, their settings and
defaults from their registered functions (`@search`, `@learners`), which
learner trains with which search from the learners' `searches`; which
settings a trained model fixes from each component class's
`feature_settings` and `model_settings`; what a component writes, reads and
scores from spaCy's factory meta. Only the explanations (PROSE, BLOCK_PROSE, INTROS) are
written here, and every setting a factory takes must have one: a new
setting without an explanation, or an explanation of a setting that is
gone, stops the generator. tests/test_docs.py fails when the committed file
differs from what this script writes.
"""
import argparse
import collections.abc
import inspect
import json
import sys
import typing
from collections import Counter
from importlib.metadata import entry_points
from pathlib import Path
from string import Template
from typing import Any, Callable, Dict, List, Optional, Tuple

from spacy.language import Language
from thinc.api import ConfigValidationError

from spacy.util import registry

from spacy_lookahead.pipes import learners as learners_module
from spacy_lookahead.pipes import parser as parser_module
from spacy_lookahead.pipes import search as search_module
from spacy_lookahead.pipes import phrases as phrases_module
from spacy_lookahead.pipes import settings
from spacy_lookahead.pipes import transition as transition_module

OUTPUT = Path(__file__).resolve().parent / "settings.md"
DIST = "spacy-lookahead"

# Numbers the explanations quote, from the code that uses them.
CONSTANTS = {
    "MAX_DEPTH": search_module.MAX_DEPTH,
    "MAX_TEMPERATURE": f"{settings.MAX_TEMPERATURE:g}",
    "MAX_LABELS_LATTICE": settings.MAX_LABELS_LATTICE,
    "MAX_LABELS_EXACT_TOPN": f"{search_module.MAX_LABELS_EXACT_TOPN:,}",
    "MAX_NBEST": transition_module.MAX_NBEST,
    "ALTERNATIVE_MIN_PROB": parser_module.ALTERNATIVE_MIN_PROB,
    "LONG_UNIT": f"{phrases_module.LONG_UNIT:,}",
}

# One paragraph per component, before its own settings; the components are
# shown in this order.
INTROS = {
    "lookahead_tagger": (
        "POS tags, left to right or right to left, each decision chosen by a "
        "lookahead search over the labels of the next tokens."),
    "lookahead_chunker": (
        "Base phrases (NP, VP, PP, ...) from words and POS tags, through one "
        "label per token (IOB2 or BILUO). POS tags come from the data or a "
        "`lookahead_tagger` earlier in the pipeline; a doc without them is an "
        "error that says so."),
    "lookahead_ner": (
        "Named entities through one label per token (IOB2 or BILUO). Entities "
        "already set on a doc are kept, as spaCy's `ner` keeps them: tokens with "
        "a preset entity or a preset \"outside\" keep it, and the search plans "
        "around them."),
    "arc_standard_parser": (
        "Labelled arc-standard dependency parsing (Nivre 2004; Tsuruoka et al. "
        "2011, Section 4.2): SHIFT, LEFT-ARC(label), RIGHT-ARC(label). The words "
        "left on the stack at the end of a doc become roots, as in spaCy's "
        "parser, with the root label of the training data. POS tags are an "
        "input, from a tagger earlier in the pipeline or the data "
        "([parsing raw text](guide.md#parsing-raw-text))."),
    "fr_chunker": (
        "Filtering-ranking chunking (Carreras, Marquez & Castro 2005): per "
        "chunk type a start filter, an end filter and a score function; a "
        "left-to-right DP picks the best coherent set of chunks. Trained with "
        "the FR-Perceptron; predicts with averaged weights."),
    "fr_clause_finder": (
        "Filtering-ranking clause identification (CoNLL-2001): the same "
        "recogniser with a bottom-up DP over nested clauses. Needs POS tags and "
        "chunks on its docs (from the data, or a tagger and a chunker earlier in "
        "the pipeline); while training, missing ones are taken from the gold "
        "docs."),
}

_RESPECT_SEQUENCE = (
    "Label each sentence of a doc on its own, from the doc's sentence starts "
    "(e.g. a sentencizer or a parser earlier in the pipeline): its tokens' "
    "features stop at its edges and the label history starts again; the `doc` "
    "templates still read the whole doc. Lookahead search and the exact "
    "marginals label each sentence as if it were a doc; a beam runs across the "
    "doc.")
_FEATURES_SEQUENCE = (
    "The feature templates: a list of presets (`\"preset:$preset\"`) and "
    "templates such as `\"cluster6[0]\"` or `\"lower[-1] lower[0]\"` (see "
    "[feature templates](guide.md#feature-templates)). Templates that read "
    "`cluster*` or `prob` need the tables (`[initialize.lookups]`; a trained "
    "component carries its own copy and reads it).")
_SPANS_SCORER = (
    "spaCy's span-group scorer on `doc.spans[spans_key]`: "
    "`spans_chunks_p/r/f` and `spans_chunks_per_type` (exact match, "
    "micro-averaged: conlleval's counts), as `spacy evaluate --spans-key "
    "chunks` shows them.")

# The explanation of each setting: one text for every component that takes
# it, or one per component.
PROSE: Dict[str, Any] = {
    "search": (
        "The search, a `@search` block ([search blocks](#search-blocks)): how "
        "the component looks for an output, in training and at prediction. Can "
        "be changed when loading a trained model (e.g. another lookahead depth "
        "or beam width)."),
    "learner": (
        "The learner, a `@learners` block ([learner blocks](#learner-blocks)): "
        "what a training step does with the search's outputs, and which weights "
        "predict. A model loads only with the kind of learner that trained it "
        "(averaged perceptron or SAPO)."),
    "n_threads": (
        "Threads that decode the docs of a batch at prediction time (0: every "
        "core the process may use); the output is the same with any number. "
        "With more than one, `pipe()` takes at least 64 docs a thread in a batch, "
        "whatever `batch_size` asks (every batch costs each thread a start and "
        "an end; a batch that fails is done again in batches of `batch_size`, "
        "so the error handler gets those), and searches two batches ahead of "
        "the one it writes. It pays most where the search dominates (the "
        "parsers: 1.9x with 2 threads; the sequence components at depth 0-1: "
        "1.6-1.8x, see [threads and processes]"
        "(scale-out.md#threads-and-processes)). Set it when loading: "
        "`spacy.load(path, config={\"components\": {\"lookahead_tagger\": "
        "{\"n_threads\": 2}}})`."),
    "probabilities": (
        "SAPO: how `token._.tag_prob` and the span scores are computed. "
        "`\"marginals\"`: the exact probability over every output, by "
        "forward-backward over the label lattice (first-order models: no "
        "`tag_trigrams` / `label_trigrams`); `\"nbest\"`: the mass of the n best "
        "outputs that agree (Sun et al.); `\"auto\"`: the marginals where they "
        "are exact, else the n best.\n\n"
        "Exact search over a first-order model costs T·C² per doc of T tokens "
        "and C labels, and the lattice holds 16·T·C² bytes: `\"auto\"` takes the "
        "n best above $MAX_LABELS_LATTICE labels, `\"marginals\"` is refused "
        "there, and SAPO's exact top-n search (A*) is refused above "
        "$MAX_LABELS_EXACT_TOPN labels (`Beam.v1` costs T·k·C). The "
        "default was chosen by calibration on dev data "
        "(benchmarks/results.md): the n best hold a small part of the mass, so "
        "their agreement is over-confident."),
    "temperature": {
        "*": (
            "SAPO: τ of p(y | x) ∝ exp(w · Φ / τ). `null`: fitted while `spacy "
            "train` scores the dev set (first-order models of at most "
            "$MAX_LABELS_LATTICE labels, else 1) and saved with the model; a "
            "loaded model keeps it. With exact marginals it is the least "
            "log-loss of the tag or span probabilities the component writes "
            "against whether each tag or span is right, so that they are "
            "calibrated where users read them; with the n best, and for a "
            "tagger's `alternatives`, the least negative log-likelihood of the "
            "gold outputs. A number fixes it. The marginals of a SAPO model at "
            "τ = 1 are far from calibrated (tags: too flat, τ about 0.4; JNLPBA "
            "entities: too sharp, τ about 1.4)."),
        "arc_standard_parser": (
            "SAPO: τ of p(parse | x) ∝ exp(w · Φ / τ) over the n best. `null`: "
            "fitted on the dev data during training, to the head probabilities "
            "the parser writes (`token._.head_prob`, the n best's mass) against "
            "whether each head and label is right, and saved with the model; a "
            "number fixes it. EWT: τ about 2.5, head-probability ECE 0.115 -> "
            "0.092; where all n parses agree a token gets p = 1 whatever τ is, "
            "which a temperature cannot fix. A beam perceptron (`ViolationFixing.v1`) "
            "takes no number here: `parser.fit_temperature(examples)` fits its τ on "
            "held-out data the same way, over its final beam's parses, and it then "
            "writes `token._.head_prob` (the parse unchanged; benchmarks/package.py "
            "does it for a package). EWT, the quick beam-8 model fitted on dev: "
            "τ 27.9, test head-probability ECE 0.243, as 3 in 4 tokens get p = 1 "
            "(73% of them right)."),
    },
    "direction": (
        "The order in which tokens are labelled: `\"ltr\"` (left to right) or "
        "`\"rtl\"` (right to left: the paper's choice for JNLPBA)."),
    # the tagger
    "target": (
        "`\"tag\"` writes `token.tag_` (e.g. PTB / XPOS); `\"pos\"` writes "
        "`token.pos_` (UPOS; set `[training.score_weights] pos_acc = 1.0`)."),
    "tag_trigrams": "Add the (t-1, t-2) history feature (\"+ tag trigram features\", Tsuruoka et al. Table 1).",
    "alternatives": (
        "Also give each token the most probable other tag with its "
        "probability, `token._.tag_alternative` = `(tag, p)` (`None` on "
        "whitespace): the exact marginals of the model's distribution at a "
        "temperature fitted on the dev data while training (perceptrons too; "
        "first-order models only, `tag_trigrams = false`). A parser with "
        "`tag_alternatives` reads them."),
    "features": {
        "lookahead_tagger": Template(_FEATURES_SEQUENCE).safe_substitute(preset="pos"),
        "lookahead_chunker": Template(_FEATURES_SEQUENCE).safe_substitute(preset="chunk"),
        "lookahead_ner": Template(_FEATURES_SEQUENCE).safe_substitute(preset="ner"),
        "arc_standard_parser": (
            "The feature set: `\"base\"` (Huang and Sagae 2010's templates, "
            "distance, valency, dependent labels), or `\"rich\"`: base plus Zhang "
            "and Nivre's (2011) third-order features (second leftmost/rightmost "
            "dependents of s0, s1), the label sets of s0's and s1's dependents, "
            "and 3-letter suffixes (83 features per state instead of 63); or a "
            "list: one of `\"preset:base\"` / `\"preset:rich\"` and [feature "
            "templates](guide.md#feature-templates) over the stack and buffer "
            "positions `s0`, `s1`, `s2`, `q0`, `q1`, `q2`, `s0l`, `s0r`, `s1l`, "
            "`s1r` (leftmost / rightmost dependents), `s0l2`, `s0r2`, `s1l2`, "
            "`s1r2` (the second ones), e.g. `[\"preset:rich\", \"cluster6[s0]\", "
            "\"cluster4[s0] tag[q0]\"]` (Koo et al. 2008's cluster features). "
            "Besides the word atoms, a template reads the state: `ctag` (the tag "
            "the parse chose: with `joint_tagging` the tagger's or its "
            "alternative; `tag` is always the tagger's), `tag_alt`, `label` (a "
            "dependent's arc label, at `s0l` .. `s1r`), `lset` / `rset` (the "
            "labels of s0's or s1's dependents), `nl` / `nr` (their valency), "
            "`dist[s1]`, `depth[s0]`, `qempty[q0]`. The presets are such lists "
            "([src/spacy_lookahead/systems/parser_templates.py]"
            "(../src/spacy_lookahead/systems/parser_templates.py)). A template "
            "that reads a label gives a feature at every state (an absent atom "
            "counts as 0). Models saved before the setting existed are "
            "`\"base\"`."),
    },
    "respect_sent_starts": {
        "lookahead_tagger": _RESPECT_SEQUENCE,
        "lookahead_chunker": _RESPECT_SEQUENCE + " No span crosses a sentence start.",
        "lookahead_ner": _RESPECT_SEQUENCE + " No span crosses a sentence start.",
        "arc_standard_parser": (
            "Keep the docs' sentence boundaries (e.g. from a sentencizer earlier "
            "in the pipeline) instead of predicting them: arcs stay inside "
            "them, one root each."),
    },
    "scorer": {
        "lookahead_tagger": "Token accuracy of the target: `tag_acc` or `pos_acc`.",
        "lookahead_chunker": _SPANS_SCORER,
        "lookahead_ner": "`ents_p/r/f` and `ents_per_type`, spaCy's entity scores.",
        "arc_standard_parser": (
            "spaCy's parser scorer (`dep_uas`, `dep_las`, `dep_las_per_type`, "
            "`sents_p/r/f`; it leaves out tokens labelled `punct` / `p`) plus two "
            "keys of the parser benchmarks' CoNLL convention: `dep_uas_nopunct`, "
            "`dep_las_nopunct` (per-token accuracy without the tokens labelled "
            "`punct` or tagged as PTB punctuation; given when the predicted docs "
            "have the gold words)."),
        "fr_chunker": _SPANS_SCORER,
        "fr_clause_finder": "`spans_clauses_p/r/f` (spaCy's span-group scorer on `doc.spans[spans_key]`).",
    },
    # the span labellers
    "scheme": (
        "`\"iob2\"` (B-X, I-X, O) or `\"biluo\"`, as the readers name them "
        "(`\"iob\"`, the old name, is read as `\"iob2\"`); the search only "
        "follows label sequences the scheme allows."),
    "label_trigrams": "Add the (label t-1, label t-2) history feature.",
    "spans_key": {
        "lookahead_chunker": "The span group the chunks are written to.",
        "fr_chunker": "The span group the chunks are written to.",
        "fr_clause_finder": "The span group the clauses are written to.",
    },
    "pos_features": (
        "Use `token.tag_` as input features (POS uni-, bi- and trigrams); the "
        "tags are then needed on every doc, e.g. from a tagger earlier in the "
        "pipeline."),
    "chunk_features": (
        "Use the chunks in `doc.spans[chunks_key]` as input features (the chunk "
        "labels at -2..+2); the chunks are then needed on every doc, e.g. from "
        "a chunker earlier in the pipeline."),
    "chunks_key": {
        "lookahead_ner": "Where the chunk inputs are read from (`chunk_features = true`).",
        "fr_clause_finder": "Where the chunk inputs are read from.",
    },
    "scores_key": (
        "SAPO: the span group that holds the entities with their "
        "probabilities (`doc.spans[scores_key].attrs[\"scores\"]`)."),
    # the parser
    "min_label_freq": (
        "Non-projective training trees are lifted (spaCy's `nonproj`, label "
        "decoration `dep‖head`) and restored on output; decorated labels rarer "
        "than this in the training data are replaced by their plain label."),
    "tag_alternatives": (
        "Also read the tagger's alternative tags (`token._.tag_alternative` of "
        "a `lookahead_tagger` with `alternatives = true`) where their "
        "probability is at least $ALTERNATIVE_MIN_PROB: 11 more features, the "
        "tagger's uncertainty and not only its choice. Train on docs that have "
        "them (e.g. a jackknifed corpus made with that tagger)."),
    "joint_tagging": (
        "Tag in the parser's search (Hatori et al. 2011; Bohnet and Nivre 2012, "
        "k = 2): a word with a likely alternative tag can be shifted with the "
        "tagger's tag (SHIFT) or with the alternative (SHIFT-ALT), the features "
        "read the chosen tags of the stack words and their dependents, and the "
        "parser writes the tag it chose to `token.tag_`. Needs "
        "`tag_alternatives`; train on a jackknifed corpus made with the "
        "alternatives (the gold SHIFT-ALT is where the alternative is the gold "
        "tag)."),
    # the FR components
    "feedback": (
        "`\"recognition\"`: the FR-Perceptron (Carreras et al., Figure 1), or "
        "`\"classification\"`: every filter and score decision corrected on its "
        "own (the paper's CO-VP baseline)."),
    "max_length": {
        "fr_clause_finder": (
            "The longest candidate clause in words (0: no limit). It bounds the "
            "cost per word: time O(n L²), memory O(n L) for a unit of n words; "
            "with no limit a unit costs O(n³). The default loses 0.04% of the "
            "wsj_clauses train+dev clauses (9.4 ms and 2.7 MB per 1k words at "
            "100k words in one doc; no limit: 184 ms per 1k words already at "
            "1k). The components decode sentence by sentence where the doc has "
            "sentence boundaries, and warn once when a doc of more than "
            "$LONG_UNIT words has none."),
        "fr_chunker": (
            "The longest candidate chunk in words (0: no limit); the default "
            "loses none of the CoNLL-2000 training chunks (the longest has 15 "
            "words). As for the clause finder, it bounds the cost per word."),
    },
    "chunk_boundaries": (
        "A clause may only start (end) where a chunk starts (ends) or outside "
        "chunks: the paper's shortcut, to save computation. Off by default: on "
        "wsj_clauses, whose chunks approximate chunklink's, 5.5% of the dev "
        "clauses cross a chunk boundary and would be unreachable."),
}


# The explanation of each setting of the search and learner blocks
# (pipes/search.py, pipes/learners.py); the blocks' own docstrings say what
# each block is. Every setting a block takes must have one.
BLOCK_PROSE: Dict[str, Dict[str, str]] = {
    "spacy_lookahead.Lookahead.v1": {
        "depth": (
        "The lookahead depth D. The search is exact "
        "at every depth, in training and prediction, and far cheaper than "
        "enumerating the O(actions^(D+1)) paths: branch-and-bound cuts a path "
        "where an admissible bound of what follows (each feature's largest "
        "weight; bounds shared by sibling actions: all labels for the "
        "first-order tagger, chunker and NER, the labels of one arc direction "
        "for the parser) cannot beat the best decision found. For the "
        "first-order components at D = 3 (and while training at D >= 2) a "
        "Viterbi-style DP over the next D steps is faster and is used instead "
        "(O(D T^2) additions per decision; the scores of a step are kept from "
        "one decision to the next, so a decision scores only its deepest "
        "step).\n\n"
        "The parser's lookahead visits O(actions^(D+1)) states per step (EWT: "
        "109 actions with labels); states that differ only in arc labels share "
        "their structure features' scores (a per-search cache, exact), so only "
        "about 3^D of them are scored in full (EWT, one process: D = 2 trains "
        "about 40x slower than D = 1). `depth = 0` is greedy search. "
        "Measured speeds per depth: [benchmarks/results.md]"
        "(../benchmarks/results.md), \"Lookahead depth\"."),
    },
    "spacy_lookahead.Beam.v1": {
        "width": "The beam width k.",
        "predict_width": (
        "The beam width at prediction, spaCy's evaluation during training "
        "included; `null`: `width`. Training's beam (the violation-fixing "
        "updates) stays `width`, so the weights are the same; a wider beam at "
        "prediction searches more of the outputs under them. "
        "configs/pipeline_ewt.cfg trains at 8 and predicts at 10, chosen on "
        "EWT dev (LAS no punct 84.06 against 83.93) among the widths that keep "
        "it at >= 1.3x spaCy's parser's speed on the 2-core hosts of November "
        "2026 with Python 3.11 (on a 2-core Xeon with AVX-512 it is at "
        "1.0-1.3x with Python 3.11, 0.80-0.88x with 3.12, where spaCy's parser "
        "runs 1.5x faster: docs/guide.md)."),
        "update": (
        "The violation-fixing update with a beam (Huang et al. 2012, Sections "
        "4-5): `\"standard\"`, `\"early\"`, `\"max_violation\"`, `\"hybrid\"` or "
        "`\"latest\"`. The component's `update_stats` counts updates and "
        "invalid (non-violation) ones. For SAPO's n-best beam, `\"standard\"` "
        "compares complete outputs (Sun et al.); the others compare the n best "
        "prefixes at the step they pick with the gold prefix. On EWT with beam "
        "8, the parser learns fastest with max-violation in the first ~10 "
        "epochs; early update ends higher after ~25 (86.2 against 86.0 test "
        "LAS, benchmarks/results.md)."),
    },
    "spacy_lookahead.TopN.v1": {
        "width": (
            "The width of the beam where A* is not exact (the system is not "
            "first-order, e.g. tag trigrams or the parser): max(n, width)."),
        "update": (
            "For that beam, as `Beam.v1`'s: `\"standard\"` compares complete "
            "outputs (Sun et al.); the others compare the n best prefixes at the "
            "step they pick with the gold prefix."),
    },
    "spacy_lookahead.MarginPerceptron.v1": {
        "margin": (
        "The perceptron margin C (Tsuruoka et al., Figure 3): the correct "
        "action must win by C. The chunker and "
        "NER default to a larger one: the paper's Appendix A shows the learnt "
        "margin approaching half the true one as C grows against the squared "
        "norm of a feature difference, which is about 50-150 here."),
    },
    "spacy_lookahead.SAPO.v1": {
        "n": "the number of outputs of the top-n search, per update and for the probabilities.",
        "learning_rate": "the learning rate γ.",
        "learning_rate_decay": (
        "γ is multiplied by this after every epoch of |S| examples; `1.0` "
        "keeps it fixed. CoNLL-2000, 10 epochs: test F1 93.80 with the decay "
        "against 93.48 with a fixed rate (F1 swings by 0.4 between epochs)."),
        "l2": (
        "the L2 weight λ; the weights shrink by γλ/|S| after each of the "
        "|S| training examples (applied lazily, as one global scale). Sun et al. "
        "use 2 for POS, 1 for chunking, 5 for NER."),
        "average": (
        "predict with the averaged weights. Algorithm 1 does not average; "
        "on JNLPBA averaging is worth about +1.1 F1 and a smooth learning curve "
        "(the ablations in benchmarks/NOTES.md)."),
    },
}


# --- what the code says ----------------------------------------------------------

class Component(typing.NamedTuple):
    name: str
    factory: Callable
    cls: type
    defaults: Dict[str, Any]
    hints: Dict[str, Any]
    meta: Any


def components() -> List[Component]:
    """The package's factories, as spaCy finds them (the entry points), in
    the order of INTROS."""
    found = []
    for ep in entry_points(group="spacy_factories"):
        if ep.dist is None or ep.dist.name.replace("_", "-") != DIST:
            continue
        factory = ep.load()
        meta = Language.get_factory_meta(ep.name)
        hints = typing.get_type_hints(factory)
        found.append(Component(ep.name, factory, hints["return"], dict(meta.default_config),
                               hints, meta))
    if not found:
        raise SystemExit(f"no spacy_factories entry points of {DIST}: install the package "
                         "(pip install -e .)")
    order = list(INTROS)
    found.sort(key=lambda c: (order.index(c.name) if c.name in order else len(order), c.name))
    return found


def _probe(call: Callable[[Any], None]) -> Optional[str]:
    """The rule a validator states for a value no rule accepts."""
    try:
        call(_Wrong())
    except ConfigValidationError as err:
        message = err.errors[0]["msg"]
        if " must be " not in message or ", got " not in message:
            raise RuntimeError(f"unexpected validator message: {message}")
        return message.split(" must be ", 1)[1].rsplit(", got ", 1)[0]
    return None


class _Wrong:
    """A value of no type a setting accepts."""

    def __repr__(self) -> str:
        return "?"


def validator_rule(component: Component, key: str) -> Optional[str]:
    """What the component's validator says the setting must be, if it checks it."""
    defaults = component.defaults
    if "search" in defaults:
        if key not in defaults or key == "scorer":
            return None

        def call(wrong):
            settings.check_values(component.name, {**defaults, key: wrong})
        return _probe(call)
    if "feedback" in defaults:
        if key == "n_threads":
            return _probe(lambda wrong: settings.check_threads(component.name, wrong))
        keys = {k: defaults[k] for k in ("spans_key", "chunks_key") if k in defaults}
        if key not in ("feedback", "max_length") and key not in keys:
            return None
        args = {"feedback": defaults["feedback"], "max_length": defaults["max_length"], **keys}

        def call(wrong):
            phrases_module.validate_fr_settings(component.name, **{**args, key: wrong})
        return _probe(call)
    return None


def value(v: Any) -> str:
    """A value as a config writes it."""
    if isinstance(v, dict) and set(v) == {"@scorers"}:
        return f"`{v['@scorers']}`"
    return f"`{json.dumps(v, ensure_ascii=False)}`"


def type_text(hint: Any) -> str:
    """What a type hint accepts, in words."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Literal:
        choices = [value(a) for a in args]
        return ", ".join(choices[:-1]) + " or " + choices[-1]
    if hint is bool:
        return "`true` or `false`"
    if hint is int:
        return "an integer"
    if hint is float:
        return "a number"
    if hint is str:
        return "a string"
    if origin in (list, List) and args == (str,):
        return "a list of strings"
    if origin is typing.Union:
        if type(None) in args:
            rest = [a for a in args if a is not type(None)]
            if len(rest) == 1 and typing.get_origin(rest[0]) is collections.abc.Callable:
                return "a registered scorer (`@scorers`), or `null`"
            return "`null` or " + " or ".join(type_text(a) for a in rest)
        return ", or ".join(type_text(a) for a in args)
    raise RuntimeError(f"no words for the type {hint!r}")


def accepts(component: Component, key: str) -> str:
    """The choices of a Literal (settings.py's types) or a bool; else the
    rule the validator states, or the type."""
    hint = component.hints[key]
    if hint is search_module.Search:
        return "a `@search` block ([search blocks](#search-blocks))"
    if hint is learners_module.Learner:
        return "a `@learners` block ([learner blocks](#learner-blocks))"
    if typing.get_origin(hint) is typing.Literal or hint is bool:
        return type_text(hint)
    rule = validator_rule(component, key)
    return rule if rule is not None else type_text(hint)


def prose(component: str, key: str) -> str:
    text = PROSE.get(key)
    if isinstance(text, dict):
        text = text.get(component, text.get("*"))
    if text is None:
        raise SystemExit(f"docs/generate_settings.py: no explanation of {component}.{key}: add one "
                         "to PROSE")
    return Template(text).substitute(CONSTANTS)


def check_prose(found: List[Component]) -> None:
    """Every setting a factory takes has an explanation, and every
    explanation belongs to a setting some factory takes."""
    for c in found:
        for key in c.defaults:
            prose(c.name, key)
    taken = {(c.name, key) for c in found for key in c.defaults}
    keys = {key for _, key in taken}
    for key, text in PROSE.items():
        if key not in keys:
            raise SystemExit(f"docs/generate_settings.py: PROSE explains {key!r}, which no "
                             "component takes any more")
        if isinstance(text, dict):
            for name in text:
                if name != "*" and (name, key) not in taken:
                    raise SystemExit(f"docs/generate_settings.py: PROSE explains {name}.{key}, "
                                     "which that component does not take")
    missing = set(INTROS) ^ {c.name for c in found}
    if missing:
        raise SystemExit(f"docs/generate_settings.py: INTROS and the components differ: {sorted(missing)}")


def fixed_by_model(component: Component, key: str) -> Optional[str]:
    if key in getattr(component.cls, "feature_settings", ()):
        return ("Defines the features: a trained model must be loaded with the value it "
                "was trained with (an error says so otherwise).")
    if key in getattr(component.cls, "model_settings", ()):
        return "Saved with the model: a loaded model uses the value it was trained with."
    return None


# --- the document ---------------------------------------------------------------

def shared_keys(found: List[Component]) -> List[str]:
    """The settings every transition-system component takes (settings.py):
    those of SEARCH_DEFAULTS, in its order, then PROBABILITY_SETTINGS."""
    counts = Counter(key for c in found for key in c.defaults)
    first = [*settings.SEARCH_DEFAULTS, *settings.PROBABILITY_SETTINGS]
    return [key for key in first if counts[key] > 1]


def default_text(takers: List[Component], key: str) -> str:
    """The default, and the components whose default differs."""
    values = Counter(json.dumps(c.defaults[key], sort_keys=True) for c in takers)
    common = values.most_common(1)[0][0]
    text = f"Default {value(json.loads(common))}"
    others = [c for c in takers if json.dumps(c.defaults[key], sort_keys=True) != common]
    if others:
        text += " (" + "; ".join(f"`{c.name}`: {value(c.defaults[key])}" for c in others) + ")"
    return text


def setting_block(takers: List[Component], key: str, heading: str, show_takers: bool) -> List[str]:
    """A setting's heading (a component's own: with the component's name, so
    that every anchor is unique: #features-arc_standard_parser), its
    default, what it accepts, and its explanation."""
    first = takers[0]
    title = f"`{key}`" if show_takers else f"`{key}` (`{first.name}`)"
    lines = [f"{heading} {title}", ""]
    facts = [default_text(takers, key) + ".", f"Accepts {accepts(first, key)}."]
    if show_takers:
        facts.append("Taken by " + ", ".join(f"`{c.name}`" for c in takers) + ".")
    fixed = {fixed_by_model(c, key) for c in takers} - {None}
    texts = {c.name: prose(c.name, key) for c in takers}
    lines.append(" ".join(facts))
    lines.append("")
    if len(set(texts.values())) == 1:
        lines.extend([next(iter(texts.values())), ""])
    else:  # one paragraph per text, naming the components it is for
        for text in dict.fromkeys(texts.values()):
            names = ", ".join(f"`{n}`" for n, t in texts.items() if t == text)
            lines.extend([f"{names}: {text}", ""])
    for text in sorted(fixed):
        lines.extend([text, ""])
    return lines


def block_functions(name: str) -> List[Tuple[str, Callable]]:
    """The package's registered blocks of a registry, in registration order."""
    return [(key, func) for key, func in getattr(registry, name).get_all().items()
            if key.startswith("spacy_lookahead.")]


def block_rule(func: Callable, key: str) -> Optional[str]:
    """What a block's function says a setting must be, if it checks it."""
    return _probe(lambda wrong: func(**{key: wrong}))


def block_sections(kind: str, classes: Dict[str, type]) -> List[str]:
    """A block per heading: what it is (its function's docstring), what
    trains with it, and a table of its settings."""
    out: List[str] = []
    for name, func in block_functions(kind):
        cls = classes[name]
        doc = " ".join(inspect.getdoc(func).split())
        out += [f"### `{name}`", "", doc, ""]
        if kind == "learners":
            out += ["Trains with " + " or ".join(f"`{s.registered}`" for s in cls.searches)
                    + ".", ""]
        else:
            users = [c.registered for c in learners_module.LEARNERS if cls in c.searches]
            out += ["Trained by " + " or ".join(f"`{u}`" for u in users) + ".", ""]
        params = inspect.signature(func).parameters
        missing = set(params) ^ set(BLOCK_PROSE.get(name, {}))
        if missing:
            raise SystemExit(f"docs/generate_settings.py: BLOCK_PROSE and the settings of {name} "
                             f"differ: {sorted(missing)}")
        for key, param in params.items():
            hint = typing.get_type_hints(func)[key]
            rule = None if typing.get_origin(hint) is typing.Literal else block_rule(func, key)
            text = Template(BLOCK_PROSE[name][key]).substitute(CONSTANTS)
            out += [f"- `{key}`: default {value(param.default)}; "
                    f"{rule if rule is not None else type_text(hint)}. {text}", ""]
    return out


def learner_table() -> List[str]:
    """Which search each learner trains with (the learners' `searches`)."""
    searches = [name for name, _ in block_functions("search")]
    lines = ["| learner | " + " | ".join(f"`{s.split('.')[1]}`" for s in searches) + " |",
             "| --- " * (len(searches) + 1) + "|"]
    for cls in learners_module.LEARNERS:
        cells = ["yes" if s in {c.registered for c in cls.searches} else "-" for s in searches]
        lines.append(f"| `{cls.registered.split('.')[1]}` | " + " | ".join(cells) + " |")
    return lines


def render() -> str:
    found = components()
    check_prose(found)
    transition = [c for c in found if "search" in c.defaults]
    shared = shared_keys(found)
    names = [c.name for c in found]
    out = [
        "# Settings reference",
        "",
        "<!-- Generated by docs/generate_settings.py from the factories and",
        "     src/spacy_lookahead/pipes/settings.py; do not edit by hand:",
        "     python -m spacy project run docs -->",
        "",
        "Every setting is a key of the component's block in a training config,",
        "or of the `config` of `nlp.add_pipe`:",
        "",
        "```ini",
        "[components.lookahead_tagger]",
        "factory = \"lookahead_tagger\"",
        "n_threads = 2",
        "",
        "[components.lookahead_tagger.search]",
        "@search = \"spacy_lookahead.Lookahead.v1\"",
        "depth = 2",
        "",
        "[components.lookahead_tagger.learner]",
        "@learners = \"spacy_lookahead.MarginPerceptron.v1\"",
        "margin = 1.0",
        "```",
        "",
        "The search and the learner are blocks, as a spaCy component's `model`",
        "is: a block holds only the settings its search or learner reads.",
        "`spacy train` takes them on the command line too",
        "(`--components.lookahead_tagger.search.depth 2`, or a whole block as",
        "JSON: `--components.lookahead_tagger.search",
        "'{\"@search\": \"spacy_lookahead.Beam.v1\", \"width\": 8}'`), and `spacy.load(path,",
        "config={\"components\": {\"lookahead_tagger\": {\"n_threads\": 2}}})` sets",
        "them when a trained pipeline is loaded. A wrong value is a spaCy config",
        "error that names the setting and what it accepts (`spacy train` prints",
        "it as one line).",
        "",
        "- [Defaults](#defaults)",
        "- [Search and learner settings](#search-and-learner-settings)",
        "- [Search blocks](#search-blocks)",
        "- [Learner blocks](#learner-blocks)",
    ]
    out += [f"- [`{c.name}`](#{c.name})" for c in found]
    out += ["", "## Defaults", "", "`-`: the component does not take the setting.", ""]
    rows = list(shared)
    for c in found:
        for key in c.defaults:
            if key not in rows:
                rows.append(key)
    rows.sort(key=lambda k: k == "scorer")
    out.append("| setting | " + " | ".join(f"`{n}`" for n in names) + " |")
    out.append("| --- " * (len(names) + 1) + "|")
    for key in rows:
        cells = [value(c.defaults[key]) if key in c.defaults else "-" for c in found]
        out.append(f"| `{key}` | " + " | ".join(cells) + " |")
    out += [
        "",
        "## Search and learner settings",
        "",
        "The transition-system components ("
        + ", ".join(f"`{c.name}`" for c in transition)
        + ") take these settings with the same names and meaning "
        "(src/spacy_lookahead/pipes/settings.py, one validator).",
        "",
    ]
    for key in shared:
        takers = [c for c in found if key in c.defaults]
        out += setting_block(takers, key, "###", show_takers=True)
    classes = {cls.registered: cls for cls in (*search_module.SEARCHES,
                                                *learners_module.LEARNERS)}
    out += ["## Search blocks", "", "`[components.NAME.search]`, with `@search = \"...\"` "
            "(src/spacy_lookahead/pipes/search.py).", ""]
    out += block_sections("search", classes)
    out += ["## Learner blocks", "", "`[components.NAME.learner]`, with `@learners = \"...\"` "
            "(src/spacy_lookahead/pipes/learners.py). A learner trains with the searches "
            "below; another is a config error that names them.", ""]
    out += learner_table()
    out.append("")
    out += block_sections("learners", classes)
    for c in found:
        own = [key for key in c.defaults if key not in shared]
        meta = c.meta
        out += [f"## `{c.name}`", "", INTROS[c.name], ""]
        facts = []
        if meta.assigns:
            facts.append("Writes " + ", ".join(f"`{a}`" for a in meta.assigns) + ".")
        if meta.requires:
            facts.append("Reads " + ", ".join(f"`{r}`" for r in meta.requires) + ".")
        scores = [k for k, w in meta.default_score_weights.items() if w]
        if scores:
            facts.append("`spacy train` picks `model-best` by "
                         + ", ".join(f"`{s}`" for s in scores) + ".")
        taken = [k for k in c.defaults if k in shared]
        missing = [k for k in shared if k not in c.defaults]
        if len(taken) > len(missing):
            facts.append("Takes the [search and learner settings](#search-and-learner-settings)"
                         + (" except " + ", ".join(f"`{k}`" for k in missing) if missing else "")
                         + ", and:")
        elif taken:
            facts.append("Takes " + ", ".join(f"[`{k}`](#{k})" for k in taken) + ", and:")
        out += [" ".join(facts), ""]
        for key in own:
            out += setting_block([c], key, "###", show_takers=False)
    while out and out[-1] == "":
        out.pop()
    return "\n".join(out) + "\n"


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true",
                    help="exit 1 if the file differs from what would be written")
    ap.add_argument("--output", type=Path, default=OUTPUT, help="default: %(default)s")
    args = ap.parse_args(argv)
    text = render()
    if args.check:
        current = args.output.read_bytes() if args.output.exists() else b""
        if current != text.encode("utf8"):
            print(f"{args.output} is stale: run python docs/generate_settings.py", file=sys.stderr)
            return 1
        return 0
    args.output.write_bytes(text.encode("utf8"))
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
