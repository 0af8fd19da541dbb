"""`doc.noun_chunks` for English parses with Universal Dependencies labels.

spaCy's English syntax iterator reads the ClearNLP labels of spaCy's own
English pipelines (dobj, pobj, nsubjpass, ...). On a UD parse (UD English EWT,
what the arc_standard_parser of en_lookahead_ewt writes) it finds only the
subjects, appositions and root nouns: objects are `obj`, nouns after a
preposition `obl` / `nmod`, passive subjects `nsubj:pass`. And in UD the
preposition is a dependent of its noun (`case`), so a chunk cut at the
noun's left edge would start with it.

`noun_chunks` is spaCy's English iterator over UD labels: a noun, proper
noun or pronoun heads a base NP when it is a subject, object, oblique or
nominal modifier, apposition, vocative, dislocated or the root (not a
possessive, `nmod:poss`, which stays inside its head's chunk), or a
conjunct of such a word; the chunk runs from the subtrees of its
NP-internal left dependents (determiners, adjectives, compounds, numbers,
possessors) up to the word and the rest of a name after it (`flat`,
`fixed`), and stops at any other dependent (a preposition, a copula, the
subject of a copular clause, punctuation). Chunks do not nest. A doc with
ClearNLP labels gets spaCy's own iterator. The arc_standard_parser installs
it in an English pipeline's vocab (`install`).

On the gold parses of EWT test (2,077 sentences) spaCy's iterator finds
2,783 chunks, this one 6,273 (subjects 1,897, objects 1,092, obliques 920,
nominal modifiers 693, roots 614, conjuncts 344, ...)."""
from typing import Iterator, Tuple, Union

from spacy.errors import Errors
from spacy.lang.en.syntax_iterators import noun_chunks as english_noun_chunks
from spacy.symbols import NOUN, PRON, PROPN
from spacy.tokens import Doc, Span, Token

# UD relations (and their subtypes) of a base NP's head
NP_RELATIONS = frozenset({"nsubj", "obj", "iobj", "obl", "nmod", "appos", "vocative",
                          "dislocated", "root"})
NOT_NP = frozenset({"nmod:poss"})  # inside the possessed noun's chunk
# left dependents inside a base NP (with their subtypes, e.g. det:predet,
# compound:prt); any other (case, cop, nsubj, mark, cc, punct, advmod...)
# ends the chunk
INSIDE = frozenset({"det", "amod", "compound", "nummod", "flat", "fixed", "goeswith"})
INSIDE_SUBTYPES = frozenset({"nmod:poss"})
# right dependents inside it: the rest of a name or fixed expression
RIGHT_INSIDE = frozenset({"flat", "fixed", "goeswith"})
# labels only spaCy's English (ClearNLP) scheme has
CLEAR_ONLY = ("dobj", "pobj", "prep", "nsubjpass", "poss", "dative", "pcomp", "auxpass", "attr",
              "oprd")


def heads_np(label: str) -> bool:
    """Whether a noun with this dependency label heads a base NP."""
    return label == "ROOT" or (label.split(":", 1)[0] in NP_RELATIONS and label not in NOT_NP)


def inside(label: str) -> bool:
    """Whether a left dependent with this label is part of its noun's chunk."""
    return label in INSIDE_SUBTYPES or label.split(":", 1)[0] in INSIDE


def chunk_start(word: Token) -> int:
    """The first token of the chunk `word` heads: the subtrees of its left
    dependents, nearest first, while they are NP-internal (determiners,
    adjectives, compounds, numbers, possessors)."""
    start = word.i
    for child in reversed(list(word.lefts)):
        if not inside(child.dep_):
            break
        start = child.left_edge.i
    return start


def chunk_end(word: Token) -> int:
    """One past the last token of the chunk `word` heads: the word, and the
    right dependents that continue a name or a fixed expression (UD
    attaches "Donovan" of "John Donovan" to "John" as `flat`)."""
    end = word.i + 1
    for child in word.rights:
        if child.i != end or child.dep_.split(":", 1)[0] not in RIGHT_INSIDE:
            break
        end = child.right_edge.i + 1
    return end


def noun_chunks(doclike: Union[Doc, Span]) -> Iterator[Tuple[int, int, int]]:
    """(start, end, label NP) of the base noun phrases of a parsed Doc or
    Span; spaCy's English iterator where the parse has ClearNLP labels."""
    doc = doclike.doc
    if not doc.has_annotation("DEP"):
        raise ValueError(Errors.E029)
    strings = doc.vocab.strings
    labels = set(doc.to_array("DEP").tolist())
    if any(label in strings and strings[label] in labels for label in CLEAR_ONLY):
        yield from english_noun_chunks(doclike)
        return
    conj = strings.add("conj")
    np_label = strings.add("NP")
    prev_end = -1
    for word in doclike:
        if word.pos not in (NOUN, PROPN, PRON):
            continue
        head = word
        if word.dep == conj:  # a conjunct: as the first conjunct of its chain
            while head.dep == conj and head.head.i < head.i:
                head = head.head
        if not heads_np(head.dep_):
            continue
        start, end = chunk_start(word), chunk_end(word)
        if start <= prev_end:  # no nested chunks
            continue
        prev_end = end - 1
        yield start, end, np_label


def install(nlp) -> None:
    """Make `noun_chunks` the syntax iterator of an English pipeline whose
    vocab has spaCy's English one (another iterator set by the user is kept)."""
    if nlp.lang == "en" and nlp.vocab.get_noun_chunks in (english_noun_chunks, None):
        nlp.vocab.get_noun_chunks = noun_chunks
