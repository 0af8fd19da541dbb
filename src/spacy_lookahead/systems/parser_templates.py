"""The parser's feature templates: its fixed sets written as templates, and
the two groups a state's features fall in.

The presets are the feature sets of Huang and Sagae (2010, Table 3) with
distance, valency and dependent labels (Zhang and Nivre 2011) ("base"),
plus Zhang and Nivre's third-order and label-set features and a few suffix
features ("rich"), and the features of the tagger's alternative tags
(`tag_alternatives`). Each is hashed under the id it had as the Cython
enum of systems/arc_standard.pyx before the sets were data (T_BIAS = 101,
...), with its atoms in the order they were hashed, and an atom that is 0
(a word too short for its 3-letter suffix, a stack word without
dependents' labels) is hashed as 0 where a user's template gives no
feature ("keep zero"): their weights are the same bits.

A state's features fall in two groups (arc_standard.pyx, score()):

- structure: the templates that read no arc label; equal for the states
  whose structure is equal, so their scores are cached across label
  siblings;
- labels: the templates that read an arc label (`label`, `lset`, `rset`),
  and the preset's end-of-queue feature; each gives one feature at every
  state (an absent atom hashed as 0), so that branch-and-bound can compute
  the n-th label feature of a state on its own (ParseFeatures
  .label_feature, parse_features.pyx).
"""
from typing import Dict, List, Sequence, Tuple

import numpy

from .templates import (MAX_ATOMS_PER_TEMPLATE, PARSER_LABEL_ATOMS, PARSER_SLOTS, TemplateError,
                        compile_templates, expand, parse_template)


# Huang and Sagae (2010, Table 3) with unigrams further out, distance and
# valency: the structure features of the base set
BASE = [
    "bias",
    # (1) unigrams
    "lower[s0]", "ctag[s0]", "lower[s0] ctag[s0]", "lower[s1]", "ctag[s1]", "lower[s1] ctag[s1]",
    "lower[q0]", "tag[q0]", "lower[q0] tag[q0]",
    # (2) bigrams of s0, s1, q0
    "lower[s0] lower[s1]", "ctag[s0] ctag[s1]", "ctag[s0] tag[q0]",
    "lower[s0] ctag[s0] ctag[s1]", "ctag[s0] lower[s1] ctag[s1]", "lower[s0] lower[s1] ctag[s1]",
    "lower[s0] ctag[s0] lower[s1]", "lower[s0] ctag[s0] lower[s1] ctag[s1]",
    # (3) trigrams with the buffer
    "ctag[s0] tag[q0] tag[q1]", "ctag[s1] ctag[s0] tag[q0]", "lower[s0] tag[q0] tag[q1]",
    "ctag[s1] lower[s0] tag[q0]",
    # (4) dependents of s0 and s1
    "ctag[s1] ctag[s1l] ctag[s0]", "ctag[s1] ctag[s1r] ctag[s0]", "ctag[s1] ctag[s0] ctag[s0r]",
    "ctag[s1] ctag[s1l] lower[s0]", "ctag[s1] ctag[s1r] lower[s0]",
    "ctag[s1] lower[s0] ctag[s0l]",
    "ctag[s1] ctag[s0] ctag[s0l]",
    # (5) s2
    "ctag[s2] ctag[s1] ctag[s0]",
    # unigrams further out
    "lower[q1]", "tag[q1]", "lower[q2]", "tag[q2]", "lower[s2]", "ctag[s2]",
    "ctag[s0l]", "ctag[s0r]", "ctag[s1l]", "ctag[s1r]",
    # distance s1 - s0
    "lower[s0] dist[s1]", "ctag[s0] dist[s1]", "lower[s1] dist[s1]", "ctag[s1] dist[s1]",
    "ctag[s0] ctag[s1] dist[s1]", "lower[s0] lower[s1] dist[s1]",
    # valency
    "lower[s0] nl[s0]", "ctag[s0] nl[s0]", "lower[s0] nr[s0]", "ctag[s0] nr[s0]",
    "lower[s1] nl[s1]", "ctag[s1] nl[s1]", "lower[s1] nr[s1]", "ctag[s1] nr[s1]",
]
# the dependents' labels, and whether to finish (buffer empty, stack depth)
BASE_LABELS = [
    "label[s0l]", "label[s0r]", "label[s1l]", "label[s1r]",
    "ctag[s0] label[s0l] label[s0r]", "ctag[s1] label[s1l] label[s1r]",
    "lower[s0] label[s0r]", "lower[s1] label[s1r]",
    "qempty[q0] depth[s0]",
]
# Zhang and Nivre (2011, Table 2): third order; suffixes and word bigrams
# with q0, which hold up under POS errors
RICH = [
    "ctag[s0l2]", "ctag[s0r2]", "ctag[s1l2]", "ctag[s1r2]",
    "ctag[s0] ctag[s0l] ctag[s0l2]", "ctag[s0] ctag[s0r] ctag[s0r2]",
    "ctag[s1] ctag[s1l] ctag[s1l2]", "ctag[s1] ctag[s1r] ctag[s1r2]",
    "suf3[s0]", "suf3[s1]", "suf3[q0]", "suf3[s0] ctag[s1]", "suf3[s1] ctag[s0]",
    "suf3[s0] tag[q0]", "lower[s0] lower[q0]", "lower[s1] lower[q0]",
]
# ... and the label sets, with the word's tag
RICH_LABELS = ["ctag[s0] lset[s0]", "ctag[s0] rset[s0]", "ctag[s1] lset[s1]",
               "ctag[s1] rset[s1]"]
# the tagger's alternative tags: alone, with the other words' tags, as pairs
ALTERNATIVES = [
    "tag_alt[s0]", "tag_alt[s1]", "tag_alt[q0]", "tag_alt[q1]",
    "tag_alt[s0] ctag[s1]", "ctag[s0] tag_alt[s1]", "tag_alt[s0] tag[q0]",
    "ctag[s0] tag_alt[q0]", "lower[s0] tag_alt[s0]",
    "ctag[s0] tag_alt[s0] ctag[s1] tag_alt[s1]", "ctag[s0] tag_alt[s0] tag[q0] tag_alt[q0]",
]
# The ids: the enum's order, T_BIAS = 101, ...; it is the order above but for
# one template, which the enum had after s2's
_ENUM = BASE + BASE_LABELS + RICH + RICH_LABELS + ALTERNATIVES
_MOVED = _ENUM.pop(_ENUM.index("ctag[s1] ctag[s0] ctag[s0l]"))
_ENUM.insert(_ENUM.index("ctag[s2] ctag[s1] ctag[s0]") + 1, _MOVED)
_LEGACY_IDS = {text: 101 + k for k, text in enumerate(_ENUM)}
MAX_LABEL_TEMPLATES = 32   # arc_standard.pyx MAX_LABEL_FEATS
MAX_GROUP_ATOMS = 256      # parse_features.pyx MAX_GROUP_ATOMS


def is_label_template(text: str) -> bool:
    """Whether a template reads an arc label (and so is a label template)."""
    return any(name in PARSER_LABEL_ATOMS for name, _ in parse_template(text, PARSER_SLOTS))


def parser_groups(preset: str, alternatives: bool, templates: Sequence[str]
                  ) -> Tuple[List[Tuple[str, int, bool]], List[Tuple[str, int, bool]]]:
    """(structure, labels): [(canonical template, hash id, keep zero)] of
    the preset ("base" / "rich"), the alternative tags' features if
    `alternatives`, and the user's templates, in the order their features
    are hashed and summed. TemplateError names a bad or repeated template."""
    structure = list(BASE) + (RICH if preset == "rich" else [])
    labels = list(BASE_LABELS) + (RICH_LABELS if preset == "rich" else [])
    structure += ALTERNATIVES if alternatives else []
    # (a user's template that is also the preset's is hashed under an id of
    # its text: a feature of its own, as before the presets were data)
    user = expand(list(templates), "", PARSER_SLOTS)
    out_s = [(text, _LEGACY_IDS[text], True) for text in structure]
    out_l = [(text, _LEGACY_IDS[text], True) for text in labels]
    for text, tid in user:
        if is_label_template(text):  # one feature at every state: see the docstring
            out_l.append((text, tid, True))
        else:
            out_s.append((text, tid, False))
    if len(out_l) > MAX_LABEL_TEMPLATES:
        raise TemplateError(f"{len(out_l)} label templates (reading label, lset or rset); at "
                            f"most {MAX_LABEL_TEMPLATES}")
    return out_s, out_l


def compile_group(group: Sequence[Tuple[str, int, bool]]) -> Dict[str, numpy.ndarray]:
    """The arrays of one group for ArcStandardSystem: the distinct atoms it
    reads ("atom_slot", "atom_column", "atom_bits", "atom_flag": each read
    once per state), and per template "ids", "n", "keep_zero", "reads_set"
    (reads a label set) and "atoms" (n_templates, MAX: indices into the
    distinct atoms)."""
    arrays = compile_templates([(text, tid) for text, tid, _ in group], PARSER_SLOTS)
    k = len(group)
    out = {"ids": arrays["ids"], "n": arrays["n"],
           "keep_zero": numpy.asarray([keep for _, _, keep in group], dtype="int32"),
           "reads_set": numpy.asarray(
               [any(name in ("lset", "rset") for name, _ in parse_template(text, PARSER_SLOTS))
                for text, _, _ in group], dtype="int32"),
           "atoms": numpy.zeros((k, MAX_ATOMS_PER_TEMPLATE), dtype="int32")}
    distinct: Dict[Tuple[int, int, int, int], int] = {}
    for t in range(k):
        for j in range(int(arrays["n"][t])):
            key = (int(arrays["slots"][t, j]), int(arrays["columns"][t, j]),
                   int(arrays["bits"][t, j]), int(arrays["flags"][t, j]))
            out["atoms"][t, j] = distinct.setdefault(key, len(distinct))
    if len(distinct) > MAX_GROUP_ATOMS:
        raise TemplateError(f"the templates read {len(distinct)} distinct atoms; at most "
                            f"{MAX_GROUP_ATOMS}")
    keys = list(distinct) or [(0, 0, 0, -1)]
    for name, column in (("atom_slot", 0), ("atom_column", 1), ("atom_bits", 2),
                         ("atom_flag", 3)):
        out[name] = numpy.asarray([key[column] for key in keys], dtype="int32")
    out["n_atoms"] = len(distinct)
    return out


def reads_positions(group: Sequence[Tuple[str, int, bool]], positions: Sequence[str]) -> bool:
    """Whether any template of the group reads one of the positions."""
    return any(where in positions for text, _, _ in group
               for _, where in parse_template(text, PARSER_SLOTS))
