"""Whitespace tokens put back into a batch's outputs (pipes/spaces.py), at
once over the batch: the content tokens' places, and span label ids whose
spans are the content ids' spans from their first token to their last."""
import numpy
import spacy
from hypothesis import given, settings, strategies as st
from spacy.attrs import IS_SPACE
from spacy.tokens import Doc

from spacy_lookahead.pipes.spaces import (content_index, content_positions, expand_span_ids,
                                          expand_spans, expand_trees)
from spacy_lookahead.systems.schemes import (I, O, action_arrays, ids_to_spans, scheme_actions,
                                             spans_to_ids)

TYPES = ["NP", "VP", "PP"]


@st.composite
def spaced_docs(draw):
    """Docs as (content spans, n content tokens, whitespace inserted before
    each content place or at the end: counts per gap)."""
    docs = []
    for _ in range(draw(st.integers(0, 5))):
        n = draw(st.integers(0, 9))
        spans, i = [], 0
        while i < n:
            length = draw(st.integers(0, 3))
            if length and i + length <= n:
                spans.append((i, i + length, draw(st.integers(0, len(TYPES) - 1))))
                i += length
            else:
                i += 1
        gaps = draw(st.lists(st.integers(0, 2), min_size=n + 1, max_size=n + 1))
        docs.append((spans, n, gaps))
    return docs


@settings(max_examples=200, deadline=None)
@given(docs=spaced_docs(), scheme=st.sampled_from(["iob2", "biluo"]))
def test_span_ids_over_a_batch_keep_the_spans_and_put_whitespace_inside_them(docs, scheme):
    actions = scheme_actions(TYPES, scheme)
    kinds, types = action_arrays(actions)
    labels, indexes, lengths = [], [], []
    for spans, n, gaps in docs:
        labels.append(spans_to_ids(n, [(s, e, TYPES[t]) for s, e, t in spans], actions, scheme))
        index, at = [], 0
        for j in range(n):
            at += gaps[j]
            index.append(at)
            at += 1
        indexes.append(numpy.asarray(index, dtype="int32"))
        lengths.append(at + gaps[n])
    starts = numpy.cumsum([0] + [n for _, n, _ in docs])
    doc_starts = numpy.cumsum([0] + lengths)
    positions = numpy.concatenate([start + index for start, index in zip(doc_starts, indexes)]
                                  or [numpy.zeros((0,), dtype="int64")])
    content = numpy.concatenate(labels or [numpy.zeros((0,), dtype="int32")]).astype("int32")
    out = expand_span_ids(content, positions, starts, doc_starts, kinds, types)
    assert out.shape == (int(doc_starts[-1]),) and out[positions].tolist() == content.tolist()
    space = numpy.ones(len(out), dtype=bool)
    space[positions] = False
    assert set(kinds[out[space]].tolist()) <= {O, I}
    for k, (spans, _, _) in enumerate(docs):
        mine = ids_to_spans(out[doc_starts[k]:doc_starts[k + 1]], kinds, types)
        assert mine == expand_spans(spans, indexes[k])


def test_content_positions_are_the_batch_tokens_that_are_not_whitespace():
    nlp = spacy.blank("en")
    docs = [nlp.make_doc(text) for text in
            ["the cat  sat", "", "\n", "a dog", "  two\n\nlines ", "one"]]
    indexes = [content_index(doc) for doc in docs]
    positions, starts = content_positions(docs, indexes)
    batch = numpy.concatenate([doc.to_array(IS_SPACE) for doc in docs if len(doc)])
    assert positions.tolist() == numpy.flatnonzero(batch == 0).tolist()
    assert starts.tolist() == numpy.cumsum([0] + [len(doc) for doc in docs]).tolist()
    assert any(index is None for index in indexes) and any(index is not None for index in indexes)
    none, _ = content_positions([Doc(nlp.vocab, words=[])], [None])
    assert none.tolist() == []


@settings(max_examples=200, deadline=None)
@given(docs=spaced_docs(), data=st.data())
def test_trees_over_a_batch_attach_whitespace_to_the_word_before(docs, data):
    """expand_trees: each content token keeps its head (as a doc position)
    and label; a whitespace token hangs from the content token before it
    (the doc's first where none is), labelled `dep`'s id; in a doc of
    whitespace alone, from its last token, the root."""
    heads, labels, indexes, lengths = [], [], [], []
    for _, n, gaps in docs:
        heads.append([data.draw(st.integers(0, n - 1)) for _ in range(n)])
        labels.append([data.draw(st.integers(0, 4)) for _ in range(n)])
        index, at = [], 0
        for j in range(n):
            at += gaps[j]
            index.append(at)
            at += 1
        indexes.append(index)
        lengths.append(at + gaps[n])
    starts = numpy.cumsum([0] + [n for _, n, _ in docs])
    doc_starts = numpy.cumsum([0] + lengths)
    positions = numpy.asarray([start + i for start, index in zip(doc_starts, indexes)
                               for i in index], dtype="int64")
    out_heads, out_labels = expand_trees(numpy.asarray(sum(heads, []), dtype="int32"),
                                         numpy.asarray(sum(labels, []), dtype="int32"),
                                         starts, positions, doc_starts, 9, -1)
    for k, index in enumerate(indexes):
        got_heads = out_heads[doc_starts[k]:doc_starts[k + 1]].tolist()
        got_labels = out_labels[doc_starts[k]:doc_starts[k + 1]].tolist()
        for t in range(lengths[k]):
            if t in index:
                j = index.index(t)
                assert (got_heads[t], got_labels[t]) == (index[heads[k][j]], labels[k][j])
            elif index:
                before = [i for i in index if i < t]
                assert (got_heads[t], got_labels[t]) == (before[-1] if before else index[0], 9)
            else:
                last = lengths[k] - 1
                assert (got_heads[t], got_labels[t]) == (last, -1 if t == last else 9)
