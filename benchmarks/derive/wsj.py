"""The NLTK Penn Treebank sample, rebuilt as two benchmark data sets.

    python -m benchmarks.derive.wsj dependencies DEPENDENCY_TREEBANK_ZIP OUT_DIR
    python -m benchmarks.derive.wsj clauses TREEBANK_ZIP OUT_DIR

* `dependencies`: `dependency_treebank.zip` (Malt-TAB) -> CoNLL-X
  (shared/data/wsj_dep_sample);
* `clauses`: `treebank.zip` (`treebank/combined/wsj_*.mrg`) -> a
  CoNLL-2001-style `WORD POS CHUNK CLAUSE` file (shared/data/wsj_clauses).

Both use the same split by file. The rule names in the comments are those of
shared/data/README.md, which describes the two data sets.
"""
from __future__ import annotations

import re
import sys
import zipfile
from pathlib import Path
from typing import Iterator

# Split by file: wsj_0001-0159 train, wsj_0160-0179 dev, wsj_0180-0199 test.
SPLITS = (("train", 1, 159), ("dev", 160, 179), ("test", 180, 199))

_FILE_NUMBER = re.compile(r"wsj_(\d{4})\.\w+$")


def split_of(name: str) -> str | None:
    """The split a member `.../wsj_NNNN.ext` belongs to (None: not a WSJ file)."""
    match = _FILE_NUMBER.search(name)
    if match is None:
        return None
    number = int(match.group(1))
    for split, first, last in SPLITS:
        if first <= number <= last:
            return split
    return None


def members_by_split(archive: zipfile.ZipFile, suffix: str) -> dict[str, list[str]]:
    """Member names ending in `suffix`, per split, in file order."""
    result: dict[str, list[str]] = {split: [] for split, _, _ in SPLITS}
    for name in sorted(archive.namelist(), key=lambda n: n.rsplit("/", 1)[-1]):
        split = split_of(name) if name.endswith(suffix) else None
        if split is not None:
            result[split].append(name)
    return result


def write_splits(out_dir: Path, suffix: str, texts: dict[str, str]) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    for split, text in texts.items():
        # newline="\n": the same bytes on every platform.
        with open(out_dir / f"{split}{suffix}", "w", encoding="utf-8", newline="\n") as f:
            f.write(text)


# --------------------------------------------------------------------------
# wsj_dep_sample: Malt-TAB -> CoNLL-X


def malt_sentences(text: str) -> Iterator[list[tuple[str, str, str]]]:
    """(word, POS, head) rows of each blank-line-separated sentence."""
    for block in re.split(r"\n\s*\n", text.strip("\n")):
        rows = [tuple(line.split("\t")) for line in block.split("\n") if line.strip()]
        if rows:
            yield rows  # type: ignore[misc]


def conllx_sentence(rows: list[tuple[str, str, str]]) -> str:
    """ID FORM LEMMA CPOSTAG POSTAG FEATS HEAD DEPREL PHEAD PDEPREL; no labels
    in the source, so DEPREL is ROOT for head 0 and `dep` otherwise."""
    lines = []
    for i, (word, tag, head) in enumerate(rows, 1):
        deprel = "ROOT" if head == "0" else "dep"
        lines.append("\t".join((str(i), word, "_", tag, tag, "_", head, deprel, "_", "_")))
    return "\n".join(lines) + "\n\n"


def dependencies(dependency_treebank_zip: Path, out_dir: Path) -> None:
    """Write train/dev/test.conll (wsj_dep_sample) from dependency_treebank.zip."""
    with zipfile.ZipFile(dependency_treebank_zip) as archive:
        texts = {
            split: "".join(
                conllx_sentence(rows)
                for name in names
                for rows in malt_sentences(archive.read(name).decode("utf-8"))
            )
            for split, names in members_by_split(archive, ".dp").items()
        }
    write_splits(Path(out_dir), ".conll", texts)


# --------------------------------------------------------------------------
# wsj_clauses: Penn Treebank trees -> WORD POS CHUNK CLAUSE


class Node:
    """A constituent (`children` set) or a word (`word` set); `start`/`end`
    are word offsets in the sentence, filled in by `number_words`."""

    __slots__ = ("label", "children", "word", "start", "end")

    def __init__(self, label: str, children: list[Node] | None = None, word: str | None = None):
        self.label = label
        self.children = children if children is not None else []
        self.word = word
        self.start = self.end = 0

    @property
    def is_word(self) -> bool:
        return self.word is not None

    def words(self) -> list[Node]:
        if self.is_word:
            return [self]
        return [w for child in self.children for w in child.words()]


_TOKEN = re.compile(r"\(|\)|[^\s()]+")


def read_trees(text: str) -> Iterator[Node]:
    """The trees of a .mrg file; each is wrapped in an unlabelled `( ... )`."""
    stack: list[Node] = [Node("")]
    tokens = _TOKEN.findall(text)
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token == "(":
            label = tokens[i + 1] if tokens[i + 1] not in "()" else ""
            i += 1 if label == "" else 2
            if i < len(tokens) and tokens[i] not in "()":
                stack[-1].children.append(Node(label, word=tokens[i]))
                i += 2  # the word and its ")"
                continue
            node = Node(label)
            stack[-1].children.append(node)
            stack.append(node)
            continue
        if token == ")":
            stack.pop()
        i += 1
    for wrapper in stack[0].children:
        yield wrapper.children[0] if wrapper.label == "" and len(wrapper.children) == 1 else wrapper


def base_label(label: str) -> str:
    """Function tags and indices stripped: `S-TPC-1` -> `S`, `NP=2` -> `NP`
    (POS tags such as `-LRB-` are left alone)."""
    if label.startswith("-"):
        return label
    return re.split(r"[-=]", label, maxsplit=1)[0]


def preprocess(node: Node) -> Node | None:
    """Tree preprocessing: no `-NONE-` words, no constituents left without
    words, base labels only. None when nothing is left."""
    if node.is_word:
        return None if node.label == "-NONE-" else node
    children = [c for c in (preprocess(child) for child in node.children) if c is not None]
    if not children:
        return None
    return Node(base_label(node.label), children)


def number_words(node: Node, start: int = 0) -> int:
    """Set the word span [start, end) of every node; returns `end`."""
    node.start = start
    if node.is_word:
        node.end = start + 1
        return node.end
    for child in node.children:
        start = number_words(child, start)
    node.end = start
    return start


def nodes(node: Node) -> Iterator[Node]:
    yield node
    for child in node.children:
        yield from nodes(child)


# CLAUSE column. FRAG and RRC are not clauses (CoNLL-2001).
CLAUSE_LABELS = frozenset({"S", "SINV", "SQ", "SBAR", "SBARQ"})


def clause_column(tree: Node) -> list[str]:
    """`(S` per clause starting at a word, `*`, `S)` per clause ending there;
    identical spans are kept once."""
    spans = {(n.start, n.end) for n in nodes(tree) if not n.is_word and n.label in CLAUSE_LABELS}
    n_words = tree.end
    opens = [0] * n_words
    closes = [0] * n_words
    for start, end in spans:
        opens[start] += 1
        closes[end - 1] += 1
    return ["(S" * o + "*" + "S)" * c for o, c in zip(opens, closes)]


# CHUNK column.
PUNCTUATION = frozenset({",", ".", ":", "``", "''", "-LRB-", "-RRB-"})
VERBS = frozenset({"VB", "VBD", "VBG", "VBN", "VBP", "VBZ", "MD", "TO"})
ADVERBS = frozenset({"RB", "RBR", "RBS"})
# wh-phrases are chunked as their plain counterparts; NX/NAC (not flat, so
# not spliced into their NP) as NPs.
CHUNK_TYPE = {"WHNP": "NP", "WHADVP": "ADVP", "WHADJP": "ADJP", "WHPP": "PP", "NX": "NP", "NAC": "NP"}
RUN_PHRASES = frozenset({"ADVP", "ADJP", "PRT", "CONJP", "INTJ", "LST"})
NP_PREMODIFIERS = frozenset({"QP", "ADJP", "ADVP", "NX", "NAC", "UCP", "WHADJP", "WHADVP"})
PRECONJUNCTIONS = frozenset({"both", "either", "neither"})


def is_flat(node: Node) -> bool:
    return all(child.is_word for child in node.children)


def is_adverb(node: Node) -> bool:
    """A bare adverb or an ADVP of adverbs only (`both`, `since`, `at best`
    end a verb cluster)."""
    return all(word.label in ADVERBS for word in node.words()) and (
        node.is_word or node.label == "ADVP")


def is_premodifier(node: Node) -> bool:
    """A flat premodifier of an NP: QP/ADJP/ADVP/NX/NAC/UCP made of words and
    such phrases only (`the $ 2.29 billion value` is one chunk)."""
    return node.label in NP_PREMODIFIERS and all(
        child.is_word or is_premodifier(child) for child in node.children)


class Chunker:
    """IOB2 chunk tags of one tree, by the README's rules and a few it leaves
    out (found by diffing against the reference files): adverbs before the
    first verb join the cluster; a stray word (after the cluster of a VP,
    after the first phrase of a PP/SBAR, directly under a clause) is a chunk
    of its own typed by its POS; adjacent trailing ADVPs are one chunk."""

    def __init__(self, tree: Node):
        self.tags = ["O"] * tree.end
        self.walk(tree)

    def chunk(self, words: list[Node], kind: str) -> None:
        for i, word in enumerate(words):
            self.tags[word.start] = ("B-" if i == 0 else "I-") + kind

    def walk(self, node: Node) -> None:
        if node.is_word:
            return  # punctuation: always O, it splits a chunk
        label = CHUNK_TYPE.get(node.label, node.label)
        if label == "NP":
            self.runs(node, "NP")
        elif label == "VP":
            self.verb_phrase(node)
        elif label in ("PP", "SBAR"):
            self.head_words(node, label)
        elif label in RUN_PHRASES or (label == "UCP" and is_flat(node)):
            self.runs(node, label)
        else:
            self.clause_level(node)

    def runs(self, node: Node, kind: str) -> None:
        """Runs of the phrase's own words (NP: plus flat premodifiers);
        punctuation and embedded phrases split them."""
        children = list(self.spliced(node, kind))
        with_phrases = any(not child.is_word for child in children)
        run: list[Node] = []
        for child in children + [None]:
            if child is not None and child.is_word and child.label not in PUNCTUATION:
                run.append(child)
                continue
            self.flush(run, kind, with_phrases)
            run = []
            if child is not None:
                self.walk(child)

    def spliced(self, node: Node, kind: str) -> Iterator[Node]:
        """The children, flat premodifiers replaced by their words."""
        for child in node.children:
            if not child.is_word and kind in ("NP", "ADJP", "ADVP") and is_premodifier(child):
                yield from child.words()
            else:
                yield child

    def flush(self, run: list[Node], kind: str, with_phrases: bool) -> None:
        # coordinators at run edges, a lone both/either/neither beside phrases: O
        while run and run[0].label == "CC":
            run = run[1:]
        while run and run[-1].label == "CC":
            run = run[:-1]
        if kind == "NP" and with_phrases and len(run) == 1 and str(run[0].word).lower() in PRECONJUNCTIONS:
            run = []
        if run:
            self.chunk(run, kind)

    def head_words(self, node: Node, kind: str) -> None:
        """PP/SBAR: the words before the first phrase (merged with an
        immediately embedded PP's preposition: `because of`; punctuation
        splits them: `Provided , that`)."""
        head = leading_words(node)
        rest = node.children[len(head):]
        if head and kind == "PP" and rest and rest[0].label == "PP":
            inner = leading_words(rest[0])
            head += inner
            rest = rest[0].children[len(inner):] + rest[1:]
        run: list[Node] = []
        for word in head + [None]:
            if word is not None and word.label not in PUNCTUATION:
                run.append(word)
                continue
            if run:
                self.chunk(run, kind)
            run = []
        self.rest(rest, "phrase")

    def verb_phrase(self, node: Node) -> None:
        cluster: list[Node] = []
        pending: list[Node] = []  # adverbs, kept only if a verb follows
        rest = self.cluster(node, cluster, pending)
        if cluster:
            self.chunk(cluster, "VP")
        self.trailing_adverbs(pending)
        self.rest(rest, "VP")

    def trailing_adverbs(self, adverbs: list[Node]) -> None:
        """Adverbs after the last verb: ADVP nodes are an ADVP chunk (adjacent
        ones one chunk: `was up only slightly`), bare adverbs `O`."""
        run: list[Node] = []
        for adverb in adverbs + [None]:
            if adverb is not None and not adverb.is_word:
                run.extend(adverb.words())
                continue
            if run:
                self.chunk(run, "ADVP")
            run = []

    def cluster(self, node: Node, cluster: list[Node], pending: list[Node]) -> list[Node]:
        """Collect the verb cluster along the chain VP -> VP (also through an
        S whose only child is a VP); returns the children left to walk."""
        children = node.children
        for i, child in enumerate(children):
            if child.is_word and child.label in VERBS:
                cluster.extend(w for a in pending for w in a.words())
                pending.clear()
                cluster.append(child)
            elif is_adverb(child):
                pending.append(child)
            elif (cluster or pending) and self.chains(child, cluster, pending):
                inner = child if child.label == "VP" else child.children[0]
                return self.cluster(inner, cluster, pending) + children[i + 1:]
            else:
                return children[i:]
        return []

    @staticmethod
    def chains(child: Node, cluster: list[Node], pending: list[Node]) -> bool:
        """VP -> VP, or VP -> S -> VP right after a verb (`has yet to
        announce`: an adverb before the S ends the cluster)."""
        return child.label == "VP" or (
            not pending and bool(cluster) and child.label == "S"
            and len(child.children) == 1 and child.children[0].label == "VP")

    def clause_level(self, node: Node) -> None:
        """S/SINV/SQ/SBARQ, FRAG, PRN, X, ...: verbs directly under them are VP
        chunks (inverted auxiliaries); bare adverbs, IN, CC are O."""
        self.rest(node.children, "clause")

    def rest(self, children: list[Node], context: str) -> None:
        """Phrases are walked; a stray word (not part of its phrase's chunk)
        is a chunk of its own, typed by its POS."""
        for child in children:
            if not child.is_word:
                self.walk(child)
                continue
            kind = stray_kind(child.label, context)
            if kind:
                self.chunk([child], kind)


def stray_kind(tag: str, context: str) -> str | None:
    """The chunk type of a stray word in a `clause`, a `VP` or another
    `phrase`: bare adverbs, IN and CC under a clause are O."""
    if tag in VERBS:
        return "VP"
    if tag.startswith("NN") or tag in ("CD", "PRP", "DT", "$", "#", "EX", "WP", "WDT", "POS", "PRP$"):
        return "NP"
    if tag.startswith("JJ"):
        return "ADJP"
    if tag == "IN" and context != "clause":
        return "PP"
    if tag == "WRB" or (tag in ADVERBS and context == "phrase"):
        return "ADVP"
    if tag == "RP":
        return "PRT"
    return None


def leading_words(node: Node) -> list[Node]:
    """The words (punctuation included) before a node's first phrase."""
    words = []
    for child in node.children:
        if not child.is_word:
            break
        words.append(child)
    return words


def sentence_lines(tree: Node) -> str:
    words = tree.words()
    chunks = Chunker(tree).tags
    clauses = clause_column(tree)
    return "".join(f"{w.word} {w.label} {c} {s}\n" for w, c, s in zip(words, chunks, clauses)) + "\n"


def mrg_sentences(text: str) -> Iterator[Node]:
    for raw in read_trees(text):
        tree = preprocess(raw)
        if tree is not None:
            number_words(tree)
            yield tree


def clauses(treebank_zip: Path, out_dir: Path) -> None:
    """Write train/dev/test.txt (wsj_clauses) from treebank.zip."""
    with zipfile.ZipFile(treebank_zip) as archive:
        names = {
            split: [n for n in members if "/combined/" in n]
            for split, members in members_by_split(archive, ".mrg").items()
        }
        texts = {
            split: "".join(
                sentence_lines(tree)
                for name in members
                for tree in mrg_sentences(archive.read(name).decode("utf-8"))
            )
            for split, members in names.items()
        }
    write_splits(Path(out_dir), ".txt", texts)


COMMANDS = {"dependencies": dependencies, "clauses": clauses}

if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] not in COMMANDS:
        sys.exit(__doc__)
    if not Path(sys.argv[2]).is_file():
        print(f"error: {sys.argv[2]} not found (the upstream zip: `spacy project assets --extra`)",
              file=sys.stderr)
        sys.exit(2)
    COMMANDS[sys.argv[1]](Path(sys.argv[2]), Path(sys.argv[3]))
