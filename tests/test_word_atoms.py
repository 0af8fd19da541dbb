"""A word type's text atoms (features.word_atoms, word_substrings), made in
C over the text's UTF-8: the hashes of the strings their definitions name
(Python's string semantics: characters, str.lower, str.isupper ...)."""
from hypothesis import given, strategies as st

from spacy_lookahead.core.features import (A_COLUMNS, MAX_SUBSTRINGS, string_atoms, word_atoms,
                                           word_substrings)


def h(text):
    return int(string_atoms([text])[0]) if text else 2  # (hash_text of "": 0 is "absent")


def test_hand_worked_words():
    atoms = dict(zip(A_COLUMNS, word_atoms("Hello-World2")))
    assert atoms["orth"] == h("Hello-World2") and atoms["lower"] == h("hello-world2")
    assert [atoms[f"pre{k}"] for k in range(1, 5)] == [h("H"), h("He"), h("Hel"), h("Hell")]
    assert [atoms[f"suf{k}"] for k in range(1, 5)] == [h("2"), h("d2"), h("ld2"), h("rld2")]
    assert atoms["shape"] == h("Xxxx-Xxxd")  # (runs longer than 2 cut after the fourth)
    assert (atoms["has_digit"], atoms["has_upper"], atoms["has_hyphen"], atoms["all_caps"],
            atoms["init_cap"]) == (1, 1, 1, 0, 1)
    short = dict(zip(A_COLUMNS, word_atoms("né")))  # 2 characters, 3 bytes
    assert (short["pre1"], short["pre2"], short["pre3"]) == (h("n"), h("né"), 0)
    assert (short["suf1"], short["suf2"], short["suf3"]) == (h("é"), h("né"), 0)
    caps = dict(zip(A_COLUMNS, word_atoms("ǅA")))  # a titlecase letter: not upper
    assert (caps["all_caps"], caps["init_cap"], caps["has_upper"]) == (0, 0, 1)
    assert word_substrings("abab") == [h(s) for s in ["a", "b", "ab", "ba", "aba", "bab", "abab"]]
    assert word_substrings("éé") == [h("é"), h("éé")]
    astral = dict(zip(A_COLUMNS, word_atoms("😀a")))  # a 4-byte character
    assert (astral["pre1"], astral["suf1"], astral["shape"]) == (h("😀"), h("a"), h("😀x"))
    wide = "Ab1-" * 40 + "😀" * 70  # a shape longer than the stack buffer
    assert dict(zip(A_COLUMNS, word_atoms(wide)))["shape"] == h(shape(wide))
    empty = dict(zip(A_COLUMNS, word_atoms("")))
    assert (empty["orth"], empty["shape"], empty["pre1"], empty["suf1"]) == (2, 2, 0, 0)
    assert word_substrings("") == []
    long = "abcdefghijklmnopqrst"  # more substrings than kept: the shortest first
    expected = [long[s:s + k] for k in range(1, 10) for s in range(len(long) - k + 1)]
    assert word_substrings(long) == [h(s) for s in expected[:MAX_SUBSTRINGS]]


def shape(text):
    out = []
    for ch in text:
        c = "X" if ch.isupper() else "x" if ch.islower() else "d" if ch.isdigit() else ch
        if len(out) < 4 or out[-1] != c or out[-2] != c:
            out.append(c)
    return "".join(out)


def substrings(text):
    seen = []
    for k in range(1, min(len(text), 9) + 1):
        for start in range(len(text) - k + 1):
            if text[start:start + k] not in seen:
                seen.append(text[start:start + k])
    return seen[:MAX_SUBSTRINGS]


@given(st.text(max_size=100))  # (past 64 characters: the shape's buffer on the heap)
def test_the_atoms_are_the_hashes_of_their_strings(text):
    atoms = dict(zip(A_COLUMNS, word_atoms(text)))
    n = len(text)
    assert atoms["orth"] == h(text) and atoms["lower"] == h(text.lower())
    for k in range(1, 5):
        assert atoms[f"pre{k}"] == (h(text[:k]) if n >= k else 0)
        assert atoms[f"suf{k}"] == (h(text[n - k:]) if n >= k else 0)
    assert atoms["shape"] == h(shape(text))
    assert atoms["has_digit"] == any(c.isdigit() for c in text)
    assert atoms["has_upper"] == any(c.isupper() for c in text)
    assert atoms["has_hyphen"] == ("-" in text)
    assert atoms["all_caps"] == text.isupper() and atoms["init_cap"] == text[:1].isupper()
    assert word_substrings(text) == [h(s) for s in substrings(text)]


def _shared_nlp(made=[]):
    import spacy

    if not made:
        made.append(spacy.blank("en"))
    return made[0]


def cached_as_defined(words, classes, tables=None, fresh=True, threads_make=False):
    """spacy_io's cache (LexemeAtoms.get: in C from the StringStore's UTF-8
    and the LexemeC where the text is ASCII, else Python's string methods)
    holds each word's atoms, substrings and whitespace flag as word_atoms,
    lexeme_atoms, word_substrings and str.isspace give them. threads_make:
    the words are first those that a batch's rows make where they are
    read (docs_inputs' new_words: each ASCII one made by fill(), then
    kept in the cache: keep_new_words), with the same atoms."""
    import spacy
    import spacy.symbols

    from spacy_lookahead.spacy_io import LexemeAtoms, lexeme_atoms, vocab_tables

    nlp = spacy.blank("en") if fresh else _shared_nlp()
    for name in ("lexeme_cluster", "lexeme_prob"):
        if nlp.vocab.lookups.has_table(name):
            nlp.vocab.lookups.remove_table(name)
    for name, table in (tables or {}).items():
        nlp.vocab.lookups.add_table(name, table)
    doc = spacy.tokens.Doc(nlp.vocab, words=words, tags=["X"] * len(words))
    atoms = LexemeAtoms(substrings=True)
    atoms.set_classes(classes)
    if threads_make:  # (the phrase units' rows: whitespace kept, each word tagged)
        batch = atoms.unit_inputs([doc], new_words=True)
        rows = batch["rows"]
        ascii_words = {w for w in words  # (not a symbol: their texts are not in the StringStore)
                       if w.isascii() and nlp.vocab.strings[w] >= len(spacy.symbols.NAMES)}
        assert rows.n_new_words == len(ascii_words) and len(atoms) == len(set(words)) - len(ascii_words)
        rows.fill_all()
        made = batch["atoms"][:, :A_COLUMNS["ambiguity"] + 1].copy()  # (the word atoms)
        assert rows.keep_new_words() == len(ascii_words) and len(atoms) == len(set(words))
        assert rows.keep_new_words() == 0  # (each kept once)
    batch = atoms.docs_inputs([doc])
    if threads_make:
        assert (batch["atoms"][:, :A_COLUMNS["ambiguity"] + 1] == made).all()
    rows, (offsets, hashes) = batch["atoms"], batch["substrings"]
    space = batch["space"] if batch["space"] is not None else [0] * len(words)
    tables = vocab_tables(nlp.vocab)
    for i, word in enumerate(words):
        lexeme = lexeme_atoms(nlp.vocab[word], tables) + [classes.get(word, 0)]
        assert rows[i].tolist() == word_atoms(word) + lexeme + [0, 0, 0], word
        assert hashes[offsets[i]:offsets[i + 1]].tolist() == word_substrings(word), word
        assert space[i] == word.isspace(), word


def test_the_word_cache_holds_each_words_atoms_and_substrings():
    words = ["Hello", "né", "😀a", "x" * 80, "\n", "Ab1-" * 20, " ", "\t\t", "\x1c", "\u3000",
             "a ", "NOUN", "ADJ", "X" * 300, "Hello-World2", "ǅA", "3.14", "--", "é\n"]
    clusters = {"Hello": 5, "x" * 80: 9, "\n": 3, "né": 4}
    probs = {"Hello": -3.5, "--": -20.0, "a ": -0.25, "né": -7.0}
    for threads_make in (False, True):
        cached_as_defined(words, {"né": 7, "Hello": 11, "NOUN": 13, " ": 17},
                          {"lexeme_cluster": clusters, "lexeme_prob": probs},
                          threads_make=threads_make)
        cached_as_defined(words, {}, threads_make=threads_make)  # (without tables)


def test_a_bad_table_value_raises_whatever_the_text():
    """A table value that is not a number raises, on get's C path (ASCII)
    as on its Python path, as lexeme_atoms does."""
    import pytest

    for word in ("hello", "né"):
        with pytest.raises(TypeError):
            cached_as_defined([word], {}, {"lexeme_cluster": {word: None}}, fresh=False)
        with pytest.raises((TypeError, ValueError)):
            cached_as_defined([word], {}, {"lexeme_prob": {word: "x"}}, fresh=False)


@given(st.lists(st.text(st.characters(max_codepoint=0x7F), min_size=1, max_size=80)
                | st.text(min_size=1, max_size=12), min_size=1, max_size=8, unique=True),
       st.data())
def test_the_word_cache_holds_words_as_defined(words, data):
    """cached_as_defined for random words, ASCII (get's C path) or any."""
    chosen = data.draw(st.lists(st.sampled_from(words), unique=True))
    classes = {word: 100 + k for k, word in enumerate(chosen)}
    clusters = {word: k + 1 for k, word in enumerate(chosen)}
    probs = {word: -k * 1.7 for k, word in enumerate(chosen)}
    cached_as_defined(words, classes, {"lexeme_cluster": clusters, "lexeme_prob": probs},
                      fresh=False, threads_make=data.draw(st.booleans()))


def test_the_classes_change_only_through_set_classes():
    """LexemeAtoms.classes is read-only (the C map by orth id beside it
    could not follow an edit in place); set_classes takes any mapping, and
    a pickled cache keeps them."""
    import pickle

    import pytest

    from spacy_lookahead.spacy_io import LexemeAtoms

    atoms = LexemeAtoms()
    atoms.set_classes({"run": 7})
    with pytest.raises(TypeError):
        atoms.classes["walk"] = 9
    atoms.set_classes(atoms.classes)
    assert dict(atoms.classes) == {"run": 7} == dict(pickle.loads(pickle.dumps(atoms)).classes)


def test_the_words_a_batch_made_are_kept_when_the_next_is_scanned():
    """Pipelined batches: a batch's scan first keeps the words that the
    batches still being searched made (LexemeAtoms._keep_made), so the
    next batch hands its threads only the words none made; each word is
    kept once, and none after the cache was emptied."""
    import spacy

    from spacy_lookahead.spacy_io import LexemeAtoms

    nlp = spacy.blank("en")
    first = spacy.tokens.Doc(nlp.vocab, words=["alpha", "beta", "gamma"], tags=["X"] * 3)
    second = spacy.tokens.Doc(nlp.vocab, words=["gamma", "delta", "alpha"], tags=["X"] * 3)
    atoms = LexemeAtoms()
    rows = atoms.unit_inputs([first], new_words=True)["rows"]
    assert rows.n_new_words == 3
    rows.fill_all()  # (its words made, as its threads would)
    again = atoms.unit_inputs([second], new_words=True)["rows"]
    assert again.n_new_words == 1 and len(atoms) == 3  # (delta; alpha and gamma kept)
    assert rows.keep_new_words() == 0  # (kept already)
    again.fill_all()
    atoms.clear()
    assert again.keep_new_words() == 0 and len(atoms) == 0  # (another cache now)
    unmade = atoms.unit_inputs([first], new_words=True)["rows"]
    assert atoms.unit_inputs([first], new_words=True)["rows"].n_new_words == 3  # (none made yet)
    assert unmade.keep_new_words() == 0
