"""What the benchmarks that rebuild model inputs from gold data share
(evaluate.py, speed.py): the inputs of each task rebuilt from the gold docs,
where each system's predictions are, and the one check every system of a
task is scored with.

Tasks (input; gold and predictions; check):
* tag (POS): gold words; `token.tag_`; token accuracy (`tag_acc_check`);
* chunk (CoNLL-2000): gold words + the POS column (`token.tag_`); gold =
  `doc.spans["chunks"]`, predictions from `doc.spans["chunks"]`
  (lookahead_chunker, fr_chunker, the CRF) or, if a pipeline writes no
  chunks, from `doc.ents` (spaCy's `ner` trained on the chunks as
  entities); span F1 with `spacy_lookahead.scoring.score_chunks` (`f1_check`);
* ner (JNLPBA): gold words; `doc.ents`; span F1 with
  `spacy_lookahead.scoring.score_entities` (`f1_check`);
* clauses (CoNLL-2001): gold words + POS tags + the chunks
  (`doc.spans["chunks"]`); `doc.spans["clauses"]` (fr_clause_finder); span
  F1 with `spacy_lookahead.scoring.score_clauses`, nested spans (`f1_check`);
* parse (a stand-alone parser): gold words + gold POS tags (spaCy's parser
  ignores them); `token.head`; unlabelled attachment over all tokens (`uas_check`);
* pipeline (a parser from raw words, e.g. tagger + parser): gold words only;
  `token.head`; `uas_check` as parse.

The gold data is a .spacy DocBin, or a column file read with the package's
readers: CoNLL-2001 for clauses, CoNLL-2000 for chunk. The span scorers are
spaCy's `Scorer.score_spans`: exact span and label match, micro-averaged
P/R/F1 over all spans of the test set, i.e. the semantics of conlleval's
overall FB1 on IOB2 data.
"""
from pathlib import Path
from typing import Dict, Iterable, List, NamedTuple, Optional, Tuple

import numpy
from spacy.tokens import Doc, DocBin, Span, SpanGroup
from spacy.training import Example
from spacy.vocab import Vocab

from spacy_lookahead.scoring import PUNCT_TAGS

TASKS = ("tag", "chunk", "ner")  # what evaluate.py and calibration.py score
SPEED_TASKS = TASKS + ("clauses", "parse", "pipeline")  # what speed.py times and checks
SPANS_KEY = "chunks"
CLAUSES_KEY = "clauses"
# what a system is given, per task
INPUTS = {"tag": "words", "chunk": "words + POS tags", "ner": "words (+ POS tags, where the data has them)",
          "clauses": "words + POS tags + chunks", "parse": "words + POS tags", "pipeline": "words"}
# the key of the output check, per task
CHECK_KEYS = {"tag": "tag_acc_check", "chunk": "f1_check", "ner": "f1_check", "clauses": "f1_check",
              "parse": "uas_check", "pipeline": "uas_check"}


class Gold(NamedTuple):
    words: List[str]
    spaces: List[bool]
    tags: Optional[List[str]]
    chunks: Optional[List[Tuple[int, int, str]]]


def read_gold(path, limit: int = 0, vocab: Optional[Vocab] = None, task: str = "tag") -> List[Doc]:
    """The gold docs (non-empty) of a .spacy file, or of a column file
    (clauses: CoNLL-2001; chunk: CoNLL-2000) through the package's readers."""
    vocab = vocab or Vocab()
    if Path(path).suffix == ".spacy":
        docs = [d for d in DocBin().from_disk(path).get_docs(vocab) if len(d)]
    else:
        import spacy
        if task == "clauses":
            from spacy_lookahead.readers.clauses import create_conll2001_reader as reader
        elif task == "chunk":
            from spacy_lookahead.readers.columns import create_conll2000_reader as reader
        else:
            raise ValueError(f"task {task!r} reads a .spacy file, got {path}")
        nlp = spacy.blank("en", vocab=vocab)
        docs = [eg.reference for eg in reader(path, limit=limit)(nlp) if len(eg.reference)]
    return docs[:limit] if limit else docs


def inputs_of(doc: Doc, task: str) -> Gold:
    """What the systems get for `task`, from a gold doc."""
    words = [t.text for t in doc]
    spaces = [bool(t.whitespace_) for t in doc]
    with_tags = task in ("chunk", "clauses", "parse", "ner") and doc.has_annotation("TAG")
    tags = [t.tag_ for t in doc] if with_tags else None
    chunks = None
    if task == "clauses":
        if SPANS_KEY not in doc.spans:
            raise ValueError(f"task clauses: a gold doc has no doc.spans[{SPANS_KEY!r}] (the input chunks)")
        chunks = [(s.start, s.end, s.label_) for s in doc.spans[SPANS_KEY]]
    return Gold(words, spaces, tags, chunks)


def make_doc(vocab: Vocab, gold: Gold) -> Doc:
    doc = Doc(vocab, words=gold.words, spaces=gold.spaces, tags=gold.tags)
    if gold.chunks is not None:
        doc.spans[SPANS_KEY] = SpanGroup(doc, name=SPANS_KEY,
                                         spans=[Span(doc, s, e, label=k) for s, e, k in gold.chunks])
    return doc


def predicted_spans(doc: Doc, task: str) -> Tuple[list, str]:
    """The predicted spans of a doc and where they were found."""
    if task == "clauses":
        return list(doc.spans.get(CLAUSES_KEY, [])), f'doc.spans["{CLAUSES_KEY}"]'
    if task == "chunk" and SPANS_KEY in doc.spans:
        return list(doc.spans[SPANS_KEY]), f'doc.spans["{SPANS_KEY}"]'
    return list(doc.ents), "doc.ents"


def score(predicted: Iterable[Doc], gold: Iterable[Doc], task: str) -> Dict:
    """P/R/F1 (fractions) of the predicted docs against the gold docs, with
    the package's scorer of the task; also says where the predictions were."""
    from spacy_lookahead.scoring import score_chunks, score_clauses, score_entities
    key = CLAUSES_KEY if task == "clauses" else SPANS_KEY
    examples, sources = [], set()
    for pred, ref in zip(predicted, gold):
        spans, where = predicted_spans(pred, task)
        sources.add(where)
        doc = Doc(ref.vocab, words=[t.text for t in pred], spaces=[bool(t.whitespace_) for t in pred])
        copied = [doc[s.start:s.end] for s in spans]
        for span, src in zip(copied, spans):
            span.label_ = src.label_
        if task in ("chunk", "clauses"):
            doc.spans[key] = SpanGroup(doc, name=key, spans=copied)
        else:
            doc.set_ents(copied, default="outside")
        examples.append(Example(doc, ref))
    if task in ("chunk", "clauses"):
        raw = (score_clauses if task == "clauses" else score_chunks)(examples, spans_key=key)
        prefix, scorer = f"spans_{key}", "score_clauses" if task == "clauses" else "score_chunks"
    else:
        raw, prefix, scorer = score_entities(examples), "ents", "score_entities"
    return {
        "p": raw[f"{prefix}_p"], "r": raw[f"{prefix}_r"], "f": raw[f"{prefix}_f"],
        "per_type": raw.get(f"{prefix}_per_type"),
        "scorer": "spacy_lookahead.scoring." + scorer,
        "predictions_from": sorted(sources),
        "examples": examples,
    }


def attachment_scores(predicted, gold):
    """UAS/LAS over all tokens and without punctuation (same tokens)."""
    n = c_u = c_l = n_np = c_u_np = c_l_np = 0
    for p, g in zip(predicted, gold):
        u = numpy.array([t.head.i for t in p]) == numpy.array([t.head.i for t in g])
        lab = u & (numpy.array([t.dep_.lower() for t in p]) == numpy.array([t.dep_.lower() for t in g]))
        punct = numpy.array([t.dep_ == "punct" or t.tag_ in PUNCT_TAGS for t in g], dtype=bool)
        n += len(g)
        c_u += u.sum()
        c_l += lab.sum()
        n_np += (~punct).sum()
        c_u_np += u[~punct].sum()
        c_l_np += lab[~punct].sum()
    return {"uas": c_u / n, "las": c_l / n, "uas_nopunct": c_u_np / n_np, "las_nopunct": c_l_np / n_np,
            "tokens": int(n)}


def uas(predicted: Iterable[Doc], gold: Iterable[Doc]) -> Optional[float]:
    """Unlabelled attachment over all tokens (punctuation included): the
    parser benchmark's own scorer (benchmarks/parser_eval.py)."""
    predicted, gold = list(predicted), list(gold)
    return attachment_scores(predicted, gold)["uas"] if sum(len(d) for d in gold) else None


def check(predicted: List[Doc], gold: List[Doc], task: str) -> Dict:
    """The output check of a task (CHECK_KEYS), rounded: catches a model
    that does not really tag, chunk or parse."""
    if task == "tag":
        n = sum(len(d) for d in gold)
        acc = sum(p.tag_ == g.tag_ for doc, ref in zip(predicted, gold) for p, g in zip(doc, ref))
        return {"tag_acc_check": round(acc / n, 4) if n else None}
    if task in ("parse", "pipeline"):
        value = uas(predicted, gold)
        return {"uas_check": None if value is None else round(value, 4)}
    scores = score(predicted, gold, task)
    return {"f1_check": round(scores["f"], 4), "predictions_from": scores["predictions_from"]}
