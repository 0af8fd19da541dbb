"""What the span benchmarks share (evaluate.py, speed.py): the model inputs
rebuilt from the gold docs, where each system's predicted spans are, and the
one scorer every system is scored with.

Tasks:
* chunk (CoNLL-2000): input = gold words + the POS column (`token.tag_`);
  gold = `doc.spans["chunks"]`; predictions from `doc.spans["chunks"]`
  (lookahead_chunker, the CRF) or, if a pipeline writes no chunks, from
  `doc.ents` (spaCy's `ner` trained on the chunks as entities);
  scored with `spacy_lookahead.scoring.score_chunks`;
* ner (JNLPBA): input = gold words only; gold and predictions in `doc.ents`;
  scored with `spacy_lookahead.scoring.score_entities`;
* tag (POS): input = gold words only (the tagger benchmark).

Both span scorers are spaCy's `Scorer.score_spans`: exact span and label
match, micro-averaged P/R/F1 over all spans of the test set, i.e. the
semantics of conlleval's overall FB1 on IOB2 data.
"""
from typing import Dict, Iterable, List, Optional, Tuple

from spacy.tokens import Doc, DocBin, SpanGroup
from spacy.training import Example
from spacy.vocab import Vocab

TASKS = ("tag", "chunk", "ner")
SPANS_KEY = "chunks"

Gold = Tuple[List[str], List[bool], Optional[List[str]]]


def read_gold(path, limit: int = 0, vocab: Optional[Vocab] = None) -> List[Doc]:
    docs = [d for d in DocBin().from_disk(path).get_docs(vocab or Vocab()) if len(d)]
    return docs[:limit] if limit else docs


def inputs_of(doc: Doc, task: str) -> Gold:
    """(words, spaces, tags or None): what the systems get for `task`."""
    words = [t.text for t in doc]
    spaces = [bool(t.whitespace_) for t in doc]
    tags = [t.tag_ for t in doc] if task == "chunk" and doc.has_annotation("TAG") else None
    return words, spaces, tags


def make_doc(vocab: Vocab, gold: Gold) -> Doc:
    words, spaces, tags = gold
    return Doc(vocab, words=words, spaces=spaces, tags=tags)


def predicted_spans(doc: Doc, task: str) -> Tuple[list, str]:
    """The predicted spans of a doc and where they were found."""
    if task == "chunk" and SPANS_KEY in doc.spans:
        return list(doc.spans[SPANS_KEY]), f'doc.spans["{SPANS_KEY}"]'
    return list(doc.ents), "doc.ents"


def score(predicted: Iterable[Doc], gold: Iterable[Doc], task: str) -> Dict:
    """P/R/F1 (fractions) of the predicted docs against the gold docs, with
    the package's scorer of the task; also says where the predictions were."""
    from spacy_lookahead.scoring import score_chunks, score_entities
    examples, sources = [], set()
    for pred, ref in zip(predicted, gold):
        spans, where = predicted_spans(pred, task)
        sources.add(where)
        doc = Doc(ref.vocab, words=[t.text for t in pred], spaces=[bool(t.whitespace_) for t in pred])
        copied = [doc[s.start:s.end] for s in spans]
        for span, src in zip(copied, spans):
            span.label_ = src.label_
        if task == "chunk":
            doc.spans[SPANS_KEY] = SpanGroup(doc, name=SPANS_KEY, spans=copied)
        else:
            doc.set_ents(copied, default="outside")
        examples.append(Example(doc, ref))
    if task == "chunk":
        raw = score_chunks(examples, spans_key=SPANS_KEY)
        prefix = f"spans_{SPANS_KEY}"
    else:
        raw = score_entities(examples)
        prefix = "ents"
    return {
        "p": raw[f"{prefix}_p"], "r": raw[f"{prefix}_r"], "f": raw[f"{prefix}_f"],
        "per_type": raw.get(f"{prefix}_per_type"),
        "scorer": "spacy_lookahead.scoring." + ("score_chunks" if task == "chunk" else "score_entities"),
        "predictions_from": sorted(sources),
        "examples": examples,
    }
