"""Feature templates as data: what a component's `features` setting says.

A template is a conjunction of atoms, each an attribute of the token at an
offset from the current one, written `name[offset]` and joined by spaces:
"lower[-1] lower[0]" is the bigram of the previous and the current word's
lower-case forms. Its features are hashed in nogil code
(core/features.pxd, extract_templates); a template whose atom is absent at
a token of the doc (a 3-letter word's `pre4`, a flag that is off, a word
without a cluster) gives no feature there. Outside the doc an atom is a
sentinel (before / after), so the templates see the edges.

The atoms:

- the word's own, from its text: `orth`, `lower`, `pre1`..`pre4`,
  `suf1`..`suf4` (prefixes / suffixes of 1-4 characters), `shape` (X / x / d,
  runs of over 2 cut), `has_digit`, `has_upper`, `has_hyphen`, `all_caps`,
  `init_cap`, and `substrings` (every substring of up to 9 characters of
  the current word, one feature each; alone, at offset 0: Tsuruoka et al.
  2009's bio-NER features);
- spaCy's lexeme attributes, in spaCy's names: `NORM`, `SHAPE`, `PREFIX`,
  `SUFFIX`, and the flags `IS_ALPHA`, `IS_DIGIT`, `IS_PUNCT`, `LIKE_NUM`,
  ... (`FLAGS` below);
- knowledge from unlabelled text, from the vocab's lookups tables
  (`[initialize.lookups]`, see spacy_lookahead.lexicon): `cluster` (the
  word's Brown cluster), `clusterK` (the first K bits of its path, K 1-62:
  Koo et al. 2008 use 4 and 6 with the full path), `prob` (the bin
  floor(-log p) of the word's unigram log probability);
- from the component's training data: `ambiguity`, the word's ambiguity
  class (Gimenez and Marquez 2004; a tag dictionary): the labels it took in
  training where it was seen at least 3 times (sequence.CLASS_MIN_COUNT);
- inputs: `tag` (token.tag_), `chunk` (the B-/I-/O chunk label), where the
  component reads them;
- `bias`, the constant.

Beyond the window, the rest of the document (Ratinov and Roth 2009's
context aggregation): an atom at `doc-1`, `doc+0`, `doc+1`, ... is read at
that offset from another occurrence of the current word (its lower-case
form) in the doc, and the template gives one feature per occurrence, all
under one id, so that they pool: "lower[doc-1]" is the word before each
other occurrence, "init_cap[doc+0]" whether it is capitalised there. The
occurrences read are the two before the token and the two after it
nearest to it (core/features.pxd, MAX_OCCURRENCES). A doc is what the
component is given: the readers' `n_sents` joins sentences into one.

The parser's templates read stack and buffer positions instead of offsets
(PARSER_SLOTS): `s0`, `s1`, `s2` (the stack from its top), `q0`, `q1`, `q2`
(the buffer from its front), `s0l`, `s0r`, `s1l`, `s1r` (the leftmost and
rightmost dependents of s0 and s1) and `s0l2`, `s0r2`, `s1l2`, `s1r2` (the
second leftmost / rightmost), e.g. "cluster6[s0] tag[q0]"; an empty
position is a sentinel. They also read the tagger's alternative tag
(`tag_alt`) and the state (PARSER_STATE_ATOMS): the tag the parse chose
(`ctag`), arc labels (`label`, `lset`, `rset`), valency (`nl`, `nr`),
`dist`, `depth` and `qempty`. Its presets, "preset:base" and
"preset:rich", are lists of such templates (systems/parser_templates.py);
templates come on top.

A list of templates may name a preset, "preset:pos", "preset:chunk" or
"preset:ner": the component's templates before templates were data, in
their order, hashed as they were (so their weights are the same bits). Any
other template is hashed under an id of its own text.
"""
import re
from typing import Dict, Iterable, List, Optional, Sequence, Tuple, Union

import numpy
from spacy import attrs as spacy_attrs

from ..core.features import (A_COLUMNS, CONSTANT_COLUMN, MAX_ATOMS_PER_TEMPLATE,
                             MAX_DOC_OCCURRENCES, MAX_SUBSTRINGS, string_atoms)

# spaCy's boolean lexeme attributes, read as a bit of the lexeme's flags
FLAGS = ("IS_ALPHA", "IS_ASCII", "IS_DIGIT", "IS_LOWER", "IS_PUNCT", "IS_SPACE", "IS_TITLE",
         "IS_UPPER", "LIKE_URL", "LIKE_NUM", "LIKE_EMAIL", "IS_STOP", "IS_BRACKET", "IS_QUOTE",
         "IS_LEFT_PUNCT", "IS_RIGHT_PUNCT", "IS_CURRENCY")
FLAG_BITS = {name: int(getattr(spacy_attrs, name)) for name in FLAGS}
# atoms a tagging system reads (A_COLUMNS less what only the parser reads)
COLUMNS = {name: column for name, column in A_COLUMNS.items() if name not in ("flags", "tag_alt")}
# atoms that need the vocab's lookups tables
CLUSTER_ATOM = re.compile(r"^cluster(\d+)$")
MAX_CLUSTER_BITS = 62
MAX_OFFSET = 8
SUBSTRINGS = "substrings"
BIAS = "bias"
PRESET = "preset:"

_ATOM = re.compile(r"^([A-Za-z_]+[0-9]*)\[([+-]?\d+|doc[+-]\d+|[a-z][a-z0-9]*)\]$")
_DOC_OFFSET = re.compile(r"^doc([+-]\d+)$")
DOC = "doc"
# the parser's positions, in the order its tokens array holds them: the
# stack from its top, the buffer from its front, the leftmost and rightmost
# dependents of s0 and s1, then their second leftmost / rightmost
PARSER_SLOTS = ("s0", "s1", "s2", "q0", "q1", "q2", "s0l", "s0r", "s1l", "s1r",
                "s0l2", "s0r2", "s1l2", "s1r2")
PARSER_PRESETS = ("base", "rich")
# The parser's atoms of the state, after the constant column, in the order of
# systems/parse_features.pyx's enum; each with the positions it is read at.
# `ctag`: the tag the parse chose for the word (joint tagging: the tagger's
# or its alternative; the buffer's and without joint tagging: the tagger's);
# `label`: the arc label of a dependent; `lset` / `rset`: the labels of a
# stack word's left / right dependents (a 64-bit set); `nl` / `nr`: its left /
# right valency; `dist`: the distance from s1 to s0 (1-5, more is 5);
# `depth`: the stack's depth (0-3, more is 3); `qempty`: whether the buffer
# is empty. (`tag` is the tagger's tag everywhere.)
_STACK_AND_DEPENDENTS = ("s0", "s1", "s2", "s0l", "s0r", "s1l", "s1r", "s0l2", "s0r2", "s1l2",
                         "s1r2")
PARSER_STATE_ATOMS = {
    "ctag": PARSER_SLOTS, "label": ("s0l", "s0r", "s1l", "s1r"), "lset": ("s0", "s1"),
    "rset": ("s0", "s1"), "nl": ("s0", "s1"), "nr": ("s0", "s1"), "dist": ("s1",),
    "depth": ("s0",), "qempty": ("q0",),
}
PARSER_STATE_COLUMNS = {name: CONSTANT_COLUMN + 1 + k for k, name in enumerate(PARSER_STATE_ATOMS)}
# atoms whose value differs between the label siblings LEFT-ARC(l) /
# RIGHT-ARC(l): a template reading one is a label template (see
# parser_templates.py)
PARSER_LABEL_ATOMS = ("label", "lset", "rset")


def _window(name: str, offsets: Iterable[int]) -> List[str]:
    return [f"{name}[{k}]" for k in offsets]


def _ngrams(name: str, n: int, first: int, count: int) -> List[str]:
    return [" ".join(f"{name}[{first + k + j}]" for j in range(n)) for k in range(count)]


def _affix_shape() -> List[str]:
    out = []
    for k in range(1, 5):
        out += [f"pre{k}[0]", f"suf{k}[0]"]
    return out + ["shape[0]", "has_digit[0]", "has_upper[0]", "has_hyphen[0]", "all_caps[0]",
                  "init_cap[0]"]


# The presets, in the order the systems emitted them, with the ids they
# were hashed under (the template enum of systems/tagging.pyx before
# templates were data): T_BIAS = 1, T_W0 = 2, ... T_SUBSTRING = 52.
_POS = ([BIAS, "orth[0]", "lower[0]", "lower[-1]", "lower[1]", "lower[-2]", "lower[2]",
         "lower[-1] lower[0]", "lower[0] lower[1]"] + _affix_shape())
_CHUNK = ([BIAS] + _window("lower", range(-2, 3)) + _ngrams("lower", 2, -2, 4)
          + _window("tag", range(-2, 3)) + _ngrams("tag", 2, -2, 4) + _ngrams("tag", 3, -2, 3))
_NER = _CHUNK + _window("chunk", range(-2, 3)) + [f"{SUBSTRINGS}[0]", "orth[0]"] + _affix_shape()
PRESETS: Dict[str, List[str]] = {"pos": _POS, "chunk": _CHUNK, "ner": _NER}


def _legacy_ids() -> Dict[str, int]:
    ids = {BIAS: 1, "orth[0]": 2, "lower[0]": 3, "lower[-1]": 4, "lower[1]": 5, "lower[-2]": 6,
           "lower[2]": 7, "lower[-1] lower[0]": 8, "lower[0] lower[1]": 9}
    for k in range(4):
        ids[f"pre{k + 1}[0]"] = 10 + k
        ids[f"suf{k + 1}[0]"] = 14 + k
    for k, name in enumerate(["shape[0]", "has_digit[0]", "has_upper[0]", "has_hyphen[0]",
                              "all_caps[0]", "init_cap[0]"]):
        ids[name] = 18 + k
    # 24, 25: the label-history features (T_PREV1, T_PREV12), not templates
    # chunking's words at -2..+2 (26-30: not the tagger's lower[k], 4-7)
    groups = [(_window("lower", range(-2, 3)), 26), (_ngrams("lower", 2, -2, 4), 31),
              (_window("tag", range(-2, 3)), 35), (_ngrams("tag", 2, -2, 4), 40),
              (_ngrams("tag", 3, -2, 3), 44), (_window("chunk", range(-2, 3)), 47),
              ([f"{SUBSTRINGS}[0]"], 52)]
    chunk_ids = {}
    for names, first in groups:
        for k, name in enumerate(names):
            chunk_ids[name] = first + k
    return ids, chunk_ids


_TAGGER_IDS, _CHUNK_IDS = _legacy_ids()
# chunking's word unigrams had ids of their own; the other presets' templates
# one id wherever they occur
_PRESET_IDS = {"pos": _TAGGER_IDS, "chunk": {**_TAGGER_IDS, **_CHUNK_IDS},
               "ner": {**_TAGGER_IDS, **_CHUNK_IDS}}


class TemplateError(ValueError):
    """A feature template that does not parse; the message names it."""


def parse_template(template: str, slots: Optional[Sequence[str]] = None
                   ) -> List[Tuple[str, Union[int, str]]]:
    """[(atom name, offset)] of a template string, or [(atom name, slot)]
    where the system reads named positions (`slots`: the parser's);
    TemplateError names what is wrong."""
    if not isinstance(template, str) or not template.strip():
        raise TemplateError(f"{template!r} is not a template: write atoms as name[offset] "
                            "joined by spaces, e.g. \"lower[-1] lower[0]\"")
    parts = template.split()
    if parts == [BIAS]:
        return [(BIAS, 0 if slots is None else slots[0])]
    if len(parts) > MAX_ATOMS_PER_TEMPLATE:
        raise TemplateError(f"{template!r} conjoins {len(parts)} atoms; at most "
                            f"{MAX_ATOMS_PER_TEMPLATE}")
    out = []
    for part in parts:
        m = _ATOM.match(part)
        if m is None:
            raise TemplateError(f"{template!r}: {part!r} is not an atom: write name[offset], "
                                "e.g. lower[-1] or cluster6[0]")
        name, where = m.group(1), m.group(2)
        _column(template, name, parser=slots is not None)
        if slots is not None:
            if where not in slots:
                raise TemplateError(f"{template!r}: {where!r} is not a position; the parser's "
                                    f"are {', '.join(slots)}")
            if name in PARSER_STATE_ATOMS and where not in PARSER_STATE_ATOMS[name]:
                raise TemplateError(f"{template!r}: the parser reads {name} at "
                                    f"{', '.join(PARSER_STATE_ATOMS[name])}, not at {where}")
            out.append((name, where))
            continue
        doc = _DOC_OFFSET.match(where)
        if not doc and not re.match(r"^[+-]?\d+$", where):
            raise TemplateError(f"{template!r}: {where!r} is not an offset (an integer, e.g. "
                                "-1, or doc-1 from the word's other occurrences); stack and "
                                "buffer positions are the parser's")
        offset = int(doc.group(1) if doc else where)
        if abs(offset) > MAX_OFFSET:
            raise TemplateError(f"{template!r}: offset {offset} is beyond ±{MAX_OFFSET}")
        out.append((name, f"{DOC}{offset:+d}" if doc else offset))
    if slots is not None and any(name in (SUBSTRINGS, BIAS) for name, _ in out):
        raise TemplateError(f"{template!r}: the parser's templates read words and the "
                            f"state, not {SUBSTRINGS}; {BIAS} stands alone")
    if slots is not None and any(isinstance(where, str) and where.startswith(DOC)
                                 for _, where in out):
        raise TemplateError(f"{template!r}: the parser's templates read stack and buffer "
                            "positions, not doc offsets")
    if any(name == SUBSTRINGS for name, _ in out) and out != [(SUBSTRINGS, 0)]:
        raise TemplateError(f"{template!r}: {SUBSTRINGS} stands alone, at offset 0: "
                            f"\"{SUBSTRINGS}[0]\"")
    return out


def _column(template: str, name: str, parser: bool = False) -> Tuple[int, int, int]:
    """(column, bits, flag bit) of an atom name; parser: also the parser's
    own atoms (the tagger's alternative tag and the state's atoms)."""
    if name in COLUMNS:
        return COLUMNS[name], 0, -1
    if parser and name == "tag_alt":
        return A_COLUMNS["tag_alt"], 0, -1
    if parser and name in PARSER_STATE_COLUMNS:
        return PARSER_STATE_COLUMNS[name], 0, -1
    if name in FLAG_BITS:
        return A_COLUMNS["flags"], 0, FLAG_BITS[name]
    m = CLUSTER_ATOM.match(name)
    if m and 1 <= int(m.group(1)) <= MAX_CLUSTER_BITS:
        return COLUMNS["cluster"], int(m.group(1)), -1
    if name == SUBSTRINGS:
        return -1, 0, -1
    known = sorted(COLUMNS) + ["clusterK (K = 1..62)", SUBSTRINGS] + list(FLAGS)
    if parser:
        known += ["tag_alt", *PARSER_STATE_ATOMS]
    raise TemplateError(f"{template!r}: unknown atom {name!r}; the atoms are {', '.join(known)}")


def canonical(template: str, slots: Optional[Sequence[str]] = None) -> str:
    """The template's text, written one way: "lower[-1] lower[0]"."""
    return " ".join(BIAS if name == BIAS else f"{name}[{where}]"
                    for name, where in parse_template(template, slots))


def expand(features: Sequence[str], default_preset: str,
           slots: Optional[Sequence[str]] = None) -> List[Tuple[str, int]]:
    """[(canonical template, hash id)] of a `features` list: presets
    expanded in place; a template given twice is an error. slots: the
    parser's positions (its lists hold no preset: split_parser_features)."""
    if isinstance(features, str) or not isinstance(features, (list, tuple)):
        raise TemplateError(f"features must be a list of templates, got {features!r}: "
                            f"e.g. [\"{PRESET}{default_preset}\", \"cluster6[0]\"]")
    ids = _PRESET_IDS.get(default_preset, {})
    out, seen = [], set()
    for item in features:
        if isinstance(item, str) and item.startswith(PRESET):
            name = item[len(PRESET):]
            if name not in PRESETS:
                raise TemplateError(f"unknown preset {item!r}; the presets are "
                                    f"{', '.join(PRESET + p for p in PRESETS)}")
            ids = _PRESET_IDS[name]
            texts = PRESETS[name]
        else:
            texts = [canonical(item, slots)]
        for text in texts:
            if text in seen:
                raise TemplateError(f"the template {text!r} is given twice")
            seen.add(text)
            out.append((text, ids.get(text) or template_id(text)))
    return out


def template_id(text: str) -> int:
    """The hash seed of a template that is not a preset's: of its text."""
    return int(string_atoms([text])[0])  # murmurhash64 of the text, never 0


def split_parser_features(features: Union[str, Sequence[str]]) -> Tuple[str, List[str]]:
    """(the parser's preset, "base" or "rich"; its templates) of its
    `features` setting: "base" / "rich", or a list of at most one of
    "preset:base" / "preset:rich" (else base) and templates over
    PARSER_SLOTS."""
    if isinstance(features, str):
        if features not in PARSER_PRESETS:
            raise TemplateError(f"features must be one of {PARSER_PRESETS} or a list of "
                                f"templates, got {features!r}")
        return features, []
    if not isinstance(features, (list, tuple)):
        raise TemplateError(f"features must be \"base\", \"rich\" or a list, got {features!r}")
    presets = [f for f in features if isinstance(f, str) and f.startswith(PRESET)]
    names = [p[len(PRESET):] for p in presets]
    if len(presets) > 1 or any(n not in PARSER_PRESETS for n in names):
        raise TemplateError(f"the parser takes one preset of "
                            f"{', '.join(PRESET + p for p in PARSER_PRESETS)}, got {presets}")
    templates = [f for f in features if f not in presets]
    expand(templates, "", PARSER_SLOTS)  # raises for a bad one
    return (names[0] if names else "base"), templates


def uses_lexicon(templates: Iterable[str], slots: Optional[Sequence[str]] = None
                 ) -> Dict[str, bool]:
    """Which lookups tables the templates read: {"cluster": ..., "prob": ...}."""
    names = {name for text in templates for name, _ in parse_template(text, slots)}
    return {"cluster": any(n == "cluster" or CLUSTER_ATOM.match(n) for n in names),
            "prob": "prob" in names}


def compile_templates(expanded: Sequence[Tuple[str, int]], slots: Optional[Sequence[str]] = None
                      ) -> Dict[str, numpy.ndarray]:
    """The arrays a system copies into its TemplateC structs: per template
    "ids" (uint64), "n", "substrings", and (n_templates, MAX) "slots",
    "columns", "bits", "flags"; "offsets": the token offset of each slot
    (slots given: a slot is its index there, and there are no offsets)."""
    k = len(expanded)
    m = MAX_ATOMS_PER_TEMPLATE
    out = {"ids": numpy.zeros((k,), dtype="uint64"), "n": numpy.zeros((k,), dtype="int32"),
           "substrings": numpy.zeros((k,), dtype="int32"), "doc": numpy.zeros((k,), dtype="int32"),
           "slots": numpy.zeros((k, m), dtype="int32"),
           "columns": numpy.zeros((k, m), dtype="int32"),
           "bits": numpy.zeros((k, m), dtype="int32"),
           "flags": numpy.full((k, m), -1, dtype="int32")}
    parsed = [parse_template(text, slots) for text, _ in expanded]
    offsets: List[int] = []
    doc_offsets: List[int] = []
    for atoms in parsed:
        for _, where in atoms:
            if slots is None and isinstance(where, int) and where not in offsets:
                offsets.append(where)
    if not offsets:
        offsets.append(0)
    for t, ((text, tid), atoms) in enumerate(zip(expanded, parsed)):
        out["ids"][t] = tid
        out["n"][t] = len(atoms)
        for j, (name, offset) in enumerate(atoms):
            if slots is not None:
                out["slots"][t, j] = slots.index(offset)
            elif isinstance(offset, str):  # doc+k: slots after the offsets' (doc_offsets)
                k_doc = int(offset[len(DOC):])
                if k_doc not in doc_offsets:
                    doc_offsets.append(k_doc)
                out["slots"][t, j] = len(offsets) + doc_offsets.index(k_doc)
                out["doc"][t] = 1
            else:
                out["slots"][t, j] = offsets.index(offset)
            if name == BIAS:
                out["columns"][t, j] = CONSTANT_COLUMN
                continue
            if name == SUBSTRINGS:
                out["substrings"][t] = 1
                continue
            column, bits, flag = _column(text, name, parser=slots is not None)
            out["columns"][t, j], out["bits"][t, j], out["flags"][t, j] = column, bits, flag
    out["offsets"] = numpy.asarray(offsets, dtype="int32")
    out["doc_offsets"] = numpy.asarray(doc_offsets, dtype="int32")
    return out


def max_features(expanded: Sequence[Tuple[str, int]]) -> int:
    """The most features the templates give at one token."""
    return sum(MAX_SUBSTRINGS if text == f"{SUBSTRINGS}[0]" else
               MAX_DOC_OCCURRENCES if is_doc_template(text) else 1 for text, _ in expanded)


def is_doc_template(text: str) -> bool:
    """Whether a (canonical) template reads the word's other occurrences."""
    return f"[{DOC}" in text
