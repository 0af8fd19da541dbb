"""Stand-ins for spacy-lookups-data's lexeme_cluster / lexeme_prob tables
(which CI does not install), made from a corpus's words, for tests that
train a shipped config with `[initialize.lookups]`: registered (on import,
by conftest) as "test_lookahead.word_tables.v1"."""
import math
from collections import Counter, defaultdict
from typing import Dict

import spacy
from spacy.lookups import Lookups
from spacy.tokens import DocBin
from spacy.util import registry


@registry.misc("test_lookahead.word_tables.v1")
def word_tables(path: str) -> Lookups:
    """The tables of the words of a corpus (.spacy, or a column file whose
    first column is the word), as unlabelled text could give them: a word's
    cluster path (first bit lowest) is 1, then 4 bits of its most frequent
    tag's first letter (a coarse class: the 4- and 6-bit prefixes), then the
    tag, or, without tags, of its shape ("the": 0b101, fixed); its prob is
    its log relative frequency."""
    words: Dict[str, Counter] = defaultdict(Counter)
    vocab = spacy.blank("en").vocab
    if path.endswith(".spacy"):
        for doc in DocBin().from_disk(path).get_docs(vocab):
            for t in doc:
                words[t.text][t.tag_ or t.shape_] += 1
    else:
        with open(path, encoding="utf8") as file_:
            for line in file_:
                if line.strip():
                    words[line.split()[0]]["shape"] += 1
        for word, c in words.items():  # one class per word: its shape
            words[word] = Counter({vocab[word].shape_: c["shape"]})
    tags = sorted({tag for c in words.values() for tag in c})
    coarse = {letter: k for k, letter in enumerate(sorted({tag[0] for tag in tags}))}
    path_of = {tag: 1 | (coarse[tag[0]] % 16) << 1 | k << 5 for k, tag in enumerate(tags)}
    total = sum(sum(c.values()) for c in words.values())
    lookups = Lookups()
    lookups.add_table("lexeme_cluster", {
        w: 0b101 if w == "the" else path_of[c.most_common(1)[0][0]] for w, c in words.items()})
    lookups.add_table("lexeme_prob", {w: math.log(sum(c.values()) / total) for w, c in words.items()})
    lookups.add_table("lexeme_settings", {"oov_prob": -20.0})
    return lookups
