"""The first-order CRF baseline (python-crfsuite) as spaCy components; a
`--code` file (`--code benchmarks/crf_spans.py`: it imports nothing of the
benchmarks) for loading the CRF pipelines that benchmarks/crf_baseline.py saves.

Features: exactly the static templates of lookahead_tagger / lookahead_chunker /
lookahead_ner (`pos_static`, `chunk_static`, `ner_static` of
systems/tagging.pyx) as crfsuite attributes, the word atoms from the
package's own `word_atoms` and `word_substrings` (same lower-casing,
affixes, shape, flags, substrings); an attribute is a template name plus the
atom's hash. pos: bias, the word, lower-cased words at i-2..i+2, word
bigrams (i-1,i) (i,i+1), affixes of 1-4 characters, shape and flags; chunk:
bias, lower-cased words at i-2..i+2, their four bigrams, and where there are
POS tags the tags at i-2..i+2, their four bigrams and three trigrams; ner:
chunk's (JNLPBA has no POS column) plus the word's substrings, the word,
affixes, shape and flags. The perceptron's one history template (the
previous label) is the CRF's transition weight; its "no previous label" at
the first token is the attribute `y-1=<s>`. `check_against_system()` checks
the counts against the compiled extraction. Labels: XPOS tags (token.tag_)
for pos; IOB2 for chunk and ner, decoded with the package's `iob_to_spans`
into doc.spans[spans_key] (chunk) or doc.ents (ner)."""
import time
from typing import Dict, Iterable, List, Optional, Sequence

import pycrfsuite
import srsly
from spacy.language import Language
from spacy.scorer import Scorer
from spacy.tokens import Doc, SpanGroup
from spacy.util import ensure_path

from spacy_lookahead.core.features import word_atoms, word_substrings
from spacy_lookahead.readers.tags import doc_to_iob, iob_to_spans

# indices into word_atoms() (the N_WORD_ATOMS enum of core/features.pxd)
A_ORTH, A_LOWER, A_PRE1, A_SUF1, A_SHAPE = 0, 1, 2, 6, 10
FLAGS = ((11, "digit"), (12, "upper"), (13, "hyphen"), (14, "allcaps"), (15, "initcap"))
BEFORE, AFTER = "<s>", "</s>"
FEATURE_SETS = ("pos", "chunk", "ner")
# the word bigrams (i+k, i+k+1) of each feature set, by k
WORD_BIGRAMS = {"pos": (-1, 0), "chunk": (-2, -1, 0, 1), "ner": (-2, -1, 0, 1)}
MODEL_FILE = "model.crfsuite"


def _check_atom_layout() -> None:
    a, b = word_atoms("Ab-1"), word_atoms("ab-1")
    assert len(a) == 16 and a[A_LOWER] == b[A_ORTH] and a[A_PRE1] == word_atoms("A")[A_ORTH]
    assert a[A_SUF1 + 1] == word_atoms("-1")[A_ORTH] and a[A_SHAPE] != b[A_SHAPE]
    assert [a[i] for i, _ in FLAGS] == [1, 1, 1, 0, 1], "word_atoms layout changed"


_check_atom_layout()


class FeatureExtractor:
    """Sentence -> list of attribute lists (one per token). Word-level
    attributes are computed once per word type (as LexemeAtoms caches them)."""

    def __init__(self, feature_set: str) -> None:
        if feature_set not in FEATURE_SETS:
            raise ValueError(f"feature_set must be one of {FEATURE_SETS}, got {feature_set!r}")
        self.feature_set = feature_set
        self._lower: Dict[str, str] = {}
        self._word: Dict[str, List[str]] = {}

    def _lex(self, word: str):
        lower = self._lower.get(word)
        if lower is None:
            atoms = word_atoms(word)
            lower = self._lower[word] = format(atoms[A_LOWER], "x")
            if self.feature_set in ("pos", "ner"):
                attrs = [f"sub={h:x}" for h in word_substrings(word)] if self.feature_set == "ner" else []
                attrs.append(f"w0={atoms[A_ORTH]:x}")
                for k in range(4):
                    if atoms[A_PRE1 + k]:
                        attrs.append(f"pre{k + 1}={atoms[A_PRE1 + k]:x}")
                    if atoms[A_SUF1 + k]:
                        attrs.append(f"suf{k + 1}={atoms[A_SUF1 + k]:x}")
                attrs.append(f"shape={atoms[A_SHAPE]:x}")
                attrs.extend(name for i, name in FLAGS if atoms[i])
                self._word[word] = attrs
        return lower

    def sentence(self, words: Sequence[str], tags: Optional[Sequence[str]] = None) -> List[List[str]]:
        n = len(words)
        low = [BEFORE, BEFORE] + [self._lex(w) for w in words] + [AFTER, AFTER]
        pos = None  # POS tags as input: chunk and ner only (pos predicts them)
        if self.feature_set != "pos" and tags is not None and any(tags):
            pos = [BEFORE, BEFORE] + [t or "" for t in tags] + [AFTER, AFTER]
        word_attrs = self.feature_set in ("pos", "ner")
        bigrams = WORD_BIGRAMS[self.feature_set]
        out = []
        for i in range(n):
            j = i + 2  # index into the padded lists
            f = ["bias"]
            f += [f"w[{k}]={low[j + k]}" for k in (-2, -1, 0, 1, 2)]
            f += [f"w[{k}]|w[{k + 1}]={low[j + k]}|{low[j + k + 1]}" for k in bigrams]
            if pos is not None and pos[j]:
                f += [f"p[{k}]={pos[j + k]}" for k in (-2, -1, 0, 1, 2)]
                f += [f"p[{k}]|p[{k + 1}]={pos[j + k]}|{pos[j + k + 1]}" for k in (-2, -1, 0, 1)]
                f += [f"p[{k}]|p[{k + 1}]|p[{k + 2}]={pos[j + k]}|{pos[j + k + 1]}|{pos[j + k + 2]}"
                      for k in (-2, -1, 0)]
            if word_attrs:
                f += self._word[words[i]]
            if i == 0:
                f.append("y-1=<s>")
            out.append(f)
        return out

    def doc(self, doc: Doc, use_tags: bool = True) -> List[List[str]]:
        words = [t.text for t in doc]
        tags = [t.tag_ for t in doc] if use_tags and doc.has_annotation("TAG") else None
        return self.sentence(words, tags)


def gold_labels(doc: Doc, feature_set: str, spans_key: str = "chunks") -> List[str]:
    """The labels of a gold doc: POS tags (token.tag_) for pos; IOB2 labels
    of the chunks in doc.spans[spans_key] or of the entities in doc.ents."""
    if feature_set == "pos":
        tags = [t.tag_ for t in doc]
        if not all(tags):
            raise ValueError(f"a token without a tag in {doc.text[:50]!r}: the CRF needs every label")
        return tags
    return doc_to_iob(doc, spans_key if feature_set == "chunk" else "ents", "iob2")


def check_against_system(docs: Iterable[Doc], feature_set: str, use_tags: bool = True) -> int:
    """Compare attribute counts with the compiled feature extraction of the
    component (TaggingSystem.features at each token). Returns the number of
    tokens checked; raises AssertionError on the first difference."""
    from spacy_lookahead.core import views
    from spacy_lookahead.core.features import A_TAG_COLUMN as A_TAG
    from spacy_lookahead.spacy_io import LexemeAtoms
    from spacy_lookahead.systems.tagging import TaggingSystem
    system = TaggingSystem(3, feature_set=feature_set)
    lex = LexemeAtoms(substrings=feature_set == "ner")
    fx = FeatureExtractor(feature_set)
    n_checked = 0
    for doc in docs:
        atoms = lex.doc_atoms(doc)
        if use_tags and doc.has_annotation("TAG"):
            atoms[:, A_TAG] = doc.to_array("TAG")
        item = {"atoms": atoms}
        if feature_set == "ner":
            item["substrings"] = lex.doc_substrings(doc)
        attrs = fx.doc(doc, use_tags=use_tags)
        ours, theirs = set(), set()
        for i in range(len(doc)):
            # features after i labels assigned: static features of token i + prev1
            feats = views.features(system, item, [0] * i)
            static = [int(x) for x in feats[:-1]]
            mine = [a for a in attrs[i] if a != "y-1=<s>"]
            assert len(static) == len(mine), (
                f"token {i} of {doc.text[:50]!r}: the component extracts {len(static)} static "
                f"features, the CRF {len(mine)} attributes")
            theirs.update(static)
            ours.update(mine)
            n_checked += 1
        assert len(ours) == len(theirs), (
            f"{doc.text[:50]!r}: {len(theirs)} distinct component features vs {len(ours)} CRF attributes")
    return n_checked


@Language.factory("benchmark_crf_spans",
                  default_config={"feature_set": "chunk", "spans_key": "chunks", "use_tags": True})
def make_crf_spans(nlp: Language, name: str, feature_set: str, spans_key: str, use_tags: bool):
    return CRFSpans(name, feature_set=feature_set, spans_key=spans_key, use_tags=use_tags)


@Language.factory("benchmark_crf_tagger", assigns=["token.tag"],
                  default_score_weights={"tag_acc": 1.0})
def make_crf_tagger(nlp: Language, name: str):
    return CRFTagger(name)


class CRFComponent:
    """Labels each doc with a crfsuite model (`write` puts the labels on the
    doc). Benchmark-only (not part of the package): load a saved pipeline
    after importing this module (`--code benchmarks/crf_spans.py`)."""

    def __init__(self, name: str, **cfg) -> None:
        self.name = name
        self.cfg = cfg
        self.features = FeatureExtractor(cfg["feature_set"])
        self.model_bytes: Optional[bytes] = None
        self.tagger: Optional[pycrfsuite.Tagger] = None
        # seconds spent in the Python feature extraction / in crfsuite's Viterbi
        self.timing = {"featurize_seconds": 0.0, "viterbi_seconds": 0.0, "tokens": 0}

    def set_model(self, model_bytes: bytes) -> None:
        self.model_bytes = model_bytes
        self.tagger = pycrfsuite.Tagger()
        self.tagger.open_inmemory(model_bytes)

    def __call__(self, doc: Doc) -> Doc:  # (spaCy's pipe() calls it doc by doc)
        if self.tagger is None:
            raise ValueError(f"[{self.name}] no CRF model loaded")
        if len(doc):
            t0 = time.perf_counter()
            xseq = self.features.doc(doc, self.cfg["use_tags"])
            t1 = time.perf_counter()
            labels = self.tagger.tag(xseq)
            self.timing["viterbi_seconds"] += time.perf_counter() - t1
            self.timing["featurize_seconds"] += t1 - t0
            self.timing["tokens"] += len(doc)
            self.write(doc, labels)
        return doc

    def write(self, doc: Doc, labels: Sequence[str]) -> None:
        raise NotImplementedError

    def to_disk(self, path, *, exclude=tuple()) -> None:
        path = ensure_path(path)
        path.mkdir(parents=True, exist_ok=True)
        srsly.write_json(path / "cfg", self.cfg)
        (path / MODEL_FILE).write_bytes(self.model_bytes or b"")

    def from_disk(self, path, *, exclude=tuple()) -> "CRFComponent":
        path = ensure_path(path)
        self.set_model((path / MODEL_FILE).read_bytes())
        return self


class CRFSpans(CRFComponent):
    """Chunks (doc.spans[spans_key]) or entities (doc.ents) from IOB2 labels."""

    def write(self, doc: Doc, labels: Sequence[str]) -> None:
        spans = iob_to_spans(doc, list(labels), "iob2")
        if self.cfg["feature_set"] == "chunk":
            doc.spans[self.cfg["spans_key"]] = SpanGroup(doc, name=self.cfg["spans_key"], spans=spans)
        else:
            doc.set_ents(spans, default="outside")


class CRFTagger(CRFComponent):
    """POS tags (token.tag_) from the words, with the lookahead_tagger's
    templates; scored as spaCy's tagger (tag_acc) by `spacy benchmark accuracy`."""

    def __init__(self, name: str) -> None:
        super().__init__(name, feature_set="pos", use_tags=False)

    def write(self, doc: Doc, labels: Sequence[str]) -> None:
        for token, label in zip(doc, labels):
            token.tag_ = label

    def score(self, examples, **kwargs):
        return Scorer.score_token_attr(examples, "tag", **kwargs)
