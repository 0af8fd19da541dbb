"""Span labelling schemes (IOB2, BILUO) for the sequence labellers: the
action set for a list of span types, the label constraints the search obeys,
and spans <-> label-id conversions (vectorised: no Python per token)."""
from typing import Dict, List, Sequence, Tuple

import numpy

from .span_ids import ids_to_spans  # noqa: F401 (in C: once per doc at prediction time)

SCHEMES = {"iob2": "BI", "biluo": "BILU"}  # the readers' names (readers/tags.py)
# The components' scheme before it was named as the readers name it.
ALIASES = {"iob": "iob2"}
O, B, I, L, U = 0, 1, 2, 3, 4
KIND = {"O": O, "B": B, "I": I, "L": L, "U": U}


def scheme_actions(types: Sequence[str], scheme: str) -> List[str]:
    """The action (label) names: "O", then e.g. B-NP, I-NP, B-VP, ..."""
    scheme = ALIASES.get(scheme, scheme)
    if scheme not in SCHEMES:
        raise ValueError(f"scheme must be one of {sorted(SCHEMES)}, got {scheme!r}")
    return ["O"] + [f"{prefix}-{t}" for t in types for prefix in SCHEMES[scheme]]


def action_arrays(actions: Sequence[str]) -> Tuple[numpy.ndarray, numpy.ndarray]:
    """(kind, type) per action: kind in O/B/I/L/U, type = index of the span
    type in order of first appearance (-1 for O)."""
    kinds, types, index = [], [], {}
    for name in actions:
        prefix, _, label = name.partition("-")
        kinds.append(KIND[prefix])
        types.append(index.setdefault(label, len(index)) if label else -1)
    return numpy.asarray(kinds, dtype="int8"), numpy.asarray(types, dtype="int32")


def label_constraints(actions: Sequence[str], scheme: str, direction: str) -> Dict[str, numpy.ndarray]:
    """The `allowed`, `at_doc_start`, `at_doc_end` arrays of TaggingSystem
    for a scheme, in tagging order (for "rtl" the previous label is the right
    neighbour). IOB2: I-X only after B-X/I-X. BILUO: additionally B-X/I-X
    must be followed by I-X/L-X, and L-X/U-X/O close spans."""
    kinds, types = action_arrays(actions)
    biluo = scheme == "biluo"
    n = len(actions)
    labels = list(zip(kinds.tolist(), types.tolist()))

    def follows(prev, cur):
        (pk, pt), (ck, ct) = prev, cur
        if ck in (I, L):
            return pk in (B, I) and pt == ct
        return not (biluo and pk in (B, I))

    start = numpy.asarray([k not in (I, L) for k, _ in labels], dtype="int32")
    end = numpy.asarray([not (biluo and k in (B, I)) for k, _ in labels], dtype="int32")
    allowed = numpy.zeros((n + 1, n), dtype="int32")
    for c in range(n):
        allowed[0, c] = start[c] if direction == "ltr" else end[c]
        for p in range(n):
            ok = follows(labels[p], labels[c]) if direction == "ltr" else follows(labels[c], labels[p])
            allowed[p + 1, c] = ok
    return {"allowed": allowed, "at_doc_start": start, "at_doc_end": end}


def spans_to_ids(n_tokens: int, spans: Sequence[Tuple[int, int, str]], actions: Sequence[str],
                 scheme: str) -> numpy.ndarray:
    """Label ids for (start, end, type) spans; types not among the actions
    give -1 (unknown) on their tokens."""
    ids = numpy.zeros((n_tokens,), dtype="int32")
    index = {name: i for i, name in enumerate(actions)}
    for start, end, label in spans:
        if f"B-{label}" not in index:
            ids[start:end] = -1
        elif scheme == "biluo" and end - start == 1:
            ids[start] = index[f"U-{label}"]
        else:
            ids[start:end] = index[f"I-{label}"]
            ids[start] = index[f"B-{label}"]
            if scheme == "biluo":
                ids[end - 1] = index[f"L-{label}"]
    return ids


def sum_in_order(probs: numpy.ndarray, agree) -> numpy.ndarray:
    """Over the rows of (k, m) probabilities where `agree` (k, m, or a
    scalar) holds: each column's sum, the rows added in order (row 0, then
    1, ...), so that a doc's figures are the same bits whether its outputs
    are summed on their own or with a batch's (padded with zero rows)."""
    terms = numpy.ascontiguousarray(probs * agree, dtype="float64")
    out = numpy.zeros(terms.shape[1:], dtype="float64")
    for row in terms:
        out += row
    return out


def span_probabilities(spans: Sequence[Tuple[int, int, int]], nbest: numpy.ndarray,
                       probs: numpy.ndarray, kinds: numpy.ndarray,
                       types: numpy.ndarray) -> numpy.ndarray:
    """For each (start, end, type) span: the summed probability of the label
    sequences in `nbest` (k, n) that contain exactly that span, read as
    ids_to_spans reads them (conlleval), vectorised over spans and sequences."""
    if not len(spans):
        return numpy.zeros((0,), dtype="float32")
    k, n = nbest.shape
    starts, ends, span_types = (numpy.asarray(c) for c in zip(*spans))
    kind, typ = kinds[nbest], types[nbest]
    # cont[:, i]: token i continues the span of token i - 1 (as in ids_to_spans)
    cont = numpy.zeros((k, n + 1), dtype=bool)
    opens = (kind[:, :-1] == B) | (kind[:, :-1] == I)
    continues = (kind[:, 1:] == I) | (kind[:, 1:] == L)
    cont[:, 1:n] = opens & continues & (typ[:, 1:] == typ[:, :-1])
    breaks = numpy.zeros((k, n + 1), dtype="int32")  # running count of non-continuations
    breaks[:, 1:] = numpy.cumsum(~cont[:, :n], axis=1)
    opens_here = (kind[:, starts] != O) & (typ[:, starts] == span_types) & ~cont[:, starts]
    runs_on = breaks[:, ends] - breaks[:, starts + 1] == 0  # tokens start+1 .. end-1 continue
    closes = ~cont[:, ends]  # the token after the span (or the end) does not continue it
    # (summed in the outputs' order, as a batch's kept outputs are: pipes/spans.py)
    return numpy.minimum(sum_in_order(numpy.asarray(probs)[:, None], opens_here & runs_on & closes),
                         1.0).astype("float32")
