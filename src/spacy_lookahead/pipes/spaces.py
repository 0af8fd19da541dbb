"""Whitespace tokens, treated as spaCy's own components treat them: they are
not shown to the models (the systems see the doc without them, so that the
neighbours' features read across a line break as the training data does),
get the tag `_SP` / POS `SPACE`, never start or end a span, and are attached
by the parser to the preceding word (to the following one at the start of a
doc), with the label `dep`.

The mapping is per doc and vectorised: no Python per token.
"""
from itertools import repeat
from operator import is_
from typing import Any, List, Optional, Sequence, Tuple

import numpy
from spacy.attrs import IS_SPACE
from spacy.tokens import Doc

from ..systems.schemes import B, I, L  # (span label kinds)

SPACE_TAG = "_SP"
SPACE_POS = "SPACE"
SPACE_DEP = "dep"


def content_index(doc: Doc) -> Optional[numpy.ndarray]:
    """The positions of the doc's non-whitespace tokens, or None if there
    is no whitespace token (the common case: nothing to map)."""
    if not len(doc):
        return None
    space = doc.to_array(IS_SPACE)  # an attribute id: spaCy resolves a name per call
    if not space.any():
        return None
    return numpy.flatnonzero(space == 0).astype("int32")


def any_spaced(indexes: Sequence[Optional[numpy.ndarray]]) -> bool:
    """Whether some doc of a batch has whitespace tokens (its content
    positions are not None): a C loop over the batch (list.count(None)
    would compare the arrays)."""
    return not all(map(is_, indexes, repeat(None)))


def content_positions(docs: Sequence[Doc], indexes: Sequence[Optional[numpy.ndarray]]
                      ) -> Tuple[numpy.ndarray, numpy.ndarray]:
    """A batch's content tokens as positions over its docs' tokens one after
    another (doc k's at starts[k]:starts[k + 1]; a doc's content positions
    in `indexes`, None: all its tokens), and those starts. Vectorised: numpy
    only per doc with whitespace."""
    starts = numpy.zeros((len(docs) + 1,), dtype="int64")
    numpy.cumsum([len(doc) for doc in docs], out=starts[1:])
    spaced = [k for k, index in enumerate(indexes) if index is not None]
    counts = numpy.diff(starts)
    counts[spaced] = [len(indexes[k]) for k in spaced]
    content = numpy.zeros((len(docs) + 1,), dtype="int64")
    numpy.cumsum(counts, out=content[1:])
    # (a doc without whitespace: its tokens in order, from its start)
    positions = numpy.arange(int(content[-1]), dtype="int64") + numpy.repeat(
        starts[:-1] - content[:-1], counts)
    if spaced:  # (their places from their indexes, all at once)
        mask = numpy.zeros((len(docs),), dtype=bool)
        mask[spaced] = True
        positions[numpy.repeat(mask, counts)] = numpy.concatenate(
            [indexes[k] for k in spaced]) + numpy.repeat(starts[spaced], counts[spaced])
    return positions, starts


def expand_span_ids(labels: numpy.ndarray, positions: numpy.ndarray, content_starts: numpy.ndarray,
                    doc_starts: numpy.ndarray, kinds: numpy.ndarray, types: numpy.ndarray
                    ) -> numpy.ndarray:
    """Span label ids of a batch's content tokens (doc k's at
    content_starts[k]:content_starts[k + 1], at `positions` of the batch's
    tokens, doc k's at doc_starts[k]:doc_starts[k + 1]; kinds, types:
    schemes.action_arrays) over all its tokens: a whitespace token between
    two tokens of one span (as span_ids.ids_to_spans reads them: the
    second continues the first) gets the I label of its type, any other O.
    The spans they encode are the content ids' spans, from their first
    token to their last (expand_spans). Vectorised over the batch."""
    n = int(doc_starts[-1])
    out = numpy.zeros((n,), dtype="int32")  # (O: the first action)
    out[positions] = labels
    if len(positions) == n:
        return out
    keep = numpy.zeros((n,), dtype=bool)
    keep[positions] = True
    space = numpy.flatnonzero(~keep)
    after = numpy.searchsorted(positions, space)  # the next content token's place in labels
    doc = numpy.searchsorted(doc_starts, space, side="right") - 1
    both = (after > content_starts[doc]) & (after < content_starts[doc + 1])
    space, after = space[both], after[both]
    prev, nxt = labels[after - 1], labels[after]
    kinds, types = numpy.asarray(kinds), numpy.asarray(types)
    inside = (numpy.isin(kinds[prev], (B, I)) & numpy.isin(kinds[nxt], (I, L))
              & (types[prev] == types[nxt]))
    inside_label = numpy.zeros((int(types.max(initial=-1)) + 1,), dtype="int32")
    for action in numpy.flatnonzero(kinds == I):
        inside_label[types[action]] = action
    out[space[inside]] = inside_label[types[nxt[inside]]]
    return out


def over_doc_tokens(values: numpy.ndarray, positions: numpy.ndarray, n: int,
                    fill: Any) -> numpy.ndarray:
    """Values of a batch's content tokens (content_positions' order) over
    all its n tokens, `fill` on the whitespace."""
    out = numpy.full((n,), fill, dtype=values.dtype)
    out[positions] = values
    return out


def compact_substrings(offsets: numpy.ndarray, hashes: numpy.ndarray,
                       index: numpy.ndarray) -> Tuple[numpy.ndarray, numpy.ndarray]:
    """The CSR substrings (offsets, hashes) of the tokens at `index`."""
    lengths = numpy.diff(offsets)
    owner = numpy.repeat(numpy.arange(len(lengths)), lengths)
    keep = numpy.zeros((len(lengths),), dtype=bool)
    keep[index] = True
    new_offsets = numpy.zeros((len(index) + 1,), dtype="int32")
    numpy.cumsum(lengths[index], out=new_offsets[1:])
    kept = hashes[:len(owner)][keep[owner]]
    return new_offsets, (kept if len(kept) else numpy.zeros((1,), dtype="uint64"))


def compact_spans(spans: Sequence[Tuple[int, int, object]],
                  index: numpy.ndarray) -> List[Tuple[int, int, object]]:
    """Spans (start, end exclusive, label) in doc positions as spans over the
    content tokens at `index`; whitespace at a span's edges is dropped, and
    a span of whitespace only disappears."""
    if not len(spans):
        return []
    starts = numpy.searchsorted(index, [s[0] for s in spans])
    ends = numpy.searchsorted(index, [s[1] for s in spans])
    return [(int(a), int(b), span[2]) for a, b, span in zip(starts, ends, spans) if a < b]


def expand_spans(spans: Sequence[Tuple[int, int, object]],
                 index: numpy.ndarray) -> List[Tuple[int, int, object]]:
    """Spans over the content tokens back in doc positions: from the first
    content token to the last (whitespace between them is inside)."""
    return [(int(index[s]), int(index[e - 1]) + 1, label) for s, e, label in spans]


def compact_heads(heads: numpy.ndarray, index: numpy.ndarray, n: int) -> numpy.ndarray:
    """Gold heads (doc positions, -1 unknown) of the content tokens, as
    content positions; a head on a whitespace token becomes unknown."""
    position = numpy.full((n,), -1, dtype="int32")
    position[index] = numpy.arange(len(index), dtype="int32")
    h = heads[index]
    return numpy.where(h >= 0, position[numpy.maximum(h, 0)], -1).astype("int32")


def expand_tree(heads: numpy.ndarray, labels: numpy.ndarray, index: numpy.ndarray, n: int,
                space_label: int, root_label: int = -1) -> Tuple[numpy.ndarray, numpy.ndarray]:
    """A tree over the content tokens (heads in content positions) as a tree
    over the doc: each whitespace token attached to the preceding content
    token, or the following one where none precedes, with `space_label`; in
    a doc of whitespace only, the last token is the root of the others."""
    return expand_trees(numpy.asarray(heads), numpy.asarray(labels),
                        numpy.asarray([0, len(index)]), numpy.asarray(index, dtype="int64"),
                        numpy.asarray([0, n]), space_label, root_label)


def expand_trees(heads: numpy.ndarray, labels: numpy.ndarray, content_starts: numpy.ndarray,
                 positions: numpy.ndarray, doc_starts: numpy.ndarray, space_label: int,
                 root_label: int = -1) -> Tuple[numpy.ndarray, numpy.ndarray]:
    """expand_tree over a batch at once (no Python per doc): the trees of
    its content tokens (doc k's at content_starts[k]:content_starts[k + 1], heads as content
    positions in their doc; the tokens at `positions` of the batch's, doc
    k's at doc_starts[k]:doc_starts[k + 1]) as trees over all its tokens,
    heads as positions in their doc."""
    n = int(doc_starts[-1])
    lengths = numpy.diff(doc_starts)
    doc_of = numpy.repeat(numpy.arange(len(lengths)), lengths)
    out_heads = (numpy.arange(n) - doc_starts[:-1][doc_of]).astype("int32")
    out_labels = numpy.full((n,), space_label, dtype="int32")
    counts = numpy.diff(content_starts)
    content_doc = numpy.repeat(numpy.arange(len(counts)), counts)
    first = content_starts[:-1][content_doc]  # (each content token's doc's first)
    out_heads[positions] = positions[first + heads] - doc_starts[:-1][content_doc]
    out_labels[positions] = labels
    space = numpy.ones((n,), dtype=bool)
    space[positions] = False
    where = numpy.flatnonzero(space)
    doc = doc_of[where]
    before = numpy.searchsorted(positions, where) - 1  # (the preceding content token)
    has = counts[doc] > 0
    # (none in its doc before it: the doc's first content token)
    at = numpy.maximum(before[has], content_starts[:-1][doc[has]])
    out_heads[where[has]] = positions[at] - doc_starts[:-1][doc[has]]
    alone = numpy.flatnonzero((counts == 0) & (lengths > 0))  # docs of whitespace only
    last = doc_starts[alone + 1] - 1
    out_heads[where[~has]] = (lengths[doc[~has]] - 1).astype("int32")
    out_labels[last] = root_label
    return out_heads, out_labels


def compact_input(item: dict, index: Optional[numpy.ndarray] = None) -> dict:
    """A system input (per-token arrays: atoms, forced labels, sentence ids,
    inside-chunk flags; CSR substrings) restricted to the tokens at `index`."""
    if index is None:
        return item
    out = {}
    for key, value in item.items():
        if value is None:
            out[key] = None
        elif key == "substrings":
            out[key] = compact_substrings(value[0], value[1], index)
        else:
            out[key] = value[index]
    return out


def without_whitespace(batch: dict, space: numpy.ndarray
                       ) -> Tuple[dict, List[Optional[numpy.ndarray]]]:
    """A batch input over the tokens of several docs (per-token arrays,
    "starts" where each doc begins, CSR "substrings") without its
    whitespace tokens (`space`: 1 on them), and the positions of each doc's
    content tokens (None for a doc without whitespace)."""
    starts = batch["starts"]
    keep = space == 0
    kept = numpy.zeros((len(keep) + 1,), dtype="int64")
    numpy.cumsum(keep, out=kept[1:])
    words = kept[starts[1:]] - kept[starts[:-1]]
    spaces_per_doc = (starts[1:] - starts[:-1]) - words
    indexes: List[Optional[numpy.ndarray]] = [None] * (len(starts) - 1)
    # every word's place in its doc at once; each spaced doc's a view of them
    places = (numpy.flatnonzero(keep) - numpy.repeat(starts[:-1], words)).astype("int32")
    for d, lo, hi in zip(numpy.flatnonzero(spaces_per_doc).tolist(),
                         kept[starts[:-1]][spaces_per_doc > 0].tolist(),
                         kept[starts[1:]][spaces_per_doc > 0].tolist()):
        indexes[d] = places[lo:hi]
    out = {}
    for key, value in batch.items():
        if value is None:
            out[key] = None
        elif key == "starts":
            out[key] = kept[starts]
        elif key == "substrings":
            out[key] = compact_substrings(value[0], value[1], numpy.flatnonzero(keep))
        elif key == "sent_starts":  # a sentence that starts on whitespace starts after it
            kept_at = numpy.flatnonzero(keep)
            out[key] = value[keep].copy()
            after = numpy.searchsorted(kept_at, numpy.flatnonzero(value & ~keep))
            out[key][after[after < len(kept_at)]] = True
        else:
            out[key] = value[keep]
    return out, indexes
