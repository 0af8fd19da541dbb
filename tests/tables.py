"""Weight tables in mixing's layout (keys, row lengths, classes, weights)
for the tests of mixing and of the rounds of distributed training."""
import numpy

from spacy_lookahead.distributed.mixing import Table


def random_table(rng: numpy.random.Generator, n_keys: int, n_classes: int) -> Table:
    """A training table as Weights.to_arrays() gives it: rows sorted by key,
    classes in the order they were first updated (not sorted), some weights
    exactly 0, keys shared with the other tables drawn from the same range."""
    keys = numpy.unique(rng.integers(0, 3 * n_keys, size=n_keys, dtype=numpy.uint64))
    lengths = rng.integers(1, n_classes + 1, size=len(keys)).astype("int32")
    classes = numpy.concatenate([rng.permutation(n_classes)[:k] for k in lengths]).astype("int32")
    ws = rng.normal(size=len(classes))
    ws[rng.random(len(ws)) < 0.05] = 0.0
    return keys, lengths, classes, ws


def dense(table: Table) -> dict:
    """{(key, class): weight} of a table."""
    keys, lengths, classes, ws = table[:4]
    return {(int(k), int(c)): float(w)
            for k, c, w in zip(numpy.repeat(keys, lengths), classes, ws)}
