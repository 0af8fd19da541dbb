"""The reference's annotation on the predicted tokens of a training example
(spaCy's Example.get_aligned), without a Python object per token where it
can: training data usually has the same words on both sides, and then the
alignment is one to one."""
from typing import Dict, Optional

import numpy
from spacy.attrs import ORTH
from spacy.training import Example


def one_to_one(example: Example) -> bool:
    """Whether the predicted and reference docs have the same words (then
    spaCy's alignment maps token i to token i)."""
    x, y = example.predicted, example.reference
    return len(x) == len(y) and bool(numpy.array_equal(x.to_array(ORTH), y.to_array(ORTH)))


def aligned_values(example: Example, attr: str) -> numpy.ndarray:
    """example.get_aligned(attr) as uint64: the reference's value of `attr`
    for each predicted token, 0 where it has none (none set, or no
    reference token aligned one to one). With the same words on both
    sides: the reference's array itself, no Python per token."""
    if one_to_one(example):
        return example.reference.to_array(attr).astype("uint64", copy=False)
    return numpy.asarray([value or 0 for value in example.get_aligned(attr)], dtype="uint64")


class LabelHashes:
    """Label ids by the hash of the label's string (a symbol's id for
    spaCy's symbols, as POS values are), for aligned_values of TAG, POS...:
    0 (no value) and unknown labels give -1."""

    def __init__(self, vocab, label_ids: Dict[str, int]) -> None:
        self.label_ids = label_ids  # the dict these ids are of (the caller's cache key)
        hashes = numpy.asarray([vocab.strings.add(label) for label in label_ids], dtype="uint64")
        ids = numpy.asarray(list(label_ids.values()), dtype="int32")
        order = numpy.argsort(hashes, kind="stable")
        self.hashes: numpy.ndarray = hashes[order]
        self.ids: numpy.ndarray = ids[order]

    def ids_of(self, values: numpy.ndarray) -> numpy.ndarray:
        if not len(self.hashes):
            return numpy.full((len(values),), -1, dtype="int32")
        at = numpy.minimum(numpy.searchsorted(self.hashes, values), len(self.hashes) - 1)
        return numpy.where(self.hashes[at] == values, self.ids[at], -1).astype("int32")


def hashes_for(cached: Optional[LabelHashes], vocab, label_ids: Dict[str, int]) -> LabelHashes:
    """A LabelHashes of label_ids: `cached` if it is of this very dict (a
    new dict when the labels change), else a new one."""
    if cached is not None and cached.label_ids is label_ids:
        return cached
    return LabelHashes(vocab, label_ids)
