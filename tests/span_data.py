"""CoNLL-2000 and JNLPBA slices as examples, and a small training loop,
for the span components' tests."""
import random

import spacy
from spacy.tokens import Doc
from spacy.training import Example

import spacy_lookahead.pipes.spans  # noqa: F401  (factories, when not pip-installed)
from spacy_lookahead.readers.columns import ColumnCorpus
from blocks import blocks


def conll2000(shared_data, vocab, split, limit):
    corpus = ColumnCorpus(shared_data / "conll2000" / f"{split}.txt", ["word", "pos", "chunk"], "chunk")
    return [eg for _, eg in zip(range(limit), corpus.read(vocab))]


def jnlpba(shared_data, vocab, split, limit):
    corpus = ColumnCorpus(shared_data / "jnlpba" / f"{split}.iob2", ["word", "ent"], "ent")
    return [eg for _, eg in zip(range(limit), corpus.read(vocab))]


def train(nlp, examples, epochs):
    nlp.initialize(lambda: examples)
    rng = random.Random(0)
    for _ in range(epochs):
        examples = examples[:]
        rng.shuffle(examples)
        for i in range(0, len(examples), 32):
            nlp.update(examples[i:i + 32])
    return nlp


def words_only(examples):
    return [Example(Doc(eg.reference.vocab, words=[t.text for t in eg.reference]), eg.reference)
            for eg in examples]


def trained(factory, config, examples_of, epochs=2):
    nlp = spacy.blank("en")
    nlp.add_pipe(factory, config=blocks(factory, config))
    return train(nlp, examples_of(nlp.vocab), epochs)


def failing_batch_counts_nothing(pipe, docs):
    """pipe() of `docs` (unseen tags among them) with one word untagged
    (the batch fails): nothing counted, no unseen-tag warning, at one
    thread and two (the threads count as they read: a batch done again in
    parts must not count its docs twice)."""
    import warnings

    from spacy.util import raise_error

    untagged = [d.copy() for d in docs]
    untagged[7][1].tag_ = ""
    failed = []
    pipe.set_error_handler(lambda name, proc, batch, err: failed.append(len(batch)))
    try:
        for n_threads in (1, 2):
            pipe.cfg["n_threads"] = n_threads
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                assert list(pipe.pipe([d.copy() for d in untagged], batch_size=256)) == []
            assert not [w for w in caught if "never seen" in str(w.message)]
        assert failed == [len(docs)] * 2
    finally:
        pipe.set_error_handler(raise_error)
