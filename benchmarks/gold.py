"""The gold data the scoring and timing scripts share: a test set's gold
docs, the inputs each task gives a system, and the one check every system
of a task is scored with (the span scorers: spaCy's score_spans, exact
span and label, micro-averaged: conlleval's overall FB1).

    task      input                            predictions                       check
    tag       words                            token.tag_                        tag_acc_check
    chunk     words + POS tags                 doc.spans["chunks"] or doc.ents   f1_check (score_chunks)
    ner       words (+ POS where the data has) doc.ents                          f1_check (score_entities)
    clauses   words + POS tags + chunks        doc.spans["clauses"], nested      f1_check (score_clauses)
    parse     words + POS tags                 token.head                        uas_check (all tokens)
    pipeline  words (e.g. tagger + parser)     token.head                        uas_check"""
from itertools import islice
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
INPUTS = {"tag": "words", "chunk": "words + POS tags", "ner": "words (+ POS tags, where the data has them)",
          "clauses": "words + POS tags + chunks", "parse": "words + POS tags", "pipeline": "words"}
CHECK_KEYS = {"tag": "tag_acc_check", "chunk": "f1_check", "ner": "f1_check", "clauses": "f1_check",
              "parse": "uas_check", "pipeline": "uas_check"}
BINS = [k / 10 for k in range(10)] + [1.0 + 1e-9]  # calibration: 10 equal bins, 1.0 in the last


class Gold(NamedTuple):
    words: List[str]
    spaces: List[bool]
    tags: Optional[List[str]]
    chunks: Optional[List[Tuple[int, int, str]]]


def read_gold(path, limit: int = 0, vocab: Optional[Vocab] = None, task: str = "tag",
              held_out: float = 0.0, part: str = "held_out") -> List[Doc]:
    """The non-empty gold docs of a DocBin, a CoNLL-U file or a column file
    read by the package's readers (clauses: CoNLL-2001, chunk: CoNLL-2000,
    ner: IOB); of a column file's last `held_out` share of sentences if given
    (part "rest": the sentences before them)."""
    vocab, path = vocab or Vocab(), Path(path)
    if held_out and path.suffix in (".spacy", ".conllu"):
        raise ValueError(f"held_out is for column files; {path} is read whole")
    if path.suffix == ".spacy":
        docs = [d for d in DocBin().from_disk(path).get_docs(vocab) if len(d)]
    elif path.suffix == ".conllu":
        from spacy.training.converters import conllu_to_docs
        docs = conllu_to_docs(path.read_text(encoding="utf8"), n_sents=1, no_print=True)
        docs = [Doc(vocab).from_bytes(d.to_bytes()) for d in islice(docs, limit or None)]
    else:
        import spacy
        from spacy_lookahead.readers.clauses import create_conll2001_reader
        from spacy_lookahead.readers.columns import create_conll2000_reader, create_iob_reader
        readers = {"clauses": create_conll2001_reader, "chunk": create_conll2000_reader,
                   "ner": create_iob_reader}
        if task not in readers:
            raise ValueError(f"task {task!r} reads a .spacy or .conllu file, got {path}")
        split = {"held_out": held_out, "part": part} if held_out else {}
        reader = readers[task](path, limit=limit, **split)
        docs = [eg.reference for eg in reader(spacy.blank("en", vocab=vocab)) if len(eg.reference)]
    return docs[:limit] if limit else docs


def inputs_of(doc: Doc, task: str) -> Gold:
    """What the systems get for `task`, from a gold doc."""
    with_tags = task in ("chunk", "clauses", "parse", "ner") and doc.has_annotation("TAG")
    chunks = None
    if task == "clauses":
        if SPANS_KEY not in doc.spans:
            raise ValueError(f"task clauses: a gold doc has no doc.spans[{SPANS_KEY!r}] (the input chunks)")
        chunks = [(s.start, s.end, s.label_) for s in doc.spans[SPANS_KEY]]
    return Gold([t.text for t in doc], [bool(t.whitespace_) for t in doc],
                [t.tag_ for t in doc] if with_tags else None, chunks)


def paragraphs(inputs: List[Gold], k: int) -> List[Gold]:
    """The inputs k at a time as one doc each, with a line-break token after
    each sentence (raw text's whitespace tokens: spaCy's tokenizer makes
    one of each "\n"; tagged "_SP" where the inputs have tags); k <= 1: as
    they are."""
    if k <= 1:
        return list(inputs)
    out = []
    for at in range(0, len(inputs), k):
        words, spaces, tags, chunks = [], [], [], []
        part = inputs[at:at + k]
        for gold in part:
            base = len(words)
            words += gold.words + ["\n"]
            spaces += gold.spaces[:-1] + [False, False] if gold.spaces else [False]
            tags += (gold.tags or [""] * len(gold.words)) + ["_SP"]
            chunks += [(s + base, e + base, label) for s, e, label in gold.chunks or []]
        out.append(Gold(words, spaces, tags if part[0].tags is not None else None,
                        chunks if part[0].chunks is not None else None))
    return out


def make_doc(vocab: Vocab, gold: Gold, sent_starts: Optional[List[bool]] = None) -> Doc:
    doc = Doc(vocab, words=gold.words, spaces=gold.spaces, tags=gold.tags, sent_starts=sent_starts)
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
        copied = [Span(doc, s.start, s.end, label=s.label_) for s in spans]
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
    return {"p": raw[f"{prefix}_p"], "r": raw[f"{prefix}_r"], "f": raw[f"{prefix}_f"],
            "per_type": raw.get(f"{prefix}_per_type"), "scorer": "spacy_lookahead.scoring." + scorer,
            "predictions_from": sorted(sources), "examples": examples}


def attachment_scores(predicted, gold) -> Dict:
    """UAS/LAS over all tokens and without punctuation (gold label punct or
    a PTB punctuation tag; labels compared case-insensitively)."""
    n = c_u = c_l = n_np = c_u_np = c_l_np = 0
    for p, g in zip(predicted, gold):
        u = numpy.array([t.head.i for t in p]) == numpy.array([t.head.i for t in g])
        lab = u & (numpy.array([t.dep_.lower() for t in p]) == numpy.array([t.dep_.lower() for t in g]))
        punct = numpy.array([t.dep_ == "punct" or t.tag_ in PUNCT_TAGS for t in g], dtype=bool)
        n, c_u, c_l = n + len(g), c_u + u.sum(), c_l + lab.sum()
        n_np, c_u_np, c_l_np = n_np + (~punct).sum(), c_u_np + u[~punct].sum(), c_l_np + lab[~punct].sum()
    return {"uas": c_u / n, "las": c_l / n, "uas_nopunct": c_u_np / n_np, "las_nopunct": c_l_np / n_np,
            "tokens": int(n)}


def check(predicted: List[Doc], gold: List[Doc], task: str) -> Dict:
    """The output check of a task (CHECK_KEYS), rounded: catches a model
    that does not really tag, chunk or parse."""
    if task == "tag":
        n = sum(len(d) for d in gold)
        acc = sum(p.tag_ == g.tag_ for doc, ref in zip(predicted, gold) for p, g in zip(doc, ref))
        return {"tag_acc_check": round(acc / n, 4) if n else None}
    if task in ("parse", "pipeline"):
        n = sum(len(d) for d in gold)
        return {"uas_check": round(attachment_scores(predicted, gold)["uas"], 4) if n else None}
    scores = score(predicted, gold, task)
    return {"f1_check": round(scores["f"], 4), "predictions_from": scores["predictions_from"]}


def calibration(pairs) -> Dict:
    """(probability, right?) pairs in BINS: count, mean probability and
    accuracy per bin, and the expected calibration error (ECE: the
    count-weighted mean |mean probability - accuracy|)."""
    probs = numpy.asarray([p for p, _ in pairs], dtype="float64")
    right = numpy.asarray([r for _, r in pairs], dtype="float64")
    bins, ece = [], 0.0
    for low, high in zip(BINS[:-1], BINS[1:]):
        mask = (probs >= low) & (probs < high)
        n = int(mask.sum())
        if n:
            ece += n * abs(probs[mask].mean() - right[mask].mean())
        bins.append({"low": low, "high": min(high, 1.0), "count": n,
                     "mean_probability": float(probs[mask].mean()) if n else None,
                     "accuracy": float(right[mask].mean()) if n else None})
    return {"predictions": len(pairs), "accuracy": float(right.mean()) if len(pairs) else None,
            "ece": ece / max(1, len(pairs)), "bins": bins}
