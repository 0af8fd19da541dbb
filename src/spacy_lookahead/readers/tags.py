"""Span <-> per-token tag conversions (IOB1, IOB2, BILUO) for spans of a Doc.

The conversions go through spaCy's `spacy.training.iob_utils`:

* tags -> spans: `iob_to_biluo` then `biluo_tags_to_spans`. `iob_to_biluo`
  decodes exactly as conlleval does, for IOB1 and IOB2 alike: a `B-X` always
  starts a chunk, an `I-X` continues the chunk before it only if that chunk
  is an X chunk and otherwise starts a new X chunk (so `O I-X`, `B-Y I-X`
  and a sentence-initial `I-X` are repaired to new X chunks, as conlleval's
  startOfChunk/endOfChunk do).
* spans -> tags: `offsets_to_biluo_tags` then `biluo_to_iob` (IOB2).

Hand-written here, because spaCy has no function for it:

* the check that each tag is well formed (`O` or `B-TYPE`, ...);
* IOB1 output (spaCy only writes IOB2): `B-` only where a chunk directly
  follows a chunk of the same type;
* validation of BILUO sequences: spaCy's `tags_to_entities` raises for an
  `I-`/`L-` without `B-`, but silently drops `B-X O` and labels `B-X L-Y`
  as one Y span, so BILUO input is checked before it is decoded.
"""
import re
from typing import Iterable, List, Optional, Sequence, Union

from spacy.tokens import Doc, Span
from spacy.training.iob_utils import (biluo_tags_to_spans, biluo_to_iob, iob_to_biluo,
                                      offsets_to_biluo_tags)

SCHEMES = ("iob1", "iob2", "biluo")
_TAG_RES = {
    "iob1": re.compile(r"^(?:O|[BI]-\S+)$"),
    "iob2": re.compile(r"^(?:O|[BI]-\S+)$"),
    "biluo": re.compile(r"^(?:O|[BILU]-\S+)$"),
}

SpansArg = Union[None, str, Iterable[Span]]


class TagError(ValueError):
    """A malformed tag or an invalid BILUO sequence; `index` is the token."""

    def __init__(self, message: str, index: int) -> None:
        super().__init__(message)
        self.index = index


def check_scheme(scheme: str) -> str:
    if scheme not in SCHEMES:
        raise ValueError(f"unknown tagging scheme {scheme!r}: expected one of {SCHEMES}")
    return scheme


def is_valid_tag(tag: str, scheme: str = "iob2") -> bool:
    """Whether `tag` is a well-formed tag of the scheme (`O` or `B-TYPE`, ...)."""
    return bool(_TAG_RES[check_scheme(scheme)].match(tag))


def check_tags(tags: Sequence[str], scheme: str = "iob2") -> None:
    """Raise ValueError on the first malformed tag. Any sequence of
    well-formed IOB tags is accepted (it is repaired as conlleval does);
    BILUO sequences must also be valid sequences."""
    for i, tag in enumerate(tags):
        if not is_valid_tag(tag, scheme):
            raise TagError(f"malformed {scheme.upper()} tag {tag!r} at token {i}", i)
    if scheme == "biluo":
        _check_biluo_sequence(tags)


def _check_biluo_sequence(tags: Sequence[str]) -> None:
    open_label: Optional[str] = None
    for i, tag in enumerate(tags):
        prefix, label = (tag, "") if tag == "O" else tag.split("-", 1)
        inside = prefix in ("I", "L")
        if inside != (open_label is not None) or (inside and label != open_label):
            after = repr(tags[i - 1]) if i else "the start"
            raise TagError(f"invalid BILUO sequence: {tag!r} after {after} at token {i}", i)
        open_label = label if prefix in ("B", "I") else None
    if open_label is not None:
        raise TagError(f"invalid BILUO sequence: unfinished {open_label} span at the end", len(tags) - 1)


def get_spans(doc: Doc, spans: SpansArg = None) -> List[Span]:
    """`spans` itself if it is a list of spans; `doc.ents` for None or "ents";
    otherwise the span group `doc.spans[spans]` (empty if the doc has none)."""
    if spans is None or (isinstance(spans, str) and spans == "ents"):
        return list(doc.ents)
    if isinstance(spans, str):
        return list(doc.spans[spans]) if spans in doc.spans else []
    return list(spans)


def doc_to_iob(doc: Doc, spans: SpansArg = None, scheme: str = "iob2") -> List[str]:
    """Per-token tags for non-overlapping spans of `doc` (see `get_spans`
    for what `spans` can be), in IOB2 (default), IOB1 or BILUO."""
    check_scheme(scheme)
    offsets = [(s.start_char, s.end_char, s.label_) for s in get_spans(doc, spans)]
    biluo = offsets_to_biluo_tags(doc, offsets)
    if scheme == "biluo":
        return biluo
    iob2 = biluo_to_iob(biluo)
    return iob2 if scheme == "iob2" else iob2_to_iob1(iob2)


def iob2_to_iob1(tags: Sequence[str]) -> List[str]:
    """IOB1: `B-X` only on the first token of an X chunk that directly
    follows another X chunk; every other chunk token is `I-X`."""
    out = []
    for i, tag in enumerate(tags):
        if tag.startswith("B-") and not (i > 0 and tags[i - 1] != "O" and tags[i - 1][2:] == tag[2:]):
            tag = "I-" + tag[2:]
        out.append(tag)
    return out


def tags_to_biluo(tags: Sequence[str], scheme: str = "iob2") -> List[str]:
    """Check `tags` and convert them to BILUO (IOB input repaired as conlleval does)."""
    tags = list(tags)
    check_tags(tags, scheme)
    return tags if scheme == "biluo" else iob_to_biluo(tags)


def iob_to_spans(doc: Doc, tags: Sequence[str], scheme: str = "iob2") -> List[Span]:
    """Labelled spans of `doc` from per-token IOB2, IOB1 or BILUO tags."""
    if len(tags) != len(doc):
        raise ValueError(f"{len(tags)} tags for a doc of {len(doc)} tokens")
    return biluo_tags_to_spans(doc, tags_to_biluo(tags, scheme))
