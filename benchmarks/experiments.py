"""The benchmark's experiments, as one table: every training run of the
workflow is one `Experiment` here (task, config, settings, data, budget),
every speed comparison one `Speed`. benchmarks/run.py runs them, the report
scripts read their names, labels and commands from here, and the quick
workflow is the same table at a smaller scale (`quick` budgets), not a copy.

A run is `python -m spacy train CONFIG` with the experiment's overrides
(the CRF baselines: benchmarks/crf_baseline.py), timed by benchmarks/timed.py,
its curve written by the project's logger where the config has one; its
test score comes from one evaluation per task (`evaluation()`), once.
Scale "full" writes training/NAME and metrics/NAME.json; "quick" writes
training/quick/NAME and metrics/quick/NAME.json."""
import json
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

SCALES = ("full", "quick")
PY = "python"


@dataclass(frozen=True)
class Data:
    train: str
    dev: str
    test: str            # the DocBin or file the test score and speed read
    quick: Dict[str, object]  # the quick budget: overrides every quick run adds


JNLPBA_TAGGED_TRAIN = "corpus/jnlpba/train.tagged.iob2"
EWT_QUICK = {"corpora.train.limit": 1500, "training.max_epochs": 2, "training.eval_frequency": 10}
SPAN_QUICK = {"corpora.train.limit": 1000, "training.max_epochs": 2}
DATA: Dict[str, Data] = {
    "ewt": Data("corpus/ewt/train.spacy", "corpus/ewt/dev.spacy", "corpus/ewt/test.spacy", EWT_QUICK),
    # no dev split: the test file is given to spacy train as dev only to log a
    # curve; these rows report model-last of a fixed budget (never selected on it)
    "conll2000": Data("assets/conll2000/train.txt", "assets/conll2000/test.txt",
                      "corpus/conll2000/test.spacy", SPAN_QUICK),
    "jnlpba": Data("assets/jnlpba/train.iob2", "assets/jnlpba/test.iob2",
                   "corpus/jnlpba/test.spacy", SPAN_QUICK),
    # DocBin twins of the column files, for spaCy's own components and the CRF
    "conll2000_docbin": Data("corpus/conll2000/train.spacy", "corpus/conll2000/test.spacy",
                             "corpus/conll2000/test.spacy", SPAN_QUICK),
    "jnlpba_docbin": Data("corpus/jnlpba/train.spacy", "corpus/jnlpba/test.spacy",
                          "corpus/jnlpba/test.spacy", SPAN_QUICK),
    # JNLPBA test with the EWT tagger's POS tags (tag_columns.py), for timing
    # the NER rows that read them on their own (speed.py --task ner: the
    # words, and the tags where the data has them)
    "jnlpba_tagged": Data(JNLPBA_TAGGED_TRAIN, "assets/jnlpba/test.iob2",
                          "corpus/jnlpba/test.tagged.spacy", SPAN_QUICK),
    "wsj": Data("corpus/wsj/train.spacy", "corpus/wsj/dev.spacy", "corpus/wsj/test.spacy", EWT_QUICK),
    "wsj_clauses": Data("assets/wsj_clauses/train.txt", "assets/wsj_clauses/dev.txt",
                        "assets/wsj_clauses/test.txt",
                        {"corpora.train.limit": 800, "training.max_epochs": 2,
                         "training.eval_frequency": 10}),
}
# held-out tenth of a training file as dev (the column readers' held_out/part)
HELD_OUT = {"corpora.train.held_out": 0.1, "corpora.train.part": "rest",
            "corpora.dev.held_out": 0.1, "corpora.dev.part": "held_out"}


@dataclass(frozen=True)
class Experiment:
    name: str
    group: str             # the project command that trains it
    task: str              # tag | chunk | ner | parse | pipeline | clauses | fr_chunk
    config: str
    data: str
    label: str
    settings: Dict[str, object] = field(default_factory=dict)  # spacy train overrides
    quick: Optional[Dict[str, object]] = None  # None: not in the quick run; else extra overrides
    model: str = "model-last"  # the model scored: model-best where a dev set selects
    trainer: str = "spacy"     # spacy | crf (benchmarks/crf_baseline.py)
    curves: bool = True        # the config's logger writes metrics/curves/NAME.jsonl
    evaluate: Tuple[str, ...] = ()  # extra arguments of the evaluation
    groups: Tuple[str, ...] = ()    # other tables (report sections) it belongs to
    dev_is_train: bool = False      # dev = the held-out tenth of the training file

    def overrides(self, scale: str) -> Dict[str, object]:
        d = DATA[self.data]
        paths = {"paths.train": d.train, "paths.dev": d.train if self.dev_is_train else d.dev}
        out = {**paths, **(HELD_OUT if self.dev_is_train else {}), **self.settings}
        if scale == "quick":
            out.update({**d.quick, **(self.quick or {})})
        return as_blocks(self.config, out)


EXPERIMENTS: Dict[str, Experiment] = {}


def add(*experiments: Experiment) -> None:
    for e in experiments:
        assert e.name not in EXPERIMENTS, e.name
        EXPERIMENTS[e.name] = e


def component(name: str, **settings) -> Dict[str, object]:
    return {f"components.{name}.{k}": v for k, v in settings.items()}


def as_blocks(config: str, overrides: Dict[str, object]) -> Dict[str, object]:
    """The table writes search and learner settings in the papers' flat terms
    (depth, beam_width, learner = "sapo" ...): each component's, over its
    blocks in the config, as whole @search and @learners blocks (an override
    replaces a block: spacy train --components.NAME.search '{...}'). A
    rebuilt block predicts with its training width (predict_width null), as
    every row written in flat terms was run."""
    from spacy_lookahead.pipes import legacy
    flat: Dict[str, Dict[str, object]] = {}
    for key, value in overrides.items():
        parts = key.split(".")
        if len(parts) == 3 and parts[0] == "components" and parts[2] in legacy.FLAT_DEFAULTS:
            flat.setdefault(parts[1], {})[parts[2]] = value
    if not flat:
        return overrides
    from spacy.util import load_config
    from spacy_lookahead.registry import resolve_block
    from pathlib import Path
    path = Path(config) if Path(config).exists() else Path(__file__).resolve().parents[1] / config
    sections = load_config(path, interpolate=False)["components"]
    out = {k: v for k, v in overrides.items()
           if not (k.count(".") == 2 and k.split(".")[1] in flat
                   and k.split(".")[2] in legacy.FLAT_DEFAULTS)}
    for name, given in flat.items():
        section = sections[name]
        base = legacy.flat_of(resolve_block(section["search"]), resolve_block(section["learner"]))
        defaults = {**legacy.FLAT_DEFAULTS, **legacy.COMPONENT_FLAT_DEFAULTS[section["factory"]]}
        search, learner = legacy.blocks({**base, **given}, defaults)
        out[f"components.{name}.search"], out[f"components.{name}.learner"] = search, learner
    return out


TAGGER, CHUNKER, NER, PARSER = "lookahead_tagger", "lookahead_chunker", "lookahead_ner", "arc_standard_parser"

# --- POS tagging, EWT (Tsuruoka et al. Table 1) ---------------------------------
for d in (0, 1, 2):
    add(Experiment(f"tagger_d{d}", "tagging", "tag", "configs/tagger_ewt.cfg", "ewt",
                   f"lookahead_tagger, depth {d}" + (" (no lookahead)" if d == 0 else ""),
                   component(TAGGER, depth=d), quick={} if d < 2 else None, model="model-best",
                   groups=("engine",) if d == 1 else ()))
add(Experiment("spacy_tagger", "tagging", "tag", "configs/baseline_tagger_ewt.cfg", "ewt",
               "spaCy built-in tagger (CNN tok2vec, efficiency)",
               {"training.max_epochs": 12, "training.patience": 1600},
               quick={"training.eval_frequency": 200}, model="model-best", curves=False),
    Experiment("crf_tagger", "tagging", "tag", "pos", "ewt",
               "first-order CRF (crfsuite, same features, L1)",
               {"c1": 1.0, "c2": 0.0, "max-iterations": 200}, quick={"max-iterations": 30},
               trainer="crf", curves=False))

# --- knowledge from unlabelled text: Brown clusters and word probabilities ------
# (spacy-lookups-data's English tables through [initialize.lookups]; the
# templates' atoms in src/spacy_lookahead/systems/templates.py)
def lexicon(max_words: Optional[int] = 200000) -> Dict[str, object]:
    return {"initialize.lookups": {"@misc": "spacy_lookahead.lexeme_tables.v1", "lang": "en",
                                   "max_words": max_words}}


def clusters(offsets=(-1, 0, 1), bits=(4, 6, 10, 20)) -> List[str]:
    """Cluster bit-prefix templates (Koo et al. 2008; Turian et al. 2010)."""
    return [f"cluster{k}[{o}]" for o in offsets for k in bits]


PROBS = ["prob[-1]", "prob[0]", "prob[1]"]
# Brown clusters at the stack and buffer positions (Koo et al. 2008: 4- and
# 6-bit prefixes and the full path, alone and with the other word's tag)
PARSER_CLUSTERS = [f"cluster{k}[{p}]" for p in ("s0", "s1", "q0", "q1") for k in (4, 6, 20)] + [
    "cluster4[s0] tag[q0]", "tag[s0] cluster4[q0]", "cluster4[s0] cluster4[q0]",
    "cluster6[s0] tag[s1]", "tag[s0] cluster6[s1]", "cluster4[s0] cluster4[s1]",
    "cluster4[s0l]", "cluster4[s0r]", "cluster4[s1l]", "cluster4[s1r]"]
TAGGER_LEXICON = ["preset:pos", *clusters(), *PROBS]
# wider word context (Collins 2002; Toutanova et al. 2003): the neighbours'
# affixes and shapes, word bigrams around the word, case-sensitive neighbours
TAGGER_CONTEXT = ["suf2[-1]", "suf3[-1]", "suf2[1]", "suf3[1]", "shape[-1]", "shape[1]",
                  "orth[-1]", "orth[1]", "lower[-2] lower[-1]", "lower[1] lower[2]",
                  "lower[-1] lower[1]", "suf3[0] lower[1]", "lower[-1] suf3[0]"]
# the tag dictionary as ambiguity classes of w-1..w+2 (Gimenez and Marquez 2004)
TAGGER_CLASSES = ["ambiguity[-1]", "ambiguity[0]", "ambiguity[1]", "ambiguity[2]",
                  "ambiguity[0] ambiguity[1]"]
# the best on dev (benchmarks/NOTES.md)
TAGGER_BEST = [*TAGGER_LEXICON, *TAGGER_CONTEXT]
# Koo et al. (2008)'s prefix lengths: 4, 6 bits and the whole path
TAGGER_KOO = ["preset:pos", *clusters(bits=(4, 6)), "cluster[-1]", "cluster[0]", "cluster[1]",
              *PROBS]
for name, feats, label in (
        ("tagger_d1_clusters", ["preset:pos", *clusters()], "clusters of w-1, w0, w+1"),
        ("tagger_d1_lexicon", TAGGER_LEXICON, "clusters and probability bins of w-1, w0, w+1"),
        ("tagger_d1_context", ["preset:pos", *TAGGER_CONTEXT], "wider word context"),
        ("tagger_d1_context_lexicon", TAGGER_BEST,
         "wider word context, clusters and probability bins"),
        ("tagger_d1_lexicon_classes", [*TAGGER_LEXICON, *TAGGER_CLASSES],
         "clusters, probability bins and ambiguity classes (tag dictionary)"),
        # the cluster prefix lengths, on dev (Owoputi et al. 2013: every even
        # length; Koo et al. 2008: 4, 6 and the whole path)
        ("tagger_d1_lexicon_even_bits", ["preset:pos", *clusters(bits=(2, 4, 6, 8, 10, 12, 16, 20)),
                                         *PROBS], "clusters (2, 4, .., 12, 16, 20 bits) and "
                                                  "probability bins of w-1, w0, w+1"),
        ("tagger_d1_lexicon_koo_bits", TAGGER_KOO, "clusters (4, 6 bits, whole path) and "
                                                   "probability bins of w-1, w0, w+1"),
        ("tagger_d1_context_lexicon_koo_bits", [*TAGGER_KOO, *TAGGER_CONTEXT],
         "wider word context, clusters (4, 6 bits, whole path) and probability bins")):
    # (context_lexicon also at the quick scale: the bio pipeline's tagger)
    add(Experiment(name, "tagging", "tag", "configs/tagger_ewt.cfg", "ewt",
                   f"lookahead_tagger, depth 1, + {label}",
                   {**component(TAGGER, depth=1, features=feats), **lexicon()},
                   model="model-best", quick={} if name == "tagger_d1_context_lexicon" else None))

# ... the dev's best (Koo et al.'s lengths) with more: clusters of w-2, w+2 and
# in pairs with the neighbours' (TAGGER_CLUSTER_PAIRS); the label history's
# second order; right to left
TAGGER_CLUSTER_PAIRS = ["cluster4[-2]", "cluster4[2]", "cluster6[-1] cluster6[0]",
                        "cluster6[0] cluster6[1]", "lower[-1] cluster6[0]", "cluster6[0] lower[1]"]
for name, extra, label in (
        ("tagger_d1_koo_cluster_pairs", {"features": [*TAGGER_KOO, *TAGGER_CLUSTER_PAIRS]},
         "clusters (4, 6 bits, whole path), of w-2, w+2 and in pairs, probability bins"),
        ("tagger_d1_koo_trigrams", {"features": TAGGER_KOO, "tag_trigrams": True},
         "tag trigrams, clusters (4, 6 bits, whole path) and probability bins"),
        ("tagger_d1_koo_rtl", {"features": TAGGER_KOO, "direction": "rtl"},
         "right to left, clusters (4, 6 bits, whole path) and probability bins")):
    add(Experiment(name, "tagging", "tag", "configs/tagger_ewt.cfg", "ewt",
                   f"lookahead_tagger, depth 1, + {label}",
                   {**component(TAGGER, depth=1, **extra), **lexicon()}, model="model-best"))
# ... and the margin C, which Tsuruoka et al. tune on dev with the iterations
# (Section 4.1); the tagger's config keeps 1.0, the parser's rows gained 0.5
# LAS from 50
for c in (10, 50):
    add(Experiment(f"tagger_d1_koo_margin{c}", "tagging", "tag", "configs/tagger_ewt.cfg", "ewt",
                   f"lookahead_tagger, depth 1, margin C = {c}, + clusters (4, 6 bits, whole path) "
                   "and probability bins",
                   {**component(TAGGER, depth=1, features=TAGGER_KOO, margin=c), **lexicon()},
                   model="model-best"))
# ... with all of the tables' million words, not the 200,000 most probable
add(Experiment("tagger_d1_koo_1m", "tagging", "tag", "configs/tagger_ewt.cfg", "ewt",
               "lookahead_tagger, depth 1, + clusters (4, 6 bits, whole path) and probability "
               "bins of all the tables' million words",
               {**component(TAGGER, depth=1, features=TAGGER_KOO), **lexicon(None)},
               model="model-best"))

# ... and Tsuruoka et al.'s best POS setting (Table 1): depth 2 with tag trigrams
add(Experiment("tagger_d2_koo_trigrams", "tagging", "tag", "configs/tagger_ewt.cfg", "ewt",
               "lookahead_tagger, depth 2, + tag trigrams, clusters (4, 6 bits, whole path) and "
               "probability bins",
               {**component(TAGGER, depth=2, features=TAGGER_KOO, tag_trigrams=True), **lexicon()},
               model="model-best"))

# --- chunking (CoNLL-2000, Table 2) and bio-NER (JNLPBA, Table 3) ----------------
for d in (0, 1, 2):
    add(Experiment(f"chunker_d{d}", "spans", "chunk", "configs/chunker_conll2000.cfg", "conll2000",
                   f"lookahead_chunker, depth {d}", component(CHUNKER, depth=d),
                   quick={} if d < 2 else None, groups=("engine",) if d == 1 else ()))
for direction in ("rtl", "ltr"):
    for d in (0, 1, 2):
        add(Experiment(f"ner_{direction}_d{d}", "spans", "ner", "configs/ner_jnlpba.cfg", "jnlpba",
                       f"lookahead_ner, {'right-to-left' if direction == 'rtl' else 'left-to-right'}, depth {d}",
                       {**component(NER, depth=d, direction=direction),
                        **({"training.max_epochs": 5} if d == 2 else {})},
                       quick={} if (d < 2 and (direction, d) != ("ltr", 0)) else None,
                       groups=("engine",) if (direction, d) == ("rtl", 1) else ()))
for data, epochs in (("conll2000", 15), ("jnlpba", 10)):
    add(Experiment(f"spacy_ner_{data}", "spans", "chunk" if data == "conll2000" else "ner",
                   f"configs/baseline_ner_{data}.cfg", f"{data}_docbin",
                   "spaCy built-in ner" + (" on the chunks" if data == "conll2000" else "") + " (efficiency)",
                   {"training.max_epochs": epochs}, quick={}, curves=False),
        Experiment(f"crf_{data}", "spans", "chunk" if data == "conll2000" else "ner",
                   "chunk" if data == "conll2000" else "ner", f"{data}_docbin",
                   "first-order CRF (crfsuite, same features, L1)",
                   {"c1": 1.0, "c2": 0.0, "max-iterations": 200}, quick={"max-iterations": 30},
                   trainer="crf", curves=False))

# ... with knowledge from unlabelled text, chosen on the held-out tenth (the
# sets have no dev split): the preset templates and the preset with
# clusters (and probability bins) of the window's words, by the same protocol
CHUNK_LEXICON = ["preset:chunk", *clusters(range(-2, 3)), *PROBS]
NER_LEXICON = ["preset:ner", *clusters(), *PROBS]
CHUNK_AFFIXES = ["suf2[0]", "suf3[0]", "suf4[0]", "pre2[0]", "pre3[0]", "shape[0]", "suf3[-1]",
                 "suf3[1]", "shape[-1]", "shape[1]"]
CHUNK_CONJUNCTIONS = ["tag[0] lower[0]", "tag[-1] lower[0]", "lower[0] tag[1]",
                      "tag[-1] tag[0] lower[0]", "cluster6[0] tag[0]", "cluster6[-1] tag[0]",
                      "tag[0] cluster6[1]", "lower[-1] tag[0]"]
CHUNK_BEST = [*CHUNK_LEXICON, *CHUNK_AFFIXES, *CHUNK_CONJUNCTIONS]
KOO_BITS = (4, 6)
CHUNK_KOO = ["preset:chunk", *clusters(range(-2, 3), KOO_BITS),
             *[f"cluster[{o}]" for o in range(-2, 3)], *PROBS]
CHUNK_LEXICON_NEAR = ["preset:chunk", *clusters(), *PROBS]
CHUNK_KOO_NEAR = ["preset:chunk", *clusters(bits=KOO_BITS), "cluster[-1]", "cluster[0]",
                  "cluster[1]", *PROBS]
NER_KOO = ["preset:ner", *clusters(bits=KOO_BITS), "cluster[-1]", "cluster[0]", "cluster[1]",
           *PROBS]
for name, task, config, data, comp, feats, epochs, label in (
        ("chunker_d1_heldout", "chunk", "configs/chunker_conll2000.cfg", "conll2000", CHUNKER,
         ["preset:chunk"], 10, "lookahead_chunker, depth 1 (dev: held-out tenth)"),
        ("chunker_d1_lexicon", "chunk", "configs/chunker_conll2000.cfg", "conll2000", CHUNKER,
         CHUNK_LEXICON, 10, "lookahead_chunker, depth 1, + clusters of w-2..w+2, "
                            "probability bins of w-1..w+1 (dev: held-out tenth)"),
        ("ner_rtl_d1_heldout", "ner", "configs/ner_jnlpba.cfg", "jnlpba", NER, ["preset:ner"], 10,
         "lookahead_ner, right-to-left, depth 1 (dev: held-out tenth)"),
        ("ner_rtl_d1_lexicon", "ner", "configs/ner_jnlpba.cfg", "jnlpba", NER, NER_LEXICON, 10,
         "lookahead_ner, right-to-left, depth 1, + clusters and probability bins of "
         "w-1..w+1 (dev: held-out tenth)"),
        # Koo et al.'s prefix lengths (4, 6 bits, the whole path), as for the tagger
        ("chunker_d1_lexicon_koo_bits", "chunk", "configs/chunker_conll2000.cfg", "conll2000",
         CHUNKER, CHUNK_KOO, 10, "lookahead_chunker, depth 1, + clusters (4, 6 bits, whole "
                                 "path) of w-2..w+2, probability bins of w-1..w+1 (dev: held-out tenth)"),
        ("ner_rtl_d1_lexicon_koo_bits", "ner", "configs/ner_jnlpba.cfg", "jnlpba", NER, NER_KOO, 10,
         "lookahead_ner, right-to-left, depth 1, + clusters (4, 6 bits, whole path) and "
         "probability bins of w-1..w+1 (dev: held-out tenth)"),
        ("ner_rtl_d1_lexicon_biluo_koo_bits", "ner", "configs/ner_jnlpba.cfg", "jnlpba", NER,
         NER_KOO, 10, "lookahead_ner, right-to-left, depth 1, BILUO, + clusters (4, 6 bits, "
                      "whole path) and probability bins of w-1..w+1 (dev: held-out tenth)"),
        # beyond Sha and Pereira's window (the preset): the word's affixes and
        # shape, and conjunctions of a word or its cluster with a tag
        ("chunker_d1_lexicon_affixes", "chunk", "configs/chunker_conll2000.cfg", "conll2000",
         CHUNKER, [*CHUNK_LEXICON, *CHUNK_AFFIXES], 10, "lookahead_chunker, depth 1, + clusters "
         "and probability bins, + affixes and shapes of w-1..w+1 (dev: held-out tenth)"),
        ("chunker_d1_lexicon_conjunctions", "chunk", "configs/chunker_conll2000.cfg", "conll2000",
         CHUNKER, [*CHUNK_LEXICON, *CHUNK_CONJUNCTIONS], 10, "lookahead_chunker, depth 1, + "
         "clusters and probability bins, + words and clusters with tags (dev: held-out tenth)"),
        ("chunker_d1_lexicon_biluo", "chunk", "configs/chunker_conll2000.cfg", "conll2000",
         CHUNKER, CHUNK_LEXICON, 10, "lookahead_chunker, depth 1, BILUO, + clusters and "
         "probability bins (dev: held-out tenth)"),
        ("chunker_d1_lexicon_affixes_conjunctions", "chunk", "configs/chunker_conll2000.cfg",
         "conll2000", CHUNKER, CHUNK_BEST, 10, "lookahead_chunker, depth 1, + clusters and "
         "probability bins, affixes and shapes, words and clusters with tags (dev: held-out "
         "tenth)"),
        ("chunker_d1_biluo_affixes_conjunctions", "chunk", "configs/chunker_conll2000.cfg",
         "conll2000", CHUNKER, CHUNK_BEST, 10, "lookahead_chunker, depth 1, BILUO, + clusters "
         "and probability bins, affixes and shapes, words and clusters with tags (dev: held-out "
         "tenth)"),
        ("chunker_d1_biluo_affixes_conjunctions_e20", "chunk", "configs/chunker_conll2000.cfg",
         "conll2000", CHUNKER, CHUNK_BEST, 20, "lookahead_chunker, depth 1, BILUO, + clusters "
         "and probability bins, affixes and shapes, words and clusters with tags, 20 epochs "
         "(dev: held-out tenth)"),
        # cheaper lexicon sets under BILUO (the shipped setting's speed fell
        # under 0.7x the chunker without them): BILUO alone, Koo et al.'s
        # prefix lengths, and the clusters of w-1..w+1 only
        ("chunker_d1_biluo_only", "chunk", "configs/chunker_conll2000.cfg", "conll2000",
         CHUNKER, ["preset:chunk"], 10, "lookahead_chunker, depth 1, BILUO (dev: held-out tenth)"),
        ("chunker_d1_lexicon_biluo_koo_bits", "chunk", "configs/chunker_conll2000.cfg",
         "conll2000", CHUNKER, CHUNK_KOO, 10, "lookahead_chunker, depth 1, BILUO, + clusters "
         "(4, 6 bits, whole path) of w-2..w+2 and probability bins (dev: held-out tenth)"),
        ("chunker_d1_lexicon_biluo_near", "chunk", "configs/chunker_conll2000.cfg", "conll2000",
         CHUNKER, CHUNK_LEXICON_NEAR, 10, "lookahead_chunker, depth 1, BILUO, + clusters of "
         "w-1..w+1 and probability bins (dev: held-out tenth)"),
        ("chunker_d1_lexicon_biluo_koo_near", "chunk", "configs/chunker_conll2000.cfg",
         "conll2000", CHUNKER, CHUNK_KOO_NEAR, 10, "lookahead_chunker, depth 1, BILUO, + "
         "clusters (4, 6 bits, whole path) of w-1..w+1 and probability bins (dev: held-out "
         "tenth)"),
        # Ratinov and Roth (2009): BILOU against IOB2
        ("ner_rtl_d1_lexicon_biluo", "ner", "configs/ner_jnlpba.cfg", "jnlpba", NER, NER_LEXICON,
         10, "lookahead_ner, right-to-left, depth 1, BILUO, + clusters and probability bins of "
             "w-1..w+1 (dev: held-out tenth)")):
    extra = {"direction": "rtl"} if comp == NER else {}
    if "_biluo" in name:
        extra["scheme"] = "biluo"
    add(Experiment(name, "spans", task, config, data, label,
                   {**component(comp, depth=1, features=feats, **extra),
                    **(lexicon() if feats[1:] else {}), "training.max_epochs": epochs,
                    "training.eval_frequency": 190 if comp == CHUNKER else 451},
                   model="model-best", dev_is_train=True))

# ... and the shipped chunker's margin C, on the held-out tenth (50 was set
# from the scale of R^2, Appendix A, not tuned)
for c in (10, 200):
    add(Experiment(f"chunker_d1_lexicon_biluo_koo_near_margin{c}", "spans", "chunk",
                   "configs/chunker_conll2000.cfg", "conll2000",
                   f"lookahead_chunker, depth 1, margin C = {c}, BILUO, + clusters (4, 6 bits, "
                   "whole path) of w-1..w+1 and probability bins (dev: held-out tenth)",
                   {**component(CHUNKER, depth=1, features=CHUNK_KOO_NEAR, scheme="biluo", margin=c),
                    **lexicon(), "training.max_epochs": 10, "training.eval_frequency": 190},
                   model="model-best", dev_is_train=True))

# NER beyond the window (Ratinov and Roth 2009's context aggregation): the
# JNLPBA files have no document markers, so docs of 10 sentences in a row
# (an abstract has 9.4 on average) in train, the held-out tenth and test;
# the words around the name's other occurrences in the doc
NER_CONTEXT = ["lower[doc-2]", "lower[doc-1]", "lower[doc+1]", "lower[doc+2]", "orth[doc+0]"]
DOCS = {"corpora.train.n_sents": 10, "corpora.dev.n_sents": 10}
SENTS = {f"components.{NER}.respect_sent_starts": True}
for name, feats, label, extra in (
        ("ner_rtl_d1_lexicon_docs", NER_LEXICON, "+ clusters and probability bins, in docs of "
                                                 "10 sentences", {}),
        # ... each sentence labelled on its own (respect_sent_starts)
        ("ner_rtl_d1_lexicon_docs_sents", NER_LEXICON, "+ clusters and probability bins, in docs "
                                                       "of 10 sentences, each on its own", SENTS),
        ("ner_rtl_d1_lexicon_context_sents", [*NER_LEXICON, *NER_CONTEXT],
         "+ clusters and probability bins, in docs of 10 sentences, each on its own, + the words "
         "around the word's other occurrences", SENTS),
        ("ner_rtl_d1_lexicon_context", [*NER_LEXICON, *NER_CONTEXT],
         "+ clusters and probability bins, in docs of 10 sentences, + the words around the "
         "word's other occurrences", {}),
        ("ner_rtl_d1_lexicon_context_clusters", [*NER_LEXICON, *NER_CONTEXT, "cluster6[doc-1]",
                                                 "cluster6[doc+1]"],
         "+ clusters and probability bins, in docs of 10 sentences, + the words and clusters "
         "around the word's other occurrences", {})):
    add(Experiment(name, "spans", "ner", "configs/ner_jnlpba.cfg", "jnlpba",
                   f"lookahead_ner, right-to-left, depth 1, {label} (dev: held-out tenth)",
                   {**component(NER, depth=1, features=feats, direction="rtl"), **lexicon(),
                    **DOCS, **extra, "training.max_epochs": 10, "training.eval_frequency": 451},
                   model="model-best", dev_is_train=True, evaluate=("--n-sents", "10")))

# POS tags as NER inputs, from the EWT tagger (tagger_d1_context_lexicon: it
# never saw JNLPBA, so train and test are tagged alike; the STEPS below)
JNLPBA_TAGGED = JNLPBA_TAGGED_TRAIN
TAGGED_HELD_OUT = {"paths.train": JNLPBA_TAGGED, "paths.dev": JNLPBA_TAGGED,
                   "corpora.train.columns": ["word", "pos", "ent"],
                   "corpora.dev.columns": ["word", "pos", "ent"], "corpora.train.held_out": 0.1,
                   "corpora.train.part": "rest", "corpora.dev.held_out": 0.1,
                   "corpora.dev.part": "held_out", "training.max_epochs": 10,
                   "training.eval_frequency": 451}
# ... and beyond them: the neighbours' affixes and shapes, words with their
# tags (NER_AFFIXES); the label history's second order (label_trigrams)
NER_AFFIXES = ["suf3[-1]", "suf3[1]", "pre3[-1]", "pre3[1]", "shape[-1]", "shape[1]",
               "tag[0] lower[0]", "tag[-1] lower[0]", "lower[0] tag[1]", "cluster6[0] tag[0]"]
NER_WIDE = ["lower[-3]", "lower[3]", "cluster6[-2]", "cluster6[2]",
            "suf4[-1]", "suf4[1]"]
for name, scheme, label, feats, extra in (
        ("ner_rtl_d1_lexicon_pos", "iob2", "", NER_LEXICON, {}),
        ("ner_rtl_d1_biluo_pos", "biluo", "BILUO, ", NER_LEXICON, {}),
        ("ner_rtl_d1_biluo_pos_affixes", "biluo", "BILUO, neighbours' affixes and shapes, words "
         "with tags, ", [*NER_LEXICON, *NER_AFFIXES], {}),
        ("ner_rtl_d1_biluo_pos_trigrams", "biluo", "BILUO, label trigrams, ", NER_LEXICON,
         {"label_trigrams": True}),
        ("ner_rtl_d1_biluo_pos_affixes_trigrams", "biluo", "BILUO, label trigrams, neighbours' "
         "affixes and shapes, words with tags, ", [*NER_LEXICON, *NER_AFFIXES],
         {"label_trigrams": True}),
        ("ner_rtl_d1_biluo_pos_affixes_wide", "biluo", "BILUO, neighbours' affixes and shapes, "
         "words with tags, words and clusters of w-3..w+3, ", [*NER_LEXICON, *NER_AFFIXES,
                                                                *NER_WIDE], {})):
    add(Experiment(name, "spans", "ner", "configs/ner_jnlpba.cfg", "jnlpba",
                   f"lookahead_ner, right-to-left, depth 1, {label}+ clusters and probability "
                   "bins, + POS tags of the EWT tagger (dev: held-out tenth)",
                   {**component(NER, depth=1, features=feats, direction="rtl",
                                pos_features=True, scheme=scheme, **extra), **lexicon(),
                    **TAGGED_HELD_OUT},
                   model="model-best"))
# ... the best of those with the whole tables (a million words, not the
# 200,000 most probable: a bio-entity's words are rare in general English;
# 53% of JNLPBA train's entity tokens have a cluster then, against 52%, and
# 73% a probability, against 61%)
add(Experiment("ner_rtl_d1_biluo_pos_affixes_1m", "spans", "ner", "configs/ner_jnlpba.cfg",
               "jnlpba", "lookahead_ner, right-to-left, depth 1, BILUO, neighbours' affixes and "
               "shapes, words with tags, + clusters and probability bins of all the tables' "
               "million words, + POS tags of the EWT tagger (dev: held-out tenth)",
               {**component(NER, depth=1, features=[*NER_LEXICON, *NER_AFFIXES], direction="rtl",
                            pos_features=True, scheme="biluo"), **lexicon(None),
                **TAGGED_HELD_OUT},
               model="model-best"))

# ... the best there (BILUO, the lexicon, POS tags) on all of train, as a
# pipeline: the EWT tagger (sourced, frozen, annotating) and the NER
add(Experiment("ner_rtl_d1_biluo_pos_full", "spans", "ner", "configs/ner_jnlpba_tagged.cfg",
               "jnlpba", "EWT tagger + lookahead_ner, right-to-left, depth 1, BILUO, + clusters "
                         "and probability bins, + the tagger's POS tags",
               {"paths.tagger": "training/tagger_d1_context_lexicon/model-best",
                f"components.{NER}.features": NER_LEXICON}),
    # ... with the neighbours' affixes and shapes and words with tags (the
    # best on the held-out tenth: ner_rtl_d1_biluo_pos_affixes), same budget:
    # configs/ner_jnlpba_tagged.cfg as shipped
    Experiment("ner_rtl_d1_biluo_pos_affixes_full", "spans", "ner",
               "configs/ner_jnlpba_tagged.cfg", "jnlpba", "EWT tagger + lookahead_ner, "
               "right-to-left, depth 1, BILUO, + clusters and probability bins, + the tagger's "
               "POS tags, + neighbours' affixes and shapes, words with tags",
               {"paths.tagger": "training/tagger_d1_context_lexicon/model-best"},
               quick={"paths.tagger": "training/quick/tagger_d1_context_lexicon/model-best"}),
    # ... with the whole tables (ner_rtl_d1_biluo_pos_affixes_1m: 79.08 on the
    # held-out tenth against 79.02)
    Experiment("ner_rtl_d1_biluo_pos_affixes_1m_full", "spans", "ner",
               "configs/ner_jnlpba_tagged.cfg", "jnlpba", "EWT tagger + lookahead_ner, "
               "right-to-left, depth 1, BILUO, + clusters and probability bins of all the "
               "tables' million words, + the tagger's POS tags, + neighbours' affixes and "
               "shapes, words with tags",
               {"paths.tagger": "training/tagger_d1_context_lexicon/model-best",
                "initialize.lookups.max_words": None}))

# A two-stage NER (Krishnan and Manning 2006; Ratinov and Roth's extended
# prediction history in its two-stage form): configs/ner_jnlpba_stacked.cfg,
# a first NER (configs/ner_jnlpba_stage1.cfg: the shipped NER's templates, writing
# doc.spans["ner_stage1"]) and lookahead_ner reading its labels, trained on
# the first stage's jackknifed labels (the STEPS below). On the held-out
# tenth: the jackknife covers the other nine tenths only, and the held-out
# docs get the labels of the first stage trained beside the second on the nine
# tenths (it never sees a held-out doc).
STAGE1_REST = {"paths.train": "corpus/jnlpba/train.stage1_rest.spacy",
               "paths.train_stage1": "corpus/jnlpba/train.stage1_rest.jackknifed.spacy",
               "paths.dev": "corpus/jnlpba/train.stage1_held_out.spacy",
               "paths.tagger": "training/tagger_d1_context_lexicon/model-best",
               "training.eval_frequency": 451}
NER_SHIPPED = [*NER_LEXICON, *NER_AFFIXES]
NER_HISTORY = ["chunk[doc+0]"]
# ... the first stage left to right, the second right to left: each reads
# what the other direction decided (the stage-1 labels of the nine tenths
# jackknifed left to right)
STAGE1_LTR = {"paths.train_stage1": "corpus/jnlpba/train.stage1_rest_ltr.jackknifed.spacy",
              "components.ner_stage1.direction": "ltr"}
STAGE1_RTL = {"components.ner_stage1.direction": "rtl"}
for name, feats, label, extra in (
        ("ner_rtl_d1_stacked", NER_SHIPPED, "the labels at w-2..w+2 of a first stage labelling "
         "right to left", STAGE1_RTL),
        ("ner_rtl_d1_stacked_history", [*NER_SHIPPED, *NER_HISTORY],
         "the labels at w-2..w+2 and at the word's other occurrences of a first stage labelling "
         "right to left", STAGE1_RTL),
        ("ner_rtl_d1_stacked_ltr", NER_SHIPPED, "the labels at w-2..w+2 of a first stage "
         "labelling left to right", STAGE1_LTR)):
    add(Experiment(name, "spans", "ner", "configs/ner_jnlpba_stacked.cfg", "jnlpba",
                   "EWT tagger + first NER + lookahead_ner, right-to-left, depth 1, BILUO, the "
                   f"shipped templates + {label} (dev: held-out tenth)",
                   {**STAGE1_REST, f"components.{NER}.features": feats, **extra},
                   model="model-best"))
# ... the best there (the first stage left to right), on all of train for the
# fixed budget (model-last): the first stage's labels jackknifed on all of it
add(Experiment("ner_rtl_d1_stacked_ltr_full", "spans", "ner", "configs/ner_jnlpba_stacked.cfg",
               "jnlpba", "EWT tagger + first NER (left to right) + lookahead_ner, right-to-left, "
               "depth 1, BILUO, the shipped templates + the first stage's labels at w-2..w+2",
               {"paths.train": "corpus/jnlpba/train.stage1.spacy",
                "paths.train_stage1": "corpus/jnlpba/train.jackknifed_stage1_ltr.spacy",
                "paths.dev": "corpus/jnlpba/test.stage1.spacy",
                "paths.tagger": "training/tagger_d1_context_lexicon/model-best",
                "components.ner_stage1.direction": "ltr"}))

# ... and the templates chosen there, trained on the whole training set for
# the fixed budget of chunker_d1 / ner_rtl_d1 (model-last: no selection)
add(Experiment("chunker_d1_lexicon_full", "spans", "chunk", "configs/chunker_conll2000.cfg",
               "conll2000", "lookahead_chunker, depth 1, + clusters and probability bins",
               {**component(CHUNKER, depth=1, features=CHUNK_LEXICON), **lexicon()}, quick={}),
    # the chunker best on the held-out tenth (BILUO, affixes, conjunctions:
    # best at epoch 8 of 20 there), for the same fixed budget
    Experiment("chunker_d1_biluo_full", "spans", "chunk", "configs/chunker_conll2000.cfg",
               "conll2000", "lookahead_chunker, depth 1, BILUO, + clusters and probability bins, "
               "affixes and shapes, words and clusters with tags",
               {**component(CHUNKER, depth=1, features=CHUNK_BEST, scheme="biluo"), **lexicon()}),
    # ... and the best there at >= 0.7x the speed of the chunker without the
    # new features (lexicon_speed_chunk): BILUO and the lexicon (shipped)
    Experiment("chunker_d1_biluo_lexicon_full", "spans", "chunk", "configs/chunker_conll2000.cfg",
               "conll2000", "lookahead_chunker, depth 1, BILUO, + clusters and probability bins",
               {**component(CHUNKER, depth=1, features=CHUNK_LEXICON, scheme="biluo"),
                **lexicon()}, quick={}),
    # ... which fell under 0.7x when the chunker without them got faster
    # (2026-11-28): the best on the held-out tenth at >= 0.7x now, BILUO and
    # the clusters (4, 6 bits, whole path) of w-1..w+1 (shipped)
    Experiment("chunker_d1_biluo_lexicon_koo_near_full", "spans", "chunk",
               "configs/chunker_conll2000.cfg", "conll2000", "lookahead_chunker, depth 1, BILUO, "
               "+ clusters (4, 6 bits, whole path) of w-1..w+1 and probability bins",
               {**component(CHUNKER, depth=1, features=CHUNK_KOO_NEAR, scheme="biluo"),
                **lexicon()}, quick={}),
    Experiment("ner_rtl_d1_lexicon_full", "spans", "ner", "configs/ner_jnlpba.cfg", "jnlpba",
               "lookahead_ner, right-to-left, depth 1, + clusters and probability bins",
               {**component(NER, depth=1, direction="rtl", features=NER_LEXICON), **lexicon()},
               quick={}))

# --- SAPO (Sun et al.): model selection and temperature on dev / a held-out tenth
add(Experiment("tagger_sapo", "sapo", "tag", "configs/tagger_ewt.cfg", "ewt",
               "lookahead_tagger, SAPO (n = 5, exact A*)", component(TAGGER, learner="sapo", l2=2.0),
               quick={}, model="model-best"),
    Experiment("chunker_sapo", "sapo", "chunk", "configs/chunker_conll2000.cfg", "conll2000",
               "lookahead_chunker, SAPO (n = 5, exact A*)",
               {**component(CHUNKER, learner="sapo", l2=1.0), "training.eval_frequency": 190},
               quick={"training.eval_frequency": 200}, model="model-best", dev_is_train=True),
    Experiment("ner_rtl_sapo", "sapo", "ner", "configs/ner_jnlpba.cfg", "jnlpba",
               "lookahead_ner, right-to-left, SAPO (n = 5, exact A*, averaged, gamma 0.05)",
               {**component(NER, direction="rtl", learner="sapo", l2=1.0, average=True,
                            learning_rate=0.05), "training.eval_frequency": 451},
               quick={"training.eval_frequency": 200}, model="model-best", dev_is_train=True))
# The recipe ner_rtl_sapo selected on the held-out tenth, trained on all of
# train as the perceptron rows are (model-last after its best epoch count,
# 10): its temperature is the one ner_rtl_sapo fitted on the held-out tenth,
# fixed, since that tenth is now training data; the "dev" scores it logs are
# on that tenth too (a training curve: no test set seen before the end).
add(Experiment("ner_rtl_sapo_full", "sapo", "ner", "configs/ner_jnlpba.cfg", "jnlpba",
               "lookahead_ner, right-to-left, SAPO as ner_rtl_sapo, on all of train",
               {**component(NER, direction="rtl", learner="sapo", l2=1.0, average=True,
                            learning_rate=0.05, temperature=1.0855),
                "paths.dev": "assets/jnlpba/train.iob2", "corpora.dev.held_out": 0.1,
                "corpora.dev.part": "held_out", "training.max_epochs": 10,
                "training.eval_frequency": 490}))

# Why SAPO trailed on JNLPBA: ablations on the held-out tenth (issue 17); dev only
SAPO_BASE = {"learner": "sapo", "direction": "rtl", "l2": 1.0}
SAPO_ABLATIONS: Dict[str, Tuple[str, Dict[str, object]]] = {
    "base": ("base", {}),
    "perceptron_d1": ("base", {"learner": "perceptron", "l2": None}),
    "n10": ("n", {"n": 10}), "n20": ("n", {"n": 20}), "n50": ("n", {"n": 50}),
    "l2_0.1": ("lambda", {"l2": 0.1}), "l2_0.5": ("lambda", {"l2": 0.5}),
    "l2_2": ("lambda", {"l2": 2.0}),
    "l2_5": ("lambda", {"l2": 5.0}),  # Sun et al.'s lambda for Bio-NER
    "gamma_0.05": ("schedule", {"learning_rate": 0.05}),
    "gamma_0.2": ("schedule", {"learning_rate": 0.2}),
    "decay_0.9": ("schedule", {"learning_rate_decay": 0.9}),
    "decay_1": ("schedule", {"learning_rate_decay": 1.0}),
    "ltr": ("direction", {"direction": "ltr"}),
    "beam50": ("search", {"search": "beam", "beam_width": 50, "update": "standard"}),
    "averaged": ("averaging", {"average": True}),
    "averaged_gamma_0.05": ("averaging", {"average": True, "learning_rate": 0.05}),
    "label_trigrams": ("features", {"label_trigrams": True}),
}
for name, (what, changed) in SAPO_ABLATIONS.items():
    settings = {k: v for k, v in {**SAPO_BASE, **changed}.items() if v is not None}
    add(Experiment(f"sapo_ablations/{name}", "sapo-ablations", "ner", "configs/ner_jnlpba.cfg",
                   "jnlpba", what, {**component(NER, **settings), "training.max_epochs": 10,
                                    "training.eval_frequency": 451},
                   model="model-best", dev_is_train=True))


def sapo_ablation_names() -> List[str]:
    return [f"sapo_ablations/{n}" for n in SAPO_ABLATIONS]


# --- the parser from raw text (issue 16): configs/pipeline_ewt.cfg per row --------
P = f"components.{PARSER}."
EWT_RAW = {P + "search": "beam", P + "beam_width": 8, P + "update": "early",
           P + "features": "base", P + "tag_alternatives": False, P + "joint_tagging": False,
           f"components.{TAGGER}.alternatives": False, "corpora.train.inputs": ["tag"],
           "paths.train_tags": "corpus/ewt/train.jackknifed.spacy", "training.max_epochs": 30}
GREEDY = {P + "search": "greedy", P + "update": "max_violation"}
GOLD_TAGS = {"paths.train_tags": None}  # the parser trains on the gold tags
RICH = {P + "features": "rich", "training.max_epochs": 25}
ALTERNATIVES = {"corpora.train.inputs": ["tag", "tag_alternatives"],
                f"components.{TAGGER}.alternatives": True, P + "tag_alternatives": True}
RAW_PARSER: Dict[str, Tuple[str, Dict[str, object]]] = {
    "gold_greedy": ("greedy, trained on gold tags", {**GREEDY, **GOLD_TAGS}),
    "jk_greedy": ("greedy, jackknifed tags", GREEDY),
    "gold_b8_early": ("beam 8, early update, trained on gold tags", GOLD_TAGS),
    "jk_b8_early": ("beam 8, early update, jackknifed tags", {}),
    "jk_rich_b8_early": ("+ rich features (Zhang and Nivre 2011)", RICH),
    "jk_rich_b16_early": ("+ rich features, beam 16",
                          {**RICH, P + "beam_width": 16, "training.max_epochs": 20}),
    "jk_rich_b8_mv": ("rich features, beam 8, max-violation update",
                      {**RICH, P + "update": "max_violation", "training.max_epochs": 15}),
    "jkalt_rich_b8_early": ("+ rich features + the tagger's alternative tags",
                            {**RICH, **ALTERNATIVES}),
    "jkalt_rich_b8_mv": ("+ rich features + the tagger's alternative tags, max-violation",
                         {**RICH, **ALTERNATIVES, P + "update": "max_violation",
                          "training.max_epochs": 15}),
    "jkalt_rich_b16_early": ("+ rich features, beam 16 + the tagger's alternative tags",
                             {**RICH, **ALTERNATIVES, P + "beam_width": 16,
                              "training.max_epochs": 20}),
    "jkalt_rich_b32_early": ("+ rich features, beam 32 + the tagger's alternative tags",
                             {**RICH, **ALTERNATIVES, P + "beam_width": 32,
                              "training.max_epochs": 20}),
    "jkalt_rich_b8_early_joint": ("+ rich features + the tagger's alternative tags + joint tagging",
                                  {**RICH, **ALTERNATIVES, P + "joint_tagging": True}),
    "jkalt_rich_b8_early_joint_e40": ("+ rich features + the tagger's alternative tags + joint tagging, "
                                      "40 epochs at most",
                                      {**RICH, **ALTERNATIVES, P + "joint_tagging": True,
                                       "training.max_epochs": 40}),
    "jkalt_rich_b64_early": ("+ rich features, beam 64 + the tagger's alternative tags",
                             {**RICH, **ALTERNATIVES, P + "beam_width": 64,
                              "training.max_epochs": 20}),
    "jkalt_rich_b16_mv": ("+ rich features, beam 16 + the tagger's alternative tags, max-violation",
                          {**RICH, **ALTERNATIVES, P + "beam_width": 16,
                           P + "update": "max_violation", "training.max_epochs": 15}),
    "jkalt_rich_b32_mv": ("+ rich features, beam 32 + the tagger's alternative tags, max-violation",
                          {**RICH, **ALTERNATIVES, P + "beam_width": 32,
                           P + "update": "max_violation", "training.max_epochs": 15}),
    "jkalt_rich_b64_mv": ("+ rich features, beam 64 + the tagger's alternative tags, max-violation",
                          {**RICH, **ALTERNATIVES, P + "beam_width": 64,
                           P + "update": "max_violation", "training.max_epochs": 15}),
    "jkalt_rich_b16_early_joint": ("+ rich features, beam 16 + the tagger's alternative tags + joint tagging",
                                   {**RICH, **ALTERNATIVES, P + "joint_tagging": True,
                                    P + "beam_width": 16, "training.max_epochs": 20}),
}
# knowledge from unlabelled text in both: the tagger's templates chosen on dev
# (tagger_d1_context_lexicon), jackknifed with them; the parser's clusters
JOINT = {**RICH, **ALTERNATIVES, P + "joint_tagging": True}
LEXICON_JACKKNIFE = "corpus/ewt/train.jackknifed_lexicon.spacy"
RAW_PARSER["jkalt_rich_b8_early_joint_lexicon"] = (
    "+ rich features + the tagger's alternative tags + joint tagging + clusters and probability "
    "bins in the tagger and clusters in the parser",
    {**JOINT, f"components.{TAGGER}.features": TAGGER_BEST, P + "features":
     ["preset:rich", *PARSER_CLUSTERS], **lexicon(), "paths.train_tags": LEXICON_JACKKNIFE})
for name, (what, changed) in RAW_PARSER.items():
    add(Experiment(f"raw_parser/{name}", "raw-parser", "pipeline", "configs/pipeline_ewt.cfg", "ewt",
                   what, {**EWT_RAW, **changed}, model="model-best"))
# configs/pipeline_ewt.cfg as shipped: what en_lookahead_ewt packages
add(Experiment("pipeline_ewt", "raw-parser", "pipeline", "configs/pipeline_ewt.cfg", "ewt",
               "configs/pipeline_ewt.cfg (jackknifed tags, rich features, the tagger's alternatives, "
               "joint tagging, beam 8, predicted with beam 10)",
               model="model-best"))
# the same training with prediction (and dev selection) at the training beam:
# the shipped setting until predict_width was chosen on dev
PREDICT_AT_TRAINING_WIDTH = {P + "search.predict_width": None}
add(Experiment("pipeline_ewt_beam8", "raw-parser", "pipeline", "configs/pipeline_ewt.cfg", "ewt",
               "configs/pipeline_ewt.cfg, predicted with the training beam (8)",
               PREDICT_AT_TRAINING_WIDTH, model="model-best"))
# the shipped config with its parser's cluster templates reading, at s0 and
# s1, the tag the parse chose (ctag), as preset:rich's own templates do under
# joint tagging, instead of the tagger's tag
PARSER_CLUSTERS_CTAG = [t.replace("tag[s", "ctag[s") for t in PARSER_CLUSTERS]
add(Experiment("pipeline_ewt_ctag", "raw-parser", "pipeline", "configs/pipeline_ewt.cfg", "ewt",
               "configs/pipeline_ewt.cfg, the parser's cluster templates with the parse's own "
               "tags at s0 and s1 (ctag)", {P + "features": ["preset:rich", *PARSER_CLUSTERS_CTAG],
                                            **PREDICT_AT_TRAINING_WIDTH},
               model="model-best"))
WSJ_BASE = {P + "search": "beam", P + "update": "max_violation", "training.max_epochs": 30,
            "training.patience": 2000}
for name, (what, changed) in {
        "wsj_b16_mv": ("beam 16, max-violation", {P + "beam_width": 16}),
        "wsj_rich_b16_mv": ("beam 16, max-violation, rich features",
                            {P + "beam_width": 16, P + "features": "rich"}),
        "wsj_rich_b32_mv": ("beam 32, max-violation, rich features",
                            {P + "beam_width": 32, P + "features": "rich"}),
        "wsj_rich_b16_early": ("beam 16, early update, rich features",
                               {P + "beam_width": 16, P + "update": "early", P + "features": "rich"}),
        "wsj_rich_b64_mv": ("beam 64, max-violation, rich features",
                            {P + "beam_width": 64, P + "features": "rich"}),
}.items():
    add(Experiment(f"raw_parser/{name}", "raw-parser", "parse", "configs/parser_wsj.cfg", "wsj", what,
                   {**WSJ_BASE, **changed}, model="model-best", evaluate=("--gold-tags",)))

# --- dependency parsing, gold POS: configs/parser_ewt.cfg, configs/parser_wsj.cfg -----
# One evaluation per ~half epoch on EWT (205 steps of 1000 words an epoch), one
# per epoch on the WSJ sample (82 steps); patience in epochs * steps per epoch.
EWT_EPOCH, WSJ_EPOCH = 205, 82


def parser_budget(epochs: int, patience: int, steps: int = EWT_EPOCH) -> Dict[str, object]:
    return {"training.max_epochs": epochs, "training.patience": patience * steps}


BEAM8 = {"search": "beam", "beam_width": 8}
SENTS = {**component(PARSER, respect_sent_starts=True),
         "corpora.train.@readers": "spacy_lookahead.keep_inputs.v1",
         "corpora.train.inputs": ["tag", "sent_starts"],
         "corpora.dev.@readers": "spacy_lookahead.keep_inputs.v1",
         "corpora.dev.inputs": ["tag", "sent_starts"]}
EWT_PARSER: Dict[str, Tuple[str, Dict[str, object], Dict[str, object]]] = {
    # name: (label, component settings, other overrides)
    "parser_ewt_greedy": ("greedy (depth 0), margin C = 1", {"search": "greedy"}, parser_budget(12, 3)),
    "parser_depth_d0": ("greedy (depth 0), margin C = 50", {"search": "greedy", "margin": 50},
                        parser_budget(12, 3)),
    "parser_depth_d1": ("lookahead, depth 1, margin C = 50",
                        {"search": "lookahead", "depth": 1, "margin": 50}, parser_budget(15, 3)),
    "parser_depth_d2": ("lookahead, depth 2, margin C = 50",
                        {"search": "lookahead", "depth": 2, "margin": 50}, parser_budget(4, 2)),
    **{f"parser_ewt_beam8_{u}": (f"beam k=8, {u.replace('_', '-')} update", {**BEAM8, "update": u},
                                 parser_budget(30, 5) if u in ("early", "max_violation")
                                 else parser_budget(15, 3))
       for u in ("early", "max_violation", "standard", "hybrid", "latest")},
    **{f"parser_ewt_beam8_{u}_sents": (f"beam k=8, {u.replace('_', '-')} update, gold sentence "
                                       "starts (one root per sentence: all derivations of a doc "
                                       "have the same length)", {**BEAM8, "update": u},
                                       {**SENTS, **parser_budget(14, 4)})
       for u in ("early", "max_violation")},
}
EWT_PARSER["parser_depth_d0_clusters"] = (
    "greedy (depth 0), margin C = 50, + cluster templates (Koo et al. 2008)",
    {"search": "greedy", "margin": 50, "features": ["preset:base", *PARSER_CLUSTERS]},
    {**parser_budget(12, 3), **lexicon()})
for name, (label, settings, other) in EWT_PARSER.items():
    add(Experiment(name, "parser", "parse", "configs/parser_ewt.cfg", "ewt", label,
                   {**component(PARSER, **settings), **other}, model="model-best",
                   evaluate=("--gold-tags", "--gold-sents") if "sents" in name else ("--gold-tags",),
                   quick={} if name in ("parser_ewt_greedy", "parser_ewt_beam8_early") else None,
                   groups=("depth",) if name.startswith("parser_depth") else ()))
for name, (label, settings, epochs, patience) in {
        "parser_wsj_greedy": ("greedy (depth 0)", {"search": "greedy"}, 12, 3),
        "parser_wsj_d1": ("lookahead, depth 1", {"search": "lookahead", "depth": 1}, 12, 3),
        "parser_wsj_d2": ("lookahead, depth 2", {"search": "lookahead", "depth": 2}, 12, 3),
        "parser_wsj_beam8_max_violation": ("beam k=8, max-violation",
                                           {**BEAM8, "update": "max_violation"}, 12, 3),
        "parser_wsj_beam8_max_violation_long": ("beam k=8, max-violation (30 epochs max, patience 5)",
                                                {**BEAM8, "update": "max_violation"}, 30, 5),
        "parser_wsj_beam8_early": ("beam k=8, early update (30 epochs max, patience 5)",
                                   {**BEAM8, "update": "early"}, 30, 5)}.items():
    add(Experiment(name, "parser", "parse", "configs/parser_wsj.cfg", "wsj", label,
                   {**component(PARSER, **settings), **parser_budget(epochs, patience, WSJ_EPOCH)},
                   model="model-best", evaluate=("--gold-tags",),
                   quick={} if name == "parser_wsj_d1" else None))
add(Experiment("spacy_parser", "parser", "parse", "configs/baseline_parser_ewt.cfg", "ewt",
               "spaCy's parser (arc-eager, CNN tok2vec, efficiency), words only",
               {"training.max_epochs": 12, "training.patience": 1600}, model="model-best",
               curves=False, groups=("raw-parser",)))

# --- the one engine: learners each component could not use before ------------------
for k in (1, 2, 4, 8):
    for update in ("early", "max_violation", "standard"):
        add(Experiment(f"tagger_beam{k}_{update}", "engine", "tag", "configs/tagger_ewt.cfg", "ewt",
                       f"lookahead_tagger, beam {k}, {update} update",
                       component(TAGGER, search="beam", beam_width=k, update=update),
                       model="model-best"))
add(Experiment("chunker_beam8_max_violation", "engine", "chunk", "configs/chunker_conll2000.cfg",
               "conll2000", "lookahead_chunker, beam 8, max-violation",
               component(CHUNKER, search="beam", beam_width=8, update="max_violation")),
    Experiment("ner_rtl_beam8_max_violation", "engine", "ner", "configs/ner_jnlpba.cfg", "jnlpba",
               "lookahead_ner, right-to-left, beam 8, max-violation",
               component(NER, direction="rtl", search="beam", beam_width=8, update="max_violation")))

for name, update in (("parser_ewt_sapo", "max_violation"), ("parser_ewt_sapo_early", "early")):
    add(Experiment(name, "engine", "parse", "configs/parser_ewt.cfg", "ewt",
                   f"SAPO, n = 5 of a beam k=8, {update.replace('_', '-')} prefixes",
                   {**component(PARSER, learner="sapo", search="beam", beam_width=8, update=update),
                    **parser_budget(30, 5)}, model="model-best", evaluate=("--gold-tags",)))

# --- FR phrase recognisers (Carreras et al. 2005) ----------------------------------
# Clauses: up to 30 epochs on wsj_clauses train, one evaluation per epoch on dev
# (82 steps; an epoch is 83-84), model-best by dev F1; each evaluation also logs
# the filtering layer (spans_clauses_candidates, _candidates_recall, _f_bound:
# the paper's Figure 5). Chunks: CoNLL-2000 has no dev set, so the held-out
# last tenth of the training file selects model-best (194 steps an epoch).
add(Experiment("clauses_fr", "phrases", "clauses", "configs/clauses_wsj.cfg", "wsj_clauses",
               "fr_clause_finder, FR-Perceptron (recognition feedback)",
               {"training.max_epochs": 30, "training.eval_frequency": 82}, quick={},
               model="model-best"),
    Experiment("clauses_co", "phrases", "clauses", "configs/clauses_wsj.cfg", "wsj_clauses",
               "fr_clause_finder, CO-VP (classification feedback)",
               {"training.max_epochs": 30, "training.eval_frequency": 82,
                "components.clauses.feedback": "classification"}, model="model-best"),
    Experiment("fr_chunker", "phrases", "fr_chunk", "configs/fr_chunker_conll2000.cfg", "conll2000",
               "fr_chunker, FR-Perceptron",
               {"training.max_epochs": 10, "training.eval_frequency": 193},
               quick={"training.eval_frequency": 20}, model="model-best", dev_is_train=True))

# --- what the installable pipelines are assembled from (benchmarks/package.py) ----
add(Experiment("tagger_conll2000", "package", "tag", "configs/tagger_conll2000.cfg", "conll2000",
               "lookahead_tagger on CoNLL-2000's POS column (en_lookahead_chunks)", quick={},
               curves=False),
    # ... its twin: the same budget without the last tenth, which fits the
    # temperature of the shipped tagger's probabilities there (package.py)
    Experiment("tagger_conll2000_heldout", "package", "tag", "configs/tagger_conll2000.cfg",
               "conll2000", "lookahead_tagger on CoNLL-2000's POS column, without its last tenth "
               "(the twin that calibrates tagger_conll2000)", curves=False, dev_is_train=True))


# --- speed: which models are timed together (the first one is the reference) -----
@dataclass(frozen=True)
class Speed:
    name: str                 # metrics/[quick/]NAME.json
    group: str                # the results section it belongs to
    task: str
    data: str
    models: Tuple[str, ...]   # [KEY=]EXPERIMENT[@setting=value,...]; the first is the reference
    repeats: int = 0          # 0: the workflow's
    pairs: int = 0            # > 0: also timed interleaved, this many rounds (speed.py --pairs)
    limit: int = 0            # time the first N docs only
    quick: bool = True        # also timed at the quick scale (the models trained there)


SPEEDS: Dict[str, Speed] = {s.name: s for s in (
    Speed("tagger_speed", "tagging", "tag", "ewt",
          ("spacy_tagger", "tagger_d0", "tagger_d1", "tagger_d2", "crf_tagger", "tagger_sapo")),
    Speed("chunk_speed", "spans", "chunk", "conll2000",
          ("spacy_ner_conll2000", "crf_conll2000", "chunker_d0", "chunker_d1", "chunker_d2",
           "chunker_sapo", "chunker_d1_lexicon_full", "chunker_d1_biluo_full",
           "chunker_d1_biluo_lexicon_full", "chunker_d1_biluo_lexicon_koo_near_full")),
    Speed("ner_speed", "spans", "ner", "jnlpba",
          ("spacy_ner_jnlpba", "crf_jnlpba", "ner_rtl_d0", "ner_rtl_d1", "ner_rtl_d2", "ner_ltr_d0",
           "ner_ltr_d1", "ner_ltr_d2", "ner_rtl_sapo", "ner_rtl_d1_lexicon_full",
           "ner_rtl_d1_biluo_pos_full", "ner_rtl_d1_biluo_pos_affixes_full")),
    # the same component with and without the templates that read the lexicon
    Speed("lexicon_speed_tag", "tagging", "tag", "ewt",
          ("tagger_d1", "tagger_d1_lexicon", "tagger_d1_context_lexicon", "tagger_d1_lexicon_koo_bits"),
          pairs=11, quick=False),
    # the NER with and without the neighbours' affixes (both read POS tags)
    Speed("affixes_speed_ner", "spans", "ner", "jnlpba_tagged",
          ("ner_rtl_d1_biluo_pos", "ner_rtl_d1_biluo_pos_affixes"), pairs=11, quick=False),
    Speed("lexicon_speed_chunk", "spans", "chunk", "conll2000",
          ("chunker_d1_heldout", "chunker_d1_lexicon", "chunker_d1_lexicon_affixes_conjunctions",
           "chunker_d1_biluo_affixes_conjunctions", "chunker_d1_lexicon_biluo",
           "chunker_d1_biluo_only", "chunker_d1_lexicon_biluo_koo_bits",
           "chunker_d1_lexicon_biluo_near", "chunker_d1_lexicon_biluo_koo_near"),
          pairs=11, quick=False),
    # the two-stage NER against the shipped single-stage one (both behind the tagger)
    Speed("stacked_speed_ner", "spans", "ner", "jnlpba",
          ("ner_rtl_d1_biluo_pos_affixes_full", "ner_rtl_d1_stacked_ltr_full"), pairs=11,
          quick=False),
    Speed("lexicon_speed_ner", "spans", "ner", "jnlpba",
          ("ner_rtl_d1_heldout", "ner_rtl_d1_lexicon", "ner_rtl_d1_lexicon_biluo"), pairs=11,
          quick=False),
    Speed("sapo_speed_tag", "sapo", "tag", "ewt", ("tagger_d1", "tagger_sapo"), pairs=11),
    Speed("sapo_speed_chunk", "sapo", "chunk", "conll2000", ("chunker_d1", "chunker_sapo"), pairs=11),
    Speed("sapo_speed_ner", "sapo", "ner", "jnlpba", ("ner_rtl_d1", "ner_rtl_sapo"), pairs=11),
    Speed("parser_speed", "parser", "parse", "ewt",
          ("spacy_parser", "parser_greedy=parser_ewt_greedy", "parser_d1=parser_depth_d1",
           "parser_beam8=parser_ewt_beam8_max_violation")),
    Speed("raw_parser_speed", "raw-parser", "pipeline", "ewt",
          ("spacy_parser", "greedy=raw_parser/jk_greedy", "beam8=raw_parser/jk_b8_early",
           "beam8_rich=raw_parser/jk_rich_b8_early", "beam8_rich_alt=raw_parser/jkalt_rich_b8_early",
           "beam8_rich_alt_joint=pipeline_ewt_beam8", "beam8_predict10_rich_alt_joint=pipeline_ewt",
           "beam8_predict10_rich_alt_joint_2_threads=pipeline_ewt@n_threads=2"), pairs=5),
    Speed("depth_speed_tag", "depth", "tag", "ewt",
          ("spacy_tagger", "tagger_d0=tagger_d1@depth=0", "tagger_d1",
           "tagger_d2=tagger_d1@depth=2", "tagger_d3=tagger_d1@depth=3"), quick=False),
    Speed("depth_speed_chunk", "depth", "chunk", "conll2000",
          ("spacy_ner_conll2000", "chunker_d0=chunker_d1@depth=0", "chunker_d1",
           "chunker_d2=chunker_d1@depth=2", "chunker_d3=chunker_d1@depth=3"), quick=False),
    Speed("depth_speed_ner", "depth", "ner", "jnlpba",
          ("spacy_ner_jnlpba", "ner_rtl_d0=ner_rtl_d1@depth=0", "ner_rtl_d1",
           "ner_rtl_d2=ner_rtl_d1@depth=2", "ner_rtl_d3=ner_rtl_d1@depth=3"), quick=False),
    Speed("depth_speed_parse", "depth", "parse", "ewt",
          ("spacy_parser", "parser_d0=parser_depth_d1@depth=0",
           "parser_d1=parser_depth_d1", "parser_d2=parser_depth_d1@depth=2"), repeats=1, quick=False),
    Speed("depth_speed_parse_d3", "depth", "parse", "ewt",
          ("spacy_parser", "parser_d1=parser_depth_d1", "parser_d2=parser_depth_d1@depth=2",
           "parser_d3=parser_depth_d1@depth=3"), repeats=1, limit=100, quick=False),
    Speed("threads_tag", "threads", "tag", "ewt",
          ("tagger_t1=tagger_d1", "tagger_t2=tagger_d1@n_threads=2",
           "tagger_p2=tagger_d1@n_process=2"), quick=False),
    Speed("threads_chunk", "threads", "chunk", "conll2000",
          ("chunker_t1=chunker_d1", "chunker_t2=chunker_d1@n_threads=2",
           "chunker_p2=chunker_d1@n_process=2"), quick=False),
    Speed("threads_ner", "threads", "ner", "jnlpba",
          ("ner_t1=ner_rtl_d1", "ner_t2=ner_rtl_d1@n_threads=2", "ner_p2=ner_rtl_d1@n_process=2"), quick=False),
    Speed("threads_parse", "threads", "parse", "ewt",
          ("parser_t1=parser_depth_d1", "parser_t2=parser_depth_d1@n_threads=2",
           "parser_p2=parser_depth_d1@n_process=2"), quick=False),
    Speed("clauses_speed", "phrases", "clauses", "wsj_clauses", ("clauses_fr", "clauses_co")),
    Speed("fr_chunker_speed", "phrases", "chunk", "conll2000", ("chunker_d1", "fr_chunker")),
)}


# --- the steps of a project command that are not training runs -----------------
@dataclass(frozen=True)
class Step:
    group: str
    when: str                 # before | after the group's runs (after: also after its speed)
    command: Tuple[str, ...]  # {metrics} {training} {plots} {scale}: the scale's directories
    scales: Tuple[str, ...] = SCALES


def _calibration(name: str, task: str, test: str) -> Tuple[str, ...]:
    return (PY, "-m", "benchmarks.calibration", f"{{training}}/{name}/model-best", test, "--task", task,
            "--output", f"{{metrics}}/calibration_{name}.json", "--plot",
            f"{{plots}}/reliability_{task}.png")


# the components benchmarks.gil times (the `scaling` stage)
GIL_ROWS = ("tagger_d1", "ner_rtl_d1", "chunker_d1", "parser_ewt_greedy", "parser_ewt_beam8_early", "fr_chunker",
            "clauses_fr")
STEPS: Tuple[Step, ...] = (
    Step("tagging", "after", (PY, "-m", "benchmarks.train_speed", "corpus/ewt/train.spacy", "--depths",
                              "0", "1", "2", "--output", "{metrics}/tagger_train_speed.json"),
         ("full",)),
    Step("tagging", "after", (PY, "-m", "benchmarks.train_speed", "corpus/ewt/train.spacy", "--limit",
                              "1500", "--depths", "0", "1", "--output",
                              "{metrics}/tagger_train_speed.json"), ("quick",)),
    Step("sapo", "after", _calibration("tagger_sapo", "tag", "corpus/ewt/test.spacy")),
    Step("sapo", "after", _calibration("chunker_sapo", "chunk", "corpus/conll2000/test.spacy")),
    Step("sapo", "after", _calibration("ner_rtl_sapo", "ner", "corpus/jnlpba/test.spacy")),
    Step("sapo-ablations", "after", (PY, "-m", "benchmarks.sapo_ablations", "report", "--output",
                                     "{metrics}/sapo_ablations.md", "--plot",
                                     "{plots}/sapo_ablations.png"), ("full",)),
    # JNLPBA with the EWT tagger's POS tags (ner_rtl_d1_lexicon_pos)
    Step("spans", "before", (PY, "-m", "benchmarks.tag_columns",
                             "{training}/tagger_d1_context_lexicon/model-best",
                             "assets/jnlpba/train.iob2", JNLPBA_TAGGED), ("full",)),
    # ... and its test set, for timing those rows (affixes_speed_ner)
    Step("spans", "before", (PY, "-m", "benchmarks.tag_columns",
                             "{training}/tagger_d1_context_lexicon/model-best",
                             "assets/jnlpba/test.iob2", "corpus/jnlpba/test.tagged.iob2"),
         ("full",)),
    Step("spans", "before", (PY, "-m", "benchmarks.columns_to_docbin", "chunk",
                             "corpus/jnlpba/test.tagged.iob2", "corpus/jnlpba/test.tagged.spacy"),
         ("full",)),
    # the two-stage NER's corpora (gold entities also in doc.spans["ner_stage1"]: the
    # first stage's gold) and the first stage's jackknifed labels: of the nine
    # tenths (held-out rows) and of all of train (ner_rtl_d1_stacked_ltr_full)
    *(Step("spans", "before", (PY, "-m", "benchmarks.columns_to_docbin", "ner", src, dest,
                               "--spans-key", "ner_stage1", *split), ("full",))
      for src, dest, split in (
          ("assets/jnlpba/train.iob2", "corpus/jnlpba/train.stage1.spacy", ()),
          ("assets/jnlpba/test.iob2", "corpus/jnlpba/test.stage1.spacy", ()),
          ("assets/jnlpba/train.iob2", "corpus/jnlpba/train.stage1_rest.spacy",
           ("--held-out", "0.1", "--part", "rest")),
          ("assets/jnlpba/train.iob2", "corpus/jnlpba/train.stage1_held_out.spacy",
           ("--held-out", "0.1", "--part", "held_out")))),
    *(Step("spans", "before", (PY, "-m", "spacy_lookahead", "jackknife", "configs/ner_jnlpba_stage1.cfg",
                               train, out, "--folds", "10", "--jobs", "2", "--model", "last",
                               "--paths.dev", dev, *extra), ("full",))
      for train, out, dev, *extra in (
          ("corpus/jnlpba/train.stage1_rest.spacy", "corpus/jnlpba/train.stage1_rest.jackknifed.spacy",
           "corpus/jnlpba/train.stage1_held_out.spacy", "--components.ner_stage1.direction", "rtl"),
          ("corpus/jnlpba/train.stage1_rest.spacy",
           "corpus/jnlpba/train.stage1_rest_ltr.jackknifed.spacy",
           "corpus/jnlpba/train.stage1_held_out.spacy", "--components.ner_stage1.direction", "ltr"),
          ("corpus/jnlpba/train.stage1.spacy", "corpus/jnlpba/train.jackknifed_stage1_ltr.spacy",
           "corpus/jnlpba/test.stage1.spacy", "--components.ner_stage1.direction", "ltr"))),
    # jackknifed tags for the parser's training data (10 folds of configs/tagger_ewt.cfg)
    Step("raw-parser", "before", (PY, "-m", "spacy_lookahead", "jackknife", "configs/tagger_ewt.cfg",
                                  "corpus/ewt/train.spacy", "corpus/ewt/train.jackknifed.spacy",
                                  "--folds", "10", "--jobs", "2", "--paths.dev", "corpus/ewt/dev.spacy",
                                  "--components.lookahead_tagger.alternatives", "true"), ("full",)),
    # ... and with the tagger's lexicon templates (raw_parser/*_lexicon)
    Step("raw-parser", "before", (PY, "-m", "spacy_lookahead", "jackknife", "configs/tagger_ewt.cfg",
                                  "corpus/ewt/train.spacy", LEXICON_JACKKNIFE, "--folds", "10",
                                  "--jobs", "2", "--paths.dev", "corpus/ewt/dev.spacy",
                                  "--components.lookahead_tagger.alternatives", "true",
                                  "--components.lookahead_tagger.features", json.dumps(TAGGER_BEST),
                                  # (braces doubled: run.py formats each part)
                                  "--initialize.lookups", json.dumps(lexicon()["initialize.lookups"])
                                  .replace("{", "{{").replace("}", "}}")),
         ("full",)),
    Step("raw-parser", "after", (PY, "-m", "benchmarks.raw_parser", "--output",
                                 "{metrics}/raw_parser.md"), ("full",)),
    Step("scaling", "after", (PY, "-m", "benchmarks.scaling", "training/tagger_d1/model-best",
                              "corpus/ewt/train.spacy", "--n-process", "1", "2", "--n-threads", "1",
                              "2", "--copies", "2", "--output", "metrics/scaling.json"), ("full",)),
    Step("scaling", "after", (PY, "-m", "benchmarks.scaling", "training/quick/tagger_d1/model-best",
                              "corpus/ewt/test.spacy", "--n-process", "1", "2", "--n-threads", "1",
                              "2", "--copies", "1", "--output", "metrics/quick/scaling.json"),
         ("quick",)),
    # the GIL-held share of each component's pipe() and its 1-2 thread scaling (issue 38);
    # the full scale also times the shipped pipeline's tagger and joint parser. Each row's
    # own model: model-last for the fixed budgets (chunker_d1, ner_rtl_d1: their "dev" is test).
    # A pass of a second (gil.py's default) at full scale; a quarter at quick (61 s -> 71 s)
    *(Step("scaling", "after", (PY, "-m", "benchmarks.gil",
                                *(f"{{training}}/{name}/{EXPERIMENTS[name].model}" for name in GIL_ROWS + shipped),
                                "--data", "assets", "--min-seconds", seconds, "--output", "{metrics}/gil.json"),
           (scale,))
      for scale, shipped, seconds in (("full", ("pipeline_ewt",), "1.0"), ("quick", (), "0.25"))),
    # ... and on fresh text: each pass over a training split once, the word cache emptied
    Step("scaling", "after", (PY, "-m", "benchmarks.gil",
                              *(f"{{training}}/{name}/{EXPERIMENTS[name].model}" for name in GIL_ROWS),
                              "--data", "assets", "--split", "train", "--cold", "--output",
                              "{metrics}/gil_cold.json"), ("full",)),
    Step("scaling", "after", (PY, "-m", "benchmarks.scale_bench", "--data", "assets", "--sizes", "1000",
                              "10000", "100000", "--timeout", "600", "--output", "metrics/scale.json"),
         ("full",)),
    Step("distributed", "after", (
        PY, "-m", "benchmarks.distributed_bench", "annotate",
        "tagger=training/tagger_d1/model-best=corpus/ewt/test.spacy",
        "ner=training/ner_rtl_d1/model-last=corpus/jnlpba/test.spacy", "--workers", "1", "2",
        "--threads", "2", "--repeat", "20", "--output", "metrics/distributed_annotate.json"), ("full",)),
    # IPM: every setting trains 16 rounds (epochs; more shards converge slower) and selects on dev
    # (EWT dev; CoNLL-2000: the held-out tenth of train), test scored once
    Step("distributed", "after", (
        PY, "-m", "benchmarks.distributed_bench", "train",
        "pos=configs/tagger_ewt.cfg=tag:corpus/ewt/test.spacy",
        "pos:--paths.train=corpus/ewt/train.spacy", "pos:--paths.dev=corpus/ewt/dev.spacy",
        "--shards", "2", "4", "8", "--oneshot", "2", "8", "--rounds", "16",
        "--timing-repeats", "3", "--output",
        "metrics/distributed_train_pos.json"), ("full",)),
    Step("distributed", "after", (  # does IPM on 8 shards reach serial accuracy with more rounds?
        PY, "-m", "benchmarks.distributed_bench", "train",
        "pos=configs/tagger_ewt.cfg=tag:corpus/ewt/test.spacy",
        "pos:--paths.train=corpus/ewt/train.spacy", "pos:--paths.dev=corpus/ewt/dev.spacy",
        "--shards", "8", "--oneshot", "--rounds", "32", "--output",
        "metrics/distributed_train_pos_long.json"), ("full",)),
    Step("distributed", "after", (
        PY, "-m", "benchmarks.distributed_bench", "train",
        "chunk=configs/chunker_conll2000.cfg=chunk:assets/conll2000/test.txt",
        "chunk:--paths.train=assets/conll2000/train.txt", "chunk:--paths.dev=assets/conll2000/train.txt",
        *(f"chunk:--{k}={v}" for k, v in HELD_OUT.items()),
        "--shards", "2", "4", "8", "--oneshot", "2", "8", "--rounds", "16",
        "--timing-repeats", "3", "--output",
        "metrics/distributed_train_chunk.json"), ("full",)),
    Step("distributed", "after", (  # the same with more rounds for 4 and 8 shards
        PY, "-m", "benchmarks.distributed_bench", "train",
        "chunk=configs/chunker_conll2000.cfg=chunk:assets/conll2000/test.txt",
        "chunk:--paths.train=assets/conll2000/train.txt", "chunk:--paths.dev=assets/conll2000/train.txt",
        *(f"chunk:--{k}={v}" for k, v in HELD_OUT.items()),
        "--shards", "4", "8", "--oneshot", "--rounds", "32", "--output",
        "metrics/distributed_train_chunk_long.json"), ("full",)),
    Step("package", "after", (PY, "-m", "benchmarks.package", "{scale}", "--output", "{packages}")),
    # full: the committed benchmarks/results.md and benchmarks/plots/ from the committed
    # metrics/; quick: benchmarks/quick/ from metrics/quick/ (both ignored by git). First
    # the settings and dev scores of the models in training/ (if any) into metrics/.
    Step("report", "before", (PY, "-m", "benchmarks.run", "models", "--scale", "{scale}")),
    Step("report", "after", (PY, "-m", "benchmarks.plots", "--metrics", "{metrics}", "--output", "{plots}")),
    Step("report", "after", (PY, "-m", "benchmarks.report", "--metrics", "{metrics}", "--scale", "{scale}",
                             "--output", "{results}")),
)
GROUPS = ("tagging", "spans", "sapo", "sapo-ablations", "parser", "raw-parser", "engine", "phrases",
          "speed", "scaling", "distributed", "package", "report")


# --- paths and commands -----------------------------------------------------------
def training_dir(name: str, scale: str) -> str:
    return f"training/{name}" if scale == "full" else f"training/quick/{name}"


def metrics_dir(scale: str) -> str:
    return "metrics" if scale == "full" else "metrics/quick"


def in_scale(e: Experiment, scale: str) -> bool:
    return scale == "full" or e.quick is not None


def group(name: str, scale: str = "full") -> List[Experiment]:
    """The experiments trained by a project command, or shown in a report table."""
    return [e for e in EXPERIMENTS.values() if (e.group == name or name in e.groups)
            and in_scale(e, scale)]


def _value(v: object) -> str:
    return "null" if v is None else v if isinstance(v, str) else json.dumps(v)


def train_command(e: Experiment, scale: str = "full") -> List[str]:
    out = training_dir(e.name, scale)
    if e.trainer == "crf":  # config = the CRF's task; settings = its options
        d = DATA[e.data]
        opts = {**e.settings, **((e.quick or {}) if scale == "quick" else {})}
        cmd = [PY, "-m", "benchmarks.crf_baseline", e.config, d.train, out]
        for k, v in opts.items():
            cmd += [f"--{k}", str(v)]
        if scale == "quick":
            cmd += ["--limit", str(d.quick["corpora.train.limit"])]
        return cmd + ["--metrics", f"{metrics_dir(scale)}/train_{e.name}.json"]
    cmd = [PY, "-m", "spacy", "train", e.config, "--output", out, "--gpu-id", "-1"]
    if e.task in ("clauses", "fr_chunk"):
        cmd += ["--code", "benchmarks/fr_components.py"]
    for k, v in e.overrides(scale).items():
        cmd += [f"--{k}", _value(v)]
    if e.curves:
        cmd += ["--paths.curves", f"{metrics_dir(scale)}/curves/{e.name}.jsonl"]
    return cmd


def model_path(spec: str, scale: str) -> str:
    """An experiment name, with @settings after it, as a model directory spec."""
    name, _, at = spec.partition("@")
    e = EXPERIMENTS[name]
    path = f"{training_dir(name, scale)}/{e.model}"
    return f"{path}@{at}" if at else path


def metrics_file(name: str, scale: str) -> str:
    return f"{metrics_dir(scale)}/{name}.json"


def evaluation(e: Experiment, scale: str = "full") -> List[str]:
    """The test-set evaluation of a trained experiment (scored once)."""
    model, out, test = model_path(e.name, scale), metrics_file(e.name, scale), DATA[e.data].test
    code = ["--code", "benchmarks/crf_spans.py"] if e.trainer == "crf" else []
    if e.task == "tag":
        return [PY, "-m", "spacy", "benchmark", "accuracy", model, test, "--output", out,
                "--gpu-id", "-1", "--gold-preproc", *code]
    if e.task in ("chunk", "ner"):
        return [PY, "-m", "benchmarks.evaluate", model, test, "--task", e.task, "--output", out,
                "--predictions", f"{training_dir(e.name, scale)}/test_predictions.txt", *code,
                *e.evaluate]
    if e.task in ("parse", "pipeline"):
        return [PY, "-m", "benchmarks.parser_eval", model, test, out, *e.evaluate]
    if e.task in ("clauses", "fr_chunk"):
        return [PY, "-m", "benchmarks.fr_eval", "clauses" if e.task == "clauses" else "chunker",
                model, test, "--output", out]
    raise ValueError(e.task)


def speed_models(s: Speed) -> List[Tuple[str, str]]:
    """(key in the speed JSON, experiment spec) per timed model."""
    out = []
    for m in s.models:
        key, _, spec = m.partition("=") if "=" in m.split("@")[0] else ("", "", m)
        out.append((key or spec.split("@")[0].replace("/", "_"), spec))
    return out


def speed_command(s: Speed, scale: str = "full", repeats: int = 3, batch_size: int = 1000,
                  limit: int = 0) -> Optional[List[str]]:
    """The speed run of the models trained at this scale, or None when the
    reference (the first) or every other model is not."""
    models = [(k, spec) for k, spec in speed_models(s)
              if in_scale(EXPERIMENTS[spec.split("@")[0]], scale)]
    if scale == "quick" and not s.quick or not models or models[0] != speed_models(s)[0]:
        return None
    cmd = [PY, "-m", "benchmarks.speed", DATA[s.data].test,
           *[f"{key}={model_path(spec, scale)}" for key, spec in models],
           "--task", s.task, "--reference", models[0][0], "--batch-size", str(batch_size),
           "--repeats", str(s.repeats or repeats), "--output", metrics_file(s.name, scale)]
    if any(EXPERIMENTS[spec.split("@")[0]].trainer == "crf" for _, spec in models):
        cmd += ["--code", "benchmarks/crf_spans.py"]
    if s.pairs:
        cmd += ["--pairs", str(s.pairs)]
    limit = s.limit or limit
    return cmd + (["--limit", str(limit)] if limit else [])
